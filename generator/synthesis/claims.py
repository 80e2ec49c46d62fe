"""Claims and their citation markers, read from an article's tokens (DESIGN §3).

A claim is the text of one paragraph or list item from the previous marker group (or
the start of the block) up to its own marker group; adjacent markers form one group.
Text after the last group, or a block with no marker, is an *unsourced* claim when it
holds a sentence of at least five words. Pure: tokens in, claims out.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from markdown_it.token import Token

from generator.kinds import WikiKind
from generator.markup import CITATION_KINDS, leaf_text, parse_wiki_target

MIN_WORDS = 5
_SENTENCE = re.compile(r"[^.!?…]+[.!?…]*")
_WORD = re.compile(r"\w+(?:['’-]\w+)*", re.UNICODE)


@dataclass(frozen=True)
class Marker:
    """One ``[[ext:ID]]``, ``[[com:ID]]`` or (in a saved answer) ``[[quote:ID]]`` in the body.

    Attributes:
        kind: ``ext``, ``com`` or ``quote`` (never ``note``).
        key: the extraction, comment or answer quote id.
        inline: index of the inline token holding it; ``child``: its index among the children.
        line: file line.
    """

    kind: WikiKind
    key: str
    inline: int
    child: int
    line: int


@dataclass(frozen=True)
class Claim:
    """Attributes:
        id: ``claim-`` + a hash of the article and the text: stable while the text is.
        section: the H2 it sits under ("" for the lead); ``section_index``: 0 for the lead.
        rank: order of the claim in the article (1-based).
        text: the claim's text, markers removed, NFC, white space folded.
        markers: its marker group (empty: unsourced).
        line: file line of its block.
        inline: index of the inline token it is read from (an unsourced claim ends it:
            its mark goes there).
    """

    id: str
    section: str
    section_index: int
    rank: int
    text: str
    markers: tuple[Marker, ...]
    line: int
    inline: int = -1

    @property
    def sourced(self) -> bool:
        return bool(self.markers)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def claim_text(text: str) -> str:
    """A claim's text as read from ``text``: NFC, white space folded, and without the
    punctuation that, right after a marker group, ends the previous claim."""
    return _fold(text).lstrip(".,;:!?…) ")


def is_statement(text: str) -> bool:
    """Holds a sentence of at least :data:`MIN_WORDS` words."""
    return any(len(_WORD.findall(sentence)) >= MIN_WORDS for sentence in _SENTENCE.findall(text))


def _is_citation(token: Token) -> tuple[WikiKind, str] | None:
    if token.type != "wikilink":
        return None
    target = parse_wiki_target(token.meta["target"])
    return (target.kind, target.key) if target.kind in CITATION_KINDS else None


def read_claims(article: str, tokens: list[Token], body_line: int) -> list[Claim]:
    claims: list[Claim] = []
    seen: dict[str, int] = {}
    section, section_index = "", 0
    in_heading = in_table = False
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            in_heading = True
        elif token.type == "heading_close":
            in_heading = False
        elif token.type == "table_open":
            in_table = True
        elif token.type == "table_close":
            in_table = False
        if token.type != "inline":
            continue
        if in_heading:
            if tokens[index - 1].tag == "h2":
                section = _fold("".join(leaf_text(c) for c in token.children or []))
                section_index += 1
            continue
        if in_table:
            continue
        line = body_line + (token.map[0] if token.map else 0)

        def emit(text: str, markers: list[Marker]) -> None:
            # the punctuation right after a marker group ends the previous claim
            folded = claim_text(text)
            if not markers and not is_statement(folded):
                return
            if not folded and not markers:
                return
            digest = hashlib.sha1(f"{article}\x00{folded}".encode()).hexdigest()[:8]
            seen[digest] = seen.get(digest, 0) + 1
            claim_id = f"claim-{digest}" + (f"-{seen[digest]}" if seen[digest] > 1 else "")
            # called only within this token's iteration: the loop variables are the current ones
            claims.append(Claim(claim_id, section, section_index, len(claims) + 1,  # noqa: B023
                                folded, tuple(markers), line, index))  # noqa: B023

        text_parts: list[str] = []
        group: list[Marker] = []
        pending_space = ""
        for child_index, child in enumerate(token.children or []):
            cited = _is_citation(child)
            if cited:
                group.append(Marker(cited[0], cited[1], index, child_index, line))
                pending_space = ""
                continue
            piece = leaf_text(child)
            if group and not piece.strip():
                pending_space += piece  # white space between markers keeps the group open
                continue
            if group:
                emit("".join(text_parts), group)
                text_parts, group = [], []
            text_parts.append(pending_space + piece)
            pending_space = ""
        if group:
            emit("".join(text_parts), group)
        elif text_parts:
            emit("".join(text_parts), [])
    return claims


def quoted_fragments(text: str) -> list[str]:
    """Fragments a claim quotes: «…», “…” or "…" (at least two words)."""
    found = re.findall(r"«\s*([^»]+?)\s*»|“([^”]+)”|\"([^\"]+)\"", text)
    fragments = [next(part for part in groups if part) for groups in found]
    return [f for f in fragments if len(f.split()) >= 2]


STOPWORDS = frozenset(["a", "à", "au", "aux", "avec", "ce", "ces", "cet", "cette", "dans", "de", "des", "du", "elle", "en", "et", "est", "été", "être", "il", "ils", "je", "la", "le", "les", "leur", "lui", "mais", "me", "même", "mes", "moi", "mon", "ne", "ni", "nos", "notre", "nous", "on", "ou", "où", "par", "pas", "pour", "qu", "que", "qui", "sa", "se", "ses", "si", "son", "sont", "sur", "ta", "te", "tes", "toi", "ton", "tu", "un", "une", "vos", "votre", "vous", "y", "ça", "sera", "seront", "sera", "ont", "avait", "avoir", "fait", "faire", "plus", "très", "tout", "tous", "toute", "toutes", "the", "of", "and", "to", "in", "is", "are", "was", "were", "be", "been", "for", "on", "with", "as", "by", "at", "an", "or", "not"])


def content_words(text: str) -> set[str]:
    """Lower-cased words of three letters or more that are not function words."""
    return {w for w in (m.lower() for m in _WORD.findall(unicodedata.normalize("NFC", text)))
            if len(w) >= 3 and w not in STOPWORDS}
