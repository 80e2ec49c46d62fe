"""graph.jsonld carries graph.json's graph: the same nodes and every edge, read back
through the document's own ``@context`` (with pyld's expansion where it is installed),
and the same bytes from one build to the next, cached or not."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from generator.engine.cache import BuildCache, default_cache_path
from generator.pipeline import build
from generator.site.graph import EDGE_TYPES

CONTENT = Path(__file__).resolve().parents[2] / "content"
SCHEMA = "https://schema.org/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

Edge = tuple[str, str, str]  # source, type, target


def _graph_json(site: Path) -> tuple[set[str], set[Edge], dict[Edge, dict[str, Any]]]:
    graph = json.loads((site / "graph.json").read_bytes())
    edges = {(e["source"], e["type"], e["target"]) for e in graph["links"]}
    data = {(e["source"], e["type"], e["target"]): {k: v for k, v in e.items() if k not in ("source", "target", "type")}
            for e in graph["links"]}
    return {n["id"] for n in graph["nodes"]}, edges, {edge: d for edge, d in data.items() if d}


def _document(site: Path) -> tuple[dict[str, Any], str]:
    """graph.jsonld and its vocabulary's IRI base; its context is inline, so reading it
    back (and expanding it) needs no network."""
    document = json.loads((site / "graph.jsonld").read_bytes())
    assert isinstance(document["@context"], dict) and "carnet" in document["@context"], document["@context"]
    vocabulary = document["@context"]["carnet"]
    assert vocabulary.endswith("graph.jsonld#")
    return document, vocabulary


def _iri(value: str, context: dict[str, Any]) -> str:
    """A term or compact IRI of the context as a full IRI (what expansion does to keys)."""
    definition = context.get(value)
    if isinstance(definition, dict):
        value = definition["@id"]
    elif isinstance(definition, str):
        value = definition
    prefix, _, suffix = value.partition(":")
    if suffix and isinstance(context.get(prefix), str) and not suffix.startswith("//"):
        return context[prefix] + suffix
    if ":" not in value:
        return context["@vocab"] + value
    return value


def _compact_triples(document: dict[str, Any]) -> list[tuple[int, str, str, Any]]:
    """(record number, subject, predicate IRI, value) of each top-level record, read
    directly from the compact form: no JSON-LD processor is needed for this one."""
    context = document["@context"]
    triples = []
    for number, record in enumerate(document["@graph"]):
        subject = record.get("@id", f"_:{number}")
        for key, values in record.items():
            if key == "@id":
                continue
            definition = context.get(key)
            if key == "@type":
                predicate, to_iri = RDF + "type", True
            else:
                predicate = _iri(key, context)
                to_iri = isinstance(definition, dict) and definition.get("@type") == "@id"
            for value in values if isinstance(values, list) else [values]:
                triples.append((number, subject, predicate, _iri(value, context) if key == "@type" else value))
                assert not to_iri or isinstance(value, str)
    return triples


def _read_back(triples: list[tuple[int, str, str, Any]], vocabulary: str
               ) -> tuple[set[str], set[Edge], dict[Edge, dict[str, Any]]]:
    """Nodes, edges and edges' data of graph.jsonld's triples, in graph.json's ids."""
    identifiers: dict[str, list[str]] = {}
    for _, subject, predicate, value in triples:
        if predicate == SCHEMA + "identifier":
            identifiers.setdefault(subject, []).append(value)
    assert all(len(keys) == 1 for keys in identifiers.values()), "two nodes share an @id"
    key_of = {subject: keys[0] for subject, keys in identifiers.items()}
    assert len(set(key_of.values())) == len(key_of), "a node has two @id"
    edges = {(key_of[subject], predicate[len(vocabulary):], key_of[value]) for _, subject, predicate, value in triples
             if predicate.startswith(vocabulary) and predicate[len(vocabulary):] in EDGE_TYPES}
    statements: dict[int, dict[str, Any]] = {}
    for number, _subject, predicate, value in triples:
        statements.setdefault(number, {})[predicate] = value
    data = {}
    for record in statements.values():
        if record.get(RDF + "type") != RDF + "Statement":
            continue
        edge = (key_of[record[RDF + "subject"]], record[RDF + "predicate"][len(vocabulary):],
                key_of[record[RDF + "object"]])
        data[edge] = {p[len(vocabulary):]: v for p, v in record.items() if p.startswith(vocabulary)}
    return set(key_of.values()), edges, data


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("graph-jsonld") / "site"
    build(CONTENT, out, search=False)
    return out


def test_graph_jsonld_carries_every_node_and_edge_of_graph_json(built: Path) -> None:
    nodes, edges, data = _graph_json(built)
    document, vocabulary = _document(built)
    read_nodes, read_edges, read_data = _read_back(_compact_triples(document), vocabulary)
    assert len(edges) > 1000 and {kind for _, kind, _ in edges} >= {"cites", "anchored-in", "member-of"}
    assert read_nodes == nodes
    assert read_edges == edges
    assert read_data == data and data, "a citation's state and a portion's bounds are described"
    assert read_data[next(e for e in data if e[1] == "cites")].keys() == {"state"}


def test_graph_jsonld_survives_expansion(built: Path) -> None:
    try:
        from pyld import jsonld
    except ImportError:  # a test dependency (pip install -e '.[test]'): never skipped under CI
        if os.environ.get("CI") == "true":
            pytest.fail("pyld is not installed")
        pytest.skip("pyld is not installed (pip install -e '.[test]')")
    nodes, edges, data = _graph_json(built)
    document, vocabulary = _document(built)
    triples: list[tuple[int, str, str, Any]] = []
    for number, record in enumerate(jsonld.expand(document)):
        subject = record.get("@id", f"_:{number}")
        for predicate, values in record.items():
            if predicate == "@id":
                continue
            if predicate == "@type":
                triples.extend((number, subject, RDF + "type", value) for value in values)
                continue
            for value in values:
                triples.append((number, subject, predicate, value.get("@id", value.get("@value"))))
    read_nodes, read_edges, read_data = _read_back(triples, vocabulary)
    assert (read_nodes, read_edges, read_data) == (nodes, edges, data)


def test_graph_jsonld_is_byte_identical_across_builds(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(CONTENT, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    assert (out / "graph.jsonld").read_bytes() == (built / "graph.jsonld").read_bytes()
    # again from the cache: the notes' parts come back from the memo
    (out / "graph.jsonld").unlink()
    build(CONTENT, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    assert (out / "graph.jsonld").read_bytes() == (built / "graph.jsonld").read_bytes()


def test_graph_json_is_every_part_merged_whatever_the_runs_it_is_published_in(built: Path) -> None:
    """The assembly publishes runs of a part's lines as slices and each other node alone:
    the bytes are those of the whole graph merged part by part (as a dict is updated) and
    laid out at once."""
    from generator.pipeline import check_content, site_model
    from generator.site.graph import build_graph
    from generator.site.jsonout import dumps

    site = site_model(check_content(CONTENT), CONTENT)
    graph = build_graph(site)
    whole = {"directed": True, "multigraph": True,
             "nodes": [{"id": key, **graph.nodes[key]} for key in sorted(graph.nodes)],
             "links": [{"source": s, "target": t, **graph.edges[(s, t, k)]} for s, t, k in sorted(graph.edges)]}
    assert (built / "graph.json").read_bytes() == dumps(whole, levels=2)


def test_a_recalled_part_reads_its_lines_only_when_the_graph_is_assembled() -> None:
    """A note's part read back from the build cache gives its nodes' keys and addresses, its
    bare ends and edges from other parts' nodes (what the build and the graph's order read of
    every part) without unpickling its lines, which only graph.json's writers read, of the
    segments they make; read, it is the part that was made, with the same digest."""
    import pickle

    from generator.engine.graph_files import encoded_note_part, part_digest
    from generator.pipeline import check_content, site_model

    site = site_model(check_content(CONTENT), CONTENT)
    slug = next(slug for slug in site.publication.notes if site.anchored[slug].document.elements)
    made = encoded_note_part(site, slug)
    recalled = pickle.loads(pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL))
    eager = {"node_keys", "urls", "foreign", "bare", "_later"}
    assert set(vars(recalled)) == eager, "the lines wait"
    assert recalled.node_keys == made.node_keys and recalled.urls == made.urls
    assert not hasattr(recalled, "__array__") and set(vars(recalled)) == eager, \
        "another name probed loses nothing"
    again = pickle.loads(pickle.dumps(recalled, protocol=pickle.HIGHEST_PROTOCOL))  # passed on unread
    assert set(vars(again)) == eager
    assert again.node_lines[0] == made.node_lines[0] and "_later" not in vars(again)
    assert recalled == made and again == made and part_digest(recalled) == part_digest(made)


def test_a_record_another_part_adds_edges_to_is_the_whole_graphs_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """An extraction's record takes the edges the articles' parts add from it (its groups, the
    articles that discarded it): whether they are of types its own edges lack (kept lines,
    properties added), share one (its edges interleaved by target) or carry data (a statement
    of their own), the records are those of the whole graph encoded at once."""
    from types import SimpleNamespace

    from generator.engine.graph_files import RECORD_JOIN, _Assembly, _items, pack
    from generator.site.graph import TypedGraph, encode_part

    base = "https://example.org/"
    site: Any = SimpleNamespace(base_url=base)
    note = TypedGraph()
    note.node("note:a", "note", title="A", url=base + "notes/a.html")
    note.node("element:a/e1", "element", text="Un paragraphe.")
    for n in (1, 2, 3):
        note.node(f"extraction:a-x{n}", "extraction", quote=f"Citation {n}", url=base + f"notes/a.html#x{n}")
        note.edge(f"extraction:a-x{n}", "element:a/e1", "anchored-in", start=n, end=n + 5)
    article = TypedGraph()
    article.node("note:w", "wiki", title="W", url=base + "notes/w.html")
    article.node("group:w/1", "group", size=2)
    article.node("group:w/2", "group", size=1)
    article.edge("extraction:a-x1", "group:w/1", "member-of-group")  # types its own edges lack
    article.edge("extraction:a-x1", "note:w", "discarded-from")
    article.edge("extraction:a-x2", "group:w/2", "member-of-group")
    article.edge("extraction:a-x2", "group:w/1", "anchored-in")  # a type its own edges have
    article.edge("extraction:a-x3", "note:w", "cites", state="verified")  # with data
    again = TypedGraph()  # another article's part saying one of those edges again
    again.node("note:v", "wiki", title="V", url=base + "notes/v.html")
    again.edge("extraction:a-x1", "group:w/1", "member-of-group")
    again.edge("extraction:a-x1", "note:v", "discarded-from")
    parts = [note, article, again]
    whole = TypedGraph()
    for part in parts:
        whole.merge(part)
    encoded = encode_part(site, whole, records=True, pages=lambda key: None)
    expected = [RECORD_JOIN.join(line.encode() for line in encoded.records[key]) for key in sorted(encoded.records)]
    assembly = _Assembly(base, [pack(encode_part(site, part, records=True, pages=lambda key: None)) for part in parts])
    served: list[bool] = []  # whether the note part's lines were kept, node by node
    kept = _Assembly._with_foreign
    monkeypatch.setattr(_Assembly, "_with_foreign",
                        lambda self, *args: served.append((line := kept(self, *args)) is not None) or line)
    made = b"".join(_items(assembly.records()))
    assert made == b"".join(_items(expected))
    assert served == [True, False], "x1 kept its lines, x2 (a type of its own edges) was made again, x3 not asked"
    record = next(record for record in json.loads(b"{\"@graph\": " + made + b"}")["@graph"]
                  if record.get("identifier") == "extraction:a-x1")
    assert record["member-of-group"] == [base + "graph.json#group:w/1"]
    assert record["discarded-from"] == [base + "notes/v.html", base + "notes/w.html"]


def test_a_node_two_parts_define_and_a_splice_across_it_give_the_whole_graphs_files(tmp_path: Path) -> None:
    """A node two parts define is the later part's, with the edges of both (as a dict updated
    part by part); the files spliced from the last ones after a part changed (one node
    retitled, one edge more) are the files the whole graph gives, segment for segment."""
    from array import array
    from types import SimpleNamespace

    from generator.engine.graph_files import (
        GraphLayout,
        Splicing,
        _Assembly,
        _Splice,
        pack,
        part_digest,
        read_layout,
    )
    from generator.site.graph import TypedGraph, encode_part
    from generator.site.jsonout import dumps

    base = "https://example.org/"
    site: Any = SimpleNamespace(base_url=base)

    def parts(title: str, more: bool) -> list[TypedGraph]:
        first, second, third = TypedGraph(), TypedGraph(), TypedGraph()
        for n in range(6):
            first.node(f"note:a{n}", "note", title=f"A{n}", url=f"{base}notes/a{n}.html")
            first.edge(f"note:a{n}", "notebook:x", "member-of")
        first.node("category:c", "category", title="C")
        second.node("note:b", "note", title=title, url=base + "notes/b.html")
        second.node("category:c", "category", title="C again")  # defined twice: this one wins
        second.edge("category:c", "note:a1", "groups")
        third.node("note:w", "wiki", title="W", url=base + "notes/w.html")
        third.edge("note:a2", "note:w", "cites", state="verified")  # from another part's node, with data
        if more:
            third.edge("note:a4", "note:w", "cites", state="unjudged")
        return [first, second, third]

    def files(graphs: list[TypedGraph], splicing: Splicing | None) -> dict[str, bytes]:
        packed = [pack(encode_part(site, part, records=True, pages=lambda key: None)) for part in graphs]
        assembly = _Assembly(base, packed)
        if splicing is None:
            return {"graph.json": b"".join(assembly.node_link()), "graph.jsonld": b"".join(assembly.jsonld())}
        digests = [part_digest(part) for part in packed]
        last = splicing.last
        assembly.holds = [last.holds.get(d, assembly.part_holds(p)) if last else assembly.part_holds(p)
                          for p, d in zip(packed, digests, strict=True)]
        signatures = assembly.signatures(digests)
        index = None
        if last is not None and last.addresses == assembly.addresses():
            where = {signature: n for n, signature in enumerate(last.signatures)}
            index = array("q", [where.get(signature, -1) for signature in signatures])
        indexes.append(index)
        holds = dict(zip(digests, assembly.holds, strict=True))
        made = {}
        for path, signs, write in (("graph.json", True, assembly.node_link), ("graph.jsonld", False, assembly.jsonld)):
            made[path] = b"".join(write(_Splice(index, last.lists if last else {}, splicing.files.get(path),
                                                splicing.laid_out[path],
                                                GraphLayout(assembly.addresses(), signatures, {}, holds) if signs else None)))
        return made

    def whole(graphs: list[TypedGraph]) -> dict[str, bytes]:
        merged = TypedGraph()
        for part in graphs:
            merged.merge(part)
        node_link = {"directed": True, "multigraph": True,
                     "nodes": [{"id": key, **merged.nodes[key]} for key in sorted(merged.nodes)],
                     "links": [{"source": s, "target": t, **merged.edges[(s, t, k)]} for s, t, k in sorted(merged.edges)]}
        return {"graph.json": dumps(node_link, levels=2)}

    indexes: list[Any] = []  # per spliced build, each segment's number in the last files (-1: made)
    laid = {path: str(tmp_path / f"{path}.layout") for path in ("graph.json", "graph.jsonld")}
    before = files(parts("B", False), Splicing(None, {}, laid))
    assert before == files(parts("B", False), None)
    assert before["graph.json"] == whole(parts("B", False))["graph.json"]
    assert b'"title": "C again"' in before["graph.json"] and b'"title": "C"' not in before["graph.json"]
    layout = read_layout(Splicing(None, {}, laid))
    assert layout is not None
    for path, data in before.items():
        (tmp_path / path).write_bytes(data)
    old = {path: str(tmp_path / path) for path in before}
    after = files(parts("B retitled", True), Splicing(layout, old, laid))
    expected = whole(parts("B retitled", True))
    assert after == files(parts("B retitled", True), None)
    assert after["graph.json"] == expected["graph.json"]
    assert indexes[0] is None and 0 < sum(n >= 0 for n in indexes[1]) < len(indexes[1]), "some copied, some made"


def test_every_node_of_graph_jsonld_has_a_schema_org_type(built: Path) -> None:
    """A reader of graph.jsonld learns what each node is (issue 57: 584 of 945 real nodes had
    no type): every node but the reified statements has an ``@type``, a schema.org type of
    the pinned release, and its schema.org properties (``name``, ``identifier``) fit it."""
    document, _vocabulary = _document(built)
    pinned = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "schemaorg" / "vocabulary.json")
                        .read_text(encoding="utf-8"))
    untyped, unknown = [], set()
    for node in document["@graph"]:
        kind = node.get("@type")
        if kind is None:
            untyped.append(node.get("kind"))
        elif kind != "Statement":
            unknown |= {kind} - set(pinned["superclasses"])
            for name in ("name", "identifier"):
                if name in node:
                    assert {kind, *pinned["superclasses"][kind]} & set(pinned["properties"][name]), (kind, name)
    assert not untyped, f"{len(untyped)} nodes untyped, kinds {sorted(set(map(str, untyped)))}"
    assert not unknown


def test_every_node_type_has_a_schema_org_type() -> None:
    from generator.site.graph import JSONLD_TYPES, NODE_TYPES

    assert set(JSONLD_TYPES) == NODE_TYPES


def _assembly_parts(change: str) -> list[Any]:
    """Three notes' parts and an article's, as ``change`` leaves them (see the test below)."""
    from generator.site.graph import TypedGraph

    base = "https://example.org/"
    a, b, c, w = TypedGraph(), TypedGraph(), TypedGraph(), TypedGraph()
    a.node("note:a", "note", title="A", url=base + "notes/a.html")
    elements = {"renamed": ["e1", "e3"], "removed": ["e2"], "added": ["e1", "e2", "e0", "e9"]}.get(change, ["e1", "e2"])
    for element in elements:
        a.node(f"element:a/{element}", "element", text=f"Paragraphe {element}.")
    if change == "defines-bare":
        a.node("note:z", "note", title="Z", url=base + "notes/z.html")
    if change == "defines-another":
        a.node("note:b", "note", title="B encore", url=base + "notes/b.html")
    if change == "moved":  # a paragraph moved from a to b: the node defined by another part
        a.nodes.pop("element:a/e2")
        b.node("element:a/e2", "element", text="Paragraphe e2.")
    b.node("note:b", "note", title="B", url=base + "notes/b.html")
    b.edge("note:b", "element:a/e1", "cites")  # a bare end of b's, defined by a
    if change == "ends-elsewhere":
        b.edge("note:b", "note:y", "cites")
    c.node("note:c", "note", title="C" if change != "retitled" else "C retitled", url=base + "notes/c.html")
    c.edge("note:c", "note:z", "cites")  # bare: no part defines it
    w.node("note:w", "wiki", title="W", url=base + "notes/w.html")
    w.edge("note:c", "note:w", "cites", state="verified" if change != "verdict" else "contested")
    return [a, b, c, w]


@pytest.mark.parametrize(("change", "patched"), [
    ("same", True), ("retitled", True), ("renamed", True), ("removed", True), ("added", True),
    ("defines-bare", True), ("moved", True),
    ("defines-another", False), ("ends-elsewhere", False), ("verdict", False)])
def test_the_assembly_patched_from_the_last_builds_is_the_one_made_whole(change: str, patched: bool,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``carnet serve`` patches the graph's assembly from the last build's: parts defining
    other nodes (a paragraph renamed, removed, added; a node an edge ended at defined now,
    or no longer) are patched in; a part ending at other bare nodes or adding other edges to
    another part's nodes, or a node defined twice, make it whole. Either way its order and
    both files are those of the assembly made whole."""
    from types import SimpleNamespace

    from generator.engine.graph_files import _Assembly, pack
    from generator.site.graph import encode_part

    base = "https://example.org/"
    site: Any = SimpleNamespace(base_url=base)

    def packed(change: str) -> list[Any]:
        return [pack(encode_part(site, part, records=True, pages=lambda key: None)) for part in _assembly_parts(change)]

    last_parts = packed("")
    last = _Assembly(base, last_parts)
    assert last.laid and last.bare == ["note:z"]
    parts = packed(change)
    if change == "same":
        parts[1] = last_parts[1]  # a part carried as it was: the same object
    made_whole: list[bool] = []
    init = _Assembly.__init__
    monkeypatch.setattr(_Assembly, "__init__", lambda self, *args: made_whole.append(True) or init(self, *args))
    made = _Assembly.patched(last, base, parts)
    assert made_whole == ([] if patched else [True])
    monkeypatch.setattr(_Assembly, "__init__", init)
    whole = _Assembly(base, parts)
    assert made.order() == whole.order()
    assert b"".join(made.node_link()) == b"".join(whole.node_link())
    assert b"".join(made.jsonld()) == b"".join(whole.jsonld())
    if change == "removed":
        assert "element:a/e1" not in made.keys and made.bare == ["element:a/e1", "note:z"], "b's link ends bare now"
    if change == "defines-bare":
        assert made.bare == []
