"""The typed graph of the published corpus, with a whitelist of node and edge types,
exported as node-link JSON (sorted) and as schema.org JSON-LD; ``carnet context`` ranks
it with networkx.

The graph is assembled from parts: one per published note (its node, elements,
extractions and comments) and one for the rest (bases, notebooks, categories, articles'
sections and claims, groups, oppositions). A note's part depends on that note alone, so
a build cache keeps it already encoded and an incremental build re-encodes only the
notes that changed.

``graph.jsonld`` is the same graph, from the same parts, as ``graph.json``: every node
and every edge, in a JSON-LD document whose ``@context`` is inline (expanding it needs
no network) and declares every term used, so nothing is dropped on expansion:

- ``@vocab`` is schema.org: ``@type`` (``Article``, ``Collection``… for the node types
  of ``JSONLD_TYPES``; others have none), ``name`` (the title, quote, text or question)
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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    import networkx as nx  # imported where used (by `carnet context`): a build never loads it

from generator.corpus.model import NoteType
from generator.memo import NO_MEMO, Memo, digest_of
from generator.site.jsonout import ENCODER as _ENCODER
from generator.site.jsonout import dumps_encoded
from generator.site.model import SiteModel, base_path, note_path, notebook_path

NODE_TYPES = frozenset({"base", "notebook", "category", "note", "element", "extraction", "comment", "wiki",
                        "synthesis", "section", "claim", "group", "opposition"})
EDGE_TYPES = frozenset({"groups", "member-of", "in-category", "anchored-in", "comments-on", "cites", "discarded-from",
                        "member-of-group", "opposes", "supersedes", "has-element", "has-section", "has-claim"})
JSONLD_TYPES = {"note": "Article", "wiki": "Article", "synthesis": "Report", "notebook": "Collection",
                "base": "Collection", "extraction": "Quotation", "claim": "Claim"}
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

    def __contains__(self, key: str) -> bool:
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
            g.node(f"comment:{comment.id}", "comment", stance=comment.stance, withdrawn=comment.withdrawn is not None)
            g.edge(f"comment:{comment.id}", f"extraction:{extraction.id}", "comments-on")
    return g


def site_part(site: SiteModel, known: TypedGraph) -> TypedGraph:
    """Everything that is not one note's: ``known`` (the notes' parts) answers whether an
    extraction, comment or note is in the graph."""
    publication = site.publication
    g = TypedGraph()

    def exists(key: str) -> bool:
        return key in known or key in g

    for slug, base in publication.bases.items():
        g.node(f"base:{slug}", "base", title=base.title, url=site.base_url + base_path(slug))
    for slug, notebook in publication.notebooks.items():
        g.node(f"notebook:{slug}", "notebook", title=notebook.title, url=site.base_url + notebook_path(slug))
        for base_slug in site.bases_of(slug):  # a slug, not the Base of the loop above
            g.edge(f"base:{base_slug}", f"notebook:{slug}", "groups")
        for axis in notebook.axes:
            for category in axis.categories:
                g.node(f"category:{slug}/{axis.key}/{category}", "category", title=category, axis=axis.key)
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
            if exists(target):
                g.edge(f"claim:{slug}/{assessment.claim.id}", target, "cites", state=assessment.state.state)
        for item in audit.discarded or []:
            if exists(f"extraction:{item.extraction}"):
                g.edge(f"extraction:{item.extraction}", f"note:{slug}", "discarded-from")
        if audit.supersedes and exists(f"note:{audit.supersedes}"):
            g.edge(f"note:{slug}", f"note:{audit.supersedes}", "supersedes")
    for slug, selection in site.selections.items():
        for number, group in enumerate(selection.groups, start=1):
            g.node(f"group:{slug}/{number}", "group", size=len(group.members), chaining=group.chaining)
            for member in group.members:
                if exists(f"extraction:{member}"):  # an edge to an unpublished one would name it
                    g.edge(f"extraction:{member}", f"group:{slug}/{number}", "member-of-group")
    for slug, record in site.oppositions.items():
        # only pairs of two published extractions: the question speaks of both sides
        shown = [o for o in record.oppositions if exists(f"extraction:{o.a}") and exists(f"extraction:{o.b}")]
        for number, item in enumerate(shown, start=1):
            key = f"opposition:{slug}/{number}"
            g.node(key, "opposition", question=item.question, method=(item.provenance or record.provenance).get("method", ""))
            for member in (item.a, item.b):
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
    from another part and those ``@id`` are right (:func:`assemble_jsonld`); otherwise
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
    if name or data["type"] in JSONLD_TYPES:
        fields["name"] = str(name or key)
    return fields


def encode_part(site: SiteModel, part: TypedGraph, records: bool = False) -> EncodedPart:
    """A part, encoded; with ``records``, its nodes' graph.jsonld lines too (a note's part)."""
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
        encoded.assumed = {key: node_iri(site.base_url, key, {"url": url} if (url := _page_of(site, key)) else None)
                           for key in bare}
        encoded.records = _records(site.base_url, sorted(jsonld), jsonld, links,
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


def _record_line(key: str, own: dict[str, str], edges: list[tuple[str, str, str]], iri: Callable[[str], str]) -> str:
    """A node's record: what it is, and its outgoing ``edges`` (sorted) as properties."""
    record: dict[str, Any] = {"@id": iri(key), "identifier": key,
                              **{name: value for name, value in own.items() if name in ("kind", "name")}}
    if own.get("kind") in JSONLD_TYPES:
        record["@type"] = JSONLD_TYPES[own["kind"]]
    for _source, target, kind in edges:  # sorted by target, then type
        record.setdefault(kind, []).append(iri(target))
    return _ENCODER.encode(record)


def _records(base_url: str, keys: list[str], fields: Mapping[str, dict[str, str]],
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
        result[key] = [_record_line(key, fields.get(key, {}), edges, iri),
                       *(_ENCODER.encode(statement) for statement in statements)]
    return result


def assemble_jsonld(base_url: str, parts: list[EncodedPart]) -> list[str]:
    """graph.jsonld's ``@graph`` as encoded records: every node by id (the defined ones and
    the bare edge ends), each followed by its statements. A part's own ``records`` are
    taken as they are where they hold: the node is defined in that part only and every
    ``@id`` the part assumed is the node's. A node another part adds edges from (a group
    membership, say) has its record made again with every edge; its statements are the
    part's own unless an added edge carries data too (then all its lines are made again)."""
    fields: dict[str, dict[str, str]] = {}
    links: dict[tuple[str, str, str], dict[str, Any]] = {}
    defined_in: dict[str, int] = {}
    twice: set[str] = set()
    for number, part in enumerate(parts):
        for key in part.jsonld:
            if key in defined_in:
                twice.add(key)
            defined_in[key] = number
        fields.update(part.jsonld)
        links.update(part.links)
    ends = {end for source, target, _ in links for end in (source, target)}
    iris: dict[str, str] = {}

    def iri(key: str) -> str:
        if key not in iris:
            iris[key] = node_iri(base_url, key, fields.get(key))
        return iris[key]

    taken: dict[str, list[str]] = {}
    for number, part in enumerate(parts):
        if part.records and all(iri(key) == assumed for key, assumed in part.assumed.items()):
            taken.update((key, lines) for key, lines in part.records.items()
                         if defined_in[key] == number and key not in twice)
    added: dict[str, list[tuple[str, str, str]]] = {}  # taken node → edges from it in other parts
    for number, part in enumerate(parts):
        for edge in part.links:
            if edge[0] in taken and defined_in.get(edge[0]) != number:
                added.setdefault(edge[0], []).append(edge)
    own: dict[int, dict[str, list[tuple[str, str, str]]]] = {}  # part → node → its edges there
    for key, edges in added.items():
        if any(links[edge] for edge in edges):
            del taken[key]  # a statement to place among the part's own: every line made again
            continue
        number = defined_in[key]
        if number not in own:
            own[number] = {}
            for edge in parts[number].links:
                own[number].setdefault(edge[0], []).append(edge)
        every = sorted({*own[number].get(key, []), *edges})
        taken[key] = [_record_line(key, fields.get(key, {}), every, iri), *taken[key][1:]]
    keys = sorted(fields.keys() | ends)
    made = _records(base_url, [key for key in keys if key not in taken], fields, links, iri)
    return [line for key in keys for line in (taken[key] if key in taken else made[key])]


NotePart = tuple[EncodedPart, list[str]]
"""A note's part of the graph, encoded, and the keys of its nodes."""


def encoded_note_part(site: SiteModel, slug: str) -> NotePart:
    part = note_part(site, slug)
    return encode_part(site, part, records=True), sorted(part.nodes)


def graph_outputs(site: SiteModel, memo: Memo = NO_MEMO, made: Mapping[str, NotePart] | None = None) -> dict[str, bytes]:
    """graph.json and graph.jsonld, from each note's part (``made``: note → its part, made
    already by a worker process) and the site's."""
    parts: list[EncodedPart] = []
    known = TypedGraph()
    made = made or {}
    for slug in site.publication.notes:
        def make(slug: str = slug) -> NotePart:
            return made[slug] if slug in made else encoded_note_part(site, slug)

        def key(slug: str = slug) -> str:  # a note's part depends on that note, its anchors and the site's address
            anchored = site.anchored[slug]
            return digest_of((slug, site.publication.notes[slug], site.base_url,
                              [(e.id, e.kind) for e in anchored.document.elements], sorted(anchored.anchors.items())))

        encoded, keys = made[slug] if slug in made else memo.memo("graph", key, make)
        parts.append(encoded)
        known.nodes.update((k, {}) for k in keys)
    parts.append(encode_part(site, site_part(site, known)))
    nodes: dict[str, str] = {}
    edges: dict[tuple[str, str, str], str] = {}
    bare: set[str] = set()
    for part in parts:
        nodes.update(part.nodes)
        edges.update(part.edges)
        bare |= part.bare
    for bare_key in bare - nodes.keys():  # not ``key``: that is the memo key function above
        nodes[bare_key] = _ENCODER.encode({"id": bare_key})
    node_link: dict[str, str | list[str]] = {"directed": "true", "multigraph": "true", "nodes": [nodes[k] for k in sorted(nodes)],
                 "links": [edges[k] for k in sorted(edges)]}
    return {"graph.json": dumps_encoded(node_link),
            "graph.jsonld": dumps_encoded({"@context": _ENCODER.encode(jsonld_context(site.base_url)),
                                           "@graph": assemble_jsonld(site.base_url, parts)})}
