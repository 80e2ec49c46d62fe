"""Page contexts: what each template receives. Pure functions of the site model."""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import json
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import quote, urlsplit

from generator.anchoring import AnchorStatus
from generator.anchoring.timing import time_range
from generator.corpus.article import Adoption, AnswerRecord, ArticleSpec, PerimeterSpec, RecordedPerimeter
from generator.corpus.assets import AUDIO, VIDEO
from generator.corpus.links import LinkTarget
from generator.corpus.model import Note, NoteType
from generator.corpus.proposal import OperationDecision, Proposal
from generator.corpus.publication import shows
from generator.kinds import LinkKind, WikiKind
from generator.site import paging
from generator.site.graph_pages import local_graph
from generator.site.markdown_html import (
    BodyTemplate,
    CitationView,
    Href,
    RenderState,
    fill_body,
    note_marks,
    raw_html_on,
    render_body,
)
from generator.site.model import (
    SiteModel,
    annotations_path,
    base_path,
    category_path,
    discarded_fragment,
    discarded_path,
    extraction_fragment,
    note_path,
    notebook_path,
    relative,
    relative_address,
    selection_path,
    source_address,
    text_path,
)
from generator.site.structured import structured_data
from generator.site.theme import Theme
from generator.synthesis.audit import ArticleAudit, CitationLink, SourceState
from generator.synthesis.sections import sections
from generator.verification.assess import Assessment
from generator.verification.states import Method, PairState, State

_MARKER = re.compile(r"\[\[(ext|com):([^\]|]+)(\|[^\]]*)?\]\]")
MEDIA_TYPES = {**dict.fromkeys(AUDIO, "audio"), **dict.fromkeys(VIDEO, "video")}
"""How a recording is played, by extension: every audio or video type an asset may be."""


def format_date(value: dt.date | None, theme: Theme) -> str:
    """A date as readers of the site's language write it (``1er octobre 2024``)."""
    if value is None:
        return ""
    day = theme.tr("first_of_month") if value.day == 1 else str(value.day)
    month = theme.strings["months"][value.month - 1]
    return theme.tr("date_format", day=day, month=month, year=value.year)


def counts_worded(theme: Theme) -> Callable[[int, int], dict[str, str]]:
    """An evidence item's comments and disagreements as its list words them
    (``comments_label``, ``disagreements_label``), each count worded once per list: a
    template call per item cost more (156,000 members in the selections of 100 wikis)."""
    comments = functools.cache(functools.partial(theme.tr, "count_comments"))
    disagreements = functools.cache(functools.partial(theme.tr, "disagreements"))

    def worded(comment_count: int, disagreement_count: int) -> dict[str, str]:
        return {"comments_label": comments(n=comment_count),
                "disagreements_label": disagreements(n=disagreement_count) if disagreement_count else ""}

    return worded


def format_time(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


def json_ld(data: dict[str, Any]) -> str:
    """JSON-LD for a <script type="application/ld+json"> block. Every ``<``, ``>`` and ``&``
    is a JSON escape, so no text from content can close the block (``</script>``) or put
    the HTML parser in its "script data escaped" states (``<!--``); the JSON is the same."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def page_metadata(site: SiteModel, path: str, title: str, kind: str) -> dict[str, Any]:
    """Open Graph / Twitter meta and schema.org JSON-LD of a page, dates from the content."""
    description = site.publication.settings.description
    if kind == "note":
        description = site.publication.notes[posixpath.basename(path)[: -len(".html")]].summary or description
    return {"description": description, "og_type": "article" if kind == "note" else "website",
            "jsonld": json_ld(structured_data(site, path, title, kind))}


def common(site: SiteModel, theme: Theme, path: str, title: str, kind: str, absolute: bool = False) -> dict[str, Any]:
    """What every page needs: site, navigation, addresses relative to this page (root-relative
    for a page served at any address, like 404.html)."""
    publication = site.publication
    settings = publication.settings

    root = urlsplit(site.base_url).path or "/"

    def url(target: str) -> str:
        # root-relative for a page served at any address (404.html): same host, any depth
        return root + target if absolute else relative(target, path)

    def static(name: str) -> str:  # a theme file's fingerprinted address, from this page
        return url(theme.static_path(name))

    def shown_date(value: dt.date | None) -> str:  # templates' ``format_date``, in the site's language
        return format_date(value, theme)

    return {
        "site": settings,
        "page": {"path": path, "title": title, "kind": kind,
                 "canonical": site.base_url + ("" if path == "index.html" else path)},
        "url": url,
        "static": static,
        "nav_bases": [{"title": b.title, "url": url(base_path(s))} for s, b in publication.bases.items()],
        "nav_notebooks": [{"title": nb.title, "url": url(notebook_path(s))}
                          for s, nb in publication.notebooks.items()],
        "format_date": shown_date,
        "home_url": url("index.html"),
        "meta": page_metadata(site, path, title, kind),
    }


def ordered_notes(site: SiteModel, notebook: str) -> list[Note]:
    """A notebook's notes in listing order (:attr:`SiteModel.listings`)."""
    return list(site.listings.get(notebook, ()))


RELATED_CATEGORIES = 10
"""How many of a note's other categories its entry on a category page names; the rest are
counted, with a link to the note's page, which names them all (as the notebook page does). A
note in k categories is listed on k category pages: naming them all there made k² links."""


def note_summary(site: SiteModel, theme: Theme, note: Note, notebook: str,
                 url: Callable[[str], str], besides: tuple[str, str] | None = None) -> dict[str, Any]:
    """A note's entry in a listing of ``notebook``: with all its categories there, or on the
    page of the category ``besides`` (axis key, name) at most :data:`RELATED_CATEGORIES` of
    the others and how many more (each entry stays the same size whatever the note's count)."""
    membership = note.membership(notebook)
    nb = site.publication.notebooks[notebook]
    categories = []
    more = 0
    if membership:
        pairs: Iterable[tuple[str, str]] = (
            (axis.key, category) for axis in nb.axes for category in membership.categories.get(axis.key, ()))
        if besides is not None:
            distinct = _distinct_categories(site, note, notebook)
            pairs = itertools.islice((pair for pair in distinct if pair != besides), RELATED_CATEGORIES)
            more = max(0, len(distinct) - 1 - RELATED_CATEGORIES)  # the page's own is one of them
        titles = {axis.key: axis.title for axis in nb.axes}
        for key, category in pairs:
            categories.append({"axis": titles[key], "axis_key": key, "name": category,
                               "url": url(category_path(notebook, key, category))})
    return {
        "slug": note.slug,
        "title": note.title,
        "url": url(note_path(note.slug)) + f"?nb={notebook}",
        "date": note.date,
        "type": note.type.value,
        "type_label": theme.tr(f"note_type_{note.type.value}"),
        "summary": note.summary,
        "pinned": note.slug in nb.pinned,
        "categories": categories,
        "more_categories": more,
        "extractions": len(note.extractions),
        "comments": sum(len(e.comments) for e in note.extractions),
        "authors": [site.publication.name(note.slug, author) for author in note.authors],
        "act": act_summary(site, theme, note.slug, url),
    }


def _distinct_categories(site: SiteModel, note: Note, notebook: str) -> list[tuple[str, str]]:
    """A note's categories in ``notebook`` in the notebook's order, each once (a note may name one twice)."""
    membership = note.membership(notebook)
    assert membership is not None, f"{note.slug} is not in notebook {notebook}"
    return list(dict.fromkeys((axis.key, category) for axis in site.publication.notebooks[notebook].axes
                              for category in membership.categories.get(axis.key, ())))


def act_summary(site: SiteModel, theme: Theme, slug: str, url: Callable[[str], str]) -> dict[str, Any] | None:
    audit = site.articles.get(slug)
    if audit is None:
        return None
    note = site.publication.notes[slug]
    article: ArticleSpec | None = note.article  # Note.article is typed Any; it holds an ArticleSpec or None
    adoption = article.adoption if article else None
    published = site.publication.notes
    return {
        "status": audit.status, "label": theme.tr(f"status_{audit.status}"),
        "adopted": adoption.date if adoption else None, "by": adoption.by if adoption else "",
        "supersedes": ({"title": published[audit.supersedes].title, "url": url(note_path(audit.supersedes))}
                       if audit.supersedes in published else None),
        "superseded_by": [{"title": published[s].title, "url": url(note_path(s))}
                          for s in audit.superseded_by if s in published],
    }


def home_context(site: SiteModel, theme: Theme) -> dict[str, Any]:
    ctx = common(site, theme, "index.html", site.publication.settings.title, "home")
    url = ctx["url"]
    publication = site.publication
    in_bases = {nb for base in publication.bases.values() for nb in base.notebooks}
    ctx["bases"] = [
        {"title": b.title, "description": b.description, "url": url(base_path(s)),
         "notebooks": [_notebook_card(site, nb, url) for nb in b.notebooks]}
        for s, b in publication.bases.items()
    ]
    ctx["loose_notebooks"] = [_notebook_card(site, s, url) for s in publication.notebooks if s not in in_bases]
    return ctx


def _notebook_card(site: SiteModel, slug: str, url: Callable[[str], str]) -> dict[str, Any]:
    nb = site.publication.notebooks[slug]
    notes = site.notes_of(slug)
    return {"title": nb.title, "description": nb.description, "url": url(notebook_path(slug)),
            "notes": sum(n.type is NoteType.NOTE for n in notes),
            "articles": sum(n.type is not NoteType.NOTE for n in notes)}


def base_context(site: SiteModel, theme: Theme, slug: str) -> dict[str, Any]:
    base = site.publication.bases[slug]
    path = base_path(slug)
    ctx = common(site, theme, path, base.title, "base")
    url = ctx["url"]
    ctx["base"] = {"title": base.title, "description": base.description,
                   "notebooks": [_notebook_card(site, nb, url) for nb in base.notebooks]}
    return ctx


def _member_categories(note: Note, notebook: str, axis_key: str) -> tuple[str, ...]:
    """A note's categories on one axis of ``notebook``, for a note listed in it: the
    notes come from ``notes_of``/``ordered_notes``, members only, so the membership is there."""
    membership = note.membership(notebook)
    assert membership is not None, f"{note.slug} is not in notebook {notebook}"
    return membership.categories.get(axis_key, ())


def _facets(site: SiteModel, notebook: str, url: Callable[[str], str], notes: list[Note]) -> list[dict[str, Any]]:
    nb = site.publication.notebooks[notebook]
    facets = []
    for axis in nb.axes:
        entries = []
        for category in axis.categories:
            count = sum(category in _member_categories(n, notebook, axis.key) for n in notes)
            entries.append({"name": category, "count": count,
                            "url": url(category_path(notebook, axis.key, category))})
        facets.append({"key": axis.key, "title": axis.title, "categories": entries})
    return facets


def notebook_context(site: SiteModel, theme: Theme, slug: str) -> dict[str, Any]:
    nb = site.publication.notebooks[slug]
    path = notebook_path(slug)
    ctx = common(site, theme, path, nb.title, "notebook")
    url = ctx["url"]
    notes = ordered_notes(site, slug)
    ctx["notebook"] = {
        "slug": slug, "title": nb.title, "description": nb.description, "writing_guide": nb.writing_guide,
        "author_rule": nb.author_rule.value,
        "bases": [{"title": site.publication.bases[b].title, "url": url(base_path(b))}
                  for b in site.bases_of(slug)],
    }
    ctx["facets"] = _facets(site, slug, url, notes)
    ctx["notes"] = [note_summary(site, theme, n, slug, url) for n in notes if n.type is NoteType.NOTE]
    ctx["wikis"] = [note_summary(site, theme, n, slug, url) for n in notes if n.type is NoteType.WIKI]
    ctx["syntheses"] = [note_summary(site, theme, n, slug, url) for n in notes if n.type is NoteType.SYNTHESIS]
    ctx["answers"] = [note_summary(site, theme, n, slug, url) for n in notes if n.type is NoteType.ANSWER]
    return ctx


def answer_context(site: SiteModel, theme: Theme, note: Note) -> dict[str, Any] | None:
    """What a saved answer's page says of the asking: the question, how the passages reached
    the model, the notebooks searched (the public ones), who answered and what it cost."""
    spec: ArticleSpec | None = note.article
    record = spec.answer if spec else None
    if record is None:
        return None
    provenance = record.provenance
    raw_usage = provenance.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    return {
        "question": record.question,
        "not_in_corpus": record.not_in_corpus,
        "mode": theme.tr(f"answer_mode_{record.mode}"),
        "searched": searched_titles(site, record),
        "categories": [f"{axis} = {value}" for axis, value in record.categories],
        "method_label": answered_by(theme, record),
        "model": str(provenance.get("model", "")),
        "tokens": sum(int(v) for k, v in usage.items() if k in ("prompt_tokens", "completion_tokens")
                      and isinstance(v, int) and not isinstance(v, bool)),
        "retrieved": len(record.retrieved),
        # a refusal the theme has no words for is shown as written (the file is hand-editable)
        "refused": [{"quote": r.quote, "reason": theme.tr(key) if (key := f"refusal_{r.refusal.replace('-', '_')}")
                     in theme.strings else r.refusal} for r in record.refused],
    }


def searched_titles(site: SiteModel, record: AnswerRecord) -> list[str]:
    """The public notebooks an answer searched, by title (a private one is named nowhere)."""
    notebooks = site.publication.notebooks
    return [notebooks[nb].title for nb in record.searched if nb in notebooks]


def answered_by(theme: Theme, record: AnswerRecord) -> str:
    """Who answered, in the site's words (a method the theme does not know, as written)."""
    return method_label(theme, record.provenance.get("method", ""))


def method_label(theme: Theme, method: object) -> str:
    """A provenance's method (llm, scripted, human…) in the site's words, never the record's
    raw value ("méthode human"); one the theme does not know, as written."""
    text = str(method)
    return theme.tr(f"method_{text}") if text in {str(m) for m in Method} else text


def category_notes(site: SiteModel, notebook: str, axis_key: str, category: str) -> list[Note]:
    """The notes a category page lists, in the notebook's order (:attr:`SiteModel.category_members`)."""
    return list(site.category_members.get((notebook, axis_key), {}).get(category, ()))


def category_context(site: SiteModel, theme: Theme, notebook: str, axis_key: str, category: str) -> dict[str, Any]:
    nb = site.publication.notebooks[notebook]
    axis = nb.axis(axis_key)
    assert axis is not None
    path = category_path(notebook, axis_key, category)
    ctx = common(site, theme, path, f"{category} — {nb.title}", "category")
    url = ctx["url"]
    notes = category_notes(site, notebook, axis_key, category)
    ctx["notebook"] = {"title": nb.title, "url": url(notebook_path(notebook))}
    ctx["axis"] = {"title": axis.title}
    ctx["category"] = category
    ctx["notes"] = [note_summary(site, theme, n, notebook, url, (axis_key, category)) for n in notes]
    return ctx


@dataclass(frozen=True, eq=False)
class BodyWork:
    """A note's body to render (:func:`note_context`).

    Attributes:
        state: everything its HTML reads.
        template: its body rendered already with links left as holes, by the worker process
            that parsed it (``None``: rendered from its tokens).
        inputs: what its HTML is a function of (what a build cache recalls it by).
    """

    state: RenderState
    template: BodyTemplate | None
    inputs: tuple[object, ...]

    def render(self) -> str:
        return fill_body(self.template, self.state) if self.template is not None else render_body(self.state)


BodyRenderer = Callable[[BodyWork], str]
"""``body_of(work)`` is ``work.render()``, made however the caller likes (a build recalls it)."""


def note_context(site: SiteModel, theme: Theme, slug: str, body_of: BodyRenderer = BodyWork.render) -> dict[str, Any]:
    publication = site.publication
    note = publication.notes[slug]
    path = note_path(slug)
    ctx = common(site, theme, path, note.title, "note")
    url = ctx["url"]
    anchored = site.anchored[slug]
    def name(person: str) -> str:  # a person as the note's notebook rule shows them
        return publication.name(slug, person)

    contexts = []
    for membership in note.memberships:
        nb = publication.notebooks[membership.notebook]
        bases = site.bases_of(nb.slug)
        categories = []
        for axis in nb.axes:
            values = membership.categories.get(axis.key, ())
            if values:
                categories.append({"axis": axis.title, "facet": search_facet(nb.slug, axis.key), "entries": [
                    {"name": v, "url": url(category_path(nb.slug, axis.key, v))} for v in values]})
        contexts.append({
            "slug": nb.slug, "title": nb.title, "url": url(notebook_path(nb.slug)),
            "note_url": url(path) + f"?nb={nb.slug}",
            "base": ({"title": publication.bases[bases[0]].title, "url": url(base_path(bases[0]))}
                     if bases else None),
            "categories": categories,
        })

    extractions: list[dict[str, Any]] = []  # template rows; "cited_by" is added below
    # worded here, each once per value: a call from the template per extraction and comment cost more
    dated = functools.cache(functools.partial(format_date, theme=theme))
    marked_by = functools.cache(lambda author: theme.tr("marked_by", author=author))
    marks = note_marks(note.extractions, anchored.anchors)
    elements = anchored.document.elements
    for extraction in note.extractions:
        anchor = anchored.anchors[extraction.id]
        timing = time_range(elements, anchor, note.duration) if note.media else None
        extractions.append({
            "id": extraction.id, "quote": extraction.quote, "kind": extraction.kind,
            "author": name(extraction.author), "date": extraction.date,
            "marked_by": marked_by(name(extraction.author)), "date_label": dated(extraction.date),
            "datetime": extraction.date.isoformat() if extraction.date else "",
            "anchored": anchor.status.is_live, "status": anchor.status.value,
            "target": f"#ext-{extraction.id}" if anchor.status.is_live else None,
            "detached_reason": ("" if anchor.status.is_live else
                                theme.tr("detached_not_found" if anchor.candidates == 0 else "detached_ambiguous")),
            "relocated": ({"found": anchor.found, "diff": anchor.diff}
                          if anchor.status is AnchorStatus.RELOCATED else None),
            "time": ({"start": timing.start, "end": timing.end,
                      "label": format_time(int(timing.start)) + (f"–{format_time(int(timing.end))}"
                                                                  if timing.end is not None else "")}
                     if timing else None),
            "disagreements": extraction.disagreements,
            "comments": [{
                "id": c.id, "author": name(c.author), "date": c.date, "stance": c.stance,
                "date_label": dated(c.date), "datetime": c.date.isoformat(),
                "stance_label": theme.tr(f"stance_{c.stance}"),
                "text": None if c.withdrawn else c.text,
                "withdrawn": ({"date": c.withdrawn.date, "reason": c.withdrawn.reason, "sha256": c.text_sha256}
                              if c.withdrawn else None),
            } for c in sorted(extraction.comments, key=lambda c: (c.date, c.id))],
        })

    hrefs = {(use.raw, use.wiki): link_href(site, theme, target, path) for use, target in site.links.get(slug, [])}
    unchecked = Href(None, title=theme.tr("link_unchecked"))

    def resolve(raw: str, wiki: bool) -> Href:
        return hrefs.get((raw, wiki), unchecked)

    covered = site.coverage[slug]
    audit = site.articles.get(slug)
    citations = citation_views(site, theme, audit, path) if audit else {}
    after_inline = unsourced_marks(theme, audit) if audit else {}
    raw_html = raw_html_on(site.publication.settings)
    state = RenderState(anchored, marks, resolve, covered=covered.covered, citations=citations,
                        after_inline=after_inline, raw_html=raw_html)
    # the body's HTML is a function of its text and of these resolved inputs only
    body = body_of(BodyWork(state, site.body_templates.get(slug), (
        note.body, note.body_line, note.media is not None, sorted(marks.items()), sorted(hrefs.items()), unchecked,
        sorted(covered.covered), sorted(citations.items()), sorted(after_inline.items()), raw_html)))
    for entry in extractions:
        entry["cited_by"] = [{"title": title, "url": url(note_path(a)), "count": count}
                             for a, title, count in cited_by(site, entry["id"])]
    media = None
    if note.media:
        extension = posixpath.splitext(note.media)[1].lower()
        # the path as a URL: a space or a '#' in a file name would cut the address
        media = {"url": url(quote(note.media)), "kind": MEDIA_TYPES.get(extension, "file"),
                 "name": posixpath.basename(note.media)}
    document = anchored.document
    headings = [(index, e) for index, e in enumerate(elements) if e.kind == "heading" and e.level in (2, 3)]
    toc = [{"level": e.level, "text": e.text, "href": f"#{document.heading_ids[index]}"} for index, e in headings]
    ctx["note"] = {
        "slug": slug, "title": note.title, "type": note.type.value,
        "type_label": theme.tr(f"note_type_{note.type.value}"),
        "toc": toc if len(toc) >= 3 else [],
        "turns": sum(e.kind == "turn" for e in elements),
        "coverage": {"covered": covered.count, "total": covered.total},
        "annotations_url": url(annotations_path(slug)),
        "audit": audit_context(site, theme, audit, path) if audit else None,
        "answer": answer_context(site, theme, note) if note.type is NoteType.ANSWER else None,
        "local_graph": local_graph(site, theme, slug),
        "text_url": url(text_path(slug)),
        "date": note.date, "authors": [name(a) for a in note.authors], "summary": note.summary,
        "body": body, "media": media, "contexts": contexts, "extractions": extractions,
        "element_count": len(elements),
        "backlinks": [{"title": publication.notes[b].title, "url": url(note_path(b)), "date": publication.notes[b].date}
                      for b in site.backlinks.get(slug, [])],
        "author_rule": publication.notebooks[publication.governing[slug]].author_rule.value,
        # a stricter rule than some of its notebooks': said, with whose it is (shared membership)
        "author_rule_from": publication.notebooks[publication.governing[slug]].title,
        "author_rule_laxer": theme.tr("list_separator").join(
            theme.tr("quoted", text=publication.notebooks[nb].title) for nb in publication.laxer.get(slug, ())),
    }
    return ctx


def _worded_reason(theme: Theme, decision: OperationDecision | None,
                   redact: Callable[[str], str]) -> dict[str, str]:
    """Why ``carnet apply`` refused an operation, in the site's language when the record
    says which reason it was (its code and values); else its English text, marked as such."""
    if decision is None or not decision.reason:
        return {"reason": "", "reason_lang": ""}
    key = "rejection_" + decision.reason_code.replace("-", "_")
    if decision.reason_code and key in theme.strings:
        try:
            return {"reason": redact(theme.tr(key, **dict(decision.reason_values))), "reason_lang": ""}
        except (KeyError, IndexError, ValueError):  # values the wording does not take: the recorded text
            pass
    english = "" if theme.language.split("-")[0] == "en" else "en"
    return {"reason": redact(decision.reason), "reason_lang": english}


def search_facet(notebook: str, axis: str) -> str:
    """The search filter of one notebook's axis (each axis its own facet)."""
    return f"axis.{notebook}.{axis}"


def search_facets(site: SiteModel, theme: Theme) -> list[tuple[str, str]]:
    """The search page's facets in order, each (filter key, label in the site's language):
    notebook, type, verification state, then each public notebook's axes."""
    facets = [("notebook", theme.tr("facet_notebook")), ("type", theme.tr("facet_type")),
              ("state", theme.tr("facet_state"))]
    for nb in site.publication.notebooks.values():
        facets += [(search_facet(nb.slug, axis.key), theme.tr("facet_axis", axis=axis.title, notebook=nb.title))
                   for axis in nb.axes]
    return facets


def cited_by(site: SiteModel, extraction: str) -> list[tuple[str, str, int]]:
    """The published articles citing an extraction: (slug, title, how many times)."""
    return [(a, site.publication.notes[a].title,
             sum(1 for link in site.articles[a].links
                 if link.extraction == extraction and link.marker.kind is WikiKind.EXT and not link.broken))
            for a in site.reuse.get(extraction, [])]


def _preview(site: SiteModel, theme: Theme, note_slug: str, extraction_id: str, quote: str) -> dict[str, str]:
    note = site.publication.notes.get(note_slug)
    extraction = next((e for e in note.extractions if e.id == extraction_id), None) if note else None
    live = extraction.live_comments if extraction else []
    disagreements = extraction.disagreements if extraction else 0
    return {
        "quote": quote,
        "note": note.title if note else "",
        "date": format_date(note.date, theme) if note and note.date else "",
        "comments": theme.tr("count_comments", n=len(live)),
        "debate": theme.tr("disagreements", n=disagreements) if disagreements else "",
    }


def citation_views(site: SiteModel, theme: Theme, audit: ArticleAudit, page: str
                   ) -> dict[tuple[int, int], CitationView]:
    """How each marker of an article shows: number, link to its passage, preview data,
    and, after the last marker of each claim's group, the claim's contest link."""
    views: dict[tuple[int, int], CitationView] = {}
    published = site.publication.notes
    contest = site.publication.settings.contest_url
    last_of_claim = {link.claim: (link.marker.inline, link.marker.child) for link in audit.links}
    assessed = {(a.link.marker.inline, a.link.marker.child): a for a in site.assessments.get(audit.slug, [])}
    for link in audit.links:
        key = (link.marker.inline, link.marker.child)
        assessment = assessed.get(key)
        state = _state_preview(theme, assessment, lambda person: _shown_name(site, audit.slug, person)) \
            if assessment else {}
        number = audit.numbers.get((link.marker.kind, link.marker.key))
        after = ""
        if last_of_claim[link.claim] == key:  # the claim's anchor (and contest link) follow its group
            href = _contest_href(site, audit.slug, page, link.claim) if contest else None
            # the contest link lives inside the (empty) claim anchor, out of the line's flow: it takes no
            # room until shown, and the punctuation after the citation stays against it
            inner = (f'<a class="contest" href="{escape(href)}" data-claim="{escape(link.claim)}" '
                     f'title="{escape(theme.tr("contest_title"))}">{escape(theme.tr("contest"))}</a>') if href else ""
            after = f'<span class="claim-end" id="{escape(link.claim)}" data-pagefind-ignore>{inner}</span>'
        if link.broken == "unknown":  # a source that no longer exists: "source deleted", and broken
            reason = f'{theme.tr("source_deleted")} — {theme.tr("citation_broken_unknown")}'
            views[key] = CitationView(None, None, reason, state, "citation deleted broken state-unsourced", after,
                                      label=theme.tr("source_deleted"))
            continue
        if link.broken:
            reason = theme.tr(f"citation_broken_{link.broken}")
            views[key] = CitationView(None, None, reason, state, "citation broken state-unsourced", after)
            continue
        if link.marker.kind is WikiKind.QUOTE:
            views[key] = _quote_view(site, theme, link, number, state, after, page, assessment)
            continue
        source = published.get(link.note)
        extraction = next((e for e in source.extractions if e.id == link.extraction), None) if source else None
        if link.state is SourceState.DELETED or extraction is None:
            frozen = audit_frozen_quote(site, audit.slug, link.extraction)
            views[key] = CitationView(number, None, theme.tr("source_deleted"),
                                      {"quote": frozen, "note": theme.tr("source_deleted"), **state},
                                      "citation deleted state-unsourced", after)
            continue
        if link.marker.kind is WikiKind.COM:
            fragment = f"com-{link.marker.key}"
        elif link.state is SourceState.PRESENT:
            fragment = f"ext-{link.extraction}"
        else:
            fragment = f"entry-{link.extraction}"
        preview = dict(_preview(site, theme, link.note, link.extraction, extraction.quote), **state)
        if link.marker.kind is WikiKind.COM:
            comment = next(c for c in extraction.comments if c.id == link.marker.key)
            preview["quote"] = comment.text or theme.tr("comment_withdrawn")
            preview["kind"] = theme.tr("debate_sourced")
        title = theme.tr("citation_title", note=preview["note"])
        if preview["debate"]:  # INV-8: the debate on the evidence rises to the citation
            title += f" — {preview['debate']}"
        css = "citation" + ("" if link.state is SourceState.PRESENT else f" {link.state}") + \
            (" debate" if link.marker.kind is WikiKind.COM else "") + (" disputed" if preview["debate"] else "") + \
            _state_class(assessment)
        views[key] = CitationView(number, relative(f"{note_path(link.note)}#{fragment}", page), title, preview, css,
                                  after)
    return views


def _state_class(assessment: Assessment | None) -> str:
    """The pair's state and reason as CSS classes of its citation ("" with no pair)."""
    return f" state-{assessment.state.state} reason-{assessment.state.reason}" if assessment else ""


def _quote_view(site: SiteModel, theme: Theme, link: CitationLink, number: int | None, state: dict[str, str],
                after: str, page: str, assessment: Assessment | None) -> CitationView:
    """A saved answer's citation: the note's own words where the quote lands now, or why
    there is nothing to land on (the note unpublished, or changed past the quote)."""
    source = site.publication.notes.get(link.note)
    if source is None:  # neither its words nor its address: the note is no longer public (INV-12)
        return CitationView(number, None, theme.tr("link_source_unpublished"), state,
                            "citation deleted state-unsourced", after, label=theme.tr("link_source_unpublished"))
    if link.state is not SourceState.PRESENT:  # no longer lands: its note's page, and why
        return CitationView(number, relative(note_path(link.note), page), theme.tr("quote_detached"),
                            {"quote": "", "note": source.title, **state},
                            f"citation {link.state}" + _state_class(assessment), after)
    preview = {"quote": link.text, "note": source.title,
               "date": format_date(source.date, theme) if source.date else "", "comments": "", "debate": "", **state}
    return CitationView(number, relative_address(source_address(link), page),
                        theme.tr("citation_title", note=source.title), preview,
                        "citation quote" + _state_class(assessment), after)


def unsourced_marks(theme: Theme, audit: ArticleAudit) -> dict[int, str]:
    """An unsourced claim is marked where it is read, at the end of its text: discreet,
    saying why, and leading to the panel that counts it (its anchor is the mark)."""
    marks: dict[int, str] = {}  # inline index → the mark's HTML
    for claim in audit.claims:
        if not claim.sourced and claim.inline >= 0:
            marks[claim.inline] = (f'<sup class="unsourced-claim" id="{escape(claim.id)}" data-pagefind-ignore>'
                                   f'<a href="#verification" title="{escape(theme.tr("unsourced_mark_title"))}">'
                                   f'{escape(theme.tr("unsourced_mark"))}</a></sup>')
    return marks


def _contest_href(site: SiteModel, article: str, page: str, claim: str) -> str | None:
    template = site.publication.settings.contest_url
    if not template:
        return None
    canonical = site.base_url + page
    return (template.replace("{claim}", quote(claim)).replace("{page}", quote(canonical, safe=""))
            .replace("{title}", quote(site.publication.notes[article].title)))


def _shown_name(site: SiteModel, article: str, person: str) -> str:
    """A person as the article's notebook rule shows them; unknown to it: nobody named."""
    shown = site.publication.name(article, person)
    return "" if shown == "?" else shown


def _state_preview(theme: Theme, assessment: Assessment, display: Callable[[str], str]) -> dict[str, str]:
    """The pair's state for the evidence panel: what was checked, by what, and what
    that does not establish (INV-7). People are named by the notebook's rule."""
    pair = assessment.state
    verifier = pair.verifier
    if verifier.method is not Method.BUILD:
        # a model is named; a person judging a verdict is not (only who contests is, by the rule)
        who = verifier.model or (display(verifier.author) if verifier.author else "")
        provenance = theme.tr("state_by", method=theme.tr(f"method_{verifier.method}"),
                              who=f" ({who})" if who else "", date=verifier.date)
    else:
        provenance = theme.tr("state_by_build")
    details = {
        "state": theme.tr(f"state_{pair.state}"),
        "state-reason": theme.tr(f"reason_{pair.reason.replace('-', '_')}"),
        "provenance": provenance,
        "limit": theme.tr(f"limit_{pair.state.replace('-', '_')}"),
    }
    if pair.contestation is not None:
        details["state-reason"] += f" — {pair.contestation.reason}"
    elif pair.verdict is not None and pair.verdict.rationale:
        details["state-reason"] += f" — {pair.verdict.rationale}"
    if verifier.accuracy is not None:  # a qualified judge: how well it was measured to judge
        details["provenance"] += " " + theme.tr("judge_accuracy", accuracy=accuracy_text(theme, verifier.accuracy))
    suggestion = suggestion_text(theme, pair)
    if suggestion:
        details["suggestion"] = suggestion
    return details


SUGGESTED_RATIONALE_CHARS = 300
"""Longest rationale of a suggestion shown in a preview (the rest is cut, with "…")."""


def accuracy_text(theme: Theme, value: float) -> str:
    """A balanced accuracy as the site's language writes a decimal (0,41 / 0.41)."""
    return f"{value:.2f}".replace(".", theme.tr("decimal_mark"))


def suggestion_text(theme: Theme, pair: PairState) -> str:
    """What a model suggested for a pair whose state it did not change (its judge does not
    qualify), with the judge's measured accuracy or that it was never calibrated; "" for
    any other pair."""
    verdict, judge = pair.suggestion, pair.judge
    if verdict is None or judge is None:
        return ""
    rationale = " ".join(verdict.rationale.split())
    if len(rationale) > SUGGESTED_RATIONALE_CHARS:
        rationale = rationale[:SUGGESTED_RATIONALE_CHARS].rstrip() + "…"
    values = {"model": judge.model or "?", "date": verdict.date or "?", "verdict": theme.tr(f"verdict_{verdict.verdict}"),
              "rationale": f" — {rationale.rstrip('.')}" if rationale else "",
              "bar": accuracy_text(theme, judge.bar)}
    if judge.accuracy is None:
        return theme.tr("suggestion_never_calibrated", **values)
    return theme.tr("suggestion_unqualified", accuracy=accuracy_text(theme, judge.accuracy), **values)


def audit_frozen_quote(site: SiteModel, article: str, extraction_id: str) -> str:
    note = site.publication.notes[article]
    article_spec: ArticleSpec | None = note.article  # Note.article is typed Any; it holds an ArticleSpec or None
    recorded: RecordedPerimeter | None = article_spec.recorded if article_spec else None
    if recorded:
        for item in recorded.extractions:
            if item.id == extraction_id:
                return item.quote
    return ""


def anchoring_view(site: SiteModel, theme: Theme, note: str, extraction: str) -> dict[str, str] | None:
    """An extraction's anchoring state as its note page shows it, for every list quoting it
    (discarded evidence, selection): ``None`` when it lands where it was quoted, else
    ``{"state": "relocated", "diff"}`` (the words changed, from the anchoring core) or
    ``{"state": "detached", "reason"}``; the template ``_anchoring.html`` renders it."""
    anchored = site.anchored.get(note)
    anchor = anchored.anchors.get(extraction) if anchored else None
    if anchor is None or anchor.status is AnchorStatus.ANCHORED:
        return None
    if anchor.status is AnchorStatus.RELOCATED:
        return {"state": "relocated", "diff": anchor.diff}
    return {"state": "detached",
            "reason": theme.tr("detached_not_found" if anchor.candidates == 0 else "detached_ambiguous")}


def _quiet_by_note(discarded: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The discarded items nobody commented, by note (their note's categories said once),
    notes in the order their first item comes: at 1,700 extractions, a flat list with every
    item's chips weighed a megabyte. The debated ones stay first, each shown whole."""
    groups: dict[str, dict[str, Any]] = {}
    for item in discarded or []:
        if item["comments"] or item["disagreements"]:
            continue
        # by the note itself, not its title: two notes may bear one title
        group = groups.setdefault(item["slug"], {"slug": item["slug"], "note": item["note"],
                                                 "categories": item["categories"], "passages": []})
        group["passages"].append(item)
    return list(groups.values())


def discarded_context(site: SiteModel, theme: Theme, audit: ArticleAudit, page: str) -> dict[str, Any]:
    """An article's discarded evidence as its panels show it, with links relative to
    ``page``: ``discarded`` (every item, ``None`` for an unknown perimeter), ``debated``
    (items with comments, each shown whole), ``quiet`` (the rest, by note) and ``pages``:
    ``None`` when the panel fits in the article's page, else the pages of their own it goes
    on (:func:`discarded_paging`)."""
    publication = site.publication
    note = publication.notes[audit.slug]
    article: ArticleSpec | None = note.article  # Note.article is typed Any; it holds an ArticleSpec or None
    spec: PerimeterSpec | None = article.perimeter if article else None
    notebook_slug = spec.notebook if spec else (note.memberships[0].notebook if note.memberships else "")
    if audit.discarded is None:
        return {"discarded": None, "debated": [], "quiet": [], "quiet_count": 0, "pages": None}
    discarded = []
    # what an item shows of its note, found once per note: a perimeter's notes each leave
    # many items (250,000 at 50,000 extractions and 100 wikis)
    of_note: dict[str, tuple[Note | None, list[str], str]] = {}
    gone = functools.cache(lambda passage: theme.tr("discarded_passage_gone" if passage else "discarded_deleted"))
    counts = counts_worded(theme)
    for item in audit.discarded:
        if item.note not in of_note:
            source = publication.notes.get(item.note)
            membership = source.membership(notebook_slug) if source else None
            of_note[item.note] = (source, [c for values in membership.categories.values() for c in values]
                                  if membership else [], relative(note_path(item.note), page))
        source, categories, address = of_note[item.note]
        discarded.append({
            # a passage of a note no longer published is not shown (INV-12)
            "id": item.extraction, "quote": item.quote if source or not item.passage else "",
            "exists": item.exists, "slug": item.note,
            "deleted": gone(bool(item.passage)),
            "note": source.title if source else item.note,
            "url": address + "#" + discarded_fragment(item, site.statuses) if source and item.exists else None,
            "categories": list(categories), "comments": item.comments, "disagreements": item.disagreements,
            "anchoring": None if item.passage or not source else anchoring_view(site, theme, item.note, item.extraction),
            **counts(item.comments, item.disagreements),
        })
    debated = [d for d in discarded if d["comments"] or d["disagreements"]]
    quiet = _quiet_by_note(discarded)
    return {"discarded": discarded, "debated": debated, "quiet": quiet,
            "quiet_count": sum(len(group["passages"]) for group in quiet),
            "pages": discarded_paging(site, audit.slug, debated, quiet, page)}


def _debated_weight(item: dict[str, Any]) -> int:
    return paging.weight(item["quote"], item["note"], *item["categories"]) + 60


def _quiet_weight(group: dict[str, Any]) -> int:
    return paging.weight(group["note"], *group["categories"]) + sum(paging.weight(d["quote"]) for d in group["passages"])


def discarded_paging(site: SiteModel, slug: str, debated: list[dict[str, Any]], quiet: list[dict[str, Any]],
                     page: str) -> list[dict[str, Any]] | None:
    """``None`` when the discarded items fit in the article's page (their estimated weight
    under the page budget itself, raw: a third of what the page may weigh once gzipped),
    else their pages of their own: debated items first, then the quiet ones by note (a
    note's items never split), each page ``{"number", "url" (relative to ``page``),
    "debated", "start" (the number of its first debated item), "quiet", "count"}``, the
    whole list enumerated over them."""
    budget = paging.page_budget(site)
    units: list[tuple[str, dict[str, Any]]] = [("debated", d) for d in debated] + [("quiet", g) for g in quiet]
    total = sum(_debated_weight(u) if kind == "debated" else _quiet_weight(u) for kind, u in units)
    if total <= budget:
        return None
    split = paging.split(units, lambda unit: _debated_weight(unit[1]) if unit[0] == "debated" else _quiet_weight(unit[1]),
                         paging.capacity(budget))
    pages = []
    start = 1  # the debated items are numbered on from one page to the next
    for number, part in enumerate(split, start=1):
        on_page = {"debated": [u for kind, u in part if kind == "debated"],
                   "quiet": [u for kind, u in part if kind == "quiet"]}
        pages.append({"number": number, "url": relative(discarded_path(slug, number), page), **on_page,
                      "start": start,
                      "count": len(on_page["debated"]) + sum(len(g["passages"]) for g in on_page["quiet"])})
        start += len(on_page["debated"])
    return pages


def _by_note(debated: list[dict[str, Any]], quiet: list[dict[str, Any]],
             pages: list[dict[str, Any]], dated: Callable[[str], dt.date | None]) -> list[dict[str, Any]]:
    """Where each note's discarded items are, for the article's page when they are on pages
    of their own: ``{"note", "count", "url"}`` (its first page with them), notes by date
    (``dated``: a note's date, undated ones last), then title: the debate's order read as random."""
    first: dict[str, str] = {}
    for page in pages:
        for d in page["debated"]:
            first.setdefault(d["slug"], f"{page['url']}#discarded-{d['id']}")
        for g in page["quiet"]:
            first.setdefault(g["slug"], f"{page['url']}#discarded-note-{g['slug']}")
    counts: dict[str, int] = {}
    titles: dict[str, str] = {}
    for d in debated:
        counts[d["slug"]] = counts.get(d["slug"], 0) + 1
        titles[d["slug"]] = d["note"]
    for g in quiet:
        counts[g["slug"]] = counts.get(g["slug"], 0) + len(g["passages"])
        titles[g["slug"]] = g["note"]
    def order(slug: str) -> tuple[bool, dt.date, str, str]:
        date = dated(slug)
        return (date is None, date or dt.date.min, titles[slug], slug)

    return [{"note": titles[slug], "count": counts[slug], "url": first[slug]} for slug in sorted(counts, key=order)]


def discarded_pages(site: SiteModel, theme: Theme, slug: str) -> list[tuple[str, dict[str, Any]]]:
    """The pages of their own of an article's discarded evidence, ``(path, context)`` each;
    none when it fits in the article's page (:func:`discarded_paging`)."""
    audit = site.articles.get(slug)
    if audit is None or slug not in site.publication.notes:
        return []
    first = discarded_path(slug)
    discarded = discarded_context(site, theme, audit, first)  # every page is in notes/, as the first: one set of links
    if not discarded["pages"]:
        return []
    wiki = site.publication.notes[slug]
    result = []
    for page in discarded["pages"]:
        path = discarded_path(slug, page["number"])
        ctx = common(site, theme, path, theme.tr("discarded_title", title=wiki.title), "discarded")
        ctx.update({
            "wiki": {"title": wiki.title, "url": relative(note_path(slug), path) + "#discarded"},
            "total": len(discarded["discarded"]), "debated": len(discarded["debated"]),
            "perimeter": theme.tr(f"perimeter_{audit.perimeter_source}", notes=len(audit.perimeter_notes or []),
                                  extractions=len(audit.perimeter_extractions or [])),
            "pages": discarded["pages"], "current": page,
        })
        result.append((path, ctx))
    return result


def proposal_history(proposals: list[Proposal], body: str, theme: Theme,
                     redact: Callable[[str], str]) -> list[dict[str, Any]]:
    """The proposals made to an article (its markdown ``body``), as the audit panel shows them:
    every operation as a decision (its kind, the decision and its reason, when and by whom or
    what it was proposed), the text of an accepted operation only. A pending proposal and a
    rejected or unchosen operation publish none of their text: not the section text, nor a
    heading the article does not have (a new section's title is text too), nor that heading
    quoted in the reason; nobody accepted it, and a model may have written it about a source
    that is not published (issue 56)."""
    if not proposals:
        return []
    headings = {s.heading for s in sections(body) if s.heading is not None}
    history = []
    for proposal in proposals:
        decided = {d.index: d for d in proposal.decisions}
        operations = []
        for index, op in enumerate(proposal.operations):
            decision = decided.get(index)
            state = decision.decision if decision else "pending"
            accepted = state == "accepted"
            # the headings the operation names that are not the article's: never shown unaccepted
            unpublished = [] if accepted else sorted(
                {text for text in (op.heading, op.after_heading,
                                   *(v for k, v in (decision.reason_values if decision else ()) if k in ("heading", "rendered")))
                 if text and text not in headings}, key=lambda text: (-len(text), text))
            hidden = re.compile("|".join(map(re.escape, unpublished))) if unpublished else None

            def shown(text: str, hidden: re.Pattern[str] | None = hidden) -> str:
                """``text`` with markers redacted and unpublished headings elided (in a reason)."""
                return redact(hidden.sub("…", text) if hidden is not None else text)

            operations.append({
                "op": op.op, "heading": redact(op.heading) if op.heading not in unpublished else "",
                "heading_withheld": op.heading in unpublished,
                "after_heading": redact(op.after_heading) if op.after_heading not in unpublished else "",
                "after_heading_withheld": op.after_heading in unpublished,
                "content": redact(op.content) if accepted else "",
                "decision": state, "label": theme.tr(f"decision_{state}"),
                **_worded_reason(theme, decision, shown),
                "removed": decision.removed if decision and accepted else "",
            })
        provenance = proposal.provenance
        history.append({"id": proposal.id, "method": method_label(theme, provenance.get("method", "?")),
                        "model": provenance.get("model", ""), "applied": proposal.applied_on,
                        "proposed": str(provenance.get("date") or ""),
                        "withheld": any(not o["content"] and o["decision"] != "accepted" for o in operations),
                        "operations": operations})
    return history


def audit_context(site: SiteModel, theme: Theme, audit: ArticleAudit, page: str) -> dict[str, Any]:
    """The audit panels of a wiki or synthesis page (discarded, coverage, broken)."""
    publication = site.publication
    note = publication.notes[audit.slug]

    def url(target: str) -> str:  # relative to this page
        return relative(target, page)

    article: ArticleSpec | None = note.article  # Note.article is typed Any; it holds an ArticleSpec or None
    discarded = discarded_context(site, theme, audit, page)
    coverage_rows = []
    for slug in audit.perimeter_notes or []:
        if slug in audit.coverage and slug in publication.notes:
            cov = audit.coverage[slug]
            coverage_rows.append({"title": publication.notes[slug].title, "url": url(note_path(slug)) + "#coverage",
                                  "covered": cov.count, "total": cov.total})
    said_here = []
    for said in audit.said_here:  # its own name: ``item`` above is a DiscardedItem
        places = [{"note": publication.notes[s].title,
                   "url": url(note_path(s)) + "#" + site.anchored[s].document.elements[i].id,
                   "text": site.anchored[s].document.elements[i].text}
                  for s, i in said.places if s in publication.notes]
        said_here.append({"claim": said.claim.text, "id": said.claim.id, "places": places,
                          "contest": _contest_href(site, audit.slug, page, said.claim.id)})
    broken = [{"claim": link.claim_text, "marker": f"{link.marker.kind}:{link.marker.key}",
               "reason": theme.tr(f"citation_broken_{link.broken}")} for link in audit.links if link.broken]
    status = None
    if audit.kind is NoteType.SYNTHESIS:
        adoption: Adoption | None = article.adoption if article else None
        status = {
            "status": audit.status, "label": theme.tr(f"status_{audit.status}"),
            "meaning": theme.tr(f"status_meaning_{audit.status}"),
            "adoption": {"by": adoption.by, "date": adoption.date} if adoption else None,
            "supersedes": ({"title": publication.notes[audit.supersedes].title,
                            "url": url(note_path(audit.supersedes))}
                           if audit.supersedes in publication.notes else None),
            "superseded_by": [{"title": publication.notes[s].title, "url": url(note_path(s))}
                              for s in audit.superseded_by if s in publication.notes],
            "changed": audit.changed, "changed_label": theme.tr("changed_evidence"),
        }
    elif audit.kind is NoteType.ANSWER:
        status = {"status": "answer", "label": theme.tr("status_answer"),
                  "meaning": theme.tr("status_meaning_answer"), "adoption": None, "supersedes": None,
                  "superseded_by": [], "changed": audit.changed, "changed_label": theme.tr("changed_since_answer")}
    public_ids = site.public_ids

    def redact(text: str) -> str:
        """Markers to unpublished sources are shown without their id (INV-12)."""
        return _MARKER.sub(lambda m: m.group(0) if m.group(2) in public_ids
                           else f"[[{m.group(1)}:{theme.tr('link_source_unpublished')}]]", text)

    history = proposal_history([p for p in site.proposals if p.target == audit.slug], note.body, theme, redact)
    counted = site.tallies[audit.slug]
    # the states a search can filter by: every state a pair has, and "unsourced" for an unsourced claim
    searched = [s for s, n in counted.states.items() if n]
    if counted.unsourced_claims and State.UNSOURCED not in searched:
        searched.append(State.UNSOURCED)
    verification = {
        "states": [{"state": s, "label": theme.tr(f"state_{s}"), "count": n,
                    "reasons": [{"reason": r, "label": theme.tr(f"reason_short_{r.replace('-', '_')}"), "count": k}
                                for r, k in counted.weak.items()] if s is State.WEAK else []}
                   for s, n in counted.states.items()],
        "unjudged": counted.unjudged,
        "unsourced_claims": counted.unsourced_claims,
        "searched": [theme.tr(f"state_{s}") for s in sorted(searched, key=list(State).index)],
    }
    return {
        "selection_url": relative(selection_path(audit.slug), page) if audit.slug in site.selections else None,
        "verification": verification,
        "proposals": history,
        "perimeter_source": audit.perimeter_source,
        "perimeter_notes": len(audit.perimeter_notes or []),
        "perimeter_extractions": len(audit.perimeter_extractions or []),
        "discarded": discarded["discarded"], "discarded_debated": discarded["debated"],
        "discarded_quiet": discarded["quiet"], "discarded_quiet_count": discarded["quiet_count"],
        "discarded_pages": discarded["pages"],
        "discarded_by_note": _by_note(discarded["debated"], discarded["quiet"], discarded["pages"],
                                      lambda slug: publication.notes[slug].date if slug in publication.notes else None)
        if discarded["pages"] else [],
        "coverage": coverage_rows, "said_here": said_here, "broken": broken,
        "status": status, "sources": len(audit.numbers),
        "unsourced": sum(not c.sourced for c in audit.claims), "claims": len(audit.claims),
    }


def link_href(site: SiteModel, theme: Theme, target: LinkTarget, page: str) -> Href:
    """A link of a note's body as ``page`` shows it (what the page reads of the link's target)."""
    published = site.publication.notes
    if target.kind is LinkKind.NOTE:
        if target.key not in published:
            return Href(None, title=theme.tr("link_unpublished"))
        fragment = f"#{target.fragment}" if target.fragment else ""
        return Href(relative(note_path(target.key) + fragment, page))
    if target.kind in (LinkKind.EXTRACTION, LinkKind.COMMENT):
        note = published.get(target.note)
        if note is None:
            return Href(None, title=theme.tr("link_source_unpublished"))
        if not shows(note, target.key):
            return Href(None, title=theme.tr("link_source_unpublished"))
        fragment = f"com-{target.key}" if target.kind is LinkKind.COMMENT else \
            extraction_fragment(site.statuses, target.key)
        return Href(relative(f"{note_path(target.note)}#{fragment}", page), css_class="citation")
    if target.kind is LinkKind.ASSET:
        return Href(relative(target.key, page))
    if target.kind is LinkKind.EXTERNAL:
        return Href(target.key, css_class="external")
    if target.kind is LinkKind.FRAGMENT:
        return Href(f"#{target.key}")
    return Href(None, title=theme.tr("link_broken"))
