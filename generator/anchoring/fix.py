"""Fixing relocated anchors: the quote to record, and a precise edit of the
extractions file that keeps its comments and layout. Pure: text in, text out."""

from __future__ import annotations

import json

from generator.anchoring.elements import Element
from generator.anchoring.resolve import Anchor, AnchorStatus, portions_text
from generator.corpus.source import ValueSpan


def current_quote(anchor: Anchor, elements: list[Element]) -> str:
    """The note's own text where a relocated anchor landed: each portion's text, and a
    blank line between portions in different elements (as quotes are written)."""
    if anchor.status is not AnchorStatus.RELOCATED:
        raise ValueError("only a relocated anchor has a new quote")
    return portions_text(elements, anchor.portions)


def render_scalar(value: str, key_column: int) -> str:
    """A YAML scalar for ``value``: double-quoted on one line, or a literal block
    (``|-``) indented under its key when it spans several lines."""
    if "\n" not in value:
        return json.dumps(value, ensure_ascii=False)
    indent = " " * (key_column + 2)
    lines = [indent + line if line else "" for line in value.split("\n")]
    return "|-\n" + "\n".join(lines)


def inline_scalar(value: str) -> str:
    """``value`` as one double-quoted line (line breaks escaped): valid anywhere,
    inside a flow mapping too."""
    import yaml

    return yaml.dump(value, default_style='"', allow_unicode=True, width=10**9).strip().removesuffix("...").strip()


def written_value(document: str, span: ValueSpan, value: str) -> str:
    """What :func:`replace_value` (not inline) makes the value at ``span`` read back as:
    ``value``, and one line break more when a clipped literal block (``|``) is kept."""
    old = document[span.start:span.end]
    header = old.partition("\n")[0]
    if old.startswith("|") and "\n" in value and header.strip() == "|":
        return value + "\n"
    return value


def replace_value(document: str, span: ValueSpan, value: str, inline: bool = False) -> str:
    """``document`` with the value at ``span`` replaced by ``value``, nothing else touched.

    A literal block (``|``) stays one, with its header and indentation, so that only
    the lines whose text changed differ. ``inline`` writes the value on one line,
    double-quoted (for a value inside a flow collection, where no block can stand)."""
    old = document[span.start:span.end]
    trailing = old[len(old.rstrip("\n")):]
    if inline:
        return document[:span.start] + inline_scalar(value) + trailing + document[span.end:]
    header, _, body = old.partition("\n")
    if old.startswith("|") and "\n" in value and not header.strip("|+-").strip():
        content = [line for line in body.split("\n") if line.strip()]
        indent = content[0][: len(content[0]) - len(content[0].lstrip(" "))] if content else \
            " " * (span.key_column + 2)
        lines = [indent + line if line else "" for line in value.split("\n")]
        return document[:span.start] + header + "\n" + "\n".join(lines) + trailing + document[span.end:]
    return document[:span.start] + render_scalar(value, span.key_column) + trailing + document[span.end:]
