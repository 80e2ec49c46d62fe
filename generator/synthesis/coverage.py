"""Coverage (INV-5): which elements of a note carry at least one live extraction portion.

A join, not an estimate: elements × portions of the anchors given. The caller passes
the anchors of published, unmasked extractions; detached anchors carry no portion,
so they count for nothing. Headings, table rows and code blocks are elements like
the others: they count in the denominator.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from generator.anchoring import AnchoredNote, AnchorFacts
from generator.anchoring.elements import Element
from generator.anchoring.normalise import normalise_quote
from generator.anchoring.resolve import Anchor, AnchorStatus
from generator.corpus.model import Note

_BLOCK_BREAK = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Coverage:
    """Attributes:
        covered: indexes of the elements carrying at least one live portion.
        total: number of elements of the note.
    """

    covered: frozenset[int]
    total: int

    @property
    def count(self) -> int:
        return len(self.covered)

    def __reduce__(self) -> tuple[object, tuple[tuple[int, ...], int]]:
        # the indexes in order: the same bytes for equal coverages (a build's keys pickle them), and no
        # frozenset for the C pickler's fast mode, which fails past ~50 of them in one dump
        # (python/cpython#146059: save_frozenset never calls fast_save_leave; fixed in later releases)
        return _coverage, (tuple(sorted(self.covered)), self.total)


def _coverage(covered: tuple[int, ...], total: int) -> Coverage:
    return Coverage(frozenset(covered), total)


def coverage(elements: list[Element], anchors: Iterable[Anchor]) -> Coverage:
    covered = {portion.element for anchor in anchors if anchor.status.is_live for portion in anchor.portions}
    return Coverage(frozenset(covered), len(elements))


def coverage_of(facts: AnchorFacts, extractions: Iterable[str]) -> Coverage:
    """:func:`coverage` of the given extractions, from the note's :class:`AnchorFacts` (the
    same join, without the parsed body)."""
    covered = {element for i in extractions if facts.landed[i][0].is_live for element in facts.landed[i][1]}
    return Coverage(frozenset(covered), facts.elements)


def masked_elements(notes: Mapping[str, Note], anchored: Mapping[str, AnchoredNote]) -> dict[str, frozenset[int]]:
    """Note → the elements its masked extractions land on (``notes``: the whole corpus's,
    where masked extractions are still listed)."""
    hidden: dict[str, frozenset[int]] = {}
    for slug, note in notes.items():
        if slug not in anchored or not any(e.masked for e in note.extractions):
            continue
        anchors, elements = anchored[slug].anchors, anchored[slug].document.elements
        covered: set[int] = set()
        for extraction in (e for e in note.extractions if e.masked):
            anchor = anchors.get(extraction.id)
            if anchor is not None and anchor.status is not AnchorStatus.DETACHED:
                covered.update(portion.element for portion in anchor.portions)
            else:  # not placed (ambiguous, or edited): every element still holding its text is left out
                blocks = [normalise_quote(b) for b in _BLOCK_BREAK.split(extraction.quote) if b.strip()]
                covered.update(i for i, e in enumerate(elements)
                               if any(block in normalise_quote(e.text) for block in blocks))
        if covered:
            hidden[slug] = frozenset(covered)
    return hidden
