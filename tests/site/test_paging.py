"""Splitting a long audit over pages (generator/site/paging.py) and the selection's map
without MDS positions (generator/site/selection_map.py): pure functions, fixture-driven."""

from __future__ import annotations

import pytest

from generator.selection.groups import Group
from generator.selection.select import Selection
from generator.site import paging
from generator.site.selection_map import GroupStyle, render

CASES = [
    # items' weights, room, first page's room → pages (weights)
    ("none", [], 10, None, [[]]),
    ("one page", [3, 3, 3], 10, None, [[3, 3, 3]]),
    ("in order, whole items", [4, 4, 4, 4], 10, None, [[4, 4], [4, 4]]),
    ("an item heavier than a page has its own", [3, 25, 3], 10, None, [[3], [25], [3]]),
    ("the first page's frame leaves less room", [4, 4, 4], 10, 5, [[4], [4, 4]]),
    ("no room on the first page still takes one item", [4, 4], 10, 0, [[4], [4]]),
]


@pytest.mark.parametrize("weights,room,first,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_split(weights: list[int], room: int, first: int | None, expected: list[list[int]]) -> None:
    pages = paging.split(weights, lambda w: w, room, first)
    assert pages == expected
    assert [w for page in pages for w in page] == weights, "every item once, in order"


def test_a_weight_counts_bytes_not_characters() -> None:
    assert paging.weight("é") - paging.weight("e") == 1


def test_a_map_without_positions_still_draws_every_member() -> None:
    """Above the MDS limit a perimeter has no positions: its groups are drawn all the same."""
    groups = [Group(members=[f"a{i}" for i in range(30)], chaining=True), Group(members=["b0", "b1"]),
              *[Group(members=[f"s{i}"]) for i in range(200)]]
    selection = Selection(threshold=75, order=[m for g in groups for m in g.members], groups=groups)
    styles = {0: GroupStyle(1, "#123456", "Groupe 1 — 30", "1 : chaîne"), 1: GroupStyle(2, "#654321", "Groupe 2", "2")}
    svg = render(selection, styles, "200 seules", "caption")
    assert svg.count("<g class=\"map-group\"") == 2 and 'class="map-chain"' in svg
    points = sum(part.split('d="')[1].split('"')[0].count("M") for part in svg.split("<path")[1:]
                 if 'class="map-points"' in part or 'class="map-singletons"' in part)
    assert points == 232
    assert render(selection, styles, "", "caption") == render(selection, styles, "", "caption"), "deterministic"
