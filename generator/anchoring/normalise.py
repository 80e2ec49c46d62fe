"""Text normalisation for matching quotes, with a map back to original offsets.

A reader copies a passage from a PDF, a chat or a phone: the apostrophe is curly,
the space is a no-break one, the line breaks moved. Matching folds those
differences away; offsets always refer back to the original text.
"""

from __future__ import annotations

import unicodedata

_EQUIVALENT = {
    "\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
    "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2010": "-", "\u2011": "-",
    "\u00ab": '"', "\u00bb": '"',
}


def _is_space(ch: str) -> bool:
    return ch.isspace() or ch in "\u00a0\u202f\u2007\u200b"


def normalise(text: str) -> tuple[str, list[int]]:
    """Return the normalised text and, for each of its characters, the offset of the
    original character it comes from. Runs of white space become one space; leading
    and trailing white space go. ``text`` is expected in NFC already (the loader
    normalises every file)."""
    out: list[str] = []
    origin: list[int] = []
    pending_space = -1
    for index, ch in enumerate(text):
        if _is_space(ch):
            if pending_space < 0:
                pending_space = index
            continue
        if pending_space >= 0 and out:
            out.append(" ")
            origin.append(pending_space)
        pending_space = -1
        out.append(_EQUIVALENT.get(ch, ch))
        origin.append(index)
    return "".join(out), origin


def normalise_quote(text: str) -> str:
    """A quote, prefix or suffix as written in an extractions file, normalised."""
    return normalise(unicodedata.normalize("NFC", text))[0]
