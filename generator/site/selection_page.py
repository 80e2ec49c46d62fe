"""The selection page of a wiki: groups enumerated with their explanations and
warnings, the oppositions, and the 2-D map (SVG, no script). Pure."""

from __future__ import annotations

from html import escape
from typing import Any, NotRequired, TypedDict

from generator.corpus.model import Extraction, Note
from generator.selection.select import Selection
from generator.site.model import SiteModel, note_path, selection_path
from generator.site.pages import common
from generator.site.theme import Theme

MAP_CAPTION_ID = "selection-map-caption"  # the template's <figcaption>: the map's accessible name
PALETTE = ["#1d5c87", "#b5532a", "#2f7d4a", "#8a4fa3", "#b08a00", "#3a7f8f", "#a3341f", "#5b6570"]


class _ExtractionView(TypedDict):
    """An extraction as the template shows it (``joined``: for a group's members)."""

    id: str
    quote: str
    note: str
    url: str
    comments: int
    disagreements: int
    joined: NotRequired[str]


class _GroupView(TypedDict):
    """A group as the template shows it."""

    number: int
    size: int
    members: list[_ExtractionView]
    colour: str
    colour_index: int
    diameter: str
    beyond: int
    chaining: bool
    bridges: list[_ExtractionView]


def selection_context(site: SiteModel, theme: Theme, slug: str) -> dict[str, Any]:
    publication = site.publication
    wiki = publication.notes[slug]
    selection = site.selections[slug]
    path = selection_path(slug)
    ctx = common(site, theme, path, theme.tr("selection_title", title=wiki.title), "selection")
    url = ctx["url"]
    extraction = site.extractions

    def describe(ext_id: str) -> _ExtractionView:
        note, item = extraction[ext_id]
        anchored = site.anchored[note.slug].anchors[ext_id].status.is_live
        fragment = f"#ext-{ext_id}" if anchored else f"#entry-{ext_id}"
        return {"id": ext_id, "quote": item.quote, "note": note.title, "url": url(note_path(note.slug)) + fragment,
                "comments": len(item.live_comments), "disagreements": item.disagreements}

    groups: list[_GroupView] = []
    for number, group in enumerate(selection.groups, start=1):
        edges = {edge.member: edge for edge in group.edges}
        members: list[_ExtractionView] = []
        for member in group.members:
            entry = describe(member)
            entry["joined"] = ""
            edge = edges.get(member)
            if edge is not None:
                entry["joined"] = theme.tr("joined", distance=f"{edge.distance:g}", quote=extraction[edge.via][1].quote[:60],
                                           threshold=f"{selection.threshold:g}")
            members.append(entry)
        groups.append({
            "number": number, "size": len(group.members), "members": members,
            "colour": PALETTE[(number - 1) % len(PALETTE)], "colour_index": (number - 1) % len(PALETTE),
            "diameter": f"{group.diameter:g}", "beyond": round(100 * group.beyond_share),
            "chaining": group.chaining, "bridges": [describe(b) for b in group.bridges],
        })
    oppositions = None
    recorded = site.oppositions.get(slug)
    if recorded is not None:
        oppositions = {"method": recorded.provenance.get("method", "?"), "model": recorded.provenance.get("model", ""),
                       "items": [{"question": o.question, "a": describe(o.a), "b": describe(o.b),
                                  # a pair added beside the file's says how it was found itself
                                  "method": (o.provenance or {}).get("method", ""),
                                  "model": (o.provenance or {}).get("model", "")}
                                 for o in recorded.oppositions if o.a in extraction and o.b in extraction]}
    erased, lost = selection.central_erased
    ctx.update({
        "wiki": {"title": wiki.title, "url": url(note_path(slug))},
        "threshold": f"{selection.threshold:g}", "groups": groups, "oppositions": oppositions,
        "total": len(selection.order), "erased": erased, "lost": lost,
        "vectors": theme.tr(f"vectors_{selection.vectors.replace('-', '_')}"),
        "map": _svg(selection, groups, extraction),
    })
    return ctx


def _svg(selection: Selection, groups: list[_GroupView], extraction: dict[str, tuple[Note, Extraction]]) -> str:
    if not selection.points:
        return ""
    xs = [p[0] for p in selection.points.values()]
    ys = [p[1] for p in selection.points.values()]
    low_x, low_y = min(xs), min(ys)  # once: per point, this was quadratic in the perimeter
    span_x, span_y = (max(xs) - low_x) or 1.0, (max(ys) - low_y) or 1.0
    width, height, pad = 640, 420, 24

    def place(point: tuple[float, float]) -> tuple[float, float]:
        return (round(pad + (point[0] - low_x) / span_x * (width - 2 * pad), 1),
                round(pad + (point[1] - low_y) / span_y * (height - 2 * pad), 1))

    colour = {m["id"]: g["colour"] for g in groups for m in g["members"]}
    lines, dots = [], []
    for group in selection.groups:
        for edge in group.edges:
            (x1, y1), (x2, y2) = place(selection.points[edge.member]), place(selection.points[edge.via])
            lines.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour[edge.member]}" stroke-width="1.5"/>')
    for ext_id in sorted(selection.points):
        x, y = place(selection.points[ext_id])
        quote = escape(extraction[ext_id][1].quote[:80])
        dots.append(f'<circle cx="{x}" cy="{y}" r="5" fill="{colour[ext_id]}" data-ext="{escape(ext_id)}">'
                    f'<title>{escape(ext_id)} — {quote}</title></circle>')
    return (f'<svg class="selection-map" viewBox="0 0 {width} {height}" role="img" '
            f'aria-labelledby="{MAP_CAPTION_ID}" xmlns="http://www.w3.org/2000/svg">'
            + "".join(lines) + "".join(dots) + "</svg>")
