"""The one seam between a build's pure steps and the build cache: a :class:`Memo`.

A step that is worth remembering asks ``memo.memo(kind, key, compute)``. ``key`` is a
function, so the do-nothing memo of a full build (:data:`NO_MEMO`) never pays for
hashing the inputs; the build cache (:class:`generator.cache.BuildCache`) calls it and
returns the remembered value when it holds one. A step never knows which one it got:
the output is the same bytes either way.

:func:`digest_of` is the key most steps use: a sha256 of a value's content.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Callable
from typing import Any, Final, Protocol, TypeVar

T = TypeVar("T")


class Memo(Protocol):
    """Remembers what pure steps computed, by a key of everything they read."""

    def memo(self, kind: str, key: Callable[[], str], compute: Callable[[], T]) -> T:
        """The value ``compute()`` gives for ``key()`` (of step ``kind``), computed or recalled."""
        ...

    def holds(self, kind: str, key: Callable[[], str]) -> bool:
        """Whether :meth:`memo` would recall ``key()`` without computing (a build sends only
        the rest to its worker processes)."""
        ...

    def keep(self, kind: str, key: Callable[[], str]) -> bool:
        """Whether the memo holds ``key()``; if so, it is kept for the next build as if it
        had been recalled, without being read (a value a build may never ask for)."""
        ...


class NoMemo:
    """Remembers nothing: every step is computed (a full build, ``--no-cache``)."""

    def memo(self, kind: str, key: Callable[[], str], compute: Callable[[], T]) -> T:
        return compute()

    def holds(self, kind: str, key: Callable[[], str]) -> bool:
        return False

    def keep(self, kind: str, key: Callable[[], str]) -> bool:
        return False


NO_MEMO: Final = NoMemo()


def same(value: T) -> T:
    """``value`` itself: with ``partial``, a key or a value known already, given where a
    :class:`Memo` asks for a function."""
    return value


class Keyed(Protocol):
    """A value keyed by what it says it is rather than by its pickled state (a theme by
    its fingerprint: its Jinja environment does not pickle)."""

    def memo_key(self) -> str: ...


def _by_code(obj: Any) -> Any:
    code = obj.__code__
    cells = tuple(cell.cell_contents for cell in (obj.__closure__ or ()))
    return tuple, ((code.co_filename, code.co_qualname, code.co_code, code.co_consts, cells,
                    getattr(obj, "__defaults__", None)),)


def _by_key(obj: Any) -> Any:
    return str, (type(obj).memo_key(obj),)


def _by_binding(obj: Any) -> Any:
    return tuple, ((obj.__func__, obj.__self__),)


def _reducer_of(cls: type) -> Callable[[Any], Any] | None:
    """How an instance of ``cls`` is reduced for its key (None: pickled as it is), decided
    from the type once: the attribute lookups cost more than the pickling on a build's
    hundreds of thousands of values. A bound method is told by its type: on the instance
    it forwards its function's ``__code__`` and would be keyed without its object."""
    if hasattr(cls, "__code__"):
        return _by_code
    if getattr(cls, "memo_key", None) is not None:
        return _by_key
    if hasattr(cls, "__self__") and hasattr(cls, "__func__"):
        return _by_binding
    return None


_REDUCERS: dict[type, Callable[[Any], Any] | None] = {}


class _KeyPickler(pickle.Pickler):
    """Pickles a value for its key: functions by their code and captured values (the
    page helpers are closures over the page path), a :class:`Keyed` value by its key, a
    bound method by its function and its object."""

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        try:
            reducer = _REDUCERS[cls]
        except KeyError:
            reducer = _REDUCERS[cls] = _reducer_of(cls)
        return NotImplemented if reducer is None else reducer(obj)


def digest_of(value: object) -> str:
    """sha256 of a value's content. The pickler's memo is off, so equal values give equal
    digests whether or not they share objects (a key must not depend on identity)."""
    buffer = io.BytesIO()
    pickler = _KeyPickler(buffer, protocol=5)
    pickler.fast = True
    pickler.dump(value)
    return hashlib.sha256(buffer.getvalue()).hexdigest()


class KindsOnly:
    """A memo that remembers only the given kinds of step and computes the others: a
    note's outputs kept whole need not be kept a second time page by page (its body,
    the costly part that another page's edit leaves as it was, is kept)."""

    def __init__(self, inner: Memo, kinds: frozenset[str]) -> None:
        self.inner = inner
        self.kinds = kinds

    def memo(self, kind: str, key: Callable[[], str], compute: Callable[[], T]) -> T:
        return self.inner.memo(kind, key, compute) if kind in self.kinds else compute()

    def holds(self, kind: str, key: Callable[[], str]) -> bool:
        return kind in self.kinds and self.inner.holds(kind, key)

    def keep(self, kind: str, key: Callable[[], str]) -> bool:
        return kind in self.kinds and self.inner.keep(kind, key)
