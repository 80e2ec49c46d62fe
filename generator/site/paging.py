"""Splitting a long list over pages that each stay under the page budget. Pure.

A large perimeter's audit (its discarded evidence, its selection's groups) is enumerated
whole (INV-4, INV-10), never sampled: when it would make a page heavier than the budget,
it goes on pages of its own, each holding as many whole items as fit. The weight of an
item is estimated from its text before anything is rendered, so the split is known when
the first page is made (each page links to the others) and is the same on every build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from generator.site.model import SiteModel

T = TypeVar("T")

DEFAULT_PAGE_BUDGET_KB = 60
"""A page's budget, gzipped (Tesserae's rule of thumb for a detail page): a reader on a
slow line gets any page of the site in a few seconds."""


def page_budget(site: SiteModel) -> int:
    """``outputs.page_budget_kb`` of the settings (checked when they are read), in bytes."""
    return site.publication.settings.output_size("page_budget_kb", DEFAULT_PAGE_BUDGET_KB) * 1024


COMPRESSION = 2
"""How many times smaller than its HTML a page is assumed to be once gzipped: prose with
markup compresses 3–5×, so a page filled to ``COMPRESSION × budget`` raw bytes stays
under the budget with room for the page's own frame."""

ITEM_MARKUP = 160
"""The bytes of markup around one item's text (its list item, link, counts), estimated."""


def capacity(budget: int) -> int:
    """The raw bytes of items a page may hold under a gzipped ``budget`` (bytes)."""
    return COMPRESSION * budget


def weight(*texts: str) -> int:
    """An item's estimated weight in a page: its texts in UTF-8 and its markup."""
    return len("".join(texts).encode("utf-8")) + ITEM_MARKUP  # one encoding: called for every item


def split(items: Sequence[T], weigh: Callable[[T], int], room: int, first_room: int | None = None) -> list[list[T]]:
    """``items`` in order, over pages of at most ``room`` estimated bytes each (the first
    page: ``first_room``, what its frame leaves). An item heavier than a page gets a page of
    its own; never an empty page, but one empty list for no items at all."""
    pages: list[list[T]] = [[]]
    left = room if first_room is None else first_room
    for item in items:
        cost = weigh(item)
        if cost > left and pages[-1]:
            pages.append([])
            left = room
        pages[-1].append(item)
        left -= cost
    return pages
