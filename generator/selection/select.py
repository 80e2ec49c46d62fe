"""A wiki's evidence selection: the perimeter's extractions grouped, explained, ordered
by the debate, with the oppositions recorded for it and a deterministic 2-D map. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import scipy.sparse  # type: ignore[import-untyped]  # scipy ships no type hints and scipy-stubs is no dependency
# numpy and scipy are imported where used: a build without wikis never pays for loading them

from generator.corpus.model import Corpus, Extraction
from generator.selection.groups import Group, central_member, grouping
from generator.selection.threshold import CEILING, ThresholdRule
from generator.selection.vectors import vectors_for

DEFAULT_THRESHOLD = CEILING
"""The threshold of a perimeter of fewer than two extractions (none is computed), and the bound
of the automatic rule."""


def selection_threshold(extra: Mapping[str, object]) -> float | None:
    """``selection: {threshold: N}`` in carnet.yaml (0–100 scale); None when it is not set: each
    perimeter then gets the automatic rule's (:mod:`generator.selection.threshold`)."""
    raw = extra.get("selection") or {}
    value = raw.get("threshold") if isinstance(raw, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


MAP_LIMIT = 2000


def debate_key(extraction: Extraction, position: int) -> tuple[int, int, int]:
    """Most disagreeing comments first, then most comments, then document order (INV-10)."""
    if not extraction.comments:  # most extractions of a large perimeter: no debate to count
        return (0, 0, position)
    return (-extraction.disagreements, -len(extraction.live_comments), position)


@dataclass
class Selection:
    """Attributes:
        order: the perimeter's extraction ids in debate order.
        groups: every group (singletons included), members in debate order, groups
            ordered by their most debated member.
        points: id → (x, y) of the 2-D map (classical MDS), empty above :data:`MAP_LIMIT`.
        central_erased: how many extractions "represent each group by its central member"
            would erase, and how many disagreeing comments would go with them.
    """

    threshold: float
    order: list[str]
    groups: list[Group]
    points: dict[str, tuple[float, float]] = field(default_factory=dict)
    central_erased: tuple[int, int] = (0, 0)
    vectors: str = "tfidf"
    rule: ThresholdRule = ThresholdRule.SETTING


def select(corpus: Corpus, ids: list[str], threshold: float | None = None, provider: str = "tfidf",
           cache: dict[str, list[float]] | None = None, rule: ThresholdRule | None = None) -> Selection:
    """The selection of ``ids``; ``threshold`` None: the automatic rule's. ``rule`` says where a
    given threshold comes from (default: the settings)."""
    like = likeness(perimeter_quotes(corpus, ids), threshold, provider, cache)
    if rule is not None:
        like = replace(like, rule=rule)
    return arrange(corpus, ids, like)


@dataclass
class Likeness:
    """What a perimeter's quotes make, whatever the debate around them: the heavy part of a
    selection (vectors, grouping, map), which a build cache keeps by the quotes alone, so an
    edit to a note's body or to an extraction's kind or comments never groups again.

    Attributes:
        groups: the groups, members in the canonical (sorted) order.
        central: each group's central member (:func:`central_member`; a singleton's own).
        points, vectors, threshold, rule: as :class:`Selection`'s.
    """

    groups: list[Group]
    central: list[str]
    points: dict[str, tuple[float, float]]
    vectors: str
    threshold: float = DEFAULT_THRESHOLD
    rule: ThresholdRule = ThresholdRule.SETTING


def perimeter_quotes(corpus: Corpus, ids: list[str]) -> list[tuple[str, str]]:
    """The perimeter's extractions known to the corpus, as ``(id, quote)`` sorted by id:
    all that :func:`likeness` reads of them."""
    extraction = corpus.extractions
    return sorted((i, extraction[i].quote) for i in ids if i in extraction)


def likeness(quotes: list[tuple[str, str]], threshold: float | None = None, provider: str = "tfidf",
             cache: dict[str, list[float]] | None = None) -> Likeness:
    """The groups and map of the extractions ``quotes`` (:func:`perimeter_quotes`) under
    ``threshold``, or the automatic rule's when it is None; of none, nothing (no vectors are
    made: :func:`arrange` gives an empty selection)."""
    rule = ThresholdRule.AUTOMATIC if threshold is None else ThresholdRule.SETTING
    if not quotes:
        return Likeness([], [], {}, provider, DEFAULT_THRESHOLD if threshold is None else threshold, rule)
    canonical = [i for i, _quote in quotes]
    vectors, produced_by = vectors_for([quote for _i, quote in quotes], provider, cache or {})
    # one product per perimeter, shared: the map needs all of it, the grouping the pairs under the threshold
    similarity = vectors @ vectors.T if 1 < len(canonical) <= MAP_LIMIT else None
    groups, chosen = grouping(canonical, vectors, threshold, similarity)
    index = {i: n for n, i in enumerate(canonical)}  # once, not once per group
    central = [central_member(g.members, vectors, canonical, index) if len(g.members) > 1 else g.members[0]
               for g in groups]
    points = _map(canonical, similarity) if len(canonical) <= MAP_LIMIT else {}
    return Likeness(groups, central, points, produced_by, chosen, rule)


def arrange(corpus: Corpus, ids: list[str], like: Likeness) -> Selection:
    """The selection of the perimeter ``ids`` from its quotes' :class:`Likeness`: in debate
    order (INV-10), with what representing each group by its central member would erase.
    ``like`` is left as it is (a build cache may hold it)."""
    extraction = corpus.extractions
    ids = [i for i in ids if i in extraction]
    if not ids:
        return Selection(like.threshold, [], [], rule=like.rule)
    order = debate_order(extraction, ids)
    rank = {i: n for n, i in enumerate(order)}
    # a singleton is in debate order already: kept as it is (50,000 copies made for nothing)
    ranked = [(replace(g, members=sorted(g.members, key=rank.__getitem__)) if len(g.members) > 1 else g, central)
              for g, central in zip(like.groups, like.central, strict=True)]
    ranked.sort(key=lambda pair: rank[pair[0].members[0]])
    erased = disagreeing = 0
    for g, keep in ranked:
        if len(g.members) > 1:
            for member in g.members:
                if member != keep:
                    erased += 1
                    disagreeing += extraction[member].disagreements
    return Selection(like.threshold, order, [g for g, _central in ranked], like.points, (erased, disagreeing),
                     like.vectors, like.rule)


def debate_order(extraction: Mapping[str, Extraction], ids: list[str]) -> list[str]:
    """``ids`` sorted by :func:`debate_key`. Every key of an extraction with no live comment
    nor disagreement is (0, 0, position), after all the others: those keep document order,
    and only the debated ones are sorted (two thirds of them at the benchmark's densities:
    8 % faster there than sorting all)."""
    debated = sorted(key for key in (debate_key(extraction[i], n) + (i,) for n, i in enumerate(ids)
                                     if extraction[i].comments) if key[0] or key[1])
    if not debated:
        return list(ids)
    first = {key[3] for key in debated}
    return [key[3] for key in debated] + [i for i in ids if i not in first]


ITERATIVE_FROM = 300
"""From this many points the map's two eigenpairs are found by Lanczos iterations
(ARPACK): a few hundred products with the matrix instead of LAPACK's n³ reduction."""


ITERATIVE_TOLERANCE = 1e-7
"""The iterative solver's relative tolerance on the eigenvalues."""


def _top_two(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two largest eigenpairs of a symmetric matrix. The iterative solver starts from
    a fixed vector (never a random one: the same map on every run) that is not orthogonal
    to them (the double-centred matrix sends the constant vector to zero, so not that)."""
    import numpy as np
    import scipy.linalg  # type: ignore[import-untyped]
    import scipy.sparse.linalg  # type: ignore[import-untyped]

    n = gram.shape[0]
    if n >= ITERATIVE_FROM:
        start = np.cos(np.arange(1, n + 1) * 0.6180339887498949) + 0.5
        try:
            # 1e-7: a third fewer products than 1e-10 (the two eigenvalues are often within 1 %),
            # the same coordinates to their 0.1 on six perimeters of 1,300 to 2,000 extractions
            values, vectors = scipy.sparse.linalg.eigsh(gram, k=2, which="LA", v0=start, tol=ITERATIVE_TOLERANCE,
                                                        maxiter=50 * n)
            return values, vectors
        except scipy.sparse.linalg.ArpackError:  # no convergence (two nearly equal eigenvalues): the exact way
            pass
    values, vectors = scipy.linalg.eigh(gram, subset_by_index=[max(0, n - 2), n - 1])
    return values, vectors


def _map(ids: list[str], similarity: scipy.sparse.csr_matrix | None) -> dict[str, tuple[float, float]]:
    """Classical MDS of the distances (``similarity``: the vectors' products; none for one
    point), eigenvector signs fixed (largest component positive), coordinates rounded: the
    same map on every machine."""
    import numpy as np
    n = len(ids)
    if n == 1 or similarity is None:
        return {ids[0]: (0.0, 0.0)}
    distance = np.round(100.0 * (1.0 - np.clip(similarity.toarray(), -1.0, 1.0)), 1)
    squared = distance ** 2
    # double centring J·D²·J without the two n³ products, then only the top two
    # eigenpairs (LAPACK's subset driver): the map of 2,000 points in a fraction of a second
    row_means = squared.mean(axis=1)
    gram = -0.5 * (squared - row_means[:, None] - row_means[None, :] + row_means.mean())
    gram = (gram + gram.T) / 2  # exactly symmetric, whatever the rounding
    values, vectors_ = _top_two(gram)
    top = np.argsort(values)[::-1][:2]
    coordinates = []
    for k in top:
        vector = vectors_[:, k]
        if vector[np.argmax(np.abs(vector))] < 0:
            vector = -vector
        coordinates.append(vector * np.sqrt(max(values[k], 0.0)))
    xs, ys = (np.round(c, 1) for c in coordinates) if len(coordinates) == 2 else (np.round(coordinates[0], 1), np.zeros(n))
    return {i: (float(x), float(y)) for i, x, y in zip(ids, xs, ys, strict=True)}
