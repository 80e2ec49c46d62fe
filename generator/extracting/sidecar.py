"""Appending extractions to a note's ``.extractions.yaml``, as text.

Pure: the file's text in, the new text out. The existing text is kept byte for byte
(its comments, quoting and layout); new entries are appended at the end of the
``extractions`` list in the layout its items already use, under one comment line
saying where they come from (:func:`generator.yamledit.append_items`). The write seam
(:mod:`generator.writes`) parses the result back before the caller's write happens.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from generator.anchoring.fix import render_scalar
from generator.corpus.authors import ANALYSIS_AUTHOR
from generator.yamledit import EditError, append_items

SidecarError = EditError
"""The extractions file is laid out in a way text insertion cannot extend safely."""


@dataclass(frozen=True)
class NewExtraction:
    id: str
    quote: str
    kind: str
    date: dt.date
    prefix: str = ""
    occurrence: int | None = None

    def as_record(self) -> dict[str, Any]:
        """The extraction as the file will hold it (what the write must read back as)."""
        record: dict[str, Any] = {"id": self.id, "quote": self.quote}
        if self.prefix:
            record["prefix"] = self.prefix
        if self.occurrence is not None:
            record["occurrence"] = self.occurrence
        record.update(kind=self.kind, author=ANALYSIS_AUTHOR, date=self.date)
        return record


def render_entry(record: dict[str, Any], indent: str) -> list[str]:
    """A block item, the quote as a person would write it (a literal block when it
    spans lines), the other values quoted where they need it."""
    inner = indent + "  "
    lines = [f"{indent}- id: {record['id']}", f"{inner}quote: {render_scalar(record['quote'], len(inner))}"]
    if "prefix" in record:
        lines.append(f"{inner}prefix: {json.dumps(record['prefix'], ensure_ascii=False)}")
    if "occurrence" in record:
        lines.append(f"{inner}occurrence: {record['occurrence']}")
    lines += [f"{inner}kind: {json.dumps(record['kind'], ensure_ascii=False)}",
              f"{inner}author: {record['author']}",
              f"{inner}date: {record['date'].isoformat()}"]
    return lines


def append_extractions(text: str | None, items: list[NewExtraction], comment: str) -> str:
    """``text`` (None for a file that does not exist yet) with ``items`` appended to its
    ``extractions`` list, in the file's own layout (block items at their indentation,
    or flow items inside its ``[…]``), under one ``# comment`` line."""
    return append_items(text or "", "extractions", [item.as_record() for item in items], comment, render=render_entry)
