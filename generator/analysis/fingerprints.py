"""Element fingerprints: what the last analysis of a note read, and what changed since.

Pure. A fingerprint is a hash of an element's kind and text, so an element moved
by an insertion above it keeps its fingerprint, and an edited one gets a new one.
The record is a small YAML file written by ``carnet analyse`` beside the note's
proposals (:data:`RECORD_NAME`); :func:`render_record` and :func:`parse_record` turn
it into text and back.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Any

import yaml

from generator.anchoring.elements import Element

RECORD_NAME = "analysed.yaml"
"""``proposals/extractions/<note>/analysed.yaml``: the fingerprints of the last analysis."""

PREVIEW = 48


def fingerprint(element: Element) -> str:
    return hashlib.sha256(f"{element.kind}\x00{element.text}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class AnalysedRecord:
    """The last analysis of a note.

    Attributes:
        note: the note's slug.
        notebook: the notebook whose guide and axes the analysis used ("" for none).
        proposal: id of the proposal it wrote.
        fingerprints: one per element read, in reading order.
    """

    note: str
    notebook: str
    proposal: str
    fingerprints: tuple[str, ...]


def changed_elements(elements: list[Element], record: AnalysedRecord | None) -> list[int]:
    """Indexes of the elements the last analysis did not read: new ones and edited ones.

    An element is read if its fingerprint was recorded, counted with multiplicity, so
    a paragraph repeated once more is new."""
    if record is None:
        return list(range(len(elements)))
    left = Counter(record.fingerprints)
    changed = []
    for index, element in enumerate(elements):
        key = fingerprint(element)
        if left[key] > 0:
            left[key] -= 1
        else:
            changed.append(index)
    return changed


def record_for(note: str, notebook: str, proposal: str, elements: list[Element],
               previous: AnalysedRecord | None, read: list[int]) -> AnalysedRecord:
    """The record after an analysis that read the elements ``read`` (context excluded):
    the current elements that were read now or at a previous analysis."""
    done = set(read)
    unread = set(changed_elements(elements, previous)) - done
    return AnalysedRecord(note, notebook, proposal,
                          tuple(fingerprint(e) for i, e in enumerate(elements) if i not in unread))


def render_record(record: AnalysedRecord, elements: list[Element]) -> str:
    """The record as YAML, each fingerprint with the start of its element's text as a
    comment so a reviewer sees what was read."""
    previews = {}
    for element in elements:
        text = " ".join(element.text.split())
        previews.setdefault(fingerprint(element), text if len(text) <= PREVIEW else text[:PREVIEW - 1] + "…")
    lines = [
        "# Written by 'carnet analyse': the elements of the note its last analysis read.",
        "# A re-analysis sends only the elements not listed here. Delete this file to analyse the whole note again.",
        f"note: {_scalar(record.note)}",
        f"notebook: {_scalar(record.notebook)}",
        f"proposal: {_scalar(record.proposal)}",
        "elements:" + ("" if record.fingerprints else " []"),
    ]
    for key in record.fingerprints:
        preview = previews.get(key, "")
        # quoted: a fingerprint of digits only would otherwise read back as a number
        lines.append(f'  - "{key}"' + (f"  # {preview}" if preview else ""))
    return "\n".join(lines) + "\n"


def _scalar(value: str) -> str:
    return yaml.safe_dump(value, allow_unicode=True, default_flow_style=True, width=10_000).strip().removesuffix(
        "\n...").strip()


class RecordError(ValueError):
    """The record file is not what ``carnet analyse`` writes."""


def parse_record(text: str) -> AnalysedRecord:
    """The record in ``text``. Every value is read as text (YAML's base loader, which
    builds nothing but strings, lists and mappings), so a fingerprint written unquoted
    by an earlier version reads back as written even when it looks like a number."""
    try:
        value: Any = yaml.load(text, Loader=yaml.BaseLoader)  # builds only str, list, dict
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise RecordError(f"{where}not valid YAML") from exc
    if not isinstance(value, dict):
        raise RecordError("line 1: expected the fields note, notebook, proposal, elements")
    elements = value.get("elements") or []
    if not isinstance(elements, list) or not all(isinstance(e, str) for e in elements):
        raise RecordError("'elements' must be a list of fingerprints")
    return AnalysedRecord(str(value.get("note", "")), str(value.get("notebook", "") or ""),
                          str(value.get("proposal", "") or ""), tuple(elements))
