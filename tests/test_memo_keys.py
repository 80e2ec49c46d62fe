"""The key of a value (:func:`generator.engine.memo.digest_of`) against an independent pickler that
looks every value's attributes up one by one: the per-type decisions must reduce every kind
of value (closure, keyed value, bound method, enum, dataclass, date) the same way."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import hashlib
import io
import pickle
from typing import Any

from generator.digest import digest_of


class _Reference(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        bound = getattr(obj, "__self__", None)
        if bound is not None and getattr(obj, "__func__", None) is not None:
            return tuple, ((obj.__func__, bound),)  # before __code__: a bound method forwards it
        code = getattr(obj, "__code__", None)
        if code is not None:
            cells = tuple(cell.cell_contents for cell in (obj.__closure__ or ()))
            return tuple, ((code.co_filename, code.co_qualname, code.co_code, code.co_consts, cells,
                            getattr(obj, "__defaults__", None)),)
        memo_key = getattr(type(obj), "memo_key", None)
        if memo_key is not None:
            return str, (memo_key(obj),)
        return NotImplemented


def _reference_digest(value: object) -> str:
    buffer = io.BytesIO()
    pickler = _Reference(buffer, protocol=5)
    pickler.fast = True
    pickler.dump(value)
    return hashlib.sha256(buffer.getvalue()).hexdigest()


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Themeish:
    def __init__(self, fingerprint: str) -> None:
        self.fingerprint = fingerprint
        self.unpicklable = lambda: None  # never pickled: the key is what stands for it

    def memo_key(self) -> str:
        return self.fingerprint


@dataclasses.dataclass(frozen=True)
class Record:
    name: str
    colour: Colour
    when: datetime.date

    def shown(self) -> str:
        return self.name


def _helper(page: str):  # type: ignore[no-untyped-def]
    def href(target: str, suffix: str = ".html") -> str:
        return page + target + suffix
    return href


def test_every_kind_of_value_is_keyed_as_the_reference_keys_it() -> None:
    record = Record("a", Colour.BLUE, datetime.date(2024, 3, 1))
    values: list[object] = [
        record, [record, Colour.RED], Themeish("abc"), (Themeish("abc"), {"x": Themeish("d")}),
        _helper("notes/a.html"), record.shown, len, {"k": [1, 2.5, None, True, b"x", frozenset({"z"})]},
    ]
    for value in values:
        assert digest_of(value) == _reference_digest(value), value
    # and the key still tells apart what differs
    assert digest_of(_helper("notes/a.html")) != digest_of(_helper("notes/b.html"))
    assert digest_of(Themeish("abc")) != digest_of(Themeish("abd"))
    # a bound method is keyed with its object (the first cache keyed it as its function alone:
    # a bound method forwards __code__, so it never reached the branch meant for it)
    assert digest_of(Record("a", Colour.RED, record.when).shown) != digest_of(record.shown)
