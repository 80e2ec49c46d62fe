"""Front matter of wiki articles and directed syntheses: perimeter, recorded (frozen)
perimeter, adoption, status history, supersedes. Parsed into typed values; checks
that need the whole corpus live in :mod:`generator.synthesis`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from generator.corpus.fields import Fields
from generator.corpus.source import YamlList, YamlMap
from generator.problems import Problem

STATUSES = ("draft", "adopted")
"""Statuses written in a history; "superseded" is derived, never written."""


@dataclass(frozen=True)
class PerimeterSpec:
    """The notes an article covers: the ordinary notes of ``notebook`` having, on every
    listed axis, at least one listed category (OR within an axis, AND across axes)."""

    notebook: str
    categories: dict[str, tuple[str, ...]]
    line: int


@dataclass(frozen=True)
class FrozenExtraction:
    """An extraction as it was proposed to a synthesis: id, note, quote and its hash."""

    id: str
    note: str
    quote: str
    sha256: str


@dataclass(frozen=True)
class RecordedPerimeter:
    """What the synthesis was given, frozen in its file (at production or adoption)."""

    notes: tuple[str, ...]
    extractions: tuple[FrozenExtraction, ...]
    line: int


@dataclass(frozen=True)
class Adoption:
    """Who adopted the act, when, and the integrity hash of body + adoption block."""

    by: str
    date: dt.date
    hash: str
    line: int


@dataclass(frozen=True)
class StatusEntry:
    status: str
    date: dt.date | None
    line: int


@dataclass(frozen=True)
class ArticleSpec:
    """Attributes:
        perimeter: the perimeter's definition (``None``: never stated).
        recorded: the frozen perimeter of a synthesis (``None``: never recorded).
        adoption: for an adopted synthesis.
        history: the status history, oldest first (empty: a draft).
        supersedes: slug of the act this one replaces.
        raw: the front-matter values the integrity hash covers, as written.
    """

    perimeter: PerimeterSpec | None
    recorded: RecordedPerimeter | None
    adoption: Adoption | None
    history: tuple[StatusEntry, ...]
    supersedes: str | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def adopted(self) -> bool:
        return any(entry.status == "adopted" for entry in self.history)


def parse_article(f: Fields) -> ArticleSpec:
    return ArticleSpec(
        perimeter=_perimeter(f),
        recorded=_recorded(f),
        adoption=_adoption(f),
        history=_history(f),
        supersedes=f.text("supersedes", "") or None,
        raw={key: f.data[key] for key in ("perimeter", "proposed", "adoption") if key in f.data},
    )


def _perimeter(f: Fields) -> PerimeterSpec | None:
    raw = f.data.get("perimeter")
    if raw is None:
        return None
    p = Fields(raw, f.file, "the perimeter", f.problems, line=f.line_of("perimeter"))
    p.check_known(("notebook", "categories"))
    notebook = p.text("notebook", hint="Name the notebook whose notes the article covers.")
    categories: dict[str, tuple[str, ...]] = {}
    raw_categories = p.data.get("categories")
    if isinstance(raw_categories, YamlMap):
        c = Fields(raw_categories, f.file, "the perimeter's categories", f.problems, line=p.line_of("categories"))
        for axis in c.data:
            categories[str(axis)] = tuple(c.text_list(axis))
    elif raw_categories is not None:
        p.error("categories", "wrong-type", "the perimeter's 'categories' must map axes to categories",
                "Write e.g. 'categories:\\n    theme: [Budget]'.")
    return PerimeterSpec(notebook, categories, f.line_of("perimeter"))


def _recorded(f: Fields) -> RecordedPerimeter | None:
    raw = f.data.get("proposed")
    if raw is None:
        return None
    r = Fields(raw, f.file, "the recorded perimeter ('proposed')", f.problems, line=f.line_of("proposed"))
    r.check_known(("notes", "extractions"))
    extractions = []
    items = r.data.get("extractions")
    if isinstance(items, YamlList):
        for index, item in enumerate(items):
            e = Fields(item, f.file, f"proposed extraction {index + 1}", f.problems, line=items.line_of(index))
            e.check_known(("id", "note", "quote", "sha256"))
            extractions.append(FrozenExtraction(e.text("id"), e.text("note"), e.text("quote"), e.text("sha256")))
    elif items is not None:
        r.error("extractions", "wrong-type", "'extractions' of 'proposed' must be a list", "Let 'carnet adopt' write it.")
    return RecordedPerimeter(tuple(r.text_list("notes")), tuple(extractions), f.line_of("proposed"))


def _adoption(f: Fields) -> Adoption | None:
    raw = f.data.get("adoption")
    if raw is None:
        return None
    a = Fields(raw, f.file, "the adoption", f.problems, line=f.line_of("adoption"))
    a.check_known(("by", "date", "hash"))
    date = a.date("date", required=True) or dt.date.min
    return Adoption(a.text("by"), date, a.text("hash", hint="Let 'carnet adopt' record the adoption."),
                    f.line_of("adoption"))


def _history(f: Fields) -> tuple[StatusEntry, ...]:
    raw = f.data.get("history")
    if raw is None:
        return ()
    if not isinstance(raw, YamlList):
        f.error("history", "wrong-type", "'history' must be a list of {status, date}",
                "Write one '- {status: draft, date: YYYY-MM-DD}' per step.")
        return ()
    entries = []
    for index, item in enumerate(raw):
        h = Fields(item, f.file, f"history step {index + 1}", f.problems, line=raw.line_of(index))
        h.check_known(("status", "date"))
        status = h.text("status")
        if status and status not in STATUSES:
            hint = ("'superseded' is never written: it follows from a newer act's 'supersedes:'."
                    if status == "superseded" else f"Use one of: {', '.join(STATUSES)}.")
            h.error("status", "invalid-value", f"status {status!r} cannot be written in a history", hint)
        entries.append(StatusEntry(status, h.date("date"), raw.line_of(index)))
    return tuple(entries)


def history_problems(file: str, history: tuple[StatusEntry, ...]) -> list[Problem]:
    """The history must be a path of the lifecycle: draft → adopted, never back (INV-14)."""
    problems = []
    rank = {"draft": 0, "adopted": 1}
    previous: StatusEntry | None = None
    for entry in history:
        if entry.status not in rank:
            continue
        if previous is not None:
            if rank[entry.status] < rank[previous.status]:
                problems.append(Problem(
                    file, entry.line, "lifecycle", f"the status goes back from {previous.status} to {entry.status}",
                    "An adopted act is never re-opened: write a new synthesis that supersedes it."))
            elif rank[entry.status] == rank[previous.status]:
                problems.append(Problem(file, entry.line, "lifecycle", f"the status {entry.status} is repeated",
                                        "Each step of the history is written once."))
            elif entry.date and previous.date and entry.date < previous.date:
                problems.append(Problem(file, entry.line, "lifecycle", "the history goes back in time",
                                        "Steps are written oldest first, with their dates."))
        previous = entry
    return problems
