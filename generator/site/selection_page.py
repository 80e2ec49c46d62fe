"""The selection page of a wiki: groups enumerated with their explanations and
warnings, the oppositions, and the 2-D map (SVG, no script). Pure."""

from __future__ import annotations

from functools import partial
from typing import Any, NotRequired, TypedDict

from generator.selection.groups import pair_cap
from generator.selection.select import MAP_LIMIT, Selection
from generator.selection.threshold import CEILING, ThresholdRule
from generator.site import paging
from generator.site.model import SiteModel, extraction_fragment, note_path, relative, selection_path
from generator.site.pages import anchoring_view, common, counts_worded, method_label
from generator.site.selection_map import GroupStyle
from generator.site.selection_map import render as render_map
from generator.site.theme import Theme

MAP_CAPTION_ID = "selection-map-caption"  # the template's <figcaption>: the map's accessible name
PALETTE = ["#1d5c87", "#b5532a", "#2f7d4a", "#8a4fa3", "#b08a00", "#3a7f8f", "#a3341f", "#5b6570"]


class _ExtractionView(TypedDict):
    """An extraction as the template shows it (``joined``: for a group's members)."""

    id: str
    quote: str
    note: str
    url: str
    words: str  # the quote's first words, to name it in a warning
    comments: int
    disagreements: int
    comments_label: str
    disagreements_label: str
    anchoring: dict[str, str] | None  # relocated or detached, as its note page says (pages.anchoring_view)
    joined: NotRequired[str]
    number: NotRequired[int]  # a singleton's group number, in a run of them


class _GroupView(TypedDict):
    """A group as the template shows it (``members``: the part of it on this page)."""

    number: int
    size: int
    members: list[_ExtractionView]
    colour: str
    colour_index: int
    diameter: str
    beyond: int
    chaining: bool
    bridges: list[_ExtractionView]
    continued: bool  # its first members are on the page before
    continues: bool  # its last members are on the page after


class _Block(TypedDict):
    """What a page lists, in order: one group, or a run of singletons (``first``–``last``:
    their group numbers), each member then with its ``number``."""

    kind: str  # "group" or "singletons"
    group: NotRequired[_GroupView]
    first: NotRequired[int]
    last: NotRequired[int]
    members: NotRequired[list[_ExtractionView]]


def selection_pages(site: SiteModel, theme: Theme, slug: str) -> list[tuple[str, dict[str, Any]]]:
    """A wiki's selection, ``(path, context)`` per page: the first with the summary, the map
    and the oppositions, then every group in order, enumerated whole, over as many pages as
    the page budget asks (a group larger than a page goes on over the next)."""
    publication = site.publication
    wiki = publication.notes[slug]
    selection = site.selections[slug]
    first_path = selection_path(slug)
    url = partial(relative, page=first_path)  # every page is in notes/: one set of links
    extraction = site.extractions

    addresses: dict[str, str] = {}  # note → its page's address from here: found once per note, not per member
    counts = counts_worded(theme)

    def describe(ext_id: str) -> _ExtractionView:
        note, item = extraction[ext_id]
        if note.slug not in addresses:
            addresses[note.slug] = url(note_path(note.slug))
        comments, disagreements = len(item.live_comments), item.disagreements
        worded = counts(comments, disagreements)
        words = item.quote.split()
        return {"id": ext_id, "quote": item.quote, "note": note.title,
                "words": " ".join(words[:8]) + ("…" if len(words) > 8 else ""),
                "url": f"{addresses[note.slug]}#{extraction_fragment(site.statuses, ext_id)}",
                "comments": comments, "disagreements": disagreements,
                "comments_label": worded["comments_label"], "disagreements_label": worded["disagreements_label"],
                "anchoring": anchoring_view(site, theme, note.slug, ext_id)}

    groups: list[_GroupView] = []
    for number, group in enumerate(selection.groups, start=1):
        edges = {edge.member: edge for edge in group.edges}
        members: list[_ExtractionView] = []
        for member in group.members:
            entry = describe(member)
            entry["joined"] = "" if group.compared else theme.tr("not_compared")
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
            "continued": False, "continues": False,
        })
    oppositions = None
    recorded = site.oppositions.get(slug)
    if recorded is not None:
        oppositions = {"method": method_label(theme, recorded.provenance.get("method", "?")), "model": recorded.provenance.get("model", ""),
                       "items": [{"question": o.question, "a": describe(o.a), "b": describe(o.b),
                                  # a pair added beside the file's says how it was found itself
                                  "method": method_label(theme, (o.provenance or {}).get("method", "")),
                                  "model": (o.provenance or {}).get("model", "")}
                                 for o in recorded.oppositions if o.a in extraction and o.b in extraction]}
        if recorded.examined:  # a model's pass, request by request: how much of it was read
            of = recorded.examined[-1].of  # the last run's plan (another context makes other requests)
            oppositions["examined"] = len({e.key for e in recorded.examined if e.of == of})
            oppositions["of"] = of
    svg = _svg(theme, selection, groups)
    budget = paging.page_budget(site)
    frame = len(svg) + sum(paging.weight(o["question"], o["a"]["quote"], o["b"]["quote"])
                           for o in (oppositions or {}).get("items", []))
    placed = [(g, m) for g in groups for m in g["members"]]
    split = paging.split(placed, lambda gm: paging.weight(gm[1]["quote"], gm[1]["note"], gm[1].get("joined", "")),
                         paging.capacity(budget), paging.capacity(budget) - frame)
    erased, lost = selection.central_erased
    uncompared = sum(not g.compared for g in selection.groups)
    shared = {
        "wiki": {"title": wiki.title, "url": url(note_path(slug))},
        "threshold": f"{selection.threshold:g}", "groups_count": len(groups),
        "threshold_rule": theme.tr("threshold_automatic", ceiling=f"{CEILING:g}")
        if selection.rule is ThresholdRule.AUTOMATIC else theme.tr("threshold_setting"),
        "total": len(selection.order), "erased": erased, "lost": lost,
        # past the perimeter's cap on pairs, the members left alone unseen are said, with how many were compared
        "uncompared": theme.tr("selection_uncompared", compared=len(selection.order) - uncompared,
                               uncompared=uncompared, cap=pair_cap(len(selection.order)),
                               limit=f"{CEILING if selection.rule is ThresholdRule.AUTOMATIC else selection.threshold:g}")
        if uncompared else "",
        "vectors": theme.tr(f"vectors_{selection.vectors.replace('-', '_')}"),
        # above the map's limit no positions are computed: the groups are drawn, their shapes not
        "map_caption": theme.tr("selection_map") if selection.points or len(selection.order) < 2
        else theme.tr("selection_map_unplaced", limit=MAP_LIMIT),
    }
    page_list = [{"number": n, "url": url(selection_path(slug, n))} for n in range(1, len(split) + 1)]
    result = []
    for number, part in enumerate(split, start=1):
        path = selection_path(slug, number)
        ctx = common(site, theme, path, theme.tr("selection_title", title=wiki.title), "selection")
        ctx.update(shared)
        ctx.update({"blocks": _blocks(part), "pages": page_list if len(split) > 1 else [], "page_number": number,
                    "oppositions": oppositions, "map": svg if number == 1 else "", "first_page": number == 1})
        result.append((path, ctx))
    return result


def _blocks(part: list[tuple[_GroupView, _ExtractionView]]) -> list[_Block]:
    """One page's members as the template lists them: each group with its members on this
    page (``continued``/``continues`` when it spans pages); consecutive singletons as one run."""
    blocks: list[_Block] = []
    for index, (group, member) in enumerate(part):
        if group["size"] == 1:
            run = blocks[-1] if blocks and blocks[-1]["kind"] == "singletons" else None
            if run is None:
                run = {"kind": "singletons", "first": group["number"], "last": group["number"], "members": []}
                blocks.append(run)
            run["last"] = group["number"]
            run["members"].append({**member, "number": group["number"]})
            continue
        last = blocks[-1] if blocks else None
        if last is None or last["kind"] != "group" or last["group"]["number"] != group["number"]:
            shown: _GroupView = {**group, "members": [],
                                 "continued": index == 0 and member is not group["members"][0]}
            blocks.append({"kind": "group", "group": shown})
        view = blocks[-1]["group"]
        view["members"].append(member)
        view["continues"] = member is part[-1][1] and member is not group["members"][-1]
    return blocks


def _svg(theme: Theme, selection: Selection, groups: list[_GroupView]) -> str:
    styles = {index: GroupStyle(view["number"], view["colour"], theme.tr("group_title", number=view["number"], n=view["size"]),
                                theme.tr("map_chain", number=view["number"]) if view["chaining"] else str(view["number"]))
              for index, view in enumerate(groups) if view["size"] > 1}
    singles = sum(len(g.members) == 1 for g in selection.groups)
    return render_map(selection, styles, theme.tr("map_singles", n=singles), MAP_CAPTION_ID)
