"""The notes' evidence facts a build decides (each published note's coverage, its extractions'
anchor statuses), taken from the last build of the process for the notes it made them of."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from generator.anchoring import AnchorFacts, AnchorStatus
from generator.corpus.model import Note
from generator.corpus.publication import Publication
from generator.engine import reads
from generator.synthesis.coverage import Coverage, coverage_of


@dataclass(frozen=True)
class NoteEvidence:
    """Each published note's coverage and its extractions' anchor statuses, with what they
    were made of (its published note, its anchoring's facts): a build of the same process
    takes those of a note whose both are the same objects (:func:`note_evidence`)."""

    notes: Mapping[str, Note]
    facts: Mapping[str, AnchorFacts]
    coverage: dict[str, Coverage]
    statuses: dict[str, dict[str, AnchorStatus]]
    merged: dict[str, AnchorStatus]
    """Every published extraction id → its status (:attr:`SiteModel.statuses`): the notes'
    statuses in slug order, an id given twice keeping its first place and its last note's status."""


def note_evidence(publication: Publication, facts: Mapping[str, AnchorFacts],
                  last: NoteEvidence | None = None) -> NoteEvidence:
    """Every published note's coverage and statuses (:class:`NoteEvidence`), in slug order;
    those of ``last`` taken for the notes it made them of (an edit at 50,000 extractions:
    one note's made, not every one's)."""
    coverage: dict[str, Coverage] = {}
    statuses: dict[str, dict[str, AnchorStatus]] = {}
    notes = publication.notes
    for slug in sorted(notes):
        if slug not in facts:
            continue
        note, landed = notes[slug], facts[slug]
        if last is not None and last.notes.get(slug) is note and last.facts.get(slug) is landed:
            coverage[slug], statuses[slug] = last.coverage[slug], last.statuses[slug]
        else:
            coverage[slug] = coverage_of(landed, [e.id for e in note.extractions])
            statuses[slug] = {e.id: landed.landed[e.id][0] for e in note.extractions}
    # the last build's merged statuses while every note's are the same (50,000 ids not merged again an edit)
    merged = last.merged if last is not None and statuses.keys() == last.statuses.keys() and all(
        of_note is last.statuses[slug] or of_note == last.statuses[slug] for slug, of_note in statuses.items()) \
        else _merged(statuses)
    made = NoteEvidence(dict(notes), dict(facts), coverage, statuses, merged)  # as they are now: a patch changes its own
    if last is not None and reads.checking() and (made.coverage, made.statuses, made.merged) != (
            (full := note_evidence(publication, facts)).coverage, full.statuses, full.merged):
        raise reads.StaleOutputs("the notes' evidence taken from the last build's differs from the one made "
                                 "again: generator/engine/evidence.py:note_evidence")
    return made


def _merged(statuses: Mapping[str, Mapping[str, AnchorStatus]]) -> dict[str, AnchorStatus]:
    merged: dict[str, AnchorStatus] = {}
    for of_note in statuses.values():  # an id given twice keeps its first place, its last note's status
        merged.update(of_note)
    return merged
