"""The model's passages → proposed extractions, by mechanical resolution (INV-6, INV-11).

Pure. The model quotes; the anchoring engine places. A quote is looked for, as the
engine normalises text, in the text that was sent: found once → its portions; found
several times → ambiguous; not found → reported (a near miss with its difference).
Nothing is placed by a guess. What is stored is the note's own text over the
resolved portions, with a prefix or an ``occurrence`` when the same words occur
elsewhere in the note, checked to land on exactly the same portions. Categories must
belong to the notebook's axes; others are refused and reported.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from generator.anchoring.elements import Element
from generator.anchoring.normalise import normalise_quote
from generator.anchoring.resolve import AnchorStatus, Portion, portions_text, project, resolve_quote, word_diff
from generator.corpus.model import Axis
from generator.extracting.chunks import Chunk

DEFAULT_KIND = "passage"
PREFIX_CHARACTERS = 32
"""Longest prefix recorded to tell a repeated passage apart (cut at a word boundary)."""


@dataclass(frozen=True)
class RefusedCategory:
    axis: str
    category: str
    reason: str


@dataclass(frozen=True)
class ProposedExtraction:
    """A passage the model pointed at, resolved and ready to be reviewed.

    Attributes:
        quote: the note's own text over ``portions`` (never the model's string).
        prefix, occurrence: set only when the quote's words occur elsewhere in the note.
        kind: the label the model chose.
        categories: axis key → categories of that axis, in the notebook's order.
        refused: categories the model suggested outside the notebook's axes.
        portions: where it lies, by element index of the note.
    """

    quote: str
    kind: str
    portions: tuple[Portion, ...]
    prefix: str = ""
    occurrence: int | None = None
    categories: dict[str, tuple[str, ...]] = field(default_factory=dict)
    refused: tuple[RefusedCategory, ...] = ()


MAX_PASSAGES = 50
"""Most passages one chunk's answer may hold; past it the answer is refused whole."""
MAX_CATEGORIES = 20
"""Most categories one passage may suggest; the others are refused."""
MAX_CATEGORY_CHARS = 200
"""Longest axis or category name checked; a longer one is refused unread."""


@dataclass(frozen=True)
class LeftOut:
    """A passage of the answer that is not proposed, and why.

    Attributes:
        quote: what the model wrote (its beginning, when it was over-long).
        reason: why it is not proposed.
        refused: the item broke the request's rules (a placeholder, a kind that was
            not asked for, an over-long quote), as opposed to a quote that cannot be
            placed; the command exits 3 when an answer has such an item.
    """

    quote: str
    reason: str
    refused: bool = False


def _count(haystack: str, needle: str) -> int:
    count, start = 0, haystack.find(needle)
    while start >= 0:
        count += 1
        start = haystack.find(needle, start + 1)
    return count


def locate(elements: list[Element], chunk: Chunk, quote: str) -> tuple[tuple[Portion, ...], str]:
    """Portions (note element indexes) of ``quote`` in the text sent by ``chunk``, or
    () and the reason it cannot be placed. Segments are matched one by one: a quote
    never runs from one segment into another, which the model saw apart."""
    needle = normalise_quote(quote)
    if not needle:
        return (), "the quote is empty"
    found: list[tuple[Portion, ...]] = []
    occurrences = 0
    near = []
    for segment in chunk.segments:
        sub = [elements[i] for i in segment.indexes]
        projection = project(sub)
        count = _count(projection.text, needle)
        occurrences += count
        if count == 1:
            anchor = resolve_quote(projection, sub, quote)
            found.append(tuple(Portion(segment.indexes[p.element], p.start, p.end) for p in anchor.portions))
        elif count == 0:
            anchor = resolve_quote(projection, sub, quote)
            if anchor.status is AnchorStatus.RELOCATED:
                near.append(anchor)
    if occurrences > 1:
        return (), f"ambiguous: the quote occurs {occurrences} times in the text sent; not placed by a guess"
    if occurrences == 1 and found and found[0]:
        return found[0], ""
    if len(near) == 1:
        return (), (f"not verbatim: the closest passage differs by {near[0].distance} edit(s) "
                    f"({word_diff(needle, near[0].found)}); a quote must be copied exactly")
    return (), "not found in the text sent (a paraphrase is never placed)"


def _prefix(elements: list[Element], first: Portion) -> str:
    """The text just before a passage: the end of its element before it, or of the
    previous element when it starts its element; cut at a word boundary."""
    text = elements[first.element].text[:first.start]
    if not text.strip() and first.element > 0:
        text = elements[first.element - 1].text
    text = " ".join(text.split())
    if len(text) > PREFIX_CHARACTERS:
        text = text[-PREFIX_CHARACTERS:]
        text = text[text.find(" ") + 1:] if " " in text else text
    return text


def place(elements: list[Element], portions: tuple[Portion, ...]) -> tuple[str, str, int | None] | None:
    """(quote, prefix, occurrence) that anchors to exactly ``portions`` in the whole
    note, or None when no such record exists. The quote is the note's own text."""
    quote = portions_text(elements, portions)
    whole = project(elements)
    anchor = resolve_quote(whole, elements, quote)
    if anchor.status is AnchorStatus.ANCHORED:
        return (quote, "", None) if anchor.portions == portions else None
    if anchor.status is not AnchorStatus.DETACHED or anchor.candidates < 2:
        return None
    prefix = _prefix(elements, portions[0])
    if prefix:
        with_prefix = resolve_quote(whole, elements, quote, prefix=prefix)
        if with_prefix.status is AnchorStatus.ANCHORED and with_prefix.portions == portions:
            return quote, prefix, None
    for occurrence in range(1, anchor.candidates + 1):
        nth = resolve_quote(whole, elements, quote, occurrence=occurrence)
        if nth.status is AnchorStatus.ANCHORED and nth.portions == portions:
            return quote, "", occurrence
    return None


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split()).casefold()


def check_categories(suggested: Iterable[dict[str, Any]], axes: tuple[Axis, ...],
                     notebook: str) -> tuple[dict[str, tuple[str, ...]], tuple[RefusedCategory, ...]]:
    """Keep the suggested categories that belong to the notebook's axes (INV-11), in
    the notebook's order; refuse the others with the reason. An axis may be named by
    its key or its title; a category is matched ignoring case and spacing, and
    recorded as the notebook writes it."""
    chosen: dict[str, set[str]] = {}
    refused: list[RefusedCategory] = []
    for item in suggested:
        axis_name, category = str(item.get("axis", "")).strip(), str(item.get("category", "")).strip()
        if not category:
            continue
        if not axes:
            refused.append(RefusedCategory(axis_name, category, f"notebook {notebook!r} has no axes" if notebook
                                           else "no notebook was given, so there are no axes to choose from"))
            continue
        if axis_name:
            axis = next((a for a in axes if _fold(a.key) == _fold(axis_name) or _fold(a.title) == _fold(axis_name)),
                        None)
            if axis is None:
                refused.append(RefusedCategory(axis_name, category, f"notebook {notebook!r} has no axis {axis_name!r} "
                                               f"(axes: {', '.join(a.key for a in axes)})"))
                continue
            candidates = [axis]
        else:
            candidates = [a for a in axes if any(_fold(c) == _fold(category) for c in a.categories)]
            if len(candidates) != 1:
                refused.append(RefusedCategory("", category, f"no axis named, and {len(candidates)} axes of notebook "
                                               f"{notebook!r} hold {category!r}"))
                continue
        axis = candidates[0]
        written = next((c for c in axis.categories if _fold(c) == _fold(category)), None)
        if written is None:
            refused.append(RefusedCategory(axis.key, category, f"{category!r} is not a category of axis "
                                           f"{axis.key!r} of notebook {notebook!r} ({', '.join(axis.categories)})"))
            continue
        chosen.setdefault(axis.key, set()).add(written)
    ordered = {a.key: tuple(c for c in a.categories if c in chosen[a.key]) for a in axes if a.key in chosen}
    return ordered, tuple(refused)


def _kind(said: str, kinds: tuple[str, ...]) -> str | None:
    """The requested kind ``said`` names (as the settings write it), or None."""
    folded = _fold(said)
    return next((k for k in kinds if _fold(k) == folded), None)


def _refusal(passage: dict[str, Any], kinds: tuple[str, ...], longest: int) -> tuple[str, str] | None:
    """(quote as shown, reason) when ``passage`` breaks the request's rules, else None.
    Checked before any search, so a huge quote costs nothing."""
    from generator.llm.schema import placeholder, too_long

    said = str(passage.get("quote", ""))
    if too_long(said, longest):
        return said[:200], f"refused: the quote is {too_long(said, longest)} (the note's text)"
    if placeholder(said):  # the prompt's example quote ("...") is punctuation only: refused as such
        return said, "refused: a placeholder, not a quote of the note"
    kind = " ".join(str(passage.get("kind", "")).split())
    if kinds and kind and _kind(kind, kinds) is None:
        shown_kind = kind if len(kind) <= 60 else kind[:59] + "…"
        return said, f"refused: the kind {shown_kind!r} was not asked for ({', '.join(kinds)})"
    return None


def _bounded_categories(suggested: list[dict[str, Any]]
                        ) -> tuple[list[dict[str, Any]], tuple[RefusedCategory, ...]]:
    """The suggestions worth checking, and those refused for their size: at most
    :data:`MAX_CATEGORIES` per passage, each name at most :data:`MAX_CATEGORY_CHARS`."""
    kept: list[dict[str, Any]] = []
    refused: list[RefusedCategory] = []
    for item in suggested:
        axis, category = str(item.get("axis", "")), str(item.get("category", ""))
        if len(axis) > MAX_CATEGORY_CHARS or len(category) > MAX_CATEGORY_CHARS:
            refused.append(RefusedCategory(axis[:60], category[:60], f"over {MAX_CATEGORY_CHARS} characters"))
        elif len(kept) == MAX_CATEGORIES:
            refused.append(RefusedCategory(axis, category, f"more than {MAX_CATEGORIES} categories for one passage"))
        else:
            kept.append(item)
    return kept, tuple(refused)


def resolve_answer(elements: list[Element], chunk: Chunk, passages: list[dict[str, Any]],
                   axes: tuple[Axis, ...], notebook: str, kinds: tuple[str, ...] = ()
                   ) -> tuple[list[ProposedExtraction], list[LeftOut]]:
    """The answer to one chunk → proposed extractions and what was left out.

    Each passage stands alone: a placeholder quote, a quote longer than the note, a
    kind outside ``kinds`` (when given) are left out as refused. An answer holding more
    than :data:`MAX_PASSAGES` passages is refused whole (an :class:`LLMAnswerError`)."""
    if len(passages) > MAX_PASSAGES:
        from generator.llm.errors import LLMAnswerError

        raise LLMAnswerError(f"the answer to one request holds {len(passages):,} passages, more than the "
                             f"{MAX_PASSAGES} accepted for a chunk: refused, nothing was recorded")
    proposed: list[ProposedExtraction] = []
    left_out: list[LeftOut] = []
    analysed = set(chunk.analysed)
    longest = sum(len(e.text) + 1 for e in elements)
    for passage in passages:
        refusal = _refusal(passage, kinds, longest)
        if refusal is not None:
            left_out.append(LeftOut(*refusal, refused=True))
            continue
        said = str(passage.get("quote", ""))
        portions, reason = locate(elements, chunk, said)
        if not portions:
            left_out.append(LeftOut(said, reason))
            continue
        if not any(p.element in analysed for p in portions):
            left_out.append(LeftOut(said, "lies only in context elements, read at an earlier analysis"))
            continue
        placed = place(elements, portions)
        if placed is None:
            left_out.append(LeftOut(said, "found in the text sent, but cannot be anchored to that one place in "
                                          "the whole note"))
            continue
        quote, prefix, occurrence = placed
        suggested, too_many = _bounded_categories(passage.get("categories") or [])
        categories, refused = check_categories(suggested, axes, notebook)
        refused += too_many
        said_kind = " ".join(str(passage.get("kind", "")).split())
        kind = (_kind(said_kind, kinds) if kinds and said_kind else said_kind) or DEFAULT_KIND
        proposed.append(ProposedExtraction(quote, kind, portions, prefix, occurrence, categories, refused))
    return proposed, left_out


def reading_order(portions: tuple[Portion, ...]) -> tuple[tuple[int, int, int], ...]:
    return tuple((p.element, p.start, p.end) for p in portions)


def drop_duplicates(proposed: list[ProposedExtraction], existing: dict[tuple[Portion, ...], str]
                    ) -> tuple[list[ProposedExtraction], list[LeftOut]]:
    """Proposals in reading order, without those landing exactly where an existing
    extraction (``existing``: portions → id) or an earlier proposal already lies."""
    kept: list[ProposedExtraction] = []
    left_out: list[LeftOut] = []
    seen: dict[tuple[Portion, ...], str] = {}
    for item in sorted(proposed, key=lambda p: (reading_order(p.portions), p.kind)):
        if item.portions in existing:
            left_out.append(LeftOut(item.quote, f"already an extraction: {existing[item.portions]}"))
        elif item.portions in seen:
            left_out.append(LeftOut(item.quote, "proposed twice: kept once"))
        else:
            seen[item.portions] = item.quote
            kept.append(item)
    return kept, left_out
