"""Content YAML files rewritten in the layouts people really use, and the exact source
text of the records they hold.

    text = layout(value, Layout(indent=4, comments=True, crlf=True))   # same value, other bytes
    records(path.read_bytes())   # the source text of each top-level list item

A *layout* changes how a file is written, never what it says: every function here
that writes YAML checks that the result loads back to the same value. A *record* is
one item of a list that is a value of the file's top-level mapping (a verdict, an
extraction, an opposition, a contestation…), as the exact text a person wrote —
found with ``yaml.compose`` node marks — so a test can say "still there, byte for byte".
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import yaml

BOM = "\ufeff"


@dataclass(frozen=True)
class Layout:
    """How to write a file. ``indent``: columns of a top-level list's items under their
    key (0, 2 or 4); ``flow``: top-level lists written ``key: [{…}, {…}]``; ``comments``:
    a comment line between records; ``quoted_keys``: every key written ``"key":``;
    ``crlf``, ``bom``, ``final_newline``: the file's line ends, byte-order mark and end."""

    indent: int = 2
    flow: bool = False
    comments: bool = False
    quoted_keys: bool = False
    crlf: bool = False
    bom: bool = False
    final_newline: bool = True

    def __repr__(self) -> str:
        changed = [f"{key}={getattr(self, key)!r}" for key, default in DEFAULT.__dict__.items()
                   if getattr(self, key) != default]
        return f"Layout({', '.join(changed)})"

    @property
    def name(self) -> str:
        parts = ["flow" if self.flow else f"indent{self.indent}"]
        parts += [flag for flag in ("comments", "quoted_keys", "crlf", "bom") if getattr(self, flag)]
        return "-".join(parts + ([] if self.final_newline else ["no-final-newline"]))


DEFAULT = Layout()

#: one layout per way of writing, as test 1 of tests/test_write_safety.py parametrises them
LAYOUTS = [Layout(indent=0), Layout(indent=2), Layout(indent=4), Layout(comments=True), Layout(indent=0, comments=True),
           Layout(flow=True), Layout(quoted_keys=True), Layout(crlf=True), Layout(bom=True),
           Layout(final_newline=False), Layout(indent=0, final_newline=False)]


def _scalar(value: Any) -> str:
    """One scalar in plain or quoted style, on one line, reading back as ``value``."""
    if isinstance(value, str) and ("\n" in value or "\r" in value or "\t" in value or value != value.strip()):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar
    text = yaml.safe_dump(value, allow_unicode=True, width=float("inf"), default_flow_style=True)
    text = text.removesuffix("\n").removesuffix("\n...")
    if "\n" in text:
        return json.dumps(value, ensure_ascii=False)
    return text


def _key(key: Any, layout: Layout) -> str:
    if layout.quoted_keys and isinstance(key, str):
        return json.dumps(key, ensure_ascii=False)
    if isinstance(key, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", key):
        return key
    return _scalar(key)


def _literal(value: str, column: int) -> list[str] | None:
    """A multi-line string as a literal block scalar (``|``, ``|-``, ``|+``), when it can be."""
    if "\r" in value or "\t" in value or value.startswith((" ", "\n")) or not value.strip():
        return None
    body = value.rstrip("\n")
    if any(line != line.rstrip() for line in body.split("\n")):
        return None
    trailing = len(value) - len(body)
    header = "|-" if trailing == 0 else "|" if trailing == 1 else "|+"
    pad = " " * column
    lines = [header] + [pad + line if line else "" for line in body.split("\n")]
    lines += [""] * max(0, trailing - 1)
    return lines


def _flow(value: Any, layout: Layout) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k, layout)}: {_flow(v, layout)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v, layout) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return _scalar(value)


def _value_after_key(value: Any, column: int, layout: Layout, top: bool) -> list[str]:
    """The lines of a mapping value whose key sits at ``column``; the first element is
    what follows ``key:`` on its own line."""
    if isinstance(value, dict) and value:
        return [""] + _mapping(value, column + 2, layout)
    if isinstance(value, list) and value:
        if top and layout.flow:
            return [" " + _flow(value, layout)]
        return [""] + _sequence(value, column + (layout.indent if top else 2), layout, top)
    if isinstance(value, str) and "\n" in value:
        block = _literal(value, column + 2)
        if block is not None:
            return [" " + block[0]] + block[1:]
    if isinstance(value, (dict, list)):
        return [" {}" if isinstance(value, dict) else " []"]
    return [" " + _scalar(value)]


def _mapping(value: dict, column: int, layout: Layout, top: bool = False) -> list[str]:
    lines = []
    for key, item in value.items():
        first, *rest = _value_after_key(item, column, layout, top)
        lines.append(" " * column + _key(key, layout) + ":" + first)
        lines += rest
    return lines


def _sequence(items: list, column: int, layout: Layout, top: bool) -> list[str]:
    lines = []
    for number, item in enumerate(items):
        if top and layout.comments and number:
            lines.append(" " * column + f"# record {number + 1}")
        dash = " " * column + "- "
        if isinstance(item, dict) and item:
            inner = _mapping(item, column + 2, layout)
            lines.append(dash + inner[0].lstrip(" "))
            lines += inner[1:]
        elif isinstance(item, (dict, list)):
            lines.append(dash + _flow(item, layout))
        elif isinstance(item, str) and "\n" in item and _literal(item, column + 2) is not None:
            block = _literal(item, column + 2)
            lines.append(dash + block[0])
            lines += block[1:]
        else:
            lines.append(dash + _scalar(item))
    return lines


def layout(value: dict, how: Layout, header: str = "") -> bytes:
    """``value`` (a top-level mapping, as ``yaml.safe_load`` reads it) written in layout
    ``how``, after ``header`` (comment lines kept from the original); checked to load
    back to ``value``."""
    text = header + "\n".join(_mapping(value, 0, how, top=True)) + "\n"
    if not how.final_newline:
        text = text.rstrip("\n")
    if how.crlf:
        text = text.replace("\n", "\r\n")
    data = ((BOM if how.bom else "") + text).encode("utf-8")
    assert load(data) == value, f"layout {how.name} changed the value:\n{text}"
    return data


def load(data: bytes) -> Any:
    """What the bytes of a content YAML file say (BOM and line ends as the loader reads them)."""
    return yaml.safe_load(data.decode("utf-8").removeprefix(BOM))


def header_of(data: bytes) -> str:
    """The comment lines that open a file (kept when it is laid out again)."""
    lines = []
    for line in data.decode("utf-8").removeprefix(BOM).replace("\r\n", "\n").split("\n"):
        if not line.startswith("#"):
            break
        lines.append(line + "\n")
    return "".join(lines)


def relayout(data: bytes, how: Layout) -> bytes:
    """A content file laid out again, saying the same thing (its opening comments kept)."""
    value = load(data)
    assert isinstance(value, dict), "only files holding a mapping are laid out"
    return layout(value, how, header_of(data))


def records(data: bytes) -> list[str]:
    """The source text of every item of every list that is a value of the file's
    top-level mapping, from its ``- `` (and indentation) to its last line, without the
    comments and blank lines that follow it."""
    text = data.decode("utf-8", errors="replace").removeprefix(BOM)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    found = []
    if not isinstance(root, yaml.MappingNode):
        return found
    for _key_node, value in root.value:
        if not isinstance(value, yaml.SequenceNode):
            continue
        for item in value.value:
            start, end = item.start_mark.index, item.end_mark.index
            line_start = text.rfind("\n", 0, start) + 1
            if not value.flow_style and re.fullmatch(r"[ \t]*(- +)+", text[line_start:start]):
                start = line_start
            lines = text[start:end].split("\n")
            while len(lines) > 1 and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
                lines.pop()
            found.append("\n".join(lines).rstrip("\r\n \t"))
    return found


def missing_records(before: bytes, after: bytes | None) -> list[str]:
    """The records of ``before`` that ``after`` no longer holds byte for byte, as
    records (an item of the same file, each as many times as it was there)."""
    wanted = Counter(records(before))
    have = Counter(records(after)) if after is not None else Counter()
    return sorted((wanted - have).elements())
