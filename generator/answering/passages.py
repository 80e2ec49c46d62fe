"""The passages a question is answered from: the elements of the published ordinary notes.

Only what the site publishes is here (INV-12): notes of public notebooks, never a wiki,
a synthesis or an answer (INV-3: a synthesis is never a source). An element a masked
extraction covers is left out too: the collective masked that passage, so no model reads
it. Each passage is one element (paragraph, list item, table row, quotation, code, turn),
named ``<note>#<element id>`` — the address of its place on the note's page. Pure:
the site model in, passages out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from generator.anchoring import AnchoredNote
from generator.corpus.model import Note, NoteType
from generator.problems import SettingsError

SOURCE_KINDS = frozenset({"paragraph", "list_item", "table_row", "blockquote", "code", "turn"})
"""Element kinds a passage can be: every kind but headings (a title says nothing to cite)."""


@dataclass(frozen=True)
class Passage:
    """One element of a published note, as retrieval sees it.

    Attributes:
        id: ``<note slug>#<element id>`` (stable while the element's text is).
        note: the note's slug; ``title``: its title; ``date``: ISO date or "".
        element: the element's id on the note's page; ``index``: its place in the note.
        text: the element's exact text (what a quote must be found in).
        notebooks: the public notebooks holding the note.
    """

    id: str
    note: str
    title: str
    date: str
    element: str
    index: int
    text: str
    notebooks: tuple[str, ...]


@dataclass(frozen=True)
class Scope:
    """What a question searches: a notebook (or every public one) and categories.

    Attributes:
        notebook: a public notebook's slug, or "" for all of them.
        categories: (axis, category) pairs a note must all have (in ``notebook``, or in
            any notebook holding it).
    """

    notebook: str = ""
    categories: tuple[tuple[str, str], ...] = ()

    def admits(self, note: Note) -> bool:
        memberships = [m for m in note.memberships if not self.notebook or m.notebook == self.notebook]
        return bool(memberships) and all(
            any(category in m.categories.get(axis, ()) for m in memberships) for axis, category in self.categories)


def check_scope(scope: Scope, notebooks: Mapping[str, object]) -> None:
    """Refuse a notebook that is not a public one, or a category its axes do not hold."""
    if scope.notebook and scope.notebook not in notebooks:
        raise SettingsError(f"--notebook {scope.notebook!r} is no public notebook; the public ones: "
                            f"{', '.join(sorted(notebooks)) or 'none'}")
    chosen = [notebooks[scope.notebook]] if scope.notebook else list(notebooks.values())
    for axis, category in scope.categories:
        known = {c for nb in chosen for a in getattr(nb, "axes", ()) if a.key == axis for c in a.categories}
        if category not in known:
            where = f"notebook {scope.notebook!r}" if scope.notebook else "any public notebook"
            raise SettingsError(f"--category {axis}={category}: {where} has no such category on axis {axis!r}"
                                + (f" (its categories: {', '.join(sorted(known))})" if known else ""))


def parse_category(value: str) -> tuple[str, str]:
    """``AXIS=VALUE`` → (axis, value), or a clear refusal."""
    axis, sep, category = value.partition("=")
    if not sep or not axis.strip() or not category.strip():
        raise SettingsError(f"--category {value!r}: write it AXIS=VALUE (e.g. --category theme=Budget)")
    return axis.strip(), category.strip()


def passages(notes: Mapping[str, Note], anchored: Mapping[str, AnchoredNote], masked: Mapping[str, frozenset[int]],
             scope: Scope = Scope()) -> list[Passage]:
    """Every passage of the published ordinary ``notes`` in ``scope``, in slug then reading
    order; ``masked``: note → indexes of the elements a masked extraction covers."""
    found = []
    for slug in sorted(notes):
        note = notes[slug]
        if note.type is not NoteType.NOTE or slug not in anchored or not scope.admits(note):
            continue
        hidden = masked.get(slug, frozenset())
        notebooks = tuple(sorted({m.notebook for m in note.memberships}))
        date = note.date.isoformat() if note.date else ""
        for index, element in enumerate(anchored[slug].document.elements):
            if element.kind in SOURCE_KINDS and element.text.strip() and index not in hidden:
                found.append(Passage(f"{slug}#{element.id}", slug, note.title, date, element.id, index,
                                     element.text, notebooks))
    return found
