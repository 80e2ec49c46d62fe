"""Element fingerprints: what the last analysis of a note read, and what changed since.

Pure. A fingerprint is a hash of an element's kind and text, so an element moved
by an insertion above it keeps its fingerprint, and an edited one gets a new one.
The record is a small YAML file written by ``carnet analyse`` beside the note's
proposals (:data:`generator.corpus.analysed.RECORD_NAME`); :func:`render_record` turns it
into text, :func:`generator.corpus.analysed.parse_record` back.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import yaml

from generator.anchoring.elements import Element
from generator.corpus.analysed import AnalysedRecord

PREVIEW = 48


def fingerprint(element: Element) -> str:
    return hashlib.sha256(f"{element.kind}\x00{element.text}".encode()).hexdigest()[:16]


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
    previews: dict[str, str] = {}
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
