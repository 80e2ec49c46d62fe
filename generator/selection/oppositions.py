"""Oppositions: extractions taking opposite positions on one question, found by one
pass over the whole perimeter (never group by group), through the LLM seam.

When the perimeter does not fit in one request (``budget`` characters), it is cut into
chunks and every pair of chunks is sent, so every pair of extractions is seen once —
never silently a subset. Results go to ``content/oppositions/<wiki>.yaml`` with their
provenance; a page without them says the pass was not run.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

from generator.corpus.fields import Fields
from generator.corpus.source import YamlList
from generator.problems import Problem

BUDGET = 12000
SCHEMA = {"type": "object", "required": ["oppositions"],
          "properties": {"oppositions": {"type": "array", "items": {
              "type": "object", "required": ["a", "b", "question"],
              "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "question": {"type": "string"}}}}}}


@dataclass(frozen=True)
class Opposition:
    a: str
    b: str
    question: str


@dataclass(frozen=True)
class OppositionRecord:
    """The recorded pass of one wiki: its oppositions and how they were found."""

    wiki: str
    oppositions: tuple[Opposition, ...]
    provenance: dict[str, Any]
    file: str


def chunks(items: list[tuple[str, str]], budget: int = BUDGET) -> list[list[tuple[str, str]]]:
    """Consecutive chunks of (id, quote) holding at most half the budget each, so any two
    fit in one request."""
    result: list[list[tuple[str, str]]] = [[]]
    size = 0
    for item in items:
        length = len(item[1]) + len(item[0]) + 8
        if result[-1] and size + length > budget // 2:
            result.append([])
            size = 0
        result[-1].append(item)
        size += length
    return result


def requests(items: list[tuple[str, str]], budget: int = BUDGET) -> list[list[tuple[str, str]]]:
    """What to send: the whole perimeter at once when it fits, else every pair of chunks."""
    if sum(len(q) + len(i) + 8 for i, q in items) <= budget:
        return [items]
    parts = chunks(items, budget)
    return [a + b for a, b in combinations(parts, 2)] if len(parts) > 1 else parts


def find_oppositions(client, prompt, items: list[tuple[str, str]], budget: int = BUDGET):
    """Run the pass; returns (oppositions, provenance of the last request, requests sent).
    Any failure raises: nothing is recorded from a partial pass."""
    known = {i for i, _q in items}
    found: dict[tuple[str, str], Opposition] = {}
    provenance: dict[str, Any] = {}
    usage: dict[str, int] = {}
    batches = requests(items, budget)
    for batch in batches:
        data, record = client.chat_json(prompt, SCHEMA, extractions=[{"id": i, "quote": q} for i, q in batch])
        provenance = record.as_record()
        for key, value in record.usage.items():
            usage[key] = usage.get(key, 0) + value
        for item in data["oppositions"]:
            a, b = sorted((item["a"].strip(), item["b"].strip()))
            if a in known and b in known and a != b:
                found.setdefault((a, b), Opposition(a, b, item["question"].strip()))
    provenance["usage"] = usage
    provenance["requests"] = len(batches)
    return [found[k] for k in sorted(found)], provenance, len(batches)


def parse_oppositions(rel: str, value: Any, problems: list[Problem]) -> OppositionRecord | None:
    f = Fields(value, rel, "the oppositions file", problems)
    f.check_known(("wiki", "provenance", "oppositions"))
    provenance = f.data.get("provenance")
    if not isinstance(provenance, dict) or provenance.get("method") not in ("llm", "scripted", "human"):
        f.error("provenance", "missing-field", "the oppositions do not say how they were found",
                "Add 'provenance: {method: …}' (llm, scripted or human).")
        return None
    items = f.data.get("oppositions")
    found = []
    if isinstance(items, YamlList):
        for index, item in enumerate(items):
            o = Fields(item, rel, f"opposition {index + 1}", problems, line=items.line_of(index))
            o.check_known(("a", "b", "question"))
            found.append(Opposition(o.text("a"), o.text("b"), o.text("question", "")))
    return OppositionRecord(f.text("wiki"), tuple(found), dict(provenance), rel)
