"""Proposals: machine-made or hand-written changes waiting for review, under
``content/proposals/<kind>/<target>/<id>.yaml``: kind ``sections`` for wiki section
operations, ``extractions`` for passages of a note proposed by ``carnet analyse``.
Parsed here; applied by ``carnet apply``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.corpus.fields import Fields
from generator.corpus.source import YamlList, YamlMap
from generator.problems import Problem
from generator.synthesis.sections import OPERATIONS, Operation

METHODS = ("llm", "scripted", "human")


@dataclass(frozen=True)
class OperationDecision:
    """What ``carnet apply`` decided about one operation."""

    index: int
    decision: str  # accepted, rejected, skipped
    reason: str = ""
    removed: str = ""


@dataclass(frozen=True)
class Proposal:
    """Attributes:
        id: the file's stem.
        target: slug of the wiki the operations apply to.
        article_sha256: hash of the article's file when the proposal was made (stale check).
        perimeter: the evidence ids the proposal was made from.
        provenance: ``method`` (llm, scripted, human) and, for a model, model, endpoint,
            prompt version, date and usage.
        applied_on: date of ``carnet apply`` ("" while pending).
        decisions: one per operation once applied.
    """

    id: str
    kind: str
    target: str
    file: str
    article_sha256: str
    perimeter: tuple[str, ...]
    provenance: dict[str, Any]
    operations: tuple[Operation, ...]
    applied_on: str
    decisions: tuple[OperationDecision, ...]

    @property
    def pending(self) -> bool:
        return not self.applied_on


def parse_proposal(rel: str, value: Any, problems: list[Problem]) -> Proposal | None:
    parts = rel.split("/")
    f = Fields(value, rel, "the proposal", problems)
    f.check_known(("id", "kind", "target", "article_sha256", "perimeter", "provenance", "operations", "applied"))
    target = f.text("target", parts[2] if len(parts) > 3 else "")
    if len(parts) > 3 and target != parts[2]:
        f.error("target", "invalid-value", f"the proposal targets {target!r} but lives under {parts[2]!r}",
                f"Move it to proposals/{parts[1]}/{target}/ or fix 'target'.")
    provenance = f.data.get("provenance")
    if not isinstance(provenance, dict) or provenance.get("method") not in METHODS:
        f.error("provenance", "missing-field", "the proposal does not say how it was made",
                f"Add 'provenance: {{method: …}}' with one of: {', '.join(METHODS)}.")
        provenance = {"method": "unknown"}
    operations = []
    raw = f.data.get("operations")
    if not isinstance(raw, YamlList):
        f.error("operations", "wrong-type", "'operations' must be a list", "Write one '- op: …' per operation.")
        raw = []
    for index, item in enumerate(raw):
        o = Fields(item, rel, f"operation {index + 1}", problems, line=raw.line_of(index))
        o.check_known(("op", "heading", "after_heading", "content"))
        op = o.text("op")
        if op and op not in OPERATIONS:
            o.error("op", "invalid-value", f"unknown operation {op!r}", f"Use one of: {', '.join(OPERATIONS)}.")
        operations.append(Operation(op, o.text("heading", ""), o.text("after_heading", ""), o.text("content", "")))
    decisions = []
    applied = f.data.get("applied")
    applied_on = ""
    if isinstance(applied, dict):
        applied_on = str(applied.get("date", ""))
        for entry in applied.get("results") or []:
            if isinstance(entry, dict):
                decisions.append(OperationDecision(int(entry.get("index", 0)), str(entry.get("decision", "")),
                                                   str(entry.get("reason", "") or ""),
                                                   str(entry.get("removed", "") or "")))
    return Proposal(parts[-1][: -len(".yaml")], f.text("kind", parts[1] if len(parts) > 1 else "sections"), target,
                    rel, f.text("article_sha256", ""), tuple(f.text_list("perimeter")), dict(provenance),
                    tuple(operations), applied_on, tuple(decisions))


@dataclass(frozen=True)
class ProposedPassage:
    """One passage of an extraction proposal, as recorded (the note's own text).

    Attributes:
        line: where it is written in the proposal file.
        categories: axis → categories suggested for the note in the proposal's notebook.
        refused_categories: (axis, category, reason) the analysis refused.
    """

    quote: str
    prefix: str
    occurrence: int | None
    kind: str
    categories: dict[str, tuple[str, ...]]
    refused_categories: tuple[tuple[str, str, str], ...]
    line: int


@dataclass(frozen=True)
class ExtractionProposal:
    """Passages of a note proposed as extractions (``proposals/extractions/<note>/``).

    Attributes:
        target: the note's slug.
        notebook: the notebook whose guide and axes the analysis used ("" for none).
        note_sha256: hash of the note's file when analysed (review says when it changed;
            ``apply`` anchors each passage against the current text anyway).
        sent: how much of the note was sent (elements, characters, share).
        left_out: (quote as the model wrote it, reason) for each passage not proposed.
        applied_on, decisions: as for section proposals, one decision per passage.
    """

    id: str
    kind: str
    target: str
    file: str
    notebook: str
    note_sha256: str
    provenance: dict[str, Any]
    sent: dict[str, Any]
    passages: tuple[ProposedPassage, ...]
    left_out: tuple[tuple[str, str], ...]
    applied_on: str
    decisions: tuple[OperationDecision, ...]

    @property
    def pending(self) -> bool:
        return not self.applied_on


def _decisions(applied: Any) -> tuple[str, tuple[OperationDecision, ...]]:
    decisions = []
    applied_on = ""
    if isinstance(applied, dict):
        applied_on = str(applied.get("date", ""))
        for entry in applied.get("results") or []:
            if isinstance(entry, dict):
                decisions.append(OperationDecision(int(entry.get("index", 0)), str(entry.get("decision", "")),
                                                   str(entry.get("reason", "") or ""),
                                                   str(entry.get("removed", "") or "")))
    return applied_on, tuple(decisions)


def _categories(p: Fields) -> dict[str, tuple[str, ...]]:
    raw = p.data.get("categories")
    if raw is None:
        return {}
    if not isinstance(raw, YamlMap) or not all(isinstance(v, list) for v in raw.values()):
        p.error("categories", "wrong-type", f"'categories' of {p.what} must map each axis to a list",
                "Write 'categories: {axis: [Category]}'.")
        return {}
    return {str(axis): tuple(str(c) for c in values) for axis, values in raw.items()}


def parse_extraction_proposal(rel: str, value: Any, problems: list[Problem]) -> ExtractionProposal | None:
    parts = rel.split("/")
    f = Fields(value, rel, "the proposal", problems)
    f.check_known(("id", "kind", "target", "notebook", "note_sha256", "provenance", "sent", "passages",
                   "left_out", "applied"))
    target = f.text("target", parts[2] if len(parts) > 3 else "")
    if len(parts) > 3 and target != parts[2]:
        f.error("target", "invalid-value", f"the proposal targets {target!r} but lives under {parts[2]!r}",
                f"Move it to proposals/extractions/{target}/ or fix 'target'.")
    provenance = f.data.get("provenance")
    if not isinstance(provenance, dict) or provenance.get("method") not in METHODS:
        f.error("provenance", "missing-field", "the proposal does not say how it was made",
                f"Add 'provenance: {{method: …}}' with one of: {', '.join(METHODS)}.")
        provenance = {"method": "unknown"}
    raw = f.data.get("passages")
    if raw is None:
        raw = YamlList()
    if not isinstance(raw, YamlList):
        f.error("passages", "wrong-type", "'passages' must be a list", "Write one '- quote: …' per passage.")
        raw = YamlList()
    passages = []
    for index, item in enumerate(raw):
        p = Fields(item, rel, f"passage {index + 1}", problems, line=raw.line_of(index))
        p.check_known(("quote", "prefix", "occurrence", "kind", "categories", "refused_categories"))
        quote = p.text("quote", hint="Each passage needs the note's text under 'quote:'.")
        refused = []
        for entry in p.data.get("refused_categories") or []:
            if isinstance(entry, dict):
                refused.append((str(entry.get("axis", "")), str(entry.get("category", "")),
                                str(entry.get("reason", ""))))
        passages.append(ProposedPassage(quote, p.text("prefix", ""), p.integer("occurrence"),
                                        p.text("kind", "passage"), _categories(p), tuple(refused), p.line))
    left_out = []
    for entry in f.data.get("left_out") or []:
        if isinstance(entry, dict):
            left_out.append((str(entry.get("quote", "")), str(entry.get("reason", ""))))
    sent = f.data.get("sent")
    applied_on, decisions = _decisions(f.data.get("applied"))
    return ExtractionProposal(parts[-1][: -len(".yaml")], f.text("kind", "extractions"), target, rel,
                              f.text("notebook", ""), f.text("note_sha256", ""), dict(provenance),
                              dict(sent) if isinstance(sent, dict) else {}, tuple(passages), tuple(left_out),
                              applied_on, decisions)
