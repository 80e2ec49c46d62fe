"""The distance threshold of a perimeter when the settings give none: a stated rule, computed
from the perimeter's own distances (pure, deterministic).

The rule: **the largest threshold, at most** :data:`CEILING`, **at which no group of three or
more has more than a third of its member pairs beyond it** — the chaining line of INV-10,
so that no group the selection shows is a chain. It is found on the minimum spanning tree:
single linkage under a threshold ``t`` groups exactly the members joined by tree edges of
length ≤ ``t``, so the candidates are the distinct pair distances (0.1 apart at most, 0 to
:data:`CEILING`: a bounded number), visited in increasing order. Every pair closer than ``t``
lies inside one group, so a group's pairs within ``t`` are counted as the pairs arrive, and
its share beyond ``t`` needs no other product. Between two consecutive distances the groups
do not change: the threshold given is the largest value on the 0.1 grid before the next
distance (or the ceiling).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

CEILING = 75.0
"""The largest threshold the rule gives (the former fixed default): past it, single linkage on
word vectors joins texts that share little more than their language."""
STEP = 0.1
"""The grid of thresholds: distances are rounded to one decimal (``groups.PRECISION``)."""


class ThresholdRule(Enum):
    """Where a selection's threshold comes from, shown with it."""

    SETTING = "setting"  # selection.threshold in carnet.yaml
    COMMAND = "command"  # --threshold given to `carnet select`
    AUTOMATIC = "automatic"  # this module's rule, per perimeter


def automatic_threshold(n: int, rows: np.ndarray, cols: np.ndarray, distances: np.ndarray,
                        ceiling: float = CEILING) -> float:
    """The rule's threshold for ``n`` members given every pair ``(rows[k], cols[k])`` at
    ``distances[k]`` ≤ ``ceiling`` (rounded to :data:`STEP`; pairs not given are beyond it).
    Costs one sort of the pairs and a pass over them; the groups are merged smaller into
    larger, so relabelling is O(n log n) in all."""
    import numpy as np

    tenths = np.rint(np.asarray(distances, dtype=np.float64) / STEP).astype(np.int64)
    top = round(ceiling / STEP)
    keep = tenths <= top
    tenths, rows, cols = tenths[keep], np.asarray(rows)[keep], np.asarray(cols)[keep]
    if not len(tenths):  # no pair under the ceiling: every member alone whatever the threshold
        return ceiling
    order = np.argsort(tenths, kind="stable")
    tenths, rows, cols = tenths[order], rows[order], cols[order]
    label = np.arange(n)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    within = np.zeros(n, dtype=np.int64)  # pairs at or under the current distance, per group (its label)
    chained: set[int] = set()  # labels of groups of 3+ with more than a third of their pairs beyond
    starts = np.flatnonzero(np.r_[True, tenths[1:] != tenths[:-1]])
    ends = np.r_[starts[1:], len(tenths)]
    distinct: list[int] = tenths[starts].tolist()  # the candidate thresholds, in tenths, increasing
    best = -1  # the last candidate (its index) at which nothing chained; -1: none
    for batch, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        batch_rows, batch_cols = rows[start:end], cols[start:end]
        # the joins: a pair whose ends are apart merges their groups (the spanning tree's edges)
        apart = np.flatnonzero(label[batch_rows] != label[batch_cols])
        for k in apart.tolist():
            a, b = int(label[batch_rows[k]]), int(label[batch_cols[k]])
            if a == b:  # joined by an earlier pair of this batch
                continue
            if len(members[a]) < len(members[b]):
                a, b = b, a
            label[members[b]] = a
            members[a] += members.pop(b)
            within[a] += within[b]
            chained.discard(b)
        touched = label[batch_rows]
        within += np.bincount(touched, minlength=n)
        for group in np.unique(touched).tolist():
            size = len(members[group])
            pairs = size * (size - 1) // 2
            # beyond / pairs > 1/3  ⇔  3·(pairs − within) > pairs
            if size >= 3 and 3 * (pairs - int(within[group])) > pairs:
                chained.add(group)
            else:
                chained.discard(group)
        if not chained:
            best = batch
    # the groups stay those of a candidate until the next one: the largest value before it
    if best + 1 < len(distinct):
        return round(max(0.0, (distinct[best + 1] - 1) * STEP), 1)
    return ceiling
