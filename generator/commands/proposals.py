"""``carnet propose WIKI``, ``carnet review PROPOSAL``, ``carnet apply PROPOSAL``.

``review`` and ``apply`` act on any proposal; those of kind ``extractions`` (written by
``carnet analyse``) are handed to :mod:`generator.commands.analyse`.

I/O around two pure cores: the audit (what the wiki leaves uncited) and the
section-operation applier. A proposal is a file under ``proposals/sections/<wiki>/``;
nothing is written when a model call fails (INV-15); ``apply`` refuses a proposal made
against another version of the article, rewrites the article atomically with its
untouched sections byte-identical, and records each operation's decision.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from generator.commands.proposal_files import (
    ProposalError,
    applied_record,
    dump_yaml,
    file_hash,
    free_proposal_path,
    load_proposal,
)
from generator.commands.propose_requests import Unit, pack, units
from generator.corpus.model import Note, NoteType
from generator.corpus.proposal import ExtractionProposal, Op, Operation, Proposal
from generator.extracting.plan import PassageDecision
from generator.files import read_text_file
from generator.kinds import WikiKind
from generator.markup import comment_ranges, without_comments
from generator.pipeline import CheckedContent, check_content
from generator.synthesis.audit import DiscardedItem
from generator.synthesis.sections import OperationResult, Sources, apply_operations, sections
from generator.terminal import visible
from generator.text import without_forbidden
from generator.writes import ContentChange, PlannedWrite, read_back, write_content

if TYPE_CHECKING:  # the LLM seam is imported only when a model is asked (review and apply never do)
    from generator.llm.plan import Plan

MAX_OPERATIONS = 5
OPERATION_TOKENS = 600
"""Tokens one section operation takes in an answer: a few paragraphs quoting their evidence."""


def _wiki(analysis: CheckedContent, slug: str) -> Note:
    note = analysis.corpus.notes.get(slug)
    if note is None or note.type is not NoteType.WIKI:
        raise ProposalError(f"{slug!r} is not a wiki article of this content")
    return note


def sources_for(analysis: CheckedContent, slug: str) -> Sources:
    """What the wiki may cite: its perimeter's extractions and their comments; and the
    ids held by articles, which are never sources."""
    audit = analysis.articles[slug]
    corpus = analysis.corpus
    allowed = set(audit.perimeter_extractions or [])
    for note_slug in audit.perimeter_notes or []:
        for extraction in corpus.notes[note_slug].extractions:
            if extraction.id in allowed:
                allowed.update(c.id for c in extraction.comments if c.withdrawn is None)
    in_articles = {e.id for n in corpus.notes.values() if n.type is not NoteType.NOTE for e in n.extractions}
    return Sources(frozenset(allowed), frozenset(in_articles))


@dataclass(frozen=True)
class Proposed:
    """What ``carnet propose`` did.

    Attributes:
        path: the proposal written (None: a dry run, or nothing usable to write).
        plan: the requests planned (None for the offline provider).
        operations: operations written.
        failed: for each request that failed or was not sent, a line saying why.
    """

    path: Path | None
    plan: Plan | None = None
    operations: int = 0
    failed: tuple[str, ...] = ()


def propose(content: Path, slug: str, provider: str = "extractive", max_operations: int = MAX_OPERATIONS,
            today: dt.date | None = None, *, dry_run: bool = False, max_tokens: int | None = None) -> Proposed:
    """Write a proposal for ``slug``. With ``llm``, the requests are planned first (within the
    model's context and the run's budget): ``dry_run`` returns the plan unsent, and a plan
    that does not fit raises :class:`~generator.llm.errors.PlanRefused` with it."""
    analysis = check_content(content)
    note = _wiki(analysis, slug)
    audit = analysis.articles[slug]
    today = today or dt.date.today()
    plan: Plan | None = None
    failed: tuple[str, ...] = ()
    if provider == "extractive":
        uncited = list(audit.discarded or [])[: max(1, max_operations) * 3]
        operations, provenance = _extractive(analysis, slug, uncited, max_operations), {
            "method": "scripted", "generator": "carnet propose --provider extractive", "date": today.isoformat()}
    elif provider == "llm":
        made = _from_model(analysis, slug, max_operations, today, dry_run=dry_run, max_tokens=max_tokens)
        if made is None or not isinstance(made, tuple):  # nothing uncited, or a dry run's plan
            return Proposed(None, made)
        operations, provenance, plan, failed = made
        if not operations:
            return Proposed(None, plan, 0, failed)
    else:
        raise ProposalError(f"unknown provider {provider!r}: use extractive or llm")
    record: dict[str, Any] = {
        "id": f"{today.isoformat()}-{provider}",
        "kind": "sections",
        "target": slug,
        "article_sha256": file_hash(content / note.source.file),
        "perimeter": list(audit.perimeter_extractions or []),
        "provenance": provenance,
        "operations": [{"op": o.op.value, "heading": o.heading, "after_heading": o.after_heading, "content": o.content,
                        **({"request": o.request} if o.request else {})} for o in operations],
    }
    record["id"], path = free_proposal_path(content / "proposals" / "sections" / slug, record["id"])
    rel = path.relative_to(content).as_posix()
    write_content(content, f"carnet propose {slug}", PlannedWrite(rel, dump_yaml(record), record))
    return Proposed(path, plan, len(operations), failed)


def _extractive(analysis: CheckedContent, slug: str, uncited: list[DiscardedItem], max_operations: int) -> list[Operation]:
    """Offline and deterministic: the most debated uncited pieces, quoted verbatim with
    their markers, in a section of their own; its heading and quotation marks are the
    theme's, in the site's language."""
    from generator.site.theme import Theme

    if not uncited:
        return [Operation(Op.NO_CHANGE)]
    words = Theme.load(None, analysis.corpus.settings.language)
    lines = [words.tr("propose_evidence_line", quote=" ".join(item.quote.split()), id=item.extraction)
             for item in uncited[:max_operations] if item.exists]
    heading = words.tr("propose_heading")
    body = analysis.corpus.notes[slug].body
    headings = [s.heading for s in sections(body)]
    if heading in headings:
        return [Operation(Op.APPEND, heading=heading, content="\n".join(lines))]
    after = next((h for h in reversed(headings) if h is not None), "")
    return [Operation(Op.INSERT, heading=heading, after_heading=after, content="\n".join(lines))]


OPERATIONS_SCHEMA = {
    "type": "object", "required": ["operations"],
    "properties": {"operations": {"type": "array", "items": {
        "type": "object", "required": ["op", "heading", "after_heading", "content"],
        "properties": {"op": {"type": "string", "enum": [op.value for op in Op]},
                       "heading": {"type": "string"}, "after_heading": {"type": "string"},
                       "content": {"type": "string"}}}}},
}


EVIDENCE_LINE_CHARACTERS = 90
"""Characters a piece of evidence takes in the prompt beyond its quote and its note's title
(its marker, date, counts and punctuation), in the evidence list and again in its group."""


@dataclass(frozen=True)
class _Request:
    """One planned request of ``propose --provider llm``: its units and what it renders."""

    units: tuple[Unit, ...]
    evidence: tuple[dict[str, object], ...]
    groups: tuple[dict[str, Any], ...]

    @property
    def ids(self) -> list[str]:
        return [str(item["id"]) for item in self.evidence]


def _requests(analysis: CheckedContent, slug: str, room: int) -> tuple[list[_Request], list[str]]:
    """The wiki's uncited evidence spread over requests of at most ``room`` characters of
    evidence, group by group (:mod:`generator.commands.propose_requests`)."""
    from generator.selection.select import select, selection_threshold

    audit = analysis.articles[slug]
    corpus = analysis.corpus
    uncited = {item.extraction: item for item in audit.discarded or [] if item.exists and not item.passage}
    order = list(uncited)
    cited = {link.extraction for link in audit.links if link.marker.kind is WikiKind.EXT and not link.broken}
    quotes = {e.id: e.quote for n in corpus.notes.values() for e in n.extractions}
    selection = select(corpus, audit.perimeter_extractions or [], selection_threshold(corpus.settings.extra))

    def evidence(item: DiscardedItem) -> dict[str, object]:
        source = corpus.notes.get(item.note)
        return {"id": item.extraction, "note": source.title if source else item.note,
                "date": source.date.isoformat() if source and source.date else "", "quote": item.quote,
                "comments": item.comments, "disagreements": item.disagreements}

    def text(member: str) -> str:
        return quotes[member].strip().split("\n")[0] if member in cited else " ".join(quotes[member].split())

    def size(member: str) -> int:
        if member in uncited:  # in the evidence list, then in its group
            item = evidence(uncited[member])
            return 2 * EVIDENCE_LINE_CHARACTERS + len(str(item["quote"])) + len(str(item["note"])) + len(text(member))
        return EVIDENCE_LINE_CHARACTERS + len(text(member))

    sent, notes = units(selection.groups, order, size, room)
    requests = []
    for packed in pack(sent, room):
        members = {m for unit in packed for m in unit.members}
        groups = tuple({"number": unit.name,
                        "members": [{"id": m, "cited": m in cited, "text": text(m)} for m in unit.members]}
                       for unit in packed)
        requests.append(_Request(tuple(packed), tuple(evidence(uncited[m]) for m in order if m in members), groups))
    return requests, notes


def _label(request: _Request) -> str:
    numbers = [unit.name for unit in request.units]
    shown = ", ".join(numbers[:6]) + (f" and {len(numbers) - 6} more" if len(numbers) > 6 else "")
    return f"group(s) {shown}: {len(request.evidence)} uncited extraction(s)"


def _from_model(analysis: CheckedContent, slug: str, max_operations: int, today: dt.date, *, dry_run: bool,
                max_tokens: int | None) -> Plan | tuple[list[Operation], dict[str, Any], Plan, tuple[str, ...]] | None:
    """The operations the model proposes, request by request: the plan (``dry_run``), None
    when there is no uncited evidence, else the operations with the provenance of the run
    (each request's evidence, model and usage), the plan, and the requests that failed."""
    from generator.llm import LLMAnswerError, LLMClient, LLMError, LLMTransportError, llm_settings
    from generator.llm.errors import BudgetSpent, PlanRefused
    from generator.llm.plan import Plan, PlannedRequest, limits_from
    from generator.llm.prompts import load_prompt
    from generator.llm.schema import answer_tokens, bounded, prompt_examples, shown

    extra = analysis.corpus.settings.extra
    limits = limits_from(extra, max_tokens)
    settings = llm_settings(extra)
    client = LLMClient(settings, today=today, limits=limits)
    note = analysis.corpus.notes[slug]
    lines = note.body.split("\n")
    context_sections = [{"heading": s.heading, "text": "\n".join(lines[s.content_start:s.end]).strip()}
                        for s in sections(note.body)]
    headings = [s.heading for s in sections(note.body) if s.heading is not None]
    prompt = load_prompt("propose_sections", analysis.corpus.settings.language)
    wanted = max(1, max_operations)
    completion = client.completion(answer_tokens(wanted, OPERATION_TOKENS))
    context = {"title": note.title, "sections": context_sections, "max_operations": wanted}
    frame = client.request_characters(prompt, evidence=[], groups=[], **context)
    room = limits.room(completion) - frame
    if room <= 0:
        raise PlanRefused(f"the article alone ({frame:,} characters) leaves no room for evidence in the model's "
                          f"context of {limits.context_tokens:,} tokens: nothing was sent; lower --max-operations "
                          "or say a larger context with llm.context_tokens", None)
    requests, notes = _requests(analysis, slug, room)
    if not requests:
        return None
    plan = Plan(f"carnet propose {slug} --provider llm", tuple(
        PlannedRequest(_label(r), client.request_characters(prompt, evidence=list(r.evidence), groups=list(r.groups),
                                                            **context), completion) for r in requests),
        limits, tuple(notes))
    if dry_run:
        return plan
    plan.check()
    # the closed sets of the answer: the operations, and the headings that exist to act on
    schema = json.loads(json.dumps(OPERATIONS_SCHEMA))
    schema["properties"]["operations"]["items"]["properties"]["after_heading"]["enum"] = ["", *headings]
    constraint = bounded(schema, "operations", max_items=wanted, min_items=1)
    examples = prompt_examples(prompt.text)
    operations: list[Operation] = []
    records: list[dict[str, Any]] = []
    failed: list[str] = []
    last: dict[str, Any] = {}
    for number, request in enumerate(requests, start=1):
        entry: dict[str, Any] = {"request": number, "evidence": request.ids}
        records.append(entry)
        client.progress(f"request {number} of {len(requests)}: {_label(request)}")
        try:
            data, provenance = client.chat_json(prompt, OPERATIONS_SCHEMA, constraint=constraint, max_tokens=completion,
                                                evidence=list(request.evidence), groups=list(request.groups), **context)
            faults = operation_faults(data["operations"], max_operations, examples)
            if faults:  # the operations of one answer make one edit: a bad one refuses that answer
                raise LLMAnswerError("its operations are refused: " + "; ".join(faults), provenance.usage)
        except LLMError as exc:
            entry["outcome"] = ("not sent: the run's budget was spent" if isinstance(exc, BudgetSpent)
                                else f"failed: {shown(str(exc), 300)}")
            if exc.usage:
                entry["usage"] = dict(exc.usage)
            failed.append(f"request {number} ({_label(request)}) failed: {exc}")
            if isinstance(exc, (LLMTransportError, BudgetSpent)):  # the endpoint down, the budget spent
                why = "the endpoint failed" if isinstance(exc, LLMTransportError) else "the run's budget was spent"
                for later, left in enumerate(requests[number:], start=number + 1):
                    records.append({"request": later, "evidence": left.ids, "outcome": f"not sent: {why}"})
                    failed.append(f"request {later} ({_label(left)}): not sent, {why}")
                break
            continue
        last = provenance.as_record()
        entry["outcome"] = "answered"
        entry["model"] = provenance.model
        if provenance.usage:
            entry["usage"] = dict(provenance.usage)
        operations += [Operation(Op(o["op"]), o["heading"], o["after_heading"], o["content"], number)
                       for o in data["operations"]]
    provenance_record = {key: value for key, value in last.items() if key != "usage"} or \
        {"method": "llm", "endpoint": client.endpoint, "prompt": prompt.name, "prompt_version": prompt.version,
         "date": today.isoformat()}
    provenance_record["usage"] = dict(client.ledger.usage)
    provenance_record["requests"] = records
    if plan.notes:  # a group cut along its spanning tree is said with the proposal it shaped
        provenance_record["plan_notes"] = list(plan.notes)
    return operations, provenance_record, plan, tuple(failed)


MAX_CONTENT_CHARS = 20_000
"""Longest text one operation of a model may add."""
MAX_HEADING_CHARS = 200
"""Longest heading one operation of a model may name."""


def operation_faults(operations: list[dict[str, Any]], max_operations: int,
                     examples: dict[str, frozenset[str]]) -> list[str]:
    """What makes the model's operations unusable, one line each: more than asked for,
    over-long text, a placeholder (empty, "…", the prompt's own example) where an
    operation needs text or a heading. [] when they can be proposed."""
    from generator.llm.schema import placeholder, shown, too_long

    faults = []
    if len(operations) > max(1, max_operations):
        faults.append(f"{len(operations)} operations, more than the {max(1, max_operations)} asked for")
    for number, item in enumerate(operations[:max(1, max_operations)], start=1):
        op = item["op"]
        for name, limit in (("content", MAX_CONTENT_CHARS), ("heading", MAX_HEADING_CHARS),
                            ("after_heading", MAX_HEADING_CHARS)):
            if too_long(item[name], limit):
                faults.append(f"operation {number} ({op}): its {name} is {too_long(item[name], limit)}")
        if op == Op.NO_CHANGE:
            continue
        if placeholder(item["content"], examples.get("content", ())):
            faults.append(f"operation {number} ({op}): its content is a placeholder ({shown(item['content'])})")
        for name in ("heading", "after_heading"):
            said = item[name]
            if (said or (name == "heading" and op == "InsertSection")) and placeholder(said, examples.get(name, ())):
                faults.append(f"operation {number} ({op}): its {name} is a placeholder ({shown(said)})")
    return faults


def _dry_run(content: Path, proposal: Proposal, only: set[int] | None
             ) -> tuple[CheckedContent, Note, Path, bool, list[Operation | None], str, list[OperationResult]]:
    analysis = check_content(content)
    note = _wiki(analysis, proposal.target)
    path = content / note.source.file
    stale = file_hash(path) != proposal.article_sha256
    chosen = [op if only is None or index in only else None for index, op in enumerate(proposal.operations)]
    body, results = apply_operations(note.body, [op for op in chosen if op is not None],
                                     sources_for(analysis, proposal.target))
    return analysis, note, path, stale, chosen, body, results


def review(path: Path, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # read at the call, so a redirected stdout is honoured
    content, proposal = load_proposal(path)
    if isinstance(proposal, ExtractionProposal):
        from generator.commands.analyse import review_extractions

        return review_extractions(content, proposal, out)
    analysis, note, _article, stale, _chosen, _body, results = _dry_run(content, proposal, None)
    colour = out.isatty()

    def paint(text: str, code: str) -> str:
        """``text`` shown safely (its control characters escaped), then coloured."""
        return f"\033[{code}m{visible(text)}\033[0m" if colour else visible(text)

    method = proposal.provenance.get("method", "?")
    model = proposal.provenance.get("model")
    print(visible(f"proposal {proposal.id} for {proposal.target} ({len(proposal.operations)} operation(s), made by "
                  f"method {method}{f' · {model}' if model else ''})"), file=out)
    if stale:
        print(paint("STALE: the article changed since this proposal was made; apply will refuse it", "31;1"), file=out)
    if not proposal.pending:
        print(visible(f"already applied on {proposal.applied_on}"), file=out)
    current = note.body
    for result in results:
        op = result.operation
        where = op.heading if op.op is not Op.INSERT else f"{op.heading} (after {op.after_heading or 'the lead'})"
        verdict = paint("accepted", "32") if result.accepted else paint(f"rejected: {result.reason}", "31")
        # the heading as written (a model's controls are escapes already, see Fields.text): no repr doubling them
        print("\n" + visible(f"[{result.index + 1}] {op.op} '{where}'") + f": {verdict}", file=out)
        if result.accepted and op.op is not Op.NO_CHANGE:
            after, _ = apply_operations(current, [op], sources_for(analysis, proposal.target))
            for line in difflib.unified_diff(current.split("\n"), after.split("\n"), "article", "proposed",
                                             lineterm="", n=1):
                code = "32" if line.startswith("+") else "31" if line.startswith("-") else "0"
                print(paint(line, code), file=out)
            if result.removed:
                print(f"    (ReplaceSection removes {len(result.removed.split())} words, shown above with '-')",
                      file=out)
            current = after
        elif not result.accepted:
            for line in op.content.split("\n"):
                print(f"    | {visible(line)}", file=out)
    return 0


def _blank_lines_folded(body: str) -> str:
    """A body with each run of blank lines as one: a cut comment leaves its lines blank, and an
    operation beside it adds its own; neither changes what the article says."""
    return re.sub(r"\n[ \t]*(?:\n[ \t]*)+", "\n\n", body).strip()


def apply(path: Path, only: list[int] | None = None, today: dt.date | None = None
          ) -> list[OperationResult] | list[PassageDecision]:
    """Apply a proposal: section operations to its wiki, or passages to its note's
    extractions file (see :func:`generator.commands.analyse.apply_extractions`)."""
    content, proposal = load_proposal(path)
    if isinstance(proposal, ExtractionProposal):
        from generator.commands.analyse import apply_extractions

        return apply_extractions(content, path, proposal, only, today)
    if not proposal.pending:
        raise ProposalError(f"proposal {proposal.id} was already applied on {proposal.applied_on}")
    wanted = {n - 1 for n in only} if only else None
    if wanted is not None and not all(0 <= n < len(proposal.operations) for n in wanted):
        raise ProposalError(f"--only takes operation numbers from 1 to {len(proposal.operations)}")
    _analysis, note, article, stale, chosen, body, results = _dry_run(content, proposal, wanted)
    if stale:
        raise ProposalError(f"proposal {proposal.id} was made against another version of {proposal.target}: "
                            "refused as stale (make a new proposal)")
    article_rel = article.resolve().relative_to(content).as_posix()
    article_data = article.read_bytes()
    read, problems = read_text_file(article_data, article_rel)
    if read is None:
        raise ProposalError("; ".join(p.format_text() for p in problems) + " — nothing was written")
    head = "\n".join(read.text.split("\n")[: note.body_line - 1])
    written = "\n".join(read.text.split("\n")[note.body_line - 1:])
    if written != note.body:  # the build reads it without its HTML comments: applied to the file's text, they stay
        reviewed = (_blank_lines_folded(body), [r.accepted for r in results])
        body, results = apply_operations(written, [op for op in chosen if op is not None],
                                         sources_for(_analysis, proposal.target))
        if (_blank_lines_folded(without_comments(without_forbidden(body))), [r.accepted for r in results]) != reviewed:
            # a comment holds what an operation acts on: what review showed is not what would be written
            lines = sorted({note.body_line + written.count("\n", 0, start) for start, _end in comment_ranges(written)})
            where = ", ".join(f"{article_rel}:{line}" for line in lines[:3]) or article_rel
            raise ProposalError(f"the HTML comment(s) of {proposal.target} at {where} change how these operations "
                                "apply: what `carnet review` showed is not what would be written — nothing was "
                                "written. Move the comment out of the sections the proposal changes (or delete it), "
                                "then make a new proposal")
    new_text = head + "\n" + body
    by_position = iter(results)
    decisions = []
    for index, op in enumerate(chosen):
        if op is None:
            decisions.append({"index": index, "decision": "skipped", "reason": "not chosen (--only)"})
            continue
        result = next(by_position)
        entry: dict[str, Any] = {"index": index, "decision": "accepted" if result.accepted else "rejected"}
        if result.reason:
            entry["reason"] = result.reason
        if result.code:  # what a page words in the site's language
            entry["reason_code"] = result.code
            if result.values:
                entry["reason_values"] = dict(result.values)
        if result.removed:
            entry["removed"] = result.removed
        decisions.append(entry)
    recorded = applied_record(content, path, today or dt.date.today(), decisions)
    old_meta, _problems = read_back(article_rel, article_data)
    # the article and the record change together, or not at all (a kill between them is undone)
    with ContentChange(content, f"carnet apply {recorded.rel}") as change:
        if new_text != read.text:  # written back with the article's own BOM and line ends
            change.write(PlannedWrite(article_rel, read.encode(new_text),
                                      {"front_matter": old_meta["front_matter"], "body": body}, frozenset({("body",)})))
        change.write(recorded)
    return results
