"""Single-linkage groups under a distance threshold, explained by their edges (INV-10).

Distances are 100 × (1 − cosine), rounded to :data:`PRECISION` decimals before any
comparison, so results do not differ across machines. No k, no seed; singletons are
groups. Only pairs under the threshold are kept (a sparse neighbour graph, computed by
blocks), and a minimum spanning tree gives each member the edge that joined it. Each
group of 3+ reports its diameter and the share of its member pairs beyond the
threshold (never closer than it: together only by a chain); above one third, a warning
names the chaining and the members that bridge it.

Memory is bounded by construction: every product is made a block of rows at a time (at
most about :data:`CELLS` entries), and a perimeter keeps at most :func:`pair_cap` pairs.
Past the cap (many overlapping passages: each close to most others), the members are
compared in id order up to the last one whose pairs still fit; each of the others is a
group of its own marked ``compared=False`` — listed, never dropped, and said.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from generator.selection.threshold import CEILING, automatic_threshold

if TYPE_CHECKING:
    import numpy as np
    from scipy import sparse  # type: ignore[import-untyped]  # scipy ships no type hints and scipy-stubs is no dependency
# numpy and scipy are imported where used: a build without wikis never pays for loading them

PRECISION = 1
CHAINING_SHARE = 1 / 3
BLOCK = 512
CELLS = 4_000_000
"""The entries of one block of a product (rows × members compared), at most about: 4 million
(32 MB as floats), whatever the perimeter's size."""
PAIR_FLOOR = 2_000_000
"""Pairs a perimeter may keep whatever its size: every pair of a perimeter of 2,000 (the map's
limit) fits, so a perimeter that small is never capped."""
PAIRS_PER_MEMBER = 100
"""Pairs a perimeter may keep per member past :data:`PAIR_FLOOR`: passages of minutes have a
few close neighbours each (a 50,000-sentence benchmark keeps 64 a member under the ceiling);
overlapping passages of one note have thousands."""


def pair_cap(n: int) -> int:
    """The most pairs under the threshold a perimeter of ``n`` members keeps (linear in n)."""
    return max(PAIR_FLOOR, PAIRS_PER_MEMBER * n)


def row_blocks(n: int, columns: int, cells: int = CELLS) -> list[tuple[int, int]]:
    """``(start, stop)`` of the blocks of rows a product of ``n`` rows by ``columns`` columns is
    made in: at most ``BLOCK`` rows, and at most ``cells`` entries unless one row is wider."""
    step = max(1, min(BLOCK, cells // max(columns, 1)))
    return [(start, min(start + step, n)) for start in range(0, n, step)]


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
        compared: False for a member left alone because the perimeter's pairs passed
            :func:`pair_cap` before it (never compared with the others, so not a singleton
            found alone: listed, and said).
    """

    members: list[str]
    edges: list[Edge] = field(default_factory=list)
    diameter: float = 0.0
    beyond_share: float = 0.0
    chaining: bool = False
    bridges: list[str] = field(default_factory=list)
    compared: bool = True


def _round(values: np.ndarray) -> np.ndarray:
    import numpy as np
    return np.round(values, PRECISION)


class Pairs(NamedTuple):
    """The pairs ``rows[k] < cols[k]`` at ``distances[k]`` under a threshold, among the first
    ``compared`` members (all of them unless the cap was reached)."""

    rows: np.ndarray
    cols: np.ndarray
    distances: np.ndarray
    compared: int


def pairs_under(vectors: sparse.csr_matrix, threshold: float, similarity: sparse.csr_matrix | None = None,
                cap: int | None = None, cells: int = CELLS) -> Pairs:
    """The pairs of members (rows of ``vectors``) at distance ≤ ``threshold``, each found from
    its later member's row, block by block (``cells``: :func:`row_blocks`), or read from
    ``similarity`` (the rows' products, made already: the same values, row by row). At most
    ``cap`` pairs (default :func:`pair_cap`): the members are taken in order while their
    pairs with the earlier ones fit, and the product stops there."""
    import numpy as np
    n = vectors.shape[0]
    cap = pair_cap(n) if cap is None else cap
    if similarity is not None:
        blocks: Iterable[tuple[int, sparse.csr_matrix]] = [(0, similarity)]
    else:
        transposed = vectors.T.tocsr()  # once: a product with a CSC operand converts it, block after block
        blocks = ((start, vectors[start:stop] @ transposed) for start, stop in row_blocks(n, n, cells))
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    distances: list[np.ndarray] = []
    kept, compared = 0, n
    for start, product in blocks:
        block = product.tocoo()
        later = block.row.astype(np.int64) + start
        earlier = block.col < later
        distance = _round(100.0 * (1.0 - np.clip(block.data[earlier], -1.0, 1.0)))
        keep = distance <= threshold
        later, first, distance = later[earlier][keep], block.col[earlier][keep], distance[keep]
        if kept + len(distance) > cap:
            # the members whose pairs with the earlier ones still fit, in order: a prefix
            per_row = np.cumsum(np.bincount(later - start, minlength=product.shape[0]))
            compared = start + int(np.searchsorted(per_row, cap - kept, side="right"))
            inside = later < compared
            later, first, distance = later[inside], first[inside], distance[inside]
        firsts.append(first.astype(np.int32))
        seconds.append(later.astype(np.int32))
        distances.append(distance)
        kept += len(distance)
        if compared < n:
            break
    if not firsts:
        return Pairs(np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float64), compared)
    return Pairs(np.concatenate(firsts), np.concatenate(seconds), np.concatenate(distances), compared)


def distances_under(vectors: sparse.csr_matrix, threshold: float,
                    similarity: sparse.csr_matrix | None = None) -> list[tuple[int, int, float]]:
    """(i, j, distance) for i < j with distance ≤ threshold, in order (:func:`pairs_under` as a list)."""
    import numpy as np
    rows, cols, distances, _compared = pairs_under(vectors, threshold, similarity)
    order = np.lexsort((cols, rows))
    return list(zip(rows[order].tolist(), cols[order].tolist(), distances[order].tolist(), strict=True))


def _metrics(sub: sparse.csr_matrix, threshold: float) -> tuple[float, float]:
    """Diameter and share of member pairs beyond the threshold, by blocks of rows (no
    m×m matrix is held for a large group)."""
    import numpy as np
    m = sub.shape[0]
    transposed = sub.T.tocsr()
    beyond, diameter = 0, 0.0
    for start, stop in row_blocks(m, m):
        block = (sub[start:stop] @ transposed).toarray()
        distance = _round(100.0 * (1.0 - np.clip(block, -1.0, 1.0)))
        rows = np.arange(start, stop)[:, None]
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
             similarity: sparse.csr_matrix | None = None, cap: int | None = None) -> tuple[list[Group], float]:
    """:func:`group`, and the threshold used: ``threshold``, or when it is None the one the
    rule of :mod:`generator.selection.threshold` gives these distances (of the members
    compared, when ``cap`` pairs, default :func:`pair_cap`, stopped the comparison)."""
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    if similarity is not None and order != list(range(len(ids))):
        similarity = similarity[order][:, order]
    ids = [ids[i] for i in order]
    vectors = vectors[order]
    n = len(ids)
    rows, cols, distances, compared = pairs_under(vectors, CEILING if threshold is None else threshold,
                                                  similarity, cap)
    if threshold is None:
        threshold = automatic_threshold(n, rows, cols, distances)
        keep = distances <= threshold
        rows, cols, distances = rows[keep], cols[keep], distances[keep]
    # the graph's weights are distance + 1 (a zero would read as "no edge")
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components, minimum_spanning_tree  # type: ignore[import-untyped]

    graph = sparse.csr_matrix((distances + 1.0, (rows, cols)), shape=(n, n))
    del rows, cols, distances  # the graph holds them
    _count, labels = connected_components(graph, directed=False)
    tree = minimum_spanning_tree(graph).tocoo()
    neighbours: dict[int, list[tuple[int, float]]] = {i: [] for i in range(n)}
    for i, j, w in zip(tree.row.tolist(), tree.col.tolist(), tree.data.tolist(), strict=True):
        neighbours[i].append((j, round(w - 1.0, PRECISION)))
        neighbours[j].append((i, round(w - 1.0, PRECISION)))
    both_ways: sparse.csr_matrix | None = None  # the graph's edges from either end, for chains only
    members_of: dict[int, list[int]] = {}
    for index, label in enumerate(labels.tolist()):
        members_of.setdefault(label, []).append(index)
    groups = []
    for members in sorted(members_of.values(), key=lambda m: ids[m[0]]):
        result = Group([ids[m] for m in members], compared=members[0] < compared)
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
                if both_ways is None:
                    both_ways = (graph + graph.T).tocsr()
                inside = both_ways[members][:, members]  # members ascending: their group's edges
                result.bridges = sorted(ids[members[k]] for k in articulation_points(inside))
        groups.append(result)
    return groups, threshold


def articulation_points(graph: sparse.csr_matrix) -> list[int]:
    """The nodes of an undirected graph (``graph``: symmetric, no self-loop) whose removal
    splits their component (Hopcroft and Tarjan's depth-first search, iterative: a chain of
    20,000 members is no recursion limit; arrays, not a networkx graph of Python objects)."""
    indptr, indices = graph.indptr.tolist(), graph.indices.tolist()
    n = graph.shape[0]
    discovered, low = [-1] * n, [0] * n
    found: set[int] = set()
    clock = 0
    for root in range(n):
        if discovered[root] >= 0:
            continue
        discovered[root] = low[root] = clock
        clock += 1
        children = 0
        stack = [(root, -1, indptr[root])]  # (node, its parent, the next of its edges to follow)
        while stack:
            node, parent, edge = stack[-1]
            if edge < indptr[node + 1]:
                stack[-1] = (node, parent, edge + 1)
                other = indices[edge]
                if discovered[other] < 0:
                    discovered[other] = low[other] = clock
                    clock += 1
                    children += node == root
                    stack.append((other, node, indptr[other]))
                elif other != parent:
                    low[node] = min(low[node], discovered[other])
                continue
            stack.pop()
            if parent >= 0:
                low[parent] = min(low[parent], low[node])
                if parent != root and low[node] >= discovered[parent]:
                    found.add(parent)
        if children > 1:
            found.add(root)
    return sorted(found)


def central_member(members: list[str], vectors: sparse.csr_matrix, ids: list[str],
                   index: Mapping[str, int] | None = None) -> str:
    """The member with the least total distance to the others — only to show what
    "represent the group by its central member" would erase, never to select. ``index``:
    id → row of ``vectors``, when the caller asks for many groups (made once, not per group);
    the distances are summed a block of rows at a time (no m×m matrix for a large group)."""
    import numpy as np
    if index is None:
        index = {i: n for n, i in enumerate(ids)}
    ordered = sorted(members)
    sub = vectors[[index[m] for m in ordered]]
    transposed = sub.T
    totals = np.empty(len(ordered))
    for start, stop in row_blocks(len(ordered), len(ordered)):
        distance = _round(100.0 * (1.0 - np.clip((sub[start:stop] @ transposed).toarray(), -1.0, 1.0)))
        totals[start:stop] = distance.sum(axis=1)
    return ordered[int(np.argmin(totals))]
