"""Quote → portions inside elements. Never guesses (INV-6).

The quote is looked for in the normalised projection of the note. One match →
anchored. Several → told apart by prefix/suffix, then by the ``occurrence`` hint;
still several → detached (ambiguous). None → approximate matching within an edit
distance of :data:`MAX_EDIT_RATIO` of the quote, scored with the prefix and suffix as
annotation clients do: a unique best → relocated (with the text found, for its diff);
otherwise → detached.

A relocation stays inside as many consecutive elements as the quote has blocks: an
edit at an element's edge is never mended with its neighbour's text. Its cost is
bounded: quotes past :data:`MAX_RELOCATED_LENGTH`, and searches the note's
:class:`~generator.anchoring.fuzzy.Budget` cannot pay, are detached with that reason.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from enum import Enum

from generator.anchoring.elements import SEPARATOR, Element
from generator.anchoring.exact import ExactSearch, ScanRefused
from generator.anchoring.fuzzy import (
    Budget,
    Match,
    TooCostly,
    find_approximate,
    levenshtein,
    similarity,
)
from generator.anchoring.normalise import normalise, normalise_quote

MAX_EDIT_RATIO = 0.10
"""An edited quote is relocated only within this share of its length in edits."""

# Weights of a fuzzy candidate's score: the quote itself, then its context.
QUOTE_WEIGHT, CONTEXT_WEIGHT = 50.0, 20.0
SCORE_TIE = 1e-9

MAX_RELOCATED_LENGTH = 2_000
"""Characters (normalised) past which a quote not found as written is not relocated:
its search would cost the square of its length. A quote that long is a page."""

MAX_OCCURRENCES = 1_000
"""Exact occurrences past which a quote is detached without telling them apart."""

CONTEXT_LENGTH = 200
"""Characters of a prefix or suffix that score a relocation (the nearest ones)."""

RELOCATION_BUDGET_BASE, RELOCATION_BUDGET_PER_CHARACTER = 250_000, 10
"""A note's relocation budget, in steps (:class:`~generator.anchoring.fuzzy.Budget`):
a base plus so much per character, so a corpus's worst case grows with its size only
(at most about 0.2 s plus 8 µs per character of the note, on this project's CI machine)."""

_BLOCK_BREAK = re.compile(r"\n[ \t]*\n")


class AnchorStatus(str, Enum):
    ANCHORED = "anchored"
    RELOCATED = "relocated"
    DETACHED = "detached"

    @property
    def is_live(self) -> bool:
        """Anchored or relocated: the extraction lands on a passage."""
        return self is not AnchorStatus.DETACHED


@dataclass(frozen=True)
class Portion:
    """The part of an extraction inside one element: ``element`` index, ``[start, end)``
    offsets in that element's text."""

    element: int
    start: int
    end: int


def portions_text(elements: list[Element], portions: tuple[Portion, ...]) -> str:
    """The note's own text over ``portions``: each portion's text, a blank line between
    portions (as quotes are written)."""
    return SEPARATOR.join(elements[p.element].text[p.start:p.end] for p in portions)


@dataclass(frozen=True)
class Anchor:
    """Where an extraction landed.

    Attributes:
        status: anchored or detached.
        portions: one per element the quote touches, in reading order.
        reason: why a detached anchor is detached (shown to readers and in reports).
        candidates: how many places matched (0 not found, >1 ambiguous).
        found: for a relocated anchor, the note's text where the quote now lands
            (normalised), to show the difference with the quote.
        distance: edits between the quote and ``found``.
        diff: for a relocated anchor, the words changed (:func:`word_diff`), shown to readers.
    """

    status: AnchorStatus
    portions: tuple[Portion, ...] = ()
    reason: str = ""
    candidates: int = 1
    found: str = ""
    distance: int = 0
    diff: str = ""


@dataclass
class NormalisedProjection:
    """The note's elements normalised and joined by one space.

    Attributes:
        text: the normalised projection.
        starts: where each included element's normalised text starts in ``text``.
        elements: the index of each included element (empty ones are left out).
        offsets: per included element, normalised character → offset in the element's text.
    """

    text: str
    starts: list[int]
    elements: list[int]
    offsets: list[list[int] | range]
    _regions: dict[int, list[tuple[int, int]]] = field(default_factory=dict, repr=False, compare=False)

    def regions(self, blocks: int) -> list[tuple[int, int]]:
        """Where a relocated quote of ``blocks`` blocks may lie: each run of that many
        consecutive elements, as [start, end) in ``text`` (sorted; kept for the note's
        other quotes)."""
        if blocks not in self._regions:
            ends = [start + len(offsets) for start, offsets in zip(self.starts, self.offsets, strict=True)]
            span = min(blocks, len(ends))
            self._regions[blocks] = [(self.starts[k], ends[k + span - 1]) for k in range(len(ends) - span + 1)]
        return self._regions[blocks]

    def origin(self, position: int) -> tuple[int, int] | None:
        """(element index, offset in its text) of a character, or ``None`` for a joining space."""
        k = bisect_right(self.starts, position) - 1
        local = position - self.starts[k]
        if local >= len(self.offsets[k]):
            return None
        return self.elements[k], self.offsets[k][local]


def project(elements: list[Element]) -> NormalisedProjection:
    parts: list[str] = []
    starts: list[int] = []
    included: list[int] = []
    offsets: list[list[int] | range] = []
    length = 0
    for index, element in enumerate(elements):
        text, origin = normalise(element.text)
        if not text:
            continue
        if parts:
            parts.append(" ")
            length += 1
        starts.append(length)
        included.append(index)
        offsets.append(origin)
        parts.append(text)
        length += len(text)
    return NormalisedProjection("".join(parts), starts, included, offsets)


def relocation_budget(projection: NormalisedProjection) -> Budget:
    """The budget of one note's relocations (shared by all its extractions)."""
    return Budget(RELOCATION_BUDGET_BASE + RELOCATION_BUDGET_PER_CHARACTER * len(projection.text))


def _occurrences(haystack: str, needle: str) -> list[int]:
    """Where ``needle`` occurs, up to one past :data:`MAX_OCCURRENCES`."""
    found: list[int] = []
    start = haystack.find(needle)
    while start >= 0 and len(found) <= MAX_OCCURRENCES:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def resolve_quote(projection: NormalisedProjection, elements: list[Element], quote: str,
                  prefix: str = "", suffix: str = "", occurrence: int | None = None,
                  budget: Budget | None = None, exact: ExactSearch | None = None) -> Anchor:
    """Where ``quote`` lands. ``budget`` is the note's (:func:`relocation_budget`) and
    ``exact`` its search (:meth:`ExactSearch.for_quotes`), shared by its extractions;
    without them, this quote gets a note's budget of its own and a plain scan."""
    needle = normalise_quote(quote)
    if not needle:
        return Anchor(AnchorStatus.DETACHED, reason="the quote is empty", candidates=0)
    try:
        starts = exact.occurrences(needle, MAX_OCCURRENCES) if exact else _occurrences(projection.text, needle)
    except ScanRefused:
        return Anchor(AnchorStatus.DETACHED, candidates=0,
                      reason="the note's search allowance is spent: it has too many quotes that are short, or in "
                             "text too repetitive for its index, to look them all up; split the note, or quote "
                             "longer passages")
    if not starts:
        blocks = sum(1 for block in _BLOCK_BREAK.split(quote) if block.strip())
        return _relocate(projection, elements, needle, prefix, suffix, max(blocks, 1),
                         budget if budget is not None else relocation_budget(projection))
    if len(starts) > MAX_OCCURRENCES:
        return Anchor(AnchorStatus.DETACHED, candidates=len(starts),
                      reason=f"the quote occurs more than {MAX_OCCURRENCES} times; quote a longer passage")
    candidates = starts
    if len(candidates) > 1 and (prefix or suffix):
        before, after = normalise_quote(prefix), normalise_quote(suffix)
        text = projection.text
        # the projection's spaces are single: one space at most lies between quote and context
        fitting = [
            start for start in candidates
            if (not before or text[max(0, start - len(before) - 1):start].rstrip().endswith(before))
            and (not after or text[start + len(needle):start + len(needle) + len(after) + 1].lstrip()
                 .startswith(after))
        ]
        if not fitting:
            return Anchor(
                AnchorStatus.DETACHED,
                reason=f"the quote occurs {len(candidates)} times and the prefix/suffix fit none of them",
                candidates=len(candidates),
            )
        candidates = fitting
    if len(candidates) > 1:
        if occurrence is not None and occurrence <= len(candidates):
            candidates = [candidates[occurrence - 1]]
        elif occurrence is not None:
            return Anchor(
                AnchorStatus.DETACHED,
                reason=f"occurrence {occurrence} asked, but the quote occurs only {len(candidates)} times",
                candidates=len(candidates),
            )
        else:
            return Anchor(
                AnchorStatus.DETACHED,
                reason=f"the quote occurs {len(candidates)} times; add a prefix, a suffix or an occurrence",
                candidates=len(candidates),
            )
    return Anchor(AnchorStatus.ANCHORED, _portions(projection, candidates[0], len(needle), elements))


def _trim(match: Match, text: str, needle: str, max_distance: int, budget: Budget) -> Match | None:
    """A match without the whitespace at its ends (separators between elements belong to
    no portion, so what is shown would differ from what was measured), measured again:
    ``None`` when, without it, the quote is no longer within the budget."""
    start, end = match.start, match.end
    while start < end and text[start].isspace() and not needle[:1].isspace():
        start += 1
    while end > start and text[end - 1].isspace() and not needle[-1:].isspace():
        end -= 1
    if (start, end) == (match.start, match.end):
        return match
    if start >= end:
        return None
    distance = levenshtein(needle, text[start:end], budget)
    return Match(start, end, distance) if distance <= max_distance else None


def _distinct(matches: list[Match], length: int) -> list[Match]:
    """One match per place: of overlapping ones (found in overlapping regions), the
    closest, then the one nearest the quote's length, then the first."""
    kept: list[Match] = []
    for match in sorted(matches, key=lambda m: (m.start, m.end)):
        if kept and match.start < kept[-1].end:
            best = min(kept[-1], match, key=lambda m: (m.distance, abs(m.end - m.start - length), m.start))
            kept[-1] = best
        else:
            kept.append(match)
    return kept


def _relocate(projection: NormalisedProjection, elements: list[Element], needle: str,
              prefix: str, suffix: str, blocks: int, budget: Budget) -> Anchor:
    if len(needle) > MAX_RELOCATED_LENGTH:
        return Anchor(AnchorStatus.DETACHED, candidates=0,
                      reason=f"the quote is not found as written, and at {len(needle)} characters it is too long "
                             f"to relocate (at most {MAX_RELOCATED_LENGTH})")
    max_distance = int(len(needle) * MAX_EDIT_RATIO)
    try:
        found = find_approximate(needle, projection.text, max_distance, budget,
                                 projection.regions(blocks)) if max_distance else []
        matches = _distinct([m for m in (_trim(m, projection.text, needle, max_distance, budget) for m in found)
                             if m is not None], len(needle))
    except TooCostly as refused:
        return Anchor(AnchorStatus.DETACHED, candidates=0,
                      reason=f"the quote is not found as written, and it is not relocated: {refused}")
    if not matches:
        return Anchor(AnchorStatus.DETACHED, reason="the quote is not found in the note", candidates=0)
    before = normalise_quote(prefix)[-CONTEXT_LENGTH:]
    after = normalise_quote(suffix)[:CONTEXT_LENGTH]

    def score(match: Match) -> float:
        value = QUOTE_WEIGHT * (1.0 - match.distance / len(needle))
        if before:
            context = projection.text[max(0, match.start - len(before) - 1):match.start].strip()
            value += CONTEXT_WEIGHT * similarity(before, context[-len(before):])
        if after:
            context = projection.text[match.end:match.end + len(after) + 1].strip()
            value += CONTEXT_WEIGHT * similarity(after, context[:len(after)])
        return value

    ranked = sorted(matches, key=score, reverse=True)
    if len(ranked) > 1 and score(ranked[0]) - score(ranked[1]) <= SCORE_TIE:
        return Anchor(AnchorStatus.DETACHED, candidates=len(ranked),
                      reason=f"the quote is not found as written, and {len(ranked)} places resemble it equally")
    best = ranked[0]
    portions = _portions(projection, best.start, best.end - best.start, elements)
    if not portions:
        return Anchor(AnchorStatus.DETACHED, reason="the quote is not found in the note", candidates=0)
    found_text = projection.text[best.start:best.end]
    diff = word_diff(needle, found_text)
    return Anchor(AnchorStatus.RELOCATED, portions, candidates=1, found=found_text, distance=best.distance,
                  reason=f"the quote was edited: {diff}", diff=diff)


def word_diff(old: str, new: str) -> str:
    """A short, readable difference: ``… [-quatre-] {+cinq+} mille …``."""
    a, b = old.split(" "), new.split(" ")
    out: list[str] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            kept = a[i1:i2]
            out.append(" ".join(kept) if len(kept) <= 4 else f"{' '.join(kept[:2])} … {' '.join(kept[-2:])}")
            continue
        if i2 > i1:
            out.append(f"[-{' '.join(a[i1:i2])}-]")
        if j2 > j1:
            out.append(f"{{+{' '.join(b[j1:j2])}+}}")
    return " ".join(part for part in out if part)


def _portions(projection: NormalisedProjection, start: int, length: int,
              elements: list[Element]) -> tuple[Portion, ...]:
    """The match ``[start, start + length)`` of the projection cut at element
    boundaries; the joining spaces belong to no portion."""
    end = start + length
    portions = []
    first = bisect_right(projection.starts, start) - 1
    last = bisect_right(projection.starts, end - 1) - 1
    for k in range(first, last + 1):
        begin_local = max(start, projection.starts[k]) - projection.starts[k]
        end_local = min(end, projection.starts[k] + len(projection.offsets[k])) - projection.starts[k]
        if begin_local >= end_local:
            continue  # only the joining space of this element was matched
        offsets = projection.offsets[k]
        element = projection.elements[k]
        begin, stop = offsets[begin_local], offsets[end_local - 1] + 1
        text = elements[element].text
        while begin < stop and text[begin].isspace():
            begin += 1
        if begin < stop:
            portions.append(Portion(element, begin, stop))
    return tuple(portions)
