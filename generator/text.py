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


def natural_key(text: str) -> tuple:
    """A locale-free sort key readers expect: accents folded, case ignored, numbers by
    value (``Élève 2`` before ``Élève 10``, and both before ``M. Delorme``)."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).casefold()
    parts = re.split(r"(\d+)", folded)
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p) + (text,)
