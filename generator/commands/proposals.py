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
import sys
from pathlib import Path
from typing import Any, TextIO

from generator.commands.proposal_files import (
    ProposalError,
    applied_record,
    dump_yaml,
    file_hash,
    free_proposal_path,
    load_proposal,
)
from generator.corpus.model import Note, NoteType
from generator.corpus.proposal import ExtractionProposal, Operation, Proposal
from generator.extracting.plan import PassageDecision
from generator.files import read_text_file
from generator.pipeline import CheckedContent, check_content
from generator.synthesis.audit import DiscardedItem
from generator.synthesis.sections import OperationResult, Sources, apply_operations, sections
from generator.terminal import visible
from generator.writes import ContentChange, PlannedWrite, read_back, write_content

SECTION_HEADING = "Pièces à intégrer"
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


def propose(content: Path, slug: str, provider: str = "extractive", max_operations: int = MAX_OPERATIONS,
            today: dt.date | None = None) -> Path:
    """Write a proposal for ``slug``; returns its path."""
    analysis = check_content(content)
    note = _wiki(analysis, slug)
    audit = analysis.articles[slug]
    today = today or dt.date.today()
    uncited = list(audit.discarded or [])[: max(1, max_operations) * 3]
    if provider == "extractive":
        operations, provenance = _extractive(analysis, slug, uncited, max_operations), {
            "method": "scripted", "generator": "carnet propose --provider extractive", "date": today.isoformat()}
    elif provider == "llm":
        operations, provenance = _from_model(analysis, slug, uncited, max_operations, today)
    else:
        raise ProposalError(f"unknown provider {provider!r}: use extractive or llm")
    record: dict[str, Any] = {
        "id": f"{today.isoformat()}-{provider}",
        "kind": "sections",
        "target": slug,
        "article_sha256": file_hash(content / note.source.file),
        "perimeter": list(audit.perimeter_extractions or []),
        "provenance": provenance,
        "operations": [{"op": o.op, "heading": o.heading, "after_heading": o.after_heading, "content": o.content}
                       for o in operations],
    }
    record["id"], path = free_proposal_path(content / "proposals" / "sections" / slug, record["id"])
    rel = path.relative_to(content).as_posix()
    write_content(content, f"carnet propose {slug}", PlannedWrite(rel, dump_yaml(record), record))
    return path


def _extractive(analysis: CheckedContent, slug: str, uncited: list[DiscardedItem], max_operations: int) -> list[Operation]:
    """Offline and deterministic: the most debated uncited pieces, quoted verbatim with
    their markers, in a section of their own."""
    if not uncited:
        return [Operation("NoChange")]
    lines = [f"- « {' '.join(item.quote.split())} » [[ext:{item.extraction}]]"
             for item in uncited[:max_operations] if item.exists]
    body = analysis.corpus.notes[slug].body
    headings = [s.heading for s in sections(body)]
    if SECTION_HEADING in headings:
        return [Operation("AppendToSection", heading=SECTION_HEADING, content="\n".join(lines))]
    after = next((h for h in reversed(headings) if h is not None), "")
    return [Operation("InsertSection", heading=SECTION_HEADING, after_heading=after, content="\n".join(lines))]


OPERATIONS_SCHEMA = {
    "type": "object", "required": ["operations"],
    "properties": {"operations": {"type": "array", "items": {
        "type": "object", "required": ["op", "heading", "after_heading", "content"],
        "properties": {"op": {"type": "string", "enum": ["NoChange", "AppendToSection", "ReplaceSection",
                                                         "InsertSection"]},
                       "heading": {"type": "string"}, "after_heading": {"type": "string"},
                       "content": {"type": "string"}}}}},
}


def _from_model(analysis: CheckedContent, slug: str, uncited: list[DiscardedItem], max_operations: int,
                today: dt.date) -> tuple[list[Operation], dict[str, Any]]:
    from generator.llm import LLMAnswerError, LLMClient, llm_settings
    from generator.llm.prompts import load_prompt
    from generator.llm.schema import answer_tokens, bounded, prompt_examples

    note = analysis.corpus.notes[slug]
    lines = note.body.split("\n")
    context_sections = [{"heading": s.heading, "text": "\n".join(lines[s.content_start:s.end]).strip()}
                        for s in sections(note.body)]
    evidence: list[dict[str, object]] = []
    for item in uncited:
        source = analysis.corpus.notes.get(item.note)
        evidence.append({"id": item.extraction, "note": source.title if source else item.note,
                         "date": source.date.isoformat() if source and source.date else "", "quote": item.quote,
                         "comments": item.comments, "disagreements": item.disagreements})
    groups = evidence_groups(analysis, slug, [item.extraction for item in uncited])
    client = LLMClient(llm_settings(analysis.corpus.settings.extra), today=today)
    prompt = load_prompt("propose_sections")
    constraint = bounded(OPERATIONS_SCHEMA, "operations", max_items=max(1, max_operations), min_items=1)
    data, provenance = client.chat_json(prompt, OPERATIONS_SCHEMA, constraint=constraint, max_tokens=answer_tokens(max(1, max_operations),
                                                                                 OPERATION_TOKENS),
                                        title=note.title, sections=context_sections, evidence=evidence,
                                        groups=groups, max_operations=max_operations)
    faults = operation_faults(data["operations"], max_operations, prompt_examples(prompt.text))
    if faults:  # the operations make one edit of the article: a bad one refuses the answer
        raise LLMAnswerError("the model's operations are refused, nothing was written: " + "; ".join(faults),
                             provenance.usage)
    operations = [Operation(o["op"], o["heading"], o["after_heading"], o["content"]) for o in data["operations"]]
    return operations, provenance.as_record()


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
        if op == "NoChange":
            continue
        if placeholder(item["content"], examples.get("content", ())):
            faults.append(f"operation {number} ({op}): its content is a placeholder ({shown(item['content'])})")
        for name in ("heading", "after_heading"):
            said = item[name]
            if (said or (name == "heading" and op == "InsertSection")) and placeholder(said, examples.get(name, ())):
                faults.append(f"operation {number} ({op}): its {name} is a placeholder ({shown(said)})")
    return faults


def evidence_groups(analysis: CheckedContent, slug: str, chosen: list[str]) -> list[dict[str, Any]]:
    """The groups holding the chosen evidence: every uncited member in full, the cited
    ones by id and first line — a group structures the context, never reduces it, and
    only groups the update touches are sent (the cost follows the diff)."""
    from generator.selection.select import select, selection_threshold

    audit = analysis.articles[slug]
    cited = {link.extraction for link in audit.links if link.marker.kind == "ext" and not link.broken}
    quotes = {e.id: e.quote for n in analysis.corpus.notes.values() for e in n.extractions}
    selection = select(analysis.corpus, audit.perimeter_extractions or [],
                       selection_threshold(analysis.corpus.settings.extra))
    wanted = set(chosen)
    groups = []
    for number, group in enumerate(selection.groups, start=1):
        if not wanted & set(group.members):
            continue
        groups.append({"number": number, "members": [
            {"id": m, "cited": m in cited,
             "text": quotes[m].strip().split("\n")[0] if m in cited else " ".join(quotes[m].split())}
            for m in group.members]})
    return groups


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
        where = op.heading if op.op != "InsertSection" else f"{op.heading} (after {op.after_heading or 'the lead'})"
        verdict = paint("accepted", "32") if result.accepted else paint(f"rejected: {result.reason}", "31")
        print(f"\n{visible(f'[{result.index + 1}] {op.op} {where!r}')}: {verdict}", file=out)
        if result.accepted and op.op != "NoChange":
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
