"""The closed sets of kinds that the markup, the corpus and the site share, in a module of
their own: importing them loads no markdown parser (a rebuild with nothing to do unpickles
links and audits without one). ``StrEnum``: a member is written, formatted and hashed as
its value, so the pages, YAML read back and JSON outputs hold the same bytes as the
strings they replace."""

from __future__ import annotations

from enum import StrEnum


class WikiKind(StrEnum):
    """What a ``[[…]]`` names; a citation's value is its prefix as written (``[[ext:ID]]``)."""

    NOTE = "note"
    EXT = "ext"  # an extraction, by id
    COM = "com"  # a comment, by id
    QUOTE = "quote"  # a quote of a saved answer, by its id in the answer's file


class LinkKind(StrEnum):
    """What a resolved link of a note points to."""

    NOTE = "note"
    EXTRACTION = "extraction"
    COMMENT = "comment"
    QUOTE = "quote"  # a saved answer's quote, in the note it quotes
    ASSET = "asset"
    EXTERNAL = "external"
    FRAGMENT = "fragment"  # a place on the linking note's own page
    BROKEN = "broken"
