"""Small text helpers shared by several stages."""

from __future__ import annotations

import hashlib
import re
import unicodedata


def slugify(text: str) -> str:
    """A readable, ASCII, lowercase address fragment (``Écoles & collèges`` → ``ecoles-colleges``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    ascii_text = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    out, dash = [], False
    for ch in ascii_text:
        if ch.isascii() and ch.isalnum():
            out.append(ch)
            dash = False
        elif not dash and out:
            out.append("-")
            dash = True
    slug = "".join(out).strip("-")
    if not slug:  # a category made only of non-Latin script: fall back to a stable hash
        slug = "c-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return slug


MAX_CATEGORY_SLUG = 200
"""Characters of a category page's address (``<slug>.html`` must fit a file name, 255 bytes)."""


def category_slug(category: str) -> str:
    """The address of a category's page: :func:`slugify`, cut when longer than
    :data:`MAX_CATEGORY_SLUG` and ended with a hash of the whole slug. A category is a
    label people read, not a name they chose for a file: a long one is shortened, never
    refused; two that differ only past the cut keep apart, and two with one slug share
    one shortened address (so the duplicate check still sees them)."""
    slug = slugify(category)
    if len(slug) <= MAX_CATEGORY_SLUG:
        return slug
    digest = hashlib.sha256(slug.encode("utf-8")).hexdigest()[:8]
    return slug[: MAX_CATEGORY_SLUG - len(digest) - 1].rstrip("-") + "-" + digest


def natural_key(text: str) -> tuple[tuple[int, int, str] | str, ...]:
    """A locale-free sort key readers expect: accents folded, case ignored, numbers by
    value (``Élève 2`` before ``Élève 10``, and both before ``M. Delorme``)."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).casefold()
    parts = re.split(r"(\d+)", folded)
    return (*((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p), text)
