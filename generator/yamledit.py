"""Editing YAML files as text, in the file's own layout. Pure: text in, text out.

A command that adds records to a file a person wrote (verdicts, oppositions, a note's
extractions, a proposal's decisions) never re-dumps the file: it inserts the new
records where the list ends, the way its items are already written — block items at
their own indentation (0, 2, 4…), or flow items inside ``[…]`` — so every byte the
person wrote stays where it was. :func:`records` names the parts of a document (each
top-level key's value, each item of a top-level list) with their exact source text, so
the write seam (:mod:`generator.writes`) can prove that those bytes did not move.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from generator.terminal import visible

# the build's parser when present (libyaml); the pure one gives the same marks
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Record = tuple[Any, ...]
"""A part of a document: ``(key,)`` a top-level value, ``(key, index)`` an item of a
top-level list, ``(index,)`` an item of a top-level list document."""


class EditError(ValueError):
    """The text cannot be extended safely in its own layout."""


def compose(text: str) -> yaml.Node | None:
    """The document's node tree with its marks (character offsets), or EditError."""
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise EditError(f"the file is not valid YAML{where}") from exc


def _end(node: yaml.Node) -> int:
    """Where ``node``'s own text ends: a block collection's end mark runs on over the
    comments and blank lines after it, so it ends where its last child does."""
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        return _end(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return _end(node.value[-1])
    return int(node.end_mark.index)


def _text(text: str, node: yaml.Node, in_flow: bool) -> str:
    """A record's exact text; in a block list it runs to the end of its last line, so
    a comment written after it is part of it."""
    end = _end(node)
    if not in_flow and end and text[end - 1] != "\n":
        end = _line_end(text, end)
    return text[node.start_mark.index:end].rstrip(" \t\r\n")


def records(text: str) -> dict[Record, str]:
    """Each part of the document and its exact source text (see :data:`Record`)."""
    root = compose(text)
    found: dict[Record, str] = {}
    if isinstance(root, yaml.MappingNode):
        for key_node, value in root.value:
            key = key_node.value
            if isinstance(value, yaml.SequenceNode):
                for index, item in enumerate(value.value):
                    found[(key, index)] = _text(text, item, bool(value.flow_style))
            else:
                found[(key,)] = _text(text, value, bool(root.flow_style))
    elif isinstance(root, yaml.SequenceNode):
        for index, item in enumerate(root.value):
            found[(index,)] = _text(text, item, bool(root.flow_style))
    elif root is not None:
        found[()] = _text(text, root, False)
    return found


def one_line(text: str) -> str:
    """``text`` safe inside a ``#`` comment: one line, every control or line-breaking
    character written as an escape (as on a terminal), so a server's string cannot end
    the comment; a byte-order mark too, which the YAML reader refuses mid-file."""
    return visible(text).replace("\ufeff", "\\ufeff")


class _Dumper(yaml.SafeDumper):
    """Text with a line break is written double-quoted on one line (``"a\\nb"``): a
    server's string then never shows as a line of its own that looks like a record."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    breaks = any(char in value for char in "\n\r\x85\u2028\u2029")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"' if breaks else None)


_Dumper.add_representer(str, _represent_text)


def block_item(item: Any, indent: str) -> list[str]:
    """One block-sequence item, as ``yaml.safe_dump`` writes it, at ``indent``."""
    dumped = yaml.dump([item], Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)
    return [f"{indent}{line}" if line else "" for line in dumped.rstrip("\n").split("\n")]


def flow_item(item: Any) -> str:
    """One item in flow style on one line; non-ASCII escaped, so nothing in it can be
    a character the YAML reader refuses."""
    dumped = yaml.dump(item, Dumper=_Dumper, default_flow_style=True, allow_unicode=False, sort_keys=False,
                       width=10**9)
    return dumped.strip().removesuffix("...").strip()


def _line_end(text: str, index: int) -> int:
    """The index just after the line holding ``index`` (its newline included)."""
    end = text.find("\n", index)
    return len(text) if end < 0 else end + 1


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _block(indent: str, note: list[str], items: list[Any], render: Callable[[Any, str], list[str]]) -> list[str]:
    """The lines of new block items at ``indent``, under their comment."""
    return [f"{indent}{line}" for line in note] + [line for item in items for line in render(item, indent)]


def _insert_lines(text: str, at: int, lines: list[str]) -> str:
    """``text`` with ``lines`` inserted at ``at`` (the start of a line, or the end of a
    text without a final newline)."""
    head = text[:at] if text[:at].endswith("\n") or not text[:at] else text[:at] + "\n"
    return head + "\n".join(lines) + "\n" + text[at:]


def append_items(text: str, key: str, items: list[Any], comment: str = "",
                 render: Callable[[Any, str], list[str]] = block_item) -> str:
    """``text`` with ``items`` appended to the list under the top-level ``key``.

    Block lists get block items at the indentation of their first item (after a
    ``# comment`` line); flow lists get flow items before their ``]``; a missing key,
    an empty value or an empty file get a new block list. Everything else of the text
    is kept as it is. ``render(item, indent)`` gives a block item's lines."""
    if not items:
        return text
    note = [f"# {one_line(comment)}"] if comment else []
    root = compose(text)
    if root is None or (isinstance(root, yaml.ScalarNode) and root.value == "" and root.tag.endswith(":null")):
        return _insert_lines(text, len(text), [f"{key}:", *_block("", note, items, render)])
    if not isinstance(root, yaml.MappingNode):
        raise EditError("the file is not a mapping of fields")
    if root.flow_style:
        raise EditError("the file is written as one flow mapping ({…}); write it in block style to extend it")
    key_node, value = next(((k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == key),
                           (None, None))
    if key_node is None or value is None:  # no such key yet: a new list at the end
        indent = " " * (root.value[0][0].start_mark.column if root.value else 0)
        return _insert_lines(text, len(text), [f"{indent}{key}:", *_block(indent, note, items, render)])
    after_key = _line_end(text, key_node.start_mark.index)
    under_key = " " * (key_node.start_mark.column + 2)
    if isinstance(value, yaml.ScalarNode) and value.tag.endswith(":null"):
        if value.start_mark.index != value.end_mark.index:  # an explicit null (~, null): a flow list instead
            start, end = value.start_mark.index, value.end_mark.index
            return text[:start] + "[" + ", ".join(flow_item(i) for i in items) + "]" + text[end:]
        return _insert_lines(text, after_key, _block(under_key, note, items, render))
    if not isinstance(value, yaml.SequenceNode):
        raise EditError(f"'{key}' is not a list")
    if value.flow_style and not value.value:  # an empty '[]' holds nothing to keep: a block list reads better
        start, end = value.start_mark.index, value.end_mark.index
        text = text[:start].rstrip(" \t") + text[end:]
        return _insert_lines(text, _line_end(text, key_node.start_mark.index), _block(under_key, note, items, render))
    if value.flow_style:  # right after the last item: a trailing comma or a ']' on its own line stay
        at = int(value.value[-1].end_mark.index)
        return text[:at] + "".join(f", {flow_item(i)}" for i in items) + text[at:]
    if "\t" in text[_line_start(text, value.start_mark.index):value.start_mark.index]:
        raise EditError(f"the items of '{key}' are indented with tabs")
    end = _end(value)
    at = end if text[end - 1] == "\n" else _line_end(text, end)  # a block scalar ends with its newline
    return _insert_lines(text, at, _block(" " * value.start_mark.column, note, items, render))
