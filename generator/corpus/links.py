"""Links written in note bodies: ``[[slug]]``, ``[[ext:ID]]``, relative markdown links,
images. Collected from tokens, resolved against the corpus, broken ones reported.
Pure: tokens and corpus in, targets and problems out."""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from markdown_it.token import Token

from generator.corpus.model import Corpus, Note, NoteType
from generator.markup import parse_wiki_target
from generator.problems import Problem, Severity


@dataclass(frozen=True)
class LinkTarget:
    """What one link of a note points to.

    Attributes:
        kind: ``note``, ``extraction``, ``comment``, ``asset``, ``external``, ``fragment``
            or ``broken``.
        key: note slug, extraction or comment id, asset path (content-relative), URL or
            fragment.
        note: for extractions and comments, the slug of the note holding them.
        fragment: a ``#…`` to keep on a note link.
    """

    kind: str
    key: str
    note: str = ""
    fragment: str = ""


@dataclass(frozen=True)
class LinkUse:
    """One occurrence of a link in a note: raw target as written, line, whether an image."""

    raw: str
    line: int
    image: bool = False
    wiki: bool = False


def collect_links(tokens: list[Token], body_line: int) -> list[LinkUse]:
    uses: list[LinkUse] = []
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        line = body_line + (token.map[0] if token.map else 0)
        for child in token.children:
            if child.type == "link_open":
                uses.append(LinkUse(str(child.attrGet("href") or ""), line))
            elif child.type == "image":
                uses.append(LinkUse(str(child.attrGet("src") or ""), line, image=True))
            elif child.type == "wikilink":
                uses.append(LinkUse(child.meta["target"], line, wiki=True))
    return uses


@dataclass
class CorpusIndex:
    """Lookups links need: note by content path, owner of each extraction and comment."""

    note_by_path: dict[str, str]
    extraction_note: dict[str, str]
    comment_note: dict[str, str]

    @classmethod
    def of(cls, corpus: Corpus) -> CorpusIndex:
        extraction_note: dict[str, str] = {}
        comment_note: dict[str, str] = {}
        for note in corpus.notes.values():
            for extraction in note.extractions:
                extraction_note.setdefault(extraction.id, note.slug)
                for comment in extraction.comments:
                    comment_note.setdefault(comment.id, note.slug)
        return cls({n.source.file: n.slug for n in corpus.notes.values()}, extraction_note, comment_note)


def resolve_link(use: LinkUse, note: Note, corpus: Corpus, index: CorpusIndex,
                 fragments: Callable[[str], set[str]]) -> tuple[LinkTarget, Problem | None]:
    """Resolve one link; ``fragments(slug)`` gives the ``#ids`` a note's page holds."""
    target, problem = _resolve(use, note, corpus, index)
    if problem is None and target.kind == "note" and target.fragment and \
            target.fragment not in fragments(target.key):
        return target, Problem(
            note.source.file, use.line, "broken-link",
            f"note {target.key!r} has no section #{target.fragment}",
            "Link to a heading of that note by its readable id (lowercase, hyphens: '## Le budget' → "
            "#le-budget), or drop the fragment.", Severity.WARNING)
    return target, problem


def _resolve(use: LinkUse, note: Note, corpus: Corpus, index: CorpusIndex) -> tuple[LinkTarget, Problem | None]:
    file = note.source.file
    if use.wiki:
        target = parse_wiki_target(use.raw)
        if target.kind == "note":
            if target.key in corpus.notes:
                return LinkTarget("note", target.key, fragment=target.fragment), None
            renamed = next((n.slug for n in corpus.notes.values() if target.key in n.aliases), None)
            if renamed:  # a former slug: the link follows the note
                return LinkTarget("note", renamed, fragment=target.fragment), None
            return LinkTarget("broken", use.raw), Problem(
                file, use.line, "broken-link", f"[[{use.raw}]] names no note",
                "Fix the slug (the note's file name without .md).", Severity.WARNING)
        if target.kind == "quote":  # a saved answer's own quote: its file says where it lies
            answer = note.article.answer if note.type is NoteType.ANSWER and note.article else None
            quote = next((q for q in answer.quotes if q.id == target.key), None) if answer else None
            if quote is not None:
                return LinkTarget("quote", target.key, note=quote.note), None
            return LinkTarget("broken", use.raw), Problem(
                file, use.line, "broken-citation",
                f"[[{use.raw}]] names no quote of this answer" if answer else
                f"[[{use.raw}]]: only a saved answer cites quotes",
                "Cite a quote listed under 'asked: quotes:'." if answer else
                "Cite an extraction with [[ext:ID]] (quotes belong to answers saved by 'carnet ask --save').",
                Severity.WARNING)
        owners = index.extraction_note if target.kind == "ext" else index.comment_note
        kind = "extraction" if target.kind == "ext" else "comment"
        if target.key in owners:
            return LinkTarget(kind, target.key, note=owners[target.key]), None
        return LinkTarget("broken", use.raw), Problem(
            file, use.line, "broken-citation", f"[[{use.raw}]] names no {kind}",
            f"Fix the id, or restore the {kind}.", Severity.WARNING)

    raw = use.raw.strip()
    parts = urlsplit(raw)
    if parts.scheme or raw.startswith("//"):
        return LinkTarget("external", raw), None
    if not parts.path:
        return LinkTarget("fragment", parts.fragment), None
    if raw.startswith("/"):
        return LinkTarget("broken", raw), Problem(
            file, use.line, "broken-link", f"absolute path {raw!r} cannot be checked",
            "Link to notes and assets with paths relative to the note (e.g. other-note.md).",
            Severity.WARNING)
    path = unicodedata.normalize("NFC", posixpath.normpath(posixpath.join(posixpath.dirname(file),
                                                                         unquote(parts.path))))
    if path in index.note_by_path:
        return LinkTarget("note", index.note_by_path[path], fragment=parts.fragment), None
    if path in corpus.assets:
        return LinkTarget("asset", path), None
    if path.startswith("../") or path == "..":
        return LinkTarget("broken", raw), Problem(
            file, use.line, "invalid-path", f"link {raw!r} leaves the content directory",
            "Link only to notes and to files under assets/.")
    what = "image" if use.image else "link"
    return LinkTarget("broken", raw), Problem(
        file, use.line, "broken-link", f"{what} target {raw!r} does not exist ({path})",
        "Fix the path (relative to this note); notes end in .md, other files live under assets/.",
        Severity.WARNING)
