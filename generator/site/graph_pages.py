"""The graph pages (``site-graph.html`` for the site, ``notebooks/<slug>.graph.html`` for each
notebook) and each note page's local graph: their contexts, from the site model's note
graph (:func:`site_graph`, made once per build)."""

from __future__ import annotations

from typing import Any

from generator.site.graph_svg import legend, svg, text_alternative
from generator.site.graph_view import Drawing, NoteGraph, local_drawing, note_graph, page_drawing
from generator.site.model import SiteModel, note_path, notebook_path
from generator.site.theme import Theme

SITE_GRAPH = "site-graph.html"  # graph.html would give a graph.json sibling: the typed graph's name
GRAPH_BUDGET_KB = 60
"""What a graph page may weigh gzipped (the page budget), at 400 notes and 2,000 extractions."""


def notebook_graph_path(slug: str) -> str:
    return f"notebooks/{slug}.graph.html"


def site_graph(site: SiteModel) -> NoteGraph:
    """The published notes and notebooks, with the citations (article → note), body links
    (note → note, or to a note's extractions and comments) and memberships between them."""
    publication = site.publication
    notebooks = {slug: nb.title for slug, nb in publication.notebooks.items()}
    paths = {f"note:{slug}": note_path(slug) for slug in publication.notes}
    paths.update({f"notebook:{slug}": notebook_path(slug) for slug in notebooks})
    cites = [(slug, link.note) for slug, audit in site.articles.items() if slug in publication.notes
             for link in audit.links if link.note and not link.broken]
    links = []
    for slug, uses in site.links.items():
        for _use, target in uses:
            if target.kind == "note":
                links.append((slug, target.key))
            elif target.kind in ("extraction", "comment") and target.note and slug not in site.articles:
                links.append((slug, target.note))  # an article's markers are its citations, counted above
    return note_graph(publication.notes, notebooks, paths, cites, links)


def _drawn(drawing: Drawing, page: str, theme: Theme, label: str) -> dict[str, Any]:
    return {"svg": svg(drawing, page, theme.tr, label), "legend": legend(drawing, theme.tr),
            "nodes": text_alternative(drawing, page, theme.tr), "count": len(drawing.nodes),
            "edges": len(drawing.edges), "hidden": drawing.hidden, "aggregated": 0, "notebook_titles": {},
            "notebooks": sorted({n.notebook for n in drawing.nodes if n.notebook})}


def graph_context(site: SiteModel, theme: Theme, notebook: str = "") -> dict[str, Any]:
    """A graph page's context: the site's, or one notebook's."""
    from generator.site.pages import common

    path = notebook_graph_path(notebook) if notebook else SITE_GRAPH
    title = (theme.tr("graph_title_notebook", title=site.publication.notebooks[notebook].title) if notebook
             else theme.tr("graph_title"))
    ctx = common(site, theme, path, title, "graph")
    drawing = page_drawing(site.note_graph, notebook)
    aggregated = sum(n.count for n in drawing.nodes if n.kind == "more")
    ctx["graph"] = {**_drawn(drawing, path, theme, title), "title": title, "aggregated": aggregated,
                    "notebook_titles": {slug: nb.title for slug, nb in site.publication.notebooks.items()},
                    "others": [{"title": nb.title, "url": ctx["url"](notebook_graph_path(slug))}
                               for slug, nb in site.publication.notebooks.items() if slug != notebook],
                    "site_url": ctx["url"](SITE_GRAPH) if notebook else None}
    return ctx


def local_graph(site: SiteModel, theme: Theme, slug: str) -> dict[str, Any] | None:
    """A note page's local graph (its neighbours at depth 1), or ``None`` when it has none."""
    drawing = local_drawing(site.note_graph, slug)
    if drawing is None:
        return None
    page = note_path(slug)
    return _drawn(drawing, page, theme, theme.tr("local_graph_label", title=site.publication.notes[slug].title))


def local_reads(site: SiteModel, slug: str) -> object:
    """What a note's local graph reads of the others: its neighbours and their edges to it."""
    drawing = local_drawing(site.note_graph, slug)
    return None if drawing is None else (drawing.nodes, drawing.edges, drawing.hidden)
