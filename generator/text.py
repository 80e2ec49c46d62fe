"""Small text helpers shared by several stages."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from generator.terminal import escaped, visible


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


def _forbidden_class() -> str:
    noncharacters = "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(17))
    return f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef{noncharacters}]"


FORBIDDEN_CHARACTERS = re.compile(_forbidden_class())
"""Code points no output may hold: XML 1.0 refuses C0 controls other than tab, line feed and
carriage return, surrogates and U+FFFE/U+FFFF (a feed holding one is not well-formed); HTML
makes every control (DEL and C1 too) and every noncharacter a parse error."""


def without_forbidden(text: str) -> str:
    """``text`` without :data:`FORBIDDEN_CHARACTERS` (a carriage return is kept: text read
    from content has none left, see :func:`generator.files.decode_text`)."""
    return FORBIDDEN_CHARACTERS.sub("", text)


def forbidden_shown(text: str) -> str:
    """``text`` with each of :data:`FORBIDDEN_CHARACTERS` (and a carriage return) written as
    the escape that put it there (``\\x0b``, ``\\ufffe``): a YAML string holds one only
    through such an escape, so the reader sees what the file says."""
    if FORBIDDEN_CHARACTERS.search(text) is None and "\r" not in text:
        return text
    return FORBIDDEN_CHARACTERS.sub(lambda match: escaped(ord(match.group())), text).replace("\r", escaped(0x0D))


def model_words(text: str) -> str:
    """What a model (or a server) wrote, as every output shows it: each character that could
    drive a terminal, break a feed or reorder what a reader sees (controls, bidi controls,
    line separators, noncharacters) written as its escape, as the terminal shows it."""
    return visible(forbidden_shown(text), keep_newlines=True)


def provenance_shown(provenance: Mapping[str, Any]) -> dict[str, Any]:
    """A record's provenance (its ``model`` string is the server's word) with every string
    value as :func:`model_words` shows it."""
    return {key: model_words(value) if isinstance(value, str) else value for key, value in provenance.items()}
