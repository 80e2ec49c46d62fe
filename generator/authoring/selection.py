"""A browser selection → a quote the anchoring engine places exactly there. Pure.

The page sends where the selection starts and ends: the id of the element (``e-…``)
holding each end, the element's text before the start and its text after the end
(as the page shows them). The browser's own string is never recorded: the ends are
found in the note's elements (normalised as quotes are), the portions between them
are cut by the engine, and the quote written is the note's own text over them, with
a prefix or an ``occurrence`` where the same words occur elsewhere
(:func:`generator.extracting.passages.place`), checked to land on exactly those
portions. Anything the engine cannot place uniquely is refused with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.anchoring.elements import Element
from generator.anchoring.normalise import normalise
from generator.anchoring.resolve import Portion, _portions, project
from generator.extracting.passages import place

MAX_CONTEXT = 20_000
"""Longest element text the page may send around a selection (an element is a block)."""


@dataclass(frozen=True)
class End:
    """One end of a selection: the element holding it, and the element's text on the
    side away from the selection (before the start, after the end)."""

    element: str
    context: str


@dataclass(frozen=True)
class Placed:
    """Where a selection lands, and the record that anchors there.

    Attributes:
        quote: the note's own text over ``portions`` (never the browser's string).
        prefix, occurrence: set only when the quote's words occur elsewhere in the note.
        portions: the element portions the selection covers.
    """

    quote: str
    prefix: str
    occurrence: int | None
    portions: tuple[Portion, ...]


class Unplaced(ValueError):
    """The selection cannot be placed on the note's text; the message says why."""


def _index(elements: list[Element], element_id: str) -> int:
    found = next((i for i, element in enumerate(elements) if element.id == element_id), None)
    if found is None:
        raise Unplaced(f"the paragraph {element_id!r} is not in the note as it is now: the note changed "
                       "since the page was loaded; reload the page and select again")
    return found


def place_selection(elements: list[Element], start: End, end: End) -> Placed:
    """The record for the text between ``start`` and ``end`` (see the module), or
    :class:`Unplaced`."""
    first, last = _index(elements, start.element), _index(elements, end.element)
    if last < first:
        raise Unplaced("the selection ends before it starts")
    projection = project(elements)
    if first not in projection.elements or last not in projection.elements:
        raise Unplaced("the selection starts or ends in an element without text")
    k_first, k_last = projection.elements.index(first), projection.elements.index(last)
    head = normalise(elements[first].text)[0]
    tail = normalise(elements[last].text)[0]
    before, after = normalise(start.context)[0], normalise(end.context)[0]
    if not head.startswith(before) or not tail.endswith(after):
        raise Unplaced("the selected text is not the note's text as it is now (the page is older than the note, "
                       "or shows text of its own there); reload the page and select again")
    begin = len(before)
    if begin < len(head) and head[begin] == " ":
        begin += 1  # the space before the selection belongs to the text before it
    stop = len(tail) - len(after)
    if stop > 0 and tail[stop - 1] == " ":
        stop -= 1
    at, to = projection.starts[k_first] + begin, projection.starts[k_last] + stop
    if to <= at:
        raise Unplaced("nothing is selected: select the passage to extract")
    portions = _portions(projection, at, to - at, elements)
    if not portions:
        raise Unplaced("nothing is selected: select the passage to extract")
    placed = place(elements, portions)
    if placed is None:
        raise Unplaced("the passage occurs several times in the note and no prefix or occurrence tells this one "
                       "apart; select a longer passage")
    quote, prefix, occurrence = placed
    return Placed(quote, prefix, occurrence, portions)
