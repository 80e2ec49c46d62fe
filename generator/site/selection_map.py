"""The selection's map: each group drawn as a cluster of its own, the singletons apart. Pure.

One scatter of the whole perimeter's MDS positions was a blob at 1,700 extractions: one
far group stretched the scale and every other point fell into a corner, and a chained
group of 500 covered the rest. Here each group of two or more gets a cell, in the list's
order (its number above it), sized by its members; inside the cell its members keep the
shape of their MDS positions (a chain is drawn long) with their membership edges, and a
chained group is framed with a dotted line and called a chain. The singletons come after,
apart, as small grey points in the list's order. Integer coordinates; points are
zero-length strokes with round caps (a few bytes each), so the map stays light.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from generator.selection.select import Selection

WIDTH = 640
GAP = 16  # between cells, and round the map
LABEL = 16  # the height of a cell's number, above it
SINGLE_PITCH = 7  # between two singletons' points
SINGLES_COLOUR = "#8a8f98"  # readable on the light and the dark panel


@dataclass(frozen=True)
class GroupStyle:
    """How a group of two or more is drawn: its number in the list, colour and label."""

    number: int
    colour: str
    title: str  # the group's name, for the cluster's <title>
    label: str  # the text above the cell: its number, or "N : chaîne"


def cell_side(members: int) -> int:
    """A group's cell grows with the square root of its size: area in proportion to members."""
    return min(WIDTH - 2 * GAP, round(28 + 9 * math.sqrt(members)))


def _sunflower(count: int) -> list[tuple[float, float]]:
    """Evenly spread positions in the unit square, for a group without MDS positions
    (a perimeter above the map's limit); deterministic."""
    golden = math.pi * (3 - math.sqrt(5))
    return [(0.5 + 0.5 * math.sqrt((k + 0.5) / count) * math.cos(k * golden),
             0.5 + 0.5 * math.sqrt((k + 0.5) / count) * math.sin(k * golden)) for k in range(count)]


def _unit_positions(members: list[str], points: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """Members' positions in the unit square: their MDS positions scaled into it (one scale
    for both axes, so a chain stays long), else a sunflower."""
    if not all(m in points for m in members):
        return dict(zip(members, _sunflower(len(members)), strict=True))
    xs, ys = [points[m][0] for m in members], [points[m][1] for m in members]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) or 1.0
    off_x = (1 - (max(xs) - min(xs)) / span) / 2  # centred on the shorter axis
    off_y = (1 - (max(ys) - min(ys)) / span) / 2
    return {m: (off_x + (points[m][0] - min(xs)) / span, off_y + (points[m][1] - min(ys)) / span) for m in members}


def render(selection: Selection, styles: dict[int, GroupStyle], singles_label: str, caption_id: str) -> str:
    """The map's SVG; ``styles``: by index in ``selection.groups``, each group of two or
    more; ``singles_label``: the text above the singletons' points."""
    if not selection.groups:
        return ""
    parts: list[str] = []
    x, y, row = GAP, GAP, 0  # shelf packing: cells left to right, a new row when one is full
    for index, group in enumerate(selection.groups):
        if len(group.members) < 2:
            continue
        style = styles[index]
        side = cell_side(len(group.members))
        wide = max(side, 7 * len(style.label))  # the label is not to run into the next cell's
        if x + wide > WIDTH - GAP and x > GAP:
            x, y, row = GAP, y + row + LABEL + GAP, 0
        inner = side - 8
        unit = _unit_positions(group.members, selection.points)
        at = {m: (round(x + 4 + u * inner), round(y + LABEL + 4 + v * inner)) for m, (u, v) in unit.items()}
        edges = "".join(f"M{at[e.member][0]} {at[e.member][1]}L{at[e.via][0]} {at[e.via][1]}" for e in group.edges)
        dots = "".join(f"M{px} {py}h0" for px, py in sorted(at.values()))
        frame = ""
        if group.chaining:
            frame = (f'<rect class="map-chain" x="{x}" y="{y + LABEL}" width="{side}" height="{side}" rx="6" '
                     f'fill="none" stroke="{style.colour}" stroke-dasharray="4 3"/>')
        parts.append(
            f'<g class="map-group" data-group="{style.number}"><title>{escape(style.title)}</title>{frame}'
            f'<path fill="none" stroke="{style.colour}" stroke-width="1.2" d="{edges}"/>'
            f'<path class="map-points" fill="none" stroke="{style.colour}" stroke-width="6" stroke-linecap="round" '
            f'd="{dots}"/>'
            f'<text x="{x}" y="{y + LABEL - 4}" fill="{style.colour}" font-size="12">{escape(style.label)}</text></g>')
        x += wide + GAP
        row = max(row, side)
    bottom = y + row + LABEL + GAP if row else GAP
    singles = [g.members[0] for g in selection.groups if len(g.members) == 1]
    if singles:
        per_row = (WIDTH - 2 * GAP) // SINGLE_PITCH + 1
        parts.append(f'<text x="{GAP}" y="{bottom + 8}" fill="{SINGLES_COLOUR}" font-size="12">{escape(singles_label)}</text>')
        top = bottom + LABEL + 4
        dots = "".join(f"M{GAP + k % per_row * SINGLE_PITCH} {top + k // per_row * SINGLE_PITCH}h0"
                       for k in range(len(singles)))
        parts.append(f'<path class="map-singletons" fill="none" stroke="{SINGLES_COLOUR}" stroke-width="4" '
                     f'stroke-linecap="round" d="{dots}"/>')
        bottom = top + (len(singles) - 1) // per_row * SINGLE_PITCH + GAP
    return (f'<svg class="selection-map" viewBox="0 0 {WIDTH} {bottom}" role="img" '
            f'aria-labelledby="{caption_id}" xmlns="http://www.w3.org/2000/svg">' + "".join(parts) + "</svg>")
