"""What ``carnet apply`` would do with an extraction proposal, decided before anything
is written. Pure: the note's current elements, its existing anchors and the ids in use
in, one decision per passage out.

Each passage is anchored again against the note as it is now: it must land exactly,
as recorded (a passage the note no longer holds is rejected, never moved by a guess);
it must not land where an existing extraction or an earlier accepted passage lies.
Accepted passages get fresh ids, ``<note>-analyse-<n>``, never used anywhere in the
content.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from generator.anchoring.elements import Element
from generator.anchoring.resolve import AnchorStatus, Portion, project, resolve_quote
from generator.corpus.proposal import ProposedPassage

ID_INFIX = "analyse"


@dataclass(frozen=True)
class PassageDecision:
    """Attributes:
        index: 0-based position of the passage in the proposal.
        decision: ``accepted``, ``rejected`` or ``skipped``.
        id: the new extraction's id when accepted.
        portions: where it lands in the current note.
    """

    index: int
    passage: ProposedPassage
    decision: str
    reason: str = ""
    id: str = ""
    portions: tuple[Portion, ...] = ()

    def describe(self) -> str:
        head = f"[{self.index + 1}] {self.passage.kind}"
        if self.decision == "accepted":
            return f"{head}: accepted as {self.id}"
        return f"{head}: {self.decision}" + (f": {self.reason}" if self.reason else "")


def fresh_ids(note: str, taken: set[str]) -> Iterator[str]:
    number = 0
    while True:
        number += 1
        candidate = f"{note}-{ID_INFIX}-{number}"
        if candidate not in taken:
            yield candidate


def plan(note: str, elements: list[Element], existing: dict[tuple[Portion, ...], str], taken: set[str],
         passages: tuple[ProposedPassage, ...], only: set[int] | None) -> list[PassageDecision]:
    """One decision per passage (``only``: 0-based indexes to apply; None for all)."""
    projection = project(elements)
    ids = fresh_ids(note, set(taken))
    placed = dict(existing)
    decisions = []
    for index, passage in enumerate(passages):
        if only is not None and index not in only:
            decisions.append(PassageDecision(index, passage, "skipped", "not chosen (--only)"))
            continue
        anchor = resolve_quote(projection, elements, passage.quote, passage.prefix, "", passage.occurrence)
        if anchor.status is not AnchorStatus.ANCHORED:
            why = anchor.reason or "the note changed"
            decisions.append(PassageDecision(index, passage, "rejected",
                                             f"the note no longer holds this passage as recorded ({why}); "
                                             "run 'carnet analyse' again"))
            continue
        if anchor.portions in placed:
            decisions.append(PassageDecision(index, passage, "rejected",
                                             f"already an extraction: {placed[anchor.portions]}",
                                             portions=anchor.portions))
            continue
        new_id = next(ids)
        placed[anchor.portions] = new_id
        decisions.append(PassageDecision(index, passage, "accepted", id=new_id, portions=anchor.portions))
    return decisions
