"""The selection's memory is bounded by construction (issue 56, item 2): 20,000 overlapping
extractions in one perimeter took 7.6 GB, every pair of passages that share words being
kept. Products are made a block of rows at a time, a perimeter keeps at most
``pair_cap(n)`` pairs (linear in n), the members past the cap are listed alone and marked,
and the results are those of the dense computation wherever the cap is not reached."""

from __future__ import annotations

import json
import random
from itertools import combinations
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import yaml
from bs4 import BeautifulSoup
from scipy import sparse  # type: ignore[import-untyped]

from generator.pipeline import build
from generator.selection import groups as grouping_module
from generator.selection.embeddings import tfidf
from generator.selection.groups import (
    PAIR_FLOOR,
    PAIRS_PER_MEMBER,
    articulation_points,
    central_member,
    group,
    grouping,
    pair_cap,
    pairs_under,
    row_blocks,
)
from generator.selection.select import likeness

VOCABULARY = ["budget", "foyer", "salle", "vote", "conseil", "réserve", "sortie", "projet", "élèves", "séance",
              "région", "dossier", "montant", "achat", "report", "dépense", "club", "lecture", "statuts", "menu"]


def overlapping(n: int, seed: int = 1) -> list[str]:
    """``n`` passages of one note as the issue made them: windows of 10 words sliding over
    paragraphs of 30 words of a small vocabulary (each close to most of the others)."""
    rng = random.Random(seed)
    quotes: list[str] = []
    while len(quotes) < n:
        words = [rng.choice(VOCABULARY) for _ in range(30)]
        quotes += [" ".join(words[start:start + 10]) for start in range(21)]
    return quotes[:n]


def dense_pairs(vectors: sparse.csr_matrix, threshold: float) -> set[tuple[int, int, float]]:
    """Every pair i < j the product stores, at its rounded distance, from the whole product at once."""
    product = (vectors @ vectors.T).tocoo()
    distance = np.round(100.0 * (1.0 - np.clip(product.data, -1.0, 1.0)), 1)
    return {(i, j, d) for i, j, d in zip(product.row.tolist(), product.col.tolist(), distance.tolist(), strict=True)
            if i < j and d <= threshold}


@pytest.mark.parametrize("cells", [1, 37, 500, 10**9])
def test_pairs_made_by_blocks_are_those_of_the_whole_product(cells: int) -> None:
    vectors = tfidf(overlapping(120) + [f"{a} {b} texte à part" for a, b in combinations(VOCABULARY[:6], 2)])
    for threshold in (20.0, 60.0, 75.0):
        rows, cols, distances, compared = pairs_under(vectors, threshold, cells=cells)
        assert compared == vectors.shape[0]
        found = set(zip(rows.tolist(), cols.tolist(), distances.tolist(), strict=True))
        assert len(found) == len(rows), "each pair once"
        assert found == dense_pairs(vectors, threshold)
        # read from a product made already, the same pairs
        given = pairs_under(vectors, threshold, vectors @ vectors.T)
        assert set(zip(given.rows.tolist(), given.cols.tolist(), given.distances.tolist(), strict=True)) == found


@pytest.mark.parametrize("n,columns,cells", [(0, 0, 10), (1, 1, 10), (1000, 1000, 4000), (10, 7, 1), (5000, 5000, 10**6),
                                             (20000, 20000, 4_000_000)])
def test_a_block_of_a_product_holds_a_bounded_number_of_entries(n: int, columns: int, cells: int) -> None:
    blocks = row_blocks(n, columns, cells)
    assert [row for start, stop in blocks for row in range(start, stop)] == list(range(n)), "each row once, in order"
    assert all((stop - start) * columns <= max(cells, columns) for start, stop in blocks)


def test_the_pairs_kept_stop_at_the_cap_after_a_prefix_of_members() -> None:
    # 60 copies of one passage: every pair at distance 0. A cap of 100 pairs takes 14 members
    # (91 pairs among them); the 15th would bring 14 more
    vectors = sparse.csr_matrix(np.ones((60, 3)) / np.sqrt(3))
    ids = [f"e{i:02d}" for i in range(60)]
    rows, cols, _distances, compared = pairs_under(vectors, 75.0, cap=100, cells=50)
    assert compared == 14
    assert len(rows) == 91 and bool((cols < 14).all())
    groups, threshold = grouping(ids, vectors, None, cap=100)
    assert groups[0].members == ids[:14] and groups[0].compared
    assert groups[0] == grouping(ids[:14], vectors[:14], None)[0][0], "the compared members grouped as if alone"
    assert [g.members for g in groups[1:]] == [[i] for i in ids[14:]]
    assert not any(g.compared for g in groups[1:]), "the others are marked, never shown as found alone"
    assert threshold == grouping(ids[:14], vectors[:14], None)[1]


def test_overlapping_passages_keep_pairs_linear_in_their_number(monkeypatch: pytest.MonkeyPatch) -> None:
    # the case at a small size (a smaller cap, no floor): the pairs under the ceiling
    # grow as n² (each passage close to most others), the pairs kept stay under 20 × n
    monkeypatch.setattr(grouping_module, "PAIR_FLOOR", 0)
    monkeypatch.setattr(grouping_module, "PAIRS_PER_MEMBER", 20)
    close = {}
    for n in (200, 400, 800):
        vectors = tfidf(overlapping(n))
        everything = pairs_under(vectors, 75.0, cap=n * n)
        assert everything.compared == n
        close[n] = len(everything.rows)
        capped = pairs_under(vectors, 75.0)
        assert len(capped.rows) <= pair_cap(n) == 20 * n < close[n]
        assert 0 < capped.compared < n
        # what was kept is exactly the pairs among the members compared, and the next member's did not fit
        among = everything.cols < capped.compared
        assert sorted(zip(capped.rows.tolist(), capped.cols.tolist(), strict=True)) == \
            sorted(zip(everything.rows[among].tolist(), everything.cols[among].tolist(), strict=True))
        assert int((everything.cols <= capped.compared).sum()) > pair_cap(n)
    assert close[800] > 12 * close[200], "quadratic without the cap"


def test_the_cap_leaves_perimeters_up_to_the_maps_limit_whole() -> None:
    assert pair_cap(2000) >= 2000 * 1999 // 2 and pair_cap(10) == PAIR_FLOOR
    assert pair_cap(100_000) == PAIRS_PER_MEMBER * 100_000


def _random_graph(rng: random.Random) -> nx.Graph[int]:
    n = rng.randint(1, 40)
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(range(n))
    shape = rng.choice(["sparse", "tree", "chain", "dense"])
    if shape == "chain":
        graph.add_edges_from((i, i + 1) for i in range(n - 1))
    elif shape == "tree":
        graph.add_edges_from((i, rng.randrange(i)) for i in range(1, n))
    p = {"sparse": 0.08, "tree": 0.02, "chain": 0.03, "dense": 0.4}[shape]
    graph.add_edges_from((a, b) for a, b in combinations(range(n), 2) if rng.random() < p)
    return graph


@pytest.mark.parametrize("seed", range(40))
def test_articulation_points_are_networkx_ones(seed: int) -> None:
    graph = _random_graph(random.Random(seed))
    matrix = sparse.csr_matrix(nx.to_scipy_sparse_array(graph, nodelist=sorted(graph.nodes), format="csr"))
    assert articulation_points(matrix) == sorted(nx.articulation_points(graph))


def test_articulation_points_of_a_long_chain_need_no_recursion() -> None:
    n = 20_000
    chain = sparse.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1], format="csr")
    assert articulation_points(chain) == list(range(1, n - 1))


def test_a_chaining_groups_bridges_are_unchanged() -> None:
    # windows over one word list, sliding by one word (each close to the next two: no bridge),
    # then by two (close to the next only: each a bridge), under a fixed threshold: one chain
    words = [f"mot{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(70)]
    quotes = [" ".join(words[i:i + 8]) for i in [*range(20), *range(20, 60, 2)]]
    ids = [f"c{i:02d}" for i in range(len(quotes))]
    vectors = tfidf(quotes)
    (chain,) = [g for g in group(ids, vectors, 30.0) if len(g.members) > 2]
    assert chain.chaining and 0 < len(chain.bridges) < len(chain.members) - 2
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(chain.members)
    graph.add_edges_from((ids[i], ids[j]) for i, j, _d in zip(*pairs_under(vectors, 30.0)[:3], strict=True))
    assert chain.bridges == sorted(nx.articulation_points(graph.subgraph(chain.members)))


@pytest.mark.parametrize("cells", [1, 7, 10**9])
def test_the_central_member_summed_by_blocks_is_the_dense_one(monkeypatch: pytest.MonkeyPatch, cells: int) -> None:
    monkeypatch.setattr(grouping_module, "CELLS", cells)
    quotes = overlapping(90, seed=3)
    ids = [f"e{i:02d}" for i in range(90)]
    vectors = tfidf(quotes)
    rng = random.Random(cells)
    for size in (2, 3, 17, 90):
        members = rng.sample(ids, size)
        ordered = sorted(members)
        sub = vectors[[ids.index(m) for m in ordered]]
        distance = np.round(100.0 * (1.0 - np.clip((sub @ sub.T).toarray(), -1.0, 1.0)), 1)
        assert central_member(members, vectors, ids) == ordered[int(np.argmin(distance.sum(axis=1)))]


def test_a_perimeter_under_the_cap_is_grouped_as_before() -> None:
    # likeness reads its pairs from the product it made for the map: the same groups as by blocks
    quotes = [(f"x{i:04d}", q) for i, q in enumerate(overlapping(400, seed=7))]
    like = likeness(quotes, None)
    vectors = tfidf([q for _i, q in quotes])
    assert like.groups == grouping([i for i, _q in quotes], vectors, None)[0]
    assert all(g.compared for g in like.groups)


# ---------------------------------------------------------------- said on the site

def _overlapping_content(root: Path, n: int) -> Path:
    content = root / "content"
    (content / "notebooks").mkdir(parents=True)
    (content / "notes").mkdir()
    (content / "carnet.yaml").write_text(
        "title: Chevauchements\nbase_url: https://example.org/\nlanguage: fr\n"
        "licence:\n  name: CC BY 4.0\n  url: https://creativecommons.org/licenses/by/4.0/\n", encoding="utf-8")
    (content / "notebooks" / "conseil.yaml").write_text(
        "title: Conseil\nvisibility: public\nauthors: full\naxes:\n  theme:\n    title: Thème\n"
        "    categories: [Budget]\n", encoding="utf-8")
    rng = random.Random(5)
    paragraphs, quotes = [], []
    while len(quotes) < n:
        words = [rng.choice(VOCABULARY) for _ in range(30)]
        paragraphs.append(" ".join(words))
        quotes += [" ".join(words[start:start + 10]) for start in range(21)]
    (content / "notes" / "seance.md").write_text(
        "---\ntitle: Séance\ndate: 2025-01-01\nauthors: [Zoé]\nnotebooks:\n  conseil:\n    theme: [Budget]\n---\n"
        + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    (content / "notes" / "seance.extractions.yaml").write_text(yaml.safe_dump({"extractions": [
        {"id": f"x{i:04d}", "quote": q, "kind": "fait", "author": "Zoé"} for i, q in enumerate(quotes[:n])]},
        allow_unicode=True), encoding="utf-8")
    (content / "notes" / "wiki.md").write_text(
        "---\ntitle: Le wiki\ntype: wiki\nnotebooks:\n  conseil:\n    theme: [Budget]\nperimeter:\n"
        "  notebook: conseil\n  categories:\n    theme: [Budget]\n---\nUn article.\n\n## Section\n\n"
        "Une phrase qui cite un passage [[ext:x0000]].\n", encoding="utf-8")
    return content


def test_a_capped_selection_says_what_it_did_not_compare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grouping_module, "PAIR_FLOOR", 0)
    monkeypatch.setattr(grouping_module, "PAIRS_PER_MEMBER", 20)
    n = 300
    result = build(_overlapping_content(tmp_path, n), tmp_path / "site", search=False)
    (capped,) = result.summary.uncompared
    wiki, compared, total = capped
    assert (wiki, total) == ("wiki", n) and 0 < compared < n
    assert any("compared" in line and "wiki" in line for line in result.summary.lines())
    pages = sorted((tmp_path / "site" / "notes").glob("wiki.selection*.html"))
    first = BeautifulSoup(pages[0].read_bytes(), "html.parser")
    said = first.select_one(".uncompared").get_text()
    assert f"{compared} premières" in said and f"{n - compared} autres" in said
    marked = [li["data-ext"] for page in pages for li in BeautifulSoup(page.read_bytes(), "html.parser")
              .select("li[data-ext]") if "Non comparée" in li.get_text()]
    assert marked == [f"x{i:04d}" for i in range(compared, n)], "each one not compared is listed, and marked"
    nodes = json.loads((tmp_path / "site" / "graph.json").read_text(encoding="utf-8"))["nodes"]
    assert sum(node.get("compared") is False for node in nodes) == n - compared, "and so does the graph, each one"
