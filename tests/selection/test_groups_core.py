"""Evidence groups (INV-10) without a build: single linkage under a threshold on hand-made
vectors (points on a circle, so every distance is known), explained memberships, chaining
metrics and warnings, and ``select``'s ordering, map and "central member" count over a
tiny corpus (embedded TF-IDF, or an endpoint's vectors given as a cache: no model, no
network)."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from itertools import combinations
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse  # type: ignore[import-untyped]

from generator.corpus.model import Corpus
from generator.corpus.verdicts import text_hash
from generator.selection.embeddings import tfidf
from generator.selection.groups import (
    CHAINING_SHARE,
    Edge,
    Group,
    central_member,
    distances_under,
    group,
    pair_distance,
)
from generator.selection.oppositions import requests
from generator.selection.select import debate_key, debate_order, select, selection_threshold
from generator.selection.vectors import embeddings_settings, vectors_for
from support.tiny import com, corpus_of, ext, note_md


def circle(*degrees: float) -> sparse.csr_matrix:
    """Unit vectors at these angles: the distance of two is 100 × (1 − cos(their angle))."""
    return sparse.csr_matrix(np.array([[math.cos(math.radians(d)), math.sin(math.radians(d))] for d in degrees]))


def expected_distance(a: float, b: float) -> float:
    return round(100 * (1 - math.cos(math.radians(a - b))), 1)


def test_distances_are_rounded_before_the_threshold() -> None:
    # 100 × (1 − cos 30°) = 13.397…: rounded to 13.4, it is under 13.4 and over 13.3 (INV-13)
    vectors = circle(0, 30)
    assert pair_distance(vectors, 0, 1) == expected_distance(0, 30) == 13.4
    assert distances_under(vectors, 13.4) == [(0, 1, 13.4)]
    assert distances_under(vectors, 13.3) == []


@pytest.mark.xfail(strict=True, reason="distances_under reads only the sparse product's stored entries: two "
                                       "orthogonal vectors (distance exactly 100, common with TF-IDF) are never "
                                       "an edge, even under a threshold of 100")
def test_distance_100_is_under_a_threshold_of_100() -> None:
    orthogonal = sparse.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]))  # as two texts sharing no feature
    assert pair_distance(orthogonal, 0, 1) == 100.0
    assert distances_under(orthogonal, 100.0) == [(0, 1, 100.0)]


def test_single_linkage_keeps_singletons_and_explains_each_member_by_a_real_edge() -> None:
    # a-b 4.9, b-c 7.3, a-c 23.4, z opposite: under 25, c joins by its nearest member b, not a centroid
    groups = group(["a", "b", "c", "z"], circle(0, 18, 40, 180), 25)
    assert [g.members for g in groups] == [["a", "b", "c"], ["z"]]
    abc, z = groups
    assert abc.edges == [Edge("b", "a", expected_distance(0, 18)), Edge("c", "b", expected_distance(18, 40))]
    assert (abc.diameter, abc.beyond_share, abc.chaining, abc.bridges) == (expected_distance(0, 40), 0.0, False, [])
    assert z == Group(["z"])


def test_every_edge_is_under_the_threshold_and_spans_the_group() -> None:
    angles = {"a": 0, "b": 12, "c": 25, "d": 70, "e": 82, "f": 200}
    threshold = 10.0
    groups = group(list(angles), circle(*angles.values()), threshold)
    assert sorted(m for g in groups for m in g.members) == sorted(angles), "every id in exactly one group"
    for g in groups:
        assert len(g.edges) == len(g.members) - 1
        joined = {g.members[0]}
        for edge in g.edges:  # each edge joins a new member to one already there
            assert edge.via in joined and edge.member not in joined
            assert edge.distance == expected_distance(angles[edge.member], angles[edge.via]) <= threshold
            joined.add(edge.member)
    # single linkage: two members share a group iff a chain of pairs under the threshold links them
    assert [g.members for g in groups] == [["a", "b", "c"], ["d", "e"], ["f"]]


def test_groups_do_not_depend_on_the_order_of_ids() -> None:
    angles = [("a", 0), ("b", 12), ("c", 25), ("d", 70), ("e", 82), ("f", 200), ("g", 95)]
    reference = group([i for i, _ in angles], circle(*(d for _, d in angles)), 15)
    shuffled = angles[:]
    random.Random(4).shuffle(shuffled)
    assert group([i for i, _ in shuffled], circle(*(d for _, d in shuffled)), 15) == reference


CHAINS = [
    # angles, threshold → beyond share, chaining, bridges
    ("all close", (0, 10, 20), 20, 0.0, False, []),
    ("exactly one third is no warning", (0, 30, 60), 20, 1 / 3, False, []),
    ("a chain of four", (0, 30, 60, 90), 20, 3 / 6, True, ["b", "c"]),
    ("a chain of five", (0, 30, 60, 90, 120), 20, 6 / 10, True, ["b", "c", "d"]),
]


@pytest.mark.parametrize("angles,threshold,share,chaining,bridges", [c[1:] for c in CHAINS], ids=[c[0] for c in CHAINS])
def test_chaining_metrics(angles: tuple[float, ...], threshold: float, share: float, chaining: bool,
                          bridges: list[str]) -> None:
    ids = "abcdefgh"[:len(angles)]
    (only,) = group(list(ids), circle(*angles), threshold)
    pairs = [expected_distance(angles[i], angles[j]) for i, j in combinations(range(len(angles)), 2)]
    # recomputed here: the share of member pairs beyond the threshold, and the widest pair
    assert only.beyond_share == pytest.approx(sum(d > threshold for d in pairs) / len(pairs)) == pytest.approx(share)
    assert only.diameter == max(pairs)
    assert only.chaining is chaining is (share > CHAINING_SHARE)
    assert only.bridges == bridges


def test_two_members_have_no_chaining_metrics() -> None:
    (pair,) = group(["a", "b"], circle(0, 30), 20)
    assert (pair.members, pair.diameter, pair.beyond_share, pair.chaining) == (["a", "b"], 0.0, 0.0, False)


def test_central_member_has_the_least_total_distance() -> None:
    ids = ["a", "b", "c", "z"]
    assert central_member(["c", "a", "b"], circle(0, 18, 40, 180), ids) == "b"


# ---------------------------------------------------------------- select over a tiny corpus

QUOTES = {"e1": "Le budget est voté", "e2": "Le foyer ouvre", "e3": "La réserve est de 800 euros",
          "e4": "Le club lit Sartre"}
ANGLES = {"e1": 0, "e2": 30, "e3": 60, "e4": 180}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    body = "\n\n".join(QUOTES.values()) + "\n"
    extractions = [
        ext("e1", QUOTES["e1"], comments=[com("w1", "disagree", withdrawn={"date": "2025-03-01", "reason": "retiré"})]),
        ext("e2", QUOTES["e2"], comments=[com("c1", "disagree"), com("c2", "agree")]),
        ext("e3", QUOTES["e3"], comments=[com("c3", "agree")]),
        ext("e4", QUOTES["e4"], comments=[com("c4", "disagree")]),
    ]
    loaded, problems = corpus_of({"a": note_md(body, notebooks={"conseil": {"theme": ["Budget"]}})},
                                 {"a": extractions})
    assert problems == []
    return loaded


def endpoint_cache(angles: Mapping[str, float]) -> dict[str, list[float]]:
    return {text_hash(QUOTES[i]): [math.cos(math.radians(d)), math.sin(math.radians(d))] for i, d in angles.items()}


def test_debate_order_most_disagreeing_first(corpus: Corpus) -> None:
    extraction = corpus.extractions
    ids = ["e1", "e2", "e3", "e4"]
    # e2: 1 disagreement, 2 comments; e4: 1, 1; e3: 0, 1; e1: its disagreement is withdrawn
    assert [debate_key(extraction[i], n) for n, i in enumerate(ids)] == [(0, 0, 0), (-1, -2, 1), (0, -1, 2), (-1, -1, 3)]
    assert select(corpus, ids).order == ["e2", "e4", "e3", "e1"]


def test_select_with_endpoint_vectors(corpus: Corpus) -> None:
    result = select(corpus, ["e1", "e2", "e3", "e4", "unknown"], 20, "endpoint", endpoint_cache(ANGLES))
    assert (result.vectors, result.threshold, result.order) == ("endpoint", 20, ["e2", "e4", "e3", "e1"])
    # members in debate order, groups by their most debated member; the singleton is kept
    assert [g.members for g in result.groups] == [["e2", "e3", "e1"], ["e4"]]
    assert result.groups[0].edges == [Edge("e2", "e1", 13.4), Edge("e3", "e2", 13.4)]
    # "each group by its central member" (e2) would erase e1 and e3, and no live disagreement
    assert result.central_erased == (2, 0)
    assert set(result.points) == set(QUOTES)


def test_a_missing_endpoint_vector_falls_back_to_tfidf_and_says_so(corpus: Corpus) -> None:
    partial = endpoint_cache({"e1": 0, "e2": 30})
    assert select(corpus, list(QUOTES), 20, "endpoint", partial).vectors == "tfidf-fallback"
    assert select(corpus, list(QUOTES), 20).vectors == "tfidf"
    assert vectors_for([], "endpoint", {})[1] == "tfidf-fallback"


def test_select_of_nothing(corpus: Corpus) -> None:
    result = select(corpus, ["unknown"], 20)
    assert (result.order, result.groups, result.points, result.central_erased) == ([], [], {}, (0, 0))


def test_the_map_is_deterministic_and_centred(corpus: Corpus) -> None:
    cache = endpoint_cache({"e1": 0, "e2": 90})
    result = select(corpus, ["e2", "e1"], 20, "endpoint", cache)
    # classical MDS of two points 100 apart: ±50 on the first axis, the largest component positive
    assert result.points == {"e1": (50.0, 0.0), "e2": (-50.0, 0.0)}
    assert select(corpus, ["e1", "e2"], 20, "endpoint", cache).points == result.points
    assert select(corpus, ["e3"], 20).points == {"e3": (0.0, 0.0)}


def test_tfidf_rows_are_unit_and_identical_texts_coincide() -> None:
    vectors = tfidf(["Le budget est voté", "le BUDGET est vote", "Club Sartre lu", ""])
    norms = np.sqrt(vectors.multiply(vectors).sum(axis=1)).A1
    assert norms.round(9).tolist() == [1.0, 1.0, 1.0, 0.0]  # an empty text has no features
    # case and accents are folded: the first two are the same text
    assert pair_distance(vectors, 0, 1) == 0.0
    assert pair_distance(vectors, 0, 2) == 100.0  # nothing shared


def test_a_bag_counts_each_feature_as_often_as_the_text_has_it() -> None:
    """A text's ids (made word by word from cached grams) are its features one by one; a
    row of the matrix holds exactly its distinct features; accents go whatever their form
    (composed, decomposed, rarer marks: every combining character); and a matrix does not
    depend on which texts a process saw first (ids are given on first sight, columns
    sorted by feature)."""
    import unicodedata
    from collections import Counter

    from generator.selection import embeddings

    texts = ["Le budget est voté, le budget est revoté.", "Œuvre d'art : l'été à Montréal ; été !", "", "a a a",
             unicodedata.normalize("NFD", "Décidé à Noël"), "x\u0483y e\u20dd ﬁn"]
    for text in texts:
        ids = embeddings._ids(text)
        names = embeddings._names()  # after: ids are given on first sight
        assert Counter(names[i] for i in ids) == Counter(embeddings._features(text))
        by_hand = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
        assert embeddings._words(text) == embeddings._WORD.findall(by_hand)
    matrix = tfidf(texts)
    assert matrix.shape[0] == len(texts) and matrix[2].nnz == 0  # an empty text: an empty row
    assert Counter(embeddings._features("Été été"))["c:<ete"] == 2  # folded: the same gram twice
    assert embeddings._words(texts[4]) == ["decide", "a", "noel"]
    forwards, backwards = tfidf([*texts, "Zéphyr inédit"]), tfidf(["Zéphyr inédit", *reversed(texts)])
    assert (forwards[::-1] != backwards).nnz == 0


@pytest.mark.parametrize("extra,expected", [
    ({}, None),  # not set: the automatic rule, per perimeter
    ({"selection": {"threshold": 24}}, 24.0),
    ({"selection": {"threshold": 12.5}}, 12.5),
    ({"selection": {"threshold": True}}, None),  # a boolean is no number (carnet check says so)
    ({"selection": {"threshold": "24"}}, None),
    ({"selection": 24}, None),
])
def test_selection_threshold(extra: dict[str, Any], expected: float | None) -> None:
    assert selection_threshold(extra) == expected


@pytest.mark.parametrize("extra,expected", [
    ({}, ("tfidf", "")),
    ({"embeddings": {"provider": "endpoint", "model": "bge-m3"}}, ("endpoint", "bge-m3")),
    ({"embeddings": {"provider": "other", "model": "x"}}, ("tfidf", "")),
    ({"embeddings": "endpoint"}, ("tfidf", "")),
])
def test_embeddings_settings(extra: dict[str, Any], expected: tuple[str, str]) -> None:
    assert embeddings_settings(extra) == expected


@pytest.mark.parametrize("count,budget", [(3, 12000), (40, 600), (25, 300)])
def test_the_oppositions_pass_sees_every_pair_once_at_least(count: int, budget: int) -> None:
    # one pass over the whole perimeter: however it is cut, every pair shares a request
    items = [(f"x{n}", "mot " * (n % 7 + 3)) for n in range(count)]
    batches = requests(items, budget)
    seen = {frozenset((a[0], b[0])) for batch in batches for a, b in combinations(batch, 2)}
    assert seen == {frozenset((a[0], b[0])) for a, b in combinations(items, 2)}
    assert all(sum(len(q) + len(i) + 8 for i, q in batch) <= budget for batch in batches)
    assert (len(batches) == 1) is (sum(len(q) + len(i) + 8 for i, q in items) <= budget)


def test_the_iterative_map_is_the_exact_one_to_its_rounding(monkeypatch: pytest.MonkeyPatch) -> None:
    """From ITERATIVE_FROM points the map's eigenpairs are iterated to ITERATIVE_TOLERANCE:
    coordinates as LAPACK's exact decomposition gives them, to their 0.1."""
    from generator.selection import select as selecting
    from generator.selection.vectors import vectors_for

    # sentences of words drawn at random (as the bench corpus's): nearly orthogonal vectors, the
    # two largest eigenvalues within a few per cent, where a loose tolerance moves points
    chance = random.Random(7)
    words = [f"mot{n}" for n in range(4000)]
    quotes = [" ".join(chance.choice(words) for _ in range(chance.randint(8, 22))) for _n in range(420)]
    ids = [f"e{n:03d}" for n in range(len(quotes))]
    vectors, _ = vectors_for(quotes, "tfidf", {})
    similarity = vectors @ vectors.T
    assert len(ids) >= selecting.ITERATIVE_FROM
    iterated = selecting._map(ids, similarity)
    monkeypatch.setattr(selecting, "ITERATIVE_FROM", len(ids) + 1)
    exact = selecting._map(ids, similarity)
    assert iterated == exact
    assert len(set(iterated.values())) > len(ids) // 2, "a map, not a heap"


class _Debated:
    """What :func:`debate_key` reads of an extraction: its comments, live ones, disagreements."""

    def __init__(self, comments: int, live: int, disagreements: int) -> None:
        self.comments = (None,) * comments
        self.live_comments = [None] * live
        self.disagreements = disagreements


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)), max_size=40))
def test_debate_order_is_the_perimeter_sorted_by_debate_key(debates: list[tuple[int, int, int]]) -> None:
    """The order sorts only the debated extractions and keeps the others in document order
    after them: the same as sorting every one of them by its key (INV-10), recomputed here."""
    extraction = {}
    for n, (comments, live, disagreements) in enumerate(debates):
        live = min(live, comments)
        extraction[f"e{n:02d}"] = _Debated(comments, live, min(disagreements, live))
    ids = sorted(extraction, key=lambda i: (int(i[1:]) * 5 % 11, i))  # document order is not id order
    expected = sorted(ids, key=lambda i: debate_key(extraction[i], ids.index(i)))  # type: ignore[arg-type]
    assert debate_order(extraction, ids) == expected  # type: ignore[arg-type]
