"""The graph pages (``site-graph.html`` for the site, ``notebooks/<slug>.graph.html`` for each
notebook) and each note page's local graph: their contexts, from the site model's note
graph (:attr:`SiteModel.note_graph`, made once per build)."""

from __future__ import annotations

from typing import Any

from generator.site.graph_svg import legend, svg, text_alternative
from generator.site.graph_view import Drawing, NodeKind
from generator.site.model import SiteModel, note_path
from generator.site.theme import Theme

SITE_GRAPH = "site-graph.html"  # graph.html would give a graph.json sibling: the typed graph's name
GRAPH_BUDGET_KB = 60
"""What a graph page may weigh gzipped (the page budget), at 400 notes and 2,000 extractions."""


def notebook_graph_path(slug: str) -> str:
    return f"notebooks/{slug}.graph.html"


def _drawn(drawing: Drawing, page: str, theme: Theme, label: str) -> dict[str, Any]:
    return {"svg": svg(drawing, page, theme.tr, label), "legend": legend(drawing, theme.tr),
            "nodes": text_alternative(drawing, page, theme.tr), "count": len(drawing.nodes),
            "edges": len(drawing.edges), "hidden": drawing.hidden, "aggregated": 0, "notebook_titles": {},
            "notebooks": sorted({n.notebook for n in drawing.nodes if n.notebook})}


def graph_title(site: SiteModel, theme: Theme, notebook: str = "") -> str:
    return (theme.tr("graph_title_notebook", title=site.publication.notebooks[notebook].title) if notebook
            else theme.tr("graph_title"))


def graph_path(notebook: str = "") -> str:
    return notebook_graph_path(notebook) if notebook else SITE_GRAPH


def graph_context(site: SiteModel, theme: Theme, ctx: dict[str, Any], notebook: str,
                  drawing: Drawing) -> dict[str, Any]:
    """A graph page's context (the site's, or one notebook's), added to the page's ``ctx``
    (:func:`generator.site.pages.common` of its path and title), from its ``drawing``
    (:func:`~generator.site.graph_view.page_drawing`)."""
    path, title = graph_path(notebook), graph_title(site, theme, notebook)
    aggregated = sum(n.count for n in drawing.nodes if n.kind is NodeKind.MORE)
    ctx["graph"] = {**_drawn(drawing, path, theme, title), "title": title, "aggregated": aggregated,
                    "notebook_titles": {slug: nb.title for slug, nb in site.publication.notebooks.items()},
                    "others": [{"title": nb.title, "url": ctx["url"](notebook_graph_path(slug))}
                               for slug, nb in site.publication.notebooks.items() if slug != notebook],
                    "site_url": ctx["url"](SITE_GRAPH) if notebook else None, "notebook": notebook,
                    "notebook_title": site.publication.notebooks[notebook].title if notebook else ""}
    return ctx


def local_graph(site: SiteModel, theme: Theme, slug: str) -> dict[str, Any] | None:
    """A note page's local graph (its neighbours at depth 1), or ``None`` when it has none."""
    drawing = site.note_graph.local(slug)
    if drawing is None:
        return None
    page = note_path(slug)
    return _drawn(drawing, page, theme, theme.tr("local_graph_label", title=site.publication.notes[slug].title))
