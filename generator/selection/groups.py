"""Single-linkage groups under a distance threshold, explained by their edges (INV-10).

Distances are 100 × (1 − cosine), rounded to :data:`PRECISION` decimals before any
comparison, so results do not differ across machines. No k, no seed; singletons are
groups. Only pairs under the threshold are kept (a sparse neighbour graph, computed by
blocks), and a minimum spanning tree gives each member the edge that joined it. Each
group of 3+ reports its diameter and the share of its member pairs beyond the
threshold (never closer than it: together only by a chain); above one third, a warning
names the chaining and the members that bridge it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from generator.selection.threshold import CEILING, automatic_threshold

if TYPE_CHECKING:
    import numpy as np
    from scipy import sparse  # type: ignore[import-untyped]  # scipy ships no type hints and scipy-stubs is no dependency
# numpy and scipy (and networkx) are imported where used: a build without wikis never pays for loading them

PRECISION = 1
CHAINING_SHARE = 1 / 3
BLOCK = 512


@dataclass(frozen=True)
class Edge:
    """``member`` joined its group at ``distance`` from ``via``."""

    member: str
    via: str
    distance: float


@dataclass
class Group:
    """Attributes:
        members: ids, in the canonical (sorted) order.
        edges: for every member but the first, the edge that joined it (a real edge under
            the threshold, from the minimum spanning tree).
        diameter, beyond_share: for groups of 3+.
        chaining: the share beyond the threshold exceeds one third.
        bridges: members whose removal splits the group (where the chain passes).
    """

    members: list[str]
    edges: list[Edge] = field(default_factory=list)
    diameter: float = 0.0
    beyond_share: float = 0.0
    chaining: bool = False
    bridges: list[str] = field(default_factory=list)


def _round(values: np.ndarray) -> np.ndarray:
    import numpy as np
    return np.round(values, PRECISION)


def pairs_under(vectors: sparse.csr_matrix, threshold: float,
                similarity: sparse.csr_matrix | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, columns and distances of the pairs i < j with distance ≤ threshold, computed block
    by block, or read from ``similarity`` (the rows' products, made already: the same values,
    row by row)."""
    import numpy as np
    n = vectors.shape[0]
    if similarity is not None:
        blocks: Iterable[tuple[int, sparse.csr_matrix]] = [(0, similarity)]
    else:
        transposed = vectors.T.tocsc()
        blocks = ((start, vectors[start:start + BLOCK] @ transposed) for start in range(0, n, BLOCK))
    rows, cols, distances = [], [], []
    for start, product in blocks:
        block = product.tocoo()
        distance = _round(100.0 * (1.0 - np.clip(block.data, -1.0, 1.0)))
        keep = (block.row + start < block.col) & (distance <= threshold)
        rows.append((block.row[keep] + start).astype(np.int64))
        cols.append(block.col[keep].astype(np.int64))
        distances.append(distance[keep])
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(distances)


def distances_under(vectors: sparse.csr_matrix, threshold: float,
                    similarity: sparse.csr_matrix | None = None) -> list[tuple[int, int, float]]:
    """(i, j, distance) for i < j with distance ≤ threshold (:func:`pairs_under` as a list)."""
    rows, cols, distances = pairs_under(vectors, threshold, similarity)
    return list(zip(rows.tolist(), cols.tolist(), distances.tolist(), strict=True))


def _metrics(sub: sparse.csr_matrix, threshold: float) -> tuple[float, float]:
    """Diameter and share of member pairs beyond the threshold, by blocks of rows (no
    m×m matrix is held for a large group)."""
    import numpy as np
    m = sub.shape[0]
    transposed = sub.T.tocsc()
    beyond, diameter = 0, 0.0
    step = max(1, min(BLOCK, 4_000_000 // max(m, 1)))
    for start in range(0, m, step):
        block = (sub[start:start + step] @ transposed).toarray()
        distance = _round(100.0 * (1.0 - np.clip(block, -1.0, 1.0)))
        rows = np.arange(start, min(start + step, m))[:, None]
        upper = np.arange(m)[None, :] > rows
        beyond += int(np.count_nonzero((distance > threshold) & upper))
        diameter = max(diameter, float(distance[upper].max()) if upper.any() else 0.0)
    return diameter, beyond / (m * (m - 1) / 2)


def pair_distance(vectors: sparse.csr_matrix, i: int, j: int) -> float:
    import numpy as np
    value = float((vectors[i] @ vectors[j].T).toarray()[0, 0])
    return float(_round(np.array([100.0 * (1.0 - min(1.0, max(-1.0, value)))]))[0])


def group(ids: list[str], vectors: sparse.csr_matrix, threshold: float,
          similarity: sparse.csr_matrix | None = None) -> list[Group]:
    """Groups of ``ids`` (rows of ``vectors``) under ``threshold``; the output does not
    depend on the order of ``ids``. ``similarity``: ``vectors @ vectors.T``, when the caller
    has it (it is not computed twice)."""
    return grouping(ids, vectors, threshold, similarity)[0]


def grouping(ids: list[str], vectors: sparse.csr_matrix, threshold: float | None,
             similarity: sparse.csr_matrix | None = None) -> tuple[list[Group], float]:
    """:func:`group`, and the threshold used: ``threshold``, or when it is None the one the
    rule of :mod:`generator.selection.threshold` gives these distances."""
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    if similarity is not None and order != list(range(len(ids))):
        similarity = similarity[order][:, order]
    ids = [ids[i] for i in order]
    vectors = vectors[order]
    n = len(ids)
    rows, cols, distances = pairs_under(vectors, CEILING if threshold is None else threshold, similarity)
    if threshold is None:
        threshold = automatic_threshold(n, rows, cols, distances)
        keep = distances <= threshold
        rows, cols, distances = rows[keep], cols[keep], distances[keep]
    # the graph's weights are distance + 1 (a zero would read as "no edge")
    import networkx as nx
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components, minimum_spanning_tree  # type: ignore[import-untyped]

    graph = sparse.csr_matrix((distances + 1.0, (rows, cols)), shape=(n, n))
    _count, labels = connected_components(graph, directed=False)
    tree = minimum_spanning_tree(graph).tocoo()
    neighbours: dict[int, list[tuple[int, float]]] = {i: [] for i in range(n)}
    for i, j, w in zip(tree.row.tolist(), tree.col.tolist(), tree.data.tolist(), strict=True):
        neighbours[i].append((j, round(w - 1.0, PRECISION)))
        neighbours[j].append((i, round(w - 1.0, PRECISION)))
    adjacency: dict[int, list[int]] = {i: [] for i in range(n)}
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        adjacency[i].append(j)
        adjacency[j].append(i)
    members_of: dict[int, list[int]] = {}
    for index in range(n):
        members_of.setdefault(int(labels[index]), []).append(index)
    groups = []
    for members in sorted(members_of.values(), key=lambda m: ids[m[0]]):
        result = Group([ids[m] for m in members])
        # explain each membership by its tree edge, walking from the first member
        seen, queue = {members[0]}, deque([members[0]])
        while queue:
            current = queue.popleft()
            for other, distance in sorted(neighbours[current], key=lambda e: ids[e[0]]):
                if other not in seen:
                    seen.add(other)
                    queue.append(other)
                    result.edges.append(Edge(ids[other], ids[current], distance))
        if len(members) >= 3:
            result.diameter, result.beyond_share = _metrics(vectors[members], threshold)
            result.chaining = result.beyond_share > CHAINING_SHARE
            if result.chaining:
                subgraph: nx.Graph[int] = nx.Graph()  # nodes: row indexes of the members
                subgraph.add_nodes_from(members)
                inside = set(members)  # once: a set per edge made this quadratic in the group's size
                subgraph.add_edges_from((a, b) for a in members for b in adjacency[a] if b in inside)
                result.bridges = sorted(ids[m] for m in nx.articulation_points(subgraph))
        groups.append(result)
    return groups, threshold


def central_member(members: list[str], vectors: sparse.csr_matrix, ids: list[str]) -> str:
    """The member with the least total distance to the others — only to show what
    "represent the group by its central member" would erase, never to select."""
    import numpy as np
    index = {i: n for n, i in enumerate(ids)}
    ordered = sorted(members)
    sub = vectors[[index[m] for m in ordered]]
    distance = _round(100.0 * (1.0 - np.clip((sub @ sub.T).toarray(), -1.0, 1.0)))
    totals = distance.sum(axis=1)
    return ordered[int(np.argmin(totals))]
