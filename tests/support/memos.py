"""A build cache's memo without the disk, for unit tests of what a build recalls."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")


class CountingMemo:
    """A memo in a dict that counts what it computes, by kind (a :class:`generator.engine.memo.Memo`)."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], object] = {}
        self.made: dict[str, int] = {}

    def memo(self, kind: str, key: Callable[[], str], compute: Callable[[], T]) -> T:
        entry = (kind, key())
        if entry not in self.values:
            self.made[kind] = self.made.get(kind, 0) + 1
            self.values[entry] = compute()
        return cast(T, self.values[entry])

    def holds(self, kind: str, key: Callable[[], str]) -> bool:
        return (kind, key()) in self.values

    def keep(self, kind: str, key: Callable[[], str]) -> bool:
        return self.holds(kind, key)
