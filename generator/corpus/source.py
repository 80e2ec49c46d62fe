"""Reading content files: YAML with line numbers, front matter (bytes are decoded by
:func:`generator.files.decode_text`).

The only module of ``corpus/`` that knows about YAML syntax. Values come
back as :class:`YamlMap` / :class:`YamlList`, plain ``dict`` / ``list`` subclasses
that remember the line of each key and item, so validation can point at the line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from generator.problems import Problem


class YamlMap(dict[Any, Any]):
    """A YAML mapping that remembers where it and each of its keys start (1-based lines),
    and where each value's text lies (character offsets, for precise edits)."""

    line: int = 0
    key_lines: dict[Any, int]
    value_spans: dict[Any, ValueSpan]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_lines = {}
        self.value_spans = {}

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class YamlList(list[Any]):
    """A YAML sequence that remembers where it and each of its items start."""

    line: int = 0
    item_lines: list[int]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.item_lines = []

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if index < len(self.item_lines) else self.line


@dataclass(frozen=True)
class ValueSpan:
    """Where a mapping value is written: ``[start, end)`` character offsets in the
    document, and the column of its key (to indent a rewritten block scalar)."""

    start: int
    end: int
    key_column: int


@dataclass
class _DuplicateKey:
    key: str
    line: int


# libyaml's parser when present (about six times faster); same nodes, marks and errors classes.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SafeLoader):  # type: ignore[misc,valid-type]
    """SafeLoader building YamlMap/YamlList and noting duplicate keys instead of
    silently keeping the last one (PyYAML's default)."""

    def __init__(self, stream: str, line_offset: int) -> None:
        super().__init__(stream)
        self.line_offset = line_offset
        self.duplicates: list[_DuplicateKey] = []

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        try:
            return self._located(node)
        except _Unusual:  # a tag or a merge key content seldom writes: PyYAML's own walk, as it was
            self.duplicates = []
            _refuse_aliases(node)
            return self.construct_document(node)

    def _located(self, root: yaml.Node) -> Any:
        """The document's value in one walk of its nodes, depth first in document order, with
        a stack of its own: the plain mappings, lists and scalars content is made of, without
        PyYAML's generators and per-node bookkeeping (which cost 3 ms a sidecar of ten
        extractions, half of reading a corpus with evidence), and at any depth (PyYAML's
        recursive walk raised RecursionError at 400 nested lists). An alias is refused where
        it is met; anything else (a tag such as ``!!set``, a merge key ``<<``) raises
        :class:`_Unusual`, for PyYAML's walk."""
        seen: set[int] = set()
        frames: list[tuple[YamlMap | YamlList, Iterator[Any]]] = []
        offset = 1 + self.line_offset

        def enter(node: yaml.Node) -> Any:
            if id(node) in seen:
                raise yaml.constructor.ConstructorError(None, None, _ALIASED, node.start_mark)
            seen.add(id(node))
            tag, kind = node.tag, getattr(node, "id", "")  # scalar, sequence or mapping (a class attribute)
            if kind == "scalar":
                if tag == _STR:
                    return node.value
                if tag in _PLAIN_SCALARS:
                    return self.yaml_constructors[tag](self, node)
            elif tag == _MAP and kind == "mapping":
                data: YamlMap | YamlList = YamlMap()
                data.line = node.start_mark.line + offset
                frames.append((data, iter(node.value)))
                return data
            elif tag == _SEQ and kind == "sequence":
                data = YamlList()
                data.line = node.start_mark.line + offset
                data.item_lines = [item.start_mark.line + offset for item in node.value]
                frames.append((data, iter(node.value)))
                return data
            raise _Unusual

        value = enter(root)
        while frames:
            data, items = frames[-1]
            item = next(items, None)
            if item is None:
                frames.pop()
            elif isinstance(data, YamlMap):
                key_node, value_node = item
                if key_node.tag == _MERGE:
                    raise _Unusual
                key = enter(key_node)
                if isinstance(key, (list, dict)):
                    raise yaml.constructor.ConstructorError(None, None, _KEY_NOT_PLAIN, key_node.start_mark)
                line = key_node.start_mark.line + offset
                if key in data:
                    self.duplicates.append(_DuplicateKey(str(key), line))
                data.key_lines[key] = line
                data.value_spans[key] = ValueSpan(value_node.start_mark.index, value_node.end_mark.index,
                                                  key_node.start_mark.column)
                data[key] = enter(value_node)
            else:
                data.append(enter(item))
        return value

    def _line(self, node: yaml.Node) -> int:
        return node.start_mark.line + 1 + self.line_offset

    def construct_located_map(self, node: yaml.MappingNode) -> Iterator[YamlMap]:
        data = YamlMap()
        data.line = self._line(node)
        data.key_lines = {}
        data.value_spans = {}
        yield data
        self.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (list, dict)):
                raise yaml.constructor.ConstructorError(None, None, _KEY_NOT_PLAIN, key_node.start_mark)
            if key in data:
                self.duplicates.append(_DuplicateKey(str(key), self._line(key_node)))
            data[key] = self.construct_object(value_node, deep=True)
            data.key_lines[key] = self._line(key_node)
            data.value_spans[key] = ValueSpan(value_node.start_mark.index, value_node.end_mark.index,
                                              key_node.start_mark.column)

    def construct_checked_timestamp(self, node: yaml.ScalarNode) -> Any:
        """A date-shaped value that is no real date (2025-02-30) is refused at its line,
        where PyYAML would raise a bare ValueError."""
        try:
            return self.construct_yaml_timestamp(node)
        except (ValueError, OverflowError) as exc:
            raise _InvalidDate(node.value, str(exc), node.start_mark) from None

    def construct_located_list(self, node: yaml.SequenceNode) -> Iterator[YamlList]:
        data = YamlList()
        data.line = self._line(node)
        data.item_lines = [self._line(item) for item in node.value]
        yield data
        data.extend(self.construct_object(item, deep=True) for item in node.value)


class _Unusual(Exception):
    """A node the quick walk leaves to PyYAML's (:meth:`_LineLoader._located`)."""


_STR, _MAP, _SEQ, _MERGE = (f"tag:yaml.org,2002:{name}" for name in ("str", "map", "seq", "merge"))
_PLAIN_SCALARS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("int", "float", "bool", "null", "timestamp"))
"""The scalars the quick walk makes with the loader's own constructors (strings it takes as they are)."""
_ALIASED = "this value is repeated by a YAML alias (*name), which is not supported; write it out"
_KEY_NOT_PLAIN = "a mapping key must be a plain value"


class _InvalidDate(yaml.YAMLError):
    def __init__(self, value: str, reason: str, mark: yaml.Mark) -> None:
        super().__init__(value)
        self.value, self.reason, self.problem_mark = value, reason, mark


def _refuse_aliases(root: yaml.Node) -> None:
    """An alias (``*name``) makes one node appear twice: content never needs it, and a few
    nested ones expand into billions of values (an "alias bomb"). Refused at its line."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise yaml.constructor.ConstructorError(None, None, _ALIASED, node.start_mark)
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack += [key, value]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_located_map)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_located_list)
_LineLoader.add_constructor("tag:yaml.org,2002:timestamp", _LineLoader.construct_checked_timestamp)


def parse_yaml(text: str, file: str, line_offset: int = 0) -> tuple[Any, list[Problem]]:
    """Parse one YAML document safely. Returns ``(value, problems)``; value is ``None``
    when the document could not be read at all.

    ``line_offset`` shifts reported lines (front matter starts on line 2 of a note).
    """
    loader = _LineLoader(text, line_offset)
    try:
        value = loader.get_single_data()
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark else None
        return None, [
            Problem(
                file, line, "yaml-unsupported",
                f"YAML construct refused: {exc.problem}",
                "Use plain mappings, lists, strings, numbers, booleans and dates; "
                "YAML tags such as !!python/object are never executed.",
            )
        ]
    except _InvalidDate as exc:
        return None, [
            Problem(
                file, exc.problem_mark.line + 1 + line_offset, "invalid-date",
                f"{exc.value!r} is not a real date ({exc.reason})",
                "Write a date that exists, as YYYY-MM-DD (or quote the value if it is not meant as a date).",
            )
        ]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 + line_offset if mark else None
        what = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        detail = f"{context}, {what}" if context else what
        return None, [
            Problem(
                file, line, "yaml-syntax", f"malformed YAML: {detail}",
                "Fix the YAML syntax at this line (indentation, a missing colon, an unclosed quote).",
            )
        ]
    finally:
        loader.dispose()
    problems = [
        Problem(
            file, dup.line, "duplicate-key", f"key {dup.key!r} appears twice in the same mapping",
            "Keep one of them: YAML would silently keep only the last value.",
        )
        for dup in loader.duplicates
    ]
    return value, problems


@dataclass
class FrontMatterDocument:
    """A markdown file split into its YAML front matter and its body.

    Attributes:
        meta: the parsed front matter (``None`` when absent or unreadable).
        body: the markdown after the closing ``---``.
        body_line: the file line on which the body starts (1-based).
        problems: what went wrong while splitting or parsing.
    """

    meta: Any
    body: str
    body_line: int
    problems: list[Problem] = field(default_factory=list)


def split_front_matter(text: str, file: str) -> FrontMatterDocument:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return FrontMatterDocument(
            None, text, 1,
            [Problem(file, 1, "front-matter-missing", "the note has no YAML front matter",
                     "Start the file with a line '---', the note's fields (title, notebooks…), "
                     "and another line '---'.")],
        )
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            meta_text = "\n".join(lines[1:index])
            meta, problems = parse_yaml(meta_text, file, line_offset=1)
            body = "\n".join(lines[index + 1:])
            return FrontMatterDocument(meta, body, index + 2, problems)
    return FrontMatterDocument(
        None, "", 1,
        [Problem(file, 1, "front-matter-unclosed", "the front matter is never closed",
                 "Add a line '---' after the note's fields.")],
    )


def plain(value: Any) -> Any:
    """A parsed value as plain data (the loader's located dicts and lists, dates kept),
    for comparing what a file holds with what was meant."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
