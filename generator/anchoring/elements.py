"""A note's block elements, from markdown-it tokens.

An element is what a reader sees as one block: a heading, a paragraph, a list
item, a table row, a paragraph of a blockquote, a code block. Extractions are
anchored to portions *inside* elements; the text between elements (the
separator of the projection) belongs to none.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from markdown_it.token import Token

from generator.markup import leaf_text, parse
from generator.text import slugify

SEPARATOR = "\n\n"
"""Joins element texts in the note's text projection; belongs to no element."""

RESERVED_ID_PREFIXES = ("e-", "ext-", "com-", "entry-", "h-")
"""Ids the site uses for its own anchors; a heading's readable id never starts so."""

TURN = re.compile(r"^\[(?:(\d{1,2}):)?(\d{1,2}):(\d{2})\]\s+([^:\n]{1,80}?)\s*:\s")
"""A speaker turn as read: ``[00:14:07] Speaker : words`` (hours optional)."""

CELL_SEPARATOR = " "
"""Joins the cells of a table row inside the row's text."""


@dataclass(frozen=True, slots=True)
class Element:
    """One block of a note.

    Attributes:
        id: HTML id, ``e-`` + a hash of kind and text: stable while the text is unchanged
            (a repeated identical block gets ``-2``, ``-3``… in reading order).
        kind: ``heading``, ``paragraph``, ``list_item``, ``table_row``, ``blockquote``, ``code``
            or ``turn`` (a speaker turn of a transcript).
        text: plain text, as the projection and quotes see it.
        line: 1-based line in the note's file.
        level: heading level (2 for ``##``), 0 for other kinds.
        time: a turn's start, in seconds from the beginning of the note's media.
        speaker: a turn's speaker, as written.
    """

    id: str
    kind: str
    text: str
    line: int
    level: int = 0
    time: int | None = None
    speaker: str = ""

    def __reduce__(self) -> tuple[type[Element], tuple[str, str, str, int, int, int | None, str]]:
        # a plain tuple: a slotted dataclass pickles through a generic, several times slower, path
        return Element, (self.id, self.kind, self.text, self.line, self.level, self.time, self.speaker)


@dataclass
class Document:
    """A parsed note body and its elements.

    Attributes:
        parsed: markdown-it block tokens, or ``None`` once dropped: :attr:`tokens`
            parses ``body`` again when they are asked for.
        body: the markdown the tokens were parsed from (``None``: tokens kept for good).
        elements: the note's elements in reading order.
        inline_at: token index of an ``inline`` token → (element index, offset of its
            first character in the element's text).
        block_at: token index of a ``fence``/``code_block`` token → element index.
        id_at: token index of the opening tag that carries an element's ``id``.
        starts: offset of each element's text in ``projection``.
        heading_ids: element index of a heading → readable id (``budget``), so that
            ``note.md#budget`` links work as in any markdown editor.
        raw_anchors: the names of the note's raw ``<a name>``/``<a id>`` anchors, in reading order.
    """

    parsed: list[Token] | None
    body: str | None = None
    elements: list[Element] = field(default_factory=list)
    inline_at: dict[int, tuple[int, int]] = field(default_factory=dict)
    block_at: dict[int, int] = field(default_factory=dict)
    id_at: dict[int, str] = field(default_factory=dict)
    starts: list[int] = field(default_factory=list)
    heading_ids: dict[int, str] = field(default_factory=dict)
    raw_anchors: list[str] = field(default_factory=list)
    _by_id: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def projection(self) -> str:
        """The element texts joined by :data:`SEPARATOR` (the text annotation offsets count
        in): made when asked, not kept, as it repeats every element's text."""
        return SEPARATOR.join(element.text for element in self.elements)

    @property
    def tokens(self) -> list[Token]:
        """The block tokens (the renderer and the link collector read them), parsed again
        from ``body`` if they were dropped: parsing is pure, so they are the same tokens."""
        if self.parsed is None:
            assert self.body is not None, "tokens dropped from a document without its body"
            self.parsed = parse(self.body)
        return self.parsed

    def drop_tokens(self) -> None:
        """Let the tokens go (the largest part of a parsed note); the compact rest stays."""
        if self.body is not None:
            self.parsed = None

    def __getstate__(self) -> dict[str, object]:
        # pickled compact (cache on disk, worker processes): tokens cost more to unpickle than to parse
        state = dict(self.__dict__)
        if self.body is not None:
            state["parsed"] = None
        return state

    def index_of(self, element_id: str) -> int:
        if len(self._by_id) != len(self.elements):
            self._by_id = {e.id: index for index, e in enumerate(self.elements)}
        return self._by_id[element_id]

    def fragments(self) -> set[str]:
        """Every ``#fragment`` a link into this note may name."""
        return {e.id for e in self.elements} | set(self.heading_ids.values()) | set(self.raw_anchors)


def _inline_text(token: Token) -> str:
    return "".join(leaf_text(child) for child in token.children or [])


def parse_turn(text: str) -> tuple[int, str] | None:
    """``[00:14:07] Jonas : …`` (as read, emphasis gone) → (847, "Jonas"), else None."""
    match = TURN.match(text)
    if match is None:
        return None
    hours, minutes, seconds = (int(g) if g else 0 for g in match.group(1, 2, 3))
    if minutes >= 60 or seconds >= 60:
        return None
    return hours * 3600 + minutes * 60 + seconds, match.group(4).strip()


def segment(tokens: list[Token], body_line: int, transcript: bool = False, body: str | None = None) -> Document:
    """Split block tokens into elements. Pure: reads tokens, returns a new Document.

    With ``transcript`` (the note has media), a paragraph written
    ``[hh:mm:ss] **Speaker** : words`` is a speaker turn. With ``body`` (the markdown
    the tokens come from), the document may drop its tokens and parse them again."""
    doc = Document(tokens, body)
    stack: list[tuple[str, int]] = []  # open block tokens: (type, index)
    row: tuple[int, list[tuple[int, str]]] | None = None  # (tr index, [(inline index, text)])
    pending: list[tuple[str, str, int, int | None, list[tuple[int, int]], int | None, int]] = []
    carrying: set[int] = set()  # the tokens already given an element's id (a set: a long list looks each up)

    def add(kind: str, text: str, line_index: int | None, id_token: int | None,
            inlines: list[tuple[int, int]], block: int | None, level: int = 0) -> None:
        pending.append((kind, text, line_index if line_index is not None else 0, id_token, inlines, block, level))
        if id_token is not None:
            carrying.add(id_token)

    for index, token in enumerate(tokens):
        if token.nesting == 1:
            stack.append((token.type, index))
            if token.type == "tr_open":
                row = (index, [])
            continue
        if token.nesting == -1:
            if stack:
                stack.pop()
            if token.type == "tr_close" and row is not None:
                tr_index, cells = row
                inlines: list[tuple[int, int]] = []
                parts: list[str] = []
                offset = 0
                for inline_index, text in cells:
                    if parts:
                        offset += len(CELL_SEPARATOR)
                    inlines.append((inline_index, offset))
                    parts.append(text)
                    offset += len(text)
                tr_map = tokens[tr_index].map
                line = tr_map[0] if tr_map else None
                add("table_row", CELL_SEPARATOR.join(parts), line, tr_index, inlines, None)
                row = None
            continue
        if token.type == "inline":
            text = _inline_text(token)
            doc.raw_anchors += [child.meta["anchor"] for child in token.children or []
                                if child.type == "html_inline" and child.meta.get("anchor")]
            if row is not None:
                row[1].append((index, text))
                continue
            parent_type, parent_index = stack[-1] if stack else ("", index)
            kinds = [kind for kind, _ in stack]
            level = 0
            if parent_type == "heading_open":
                kind = "heading"
                level = int(tokens[parent_index].tag[1:])
            elif transcript and parent_type == "paragraph_open" and len(stack) == 1 and parse_turn(text):
                kind = "turn"
            elif "list_item_open" in kinds:
                kind = "list_item"
            elif "blockquote_open" in kinds:
                kind = "blockquote"
            else:
                kind = "paragraph"
            id_token: int | None = parent_index
            if tokens[parent_index].hidden:  # tight list: the <p> is not rendered
                li = next((i for k, i in reversed(stack) if k == "list_item_open"), None)
                id_token = li if li is not None and li not in carrying else None
            if not text.strip():
                continue
            line = token.map[0] if token.map else None
            add(kind, text, line, id_token, [(index, 0)], None, level)
        elif token.type in ("fence", "code_block"):
            line = token.map[0] if token.map else None
            add("code", token.content.rstrip("\n"), line, index, [], index)

    seen: dict[str, int] = {}
    offset = 0
    for kind, text, line_index, id_token, inlines, block, level in pending:
        digest = hashlib.sha1(f"{kind}\x00{text}".encode()).hexdigest()[:10]
        seen[digest] = seen.get(digest, 0) + 1
        element_id = f"e-{digest}" + (f"-{seen[digest]}" if seen[digest] > 1 else "")
        element_index = len(doc.elements)
        turn = parse_turn(text) if kind == "turn" else None
        doc.elements.append(Element(element_id, kind, text, body_line + line_index, level,
                                    turn[0] if turn else None, turn[1] if turn else ""))
        for inline_index, base in inlines:
            doc.inline_at[inline_index] = (element_index, base)
        if block is not None:
            doc.block_at[block] = element_index
        if id_token is not None:
            doc.id_at[id_token] = element_id
        if doc.starts:
            offset += len(SEPARATOR)
        doc.starts.append(offset)
        offset += len(text)
    headings = [index for index, element in enumerate(doc.elements) if element.kind == "heading"]
    for index, heading_id in zip(headings, heading_ids([doc.elements[i].text for i in headings]), strict=True):
        doc.heading_ids[index] = heading_id
    return doc


def heading_ids(texts: list[str]) -> list[str]:
    """The readable id of each heading, in reading order: its slug, numbered from its second
    occurrence on with the first number free (``titre``, ``titre-2``; a heading written
    ``Titre 2`` after two ``Titre`` gets ``titre-2-2``). These are public addresses: the
    numbering never changes. Each slug's search resumes where it last stopped (an id once
    taken stays taken), so n identical headings cost n steps, not n²/2."""
    taken: set[str] = set()
    next_number: dict[str, int] = {}
    ids = []
    for text in texts:
        slug = slugify(text)
        if slug.startswith(RESERVED_ID_PREFIXES):
            slug = "h-" + slug
        number = next_number.get(slug, 1)
        candidate = slug if number == 1 else f"{slug}-{number}"
        while candidate in taken:
            number += 1
            candidate = f"{slug}-{number}"
        taken.add(candidate)
        next_number[slug] = number + 1
        ids.append(candidate)
    return ids
