"""What an analysis writes and says: the extraction proposal and the measure of what
was sent. Pure: data in, a plain mapping out (the command dumps it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.anchoring.elements import Element
from generator.extracting.chunks import Chunk
from generator.extracting.passages import LeftOut, ProposedExtraction

KIND = "extractions"


@dataclass(frozen=True)
class Sent:
    """How much of a note one analysis sent.

    Attributes:
        elements, characters: the elements analysed and their characters.
        context_elements, context_characters: unchanged neighbours sent for context.
        note_elements, note_characters: the whole note.
        chunks: requests made.
    """

    elements: int
    characters: int
    context_elements: int
    context_characters: int
    note_elements: int
    note_characters: int
    chunks: int

    @property
    def share(self) -> float:
        """Share of the note's characters analysed, in percent (one decimal)."""
        return round(100 * self.characters / self.note_characters, 1) if self.note_characters else 0.0

    def describe(self) -> str:
        context = (f", with {self.context_elements} context element(s) ({self.context_characters} characters)"
                   if self.context_elements else "")
        return (f"sent {self.elements} of {self.note_elements} element(s), {self.characters} of "
                f"{self.note_characters} characters ({self.share:g} % of the note){context}, "
                f"in {self.chunks} request(s)")

    def as_record(self) -> dict[str, Any]:
        return {"elements": self.elements, "characters": self.characters, "share_percent": self.share,
                "context_elements": self.context_elements, "context_characters": self.context_characters,
                "note_elements": self.note_elements, "note_characters": self.note_characters,
                "requests": self.chunks}


def measure(elements: list[Element], chunks: list[Chunk]) -> Sent:
    analysed = [i for c in chunks for i in c.analysed]
    context = [i for c in chunks for i in c.context]
    return Sent(len(analysed), sum(len(elements[i].text) for i in analysed), len(context),
                sum(len(elements[i].text) for i in context), len(elements), sum(len(e.text) for e in elements),
                len(chunks))


USAGE_ORDER = ("prompt_tokens", "completion_tokens", "total_tokens")


def add_usage(total: dict[str, int], usage: dict[str, int]) -> dict[str, int]:
    """Token counts summed key by key (as the server reported them; none estimated),
    in a fixed order."""
    summed = dict(total)
    for key, value in usage.items():
        summed[key] = summed.get(key, 0) + value
    order = {key: number for number, key in enumerate(USAGE_ORDER)}
    return dict(sorted(summed.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def passage_record(item: ProposedExtraction) -> dict[str, Any]:
    record: dict[str, Any] = {"quote": item.quote}
    if item.prefix:
        record["prefix"] = item.prefix
    if item.occurrence is not None:
        record["occurrence"] = item.occurrence
    record["kind"] = item.kind
    if item.categories:
        record["categories"] = {axis: list(values) for axis, values in item.categories.items()}
    if item.refused:
        record["refused_categories"] = [{"axis": r.axis, "category": r.category, "reason": r.reason}
                                        for r in item.refused]
    return record


def proposal_record(proposal_id: str, note: str, notebook: str, note_sha256: str, provenance: dict[str, Any],
                    sent: Sent, proposed: list[ProposedExtraction], left_out: list[LeftOut]) -> dict[str, Any]:
    """The proposal file's fields, in the order a reviewer reads them."""
    return {
        "id": proposal_id,
        "kind": KIND,
        "target": note,
        "notebook": notebook,
        "note_sha256": note_sha256,
        "provenance": provenance,
        "sent": sent.as_record(),
        "passages": [passage_record(item) for item in proposed],
        "left_out": [{"quote": item.quote, "reason": item.reason} for item in left_out],
    }
