"""``carnet analyse NOTE…``, and ``review`` / ``apply`` of the proposals it writes.

I/O around the pure core of :mod:`generator.extracting`: load the content, call the
model once per chunk, write the proposal and the fingerprints of what was read. A
note whose analysis fails (unreachable endpoint, truncated or malformed answer) gets
nothing written — no proposal, no fingerprints — and the other notes go on (INV-15).
``apply`` appends the chosen passages to the note's ``.extractions.yaml`` as text,
keeping the file as it was, and checks that each lands exactly where proposed.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import threading
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from generator.anchoring.elements import Element
from generator.anchoring.resolve import AnchorStatus, Portion, portions_text
from generator.commands.proposal_files import (
    ProposalError,
    applied_record,
    dump_yaml,
    file_hash,
    free_proposal_path,
)
from generator.corpus.analysed import RECORD_NAME, AnalysedRecord, RecordError, parse_record
from generator.corpus.model import Corpus, Note, Notebook, NoteType
from generator.corpus.proposal import ExtractionProposal
from generator.corpus.source import parse_yaml
from generator.extracting.chunks import DEFAULT_BUDGET, DEFAULT_NEIGHBOURS, Chunk, cut_chunks
from generator.extracting.fingerprints import changed_elements, record_for, render_record
from generator.extracting.passages import MAX_PASSAGES, LeftOut, ProposedExtraction, drop_duplicates, resolve_answer
from generator.extracting.plan import PassageDecision, plan
from generator.extracting.records import Sent, add_usage, measure, proposal_record
from generator.extracting.request import (
    DEFAULT_KINDS,
    PROMPT,
    SCHEMA,
    answer_budget,
    answer_constraint,
    prompt_context,
)
from generator.extracting.sidecar import NewExtraction, render_entry
from generator.files import decode_text
from generator.pipeline import CheckedContent, check_content
from generator.problems import CarnetError, Problem
from generator.synthesis.sections import markers
from generator.terminal import show, visible
from generator.writes import ALL, ContentChange, PlannedWrite, appended, write_content

if TYPE_CHECKING:  # the seam is imported only when a model is actually called
    from typing import TypeAlias

    from generator.llm import LLMClient, LLMError, Provenance
    from generator.llm.plan import Plan, PlannedRequest

    _Request: TypeAlias = tuple[Chunk, dict[str, Any], PlannedRequest]
    """A chunk of a note, the prompt's context for it, and its request as a plan counts it."""
    Answer: TypeAlias = tuple[dict[str, Any], Provenance] | LLMError | None
    """What one request of a note gave: the answer and its provenance, the failure, or None
    when it was not sent (an earlier request of the note had failed)."""

FOLDER = Path("proposals") / "extractions"
EXTRACTIONS_SUFFIX = ".extractions.yaml"

NEEDS_ENDPOINT = """carnet analyse needs a model endpoint: {reason}.
It reads 'llm:' in {settings}:
  llm:
    base_url: http://localhost:11434/v1   # any OpenAI-compatible endpoint (Ollama, llama.cpp, vLLM, hosted)
    model: qwen2.5:7b-instruct            # the model to ask
    api_key_env: CARNET_LLM_KEY           # optional: the environment variable holding the key
and, when api_key_env names a variable, that variable exported with the endpoint's key.
Nothing was sent and nothing was written."""


class AnalyseError(CarnetError):
    """The analysis cannot be made as asked (unknown note, no endpoint, unreadable record)."""


@dataclass(frozen=True)
class AnalysisSettings:
    """``llm: analysis:`` in carnet.yaml: ``chunk_characters``, ``neighbours``, ``kinds``;
    and the site's ``language``, which the prompt is asked in.

    They sit under ``llm:`` (a section the loader keeps for the model commands), so a
    build never warns about them."""

    budget: int = DEFAULT_BUDGET
    neighbours: int = DEFAULT_NEIGHBOURS
    kinds: tuple[str, ...] = DEFAULT_KINDS
    language: str = "fr"


def passage_kinds(language: str) -> tuple[str, ...]:
    """The kinds of passage offered when carnet.yaml names none: the theme's, in the site's
    language (they are written into the notes' extractions)."""
    from generator.site.theme import Theme

    return tuple(k.strip() for k in Theme.load(None, language).tr("analyse_kinds").split(",") if k.strip())


def analysis_settings(extra: Mapping[str, Any], language: str = "fr") -> AnalysisSettings:
    llm = extra.get("llm")
    raw = llm.get("analysis") if isinstance(llm, Mapping) else None
    if raw is None:
        return AnalysisSettings(kinds=passage_kinds(language), language=language)
    where = "carnet.yaml: llm.analysis"
    if not isinstance(raw, Mapping):
        raise AnalyseError(f"{where} must be a mapping (chunk_characters, neighbours, kinds)")
    budget, neighbours = raw.get("chunk_characters", DEFAULT_BUDGET), raw.get("neighbours", DEFAULT_NEIGHBOURS)
    kinds = raw.get("kinds", list(passage_kinds(language)))
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 200:
        raise AnalyseError(f"{where}.chunk_characters must be a whole number of characters, at least 200")
    if not isinstance(neighbours, int) or isinstance(neighbours, bool) or not 0 <= neighbours <= 5:
        raise AnalyseError(f"{where}.neighbours must be a whole number from 0 to 5")
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) and k.strip() for k in kinds):
        raise AnalyseError(f"{where}.kinds must be a list of passage kinds (fait, proposition…)")
    return AnalysisSettings(budget, neighbours, tuple(k.strip() for k in kinds), language)


@dataclass
class NoteAnalysis:
    """What happened to one note.

    Attributes:
        sent: how much was sent (None when nothing was).
        proposed: passages proposed; left_out: passages of the answers not proposed.
        usage: tokens the server reported for this note.
        path: the proposal written, if any.
        model_failed: the failure (if any) is the model's — the endpoint or its answer —
            rather than the content's or the disk's (a record that does not read, a
            refused or failed write).
        unaccepted: elements sent whose answer had refused items: not marked as read,
            so the next analysis sends them again.
        error: why the analysis of this note failed ("" when it did not).
    """

    note: str
    notebook: str
    sent: Sent | None = None
    proposed: list[ProposedExtraction] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    path: Path | None = None
    error: str = ""
    model_failed: bool = True
    unaccepted: int = 0


@dataclass
class AnalyseReport:
    notes: list[NoteAnalysis]

    @property
    def usage(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for note in self.notes:
            total = add_usage(total, note.usage)
        return total

    @property
    def failed(self) -> list[NoteAnalysis]:
        return [n for n in self.notes if n.error]


def _note(analysis: CheckedContent, name: str) -> Note:
    """A note by slug, or by the path of its file (``content/notes/x.md``)."""
    slug = Path(name).name.removesuffix(".md") if name.endswith(".md") else name
    note = analysis.corpus.notes.get(slug)
    if note is None:
        raise AnalyseError(f"no note {slug!r} in this content (if its file exists, 'carnet check' says what is "
                           "wrong with it)")
    if note.type is not NoteType.NOTE:
        raise AnalyseError(f"{note.source.file}:{note.source.line}: {slug!r} is a {note.type.value}; analyse "
                           "ordinary notes only (a synthesis is never a source)")
    return note


def _notebook(analysis: CheckedContent, note: Note, asked: str | None) -> Notebook | None:
    notebooks = analysis.corpus.notebooks
    if asked is not None:
        if asked not in notebooks:
            raise AnalyseError(f"no notebook {asked!r} in this content ({', '.join(sorted(notebooks))})")
        if note.membership(asked) is None:
            raise AnalyseError(f"{note.source.file}:{note.source.line}: note {note.slug!r} is not in notebook "
                               f"{asked!r}; its categories live on that membership (INV-11)")
        return notebooks[asked]
    held = [m.notebook for m in note.memberships if m.notebook in notebooks]
    if len(held) > 1:
        raise AnalyseError(f"{note.source.file}:{note.source.line}: note {note.slug!r} is in several notebooks "
                           f"({', '.join(held)}): say whose guide and axes to use with --notebook")
    return notebooks[held[0]] if held else None


def _client(analysis: CheckedContent, content: Path, today: dt.date, max_tokens: int | None = None) -> LLMClient:
    from generator.llm import LLMClient, LLMConfigError, llm_settings
    from generator.llm.plan import limits_from

    extra = analysis.corpus.settings.extra
    try:
        return LLMClient(llm_settings(extra), today=today, limits=limits_from(extra, max_tokens))
    except LLMConfigError as exc:
        reason = "there is no 'llm:' section" if "llm" not in extra else str(exc).rstrip(".")
        raise AnalyseError(NEEDS_ENDPOINT.format(reason=reason, settings=content / "carnet.yaml")) from exc


def _read_record(path: Path, content: Path) -> AnalysedRecord | None:
    if not path.is_file():
        return None
    try:
        return parse_record(path.read_text(encoding="utf-8"))
    except (RecordError, UnicodeDecodeError) as exc:
        raise AnalyseError(f"{path.relative_to(content).as_posix()}: {exc} — delete the file to analyse the whole "
                           "note again") from exc


def _existing(analysis: CheckedContent, note: Note) -> dict[tuple[Portion, ...], str]:
    """Where the note's extractions (masked ones included) lie now."""
    anchors = analysis.anchored[note.slug].anchors
    return {anchors[e.id].portions: e.id for e in note.extractions
            if e.id in anchors and anchors[e.id].status.is_live and anchors[e.id].portions}


@dataclass
class _Reading:
    """One note's analysis from its plan to its proposal: the chunks to send, and the
    record of the last analysis they were cut from. ``failed`` is set by the first
    request of the note that fails: its requests not yet started are not sent, since
    nothing of the note will be written."""

    note: Note
    notebook: Notebook | None
    result: NoteAnalysis
    elements: list[Element] = field(default_factory=list)
    record: AnalysedRecord | None = None
    chunks: list[Chunk] = field(default_factory=list)
    failed: threading.Event = field(default_factory=threading.Event)


def _failed(result: NoteAnalysis, exc: CarnetError | OSError) -> None:
    from generator.llm import LLMError

    result.error, result.path, result.model_failed = str(exc), None, isinstance(exc, LLMError)


def _plan_note(content: Path, analysis: CheckedContent, note: Note, notebook: Notebook | None,
               settings: AnalysisSettings, whole: bool) -> _Reading:
    """What to send of one note: what the last analysis did not read, cut into chunks. A
    record that does not read fails the note, with nothing sent."""
    reading = _Reading(note, notebook, NoteAnalysis(note.slug, notebook.slug if notebook else ""))
    elements = analysis.anchored[note.slug].document.elements
    try:
        # --all reads the whole note again: the record of the last analysis is not even read
        record = None if whole else _read_record(content / FOLDER / note.slug / RECORD_NAME, content)
    except (CarnetError, OSError) as exc:
        _failed(reading.result, exc)
        return reading
    if record is not None and record.notebook != reading.result.notebook:
        record = None  # read for another notebook's guide and axes: read it all again
    selected = list(range(len(elements))) if whole or record is None else changed_elements(elements, record)
    reading.elements, reading.record = elements, record
    reading.chunks = cut_chunks([len(e.text) for e in elements], selected, settings.budget, settings.neighbours)
    reading.result.sent = measure(elements, reading.chunks)
    return reading


def _requests(reading: _Reading, client: LLMClient, settings: AnalysisSettings) -> list[_Request]:
    """Each chunk of the note with what its request sends and asks for (a plan's request),
    its prompt rendered once here: for the plan and for the budget."""
    from generator.llm.plan import PlannedRequest
    from generator.llm.prompts import load_prompt

    prompt = load_prompt(PROMPT, settings.language)
    made = []
    for number, chunk in enumerate(reading.chunks, start=1):
        context = prompt_context(reading.note, reading.notebook, reading.elements, chunk, settings.kinds,
                                 partial=bool(chunk.context))
        tokens = client.completion(answer_budget(reading.elements, chunk))
        made.append((chunk, context, PlannedRequest(f"{reading.note.slug} chunk {number} of {len(reading.chunks)}",
                                                    client.request_characters(prompt, **context), tokens)))
    return made


def _senders(reading: _Reading, requests: list[_Request], client: LLMClient,
             settings: AnalysisSettings) -> list[Callable[[], Answer]]:
    """One call per chunk of the note, each asking the model about its chunk alone (a chunk
    the run's budget no longer covers is not sent, and fails its note)."""
    from generator.llm import LLMError
    from generator.llm.prompts import load_prompt

    if not reading.chunks:
        return []
    prompt = load_prompt(PROMPT, settings.language)
    axes = [(axis.key, list(axis.categories)) for axis in reading.notebook.axes] if reading.notebook else []
    constraint = answer_constraint(settings.kinds, axes, MAX_PASSAGES)  # at most the cap, closed sets as enums

    def sender(chunk: Chunk, context: dict[str, Any], planned: PlannedRequest) -> Callable[[], Answer]:
        tokens = planned.completion_tokens

        def send() -> Answer:
            if reading.failed.is_set():
                return None
            client.progress(planned.label)
            try:
                return client.chat_json(prompt, SCHEMA, constraint=constraint, max_tokens=tokens, **context)
            except LLMError as exc:
                reading.failed.set()
                return exc
        return send
    return [sender(*made) for made in requests]


def analyse_notes(content: Path, analysis: CheckedContent, notes: list[tuple[Note, Notebook | None]],
                  client: LLMClient, settings: AnalysisSettings, whole: bool, today: dt.date,
                  jobs: int = 1, dry_run: bool = False) -> list[NoteAnalysis] | Plan:
    """Analyse each note: send what the last analysis did not read, resolve the answers,
    write the proposal and the new fingerprints. Failures (the model, an unreadable
    record, a write) are caught and reported in the note's result, with nothing of it
    written, so the other notes go on.

    The requests of every note (one per chunk) are sent up to ``jobs`` at once; each note
    is resolved and written in turn, its answers in its chunks' order, whatever order they
    arrive in: what is written is the same whatever ``jobs``."""
    from generator.llm.concurrent import in_order
    from generator.llm.plan import Plan

    readings = [_plan_note(content, analysis, note, notebook, settings, whole) for note, notebook in notes]
    requests = [_requests(reading, client, settings) for reading in readings]
    if client.limits is not None:  # planned before anything is sent: a dry run, or a plan that does not fit
        plan = Plan("carnet analyse " + " ".join(note.slug for note, _notebook in notes),
                    tuple(planned for made in requests for _chunk, _context, planned in made), client.limits)
        if dry_run:
            return plan
        plan.check("; a smaller --budget makes smaller chunks")
    calls: list[Callable[[], Answer]] = []
    for reading, made in zip(readings, requests, strict=True):
        try:
            calls += _senders(reading, made, client, settings)
        except (CarnetError, OSError) as exc:  # the prompt does not load: nothing of the note is sent
            _failed(reading.result, exc)
            reading.chunks, reading.result.sent = [], None
    with closing(in_order(calls, jobs)) as answers:
        for reading in readings:
            given = list(islice(answers, len(reading.chunks)))
            try:
                _write_note(content, analysis, reading, given, settings, today)
            except (CarnetError, OSError) as exc:
                _failed(reading.result, exc)
    return [reading.result for reading in readings]


def _write_note(content: Path, analysis: CheckedContent, reading: _Reading, answers: list[Answer],
                settings: AnalysisSettings, today: dt.date) -> None:
    """Resolve the note's answers in order and write its proposal and fingerprints; the
    first failed request (in the chunks' order) fails the note, and nothing is written."""
    from generator.llm import LLMAnswerError, LLMError

    note, notebook, result, elements, chunks = (reading.note, reading.notebook, reading.result, reading.elements,
                                                reading.chunks)
    slug, notebook_slug, record = note.slug, result.notebook, reading.record
    folder = content / FOLDER / slug
    sent = result.sent
    if not chunks or sent is None:  # nothing to send, or the note failed before anything was sent
        return
    proposed: list[ProposedExtraction] = []
    left_out: list[LeftOut] = []
    provenance: dict[str, Any] = {}
    accepted: list[int] = []  # the elements whose answer was accepted whole: marked as read
    for number, (chunk, answer) in enumerate(zip(chunks, answers, strict=True), start=1):
        if answer is None:  # not sent: an earlier request of the note had failed
            continue
        if isinstance(answer, LLMError):
            result.error = result.error or f"request {number} of {len(chunks)}: {answer}"
            if isinstance(answer, LLMAnswerError):  # an unusable answer still cost its tokens
                result.usage = add_usage(result.usage, answer.usage)
            continue
        data, made = answer
        result.usage = add_usage(result.usage, made.usage)
        if result.error:  # answered while in flight after a failure: its tokens count, nothing is written
            continue
        provenance = made.as_record()
        found, missed = resolve_answer(elements, chunk, data["passages"], notebook.axes if notebook else (),
                                       notebook_slug, settings.kinds)
        proposed += found
        left_out += missed
        if any(item.refused for item in missed):  # an answer that broke the request's rules is not a reading
            result.unaccepted += len(chunk.analysed)
        else:
            accepted += chunk.analysed
    if result.error:
        return
    result.proposed, duplicates = drop_duplicates(proposed, _existing(analysis, note))
    result.left_out = left_out + duplicates
    provenance.pop("usage", None)
    if result.usage:
        provenance["usage"] = result.usage
    proposal_id, path = free_proposal_path(folder, f"{today.isoformat()}-{provenance.get('method', 'llm')}")
    data = proposal_record(proposal_id, slug, notebook_slug, file_hash(content / note.source.file), provenance,
                           sent, result.proposed, result.left_out)
    new_record = record_for(slug, notebook_slug, proposal_id, elements, record, accepted)
    fingerprints = {"note": new_record.note, "notebook": new_record.notebook, "proposal": new_record.proposal,
                    "elements": list(new_record.fingerprints)}
    # the proposal and the fingerprints of what it covers are written together, or not at all
    write_content(content, f"carnet analyse {slug}",
                  PlannedWrite(path.relative_to(content).as_posix(), dump_yaml(data), data),
                  PlannedWrite((folder / RECORD_NAME).relative_to(content).as_posix(),
                               render_record(new_record, elements).encode("utf-8"), fingerprints, ALL))
    result.path = path


def run_analyse(content: Path, names: list[str], notebook: str | None = None, budget: int | None = None,
                whole: bool = False, today: dt.date | None = None, *, jobs: int = 1, dry_run: bool = False,
                max_tokens: int | None = None) -> AnalyseReport | Plan:
    """Analyse each named note (up to ``jobs`` requests at once); a failing note does not
    stop the others."""
    analysis = check_content(content)
    if not names:
        raise AnalyseError("name at least one note to analyse")
    notes: dict[str, tuple[Note, Notebook | None]] = {}
    for name in names:
        note = _note(analysis, name)
        notes.setdefault(note.slug, (note, _notebook(analysis, note, notebook)))
    settings = analysis_settings(analysis.corpus.settings.extra, analysis.corpus.settings.language)
    if budget is not None:
        if budget < 200:
            raise AnalyseError("--budget must be at least 200 characters")
        settings = AnalysisSettings(budget, settings.neighbours, settings.kinds, settings.language)
    today = today or dt.date.today()
    client = _client(analysis, content, today, max_tokens)
    from generator.llm.plan import Plan

    done = analyse_notes(content, analysis, list(notes.values()), client, settings, whole, today, jobs, dry_run)
    return done if isinstance(done, Plan) else AnalyseReport(done)


def _tokens(usage: dict[str, int]) -> str:
    if not usage:
        return "none reported"
    names = {"prompt_tokens": "prompt", "completion_tokens": "completion", "total_tokens": "total"}
    return ", ".join(f"{names.get(k, k)} {v}" for k, v in usage.items())


def shown_path(path: Path) -> str:
    """``path`` as typed from the current directory: relative when it lies under it,
    else absolute."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return str(path.resolve())
    return str(path.resolve()) if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def print_report(report: AnalyseReport, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    for item in report.notes:
        where = f" (notebook {item.notebook})" if item.notebook else " (no notebook)"
        show(out, f"{item.note}{where}:")
        if item.sent is not None and item.sent.note_elements == 0 and not item.error:
            show(out, "  the note has no text to analyse; nothing sent")
            continue
        if item.sent is not None and item.sent.chunks == 0 and not item.error:
            show(out, f"  nothing new since the last analysis ({item.sent.note_elements} element(s) already read); "
                      "nothing sent (--all sends the whole note again)")
            continue
        if item.sent is not None:
            show(out, f"  {item.sent.describe()}")
        if item.error:
            # a refused write explains itself on several lines (the problem, then its hint)
            print(visible(f"  FAILED, nothing written: {item.error}", keep_newlines=True), file=out)
            show(out, f"  tokens spent before the failure: {_tokens(item.usage)}")
            continue
        show(out, f"  proposed {len(item.proposed)} passage(s); left out {len(item.left_out)}")
        for left in item.left_out:
            show(out, f"    - « {_short(left.quote)} »: {left.reason}")
        for number, passage in enumerate(item.proposed, start=1):
            for refused in passage.refused:
                show(out, f"    refused category {refused.axis + ': ' if refused.axis else ''}{refused.category} "
                          f"(passage {number}): {refused.reason}")
        if item.unaccepted:
            show(out, f"  {item.unaccepted} element(s) are not marked as read (their answer had refused items): "
                      "the next analysis sends them again")
        show(out, f"  tokens: {_tokens(item.usage)}")
        if item.path is not None:
            shown = shown_path(item.path)
            show(out, f"  wrote {shown}; review it with 'carnet review {shown}'")
    if len(report.notes) > 1:
        show(out, f"total tokens: {_tokens(report.usage)}")


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- review and apply ---------------------------------------------------------------


def _planned(content: Path, proposal: ExtractionProposal, only: set[int] | None
             ) -> tuple[CheckedContent, Note, list[PassageDecision]]:
    analysis = check_content(content)
    note = analysis.corpus.notes.get(proposal.target)
    if note is None:
        raise AnalyseError(f"{proposal.file}: the note {proposal.target!r} no longer exists")
    elements = analysis.anchored[note.slug].document.elements
    return analysis, note, plan(note.slug, elements, _existing(analysis, note), taken_ids(content, analysis.corpus),
                                proposal.passages, only)


def taken_ids(content: Path, corpus: Corpus) -> set[str]:
    """Every id a new extraction must not get, because something points at it or did:
    the extractions and comments there are; every ``[[ext:…]]`` / ``[[com:…]]`` marker
    in any note (dangling ones too: reusing the id would silently re-point the
    citation); the frozen perimeters of syntheses; and the ids given by every applied
    extraction proposal (the extraction may have been removed since). ``corpus``: the content
    loaded (its anchoring is not needed)."""
    taken = {e.id for n in corpus.notes.values() for e in n.extractions}
    taken |= {c.id for n in corpus.notes.values() for e in n.extractions for c in e.comments}
    for note in corpus.notes.values():
        recorded = getattr(note.article, "recorded", None)
        if recorded is not None:
            taken |= {e.id for e in recorded.extractions}
    # markers are read from the files, so that a note the loader refused still counts
    notes = content / "notes"
    for path in sorted(notes.rglob("*.md")) if notes.is_dir() else []:
        text, _ = decode_text(path.read_bytes(), path.name)
        taken |= {key for _kind, key in markers(text or "")}
    return taken | _applied_ids(content)


def _applied_ids(content: Path) -> set[str]:
    """The ids recorded under ``applied: results:`` of the extraction proposals, read
    leniently: a malformed file gives what it can (review and apply report it)."""
    ids: set[str] = set()
    folder = content / FOLDER
    for path in sorted(folder.glob("*/*.yaml")) if folder.is_dir() else []:
        if path.name == RECORD_NAME:
            continue
        text, _ = decode_text(path.read_bytes(), path.name)
        value, _ = parse_yaml(text or "", path.name)
        applied = value.get("applied") if isinstance(value, dict) else None
        results = applied.get("results") if isinstance(applied, dict) else None
        for entry in results if isinstance(results, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                ids.add(entry["id"].strip())
    return ids


def review_extractions(content: Path, proposal: ExtractionProposal, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    analysis, note, decisions = _planned(content, proposal, None)
    provenance = proposal.provenance
    model = f" · {provenance['model']}" if provenance.get("model") else ""
    notebook = f"notebook {proposal.notebook}" if proposal.notebook else "no notebook"
    show(out, f"proposal {proposal.id} for note {proposal.target} ({notebook}; {len(proposal.passages)} passage(s), "
              f"made by method {provenance.get('method', '?')}{model})")
    sent, usage = proposal.sent, provenance.get("usage")
    if sent:
        share = sent.get("share_percent")
        shown = f"{share:g}" if isinstance(share, (int, float)) else "?"
        show(out, f"  the analysis sent {sent.get('elements', '?')} of {sent.get('note_elements', '?')} element(s), "
                  f"{shown} % of the note; tokens: {_tokens(usage if isinstance(usage, dict) else {})}")
    if proposal.note_sha256 and file_hash(content / note.source.file) != proposal.note_sha256:
        show(out, "  the note changed since the analysis: each passage is anchored against its current text")
    if not proposal.pending:
        show(out, f"  already applied on {proposal.applied_on}")
    lines = {i: e.line for i, e in enumerate(analysis.anchored[note.slug].document.elements)}
    for decision in decisions:
        passage = decision.passage
        where = f" ({note.source.file}:{lines[decision.portions[0].element]})" if decision.portions else ""
        verdict = f"would be added as {decision.id}" if decision.decision == "accepted" else \
            f"would be rejected: {decision.reason}"
        show(out, f"\n[{decision.index + 1}] {passage.kind}{where}: {verdict}")
        for line in passage.quote.split("\n"):
            show(out, f"    | {line}")
        if passage.categories:
            shown = "; ".join(f"{axis}: {', '.join(values)}" for axis, values in passage.categories.items())
            show(out, f"    suggested categories: {shown}")
        for axis, category, reason in passage.refused_categories:
            show(out, f"    refused category {axis + ': ' if axis else ''}{category}: {reason}")
    if proposal.left_out:
        show(out, f"\nleft out by the analysis ({len(proposal.left_out)}), never placed by a guess:")
        for quote, reason in proposal.left_out:
            show(out, f"  - « {_short(quote)} »: {reason}")
    _print_category_summary(note, proposal, out)
    return 0


def _print_category_summary(note: Note, proposal: ExtractionProposal, out: TextIO) -> None:
    """Categories live on the note's membership (INV-11): the passages' suggestions are
    summed up for a human to decide; apply does not change the note's categories."""
    counts: dict[tuple[str, str], int] = {}
    for passage in proposal.passages:
        for axis, values in passage.categories.items():
            for value in values:
                counts[(axis, value)] = counts.get((axis, value), 0) + 1
    if not counts or not proposal.notebook:
        return
    membership = note.membership(proposal.notebook)
    current = membership.categories if membership else {}
    suggested = "; ".join(f"{axis}: {value} ({count})" for (axis, value), count in sorted(counts.items()))
    now = "; ".join(f"{axis}: {', '.join(values)}" for axis, values in sorted(current.items())) or "none"
    missing = sorted(f"{axis}: {value}" for axis, value in counts if value not in current.get(axis, ()))
    show(out, f"\ncategories suggested for {note.slug} in notebook {proposal.notebook}: {suggested}; it has now: {now}")
    if missing:
        show(out, f"  not yet on the note (add them to its front matter by hand if they fit): {', '.join(missing)}")


def sidecar_path(content: Path, note: Note) -> Path:
    return content / (note.source.file.removesuffix(".md") + EXTRACTIONS_SUFFIX)


def apply_extractions(content: Path, path: Path, proposal: ExtractionProposal, only: list[int] | None = None,
                      today: dt.date | None = None) -> list[PassageDecision]:
    """Add the chosen passages to the note's extractions file; record the decisions."""
    if not proposal.pending:
        raise ProposalError(f"proposal {proposal.id} was already applied on {proposal.applied_on}")
    wanted = {n - 1 for n in only} if only else None
    if wanted is not None and not all(0 <= n < len(proposal.passages) for n in wanted):
        raise ProposalError(f"--only takes passage numbers from 1 to {len(proposal.passages)}")
    today = today or dt.date.today()
    analysis, note, decisions = _planned(content, proposal, wanted)
    accepted = [d for d in decisions if d.decision == "accepted"]
    proposal_rel = path.resolve().relative_to(content).as_posix()
    # the extractions file and the record change together, or not at all: an error (the
    # new extractions not landing as planned) or a kill between the two is undone
    with ContentChange(content, f"carnet apply {proposal_rel}") as change:
        if accepted:
            elements = analysis.anchored[note.slug].document.elements
            # the stored quote is the note's own text where the passage lands now, never
            # the proposal's string (which a reviewer may have edited)
            items = [NewExtraction(d.id, portions_text(elements, d.portions), d.passage.kind, today, d.passage.prefix,
                                   d.passage.occurrence) for d in accepted]
            _write_sidecar(content, note, proposal, items, today, change)
            _confirm(content, note, accepted, analysis.errors)
        change.write(_recorded(content, path, decisions, today))
    return decisions


def _recorded(content: Path, path: Path, decisions: list[PassageDecision], today: dt.date) -> PlannedWrite:
    """The proposal with its decisions appended: what was written stays as it was."""
    results: list[dict[str, Any]] = []
    for decision in decisions:
        entry: dict[str, Any] = {"index": decision.index, "decision": decision.decision}
        if decision.id:
            entry["id"] = decision.id
        if decision.reason:
            entry["reason"] = decision.reason
        results.append(entry)
    return applied_record(content, path, today, results)


def _write_sidecar(content: Path, note: Note, proposal: ExtractionProposal, items: list[NewExtraction],
                   today: dt.date, change: ContentChange) -> None:
    """Append ``items`` to the note's extractions file (made if missing), as part of
    ``change``: in the file's own layout, and read back before it is written."""
    rel = sidecar_path(content, note).relative_to(content).as_posix()
    provenance = proposal.provenance
    made = ", ".join(f"{key} {provenance[key]}" for key in ("method", "model", "prompt", "prompt_version")
                     if provenance.get(key))
    # one comment line whatever the server named its model: yamledit escapes line breaks
    comment = f"added by 'carnet apply' on {today.isoformat()} from {proposal.file} ({made})"
    change.write(appended(content, rel, "extractions", [item.as_record() for item in items], comment,
                          render=render_entry))


def _confirm(content: Path, note: Note, accepted: list[PassageDecision], errors_before: list[Problem]) -> None:
    """Load the content again: each new extraction must be valid and anchored exactly
    where planned, else an error (and the change puts the extractions file back)."""
    target = sidecar_path(content, note)
    after = check_content(content)
    anchors = after.anchored.get(note.slug)
    wrong = []
    for decision in accepted:
        anchor = anchors.anchors.get(decision.id) if anchors else None
        if anchor is None or anchor.status is not AnchorStatus.ANCHORED or anchor.portions != decision.portions:
            wrong.append(decision.id)
    known = {(p.code, p.message) for p in errors_before}
    problems = [p for p in after.errors if (p.code, p.message) not in known]
    if wrong or problems:
        details = [f"{', '.join(wrong)} would not land where planned"] if wrong else []
        details += [p.format_text() for p in problems]
        raise AnalyseError(f"{target.relative_to(content).as_posix()}: the new extractions did not load as planned "
                           f"({'; '.join(details)}); the file was put back as it was and nothing was applied")
