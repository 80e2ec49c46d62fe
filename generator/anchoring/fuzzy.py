"""Approximate matching of a quote in a text, bounded by an edit distance and by a budget.

Myers' bit-parallel algorithm (1999) with Python integers as bit vectors: one pass
over the text per quote, O(n·⌈m/w⌉). A pigeonhole filter keeps the passes to the
few regions that can hold a match, and every pass is paid for from a
:class:`Budget` before it runs, so no text and no quote can make matching take more
than the budget (a hostile note of ``"ab" * 50000`` against ``"ab" * 20000 + "c"``
is refused in a few milliseconds instead of exhausting memory). Pure functions;
offsets are in the text given.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

MAX_WINDOW_SPANS = 10_000
"""Exact occurrences of the filter's pieces kept; past it, the text is too repetitive
for the filter to narrow anything and the whole of each region is scanned instead."""

MAX_CANDIDATES = 50
"""Places within the edit distance past which a quote is not relocated: a relocation
must be one place, and scoring more would only be paying to find a tie."""


class TooCostly(Exception):
    """Matching would spend more than its budget, or finds too many places; the
    message says which, for the reader of the detached extraction."""


@dataclass
class Budget:
    """Work that approximate matching may still spend, in steps: a step is under a
    microsecond of one bit-parallel pass (:func:`step_cost` steps per character).

    Attributes:
        left: steps still available.
        spent: steps spent so far (what the tests and the benchmark read).
    """

    left: int
    spent: int = 0

    def afford(self, steps: int, what: str) -> None:
        """Raise :class:`TooCostly` (``what``) unless ``steps`` can be paid."""
        if steps > self.left:
            raise TooCostly(what)

    def pay(self, steps: int, what: str) -> None:
        self.afford(steps, what)
        self.left -= steps
        self.spent += steps


def step_cost(pattern_length: int) -> int:
    """Steps one character of text costs under a pattern that long: measured, a
    character costs about 0.9 µs under a pattern of 10 characters, 1.6 µs under 200,
    3 µs under 2,000 (bit vectors of ⌈m/64⌉ words; Python's integers grow slower)."""
    return 2 + pattern_length // 512


@dataclass(frozen=True)
class Match:
    """``text[start:end]`` is within ``distance`` edits of the pattern."""

    start: int
    end: int
    distance: int


def _peq(pattern: str) -> dict[str, int]:
    table: dict[str, int] = {}
    for index, ch in enumerate(pattern):
        table[ch] = table.get(ch, 0) | (1 << index)
    return table


def _scores(pattern: str, text: str, anchored_start: bool, budget: Budget | None = None,
            peq: dict[str, int] | None = None) -> list[int]:
    """Edit distance of ``pattern`` against the best substring of ``text`` ending at each
    position (search), or against each prefix of ``text`` (``anchored_start``).
    ``peq`` is :func:`_peq` of the pattern, when the caller already has it."""
    if budget is not None:
        budget.pay(len(text) * step_cost(len(pattern)), "matching it approximately would cost too much")
    m = len(pattern)
    mask = (1 << m) - 1
    high = 1 << (m - 1)
    peq = _peq(pattern) if peq is None else peq
    pv, mv, score = mask, 0, m
    scores = []
    for ch in text:
        eq = peq.get(ch, 0)
        xv = eq | mv
        xh = ((((eq & pv) + pv) & mask) ^ pv) | eq
        ph = (mv | ~(xh | pv)) & mask
        mh = pv & xh
        if ph & high:
            score += 1
        elif mh & high:
            score -= 1
        # searching: the top row is all zeros (a match may start anywhere), so nothing
        # is shifted in; anchored: row 0 grows by one per character.
        ph = ((ph << 1) | (1 if anchored_start else 0)) & mask
        mh = (mh << 1) & mask
        pv = (mh | ~(xv | ph)) & mask
        mv = ph & xv
        scores.append(score)
    return scores


def _windows(pattern: str, text: str, max_distance: int, budget: Budget) -> list[tuple[int, int]]:
    """Regions of ``text`` that can hold a match. Pigeonhole filter, lossless: cut the
    pattern into ``max_distance + 1`` pieces; ``max_distance`` edits leave one intact,
    so every match contains an exact occurrence of some piece. A text where the pieces
    occur too often (repetitive) gets one window: all of it."""
    m, pieces = len(pattern), max_distance + 1
    size = m // pieces
    # str.find runs in C, some fifty times faster than a step
    budget.pay(pieces * len(text) // 50, "matching it approximately would cost too much")
    spans: list[tuple[int, int]] = []
    for number in range(pieces):
        offset = number * size
        piece = pattern[offset:offset + size] if number < pieces - 1 else pattern[offset:]
        found = text.find(piece)
        while found >= 0:
            if len(spans) == MAX_WINDOW_SPANS:
                return [(0, len(text))]
            start = found - offset - max_distance
            spans.append((max(0, start), min(len(text), start + m + 3 * max_distance)))
            found = text.find(piece, found + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def find_approximate(pattern: str, text: str, max_distance: int, budget: Budget,
                     regions: list[tuple[int, int]] | None = None) -> list[Match]:
    """Every distinct place where ``pattern`` matches ``text`` within ``max_distance``
    edits: one match per cluster of nearby end positions (the best of the cluster).

    ``regions`` (sorted by start and by end; they may overlap) confine every match to one of them:
    a match never runs past the region it was found in. Raises :class:`TooCostly` when
    the budget cannot pay for the search, or past :data:`MAX_CANDIDATES` places."""
    m = len(pattern)
    if m == 0 or max_distance < 0:
        return []
    whole = [(0, len(text))] if regions is None else regions
    # candidate windows where the pattern's pieces are long enough to be selective, else the whole text
    windows = _windows(pattern, text, max_distance, budget) if m // (max_distance + 1) >= 4 else [(0, len(text))]
    pieces = _pieces(windows, whole, m - max_distance)
    # refused before any pass when the forward passes alone are beyond the budget
    budget.afford(sum(end - start for start, end in pieces) * step_cost(m), "matching it approximately would cost too much")
    matches: list[Match] = []
    forward, backward = _peq(pattern), _peq(pattern[::-1])
    for start, end in pieces:
        for found in _find_in(pattern, text[start:end], max_distance, budget, forward, backward):
            matches.append(Match(found.start + start, found.end + start, found.distance))
            if len(matches) > MAX_CANDIDATES:
                raise TooCostly(f"it resembles more than {MAX_CANDIDATES} places")
    return matches


def _pieces(windows: list[tuple[int, int]], regions: list[tuple[int, int]], shortest: int) -> list[tuple[int, int]]:
    """Each window cut to each region it meets, keeping the pieces long enough to hold
    a match (``shortest`` characters). Regions come sorted by start and by end alike
    (runs of consecutive elements), so those meeting a window are found by bisection."""
    region_starts = [start for start, _ in regions]
    region_ends = [end for _, end in regions]
    pieces: set[tuple[int, int]] = set()
    for w_start, w_end in windows:
        for index in range(bisect_right(region_ends, w_start), bisect_left(region_starts, w_end)):
            r_start, r_end = regions[index]
            start, end = max(w_start, r_start), min(w_end, r_end)
            if end - start >= max(shortest, 1):
                pieces.add((start, end))
    return sorted(pieces)


def _find_in(pattern: str, text: str, max_distance: int, budget: Budget,
             forward: dict[str, int], backward: dict[str, int]) -> list[Match]:
    m = len(pattern)
    ends = _scores(pattern, text, anchored_start=False, budget=budget, peq=forward)
    clusters: list[tuple[int, int]] = []  # (end index, distance), best per cluster
    last_end = first_end = -10
    for end, distance in enumerate(ends):
        if distance > max_distance:
            continue
        # nearby ends are one place, unless they run on for a pattern's length: in
        # "x" * 200000 every end fits "x" * 500 + "y", and that is many places, not one
        if clusters and end - last_end <= max_distance + 1 and end - first_end < m:
            if distance < clusters[-1][1]:
                clusters[-1] = (end, distance)
        else:
            clusters.append((end, distance))
            first_end = end
            if len(clusters) > MAX_CANDIDATES:
                raise TooCostly(f"it resembles more than {MAX_CANDIDATES} places")
        last_end = end
    matches = []
    for end, _distance in clusters:
        window_start = max(0, end + 1 - m - max_distance)
        window = text[window_start:end + 1]
        # walk back from the end: the start is where the reversed pattern fits best
        backwards = _scores(pattern[::-1], window[::-1], anchored_start=True, budget=budget, peq=backward)
        best = min(range(len(backwards)), key=lambda i: (backwards[i], abs(i + 1 - m)))
        start = end + 1 - (best + 1)
        matches.append(Match(start, end + 1, backwards[best]))
    return matches


def similarity(a: str, b: str) -> float:
    """1.0 for equal strings, falling to 0.0 with the edit distance (for scoring contexts)."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    longest = max(len(a), len(b))
    return max(0.0, 1.0 - levenshtein(a, b) / longest)


def levenshtein(a: str, b: str, budget: Budget | None = None) -> int:
    """Plain edit distance of two whole strings (Myers, anchored at both ends)."""
    if not a:
        return len(b)
    if not b:
        return len(a)
    return _scores(a, b, anchored_start=True, budget=budget)[-1]
