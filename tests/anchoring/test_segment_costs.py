"""Segmenting a note costs work in proportion to its blocks (issue 56, item 2): 50,000
identical headings took 164 s (each id tried ``-2``, ``-3``… from the start) and a
100,000-item tight list 103 s (each item looked through every element before it).

Work is counted, never timed: the lines Python runs inside ``elements.py``, at a size and
at four times that size. Headings keep the ids they had: they are public addresses."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from generator.anchoring import elements
from generator.anchoring.elements import RESERVED_ID_PREFIXES, segment
from generator.markup import parse
from generator.text import slugify


def lines_run(work: Callable[[], object]) -> int:
    """How many lines of ``elements.py`` Python runs while ``work`` runs (its comprehensions
    and nested functions included)."""
    count = 0
    source = elements.__file__

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == source else None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        work()
    finally:
        sys.settrace(previous)
    return count


def growth(body: Callable[[int], str], size: int) -> float:
    """The work of segmenting ``body(4 × size)`` over that of ``body(size)`` (4 when linear)."""
    small, large = parse(body(size)), parse(body(4 * size))
    return lines_run(lambda: segment(large, 1)) / lines_run(lambda: segment(small, 1))


def test_identical_headings_cost_linear_work() -> None:
    assert growth(lambda n: "## Titre\n\n" * n, 500) < 4.5


def test_a_long_tight_list_costs_linear_work() -> None:
    assert growth(lambda n: "".join(f"- point {i}\n" for i in range(n)), 500) < 4.5


def test_items_of_a_tight_list_still_carry_their_ids() -> None:
    doc = segment(parse("- un\n- deux\n-\n- un\n"), 1)
    assert [e.text for e in doc.elements] == ["un", "deux", "un"]
    li_tokens = sorted(doc.id_at)
    assert [doc.id_at[i] for i in li_tokens] == [e.id for e in doc.elements]


def test_repeated_headings_keep_their_ids() -> None:
    """The ids that links already point to (``#titre-2``): a heading whose own text reads
    like a numbered one takes the next free number, as it always did."""
    body = "## Titre\n\n## Titre\n\n## Titre 2\n\n## Titre\n\n## e-1\n\n## E 1\n"
    doc = segment(parse(body), 1)
    assert list(doc.heading_ids.values()) == ["titre", "titre-2", "titre-2-2", "titre-3", "h-e-1", "h-e-1-2"]


def _ids_as_before(texts: list[str]) -> list[str]:
    """The numbering every published id was made with: from ``-2`` on, the first one free."""
    taken: set[str] = set()
    ids = []
    for text in texts:
        slug = slugify(text)
        if slug.startswith(RESERVED_ID_PREFIXES):
            slug = "h-" + slug
        candidate, number = slug, 1
        while candidate in taken:
            number += 1
            candidate = f"{slug}-{number}"
        taken.add(candidate)
        ids.append(candidate)
    return ids


@given(st.lists(st.sampled_from(["Titre", "Titre 2", "Titre 3", "Titre 2 2", "titre-2", "Budget", "h titre",
                                 "e 2", "Été", "2"]), max_size=30))
def test_heading_ids_are_those_of_the_first_free_number(texts: list[str]) -> None:
    doc = segment(parse("".join(f"## {text}\n\n" for text in texts)), 1)
    assert list(doc.heading_ids.values()) == _ids_as_before(texts)
