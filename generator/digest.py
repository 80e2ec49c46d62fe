"""A value's digest: a sha256 of its content (:func:`digest_of`), the key of whatever is
remembered by what it is made from (the build cache's entries, a page's inputs), and what a
model records to say which version of a thing it read."""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Callable
from typing import Any, Protocol


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
