"""A :class:`~generator.site.graph_view.Drawing` as markup: an SVG whose every node is a link
(it works without JavaScript; the page's script adds zoom, pan, filters, a find box and the
highlight of a node's neighbours), its legend, and a text alternative listing the same nodes
and edges. Every node's label is written; those that do not fit beside it are shown on
hover, focus and find only. Pure: the drawing in, HTML out, every text escaped where it lands.

Each kind of node has its shape and colour (a class, coloured by the theme's stylesheet in
both schemes): a note a circle, a wiki a square, a synthesis a diamond, an answer a
triangle, a notebook a hexagon, an aggregate a dashed circle; each kind of edge its line.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape

from generator.site.graph_view import Drawing, EdgeKind, Node, NodeKind
from generator.site.model import relative


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _polygon(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{_number(x)},{_number(y)}" for x, y in points)


def shape(kind: NodeKind, x: float, y: float, r: float) -> str:
    """The node's mark, centred on (x, y)."""
    if kind is NodeKind.WIKI:
        return f'<rect x="{_number(x - r)}" y="{_number(y - r)}" width="{_number(2 * r)}" height="{_number(2 * r)}"/>'
    if kind is NodeKind.SYNTHESIS:
        return f'<polygon points="{_polygon([(x, y - r * 1.3), (x + r * 1.3, y), (x, y + r * 1.3), (x - r * 1.3, y)])}"/>'
    if kind is NodeKind.ANSWER:
        return f'<polygon points="{_polygon([(x, y - r * 1.3), (x + r * 1.2, y + r), (x - r * 1.2, y + r)])}"/>'
    if kind is NodeKind.NOTEBOOK:
        corners = [(x + r * math.cos(math.pi / 3 * k), y + r * math.sin(math.pi / 3 * k)) for k in range(6)]
        return f'<polygon points="{_polygon(corners)}"/>'
    return f'<circle cx="{_number(x)}" cy="{_number(y)}" r="{_number(r)}"/>'


def node_title(node: Node, tr: Callable[..., str]) -> str:
    if node.kind is NodeKind.MORE:
        return tr("graph_more", n=node.count)
    return node.title


def svg(drawing: Drawing, page: str, tr: Callable[..., str], label: str) -> str:
    """The drawing as an SVG of links, for ``page`` (hrefs relative to it)."""
    index = {n.key: i for i, n in enumerate(drawing.nodes)}
    by_key = {n.key: n for n in drawing.nodes}
    out = [f'<svg class="graph-svg" viewBox="0 0 {drawing.width} {drawing.height}" width="{drawing.width}" '
           f'height="{drawing.height}" role="group" aria-label="{escape(label)}">', '<g class="edges">']
    for edge in drawing.edges:
        (x1, y1), (x2, y2) = drawing.positions[edge.source], drawing.positions[edge.target]
        heavy = " heavy" if edge.weight > 2 else ""
        if by_key[edge.source].notebook != by_key[edge.target].notebook and edge.kind is EdgeKind.LINKS:
            heavy += " across"  # between two notebooks' discs: drawn lighter, or they would hide both
        out.append(f'<line class="edge {edge.kind}{heavy}" x1="{_number(x1)}" y1="{_number(y1)}" x2="{_number(x2)}" '
                   f'y2="{_number(y2)}" data-s="{index[edge.source]}" data-t="{index[edge.target]}"/>')
    out.append('</g><g class="nodes">')
    for i, node in enumerate(drawing.nodes):
        x, y = drawing.positions[node.key]
        r = drawing.radius[node.key]
        title = node_title(node, tr)
        near = " ".join(str(index[k]) for k in drawing.neighbours.get(node.key, ()) if k in index)
        # every node's label is written: those that fit shown, the others (class "aside") shown
        # by the stylesheet and script on hover, focus and find
        shown = f"+{node.count}" if node.kind is NodeKind.MORE else drawing.labels.get(node.key, title)
        aside = "" if node.key in drawing.labelled or node.kind is NodeKind.MORE else ' class="aside"'
        side = drawing.sides.get(node.key, "")
        where = (f'x="{_number(x - r - 3)}" y="{_number(y + 4)}" text-anchor="end"' if side == "left" else
                 f'x="{_number(x)}" y="{_number(y + r + 13)}" text-anchor="middle"' if side == "below" else
                 f'x="{_number(x)}" y="{_number(y - r - 5)}" text-anchor="middle"' if side == "above" else
                 f'x="{_number(x + r + 3)}" y="{_number(y + 4)}"')
        text = f'<text{aside} {where}>{escape(shown, quote=False)}</text>'
        folded = tr("graph_folded", extractions=tr("graph_extractions", n=node.extractions),
                    comments=tr("count_comments", n=node.comments)) if node.extractions else ""
        out.append(f'<a href="{escape(relative(node.path, page))}" class="node {node.kind}" data-i="{i}" '
                   f'data-n="{near}" data-nb="{escape(node.notebook)}" data-kind="{node.kind}">'
                   f'<title>{escape(title + folded, quote=False)}</title>{shape(node.kind, x, y, r)}{text}</a>')
    out.append("</g></svg>")
    return "".join(out)


def legend(drawing: Drawing, tr: Callable[..., str]) -> list[dict[str, str]]:
    """The kinds of node and edge the drawing holds, each with its sample mark."""
    kinds = [k for k in NodeKind if any(n.kind is k for n in drawing.nodes)]
    edges = [k for k in EdgeKind if any(e.kind is k for e in drawing.edges)]
    items = [{"kind": str(k), "label": tr(f"graph_kind_{k}"),
              "mark": f'<svg class="legend-mark" viewBox="0 0 20 20" width="20" height="20" aria-hidden="true">'
                      f'<g class="node {k}">{shape(k, 10, 10, 6)}</g></svg>'} for k in kinds]
    items += [{"kind": str(k), "label": tr(f"graph_edge_{k.replace('-', '_')}"),
               "mark": f'<svg class="legend-mark" viewBox="0 0 28 20" width="28" height="20" aria-hidden="true">'
                       f'<line class="edge {k}" x1="2" y1="10" x2="26" y2="10"/></svg>'} for k in edges]
    return items


def text_alternative(drawing: Drawing, page: str, tr: Callable[..., str]) -> list[dict[str, object]]:
    """The same nodes and edges as a list: each node with its page and, by kind, the nodes
    its edges lead to (an edge is listed at its source)."""
    by_key = {n.key: n for n in drawing.nodes}
    out: dict[str, dict[str, list[dict[str, str]]]] = {n.key: {} for n in drawing.nodes}
    for edge in drawing.edges:
        target = by_key[edge.target]
        out[edge.source].setdefault(str(edge.kind), []).append(
            {"title": node_title(target, tr), "url": relative(target.path, page),
             "weight": str(edge.weight) if edge.weight > 1 else ""})
    return [{"title": node_title(node, tr), "url": relative(node.path, page), "kind": tr(f"graph_kind_{node.kind}"),
             "extractions": node.extractions,
             "edges": [{"label": tr(f"graph_edge_{kind.replace('-', '_')}"), "targets": targets}
                       for kind, targets in sorted(out[node.key].items())]}
            for node in drawing.nodes]
