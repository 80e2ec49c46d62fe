"""Anchoring: a note's elements, and each extraction's quote resolved to portions.

Pure: a note in, an :class:`AnchoredNote` out. No files, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.anchoring.elements import Document, Element, segment
from generator.anchoring.resolve import Anchor, AnchorStatus, Portion, project, relocation_budget, resolve_quote
from generator.corpus.model import Note
from generator.markup import parse
from generator.problems import Problem, Severity

__all__ = ["AnchoredNote", "Anchor", "AnchorStatus", "Document", "Element", "Portion", "anchor_note"]


@dataclass
class AnchoredNote:
    """A note's parsed body and where each of its extractions landed.

    Attributes:
        document: tokens and elements of the body.
        anchors: extraction id → anchor (masked extractions included: the publication
            stage drops them).
    """

    document: Document
    anchors: dict[str, Anchor]


def anchor_note(note: Note) -> tuple[AnchoredNote, list[Problem]]:
    document = segment(parse(note.body), note.body_line, transcript=note.media is not None)
    projection = project(document.elements)
    budget = relocation_budget(projection)  # one for the note: its quotes share it, in file order
    anchors: dict[str, Anchor] = {}
    problems: list[Problem] = []
    for extraction in note.extractions:
        anchor = resolve_quote(projection, document.elements, extraction.quote,
                               extraction.prefix, extraction.suffix, extraction.occurrence, budget)
        anchors[extraction.id] = anchor
        if anchor.status is AnchorStatus.DETACHED:
            problems.append(Problem(
                extraction.source.file, extraction.source.line, "detached-anchor",
                f"extraction {extraction.id!r} is detached: {anchor.reason}",
                "Correct the quote so it matches the note's text exactly once (it is kept, listed "
                "as detached, and never placed by a guess).", Severity.NOTICE))
        elif anchor.status is AnchorStatus.RELOCATED:
            problems.append(Problem(
                extraction.source.file, extraction.source.line, "relocated-anchor",
                f"extraction {extraction.id!r} was relocated: {anchor.reason}",
                "Check the passage, then run 'carnet check --fix-anchors --write' to record the note's "
                "current text as the quote.", Severity.NOTICE))
    return AnchoredNote(document, anchors), problems
