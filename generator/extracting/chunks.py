"""Cutting a note into chunks on element boundaries, never inside an element.

Pure: element texts and the indexes to analyse in, chunks out. A chunk holds one or
more *segments*: a run of consecutive elements to analyse, with the unchanged
neighbours around it as context (only where the neighbour is not itself analysed:
a whole note is sent once, without overlap).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import takewhile

DEFAULT_BUDGET = 6000
"""Characters of note text per chunk (context included), unless carnet.yaml or --budget say otherwise."""

DEFAULT_NEIGHBOURS = 1
"""Unchanged elements sent on each side of a changed run, for context."""


@dataclass(frozen=True)
class Segment:
    """Consecutive elements of a note, by index: ``indexes`` in reading order, of which
    ``analysed`` are to be analysed and the others are context (already analysed)."""

    indexes: tuple[int, ...]
    analysed: tuple[int, ...]

    @property
    def context(self) -> tuple[int, ...]:
        return tuple(i for i in self.indexes if i not in self.analysed)


@dataclass(frozen=True)
class Chunk:
    """What one request sends: segments in reading order, never touching each other."""

    segments: tuple[Segment, ...]

    @property
    def analysed(self) -> tuple[int, ...]:
        return tuple(i for s in self.segments for i in s.analysed)

    @property
    def context(self) -> tuple[int, ...]:
        return tuple(i for s in self.segments for i in s.context)

    @property
    def indexes(self) -> tuple[int, ...]:
        return tuple(i for s in self.segments for i in s.indexes)


def _runs(selected: list[int]) -> list[list[int]]:
    """Maximal runs of consecutive indexes."""
    runs: list[list[int]] = []
    for index in sorted(set(selected)):
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def _join(first: Segment, second: Segment) -> Segment | None:
    """One segment when ``second`` starts where ``first`` ends or overlaps it (a shared
    context element is sent once), else None."""
    if second.indexes[0] > first.indexes[-1] + 1:
        return None
    indexes = first.indexes + tuple(i for i in second.indexes if i > first.indexes[-1])
    return Segment(indexes, first.analysed + second.analysed)


def _fitting(nearest_first: list[int], lengths: list[int], room: int) -> list[int]:
    """The neighbours, nearest first, that fit in ``room`` characters; stops at the
    first that does not (context stays next to its run, without a gap)."""
    kept = []
    for index in nearest_first:
        if lengths[index] > room:
            break
        kept.append(index)
        room -= lengths[index]
    return kept


def cut_chunks(lengths: list[int], selected: list[int], budget: int = DEFAULT_BUDGET,
               neighbours: int = DEFAULT_NEIGHBOURS) -> list[Chunk]:
    """Chunks sending the ``selected`` elements of a note whose element texts have
    ``lengths`` characters.

    A run of selected elements longer than ``budget`` is cut between elements; an
    element longer than the budget travels alone (it is never cut). Each run gets up
    to ``neighbours`` unselected elements on each side as context, nearest first and
    only while they fit in the budget with the run (context is never a reason to
    exceed it); short runs are packed together while they fit. So every chunk holds
    at most ``budget`` characters, unless it is a single element longer than that."""
    budget = max(1, budget)
    chosen = set(selected)
    count = len(lengths)
    pieces: list[Segment] = []
    for run in _runs(selected):
        parts: list[list[int]] = [[]]
        size = 0
        for index in run:
            if parts[-1] and size + lengths[index] > budget:
                parts.append([])
                size = 0
            parts[-1].append(index)
            size += lengths[index]
        # context only at the run's two ends: inside a run the neighbours are analysed anyway
        before = list(takewhile(lambda i: i not in chosen, range(run[0] - 1, max(-1, run[0] - 1 - neighbours), -1)))
        after = list(takewhile(lambda i: i not in chosen, range(run[-1] + 1, min(count, run[-1] + 1 + neighbours))))
        for number, part in enumerate(parts):
            room = budget - sum(lengths[i] for i in part)
            head = _fitting(before, lengths, room) if number == 0 else []
            room -= sum(lengths[i] for i in head)
            tail = _fitting(after, lengths, room) if number == len(parts) - 1 else []
            pieces.append(Segment(tuple(sorted(head) + part + tail), tuple(part)))
    chunks: list[Chunk] = []
    segments: list[Segment] = []
    size = 0
    for piece in pieces:
        piece_size = sum(lengths[i] for i in piece.indexes)
        if segments and size + piece_size > budget:
            chunks.append(Chunk(tuple(segments)))
            segments, size = [], 0
        joined = _join(segments[-1], piece) if segments else None
        if joined is not None:
            size += sum(lengths[i] for i in joined.indexes) - sum(lengths[i] for i in segments[-1].indexes)
            segments[-1] = joined
        else:
            segments.append(piece)
            size += piece_size
    if segments:
        chunks.append(Chunk(tuple(segments)))
    return chunks
