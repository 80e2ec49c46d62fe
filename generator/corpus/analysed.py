"""The analysis record, ``proposals/extractions/<note>/analysed.yaml``: the fingerprints of
the elements the last ``carnet analyse`` of a note read (computed and written by
:mod:`generator.extracting.fingerprints`; read back here, for the loader and for every
write's read-back check)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

RECORD_NAME = "analysed.yaml"
"""``proposals/extractions/<note>/analysed.yaml``: the fingerprints of the last analysis."""


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
