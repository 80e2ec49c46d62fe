"""Proposals: machine-made or hand-written changes waiting for review, under
``content/proposals/<kind>/<target>/<id>.yaml`` (kind ``sections`` for wiki section
operations). Parsed here; applied by ``carnet apply``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.corpus.fields import Fields
from generator.corpus.source import YamlList
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
