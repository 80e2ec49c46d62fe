"""Time ranges of extractions in a transcript: from the start of the first speaker
turn they touch to the start of the turn after the last one (the recording's
duration for the last turn). Pure."""

from __future__ import annotations

from dataclasses import dataclass

from generator.anchoring.elements import Element
from generator.anchoring.resolve import Anchor


@dataclass(frozen=True)
class TimeRange:
    """Seconds from the start of the note's media; ``end`` is ``None`` when the last
    turn's end is unknown (no ``duration`` on the note)."""

    start: float
    end: float | None


def time_range(elements: list[Element], anchor: Anchor, duration: float | None) -> TimeRange | None:
    """The range of an extraction lying only in speaker turns, else ``None``."""
    if not anchor.status.is_live or not anchor.portions:
        return None
    indexes = [portion.element for portion in anchor.portions]
    if any(elements[i].kind != "turn" or elements[i].time is None for i in indexes):
        return None
    first, last = min(indexes), max(indexes)
    later = [e.time for e in elements[last + 1:] if e.kind == "turn" and e.time is not None]
    end = later[0] if later else duration
    start = float(elements[first].time)  # type: ignore[arg-type]
    return TimeRange(start, float(end) if end is not None else None)
