"""The typed graph of the published corpus, with a whitelist of node and edge types,
exported as node-link JSON (sorted) and as schema.org JSON-LD; ``carnet context`` ranks
it with networkx.

The graph is assembled from parts: one per published note (its node, elements,
extractions and comments), one per published article (its sections and claims, what they
cite, what it discards, its groups and oppositions) and one shared (bases, notebooks,
categories). A note's part depends on that note alone, an article's on what the article
reads, so a build cache keeps them already encoded and an incremental build re-encodes
only the notes and articles that changed.

``graph.jsonld`` is the same graph, from the same parts, as ``graph.json``: every node
and every edge, in a JSON-LD document whose ``@context`` is inline (expanding it needs
no network) and declares every term used, so nothing is dropped on expansion:

- ``@vocab`` is schema.org: ``@type`` (``Article``, ``Collection``… for the node types
  of ``JSONLD_TYPES``, one for each node type), ``name`` (the title, quote, text or question)
  and ``identifier`` (the node's id in ``graph.json``, on every node) are schema.org's.
- A node's ``@id`` is its page's address where it has one (``url``: notes, bases,
  notebooks, extractions' ``#ext-…``), as the pages' own JSON-LD says; otherwise
  ``<base_url>graph.json#<id>``, the id percent-encoded.
- The project's own terms are under ``<base_url>graph.jsonld#`` (prefix ``carnet``):
  ``kind`` (the node's type in ``graph.json``) and one term per edge type, named as the
  edge type (``cites``, ``anchored-in``…), ``@type: @id`` and ``@container: @set``. An
  edge is the triple (source node, ``carnet:<type>``, target node): the source's
  property, a list of target ``@id`` sorted by the target's id.
- An edge with data (a citation's ``state``; a portion's ``start`` and ``end``) is also
  described by a statement, RDF's reification: a top-level blank node of ``@type``
  ``rdf:Statement`` with ``subject``, ``predicate`` (the edge type's IRI) and ``object``,
  and its data under ``carnet:<name>`` (``EDGE_ATTRIBUTES``; an undeclared one is an
  error rather than data lost). A statement follows its source node in ``@graph``.

``@graph`` lists the nodes by id, each followed by its statements (by target, then type).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    import networkx as nx  # imported where used (by `carnet context`): a build never loads it

from generator.corpus.model import NoteType
from generator.kinds import WikiKind
from generator.site.jsonout import ENCODER as _ENCODER
from generator.site.model import SiteModel, base_path, note_path, notebook_path, source_address

NODE_TYPES = frozenset({"base", "notebook", "category", "note", "element", "extraction", "comment", "wiki",
                        "synthesis", "answer", "quote", "section", "claim", "group", "opposition"})
EDGE_TYPES = frozenset({"groups", "member-of", "in-category", "anchored-in", "comments-on", "cites", "discarded-from",
                        "member-of-group", "opposes", "supersedes", "has-element", "has-section", "has-claim"})
JSONLD_TYPES = {"note": "Article", "wiki": "Article", "synthesis": "Report", "answer": "Article", "notebook": "Collection",
                "base": "Collection", "extraction": "Quotation", "quote": "Quotation", "claim": "Claim",
                "element": "WebPageElement", "section": "WebPageElement", "comment": "Comment", "group": "Collection",
                "category": "DefinedTerm", "opposition": "Question"}
"""The schema.org type of each node type: every node of graph.jsonld says what it is."""
_NAMED = frozenset({"note", "wiki", "synthesis", "answer", "notebook", "base", "extraction", "quote", "claim"})
"""Node types named (by their id) even without a title, quote, text or question."""
EDGE_ATTRIBUTES = frozenset({"start", "end", "state"})
"""The data an edge may carry, each a term of graph.jsonld's context."""
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

@dataclass
class TypedGraph:
    """A directed multigraph (one edge per source, target and type) that refuses node and
    edge types outside the whitelist. Adding a node or edge again updates its attributes;
    an edge to an unknown node creates it bare, as networkx does."""

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)

    def node(self, key: str, kind: str, **attributes: object) -> None:
        if kind not in NODE_TYPES:
            raise ValueError(f"node type {kind!r} is not in the graph's whitelist")
        self.nodes.setdefault(key, {}).update(type=kind, **attributes)

    def edge(self, source: str, target: str, kind: str, **attributes: object) -> None:
        if kind not in EDGE_TYPES:
            raise ValueError(f"edge type {kind!r} is not in the graph's whitelist")
        self.nodes.setdefault(source, {})
        self.nodes.setdefault(target, {})
        self.edges.setdefault((source, target, kind), {}).update(type=kind, **attributes)

    def __contains__(self, key: object) -> bool:
        return key in self.nodes

    def merge(self, other: TypedGraph) -> None:
        for key, data in other.nodes.items():
            self.nodes.setdefault(key, {}).update(data)
        for edge, edge_data in other.edges.items():  # own names: an edge's key is a (source, target, type)
            self.edges.setdefault(edge, {}).update(edge_data)

    @property
    def graph(self) -> nx.MultiDiGraph[str]:
        """The same graph as networkx (for ranking)."""
        import networkx as nx

        g: nx.MultiDiGraph[str] = nx.MultiDiGraph()  # nodes are the string ids
        for key, data in self.nodes.items():
            g.add_node(key, **data)
        for (source, target, kind), data in self.edges.items():
            g.add_edge(source, target, key=kind, **data)
        return g


def note_part(site: SiteModel, slug: str) -> TypedGraph:
    """The part of the graph one published note makes on its own."""
    g = TypedGraph()
    note = site.publication.notes[slug]
    kind = {NoteType.NOTE: "note", NoteType.WIKI: "wiki", NoteType.SYNTHESIS: "synthesis",
            NoteType.ANSWER: "answer"}[note.type]
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
            g.node(f"comment:{comment.id}", "comment", stance=comment.stance, withdrawn=comment.withdrawn is not None)
            g.edge(f"comment:{comment.id}", f"extraction:{extraction.id}", "comments-on")
    return g


def site_part(site: SiteModel, known: Container[str]) -> TypedGraph:
    """Everything that is not one note's: ``known`` (the notes' parts' nodes) answers whether
    an extraction, comment or note is in the graph. The shared part and every article's,
    merged (:func:`shared_part`, :func:`article_part`)."""
    g = shared_part(site)
    for slug in site.articles:
        g.merge(article_part(site, slug, known))
    return g


def shared_part(site: SiteModel) -> TypedGraph:
    """The bases, the notebooks and their categories."""
    publication = site.publication
    g = TypedGraph()
    for slug, base in publication.bases.items():
        g.node(f"base:{slug}", "base", title=base.title, url=site.base_url + base_path(slug))
    for slug, notebook in publication.notebooks.items():
        g.node(f"notebook:{slug}", "notebook", title=notebook.title, url=site.base_url + notebook_path(slug))
        for base_slug in site.bases_of(slug):  # a slug, not the Base of the loop above
            g.edge(f"base:{base_slug}", f"notebook:{slug}", "groups")
        for axis in notebook.axes:
            for category in axis.categories:
                g.node(f"category:{slug}/{axis.key}/{category}", "category", title=category, axis=axis.key)
    return g


def article_part(site: SiteModel, slug: str, known: Container[str]) -> TypedGraph:
    """One published article's part: its sections and claims, what they cite, what it
    discards, the act it supersedes, its selection's groups and its oppositions. It defines
    nodes of its own only (an article's sections, claims, quotes, groups, oppositions), so a
    build cache keeps it encoded apart and an edit re-encodes only the articles it touches;
    ``known``: the notes' parts' nodes (an edge to an unpublished extraction would name it)."""
    g = TypedGraph()
    audit = site.articles[slug]

    def exists(key: str) -> bool:
        return key in known or key in g

    sections = sorted({(c.section_index, c.section) for c in audit.claims})
    for index, title in sections:
        g.node(f"section:{slug}/{index}", "section", title=title or "(lead)")
        g.edge(f"note:{slug}", f"section:{slug}/{index}", "has-section")
    for claim in audit.claims:
        g.node(f"claim:{slug}/{claim.id}", "claim", text=claim.text, sourced=claim.sourced)
        g.edge(f"section:{slug}/{claim.section_index}", f"claim:{slug}/{claim.id}", "has-claim")
    for assessment in site.assessments.get(slug, []):
        link = assessment.link
        if link.marker.kind is WikiKind.QUOTE:  # a saved answer's quote: a node of its own, in the note's elements
            if not (link.element and exists(f"note:{link.note}")):
                continue  # no longer lands, or its note is not published: nothing to point at
            target = f"quote:{slug}/{link.marker.key}"
            g.node(target, "quote", quote=link.text, url=site.base_url + source_address(link))
            elements = site.anchored[link.note].document.elements
            for portion in link.portions:
                g.edge(target, f"element:{link.note}/{elements[portion.element].id}", "anchored-in",
                       start=portion.start, end=portion.end)
        else:
            target = f"extraction:{link.extraction}" if link.marker.kind is WikiKind.EXT else f"comment:{link.marker.key}"
        if exists(target):
            g.edge(f"claim:{slug}/{assessment.claim.id}", target, "cites", state=assessment.state.state)
    for item in audit.discarded or []:
        source = f"element:{item.note}/{item.extraction}" if item.passage else f"extraction:{item.extraction}"
        if exists(f"note:{item.note}") and item.exists if item.passage else exists(source):
            g.edge(source, f"note:{slug}", "discarded-from")
    if audit.supersedes and exists(f"note:{audit.supersedes}"):
        g.edge(f"note:{slug}", f"note:{audit.supersedes}", "supersedes")
    selection = site.selections.get(slug)
    for number, group in enumerate(selection.groups if selection else [], start=1):
        # a member past the selection's cap on pairs is alone unseen, not found alone: said (only then)
        g.node(f"group:{slug}/{number}", "group", size=len(group.members), chaining=group.chaining,
               **({} if group.compared else {"compared": False}))
        for member in group.members:
            if exists(f"extraction:{member}"):  # an edge to an unpublished one would name it
                g.edge(f"extraction:{member}", f"group:{slug}/{number}", "member-of-group")
    record = site.oppositions.get(slug)
    if record is None:
        return g
    # only pairs of two published extractions: the question speaks of both sides
    shown = [o for o in record.oppositions if exists(f"extraction:{o.a}") and exists(f"extraction:{o.b}")]
    for number, pair in enumerate(shown, start=1):
        key = f"opposition:{slug}/{number}"
        g.node(key, "opposition", question=pair.question, method=(pair.provenance or record.provenance).get("method", ""))
        for member in (pair.a, pair.b):
            g.edge(f"extraction:{member}", key, "opposes")
    return g


def build_graph(site: SiteModel) -> TypedGraph:
    g = TypedGraph()
    for slug in site.publication.notes:
        g.merge(note_part(site, slug))
    g.merge(site_part(site, g))
    return g


@dataclass
class EncodedPart:
    """A part's records as published lines (node id → line, edge → line), defined nodes
    apart from the bare ones its edges point to; ``jsonld`` and ``links`` are what
    graph.jsonld needs of its nodes and edges, kept raw: an edge's target may be another
    part's node, whose ``@id`` is only known once every part is in.

    A note's part also keeps ``records``: the graph.jsonld lines of each node it defines,
    made from its own edges, with the ``@id`` it took for each node outside the part
    (``assumed``). They are used as they are when, every part in, the node has no edge
    from another part and those ``@id`` are right (:meth:`_Assembly.records`); otherwise
    the node's lines are made again from the whole graph."""

    nodes: dict[str, str]
    edges: dict[tuple[str, str, str], str]
    jsonld: dict[str, dict[str, str]]
    links: dict[tuple[str, str, str], dict[str, Any]]
    bare: set[str]
    records: dict[str, list[str]] = field(default_factory=dict)
    assumed: dict[str, str] = field(default_factory=dict)


def jsonld_fields(key: str, data: dict[str, Any]) -> dict[str, str]:
    """What graph.jsonld says of one defined node, besides its edges."""
    fields = {"kind": str(data["type"])}
    if "url" in data:
        fields["url"] = str(data["url"])
    name = data.get("title") or data.get("quote") or data.get("text") or data.get("question")
    if name or data["type"] in _NAMED:
        fields["name"] = str(name or key)
    return fields


def encode_part(site: SiteModel, part: TypedGraph, records: bool = False,
                pages: Callable[[str], str | None] | None = None) -> EncodedPart:
    """A part, encoded; with ``records``, its nodes' graph.jsonld lines too, taking for each
    node outside the part the ``@id`` ``pages`` gives it (by default its page when it is
    one of the site's notes, notebooks or bases)."""
    nodes, jsonld, bare = {}, {}, set()
    for key, data in part.nodes.items():
        if not data:
            bare.add(key)
            continue
        nodes[key] = _ENCODER.encode({"id": key, **data})
        jsonld[key] = jsonld_fields(key, data)
    edges = {key: _ENCODER.encode({"source": key[0], "target": key[1], **data}) for key, data in part.edges.items()}
    links = {key: {name: value for name, value in data.items() if name != "type"} for key, data in part.edges.items()}
    encoded = EncodedPart(nodes, edges, jsonld, links, bare)
    if records:
        # a node outside the part is one of the site's pages (a notebook) or has none (a category)
        page = pages or functools.partial(_page_of, site)
        encoded.assumed = {key: node_iri(site.base_url, key, {"url": url} if (url := page(key)) else None)
                           for key in bare}
        encoded.records = node_records(site.base_url, sorted(jsonld), jsonld, links,
                                   lambda key: encoded.assumed.get(key) or node_iri(site.base_url, key, jsonld.get(key)))
    return encoded


def _page_of(site: SiteModel, key: str) -> str | None:
    kind, _, slug = key.partition(":")
    paths = {"note": note_path, "notebook": notebook_path, "base": base_path}
    return site.base_url + paths[kind](slug) if kind in paths else None


def jsonld_vocabulary(base_url: str) -> str:
    return base_url + "graph.jsonld#"


def jsonld_context(base_url: str) -> dict[str, Any]:
    """graph.jsonld's inline context: schema.org as ``@vocab``, the project's terms under
    :func:`jsonld_vocabulary`, RDF's reification terms."""
    context: dict[str, Any] = {"@vocab": "https://schema.org/", "carnet": jsonld_vocabulary(base_url), "rdf": RDF,
                               "kind": "carnet:kind", "Statement": "rdf:Statement",
                               **{term: {"@id": f"rdf:{term}", "@type": "@id"}
                                  for term in ("subject", "predicate", "object")},
                               **{name: f"carnet:{name}" for name in sorted(EDGE_ATTRIBUTES)},
                               **{kind: {"@id": f"carnet:{kind}", "@type": "@id", "@container": "@set"}
                                  for kind in sorted(EDGE_TYPES)}}
    return context


def node_iri(base_url: str, key: str, fields: dict[str, str] | None) -> str:
    """A node's ``@id``: its page's address, else its id under ``graph.json#``."""
    if fields and "url" in fields:
        return fields["url"]
    return base_url + "graph.json#" + quote(key, safe=":/@!$&'()*+,;=")


def record_line(key: str, own: dict[str, str], edges: list[tuple[str, str, str]], iri: Callable[[str], str]) -> str:
    """A node's record: what it is, and its outgoing ``edges`` (sorted) as properties."""
    record: dict[str, Any] = {"@id": iri(key), "identifier": key,
                              **{name: value for name, value in own.items() if name in ("kind", "name")}}
    if own.get("kind") in JSONLD_TYPES:
        record["@type"] = JSONLD_TYPES[own["kind"]]
    for _source, target, kind in edges:  # sorted by target, then type
        record.setdefault(kind, []).append(iri(target))
    return _ENCODER.encode(record)


def node_records(base_url: str, keys: list[str], fields: Mapping[str, dict[str, str]],
             links: Mapping[tuple[str, str, str], dict[str, Any]],
             iri: Callable[[str], str]) -> dict[str, list[str]]:
    """Each node's graph.jsonld lines: the node with its outgoing edges as properties, then a
    statement for each of its edges that carries data."""
    wanted = set(keys)
    outgoing: dict[str, list[tuple[str, str, str]]] = {}
    for edge in sorted(edge for edge in links if edge[0] in wanted):
        outgoing.setdefault(edge[0], []).append(edge)
    result = {}
    for key in keys:
        edges = outgoing.get(key, [])
        statements = []
        for source, target, kind in edges:
            data = links[(source, target, kind)]
            if unknown := data.keys() - EDGE_ATTRIBUTES:
                raise ValueError(f"edge data {sorted(unknown)} has no term in graph.jsonld's context")
            if data:
                statements.append({"@type": "Statement", "subject": iri(source), "predicate":
                                   jsonld_vocabulary(base_url) + kind, "object": iri(target), **data})
        result[key] = [record_line(key, fields.get(key, {}), edges, iri),
                       *(_ENCODER.encode(statement) for statement in statements)]
    return result
