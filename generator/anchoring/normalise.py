"""Text normalisation for matching quotes, with a map back to original offsets.

A reader copies a passage from a PDF, a chat or a phone: the apostrophe is curly,
the space is a no-break one, the line breaks moved. Matching folds those
differences away; offsets always refer back to the original text.
"""

from __future__ import annotations

import re
import unicodedata

_EQUIVALENT = {
    "\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
    "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2010": "-", "\u2011": "-",
    "\u00ab": '"', "\u00bb": '"',
}


_TRANSLATION = str.maketrans(_EQUIVALENT)  # one character for one: offsets are kept
_FOLDED = re.compile("[" + "".join(_EQUIVALENT) + "]")  # translate() with a table is slow: only when needed
_SPACE_RUN = re.compile(r"[\s\u00a0\u202f\u2007\u200b]+")


def normalise(text: str) -> tuple[str, list[int] | range]:
    """Return the normalised text and, for each of its characters, the offset of the
    original character it comes from. Runs of white space become one space; leading
    and trailing white space go. ``text`` is expected in NFC already (the loader
    normalises every file)."""
    translated = text.translate(_TRANSLATION) if _FOLDED.search(text) else text
    if "\u200b" not in translated and " ".join(translated.split()) == translated:
        return translated, range(len(translated))  # already normal (most elements): identity map
    parts: list[str] = []
    origin: list[int] = []
    position = position_of_space = 0  # a joining space is only written after some text
    for run in _SPACE_RUN.finditer(translated):
        begin, end = run.span()
        if begin > position:
            if parts:  # a run between two pieces of text becomes one space
                parts.append(" ")
                origin.append(position_of_space)
            parts.append(translated[position:begin])
            origin.extend(range(position, begin))
        position_of_space = begin
        position = end
    if position < len(translated):
        if parts:
            parts.append(" ")
            origin.append(position_of_space)
        parts.append(translated[position:])
        origin.extend(range(position, len(translated)))
    return "".join(parts), origin


def normalise_quote(text: str) -> str:
    """A quote, prefix or suffix as written in an extractions file, normalised."""
    return normalise(unicodedata.normalize("NFC", text))[0]
