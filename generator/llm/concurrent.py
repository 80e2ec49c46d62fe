"""Model requests in flight at once: up to ``jobs`` requests made on threads, their answers
taken in the order they were asked (a batch's answer is written in its place whatever the
order the server answers in)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def in_order(calls: Sequence[Callable[[], T]], jobs: int = 1,
             stop: threading.Event | None = None) -> Generator[T | None, None, None]:
    """The results of ``calls``, in their order whatever order they finish in: up to ``jobs``
    are made at once, on threads (with one, each is made here, when its result is asked for,
    as a plain loop would). Once ``stop`` is set, a call not yet started is not made: its
    result is None. An exception a call raises is raised here, at its turn.

    Close the generator when leaving early (``with contextlib.closing(in_order(…))``): the
    calls not yet started are then never made, and those in flight are waited for."""
    if jobs <= 1 or len(calls) <= 1:
        for call in calls:
            yield None if stop is not None and stop.is_set() else call()
        return
    closed = threading.Event()

    def started(call: Callable[[], T]) -> T | None:
        return None if closed.is_set() or (stop is not None and stop.is_set()) else call()

    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="carnet-job")
    interrupted = False
    try:
        futures = [pool.submit(started, call) for call in calls]
        for future in futures:
            yield future.result()
    except KeyboardInterrupt:  # Ctrl-C: not waited for; the caller closes what they wait on
        interrupted = True
        raise
    finally:
        closed.set()
        pool.shutdown(wait=not interrupted, cancel_futures=True)
