"""``carnet select WIKI [--threshold T] [--oppositions]``: print the wiki's groups with
their explanations and warnings, and its oppositions; with ``--oppositions``, run the
oppositions pass through the model and record it under ``content/oppositions/``."""

from __future__ import annotations

import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import yaml

from generator.corpus.model import NoteType
from generator.pipeline import CheckedContent, check_content
from generator.problems import EXIT_MODEL, EXIT_OK, CarnetError
from generator.selection.groups import pair_cap
from generator.selection.oppositions import RefusedOpposition
from generator.selection.select import Selection, select, selection_threshold
from generator.selection.threshold import CEILING, ThresholdRule
from generator.terminal import show
from generator.writes import PlannedWrite, appended, write_content

if TYPE_CHECKING:  # the LLM seam is imported only when the pass runs
    from generator.llm import LLMClient
    from generator.llm.plan import Limits, Plan
    from generator.llm.prompts import Prompt


def reindex(content: Path, analysis: CheckedContent, model: str, texts: list[str], out: TextIO | None = None) -> Path:
    """Embed the texts the cache of ``model`` lacks, through the endpoint (explicit, announced)."""
    out = out or sys.stdout  # looked up at the call: a caller may have redirected it
    from generator.corpus.verdicts import text_hash
    from generator.llm import LLMClient, llm_settings
    from generator.selection.vectors import load_cache, save_cache

    settings = llm_settings(analysis.corpus.settings.extra)
    if model and model != settings.embeddings_model:
        settings = type(settings)(settings.base_url, settings.model, settings.api_key_env, settings.timeout,
                                  settings.max_retries, model)
    cache = load_cache(content, model)
    missing = sorted({t for t in texts if text_hash(t) not in cache})
    print(f"re-indexing {len(missing)} text(s) with the embeddings model {model!r} "
          f"(vectors of other models are kept apart, never mixed)", file=out)
    if missing:
        vectors, _provenance = LLMClient(settings).embed(missing)
        for text, vector in zip(missing, vectors, strict=True):  # embed() returns one per text
            cache[text_hash(text)] = [round(float(v), 6) for v in vector]
    return save_cache(content, model, cache)


def run_select(content: Path, wiki: str, threshold: float | None, oppositions: bool, out: TextIO | None = None,
               reindex_vectors: bool = False, *, jobs: int = 1, dry_run: bool = False,
               max_tokens: int | None = None) -> int:
    """Print the wiki's groups; with ``oppositions``, plan the pass and run it (up to
    ``jobs`` requests at once), recording each answer as it comes; ``dry_run``: print the
    plan and send nothing."""
    out = out or sys.stdout  # looked up at the call: a caller may have redirected it
    analysis = check_content(content)
    audit = analysis.articles.get(wiki)
    if audit is None or audit.kind is not NoteType.WIKI:
        raise CarnetError(f"{wiki!r} is not a wiki article of this content")
    quotes = {e.id: e.quote for n in analysis.corpus.notes.values() for e in n.extractions}
    setting = selection_threshold(analysis.corpus.settings.extra)
    chosen = threshold if threshold is not None else setting
    rule = ThresholdRule.COMMAND if threshold is not None else None
    from generator.selection.vectors import embeddings_settings, load_cache
    provider, model = embeddings_settings(analysis.corpus.settings.extra)
    if reindex_vectors:
        if provider != "endpoint":
            raise CarnetError("--reindex needs 'embeddings: {provider: endpoint, model: …}' in carnet.yaml")
        path = reindex(content, analysis, model, [quotes[i] for i in audit.perimeter_extractions or []], out)
        show(out, f"embeddings cached in {path}")
    cache = load_cache(content, model) if provider == "endpoint" else {}
    selection = select(analysis.corpus, audit.perimeter_extractions or [], chosen, provider, cache, rule)
    if selection.vectors == "tfidf-fallback":
        show(out, f"the cache of {model!r} lacks some texts: TF-IDF used instead (carnet select {wiki} --reindex)")
    show(out, f"{wiki}: {len(selection.order)} extractions, {len(selection.groups)} groups under the threshold "
              f"{selection.threshold:g} (single linkage, 0–100 scale); {threshold_origin(selection)}")
    largest = max((len(g.members) for g in selection.groups), default=0)
    chained = sum(g.chaining for g in selection.groups)
    show(out, f"largest group: {largest} extraction(s); groups of 3 or more: "
              f"{sum(len(g.members) >= 3 for g in selection.groups)}, {chained} of them flagged chaining")
    alone = sum(not g.compared for g in selection.groups)
    if alone:
        show(out, f"WARNING only the first {len(selection.order) - alone} extractions (by id) were compared: their "
                  f"close pairs reached the perimeter's cap ({pair_cap(len(selection.order))} pairs); the other "
                  f"{alone} are listed alone, marked 'not compared'. Narrow the wiki's perimeter to group them all")
    owner = {e.id: slug for slug, n in analysis.corpus.notes.items() for e in n.extractions}
    for number, group in enumerate(selection.groups, start=1):
        print(f"\ngroup {number} ({len(group.members)})" + (f": diameter {group.diameter:g}, "
              f"{group.beyond_share:.0%} of member pairs beyond the threshold" if len(group.members) >= 3 else ""),
              file=out)
        if group.chaining:
            shown = [f"{owner.get(b, '?')}: {few_words(quotes[b])}" for b in group.bridges[:BRIDGES_SHOWN]]
            more = len(group.bridges) - len(shown)
            show(out, "  WARNING chaining: members are together through a path; it runs through "
                      + ("; ".join(shown) if shown else "several members")
                      + (f"; and {more} more (all listed below)" if more > 0 else ""))
        edges = {e.member: e for e in group.edges}
        for member in group.members:
            edge = edges.get(member)
            why = f"  (joined at {edge.distance:g} from {edge.via}, under {selection.threshold:g})" if edge else ""
            why = why if group.compared else "  (not compared: the perimeter's cap on pairs was reached)"
            show(out, f"  - {member}: {quotes[member][:70]!r}{why}")
    erased, lost = selection.central_erased
    print(f"\nrepresenting each group by its central member would erase {erased} of {len(selection.order)} "
          f"extractions and {lost} disagreeing comments", file=out)
    refused: list[RefusedOpposition] = []
    failed: list[str] = []
    if oppositions:
        done = record_oppositions(content, analysis, wiki, audit.perimeter_extractions or [], quotes, jobs=jobs,
                                  dry_run=dry_run, max_tokens=max_tokens)
        if not isinstance(done, RecordedPass):  # a dry run: the plan
            for line in done.lines():
                show(out, line)
            print("dry run: nothing was sent", file=sys.stderr)
            return EXIT_OK
        refused, failed = done.refused, done.failed
        kept_note = f"; the {done.kept} pair(s) already recorded are kept as they were" if done.kept else ""
        print(f"{done.added} opposition(s) recorded in {done.path}{kept_note}" if done.added or done.made else
              f"no new opposition found: {done.path} is left as it was{kept_note}", file=out)
        examined = ", ".join(done.examined[:20]) + (f" and {len(done.examined) - 20} more" if len(done.examined) > 20
                                                     else "")
        print(f"examined by this run: {len(done.examined)} of the pass's {done.total} request(s)"
              + (f" (pairs of chunks {examined})" if done.examined and done.total > 1 else "")
              + (f"; {done.skipped} answered by an earlier run" if done.skipped else ""), file=out)
        for item in refused:
            show(out, f"  refused: {item.describe()}")
        for line in failed:
            show(out, f"  {line}")
        if refused:
            show(out, f"  {len(refused)} item(s) of the model's answers were refused: the pass is incomplete; "
                      "run it again (or record those pairs by hand)")
        if failed:
            show(out, f"  {len(failed)} request(s) failed or were not sent: what the others found is recorded; run "
                      "the same command again to send only those")
    recorded = check_content(content).corpus.oppositions.get(wiki) if oppositions else analysis.corpus.oppositions.get(wiki)
    if recorded is None:
        print("oppositions: not run for this wiki (carnet select WIKI --oppositions, with an endpoint)", file=out)
    else:
        show(out, f"oppositions ({recorded.provenance.get('method')}):")
        for item in recorded.oppositions:
            show(out, f"  - {item.question}: {item.a} ⟷ {item.b}")

    return EXIT_MODEL if refused or failed else EXIT_OK  # the pass is incomplete


BRIDGES_SHOWN = 8
"""Members a chaining warning names (by note and first words); the others are in the listing."""


def few_words(quote: str, words: int = 8) -> str:
    """The first ``words`` words of a quote, to name an extraction to a person."""
    parts = quote.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def threshold_origin(selection: Selection) -> str:
    """Where the threshold comes from, as the command says it."""
    if selection.rule is ThresholdRule.COMMAND:
        return "given with --threshold"
    if selection.rule is ThresholdRule.SETTING:
        return "selection.threshold in carnet.yaml"
    return (f"chosen for this perimeter by the automatic rule: the largest threshold, at most {CEILING:g}, at "
            "which no group of three or more has more than a third of its member pairs beyond it "
            "(set selection.threshold in carnet.yaml to fix one)")


@dataclass(frozen=True)
class RecordedPass:
    """What ``select --oppositions`` recorded.

    Attributes:
        path: the wiki's oppositions file.
        added: pairs written by this pass; kept: pairs recorded before, left as they were.
        made: whether this pass made the file.
        refused: the items of the answers refused (:class:`RefusedOpposition`).
        failed: the requests that failed or were not sent (a line each).
        examined: the requests answered by this run, as "chunks a×b"; skipped: those an
            earlier run answered, not sent again; total: the requests of the pass.
    """

    path: Path
    added: int
    kept: int
    made: bool
    refused: list[RefusedOpposition]
    failed: list[str] = field(default_factory=list)
    examined: list[str] = field(default_factory=list)
    skipped: int = 0
    total: int = 0


def oppositions_plan(wiki: str, items: list[tuple[str, str]], client: LLMClient, prompt: Prompt, limits: Limits,
                     skip: Collection[str]) -> tuple[Plan, int, int]:
    """The requests of the pass not answered yet, the characters of extractions a request
    may hold (two chunks, from the model's context), and how many requests the whole pass has."""
    from generator.llm.plan import Plan, PlannedRequest
    from generator.selection.oppositions import (
        MAX_PAIRS_PER_REQUEST,
        completion_tokens,
        numbered_requests,
        request_key,
    )

    completion = completion_tokens([("", "")] * MAX_PAIRS_PER_REQUEST)
    frame = client.request_characters(prompt, extractions=[])
    room = limits.room(completion) - frame
    if room < 400:
        raise CarnetError(f"the oppositions prompt alone ({frame:,} characters) leaves no room for extractions in the "
                          f"model's context of {limits.context_tokens:,} tokens; say a larger one with "
                          "llm.context_tokens in carnet.yaml")
    planned = numbered_requests(items, room)
    sent = [(chunks_, batch) for chunks_, batch in planned if request_key(prompt.version, batch) not in skip]
    notes = []
    if len(planned) > 1:
        count = max(max(c) for c, _b in planned)
        notes.append(f"the perimeter ({len(items):,} extractions) does not fit one request: {count} chunks, sent two "
                     f"by two ({len(planned):,} pairs of chunks), so every pair of extractions is seen once")
    if len(sent) < len(planned):
        notes.append(f"{len(planned) - len(sent):,} of the {len(planned):,} requests were answered by an earlier run "
                     "(recorded under 'examined'): not sent again")
    return Plan(f"carnet select {wiki} --oppositions", tuple(
        PlannedRequest(f"chunks {'×'.join(map(str, chunks_))}: {len(batch)} extractions",
                       client.request_characters(prompt, extractions=[{"id": i, "quote": q} for i, q in batch]),
                       completion_tokens(batch)) for chunks_, batch in sent), limits, tuple(notes)), room, len(planned)


def record_oppositions(content: Path, analysis: CheckedContent, wiki: str, ids: list[str],
                       quotes: dict[str, str], *, jobs: int = 1, dry_run: bool = False,
                       max_tokens: int | None = None) -> RecordedPass | Plan:
    """Plan the pass, then run it (up to ``jobs`` requests at once), recording each answer
    as it comes: the new pairs (a new file when the wiki has none; else appended beside
    the recorded ones, in the file that holds them, each with its own provenance — a pair
    a person or an earlier pass recorded is never replaced or dropped), and the request
    under ``examined``, so a pass that stopped resumes where it was. ``dry_run``: the plan."""
    from generator.llm import LLMClient, llm_settings
    from generator.llm.plan import limits_from
    from generator.llm.prompts import load_prompt
    from generator.selection.oppositions import Answered, find_oppositions

    extra = analysis.corpus.settings.extra
    limits = limits_from(extra, max_tokens)
    client = LLMClient(llm_settings(extra), limits=limits)
    prompt = load_prompt("find_oppositions", analysis.corpus.settings.language)
    items = [(i, quotes[i]) for i in sorted(ids)]
    recorded = analysis.corpus.oppositions.get(wiki)
    skip = {e.key for e in recorded.examined} if recorded is not None else set()
    plan, room, total = oppositions_plan(wiki, items, client, prompt, limits, skip)
    if dry_run:
        return plan
    plan.check()
    command = f"carnet select {wiki} --oppositions"
    rel = recorded.file if recorded is not None else f"oppositions/{wiki}.yaml"
    if recorded is None and (content / rel).exists():
        raise CarnetError(f"{rel} exists but does not load as this wiki's oppositions (run 'carnet check'); "
                          "nothing was written")
    exists = recorded is not None  # the file: made by the first answer when the wiki has none
    added = 0
    examined: list[str] = []

    def record(answer: Answered) -> None:
        nonlocal exists, added
        own = {key: value for key, value in answer.provenance.items() if key != "usage"}
        entry = {"request": answer.key, "chunks": list(answer.chunks), "of": total,
                 "provenance": {key: own[key] for key in ("model", "date") if key in own}
                 | ({"usage": dict(answer.provenance["usage"])} if answer.provenance.get("usage") else {})}
        if not exists:
            data_record = {"wiki": wiki, "provenance": own,
                           "oppositions": [{"a": o.a, "b": o.b, "question": o.question} for o in answer.found],
                           "examined": [entry]}
            data = yaml.safe_dump(data_record, allow_unicode=True, sort_keys=False, width=100).encode("utf-8")
            write_content(content, command, PlannedWrite(rel, data, data_record))
            exists = True
        else:
            if answer.found:
                items_ = [{"a": o.a, "b": o.b, "question": o.question, "provenance": own} for o in answer.found]
                made = ", ".join(f"{key} {own[key]}" for key in ("method", "model", "date") if own.get(key))
                write_content(content, command, appended(content, rel, "oppositions", items_,
                                                         comment=f"added by '{command}' ({made})"))
            # after the pairs: a kill between the two sends the request again, its pairs known
            write_content(content, command, appended(content, rel, "examined", [entry]))
        added += len(answer.found)
        examined.append("×".join(map(str, answer.chunks)))

    known = [(o.a, o.b) for o in recorded.oppositions] if recorded is not None else []
    passed = find_oppositions(client, prompt, items, room, jobs=jobs, skip=skip, known=known, on_answer=record)
    return RecordedPass(content / rel, added, len(recorded.oppositions) if recorded else 0,
                        recorded is None and exists, passed.refused, passed.failed, examined, passed.skipped,
                        passed.requests)
