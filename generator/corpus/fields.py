"""Typed access to the fields of a YAML mapping, collecting problems with their lines."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from enum import Enum
from typing import Any, TypeVar

from generator.corpus.source import YamlList, YamlMap
from generator.problems import Problem, Severity
from generator.text import forbidden_shown

E = TypeVar("E", bound=Enum)

SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
ID_PATTERN = re.compile(r"^[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*$")

MAX_NAME_BYTES = 255
"""What one path component may hold (Linux, macOS and most file systems): past it a write
fails with "File name too long"."""

MAX_SLUG = 200
"""Characters a slug, an alias or an axis key may have (ASCII: one byte each). Each names
files: the longest is 30 bytes longer (``.<slug>.extractions.yaml.tmp-<pid>``, while a
command writes a note's sidecar; on the site ``notes/<slug>.annotations.jsonld``), so
200 stays within :data:`MAX_NAME_BYTES` with room for a new kind of sibling."""


def slug_too_long(slug: str, what: str) -> str | None:
    """Why ``slug`` (the slug of a ``what``) is too long, or None."""
    if len(slug) <= MAX_SLUG:
        return None
    return (f"the {what} {slug[:24] + '…'!r} is {len(slug)} characters long, more than the {MAX_SLUG} a name "
            f"may have: it names files of the site, and a file name holds at most {MAX_NAME_BYTES} bytes")


_TYPE_NAMES = {str: "a string", int: "an integer", bool: "a boolean", list: "a list", dict: "a mapping"}


class Fields:
    """Reads fields of one mapping; every problem is appended to ``problems``.

    Attributes:
        data: the mapping (an empty one stands in when the value was not a mapping).
        file: content-relative path, for problems.
        what: how to name the object in messages (``notebook 'cvl'``).
    """

    def __init__(self, data: Any, file: str, what: str, problems: list[Problem], line: int = 1) -> None:
        self.file = file
        self.what = what
        self.problems = problems
        if isinstance(data, YamlMap):
            self.data = data
        else:
            if data is not None:
                problems.append(Problem(
                    file, getattr(data, "line", line) or line, "wrong-type",
                    f"{what} must be a mapping of fields, not {_describe(data)}",
                    "Write it as 'field: value' lines.",
                ))
            self.data = YamlMap()
            self.data.line = line
            self.data.key_lines = {}
            self.data.value_spans = {}

    @property
    def line(self) -> int:
        return self.data.line

    def line_of(self, key: str) -> int:
        return self.data.line_of(key)

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def error(self, key: str | None, code: str, message: str, hint: str = "",
              severity: Severity = Severity.ERROR, line: int | None = None) -> None:
        where = line if line is not None else (self.line_of(key) if key else self.line)
        self.problems.append(Problem(self.file, where, code, message, hint, severity))

    def _missing(self, key: str, hint: str) -> None:
        self.error(None, "missing-field", f"{self.what} has no {key!r}", hint or f"Add '{key}: …'.")

    def _wrong(self, key: str, expected: str, value: Any) -> None:
        self.error(key, "wrong-type", f"{key!r} of {self.what} must be {expected}, not {_describe(value)}",
                   f"Write '{key}' as {expected}.")

    def text(self, key: str, default: str | None = None, hint: str = "") -> str:
        """A string field; numbers are refused rather than silently converted."""
        if not self.has(key):
            if default is None:
                self._missing(key, hint)
                return ""
            return default
        value = self.data[key]
        if not isinstance(value, str):
            self._wrong(key, "a string", value)
            return default or ""
        return forbidden_shown(value.strip())

    def flag(self, key: str, default: bool) -> bool:
        if not self.has(key):
            return default
        value = self.data[key]
        if not isinstance(value, bool):
            self._wrong(key, "true or false", value)
            return default
        return value

    def integer(self, key: str) -> int | None:
        if not self.has(key):
            return None
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self._wrong(key, "a positive integer", value)
            return None
        return value

    def date(self, key: str, required: bool = False) -> dt.date | None:
        if not self.has(key):
            if required:
                self._missing(key, f"Add '{key}: YYYY-MM-DD'.")
            return None
        value = self.data[key]
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str):
            try:
                return dt.date.fromisoformat(value.strip())
            except ValueError:
                pass
        self.error(key, "wrong-type", f"{key!r} of {self.what} is not a date: {value!r}",
                   "Write dates as YYYY-MM-DD.")
        return None

    def choice(self, key: str, enum: type[E], default: E) -> E:
        if not self.has(key):
            return default
        value = self.data[key]
        for member in enum:
            if value == member.value:
                return member
        allowed = ", ".join(str(m.value) for m in enum)
        self.error(key, "invalid-value", f"{key!r} of {self.what} is {value!r}", f"Use one of: {allowed}.")
        return default

    def items(self, key: str, hint: str) -> YamlList:
        """The list of records under ``key`` (empty when absent); anything else is reported,
        with ``hint`` saying what to write."""
        raw = self.data.get(key)
        if isinstance(raw, YamlList):
            return raw
        if raw is not None:
            self.error(key, "wrong-type", f"{key!r} of {self.what} must be a list", hint)
        empty = YamlList()
        empty.line = self.line_of(key)
        return empty

    def text_list(self, key: str) -> YamlList:
        """A list of strings; a single string is accepted as a one-item list."""
        if not self.has(key):
            empty = YamlList()
            empty.line, empty.item_lines = self.line_of(key), []
            return empty
        value = self.data[key]
        if isinstance(value, str):
            single = YamlList([forbidden_shown(value.strip())])
            single.line, single.item_lines = self.line_of(key), [self.line_of(key)]
            return single
        if not isinstance(value, YamlList):
            self._wrong(key, "a list of strings", value)
            empty = YamlList()
            empty.line, empty.item_lines = self.line_of(key), []
            return empty
        result = YamlList()
        result.line, result.item_lines = value.line, []
        for index, item in enumerate(value):
            if isinstance(item, str) and item.strip():
                result.append(forbidden_shown(item.strip()))
                result.item_lines.append(value.line_of(index))
            else:
                self.error(key, "wrong-type",
                           f"item {index + 1} of {key!r} in {self.what} must be a non-empty string, "
                           f"not {_describe(item)}", "Write each item as a string.",
                           line=value.line_of(index))
        return result

    def check_known(self, known: Iterable[str]) -> None:
        """Warn about keys nobody reads: usually a typo that would otherwise be lost."""
        known_set = set(known)
        for key in self.data:
            if key not in known_set:
                self.error(str(key), "unknown-field", f"{self.what} has an unknown field {key!r}",
                           f"Known fields: {', '.join(sorted(known_set))}. Fix the spelling or remove it.",
                           Severity.WARNING)


def _describe(value: Any) -> str:
    if value is None:
        return "nothing"
    for kind, name in _TYPE_NAMES.items():
        if isinstance(value, bool) and kind is not bool:
            continue
        if isinstance(value, kind):
            return f"{name} ({_short(value)})" if kind in (str, int) else name
    return type(value).__name__


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"
