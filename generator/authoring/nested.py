"""Edits inside one extraction of an extractions file, as text. Pure: text in, text out.

:mod:`generator.yamledit` appends to a top-level list; the edit layer also writes inside
an item of it: a comment appended to an extraction's ``comments``, ``masked: true``
set on an extraction, a comment withdrawn (its text removed, its hash kept, its
``withdrawn:`` added: the tombstone of docs/content-format.md §7). Every byte outside
the edited item stays where it was, and the write seam reads the result back before
anything is written; a layout these edits cannot extend safely (a flow mapping, tabs)
is an :class:`~generator.yamledit.EditError` saying what to do.
"""

from __future__ import annotations

from typing import Any

import yaml

# _end and _line_end: yamledit's measures of a node's own text (its end, the end of its line)
from generator.yamledit import EditError, block_item, compose
from generator.yamledit import _end as node_end
from generator.yamledit import _line_end as line_end


def _item(text: str, index: int) -> yaml.MappingNode:
    """The ``index``-th item of the top-level ``extractions`` list, a block mapping."""
    root = compose(text)
    if not isinstance(root, yaml.MappingNode):
        raise EditError("the file is not a mapping with 'extractions:'")
    value = next((v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "extractions"), None)
    if not isinstance(value, yaml.SequenceNode) or index >= len(value.value):
        raise EditError("the extraction is not in the file's 'extractions' list")
    item = value.value[index]
    if not isinstance(item, yaml.MappingNode) or item.flow_style:
        raise EditError("the extraction is written as a flow mapping ({…}); write it in block style to edit it here")
    return item


def _key(mapping: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    return next(((k, v) for k, v in mapping.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)


def _after(text: str, node: yaml.Node) -> int:
    """Where a line may be inserted just after ``node``'s own text."""
    end = node_end(node)
    return end if end and text[end - 1] == "\n" else line_end(text, end)


def _insert(text: str, at: int, lines: list[str]) -> str:
    head = text[:at] if text[:at].endswith("\n") or not text[:at] else text[:at] + "\n"
    return head + "\n".join(lines) + "\n" + text[at:]


def _indent(text: str, mapping: yaml.MappingNode) -> str:
    column = int(mapping.value[0][0].start_mark.column)
    start = text.rfind("\n", 0, mapping.value[0][0].start_mark.index) + 1
    if "\t" in text[start:start + column]:
        raise EditError("the extraction is indented with tabs")
    return " " * column


def _append_to_mapping(text: str, mapping: yaml.MappingNode, lines: list[str]) -> str:
    """``lines`` (already indented as the mapping's keys) after the mapping's last line."""
    return _insert(text, _after(text, mapping), lines)


def append_comment(text: str, index: int, comment: dict[str, Any]) -> str:
    """``text`` with ``comment`` appended to the comments of extraction ``index``."""
    item = _item(text, index)
    indent = _indent(text, item)
    found = _key(item, "comments")
    if found is None:
        return _append_to_mapping(text, item, [f"{indent}comments:", *block_item(comment, indent + "  ")])
    key, value = found
    if isinstance(value, yaml.ScalarNode) and value.tag.endswith(":null") and value.start_mark.index == value.end_mark.index:
        return _insert(text, line_end(text, key.start_mark.index), block_item(comment, indent + "  "))
    if not isinstance(value, yaml.SequenceNode):
        raise EditError("'comments' of the extraction is not a list")
    if value.flow_style:
        raise EditError("the extraction's comments are written as a flow list ([…]); write them in block style")
    if not value.value:
        raise EditError("the extraction's comments list is empty in a layout that cannot be extended")
    return _insert(text, _after(text, value), block_item(comment, " " * value.start_mark.column))


def set_masked(text: str, index: int) -> str:
    """``text`` with ``masked: true`` on extraction ``index``."""
    item = _item(text, index)
    found = _key(item, "masked")
    if found is None:
        return _append_to_mapping(text, item, [f"{_indent(text, item)}masked: true"])
    value = found[1]
    if not isinstance(value, yaml.ScalarNode):
        raise EditError("'masked' of the extraction is not true or false")
    return text[:value.start_mark.index] + "true" + text[value.end_mark.index:]


def withdraw_comment(text: str, index: int, position: int, withdrawal: dict[str, Any], text_sha256: str) -> str:
    """``text`` with comment ``position`` of extraction ``index`` withdrawn: its ``text``
    removed, ``text_sha256`` kept (added when missing) and ``withdrawn:`` added."""
    item = _item(text, index)
    found = _key(item, "comments")
    if found is None or not isinstance(found[1], yaml.SequenceNode) or position >= len(found[1].value):
        raise EditError("the comment is not in the extraction's comments")
    comments = found[1]
    if comments.flow_style:
        raise EditError("the extraction's comments are written as a flow list ([…]); write them in block style")
    comment = comments.value[position]
    if not isinstance(comment, yaml.MappingNode) or comment.flow_style:
        raise EditError("the comment is written as a flow mapping ({…}); write it in block style to withdraw it")
    indent = _indent(text, comment)
    said = _key(comment, "text")
    if said is not None and comment.value[0][0] is said[0]:
        raise EditError("the comment starts with its 'text:'; put its 'id:' first to withdraw it here")
    lines = [] if _key(comment, "text_sha256") is not None else [f"{indent}text_sha256: {text_sha256}"]
    lines += [f"{indent}{line}" for line in
              yaml.safe_dump({"withdrawn": withdrawal}, allow_unicode=True, sort_keys=False, width=100)
              .rstrip("\n").split("\n")]
    edited = _append_to_mapping(text, comment, lines)
    if said is None:
        return edited
    start = text.rfind("\n", 0, said[0].start_mark.index) + 1
    return edited[:start] + edited[_after(text, said[1]):]
