"""Perimeters (DESIGN §3): the ordinary notes an article covers, and their extractions.
Pure. Perimeters hold ordinary notes only (INV-3) and never masked extractions (INV-12)."""

from __future__ import annotations

from generator.corpus.article import PerimeterSpec
from generator.corpus.model import Corpus, Note, NoteType


def in_perimeter(note: Note, spec: PerimeterSpec) -> bool:
    if note.type is not NoteType.NOTE:
        return False
    membership = note.membership(spec.notebook)
    if membership is None:
        return False
    categories = membership.categories  # each axis: one of the values wanted at least
    return all(any(value in categories.get(axis, ()) for value in wanted) for axis, wanted in spec.categories.items())


def live_perimeter(corpus: Corpus, spec: PerimeterSpec) -> list[str]:
    """Slugs of the notes the perimeter holds now, by date then slug."""
    notes = [n for n in corpus.notes_of(spec.notebook) if in_perimeter(n, spec)]
    return [n.slug for n in sorted(notes, key=lambda n: (n.date.isoformat() if n.date else "", n.slug))]


def perimeter_extractions(corpus: Corpus, notes: list[str]) -> list[str]:
    """Ids of the unmasked extractions of these notes, in note then file order."""
    return [e.id for slug in notes if slug in corpus.notes for e in corpus.notes[slug].extractions if not e.masked]
