"""Proposals: machine-made or hand-written changes waiting for review, under
``content/proposals/<kind>/<target>/<id>.yaml``: kind ``sections`` for wiki section
operations, ``extractions`` for passages of a note proposed by ``carnet analyse``.
Parsed here; applied by ``carnet apply``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from generator.corpus.fields import Fields
from generator.corpus.source import YamlList, YamlMap
from generator.problems import Problem
from generator.text import provenance_shown

METHODS = ("llm", "scripted", "human")


class Op(StrEnum):
    """The section operations a proposal may hold (applied by :mod:`generator.synthesis.sections`),
    spelled as the proposal's YAML writes them."""

    NO_CHANGE = "NoChange"
    APPEND = "AppendToSection"
    REPLACE = "ReplaceSection"
    INSERT = "InsertSection"


OPERATIONS = tuple(Op)


@dataclass(frozen=True)
class Operation:
    """One proposed change. Fields an operation does not use are empty strings."""

    op: Op
    heading: str = ""
    after_heading: str = ""
    content: str = ""
    request: int = 0  # the request of the run that proposed it (1-based; 0: not from a model's run)


@dataclass(frozen=True)
class OperationDecision:
    """What ``carnet apply`` decided about one operation."""

    index: int
    decision: str  # accepted, rejected, skipped
    reason: str = ""
    removed: str = ""
    reason_code: str = ""  # the reason's code, for a page to word it (see generator.synthesis.sections.Reason)
    reason_values: tuple[tuple[str, str], ...] = ()


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


def _target(f: Fields, parts: list[str]) -> str:
    """The ``target`` field, which must name the folder the proposal lives in."""
    target = f.text("target", parts[2] if len(parts) > 3 else "")
    if len(parts) > 3 and target != parts[2]:
        f.error("target", "invalid-value", f"the proposal targets {target!r} but lives under {parts[2]!r}",
                f"Move it to proposals/{parts[1]}/{target}/ or fix 'target'.")
    return target


def _provenance(f: Fields) -> dict[str, Any]:
    provenance = f.data.get("provenance")
    if not isinstance(provenance, dict) or provenance.get("method") not in METHODS:
        f.error("provenance", "missing-field", "the proposal does not say how it was made",
                f"Add 'provenance: {{method: …}}' with one of: {', '.join(METHODS)}.")
        return {"method": "unknown"}
    return provenance_shown(provenance)


def _raw_text(f: Fields, key: str) -> str:
    """A string field as written (not stripped: a removed section keeps its lines)."""
    value = f.data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        f.error(key, "wrong-type", f"{key!r} of {f.what} must be a string", f"Write '{key}' as a string.")
        return ""
    return value


def _reason_values(r: Fields) -> tuple[tuple[str, str], ...]:
    """``reason_values``: the names and values the reason's wording takes (strings)."""
    raw = r.data.get("reason_values")
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        r.error("reason_values", "wrong-type", f"'reason_values' of {r.what} must map names to strings",
                "Let 'carnet apply' write it, or remove it (the English 'reason' is then shown).")
        return ()
    return tuple(sorted((str(k), str(v)) for k, v in raw.items()))


def _decisions(f: Fields) -> tuple[str, tuple[OperationDecision, ...]]:
    """``applied:``, written by ``carnet apply``: its date ("" while pending) and one
    decision per operation or passage. A record that is there but unreadable is
    reported, and never taken for a pending proposal."""
    if "applied" not in f.data:
        return "", ()
    a = Fields(f.data["applied"], f.file, "the 'applied' record", f.problems, line=f.line_of("applied"))
    if not isinstance(f.data["applied"], YamlMap):
        if f.data["applied"] is None:
            f.error("applied", "wrong-type", "'applied' of the proposal is empty",
                    "Remove 'applied:' to apply the proposal again, or let 'carnet apply' write it.")
        return "?", ()
    a.check_known(("date", "results"))
    date = a.date("date", required=True)
    decisions = []
    for r in _entries(a, "results", "result", ("index", "decision", "id", "reason", "reason_code", "reason_values",
                                               "removed"),
                      "Let 'carnet apply' write one '- {index: …, decision: …}' per item."):
        index = r.data.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            r.error("index" if "index" in r.data else None, "wrong-type",
                    f"'index' of {r.what} must be a whole number from 0, not {index!r}",
                    "Write the 0-based position of the operation or passage.")
            continue
        decisions.append(OperationDecision(index, r.text("decision"), _raw_text(r, "reason"),
                                           _raw_text(r, "removed"), r.text("reason_code", ""), _reason_values(r)))
    return date.isoformat() if date else "?", tuple(decisions)


def parse_proposal(rel: str, value: Any, problems: list[Problem]) -> Proposal | None:
    parts = rel.split("/")
    f = Fields(value, rel, "the proposal", problems)
    f.check_known(("id", "kind", "target", "article_sha256", "perimeter", "provenance", "operations", "applied"))
    target = _target(f, parts)
    provenance = _provenance(f)
    operations = []
    raw = f.data.get("operations")
    if not isinstance(raw, YamlList):
        f.error("operations", "wrong-type", "'operations' must be a list", "Write one '- op: …' per operation.")
        raw = YamlList()
    for index, item in enumerate(raw):
        o = Fields(item, rel, f"operation {index + 1}", problems, line=raw.line_of(index))
        o.check_known(("op", "heading", "after_heading", "content", "request"))
        op = o.text("op")
        if op and op not in OPERATIONS:
            o.error("op", "invalid-value", f"unknown operation {op!r}", f"Use one of: {', '.join(OPERATIONS)}.")
        request = o.data.get("request", 0)
        if isinstance(request, bool) or not isinstance(request, int) or request < 0:
            o.error("request", "wrong-type", f"'request' must be the number of the request that proposed it, not "
                    f"{request!r}", "Leave the number 'carnet propose' wrote, or remove the line.")
            request = 0
        texts = o.text("heading", ""), o.text("after_heading", ""), o.text("content", "")
        if op in OPERATIONS:  # an unknown one is reported above, and review and apply refuse the file
            operations.append(Operation(Op(op), *texts, request))
    applied_on, decisions = _decisions(f)
    return Proposal(parts[-1][: -len(".yaml")], f.text("kind", parts[1] if len(parts) > 1 else "sections"), target,
                    rel, f.text("article_sha256", ""), tuple(f.text_list("perimeter")), provenance,
                    tuple(operations), applied_on, decisions)


@dataclass(frozen=True)
class ProposedPassage:
    """One passage of an extraction proposal, as recorded (the note's own text).

    Attributes:
        categories: axis → categories suggested for the note in the proposal's notebook.
        refused_categories: (axis, category, reason) the analysis refused.
    """

    quote: str
    prefix: str
    occurrence: int | None
    kind: str
    categories: dict[str, tuple[str, ...]]
    refused_categories: tuple[tuple[str, str, str], ...]


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
        applied_on: date of ``carnet apply`` ("" while pending); the decisions it
            recorded, one per passage, are read back only for the ids they gave.
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

    @property
    def pending(self) -> bool:
        return not self.applied_on


def _categories(p: Fields) -> dict[str, tuple[str, ...]]:
    raw = p.data.get("categories")
    if raw is None:
        return {}
    if not isinstance(raw, YamlMap) or not all(isinstance(v, list) for v in raw.values()):
        p.error("categories", "wrong-type", f"'categories' of {p.what} must map each axis to a list",
                "Write 'categories: {axis: [Category]}'.")
        return {}
    return {str(axis): tuple(str(c) for c in values) for axis, values in raw.items()}


def _entries(f: Fields, key: str, what: str, fields: tuple[str, ...], hint: str) -> list[Fields]:
    """Each mapping of the list under ``key``; anything else is reported at its line."""
    items = f.items(key, hint)
    entries = []
    for number, item in enumerate(items):
        e = Fields(item, f.file, f"{what} {number + 1} of {f.what}", f.problems, line=items.line_of(number))
        if not isinstance(item, YamlMap):
            if item is None:
                e.error(None, "wrong-type", f"{e.what} is empty", "Remove the empty item.")
            continue
        e.check_known(fields)
        entries.append(e)
    return entries


def parse_extraction_proposal(rel: str, value: Any, problems: list[Problem]) -> ExtractionProposal | None:
    parts = rel.split("/")
    f = Fields(value, rel, "the proposal", problems)
    f.check_known(("id", "kind", "target", "notebook", "note_sha256", "provenance", "sent", "passages",
                   "left_out", "applied"))
    target = _target(f, parts)
    provenance = _provenance(f)
    raw = f.items("passages", "Write one '- quote: …' per passage.")
    passages = []
    for index, item in enumerate(raw):
        p = Fields(item, rel, f"passage {index + 1}", problems, line=raw.line_of(index))
        p.check_known(("quote", "prefix", "occurrence", "kind", "categories", "refused_categories"))
        quote = p.text("quote", hint="Each passage needs the note's text under 'quote:'.")
        refused = tuple((r.text("axis", ""), r.text("category"), r.text("reason", ""))
                        for r in _entries(p, "refused_categories", "refused category",
                                          ("axis", "category", "reason"),
                                          "Write one '- {axis: …, category: …, reason: …}' per category."))
        passages.append(ProposedPassage(quote, p.text("prefix", ""), p.integer("occurrence"),
                                        p.text("kind", "passage"), _categories(p), refused))
    left_out = tuple((e.text("quote", ""), e.text("reason", ""))
                     for e in _entries(f, "left_out", "left-out passage", ("quote", "reason"),
                                       "Write one '- {quote: …, reason: …}' per passage left out."))
    sent: dict[str, Any] = {}
    if f.data.get("sent") is not None:
        s = Fields(f.data["sent"], rel, "'sent' of the proposal", problems, line=f.line_of("sent"))
        sent = dict(s.data)
    applied_on, _ = _decisions(f)  # the ids they gave are read by analyse (taken ids)
    return ExtractionProposal(parts[-1][: -len(".yaml")], f.text("kind", "extractions"), target, rel,
                              f.text("notebook", ""), f.text("note_sha256", ""), provenance, sent,
                              tuple(passages), left_out, applied_on)
