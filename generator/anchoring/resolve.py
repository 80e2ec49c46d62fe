"""Quote → portions inside elements. Never guesses (INV-6).

The quote is looked for in the normalised projection of the note. One match →
anchored. Several → told apart by prefix/suffix, then by the ``occurrence`` hint;
still several → detached (ambiguous). None → detached (not found).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from generator.anchoring.elements import Element
from generator.anchoring.normalise import normalise, normalise_quote


class AnchorStatus(str, Enum):
    ANCHORED = "anchored"
    DETACHED = "detached"


@dataclass(frozen=True)
class Portion:
    """The part of an extraction inside one element: ``element`` index, ``[start, end)``
    offsets in that element's text."""

    element: int
    start: int
    end: int


@dataclass(frozen=True)
class Anchor:
    """Where an extraction landed.

    Attributes:
        status: anchored or detached.
        portions: one per element the quote touches, in reading order.
        reason: why a detached anchor is detached (shown to readers and in reports).
        candidates: how many places matched (0 not found, >1 ambiguous).
    """

    status: AnchorStatus
    portions: tuple[Portion, ...] = ()
    reason: str = ""
    candidates: int = 1


@dataclass
class NormalisedProjection:
    """The note's elements normalised and joined by one space, each character
    mapped back to (element index, offset), or ``None`` for the joining spaces."""

    text: str
    origin: list[tuple[int, int] | None]


def project(elements: list[Element]) -> NormalisedProjection:
    parts: list[str] = []
    origin: list[tuple[int, int] | None] = []
    for index, element in enumerate(elements):
        text, offsets = normalise(element.text)
        if not text:
            continue
        if parts:
            parts.append(" ")
            origin.append(None)
        parts.append(text)
        origin.extend((index, offset) for offset in offsets)
    return NormalisedProjection("".join(parts), origin)


def _occurrences(haystack: str, needle: str) -> list[int]:
    found, start = [], haystack.find(needle)
    while start >= 0:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def resolve_quote(projection: NormalisedProjection, elements: list[Element], quote: str,
                  prefix: str = "", suffix: str = "", occurrence: int | None = None) -> Anchor:
    needle = normalise_quote(quote)
    if not needle:
        return Anchor(AnchorStatus.DETACHED, reason="the quote is empty", candidates=0)
    starts = _occurrences(projection.text, needle)
    if not starts:
        return Anchor(AnchorStatus.DETACHED, reason="the quote is not found in the note", candidates=0)
    candidates = starts
    if len(candidates) > 1 and (prefix or suffix):
        before, after = normalise_quote(prefix), normalise_quote(suffix)
        fitting = [
            start for start in candidates
            if (not before or projection.text[:start].rstrip().endswith(before))
            and (not after or projection.text[start + len(needle):].lstrip().startswith(after))
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


def _portions(projection: NormalisedProjection, start: int, length: int,
              elements: list[Element]) -> tuple[Portion, ...]:
    spans: dict[int, list[int]] = {}
    for position in range(start, start + length):
        origin = projection.origin[position]
        if origin is None:  # the space joining two elements: belongs to no portion
            continue
        element, offset = origin
        span = spans.setdefault(element, [offset, offset + 1])
        span[1] = offset + 1
    portions = []
    for element, (begin, end) in sorted(spans.items()):
        text = elements[element].text
        while begin < end and text[begin].isspace():
            begin += 1
        if begin < end:
            portions.append(Portion(element, begin, end))
    return tuple(portions)
