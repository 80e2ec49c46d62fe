"""Independent requests made up to ``jobs`` at once, their results taken in order: the
one way the commands that call a model (``verify``, ``analyse``, ``select --oppositions``)
use an endpoint at its capacity and still write the same bytes whatever order answers
arrive in. Only the requests run on threads; every check and write stays in the caller.

And the build's per-note work (parse, anchor, render a note's pages) in forked worker
processes, :func:`fork_map`, its results too taken in order."""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import sys
from collections.abc import Callable, Generator, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final, TypeVar

from generator.engine.memo import NO_MEMO, Kind, Memo, same

T = TypeVar("T")
A = TypeVar("A")
R = TypeVar("R")


def available_cores() -> int:
    """The cores this process may run on (a container's or a CI runner's share, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


# -- worker processes for the build --------------------------------------------------------

WORTH_A_WORKER = 64
"""Fewer items than this per worker are done here: starting a worker process costs more."""

_TASK: Callable[[Any], Any] | None = None  # what the forked workers run (they inherit it)


def workers_for(count: int, jobs: int, worth: int | None = None) -> int:
    """How many worker processes :func:`fork_map` starts for ``count`` items (≤ 1: none);
    ``worth``: items that make a worker worth starting (default :data:`WORTH_A_WORKER`)."""
    return min(jobs, count // (WORTH_A_WORKER if worth is None else worth)) if can_fork() else 1


BLAS_THREADS: Final = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
"""The variables numerical libraries read their thread count from, when they are loaded."""

_BLAS_SETTERS: Final = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                        "openblas_set_num_threads64_", "openblas_set_num_threads")
"""The thread-count setters of OpenBLAS builds (numpy's and scipy's wheels prefix their names)."""


def one_thread_each() -> None:
    """A worker's numerical libraries (numpy's and scipy's BLAS) on one thread: the workers
    are the build's parallelism, and a pool of BLAS threads in each of them oversubscribes
    the cores (the maps of 32 perimeters on 2 cores: 13.5 s, 8.1 s on one thread each).
    Set before numpy is loaded, the variables are enough; loaded before the fork (a
    ``serve`` process builds again), its OpenBLAS libraries are told directly."""
    for name in BLAS_THREADS:
        os.environ[name] = "1"
    for library, setter in loaded_openblas():
        getattr(library, setter)(1)


def loaded_openblas() -> list[tuple[ctypes.CDLL, str]]:
    """Each OpenBLAS library this process has loaded, with the name of its thread-count
    setter (Linux: the libraries mapped in /proc/self/maps; elsewhere, none)."""
    if "numpy" not in sys.modules and "scipy" not in sys.modules:
        return []
    try:
        maps = Path("/proc/self/maps").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    paths = {fields[5] for fields in (line.split(None, 5) for line in maps.splitlines())
             if len(fields) == 6 and "openblas" in fields[5].rsplit("/", 1)[-1].lower()}
    found = []
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)  # the copy already loaded, not a second one
        except OSError:
            continue
        setter = next((name for name in _BLAS_SETTERS if hasattr(library, name)), None)
        if setter is not None:
            found.append((library, setter))
    return found


def _run_chunk(items: list[Any]) -> list[Any]:
    assert _TASK is not None
    return [_TASK(item) for item in items]


def _chunks(items: Sequence[A], workers: int) -> list[list[A]]:
    """``items`` cut in order into chunks that shrink towards the end (guided scheduling):
    an uneven item (a long transcript, a wiki's pages: the articles come last) does not
    hold one worker back while the others have nothing left to take."""
    chunks, start = [], 0
    while start < len(items):
        size = max(1, min(64, (len(items) - start) // (workers * 4)))
        chunks.append(list(items[start:start + size]))
        start += size
    return chunks


def fork_map(task: Callable[[A], R], items: Sequence[A], jobs: int, worth: int | None = None) -> list[R]:
    """``[task(item) for item in items]``, with up to ``jobs`` forked worker processes.

    Workers are forked, so ``task`` may be any closure over the build's state, which they
    share copy-on-write without pickling it; each result is pickled back, so it should be
    small (bytes and summaries, not parsed trees). The results come in the items' order,
    whatever order the workers finish in: the output cannot depend on ``jobs``. With one
    job, too few items or no ``fork`` on this system, the loop runs here."""
    return list(fork_iter(task, items, jobs, worth))


def fork_iter(task: Callable[[A], R], items: Sequence[A], jobs: int,
              worth: int | None = None) -> Generator[R, None, None]:
    """:func:`fork_map` as its results come, in order: the caller takes each one (writes
    it, drops it) while the workers make the next, so they are never all held at once.
    Consume it whole: the workers stop when it is closed."""
    workers = workers_for(len(items), jobs, worth)
    if workers <= 1:
        yield from (task(item) for item in items)
        return
    global _TASK
    _TASK = task
    try:
        chunks = _chunks(items, workers)
        # the build's objects were made before the fork: frozen, the workers' collector never
        # walks them (walking touches every page, undoing copy-on-write, and costs a full pass)
        gc.freeze()
        try:
            with multiprocessing.get_context("fork").Pool(workers, initializer=one_thread_each) as pool:
                results = pool.imap(_run_chunk, chunks)
                gc.unfreeze()  # forked already: what the caller makes meanwhile is collected as usual
                for chunk in results:
                    yield from chunk
        finally:
            gc.unfreeze()
    finally:
        _TASK = None


_COMPUTED: Final = object()  # a record's value when the parent memo already holds it


class RecordingMemo:
    """The memo a worker process is given: it asks the build's memo (the worker's
    copy-on-write view of it) and records every entry it used or computed, so that the
    parent can :func:`replay` them into the real one — nothing a worker learns is lost,
    and the parent keeps every entry the build used."""

    def __init__(self, inner: Memo) -> None:
        self.inner = inner
        self.records: list[tuple[Kind, str, object]] = []

    def memo(self, kind: Kind, key: Callable[[], str], compute: Callable[[], T]) -> T:
        if self.inner is NO_MEMO:
            return compute()  # a full build remembers nothing: no key to take
        digest = key()
        made: list[T] = []

        def computing() -> T:
            made.append(compute())
            return made[0]

        value = self.inner.memo(kind, lambda: digest, computing)
        self.records.append((kind, digest, made[0] if made else _COMPUTED))
        return value

    def holds(self, kind: Kind, key: Callable[[], str]) -> bool:
        return self.inner.holds(kind, key)

    def keep(self, kind: Kind, key: Callable[[], str]) -> bool:
        if self.inner is NO_MEMO:
            return False
        digest = key()
        kept = self.inner.keep(kind, lambda: digest)
        if kept:  # the parent keeps it too
            self.records.append((kind, digest, _COMPUTED))
        return kept

    def keep_all(self, kind: Kind, digests: Iterable[str]) -> None:
        for digest in digests:
            self.keep(kind, partial(same, digest))


def replay(memo: Memo, records: list[tuple[Kind, str, object]]) -> None:
    """Enter what a worker's :class:`RecordingMemo` recorded into the build's memo."""
    for kind, digest, value in records:
        if value is _COMPUTED:
            memo.memo(kind, partial(same, digest), _missing)  # held already: marked as used
        else:
            memo.memo(kind, partial(same, digest), partial(same, value))


def _missing() -> object:
    raise AssertionError("a worker used a memo entry its parent does not hold")
