"""Links written in note bodies: ``[[slug]]``, ``[[ext:ID]]``, relative markdown links,
images. Collected from tokens, resolved against the corpus, broken ones reported.
Pure: tokens and corpus in, targets and problems out."""

from __future__ import annotations

import functools
import posixpath
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from markdown_it.token import Token

from generator.corpus.model import Corpus, Holders, Note, NoteType, SiteSettings
from generator.kinds import LinkKind, WikiKind
from generator.markup import parse_wiki_target
from generator.problems import Problem, Severity


@dataclass(frozen=True)
class LinkTarget:
    """What one link of a note points to.

    Attributes:
        kind: what it points to (a quote: a saved answer's, ``note`` being the note quoted).
        key: note slug, extraction or comment id, asset path (content-relative), URL or
            fragment.
        note: for extractions and comments, the slug of the note holding them.
        fragment: a ``#…`` to keep on a note link.
    """

    kind: LinkKind
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
    """Lookups links need: note by content path, the holder of each extraction and comment id
    (:attr:`Corpus.holders`, asked as it is: 100,000 ids at 50,000 extractions, copied into
    no map of their own)."""

    note_by_path: dict[str, str]
    holders: Holders

    @classmethod
    def of(cls, corpus: Corpus) -> CorpusIndex:
        # the holder of each id, as the corpus indexes them once (carried by an edit that keeps the ids)
        return cls({n.source.file: n.slug for n in corpus.notes.values()}, corpus.holders)


def image_hosts(settings: SiteSettings) -> tuple[str, ...]:
    """carnet.yaml's ``csp: img_hosts`` (checked when read: host names), sorted."""
    csp = settings.extra.get("csp")
    hosts = csp.get("img_hosts") if isinstance(csp, dict) else None
    return tuple(sorted({str(host) for host in hosts})) if isinstance(hosts, list) else ()


def image_allowed(raw: str, hosts: tuple[str, ...]) -> bool:
    """Whether the site's policy, widened for ``hosts``, lets a page show the external image ``raw``."""
    host = urlsplit(raw.strip()).hostname
    return host is not None and any(
        host == allowed or (allowed.startswith("*.") and host.endswith(allowed[1:])) for allowed in hosts)


def resolve_link(use: LinkUse, note: Note, corpus: Corpus, index: CorpusIndex,
                 fragments: Callable[[str], set[str]]) -> tuple[LinkTarget, Problem | None]:
    """Resolve one link; ``fragments(slug)`` gives the ``#ids`` a note's page holds."""
    target, problem = _resolve(use, note, corpus, index)
    if use.image and target.kind is LinkKind.EXTERNAL and not image_allowed(use.raw, image_hosts(corpus.settings)):
        host = urlsplit(use.raw.strip()).hostname or use.raw.strip()
        return target, Problem(
            note.source.file, use.line, "blocked-image",
            f"the image {use.raw.strip()[:200]!r} is on another site ({host[:100]}): the site's "
            "Content-Security-Policy (img-src 'self') keeps browsers from showing it",
            f"Copy it under assets/ and link it relatively (../assets/…), or let pages show that host's images: "
            f"'csp:' then '  img_hosts: [{host[:100]}]' in carnet.yaml (and the same host after img-src in "
            "netlify.toml's Content-Security-Policy, if you publish on Netlify).", Severity.WARNING)
    if problem is None and target.kind is LinkKind.NOTE and target.fragment and \
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
        if target.kind is WikiKind.NOTE:
            if target.key in corpus.notes:
                return LinkTarget(LinkKind.NOTE, target.key, fragment=target.fragment), None
            renamed = next((n.slug for n in corpus.notes.values() if target.key in n.aliases), None)
            if renamed:  # a former slug: the link follows the note
                return LinkTarget(LinkKind.NOTE, renamed, fragment=target.fragment), None
            return LinkTarget(LinkKind.BROKEN, use.raw), Problem(
                file, use.line, "broken-link", f"[[{use.raw}]] names no note",
                "Fix the slug (the note's file name without .md).", Severity.WARNING)
        if target.kind is WikiKind.QUOTE:  # a saved answer's own quote: its file says where it lies
            answer = note.article.answer if note.type is NoteType.ANSWER and note.article else None
            quote = next((q for q in answer.quotes if q.id == target.key), None) if answer else None
            if quote is not None:
                return LinkTarget(LinkKind.QUOTE, target.key, note=quote.note), None
            return LinkTarget(LinkKind.BROKEN, use.raw), Problem(
                file, use.line, "broken-citation",
                f"[[{use.raw}]] names no quote of this answer" if answer else
                f"[[{use.raw}]]: only a saved answer cites quotes",
                "Cite a quote listed under 'asked: quotes:'." if answer else
                "Cite an extraction with [[ext:ID]] (quotes belong to answers saved by 'carnet ask --save').",
                Severity.WARNING)
        held = (index.holders.extraction if target.kind is WikiKind.EXT else index.holders.comment).get(target.key)
        kind = LinkKind.EXTRACTION if target.kind is WikiKind.EXT else LinkKind.COMMENT
        if held is not None:
            return LinkTarget(kind, target.key, note=held[0].slug), None
        return LinkTarget(LinkKind.BROKEN, use.raw), Problem(
            file, use.line, "broken-citation", f"[[{use.raw}]] names no {kind}",
            f"Fix the id, or restore the {kind}.", Severity.WARNING)

    raw = use.raw.strip()
    folder = posixpath.dirname(file)
    # remembered only when short: a hostile note's megabyte-long targets are not kept
    written = _remembered_path if len(raw) + len(folder) <= _REMEMBERED_LENGTH else _written_path
    where, path, fragment = written(folder, raw)
    if where == "external":
        return LinkTarget(LinkKind.EXTERNAL, raw), None
    if where == "fragment":
        return LinkTarget(LinkKind.FRAGMENT, fragment), None
    if where == "absolute":
        return LinkTarget(LinkKind.BROKEN, raw), Problem(
            file, use.line, "broken-link", f"absolute path {raw!r} cannot be checked",
            "Link to notes and assets with paths relative to the note (e.g. other-note.md).",
            Severity.WARNING)
    if path in index.note_by_path:
        return LinkTarget(LinkKind.NOTE, index.note_by_path[path], fragment=fragment), None
    if path in corpus.assets:
        return LinkTarget(LinkKind.ASSET, path), None
    if path.startswith("../") or path == "..":
        return LinkTarget(LinkKind.BROKEN, raw), Problem(
            file, use.line, "invalid-path", f"link {raw!r} leaves the content directory",
            "Link only to notes and to files under assets/.")
    what = "image" if use.image else "link"
    return LinkTarget(LinkKind.BROKEN, raw), Problem(
        file, use.line, "broken-link", f"{what} target {raw!r} does not exist ({path})",
        "Fix the path (relative to this note); notes end in .md, other files live under assets/.",
        Severity.WARNING)


def _written_path(folder: str, raw: str) -> tuple[str, str, str]:
    """What a markdown link's target ``raw``, written in a note of ``folder``, names:
    ``external``, ``fragment`` or ``absolute`` (a path from the root), else ``relative``
    with its content path; and its fragment. Pure, so remembered (:data:`_remembered_path`):
    ``serve`` resolves every note's links on each rebuild, the same ones again (20 µs each,
    most of it here)."""
    parts = urlsplit(raw)
    if parts.scheme or raw.startswith("//"):
        return "external", "", ""
    if not parts.path:
        return "fragment", "", parts.fragment
    if raw.startswith("/"):
        return "absolute", "", parts.fragment
    path = unicodedata.normalize("NFC", posixpath.normpath(posixpath.join(folder, unquote(parts.path))))
    return "relative", path, parts.fragment


_REMEMBERED_LENGTH = 1024
_remembered_path = functools.lru_cache(maxsize=1 << 15)(_written_path)  # ≤ 32,768 × 1 KB
