"""Anchoring: a note's elements, and each extraction's quote resolved to portions.

Pure: a note in, an :class:`AnchoredNote` out. No files, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.anchoring.elements import Document, Element, segment
from generator.anchoring.exact import ExactSearch
from generator.anchoring.resolve import Anchor, AnchorStatus, Portion, project, relocation_budget, resolve_quote
from generator.corpus.model import Note
from generator.markup import MAX_NESTING, MAX_TABLE_CELLS, TableCut, parse_bounded
from generator.problems import Problem, Severity

__all__ = ["Anchor", "AnchorFacts", "AnchorStatus", "AnchoredNote", "Document", "Element", "Portion", "anchor_note"]


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


@dataclass(frozen=True)
class AnchorFacts:
    """What every build reads of a note's anchoring, kept apart from its parsed body: small,
    so a rebuild reads the facts of every note and the parsed body only of the notes whose
    outputs it makes again.

    Attributes:
        problems: the anchoring's problems (detached, relocated, nesting too deep).
        elements: how many elements the body has.
        landed: extraction id → its anchor's status and the indexes of the elements its
            portions touch (none for a detached one).
    """

    problems: tuple[Problem, ...]
    elements: int
    landed: dict[str, tuple[AnchorStatus, tuple[int, ...]]]

    @classmethod
    def of(cls, anchored: AnchoredNote, problems: list[Problem]) -> AnchorFacts:
        return cls(tuple(problems), len(anchored.document.elements),
                   {i: (a.status, tuple(sorted({p.element for p in a.portions}))) for i, a in anchored.anchors.items()})


def anchor_note(note: Note) -> tuple[AnchoredNote, list[Problem]]:
    parsed = parse_bounded(note.body)
    document = segment(parsed.tokens, note.body_line, transcript=note.media is not None, body=note.body)
    anchors: dict[str, Anchor] = {}
    problems: list[Problem] = nesting_problems(note, parsed.too_deep) + table_problems(note, parsed.tables_cut)
    if not note.extractions:  # the projection serves the quotes alone (0.5 s of 5,000 notes without any)
        return AnchoredNote(document, anchors), problems
    projection = project(document.elements)
    budget = relocation_budget(projection)  # one for the note: its quotes share it, in file order
    exact = ExactSearch.for_quotes(projection.text, len(note.extractions))
    for extraction in note.extractions:
        anchor = resolve_quote(projection, document.elements, extraction.quote,
                               extraction.prefix, extraction.suffix, extraction.occurrence, budget, exact)
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


def table_problems(note: Note, cuts: list[TableCut]) -> list[Problem]:
    """One warning per table cut at :data:`MAX_TABLE_CELLS`, at its first line read as text."""
    problems = []
    for cut in cuts:
        table_line = note.body_line + cut.start
        what = "this table" if cut.text_from == cut.start else \
            f"the table of line {table_line} (its rows from here on)"
        problems.append(Problem(
            note.source.file, note.body_line + cut.text_from, "table-too-large",
            f"the note's tables hold more than {MAX_TABLE_CELLS:,} cells: {what} is shown as plain text, "
            "not as a table (every row is given as many cells as its header, each costing memory to build)",
            "Split the table over several notes, or publish it as a CSV file under assets/ and link it.",
            Severity.WARNING))
    return problems


def nesting_problems(note: Note, too_deep: list[tuple[int, int]]) -> list[Problem]:
    """One error per range of the body the parser dropped for nesting (every view of the
    note would lack it: page, text, anchors, search), at its first line."""
    lines = note.body.split("\n")
    problems = []
    for start, end in too_deep:
        end = min(end, len(lines))
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1  # blank lines at the end are not content lost
        first = lines[start].strip()
        shown = first if len(first) <= 60 else first[:57] + "…"
        span = f"line {note.body_line + start}" if end == start + 1 else \
            f"lines {note.body_line + start} to {note.body_line + end - 1} ({end - start} lines)"
        problems.append(Problem(
            note.source.file, note.body_line + start, "nesting-too-deep",
            f"lists or quotes are nested {MAX_NESTING} levels deep here ({shown!r}): the markdown "
            f"parser reads no deeper, so {span} would be missing from the page, its text and its anchors",
            f"Flatten the list or the quote: the parser reads at most {(MAX_NESTING - 1) // 2} lists or {MAX_NESTING - 1} quotes inside "
            f"one another (a list and its item count as two of its {MAX_NESTING} levels, a quote as one)."))
    return problems
