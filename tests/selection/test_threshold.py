"""The automatic threshold (generator/selection/threshold.py), recomputed by brute force: at
every value of the 0.1 grid up to the ceiling, single linkage's groups from the full distance
matrix and each group's share of pairs beyond; the rule's value is the largest at which no
group of three or more has more than a third of them beyond."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from generator.selection.groups import grouping
from generator.selection.threshold import CEILING, automatic_threshold


def _vectors(seed: int, n: int, dims: int = 24) -> sparse.csr_matrix:
    rng = np.random.default_rng(seed)
    # sparse and non-negative, like TF-IDF: each text takes a few words of one of three
    # overlapping topics, so distances run from near 0 to 100 and chains can form
    rows = np.zeros((n, dims))
    for i in range(n):
        topic = rng.integers(0, 3)
        words = rng.choice(np.arange(topic * 6, topic * 6 + 12) % dims, size=rng.integers(2, 6), replace=False)
        rows[i, words] = rng.random(len(words)) + 0.1
    rows /= np.linalg.norm(rows, axis=1)[:, None]
    return sparse.csr_matrix(rows)


def _brute_force(vectors: sparse.csr_matrix) -> float:
    distance = np.round(100.0 * (1.0 - np.clip((vectors @ vectors.T).toarray(), -1.0, 1.0)), 1)
    best = None
    for tenths in range(int(CEILING * 10) + 1):
        t = tenths / 10
        linked = sparse.csr_matrix(np.triu(distance <= t, 1))
        _count, labels = connected_components(linked, directed=False)
        chained = False
        for label in set(labels.tolist()):
            members = np.flatnonzero(labels == label)
            if len(members) < 3:
                continue
            sub = distance[np.ix_(members, members)][np.triu_indices(len(members), 1)]
            chained |= bool((sub > t).sum() / len(sub) > 1 / 3)
        if not chained:
            best = t
    assert best is not None
    return best


@pytest.mark.parametrize("seed", range(12))
def test_the_rule_is_the_largest_threshold_without_a_chain(seed: int) -> None:
    vectors = _vectors(seed, 9 + seed % 5)
    ids = [f"e{i:02d}" for i in range(vectors.shape[0])]
    groups, chosen = grouping(ids, vectors, None)
    assert chosen == _brute_force(vectors)
    assert not any(g.chaining for g in groups), "no group flagged chaining at the chosen threshold"
    assert [g.members for g in groups] == [g.members for g in grouping(ids, vectors, chosen)[0]], \
        "the groups are those of the chosen threshold given as a setting"


def test_edge_cases() -> None:
    empty = np.zeros(0, np.int64)
    assert automatic_threshold(4, empty, empty, np.zeros(0)) == CEILING, "no pair close: the ceiling"
    # a path a–b–c at 10 and 10, a–c at 40: at 10, one pair in three is beyond (not more than a third)
    rows, cols, d = np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([10.0, 10.0, 40.0])
    assert automatic_threshold(3, rows, cols, d) == 75.0
    # four on a path, each 10 from the next, the rest far: at 10, 3 of 6 pairs beyond: a chain from the start
    rows, cols, d = np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([10.0, 10.0, 10.0])
    assert automatic_threshold(4, rows, cols, d) == 9.9, "just under the first distance: every member alone"
    # the order of the pairs given does not matter
    rows, cols, d = np.array([2, 0, 1]), np.array([3, 1, 2]), np.array([10.0, 10.0, 10.0])
    assert automatic_threshold(4, rows, cols, d) == 9.9
