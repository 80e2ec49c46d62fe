"""What one analysis request says: the prompt's variables and the answer's schema.

Pure. The model is asked for passages quoted verbatim at the grain it reads best
(a sentence, a paragraph); the fine grain comes from the mechanical resolution in
:mod:`generator.extracting.passages`, never from the instructions.
"""

from __future__ import annotations

from typing import Any

from generator.anchoring.elements import Element
from generator.corpus.model import Note, Notebook
from generator.extracting.chunks import Chunk
from generator.extracting.passages import MAX_PASSAGES

PROMPT = "analyse_passages"
"""``prompts/<language>/analyse_passages.j2``."""

DEFAULT_KINDS = ("fait", "proposition", "décision", "objection", "risque", "critère")

SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["passages"],
    "properties": {"passages": {"type": "array", "items": {
        "type": "object", "required": ["quote", "kind", "categories"],
        "properties": {
            "quote": {"type": "string"},
            "kind": {"type": "string"},
            "categories": {"type": "array", "items": {
                "type": "object", "required": ["axis", "category"],
                "properties": {"axis": {"type": "string"}, "category": {"type": "string"}}}},
        }}}},
}


def answer_constraint(kinds: tuple[str, ...], axes: list[tuple[str, list[str]]], max_items: int) -> dict[str, Any]:
    """What the server is asked to answer: at most ``max_items`` passages, their kind one of
    ``kinds`` and their categories those of the notebook's ``axes`` (key, categories) — the
    closed sets as enums, so a constrained server cannot invent "cuisine" (the answer is
    still checked item by item against them, whatever the server promised)."""
    import json

    constraint: dict[str, Any] = json.loads(json.dumps(SCHEMA))
    array = constraint["properties"]["passages"]
    array["maxItems"] = max_items
    item = array["items"]["properties"]
    if kinds:
        item["kind"]["enum"] = list(kinds)
    categories = item["categories"]["items"]["properties"]
    if axes:
        categories["axis"]["enum"] = [key for key, _values in axes]
        categories["category"]["enum"] = sorted({value for _key, values in axes for value in values})
    else:  # no notebook's axes to take categories from: none may be given
        item["categories"]["maxItems"] = 0
    return constraint


def prompt_context(note: Note, notebook: Notebook | None, elements: list[Element], chunk: Chunk,
                   kinds: tuple[str, ...], partial: bool) -> dict[str, Any]:
    """Variables of the prompt for ``chunk``: the notebook's guide and axes, and the
    text, segment by segment, context elements marked as such."""
    segments = []
    for segment in chunk.segments:
        blocks: list[dict[str, Any]] = []
        for index in segment.indexes:
            context = index not in segment.analysed
            if blocks and blocks[-1]["context"] == context:
                blocks[-1]["texts"].append(elements[index].text)
            else:
                blocks.append({"context": context, "texts": [elements[index].text]})
        segments.append({"blocks": blocks})
    return {
        "title": note.title,
        "date": note.date.isoformat() if note.date else "",
        "notebook": None if notebook is None else {
            "title": notebook.title, "guide": notebook.writing_guide.strip(),
            "axes": [{"key": a.key, "title": a.title, "categories": list(a.categories)} for a in notebook.axes]},
        "kinds": list(kinds),
        "segments": segments,
        "partial": partial,
    }


PASSAGE_TOKENS = 40
"""Tokens one passage of an answer takes besides its quote: its kind, categories, JSON."""
CHARACTERS_PER_TOKEN = 3
"""A cautious count of characters per token for French prose (tokenisers give 3 to 4)."""


def answer_budget(elements: list[Element], chunk: Chunk) -> int:
    """The ``max_tokens`` of one request: the answer quotes the analysed elements (at most
    all of their text) in at most :data:`~generator.extracting.passages.MAX_PASSAGES` passages."""
    from generator.llm.schema import answer_tokens  # the seam is loaded only when a model is called

    quoted = sum(len(elements[i].text) for i in chunk.analysed)
    return answer_tokens(MAX_PASSAGES, PASSAGE_TOKENS) + quoted // CHARACTERS_PER_TOKEN
