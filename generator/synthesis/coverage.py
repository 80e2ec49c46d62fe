"""Coverage (INV-5): which elements of a note carry at least one live extraction portion.

A join, not an estimate: elements × portions of the anchors given. The caller passes
the anchors of published, unmasked extractions; detached anchors carry no portion,
so they count for nothing. Headings, table rows and code blocks are elements like
the others: they count in the denominator.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from generator.anchoring.elements import Element
from generator.anchoring.resolve import Anchor


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
