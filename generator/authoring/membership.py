"""A note's ``notebooks:`` rewritten in its front matter, as text. Pure: text in, text out.

The extract form lets a person check the note's categories in each of its notebooks
(categories belong to the membership, docs/content-format.md §6). Only the lines of the
``notebooks:`` key — its key line through the end of its value — are rewritten, in one
canonical form the loader reads (notebook → axis → flow list of categories, ``nb: {}``
for a notebook without categories); every other line stays byte for byte. A block holding
a YAML comment (the rewrite would lose it), an anchor, an alias or a tag, or one that does
not read alone as the front matter reads it, is an :class:`~generator.yamledit.EditError`:
the person edits it by hand.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from generator.yamledit import EditError

Memberships = dict[str, dict[str, list[str]]]
"""Notebook slug → axis key → categories, in the order they are written."""

_KEY = re.compile(r"notebooks[ \t]*:(?:[ \t]|$)")
_COMMENT = re.compile(r"(?:^|[ \t])#")
_PLAIN = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`](?:[^,\[\]{}#:\n]*[^\s,\[\]{}#:])?")
_BY_HAND = "edit the note's 'notebooks:' by hand, then check the categories again"


def _scalar(text: str) -> str:
    """``text`` as a flow scalar: plain when it reads back as itself, double-quoted otherwise."""
    if _PLAIN.fullmatch(text):
        try:
            if yaml.safe_load(f"[{text}]") == [text]:
                return text
        except yaml.YAMLError:
            pass
    return json.dumps(text, ensure_ascii=False)


def render(memberships: Memberships) -> list[str]:
    """The canonical ``notebooks:`` lines of ``memberships``."""
    lines = ["notebooks:"]
    for notebook, axes in memberships.items():
        kept = {axis: names for axis, names in axes.items() if names}
        if not kept:
            lines.append(f"  {_scalar(notebook)}: {{}}")
            continue
        lines.append(f"  {_scalar(notebook)}:")
        lines += [f"    {_scalar(axis)}: [{', '.join(_scalar(n) for n in names)}]" for axis, names in kept.items()]
    return lines


def _block(lines: list[str], end: int) -> tuple[int, int]:
    """The lines ``[start, stop)`` of the front matter's ``notebooks:`` key and its value."""
    starts = [i for i in range(1, end) if _KEY.match(lines[i])]
    if len(starts) != 1:
        raise EditError("the front matter has no single top-level 'notebooks:' line; " + _BY_HAND)
    start = stop = starts[0]
    stop += 1
    # a value goes on while lines are indented, blank, or items of a list written at the key's column
    while stop < end and (not lines[stop].strip() or lines[stop][0] in " \t"
                          or lines[stop] == "-" or lines[stop].startswith("- ")):
        stop += 1
    while stop > start + 1 and not lines[stop - 1].strip():
        stop -= 1  # blank lines after the value stay where they are
    return start, stop


def set_notebooks(text: str, current: Any, memberships: Memberships) -> str:
    """``text`` (a note, LF line ends) with its ``notebooks:`` written as ``memberships``;
    ``current`` is what the front matter's ``notebooks`` reads as now (the block must read
    alone as that)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise EditError("the note has no front matter")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise EditError("the note's front matter is never closed")
    start, stop = _block(lines, end)
    block = "\n".join(lines[start:stop])
    if any(_COMMENT.search(line) for line in lines[start:stop]):
        raise EditError("the note's 'notebooks:' holds a comment, which rewriting it would lose; " + _BY_HAND)
    try:
        tokens = list(yaml.scan(block))
        alone = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        raise EditError("the note's 'notebooks:' is written in a form this edit cannot rewrite safely; "
                        + _BY_HAND) from exc
    if any(isinstance(t, (yaml.AnchorToken, yaml.AliasToken, yaml.TagToken)) for t in tokens):
        raise EditError("the note's 'notebooks:' uses a YAML anchor, alias or tag; " + _BY_HAND)
    if not isinstance(alone, dict) or alone.get("notebooks") != current:
        raise EditError("the note's 'notebooks:' is written in a form this edit cannot rewrite safely; " + _BY_HAND)
    return "\n".join(lines[:start] + render(memberships) + lines[stop:])
