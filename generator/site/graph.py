"""The typed graph of the published corpus (networkx), with a whitelist of node and edge
types, exported as node-link JSON (sorted) and as schema.org JSON-LD."""

from __future__ import annotations

import networkx as nx

from generator.corpus.model import NoteType
from generator.site.jsonout import dumps
from generator.site.model import SiteModel, base_path, note_path, notebook_path

NODE_TYPES = frozenset({"base", "notebook", "category", "note", "element", "extraction", "comment", "wiki",
                        "synthesis", "section", "claim", "group", "opposition"})
EDGE_TYPES = frozenset({"groups", "member-of", "in-category", "anchored-in", "comments-on", "cites", "discarded-from",
                        "member-of-group", "opposes", "supersedes", "has-element", "has-section", "has-claim"})


class TypedGraph:
    """A MultiDiGraph that refuses node and edge types outside the whitelist."""

    def __init__(self) -> None:
        self.graph = nx.MultiDiGraph()

    def node(self, key: str, kind: str, **attributes: object) -> None:
        if kind not in NODE_TYPES:
            raise ValueError(f"node type {kind!r} is not in the graph's whitelist")
        self.graph.add_node(key, type=kind, **attributes)

    def edge(self, source: str, target: str, kind: str, **attributes: object) -> None:
        if kind not in EDGE_TYPES:
            raise ValueError(f"edge type {kind!r} is not in the graph's whitelist")
        self.graph.add_edge(source, target, key=kind, type=kind, **attributes)


def build_graph(site: SiteModel) -> TypedGraph:
    publication = site.publication
    g = TypedGraph()
    for slug, base in publication.bases.items():
        g.node(f"base:{slug}", "base", title=base.title, url=site.base_url + base_path(slug))
    for slug, notebook in publication.notebooks.items():
        g.node(f"notebook:{slug}", "notebook", title=notebook.title, url=site.base_url + notebook_path(slug))
        for base in site.bases_of(slug):
            g.edge(f"base:{base}", f"notebook:{slug}", "groups")
        for axis in notebook.axes:
            for category in axis.categories:
                g.node(f"category:{slug}/{axis.key}/{category}", "category", title=category, axis=axis.key)
    for slug, note in publication.notes.items():
        kind = {NoteType.NOTE: "note", NoteType.WIKI: "wiki", NoteType.SYNTHESIS: "synthesis"}[note.type]
        g.node(f"note:{slug}", kind, title=note.title, url=site.base_url + note_path(slug),
               date=note.date.isoformat() if note.date else "")
        for membership in note.memberships:
            g.edge(f"note:{slug}", f"notebook:{membership.notebook}", "member-of")
            for axis, values in sorted(membership.categories.items()):
                for value in values:
                    g.edge(f"note:{slug}", f"category:{membership.notebook}/{axis}/{value}", "in-category")
        anchored = site.anchored[slug]
        for element in anchored.document.elements:
            g.node(f"element:{slug}/{element.id}", "element", block=element.kind)
            g.edge(f"note:{slug}", f"element:{slug}/{element.id}", "has-element")
        for extraction in note.extractions:
            anchor = anchored.anchors[extraction.id]
            g.node(f"extraction:{extraction.id}", "extraction", quote=extraction.quote, state=anchor.status.value,
                   url=f"{site.base_url}{note_path(slug)}#ext-{extraction.id}")
            for portion in anchor.portions if anchor.status.is_live else ():
                element = anchored.document.elements[portion.element]
                g.edge(f"extraction:{extraction.id}", f"element:{slug}/{element.id}", "anchored-in",
                       start=portion.start, end=portion.end)
            for comment in extraction.comments:
                g.node(f"comment:{comment.id}", "comment", stance=comment.stance,
                       withdrawn=comment.withdrawn is not None)
                g.edge(f"comment:{comment.id}", f"extraction:{extraction.id}", "comments-on")
    for slug, audit in site.articles.items():
        sections = sorted({(c.section_index, c.section) for c in audit.claims})
        for index, title in sections:
            g.node(f"section:{slug}/{index}", "section", title=title or "(lead)")
            g.edge(f"note:{slug}", f"section:{slug}/{index}", "has-section")
        for claim in audit.claims:
            g.node(f"claim:{slug}/{claim.id}", "claim", text=claim.text, sourced=claim.sourced)
            g.edge(f"section:{slug}/{claim.section_index}", f"claim:{slug}/{claim.id}", "has-claim")
        for assessment in site.assessments.get(slug, []):
            link = assessment.link
            target = f"extraction:{link.extraction}" if link.marker.kind == "ext" else f"comment:{link.marker.key}"
            if target in g.graph:
                g.edge(f"claim:{slug}/{assessment.claim.id}", target, "cites", state=assessment.state.state)
        for item in audit.discarded or []:
            if f"extraction:{item.extraction}" in g.graph:
                g.edge(f"extraction:{item.extraction}", f"note:{slug}", "discarded-from")
        if audit.supersedes and f"note:{audit.supersedes}" in g.graph:
            g.edge(f"note:{slug}", f"note:{audit.supersedes}", "supersedes")
    for slug, selection in site.selections.items():
        for number, group in enumerate(selection.groups, start=1):
            g.node(f"group:{slug}/{number}", "group", size=len(group.members), chaining=group.chaining)
            for member in group.members:
                g.edge(f"extraction:{member}", f"group:{slug}/{number}", "member-of-group")
    for slug, record in site.oppositions.items():
        for number, item in enumerate(record.oppositions, start=1):
            key = f"opposition:{slug}/{number}"
            g.node(key, "opposition", question=item.question, method=record.provenance.get("method", ""))
            for member in (item.a, item.b):
                if f"extraction:{member}" in g.graph:
                    g.edge(f"extraction:{member}", key, "opposes")
    return g


def graph_outputs(site: SiteModel) -> dict[str, bytes]:
    g = build_graph(site).graph
    nodes = [{"id": key, **{k: v for k, v in sorted(data.items())}} for key, data in sorted(g.nodes(data=True))]
    links = sorted(({"source": u, "target": v, **{k: val for k, val in sorted(data.items())}}
                    for u, v, data in g.edges(data=True)),
                   key=lambda e: (e["source"], e["target"], e["type"]))
    node_link = {"directed": True, "multigraph": True, "nodes": nodes, "links": links}
    jsonld = {"@context": "https://schema.org", "@graph": [
        {"@id": data.get("url", site.base_url + "graph.json#" + key),
         "@type": {"note": "Article", "wiki": "Article", "synthesis": "Report", "notebook": "Collection",
                   "base": "Collection", "extraction": "Quotation", "claim": "Claim"}.get(data["type"], "Thing"),
         "name": data.get("title") or data.get("quote") or data.get("text") or key}
        for key, data in sorted(g.nodes(data=True))
        if data["type"] in ("note", "wiki", "synthesis", "notebook", "base", "extraction", "claim")]}
    return {"graph.json": dumps(node_link, levels=2), "graph.jsonld": dumps(jsonld, levels=2)}
