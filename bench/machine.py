"""What the machine under a benchmark allows, measured in the same run: the two figures
that bound Carnet's targets there and that no change to Carnet moves.

- :func:`file_creation_us`: the cost of creating one file where the sites are written.
  A 5,000-note site is 25,000 files (each page's text, JSON, Markdown and annotation
  siblings); a Hugo site of the same notes is 5,000 folders and 5,000 files. On the
  2-core benchmark machine a file cost from 26 to 364 µs to create on its disk, from one
  run to the next (100–360 µs most often), and 7–26 µs in memory (tmpfs): seconds of a
  cold build, whatever the generator.
- :func:`parallel_ceiling`: how much faster two processes finish two equal shares of
  allocation-heavy Python work (dicts, strings, sorting: what rendering pages is) than
  one process doing both. Two cores that share caches and memory bandwidth give less
  than 2 even with no coordination at all; ``--jobs 2`` cannot beat this.

Each is a short measurement (about a second), reported beside the figures it bounds.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

FILES = 2000
"""Files created by :func:`file_creation_us` (enough to average out a slow one)."""


def file_creation_us(folder: Path, files: int = FILES, size: int = 4096, batches: int = 5,
                     remove: bool = True) -> float:
    """The cost, in microseconds, of creating one ``size``-byte file in a new folder made
    in ``folder``: the median of ``batches`` batches (it varies from one second to the next
    on a virtual disk). The folder is removed afterwards, unless ``remove`` is false (the
    harness deletes nothing while it measures, see :func:`bench.builds.fresh`: it then
    moves the folder aside with its own trees)."""
    folder.mkdir(parents=True, exist_ok=True)
    place = Path(tempfile.mkdtemp(prefix="bench-files-", dir=folder))
    data = b"x" * size
    each = max(1, files // batches)
    costs = []
    try:
        for batch in range(batches):
            started = time.perf_counter()
            for number in range(batch * each, (batch + 1) * each):
                with open(place / f"{number}.html", "xb") as stream:
                    stream.write(data)
            costs.append((time.perf_counter() - started) / each * 1e6)
        return statistics.median(costs)
    finally:
        if remove:
            shutil.rmtree(place, ignore_errors=True)


def _share(rounds: int) -> int:
    """One share of allocation-heavy work: a dict of small records, sorted by a string."""
    total = 0
    for _ in range(rounds):
        table = {f"k{i}": (i, str(i) * 3, {"a": i}) for i in range(20_000)}
        total += len(sorted(table, key=lambda key: table[key][1]))
    return total


def parallel_ceiling(rounds: int = 12) -> float:
    """One process doing two shares of :func:`_share`, over two forked processes doing
    one each: the median of three tries (a try whose serial half another process slowed
    would read as a larger ratio). 1.0 where this system cannot fork."""
    if "fork" not in multiprocessing.get_all_start_methods() or (os.cpu_count() or 1) < 2:
        return 1.0
    context = multiprocessing.get_context("fork")
    ratios = []
    for _ in range(3):
        started = time.perf_counter()
        _share(rounds)
        _share(rounds)
        serial = time.perf_counter() - started
        with context.Pool(2) as pool:
            started = time.perf_counter()
            pool.map(_share, [rounds, rounds])
            parallel = time.perf_counter() - started
        ratios.append(serial / parallel)
    return statistics.median(ratios)
