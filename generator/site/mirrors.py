"""Markdown mirrors of notes and articles, as llmstxt.org proposes: each page's URL with
``.md`` appended (``notes/x.html.md``). A mirror says what the page proves, from the
same model: a header (title, address, type, date, authors as published, notebooks,
the act's standing), the text as the page shows it (citations as ``[n]``, unsourced
claims marked), then the sources with each pair's state, reason and verifier, the
evidence the article left out and how much of each note was read — or, for a note,
its extractions. Pure: the site model and the pages' HTML in, bytes out.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from html import unescape

from generator.corpus.article import ActStatus
from generator.corpus.model import Note, NoteType
from generator.site.htmlmd import H1, MAIN, TITLE, Citation, absolute_href, html_markdown, page_heading
from generator.site.machine import canonical_url, note_body_fragment
from generator.site.model import SiteModel, discarded_fragment, note_path, source_address
from generator.site.pages import accuracy_text, answered_by, searched_titles
from generator.site.theme import Theme
from generator.verification.states import PairState


def mirror_path(page: str) -> str:
    return page + ".md"


def _line(text: str) -> str:
    return " ".join(text.split())


def _field(theme: Theme, key: str, value: str) -> str:
    """``- label : value``, with the language's own punctuation."""
    return "- " + theme.tr("md_field", label=theme.tr(key), value=value)


@functools.lru_cache(maxsize=256)  # the mirror and llms-full.txt each read it
def note_body_markdown(base_url: str, page: str, html: bytes) -> tuple[tuple[str, ...], tuple[Citation, ...]]:
    """The body of a note's page as Markdown, and its own citation links (numbered in page order)."""
    fragment = note_body_fragment(html)
    if fragment is None:
        return (), ()
    lines, citations = html_markdown(fragment, functools.partial(absolute_href, base_url, page))
    return tuple(lines), tuple(citations)


def mirrors(site: SiteModel, pages: Mapping[str, bytes], theme: Theme) -> Iterator[tuple[str, bytes]]:
    """The mirror of every note page in ``pages``."""
    for slug in site.publication.notes:  # the same order as .items(): only the slug is needed here
        page = note_path(slug)
        if page not in pages:
            continue
        yield note_mirror(site, theme, slug, pages[page])


def note_mirror(site: SiteModel, theme: Theme, slug: str, html: bytes) -> tuple[str, bytes]:
    """One note's mirror (path, bytes), from its page's body."""
    return mirror_path(note_path(slug)), note_mirror_text(site, theme, slug, html).encode("utf-8")


def page_mirror_text(site: SiteModel, theme: Theme, path: str, html: bytes) -> str:
    """The mirror of a page that is not a note's (home, notebook, category, base, graph,
    an article's selection or discarded list, search): its heading, its address, then its
    <main> as Markdown (the heading once)."""
    text = html.decode("utf-8")
    main = MAIN.search(text)
    heading = page_heading(text)
    if heading is None:
        title = TITLE.search(text)
        heading = _line(unescape(title.group(1))).split(" · ")[0] if title else path
    body = H1.sub("", main.group(1), count=1) if main else ""
    lines, citations = html_markdown(body, functools.partial(absolute_href, site.base_url, path))
    out = [f"# {heading}", "", _field(theme, "md_address", canonical_url(site, path)), "", *lines, ""]
    out += _cited(theme, citations)
    return "\n".join(out).rstrip("\n") + "\n"


def _cited(theme: Theme, citations: tuple[Citation, ...] | list[Citation]) -> list[str]:
    """A note's own citations, as its page links them: each passage's address and the link's words."""
    if not citations:
        return []
    out = [f"## {theme.tr('md_sources')}", ""]
    out += [f"[{c.number}]: {c.url}" + (f" {theme.tr('quoted', text=c.text)}" if c.text else "") for c in citations]
    return out + [""]


def note_mirror_text(site: SiteModel, theme: Theme, slug: str, html: bytes) -> str:
    """A note's mirror: what the note is (header), its body as Markdown, its sources and the
    rest of its evidence."""
    publication = site.publication
    note = publication.notes[slug]
    audit = site.articles.get(slug)
    lines, citations = note_body_markdown(site.base_url, note_path(slug), html)
    out = [f"# {_line(note.title)}", "", _field(theme, "md_address", canonical_url(site, note_path(slug))),
           _field(theme, "md_type", theme.tr(f"note_type_{note.type.value}"))]
    if note.date:
        out.append(_field(theme, "md_date", note.date.isoformat()))
    authors = [publication.name(slug, a) for a in note.authors]
    if authors:
        out.append(_field(theme, "md_authors", ", ".join(authors)))
    for membership in note.memberships:
        notebook = publication.notebooks.get(membership.notebook)
        if notebook is None:
            continue  # a private notebook: named nowhere
        categories = "; ".join(", ".join(values) for _axis, values in sorted(membership.categories.items()))
        out.append(_field(theme, "md_notebook", _line(notebook.title) + (f" ({categories})" if categories else "")))
    if audit is not None and audit.status in (ActStatus.ADOPTED, ActStatus.SUPERSEDED):
        out.append(_field(theme, "md_status", theme.tr(f"md_status_{audit.status}"))
                   + "".join(f" — {theme.tr('supersedes')} {canonical_url(site, note_path(s))}"
                             for s in ([audit.supersedes] if audit.supersedes else []))
                   + "".join(f" — {theme.tr('superseded_by')} {canonical_url(site, note_path(s))}"
                             for s in audit.superseded_by))
    out += _asked(site, theme, note)
    if note.summary:
        out += ["", f"> {_line(note.summary)}"]
    out += ["", *lines, ""]
    if audit is not None:
        out += _article_sections(site, theme, slug)
    else:
        out += _cited(theme, citations)
        out += _note_sections(site, theme, slug)
    return "\n".join(out).rstrip("\n") + "\n"


def _asked(site: SiteModel, theme: Theme, note: Note) -> list[str]:
    """A saved answer's question, its "not in the corpus", who answered: as its page says them."""
    record = note.article.answer if note.type is NoteType.ANSWER and note.article else None
    if record is None:
        return []
    searched = ", ".join(searched_titles(site, record)) or theme.tr("answer_searched_none")
    by = answered_by(theme, record)
    model = str(record.provenance.get("model", ""))
    out = [_field(theme, "md_question", _line(record.question)),
           _field(theme, "md_answered_by", _line(by + (f" ({model})" if model else ""))),
           _field(theme, "md_searched", _line(searched))]
    if record.not_in_corpus:
        out.append(_field(theme, "md_answer", theme.tr("answer_not_in_corpus")))
    return out


def _suggestion(theme: Theme, state: PairState) -> str:
    """A model's verdict that changed nothing (its judge does not qualify), said after the pair's state."""
    if state.suggestion is None or state.judge is None:
        return ""
    accuracy = theme.tr("accuracy_never") if state.judge.accuracy is None else \
        theme.tr("accuracy_short", accuracy=accuracy_text(theme, state.judge.accuracy))
    return " — " + theme.tr("suggestion_short", model=state.judge.model or "?", accuracy=accuracy,
                            verdict=theme.tr(f"verdict_{state.suggestion.verdict}"))


def _article_sections(site: SiteModel, theme: Theme, slug: str) -> list[str]:
    audit = site.articles[slug]
    published = site.publication.notes
    by_number: dict[int, list[str]] = {}
    for assessment in site.assessments.get(slug, []):
        link = assessment.link
        number = audit.numbers.get((link.marker.kind, link.marker.key))
        if number is None or not link.note or link.note not in published:
            continue
        state, verifier = assessment.state, assessment.state.verifier
        entry = by_number.setdefault(number, [f"[{number}]: {site.base_url}{source_address(link)} "
                                              f"{theme.tr('quoted', text=_line(assessment.passage))}"])
        entry.append(f"  - {theme.tr('quoted', text=_line(assessment.claim.text))} — {theme.tr(f'state_{state.state}')}, "
                     f"{theme.tr('reason_' + state.reason.replace('-', '_'))} ({verifier.method}"
                     + (f", {verifier.model}" if verifier.model else "") + (f", {verifier.date}" if verifier.date else "")
                     + (", " + theme.tr("accuracy_short", accuracy=accuracy_text(theme, verifier.accuracy))
                        if verifier.accuracy is not None else "")
                     + ")" + _suggestion(theme, state))
    out = [f"## {theme.tr('md_sources')}", ""]
    for number in sorted(by_number):
        out += by_number[number]
    unsourced = [c for c in audit.claims if not c.sourced]
    if unsourced:
        out += ["", f"## {theme.tr('unsourced_claims', n=len(unsourced))}", ""]
        out += [f"- {theme.tr('quoted', text=_line(c.text))}" for c in unsourced]
    out += ["", f"## {theme.tr('discarded')}", ""]
    if audit.discarded is None:
        out.append(theme.tr("discarded_unknown"))
    elif not audit.discarded:
        out.append(theme.tr("discarded_all_cited" if audit.perimeter_extractions else "discarded_none"))
    else:
        for item in audit.discarded:
            if item.note in published:
                # as the page links it: to the passage when it lands, else to its entry in the note's list
                fragment = discarded_fragment(item, site.statuses)
                out.append(f"- {site.base_url}{note_path(item.note)}#{fragment} "
                           f"{theme.tr('quoted', text=_line(item.quote))}")
    covered = [(s, c) for s, c in sorted(audit.coverage.items()) if s in published]
    if covered:
        out += ["", f"## {theme.tr('coverage_panel')}", ""]
        out += [f"- {canonical_url(site, note_path(s))} — {theme.tr('coverage_row', k=c.count, n=c.total)}"
                for s, c in covered]
    return out


def _note_sections(site: SiteModel, theme: Theme, slug: str) -> list[str]:
    note = site.publication.notes[slug]
    anchored = site.anchored.get(slug)
    out: list[str] = []
    if note.extractions:
        out += [f"## {theme.tr('md_extractions')}", ""]
        for extraction in note.extractions:
            anchor = anchored.anchors.get(extraction.id) if anchored else None
            live = anchor is not None and anchor.status.is_live
            target = f"#ext-{extraction.id}" if live else f"#entry-{extraction.id}"
            comments = sum(c.withdrawn is None for c in extraction.comments)
            out.append(f"- {canonical_url(site, note_path(slug))}{target} {theme.tr('quoted', text=_line(extraction.quote))} — "
                       f"{extraction.kind}, {site.publication.name(slug, extraction.author)}"
                       + (f", {extraction.date.isoformat()}" if extraction.date else "")
                       + (f" ({theme.tr('md_detached')})" if not live else "")
                       + (f" — {theme.tr('md_comments', n=comments)}" if comments else ""))
    if anchored is not None:  # as the page counts it: the published extractions only
        read = site.coverage[slug]
        out += ["", f"## {theme.tr('coverage_panel')}", "", theme.tr("coverage", k=read.count, n=read.total)]
    return out
