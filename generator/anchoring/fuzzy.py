"""Approximate matching of a quote in a text, bounded by an edit distance.

Myers' bit-parallel algorithm (1999) with Python integers as bit vectors: one pass
over the text per quote, O(n·⌈m/w⌉), so relocating an edited quote stays linear in
the note's size. Pure functions; offsets are in the text given.
"""

from __future__ import annotations

from dataclasses import dataclass


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


def _scores(pattern: str, text: str, anchored_start: bool) -> list[int]:
    """Edit distance of ``pattern`` against the best substring of ``text`` ending at each
    position (search), or against each prefix of ``text`` (``anchored_start``)."""
    m = len(pattern)
    mask = (1 << m) - 1
    high = 1 << (m - 1)
    peq = _peq(pattern)
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


def _windows(pattern: str, text: str, max_distance: int) -> list[tuple[int, int]]:
    """Regions of ``text`` that can hold a match. Pigeonhole filter, lossless: cut the
    pattern into ``max_distance + 1`` pieces; ``max_distance`` edits leave one intact,
    so every match contains an exact occurrence of some piece."""
    m, pieces = len(pattern), max_distance + 1
    size = m // pieces
    spans = []
    for number in range(pieces):
        offset = number * size
        piece = pattern[offset:offset + size] if number < pieces - 1 else pattern[offset:]
        found = text.find(piece)
        while found >= 0:
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


def find_approximate(pattern: str, text: str, max_distance: int) -> list[Match]:
    """Every distinct place where ``pattern`` matches ``text`` within ``max_distance``
    edits: one match per cluster of nearby end positions (the best of the cluster)."""
    m = len(pattern)
    if m == 0 or max_distance < 0:
        return []
    if m // (max_distance + 1) >= 4:  # pieces long enough to be selective
        matches = []
        for start, end in _windows(pattern, text, max_distance):
            matches += [Match(x.start + start, x.end + start, x.distance)
                        for x in _find_in(pattern, text[start:end], max_distance)]
        return matches
    return _find_in(pattern, text, max_distance)


def _find_in(pattern: str, text: str, max_distance: int) -> list[Match]:
    m = len(pattern)
    ends = _scores(pattern, text, anchored_start=False)
    clusters: list[tuple[int, int]] = []  # (end index, distance), best per cluster
    last_end = -10
    for end, distance in enumerate(ends):
        if distance > max_distance:
            continue
        if clusters and end - last_end <= max_distance + 1:
            if distance < clusters[-1][1]:
                clusters[-1] = (end, distance)
        else:
            clusters.append((end, distance))
        last_end = end
    matches = []
    for end, distance in clusters:
        window_start = max(0, end + 1 - m - max_distance)
        window = text[window_start:end + 1]
        # walk back from the end: the start is where the reversed pattern fits best
        backwards = _scores(pattern[::-1], window[::-1], anchored_start=True)
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


def levenshtein(a: str, b: str) -> int:
    """Plain edit distance of two whole strings (Myers, anchored at both ends)."""
    if not a:
        return len(b)
    if not b:
        return len(a)
    return _scores(a, b, anchored_start=True)[-1]
