"""Outputs for crawlers and agents, derived from the finished model and the pages:
``.txt``/``.json`` siblings of every page, ``llms.txt`` and ``llms-full.txt``,
``sitemap.xml``, Atom feeds, ``robots.txt`` and ``manifest.json``. Deterministic:
sorted everything, dates from the content, never from the clock."""

from __future__ import annotations

import functools
import heapq
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from html import escape, unescape
from typing import Any

from generator.corpus.model import Note, NoteType
from generator.site.htmlmd import page_heading
from generator.site.jsonout import ENCODER, dumps
from generator.site.model import (
    SITE_FEEDS,
    SiteModel,
    audit_page,
    base_path,
    category_path,
    feed_path,
    note_path,
    notebook_path,
    reading_order,
    source_address,
)
from generator.site.theme import Theme
from generator.verification.states import State


def xml_escape(text: str) -> str:
    """``&``, ``<`` and ``>`` escaped, as :func:`xml.sax.saxutils.escape` does (whose module
    loads urllib.request, http.client and ssl: 20 ms of every command line build)."""
    return text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")


DEFAULT_FULL_CAP = 5 * 1024 * 1024
_BLOCKS = {"p", "li", "h1", "h2", "h3", "h4", "blockquote", "pre", "tr", "dt", "dd", "figcaption", "summary"}


_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SKIPPED = re.compile(r"<(script|style|svg|button)\b[^>]*>.*?</\1\s*>", re.S | re.I)
_LINK = re.compile(r"""<a\s(?:[^>"']|"[^"]*"|'[^']*')*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.I)
# a tag's attributes, quoted values whole: runs of plain characters taken at once, not one
# alternation per character (twice as fast over a page)
_ATTRIBUTES = r"""[^>"']*(?:(?:"[^"]*"|'[^']*')[^>"']*)*"""
_BLOCK_TAG = re.compile(r"</?(?:" + "|".join(sorted(_BLOCKS)) + r")\b" + _ATTRIBUTES + ">", re.I)
_TAG = re.compile("<" + _ATTRIBUTES + ">")
_BREAK = "\x00"  # never in content: the loader refuses NUL bytes


class PageText:
    """A page read back for its siblings: the plain text of its <main>, one line per
    block (made when first asked for: a note's ``.json`` takes its body's lines instead,
    and its text is the note's own ``.txt``), the links inside it and the page's <title>."""

    def __init__(self, title: str, main: str, links: list[str]) -> None:
        self.title, self.links, self._main = title, links, main

    @functools.cached_property
    def lines(self) -> list[str]:
        return _plain_lines(self._main)


def read_page(html: bytes) -> PageText:
    """A few C-level regex passes over the page's <main> (our own templates' output, so a
    full HTML parser, five times slower on a large site, buys nothing): skipped elements
    out, block tags to line breaks, other tags out, entities decoded."""
    text = html.decode("utf-8")
    title_match = re.search(r"<title>(.*?)</title>", text, re.S)
    title = unescape(title_match.group(1)) if title_match else ""
    start = text.find("<main")
    end = text.rfind("</main>")
    if start < 0 or end < start:
        return PageText(title, "", [])
    main = _COMMENT.sub("", text[text.index(">", start) + 1:end])
    main = _SKIPPED.sub("", main)
    links = [unescape(next(g for g in m.groups() if g is not None)) for m in _LINK.finditer(main)]
    return PageText(title, main, [link for link in links if link])


def _plain_lines(fragment: str) -> list[str]:
    """HTML (skipped elements already out) to its text, one line per block."""
    plain = _TAG.sub("", _BLOCK_TAG.sub(_BREAK, fragment))
    lines = [" ".join(line.split()) for line in unescape(plain).split(_BREAK)]
    return [line for line in lines if line]


_NOTE_BODY = re.compile(r"""<div\s+class=["']note-body\b[^"']*["']""" + _ATTRIBUTES + ">", re.I)
_DIV = re.compile(r"<(/?)div\b", re.I)
# the claim's anchor and its contest link: page furniture, not the text the article says
_CONTEST = re.compile(r"""\s*<a\s+class=["']contest\b.*?</a\s*>""", re.S | re.I)
# an unsourced claim's mark reads as a bracket after it, like a citation's number
_UNSOURCED = re.compile(r"""<sup\s+class=["']unsourced-claim["'][^>]*>\s*<a\b[^>]*>(.*?)</a\s*>\s*</sup\s*>""",
                        re.S | re.I)
_CLAIM_END = re.compile(r"""<span\s+class=["']claim-end\b[^"']*["']""" + _ATTRIBUTES + r">\s*</span\s*>""", re.I)


def note_body_fragment(html: bytes) -> str | None:
    """The HTML inside a note page's body (``<div class="note-body">``), ``None`` without one."""
    text = html.decode("utf-8")
    start = _NOTE_BODY.search(text)
    if start is None:
        return None
    depth, end = 1, len(text)
    for match in _DIV.finditer(text, start.end()):  # the body's own closing </div>
        depth += -1 if match.group(1) else 1
        if depth == 0:
            end = match.start()
            break
    return text[start.end():end]


@functools.lru_cache(maxsize=256)  # the .json sibling reads it
def note_body_lines(html: bytes) -> tuple[str, ...]:
    """The text of a note page's body as the page shows it: citation markers kept as
    their ``[n]``, so a marker before punctuation leaves no space before it."""
    fragment = note_body_fragment(html)
    if fragment is None:
        return ()
    body = _SKIPPED.sub("", _COMMENT.sub("", fragment))
    body = _UNSOURCED.sub(lambda m: f" [{m.group(1)}]", body)
    return tuple(_plain_lines(_CLAIM_END.sub("", _CONTEST.sub("", body))))


def _page_title(html: bytes) -> str:
    """A page's own title, without the site's (as in its ``.json``)."""
    match = re.search(rb"<title>(.*?)</title>", html, re.S)
    return unescape(match.group(1).decode("utf-8")).split(" · ")[0].strip() if match else ""


def canonical_url(site: SiteModel, path: str) -> str:
    """A page's canonical address, as its ``<link rel="canonical">``: the home is the root."""
    return site.base_url + ("" if path == "index.html" else path)


@functools.lru_cache(maxsize=8)
def _default_theme(language: str) -> Theme:
    return Theme.load(None, language)


def strings_of(site: SiteModel, theme: Theme | None) -> Theme:
    """The theme whose UI strings name things in the site's language. Derived outputs are
    made after the pages and are not handed the theme: the default theme's strings then."""
    return theme if theme is not None else _default_theme(site.publication.settings.language)


def _absolute(site: SiteModel, page: str, href: str) -> str | None:
    if href.startswith(("#", "?")):  # the page itself
        fragment = href.partition("#")[2]
        return site.base_url + page + (f"#{fragment}" if fragment else "")
    # the address without its fragment, cached: a wiki's pages link thousands of passages of a
    # few notes (#ext-…), each href distinct, each address one of a few
    path, _, fragment = href.partition("#")
    address = _absolute_url(site.base_url, posixpath.dirname(page), path)
    return None if address is None else address + (f"#{fragment}" if fragment else "")


@functools.lru_cache(maxsize=65536)
def _absolute_url(base_url: str, directory: str, href: str) -> str | None:
    # cached: every page repeats the same navigation and static links
    if re.match(r"^[a-z][a-z0-9+.-]*:", href) or href.startswith("//"):
        return None
    target = posixpath.normpath(posixpath.join(directory, href.split("?")[0]))
    return base_url + target


def page_siblings(site: SiteModel, path: str, html: bytes, kind: str, citations: list[dict[str, str]],
                   has_text: bool, evidence: dict[str, Any],
                   lines_of: Callable[[str], tuple[str, ...]] | None = None) -> Iterator[tuple[str, bytes]]:
    stem = path[: -len(".html")]
    page = read_page(html)
    if not has_text:
        yield f"{stem}.txt", ("\n".join(page.lines) + "\n").encode("utf-8")
    links = sorted({url for url in (_absolute(site, path, h) for h in page.links) if url})
    # a note or an article: its own text, as the page shows it, without the page's chrome
    body = "\n".join((lines_of(path) if lines_of is not None else note_body_lines(html)) if evidence else page.lines)
    # titled as the reader sees it: the page's <h1> (a category's <title> adds its notebook)
    heading = page_heading(html.decode("utf-8"))
    record = {"title": heading if heading is not None else page.title.split(" · ")[0].strip(), "kind": kind,
              "url": canonical_url(site, path),
              "body": body, "links": links, "citations": citations, **evidence}
    yield f"{stem}.json", dumps(record, levels=2)


def page_evidence(site: SiteModel, path: str) -> dict[str, Any]:
    """What a note's or an article's ``.json`` says of its evidence, read from the core's
    model (never from the page): an article's every claim — unsourced ones included —
    with each pair's state, reason and verifier; a note's published extractions, where
    each lands, and their comments, people named as the page names them."""
    slug = posixpath.basename(path)[: -len(".html")]
    note = site.publication.notes.get(slug) if path.startswith("notes/") else None
    if note is None:
        return {}
    audit = site.articles.get(slug)
    if audit is not None:
        pairs: dict[str, list[dict[str, Any]]] = {}
        for assessment in site.assessments.get(slug, []):
            link, state = assessment.link, assessment.state
            if not link.note or link.note not in site.publication.notes:
                continue  # an unpublished source: named nowhere (INV-12)
            verifier = state.verifier
            said: dict[str, Any] = {"method": verifier.method, "model": verifier.model, "date": verifier.date}
            if verifier.accuracy is not None:  # a qualified judge, and how well it was measured to judge
                said["balanced_accuracy"] = verifier.accuracy
            pair: dict[str, Any] = {"source_url": f"{site.base_url}{source_address(link)}", "state": state.state,
                                    "reason": state.reason, "verifier": said}
            if state.suggestion is not None and state.judge is not None:  # a verdict that changed nothing
                pair["suggestion"] = {"verdict": state.suggestion.verdict, "rationale": state.suggestion.rationale,
                                      "model": state.judge.model, "date": state.suggestion.date, "qualified": False,
                                      "balanced_accuracy": state.judge.accuracy,
                                      "min_balanced_accuracy": state.judge.bar}
            pairs.setdefault(assessment.claim.id, []).append(pair)
        claims = [{"id": claim.id, "text": claim.text, "section": claim.section,
                   "state": None if claim.sourced else State.UNSOURCED, "pairs": pairs.get(claim.id, [])}
                  for claim in audit.claims]
        record = note.article.answer if note.type is NoteType.ANSWER and note.article else None
        if record is None:
            return {"claims": claims}
        provenance = record.provenance
        return {"claims": claims, "answer": {
            "question": record.question, "not_in_corpus": record.not_in_corpus, "mode": record.mode,
            "searched": [nb for nb in record.searched if nb in site.publication.notebooks],
            "method": str(provenance.get("method", "")), "model": str(provenance.get("model", "")),
            "retrieved": len(record.retrieved),
            "discarded": [f"{site.base_url}{note_path(d.note)}#{d.extraction}" for d in audit.discarded or []
                          if d.note in site.publication.notes]}}
    anchored = site.anchored.get(slug)
    extractions = []
    for extraction in note.extractions:
        anchor = anchored.anchors.get(extraction.id) if anchored else None
        extractions.append({
            "id": extraction.id, "url": f"{site.base_url}{note_path(slug)}#ext-{extraction.id}",
            "quote": extraction.quote, "kind": extraction.kind,
            "author": site.publication.name(slug, extraction.author),
            "date": extraction.date.isoformat() if extraction.date else None,
            "anchor": anchor.status.value if anchor else "detached",
            "portions": [[p.element, p.start, p.end] for p in anchor.portions] if anchor else [],
            "comments": [{"id": c.id, "author": site.publication.name(slug, c.author), "date": c.date.isoformat(),
                          "stance": c.stance, "text": None if c.withdrawn else c.text,
                          "withdrawn": c.withdrawn is not None}
                         for c in sorted(extraction.comments, key=lambda c: (c.date, c.id))],
        })
    return {"extractions": extractions}


def page_kind(site: SiteModel, path: str) -> str:
    if path == "index.html":
        return "home"
    if path.startswith("bases/"):
        return "base"
    if path.startswith("notebooks/"):
        return "category" if path.count("/") > 1 else "notebook"
    audit = audit_page(path)
    if audit is not None:
        return audit[1]  # "selection" or "discarded"
    slug = posixpath.basename(path)[: -len(".html")]
    note = site.publication.notes.get(slug)
    return note.type.value if note else "page"


def page_citations(site: SiteModel, path: str) -> list[dict[str, str]]:
    """The article's pairs, flat (kept as they were for readers of earlier sites; the
    ``claims`` of :func:`_evidence` say more)."""
    slug = posixpath.basename(path)[: -len(".html")]
    result = []
    for assessment in site.assessments.get(slug, []) if path.startswith("notes/") else []:
        link = assessment.link
        if not link.note or link.note not in site.publication.notes:
            continue
        result.append({"claim": assessment.claim.text, "source_url": f"{site.base_url}{source_address(link)}",
                       "quote": assessment.passage, "state": assessment.state.state,
                       "verifier": assessment.state.verifier.method})
    return result


def site_pages(files: Iterable[str]) -> list[str]:
    """The pages the site-wide outputs list (every ``.html`` but the 404 page), sorted:
    what :func:`llms_txt`, :func:`full_order` and :func:`sitemap` each walk, found once."""
    return sorted(p for p in files if p.endswith(".html") and p != "404.html")


def llms_txt(site: SiteModel, files: Mapping[str, bytes], theme: Theme | None = None,
             pages: Sequence[str] | None = None) -> bytes:
    """https://llmstxt.org: H1, > summary, an info paragraph, H2 sections of links, Optional.
    Prose and section names are in the site's language (the theme's strings), but for
    "Optional", which the format itself names. ``pages``: :func:`site_pages` of ``files``,
    when known."""
    publication = site.publication
    settings = publication.settings
    base = site.base_url
    tr = strings_of(site, theme).tr
    licence = settings.licence.name + (f" ({settings.licence.url})" if settings.licence.url else "")
    lines = [f"# {settings.title}", "", f"> {settings.description or settings.title}", "",
             tr("llms_intro", licence=licence), ""]

    def section(title: str, entries: list[tuple[str, str, str]]) -> None:
        if entries:
            lines.append(f"## {title}")
            lines.extend(f"- [{name}]({base}{path}): {' '.join(note.split())}" for name, path, note in entries)
            lines.append("")

    notes = publication.notes

    def read(slug: str) -> str:
        """A note's markdown mirror when there is one (what a model reads best), else its page."""
        mirror = note_path(slug) + ".md"
        return mirror if mirror in files else note_path(slug)

    section(tr("llms_section_articles"), [(n.title, read(s), n.summary or tr(f"note_type_{n.type.value}"))
                                    for s, n in notes.items() if n.type in (NoteType.WIKI, NoteType.SYNTHESIS)])
    section(tr("llms_section_answers"), [(n.title, read(s), tr("llms_answer_desc"))
                                         for s, n in notes.items() if n.type is NoteType.ANSWER])
    section(tr("llms_section_notebooks"), [(nb.title, notebook_path(s), nb.description or tr("llms_notebook_desc"))
                          for s, nb in publication.notebooks.items()])
    section(tr("llms_section_bases"), [(b.title, base_path(s), b.description or tr("llms_base_desc"))
                                       for s, b in publication.bases.items()])
    section(tr("llms_section_notes"), [(n.title, read(s), n.summary or (n.date.isoformat() if n.date else
                                                                          tr("note_type_note")))
                      for s, n in notes.items() if n.type is NoteType.NOTE])
    others = _other_pages(site, site_pages(files) if pages is None else pages)
    described = _descriptions(site, tr)
    audits = Counter(audit[:2] for p in others if (audit := audit_page(p)) is not None)  # (article, kind) → pages
    optional = [(_page_title(files[p]) or p, p, described.get(p) or _audit_description(site, tr, p, audits))
                for p in others] + [
        ("llms-full.txt", "llms-full.txt", tr("llms_full_desc")),
        ("graph.json", "graph.json", tr("llms_graph_desc")),
        ("sitemap.xml", "sitemap.xml", tr("llms_sitemap_desc"))]
    section("Optional", optional)
    return "\n".join(lines).rstrip("\n").encode("utf-8") + b"\n"


def _other_pages(site: SiteModel, pages: Iterable[str]) -> list[str]:
    """The pages llms.txt lists under "Optional" (none of a note, notebook or base), in reading order."""
    publication = site.publication
    listed = {note_path(s) for s in publication.notes} | {notebook_path(s) for s in publication.notebooks} | \
        {base_path(s) for s in publication.bases}
    return sorted((p for p in pages if p not in listed), key=reading_order)


def llms_txt_reads(site: SiteModel, files: Mapping[str, bytes], digests: Mapping[str, str],
                   theme: Theme | None = None, pages: Sequence[str] | None = None) -> tuple[object, ...]:
    """What :func:`llms_txt` reads, by which an incremental build recalls it: the settings,
    the site's address, its notebooks and bases, the words of the theme; each note's entry
    (title, summary, type, date, whether it has a markdown mirror); the other pages' bytes
    (by ``digests``: their titles) and what the categories' entries say. A note's body or
    passages edited leave it unchanged."""
    publication = site.publication
    strings = strings_of(site, theme)
    return (publication.settings, site.base_url, publication.notebooks, publication.bases, strings.memo_key(),
            [(slug, note.title, note.summary, note.type.value, note.date, note_path(slug) + ".md" in files)
             for slug, note in publication.notes.items()],
            [(page, digests.get(page)) for page in _other_pages(site, site_pages(files) if pages is None else pages)],
            _descriptions(site, strings.tr))


def _descriptions(site: SiteModel, tr: Callable[..., str]) -> dict[str, str]:
    """What the pages without a description of their own are: home, categories,
    selections, search."""
    from generator.site.pages import category_notes  # pages imports this module

    publication = site.publication
    result = {"index.html": tr("llms_home_desc"), "search.html": tr("llms_search_desc")}
    for slug, notebook in publication.notebooks.items():
        for axis in notebook.axes:
            for category in axis.categories:
                count = len(category_notes(site, slug, axis.key, category))
                result[category_path(slug, axis.key, category)] = tr(
                    "llms_category_desc", n=count, notebook=notebook.title, category=category, axis=axis.title)
    return result


def _audit_description(site: SiteModel, tr: Callable[..., str], path: str, pages_of: Mapping[tuple[str, str], int]
                       ) -> str:
    """What an article's selection or discarded page is, with its page number when the
    article's audit goes over several (``pages_of``: (article, kind) → its pages; else
    ``llms_page_desc``)."""
    audit = audit_page(path)
    if audit is None or audit[0] not in site.publication.notes:
        return tr("llms_page_desc")
    slug, kind, number = audit
    description = tr(f"llms_{kind}_desc", title=site.publication.notes[slug].title)
    pages = pages_of[(slug, kind)]
    return description + (f" ({tr('llms_page_of', page=number, pages=pages)})" if pages > 1 else "")


_LISTING_RANK = {"home": 0, "base": 1, "notebook": 2, "category": 3, "selection": 4, "discarded": 4}


def full_order(site: SiteModel, files: Iterable[str], pages: Sequence[str] | None = None) -> list[str]:
    """llms-full.txt's pages, in order: wiki articles and syntheses, then notes, each
    newest first (by :func:`_page_date`, then slug); then the listing pages (home, bases,
    notebooks, categories, selections, the rest), by path. What a cap keeps is what the
    site says first-hand. ``pages``: :func:`site_pages` of ``files``, when known."""
    pages = site_pages(files) if pages is None else pages
    notes = site.publication.notes

    def is_note(path: str) -> bool:
        return path.startswith("notes/") and posixpath.basename(path)[: -len(".html")] in notes

    def newest_first(paths: list[str]) -> list[str]:
        by_slug = sorted(paths)
        return sorted(by_slug, key=lambda p: _page_date(site, p), reverse=True)  # stable: slug order within a date

    kinds = {p: page_kind(site, p) for p in pages if is_note(p)}
    articles = [p for p, kind in kinds.items() if kind != NoteType.NOTE.value]
    plain = [p for p, kind in kinds.items() if kind == NoteType.NOTE.value]
    listings = sorted((p for p in pages if not is_note(p)),
                      key=lambda p: (_LISTING_RANK.get(page_kind(site, p), 5), reading_order(p)))
    return newest_first(articles) + newest_first(plain) + listings


def full_order_reads(site: SiteModel, pages: Sequence[str]) -> tuple[object, ...]:
    """What :func:`full_order` reads: the pages (``pages``: :func:`site_pages`), each note's
    type and page date."""
    return (pages, site.dates, [(slug, note.type.value) for slug, note in site.publication.notes.items()])


def chunk_note(site: SiteModel, path: str) -> Note | None:
    """The note whose page ``path`` is (its chunk says what the note is), else ``None``."""
    slug = posixpath.basename(path)[: -len(".html")]
    note = site.publication.notes.get(slug) if path.startswith("notes/") else None
    return note if note is not None and audit_page(path) is None else None


def chunk_reads(site: SiteModel, path: str, theme: Theme) -> tuple[str, str, str] | None:
    """What the llms-full.txt text (its Markdown mirror) of a page that is not a note's reads besides the page's
    bytes: its address and the words of its mirror's header (``None`` for a note's page,
    which reads the note too)."""
    return None if chunk_note(site, path) is not None else (path, site.base_url, theme.memo_key())


def llms_full(site: SiteModel, files: Mapping[str, bytes], make: Callable[[str], str], cap: int = DEFAULT_FULL_CAP,
              theme: Theme | None = None, made: Mapping[str, int] | None = None,
              read: Callable[[str], bytes] | None = None,
              recall: Callable[[str, Callable[[], str]], str] | None = None,
              order: Sequence[str] | None = None) -> bytes:
    """Every page's text (``make(path)``: its mirror, its Markdown mirror)
    in :func:`full_order` (``order``, when known). Over ``cap`` bytes,
    it stops at the last whole page that leaves room under the cap for a closing line that
    counts the pages left out and points to llms.txt and the sitemap, which list them all.
    ``made``: page → the size of its text in UTF-8, made already (by a worker
    process), which ``read(page)`` gives: only those that go in are read;
    ``recall(path, make)``: another page's, given how to make it (a build cache recalls it)."""
    strings = strings_of(site, theme)
    made = made or {}
    paths = full_order(site, files) if order is None else order
    # the other pages' texts, made in order and only as far as the cap reaches: past it none
    # is read (at 5,000 notes with evidence, thousands of pages' texts are left out)
    others: dict[str, bytes] = {}

    def chunk(path: str) -> bytes:
        if path in made:
            assert read is not None, "pages made already are read by read()"
            return read(path)
        if path not in others:
            others[path] = (recall(path, partial(make, path)) if recall is not None else make(path)).encode("utf-8")
        return others[path]

    def length(path: str) -> int:  # a page made already is not read for it
        return made[path] if path in made else len(chunk(path))

    total = 0
    for path in paths:
        total += length(path)
        if total > cap:
            break
    else:
        return b"".join(map(chunk, paths))

    def closing(left: int) -> bytes:
        return (strings.tr("llms_full_left_out", n=left, cap=cap, llms=f"{site.base_url}llms.txt",
                           sitemap=f"{site.base_url}sitemap.xml") + "\n").encode("utf-8")

    # the closing line's length depends on the count left out through its form (one, other)
    # and its digits alone: the longest it can be is one of these, and a page that fits under
    # the cap with that room left is kept without wording the line for it
    longest = max(len(closing(left)) for left in {0, 1, len(paths)})
    kept, size = 0, 0
    for path in paths:
        grown = size + length(path)
        if grown + longest > cap and grown + len(closing(len(paths) - kept - 1)) > cap:
            break
        kept, size = kept + 1, grown
    return b"".join(map(chunk, paths[:kept])) + closing(len(paths) - kept)


def _page_date(site: SiteModel, path: str) -> str:
    return site.dates.get(posixpath.basename(path)[: -len(".html")], "") if path.startswith("notes/") else ""


def sitemap(site: SiteModel, files: Iterable[str], pages: Sequence[str] | None = None) -> bytes:
    """Every page (``pages``: :func:`site_pages` of ``files``, when known) at its canonical
    address, with its note's date."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    for path in site_pages(files) if pages is None else pages:
        date = _page_date(site, path)
        lastmod = f"<lastmod>{date}</lastmod>" if date else ""
        lines.append(f"  <url><loc>{xml_escape(canonical_url(site, path))}</loc>{lastmod}</url>")
    lines.append("</urlset>")
    return ("\n".join(lines) + "\n").encode("utf-8")


def sitemap_reads(site: SiteModel, pages: Sequence[str]) -> tuple[object, ...]:
    """What :func:`sitemap` reads: the site's address, its pages (:func:`site_pages`) and the notes' dates."""
    return (site.base_url, pages, site.dates)


def robots(site: SiteModel) -> bytes:
    """Points to the sitemap and llms.txt; ``ai_training: disallow`` in carnet.yaml's
    ``crawlers`` setting turns away the known AI-training crawlers."""
    raw = site.publication.settings.extra.get("crawlers") or {}
    disallow_training = isinstance(raw, dict) and raw.get("ai_training") == "disallow"
    lines = ["User-agent: *", "Allow: /", ""]
    if disallow_training:
        for agent in ("GPTBot", "CCBot", "Google-Extended", "anthropic-ai", "ClaudeBot", "Applebot-Extended",
                      "Bytespider", "meta-externalagent"):
            lines += [f"User-agent: {agent}", "Disallow: /", ""]
    lines += [f"Sitemap: {site.base_url}sitemap.xml", f"# llms.txt: {site.base_url}llms.txt"]
    return ("\n".join(lines) + "\n").encode("utf-8")


DEFAULT_FEED_ENTRIES = 50
"""Entries of a feed when ``outputs.feed_entries`` does not say: the latest notes, as feed
readers poll them (every note of a 5,000-note site made the notes' feed 1.3 MB, fetched at each
poll, and every retitling anywhere made all of them again)."""


def feed_entries(site: SiteModel) -> int:
    """``outputs.feed_entries`` of the settings."""
    return site.publication.settings.output_size("feed_entries", DEFAULT_FEED_ENTRIES)


def _feed_lists(site: SiteModel, theme: Theme | None) -> list[tuple[str, str, list[tuple[Note, str]]]]:
    """Each feed's path, title and entries: its latest notes with their page dates, newest
    first (ties: by slug), at most :func:`feed_entries` of them."""
    publication = site.publication
    tr = strings_of(site, theme).tr
    count = feed_entries(site)
    dates = site.dates

    def latest(notes: Iterable[Note]) -> list[tuple[Note, str]]:
        # a note's page date (:func:`_page_date` of its page), compared as a tuple with its
        # slug: unique, so the note itself is never compared (and no key function per note)
        dated = heapq.nlargest(count, ((dates.get(n.slug, ""), n.slug, n) for n in notes))
        return [(note, date) for date, _slug, note in dated]

    notes = list(publication.notes.values())
    notes_feed, articles_feed = (feed_path(name) for name in SITE_FEEDS)
    lists = [(notes_feed, tr("feed_notes", site=publication.settings.title),
              latest(n for n in notes if n.type is NoteType.NOTE)),
             (articles_feed, tr("feed_articles", site=publication.settings.title),
              latest(n for n in notes if n.type is not NoteType.NOTE))]
    lists += [(feed_path(slug), f"{notebook.title}", latest(site.notes_of(slug)))
              for slug, notebook in publication.notebooks.items()]
    return lists


def feeds(site: SiteModel, theme: Theme | None = None) -> Iterator[tuple[str, bytes]]:
    """Atom feeds dated by the content: new notes, and wikis and syntheses; site-wide and
    per notebook, each with its latest entries (:func:`feed_entries`). Titled as the
    pages' ``<link rel="alternate">`` title them."""
    publication = site.publication

    def feed(path: str, title: str, dated: list[tuple[Note, str]]) -> bytes:
        updated = dated[0][1] if dated and dated[0][1] else "1970-01-01"
        lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<feed xmlns="http://www.w3.org/2005/Atom">',
                 f"  <title>{xml_escape(title)}</title>", f"  <id>{xml_escape(site.base_url + path)}</id>",
                 f'  <link rel="self" href="{xml_escape(site.base_url + path)}"/>',
                 f"  <updated>{updated}T00:00:00Z</updated>",
                 f"  <author><name>{xml_escape(publication.settings.title)}</name></author>"]
        for note, date in dated:
            url = site.base_url + note_path(note.slug)
            lines += ["  <entry>", f"    <title>{xml_escape(note.title)}</title>", f"    <id>{xml_escape(url)}</id>",
                      f'    <link href="{xml_escape(url)}"/>', f"    <updated>{date or updated}T00:00:00Z</updated>",
                      f"    <summary>{xml_escape(note.summary or note.title)}</summary>", "  </entry>"]
        lines.append("</feed>")
        return ("\n".join(lines) + "\n").encode("utf-8")

    for path, title, dated in _feed_lists(site, theme):
        yield path, feed(path, title, dated)


def feeds_reads(site: SiteModel, theme: Theme | None = None) -> tuple[object, ...]:
    """What :func:`feeds` reads: the settings, the site's address, the notebooks, the words
    of the theme; each feed's entries (title, summary, page date), which are only the
    latest notes: a note retitled outside them changes no feed."""
    publication = site.publication
    return (publication.settings, site.base_url, publication.notebooks, strings_of(site, theme).memo_key(),
            [(path, title, [(note.slug, note.title, note.summary, date) for note, date in dated])
             for path, title, dated in _feed_lists(site, theme)])


_PLAIN = re.compile(r'[^"\\\x00-\x1f]*')
"""A string JSON writes as it is between quotes (without ``ensure_ascii``, as the site's encoder)."""


def manifest(sizes: Mapping[str, int], digests: Mapping[str, str], made: Mapping[str, str] | None = None) -> bytes:
    """Every file of the site (``sizes``: path → size in bytes) with its sha256; ``made``:
    the lines of some files made already (:func:`manifest_lines`, while the graph was written)."""
    made = made or {}
    return manifest_text([made[path] if path in made else manifest_line(path, digests[path], size)
                          for path, size in sorted(sizes.items())])


def manifest_text(lines: list[str]) -> bytes:
    """manifest.json from the line of each file (:func:`manifest_line`), in path order."""
    # :func:`dumps` at two levels, written line by line: 30,000 entries at 5,000 notes
    if not lines:
        return dumps({"files": {}}, levels=2)
    return ("{\n \"files\": {\n" + ",\n".join(lines) + "\n }\n}\n").encode("utf-8")


def manifest_lines(sizes: Mapping[str, int], digests: Mapping[str, str]) -> dict[str, str]:
    """The manifest's line of each file of ``sizes`` (path → size), for :func:`manifest`."""
    return {path: manifest_line(path, digests[path], size) for path, size in sizes.items()}


def manifest_line(path: str, digest: str, size: int) -> str:
    """The manifest's line of a file: its path, sha256 and size."""
    # a digest is the build's own sha256 in hex: nothing in it to escape
    return f'  {_json_text(path)}: {{"sha256": "{digest}", "size": {int(size)}}}'


def _json_text(text: str) -> str:
    """``text`` as the site's encoder writes it: a path or digest with nothing to escape
    (most) needs no encoder."""
    return f'"{text}"' if _PLAIN.fullmatch(text) else ENCODER.encode(text)


def not_found_page(site: SiteModel, theme: Theme) -> bytes:
    from generator.site.pages import common
    ctx = common(site, theme, "404.html", theme.tr("not_found"), "not-found", absolute=True)
    return theme.render("404.html", **ctx)


__all__ = ["canonical_url", "escape", "feeds", "feeds_reads", "full_order", "full_order_reads", "llms_full",
           "llms_txt", "llms_txt_reads", "manifest", "manifest_line", "manifest_lines", "manifest_text",
           "note_body_lines", "page_siblings", "robots", "site_pages", "sitemap", "sitemap_reads"]
