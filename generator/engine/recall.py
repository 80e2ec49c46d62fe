"""What the engine hands the cores in place of their plain loops: each article's audit,
claims and pairs recalled from the build's memo by the key the core declares for it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TypeVar

from generator.engine.memo import NO_MEMO, Kind, Memo
from generator.synthesis.audit import Made
from generator.verification.assess import ArticlePairs, PairsMaker

R = TypeVar("R")


def recalled_by_key(memo: Memo, kind: Kind, keys: dict[str, str] | None = None) -> Made[R]:
    """A :data:`~generator.synthesis.audit.Made` that recalls from ``memo`` under ``kind``;
    ``keys`` (when given, with a build cache) receives each recalled or stored value's key
    (the pages' keys use an audit's in its place: an audit weighs megabytes)."""
    def made(slug: str, key: Callable[[], str], compute: Callable[[], R]) -> R:
        value = memo.memo(kind, key, compute)
        if keys is not None and memo is not NO_MEMO:
            keys[slug] = key()
        return value
    return made


def pairs_recalled(memo: Memo, keys: Mapping[str, str]) -> PairsMaker:
    """A :data:`~generator.verification.assess.PairsMaker` that recalls an article's pairs from
    ``memo`` by its key in ``keys`` (:func:`~generator.verification.assess.pairs_key`)."""
    return partial(_pairs, memo, keys)


def _pairs(memo: Memo, keys: Mapping[str, str], article: str, compute: Callable[[], ArticlePairs]) -> ArticlePairs:
    if article not in keys:
        return compute()
    return memo.memo(Kind.PAIRS, partial(keys.__getitem__, article), compute)
