"""The graph, seen (issue 26): the site's and each notebook's graph page and every note's
local graph, drawn at build from the same facts the pages say — recomputed here from the
pages and siblings themselves — deterministic, legible at scale, escaped."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup

from generator.corpus.model import Membership, Note, NoteType, SourceRef
from generator.engine.emitters import disc_recalled
from generator.pipeline import build
from generator.site.graph_pages import GRAPH_BUDGET_KB, SITE_GRAPH, notebook_graph_path
from generator.site.graph_view import (
    LABEL_CHARS,
    LOCAL_NEIGHBOURS,
    MAX_DRAWN,
    MAX_LABELS,
    NodeKind,
    NoteGraph,
    label_box,
    local_drawing,
    note_graph,
    page_drawing,
    short_labels,
)
from support.corpus import site_files
from support.memos import CountingMemo

CONTENT = Path(__file__).resolve().parents[2] / "content"


def soup(site: Path, path: str) -> BeautifulSoup:
    return BeautifulSoup((site / path).read_text(encoding="utf-8"), "html.parser")


def resolve(page: str, href: str) -> str:
    """A relative href from ``page`` as a site path (fragment and query dropped)."""
    parts = urlsplit(href)
    stack = page.split("/")[:-1]
    for piece in parts.path.split("/"):
        if piece == "..":
            stack.pop()
        elif piece and piece != ".":
            stack.append(piece)
    return "/".join(stack)


def drawn(site: Path, path: str, selector: str = "svg.graph-svg") -> tuple[list[str], set[tuple[str, str, str]]]:
    """The nodes of a drawn graph (each one's page) and its edges (source page, target page, kind)."""
    svg = soup(site, path).select_one(selector)
    nodes = [resolve(path, a["href"]) for a in svg.select("a.node")]
    edges = {(nodes[int(line["data-s"])], nodes[int(line["data-t"])],
              next(c for c in line["class"] if c in ("cites", "links", "member-of"))) for line in svg.select("line.edge")}
    return nodes, edges


def test_the_site_graph_draws_every_published_page_and_the_citations_the_articles_make(example_site: Path) -> None:
    files = site_files(example_site)
    nodes, edges = drawn(example_site, SITE_GRAPH)
    notes = sorted(p for p in files if p.startswith("notes/") and p.endswith(".html") and p.count(".") == 1
                   and b'http-equiv="refresh"' not in files[p])
    notebooks = sorted(p for p in files if re.fullmatch(r"notebooks/[a-z0-9-]+\.html", p))
    assert sorted(n for n in nodes if n.startswith("notes/")) == notes, "every published note, once"
    assert sorted(n for n in nodes if n.startswith("notebooks/")) == notebooks
    assert all(n in files for n in nodes), "every node is a link that lands on a page"
    # the citations, recomputed from each article's JSON sibling: article → the notes it cites
    cited = set()
    for page in notes:
        record = json.loads(files[page[:-len(".html")] + ".json"])
        for claim in record.get("claims", []):
            for pair in claim["pairs"]:
                target = urlsplit(pair["source_url"]).path.split("/notes/")[1]
                if f"notes/{target}" != page:
                    cited.add((page, f"notes/{target}"))
    assert {(s, t) for s, t, kind in edges if kind == "cites"} == cited
    # memberships: each note to each of its public notebooks, as its page lists them
    members = {(page, resolve(page, a["href"])) for page in notes
               for a in soup(example_site, page).select(".memberships h3 a, .memberships .notebook a")
               if resolve(page, a["href"]) in notebooks}
    assert members <= {(s, t) for s, t, kind in edges if kind == "member-of"}
    # extractions and comments are folded into their note: its tooltip counts them
    tip = soup(example_site, SITE_GRAPH).select_one('a.node[href$="cvl-2024-11-14.html"] title').get_text()
    assert tip.startswith("Séance budgétaire du 14 novembre 2024 — ") and "extraction" in tip and "commentaire" in tip
    text = soup(example_site, SITE_GRAPH).select_one("details.graph-list")
    assert len(text.select(":scope > ul > li")) == len(nodes), "the text alternative lists the same nodes"


def test_a_notebook_graph_holds_its_notes_only(example_site: Path) -> None:
    path = notebook_graph_path("cvl")
    nodes, edges = drawn(example_site, path)
    listed = {resolve("notebooks/cvl.html", a["href"]) for a in soup(example_site, "notebooks/cvl.html").select(".note-link")}
    assert set(nodes) == listed, "the notebook's notes, every kind of them"
    assert all(kind != "member-of" for _s, _t, kind in edges), "every node is a member: that edge says nothing here"


def test_a_note_page_draws_its_neighbourhood(example_site: Path) -> None:
    page = "notes/cvl-2024-11-14.html"
    doc = soup(example_site, page)
    nodes, edges = drawn(example_site, page, "details.local-graph svg.graph-svg")
    assert nodes[0] == page and len(nodes) <= LOCAL_NEIGHBOURS + 1
    backlinks = {resolve(page, a["href"]) for a in doc.select(".backlinks a")}
    assert backlinks <= set(nodes), "every note linking here is a neighbour"
    assert all(page in (s, t) for s, t, _kind in edges), "depth 1: every edge touches the note"


def test_two_builds_draw_the_same_bytes(example_site: Path, tmp_path: Path) -> None:
    again = tmp_path / "site"
    build(CONTENT, again, strict=True)
    for path in (SITE_GRAPH, notebook_graph_path("cvl"), "notes/cvl-2024-11-14.html"):
        assert (again / path).read_bytes() == (example_site / path).read_bytes(), path


def _note(slug: str, notebook: str, title: str = "") -> Note:
    return Note(slug, title or slug, NoteType.NOTE, None, (), "", (Membership(notebook, {}, 1),), None, None, "", 1, (),
                SourceRef(f"notes/{slug}.md", 1))


def test_past_the_limit_the_least_connected_notes_are_grouped_and_labels_never_overlap() -> None:
    notes = {f"n{i:04d}": _note(f"n{i:04d}", "a" if i % 3 else "b") for i in range(1500)}
    links = [(f"n{i:04d}", f"n{(i * 7) % 1500:04d}") for i in range(0, 1500, 2)]
    paths = {f"note:{s}": f"notes/{s}.html" for s in notes} | {"notebook:a": "notebooks/a.html",
                                                               "notebook:b": "notebooks/b.html"}
    graph = note_graph(notes, {"a": "A", "b": "B"}, paths, [], links)
    drawing = page_drawing(graph)
    more = [n for n in drawing.nodes if n.kind is NodeKind.MORE]
    assert len(drawing.nodes) <= MAX_DRAWN + len(more) and len(more) == 2
    assert sum(n.count for n in more) + sum(n.kind is NodeKind.NOTE for n in drawing.nodes) == 1500
    assert len(drawing.labelled) <= MAX_LABELS
    boxes = [label_box(*drawing.positions[k], drawing.radius[k], drawing.labels[k], drawing.sides.get(k, ""))
             for k in drawing.labelled]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), "labels only where they fit"
    assert all(0 <= x <= drawing.width and 0 <= y <= drawing.height for x, y in drawing.positions.values())
    assert page_drawing(graph) == drawing, "the same graph, the same drawing"
    assert local_drawing(graph, "n0002") is not None, "n0002 links to n0014"
    assert local_drawing(graph, "n0001") is None, "a note with no neighbour but its notebook draws none"



def test_a_note_added_to_one_notebook_lays_out_no_other_notebooks_disc() -> None:
    """Four notebooks of 1,250 notes: each one's room was a whole number of the exact total
    (149), so a note added to one took a node from the three others, laid out again."""
    def graph_of(count: int) -> NoteGraph:
        notes = {f"n{i:05d}": _note(f"n{i:05d}", "abcd"[i % 4] if i < 5000 else "a") for i in range(count)}
        links = [(f"n{i:05d}", f"n{(i * 7) % 5000:05d}") for i in range(0, 5000, 3)]
        paths = {f"note:{s}": f"notes/{s}.html" for s in notes} | {f"notebook:{b}": f"notebooks/{b}.html" for b in "abcd"}
        return note_graph(notes, {b: b.upper() for b in "abcd"}, paths, [], links)

    memo = CountingMemo()
    before = page_drawing(graph_of(5000), lay_out=partial(disc_recalled, memo))
    assert memo.made["disc-layout"] == 4
    after = page_drawing(graph_of(5001), lay_out=partial(disc_recalled, memo))
    assert memo.made["disc-layout"] <= 5, "at most the disc of the notebook that has a note more"
    assert sum(n.kind is NodeKind.NOTE for n in after.nodes) <= MAX_DRAWN
    assert sum(n.kind is NodeKind.NOTE for n in before.nodes) >= MAX_DRAWN - MAX_DRAWN // 32 - 4, "a 32nd less at most"


def test_hostile_titles_are_text_in_the_drawing(small: Path, tmp_path: Path) -> None:
    note = small / "notes" / "conseil-b.md"
    text = note.read_text(encoding="utf-8")
    hostile = '</title><script>alert(1)</script><a href="javascript:x">'
    note.write_text(re.sub(r"^title: .*$", f"title: '{hostile}'", text, count=1, flags=re.M), encoding="utf-8")
    out = tmp_path / "site"
    build(small, out, search=False)
    for path in (SITE_GRAPH, "notes/conseil-a.html"):
        html = (out / path).read_text(encoding="utf-8")
        doc = soup(out, path)
        assert "<script>alert" not in html and not doc.select('a[href^="javascript"]'), path
        assert not [s for s in doc.find_all("script") if "alert" in s.get_text()], path
        assert any(t.get_text().startswith(hostile) for t in doc.select("svg title")), "the title, as text"


@pytest.mark.slow
def test_at_the_tsc_scale_the_graph_pages_stay_under_the_budget(tmp_path: Path) -> None:
    from bench.graph import measure

    figures = measure(tmp_path, notes=400, extractions=2000)
    assert figures.nodes >= 400 and figures.edges > 400
    for path, (_size, packed) in figures.pages.items():
        assert packed <= GRAPH_BUDGET_KB * 1024, (path, packed)


def test_labels_tell_five_hundred_meetings_apart_and_keep_their_dates() -> None:
    """Issue 57: the titles of a notebook of minutes share all but their date; cut at their
    end, every label read "Node.js Foundation TSC Me…". Shortened from the start, each keeps
    what tells it apart."""
    from datetime import date, timedelta

    dates = [(date(2015, 1, 1) + timedelta(days=7 * i)).isoformat() for i in range(500)]
    titles = {f"note:m{i}": ("tsc", f"Node.js Foundation TSC Meeting {d}") for i, d in enumerate(dates)}
    titles["note:other"] = ("tsc", "Working group charter")
    titles["note:elsewhere"] = ("other", "Node.js Foundation TSC Meeting 2015-01-01")
    labels = short_labels(titles)
    meetings = [labels[f"note:m{i}"] for i in range(500)]
    assert len(set(meetings)) == 500, "every meeting's label its own"
    assert all(d in label and len(label) <= LABEL_CHARS for d, label in zip(dates, meetings, strict=True))
    assert labels["note:m0"] == "…2015-01-01", "the words every title shares dropped, the date kept"
    assert labels["note:other"] == "Working group charter", "a title that fits is kept whole"
    assert labels["note:elsewhere"].endswith("2015-01-01"), "a long title alone in its notebook keeps its date"
    # two series in one notebook: each label keeps the word that tells the series apart
    mixed = {f"note:t{i}": ("n", f"Node.js Foundation TSC Meeting 2019-0{i}-01") for i in range(1, 5)} | \
            {f"note:c{i}": ("n", f"Node.js Foundation CTC Meeting 2019-0{i}-01") for i in range(1, 5)}
    shown = short_labels(mixed)
    assert len(set(shown.values())) == 8 and all("2019-0" in v for v in shown.values()), shown
    # two titles that fit alike at their end keep both their ends; a date in words kept
    alike = short_labels({"note:a": ("n", "Préparation du bureau de mars (interne)"),
                          "note:b": ("n", "Préparation du bureau de septembre, avance des dossiers (interne)")})
    assert len(set(alike.values())) == 2 and all(len(v) <= LABEL_CHARS for v in alike.values()), alike
    assert short_labels({"s": ("n", "Séance budgétaire du 14 novembre 2024")})["s"].endswith("14 novembre 2024")
    assert short_labels(dict(reversed(list(titles.items())))) == labels, "the same titles, the same labels"


def test_a_graph_patched_from_the_last_one_is_the_one_made_whole() -> None:
    """A graph patched from the last build's (:func:`graph_patched`): the notes changed whose
    edges are as they were (a title, a body, an extraction's comments, a category in the
    same notebook) get new nodes, the rest is taken as it was, and it equals the graph made
    whole; any change of an edge, a notebook or the notes themselves is made whole."""
    import datetime as dt
    from dataclasses import replace

    from generator.corpus.model import Comment, Extraction, Stance
    from generator.site.graph_view import GraphInputs, graph_patched, layout_digest

    notes = {f"n{i}": _note(f"n{i}", "ab"[i % 2]) for i in range(8)}
    paths = {f"note:{s}": f"notes/{s}.html" for s in notes} | {"notebook:a": "notebooks/a.html",
                                                               "notebook:b": "notebooks/b.html"}
    was = GraphInputs(notes, {"a": "A", "b": "B"}, paths, [("n0", "n3")], [("n1", "n2"), ("n2", "n5")])
    last = was.graph()
    layout_digest(last)
    source = SourceRef("notes/n4.extractions.yaml", 1)
    comment = Comment("c-1", "x-1", "A", dt.date(2024, 1, 2), next(iter(Stance)), "un avis", "", None, source)
    extraction = Extraction("x-1", "n4", "q", "", "", None, "", "A", None, False, (comment,), source)

    def changed(**fields: object) -> GraphInputs:
        return replace(was, **fields)  # type: ignore[arg-type]

    patched = {
        "a title": changed(notes={**notes, "n4": replace(notes["n4"], title="Autre titre")}),
        "a body": changed(notes={**notes, "n4": replace(notes["n4"], body="Un autre texte.")}),
        "an extraction commented": changed(notes={**notes, "n4": replace(notes["n4"], extractions=(extraction,))}),
        "a category": changed(notes={**notes, "n4": replace(notes["n4"], memberships=(
            Membership("a", {"theme": ["Budget"]}, 1),))}),
    }
    for what, now in patched.items():
        got = graph_patched(last, was, now)
        assert got is not None, what
        assert got == now.graph(), what
        assert got.edges is last.edges, f"{what}: the edges taken as they were"
        # the drawings' reads carried where each node is laid out as it was (a title, a body, a category)
        assert (got.layout is not None) == (what != "an extraction commented"), what
        assert layout_digest(got) == layout_digest(now.graph()), what
    assert graph_patched(last, was, patched["a title"]).nodes["note:n4"].title == "Autre titre"  # type: ignore[union-attr]
    assert graph_patched(last, was, patched["an extraction commented"]).nodes[  # type: ignore[union-attr]
        "note:n4"].comments == 1
    whole = {
        "a link": changed(links=[("n1", "n2")]),
        "a citation": changed(cites=[("n0", "n4")]),
        "a notebook retitled": changed(notebooks={"a": "A!", "b": "B"}),
        "another notebook": changed(notes={**notes, "n4": replace(notes["n4"], memberships=(
            Membership("b", {}, 1),))}),
        "a second membership": changed(notes={**notes, "n4": replace(notes["n4"], memberships=(
            Membership("a", {}, 1), Membership("b", {}, 1)))}),
        "a note added": changed(notes={**notes, "n9": _note("n9", "a")},
                                paths={**paths, "note:n9": "notes/n9.html"}),
    }
    for what, now in whole.items():
        assert graph_patched(last, was, now) is None, what
