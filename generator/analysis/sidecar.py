"""Appending extractions to a note's ``.extractions.yaml``, as text.

Pure: the file's text in, the new text out. The existing text is kept byte for byte
(its comments, quoting and layout); new entries are appended at the end of the
``extractions`` list with the indentation its items already use, under one comment
line saying where they come from. The result is parsed back and checked before the
caller writes it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from generator.anchoring.fix import render_scalar
from generator.corpus.authors import ANALYSIS_AUTHOR

_KEY = re.compile(r"^extractions:[ \t]*(?P<flow>\[[ \t]*\])?[ \t]*(?:#.*)?$")
_ITEM = re.compile(r"^(?P<indent>[ \t]*)- ")


class SidecarError(ValueError):
    """The extractions file is laid out in a way text insertion cannot extend safely."""


@dataclass(frozen=True)
class NewExtraction:
    id: str
    quote: str
    kind: str
    date: dt.date
    prefix: str = ""
    occurrence: int | None = None


def _entry(item: NewExtraction, indent: str) -> list[str]:
    inner = indent + "  "
    quote = render_scalar(item.quote, len(inner))
    lines = [f"{indent}- id: {item.id}", f"{inner}quote: {quote}"]
    if item.prefix:
        lines.append(f"{inner}prefix: {json.dumps(item.prefix, ensure_ascii=False)}")
    if item.occurrence is not None:
        lines.append(f"{inner}occurrence: {item.occurrence}")
    lines += [f"{inner}kind: {json.dumps(item.kind, ensure_ascii=False)}",
              f"{inner}author: {ANALYSIS_AUTHOR}",
              f"{inner}date: {item.date.isoformat()}"]
    return lines


def append_extractions(text: str | None, items: list[NewExtraction], comment: str) -> str:
    """``text`` (LF line ends; None for a file that does not exist yet) with ``items``
    appended to its ``extractions`` list."""
    if text is None or not text.strip():
        head, indent = (text or "") + "extractions:\n", "  "
    else:
        lines = text.split("\n")
        key = next((n for n, line in enumerate(lines) if _KEY.match(line)), None)
        if key is None:
            if any(line.strip() and not line.lstrip().startswith("#") for line in lines):
                raise SidecarError("the file has no block 'extractions:' key at the start of a line "
                                   "(an inline list cannot be extended)")
            key = len(lines)
            lines.append("extractions:")
        elif _KEY.match(lines[key]).group("flow"):  # type: ignore[union-attr]
            lines[key] = lines[key].replace("[]", "", 1).rstrip()
        item = next((_ITEM.match(line) for line in lines[key + 1:] if _ITEM.match(line)), None)
        indent = item.group("indent") if item else "  "
        head = "\n".join(lines)
        if not head.endswith("\n"):
            head += "\n"
    body = [f"{indent}# {comment}"] if comment else []
    for item_ in items:
        body += _entry(item_, indent)
    return head + "\n".join(body) + "\n"


def check_appended(text: str, items: list[NewExtraction]) -> None:
    """Raise :class:`SidecarError` unless ``text`` parses and ends with ``items`` as
    written (id, quote, prefix, occurrence)."""
    try:
        value: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SidecarError(f"the extended file would not be valid YAML: {exc}") from exc
    entries = value.get("extractions") if isinstance(value, dict) else None
    if not isinstance(entries, list) or len(entries) < len(items):
        raise SidecarError("the extended file does not hold the new extractions")
    for entry, item in zip(entries[len(entries) - len(items):], items):
        if not isinstance(entry, dict) or (entry.get("id"), entry.get("quote"), entry.get("prefix", ""),
                                           entry.get("occurrence")) != (item.id, item.quote, item.prefix,
                                                                        item.occurrence):
            raise SidecarError(f"the new extraction {item.id!r} would not read back as written")
