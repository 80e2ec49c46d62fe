"""What ``carnet mcp`` answers, as plain data: queries over the published model.

Everything here reads a :class:`~generator.site.model.SiteModel` — the public part the
build publishes, with the facts its core decided (pair states and their reasons and
verifiers, tallies, coverage, discarded) — and computes no evidence fact again: an
agent reads what a reader sees (INV-20). A private notebook's note, a masked extraction
or a withdrawn comment's text is not in that model, so it is in no answer; an id that
names one is answered as an unknown id, word for word, so that no answer tells a private
id from one that never was.

Bounded (INV-21): a query is cut to :data:`MAX_QUERY_CHARS` and refused past
:data:`MAX_INPUT_CHARS` or with a control character; every list is a page of at most
:data:`MAX_LIMIT` items with its total and the offset of the next page; every text is
cut to :data:`MAX_TEXT_CHARS` (its full length is said). Pure: the model in, dicts out.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from generator.anchoring.resolve import portions_text
from generator.answering.passages import Passage, Scope, passages
from generator.answering.search import MAX_QUERY_CHARS, Index
from generator.corpus.model import Comment, Extraction, Note
from generator.kinds import WikiKind
from generator.site.machine import page_evidence
from generator.site.model import (
    SiteModel,
    discarded_fragment,
    extraction_fragment,
    note_path,
    selection_path,
    source_address,
)
from generator.verification.assess import Assessment

T = TypeVar("T")

MAX_INPUT_CHARS = 2_000
"""Characters of a query or an id past which it is refused (a query is a few words; the
search reads its first :data:`MAX_QUERY_CHARS`)."""
MAX_ID_CHARS = 200
"""Characters of an id, a slug or a filter value past which it is refused."""
DEFAULT_LIMIT = 10
MAX_LIMIT = 50
"""Items of one page of any list."""
MAX_OFFSET = 1_000_000
MAX_TEXT_CHARS = 4_000
"""Characters of one text returned (a quote, a comment, a claim); the rest is cut and its length said."""
SNIPPET_CHARS = 300
"""Characters of a passage a search hit shows."""
MAX_CATEGORIES = 3
"""Category filters of one search (a notebook has at most three axes)."""
MIN_BUDGET, MAX_BUDGET = 200, 32_000
"""Characters a context bundle may be asked for."""


class AgentError(Exception):
    """A query refused on purpose, with what to do: the tool's error, never a traceback."""


class HitKind(StrEnum):
    """What a search hit is."""

    PASSAGE = "passage"  # an element (paragraph, list item, turn…) of a published ordinary note
    EXTRACTION = "extraction"  # a published extraction's quote
    CLAIM = "claim"  # a claim of a published wiki, synthesis or saved answer


UNKNOWN_PASSAGE = ("unknown passage id: no published extraction, comment or passage has it — take ids from the "
                   "results of the search tool (an extraction's id, a comment's id, or NOTE#ELEMENT)")
UNKNOWN_ARTICLE = ("unknown article: no published wiki, synthesis or saved answer has this slug — take slugs "
                   "from the search tool's claim hits (their 'note')")


def checked_text(value: str, what: str, limit: int = MAX_ID_CHARS) -> str:
    """``value`` stripped, or a clear refusal: too long, or holding a control character."""
    if len(value) > limit:
        raise AgentError(f"{what} is {len(value)} characters long: give at most {limit}")
    for position, char in enumerate(value):
        if unicodedata.category(char) in ("Cc", "Cs"):
            raise AgentError(f"{what} holds a control character (U+{ord(char):04X} at position {position}): "
                             "give plain text on one line")
    return value.strip()


def _page(items: Sequence[T], offset: int, limit: int) -> tuple[list[T], int | None]:
    """The page of ``items`` at ``offset`` and the next page's offset (``None``: the last page)."""
    end = offset + limit
    return list(items[offset:end]), (end if end < len(items) else None)


def _paging(offset: int, limit: int = DEFAULT_LIMIT) -> tuple[int, int]:
    if not 0 <= offset <= MAX_OFFSET:
        raise AgentError(f"offset {offset}: give a number from 0 to {MAX_OFFSET} (a result's next_offset)")
    if not 1 <= limit <= MAX_LIMIT:
        raise AgentError(f"limit {limit}: give a number from 1 to {MAX_LIMIT}")
    return offset, limit


def _cut(text: str, limit: int = MAX_TEXT_CHARS) -> dict[str, Any]:
    """A text and whether it was cut (its full length then)."""
    if len(text) <= limit:
        return {"text": text, "truncated": False}
    return {"text": text[:limit], "truncated": True, "length": len(text)}


def _snippet(text: str) -> str:
    folded = " ".join(text.split())
    return folded if len(folded) <= SNIPPET_CHARS else folded[: SNIPPET_CHARS - 1] + "…"


@dataclass(frozen=True)
class Cited:
    """One (claim, source) pair that cites an extraction or one of its comments."""

    article: str
    assessment: Assessment


@dataclass(frozen=True)
class Catalogue:
    """The published model and what the tools look things up by, made once at start.

    Attributes:
        site: the published model.
        passages: every element of a published ordinary note that ``ask`` searches
            (those a masked extraction covers left out), by id (``note#element``).
        hits: what the search ranks: those passages, the published extractions, the
            articles' claims, each as a :class:`Passage` (its ``element`` says its kind).
        index: BM25 statistics of ``hits``.
        comments: published comment id → (its note, its extraction, the comment).
        cited: extraction id → the pairs citing it or one of its comments, in article then claim order.
    """

    site: SiteModel
    passages: dict[str, Passage]
    hits: tuple[Passage, ...]
    index: Index
    comments: dict[str, tuple[Note, Extraction, Comment]]
    cited: dict[str, tuple[Cited, ...]]

    @classmethod
    def of(cls, site: SiteModel, masked: Mapping[str, frozenset[int]]) -> Catalogue:
        """``masked``: note → the indexes of the elements its masked extractions land on
        (:func:`~generator.synthesis.coverage.masked_elements`; the site model no longer
        holds masked extractions, so the caller gives them)."""
        found = passages(site.publication.notes, site.anchored, masked)
        hits: list[Passage] = list(found)
        for ext_id, (note, extraction) in site.extractions.items():
            hits.append(_hit(note, HitKind.EXTRACTION, ext_id, extraction.quote))
        for slug, audit in site.articles.items():
            note = site.publication.notes[slug]
            hits.extend(_hit(note, HitKind.CLAIM, claim.id, claim.text) for claim in audit.claims)
        comments = {c.id: (note, e, c) for note, e in site.extractions.values() for c in e.comments}
        cited: dict[str, list[Cited]] = {}
        for slug, items in site.assessments.items():
            for assessment in items:
                link = assessment.link
                if link.marker.kind in (WikiKind.EXT, WikiKind.COM) and link.extraction in site.extractions \
                        and link.note in site.publication.notes:
                    cited.setdefault(link.extraction, []).append(Cited(slug, assessment))
        return cls(site, {p.id: p for p in found}, tuple(hits), Index.of(hits), comments,
                   {key: tuple(value) for key, value in cited.items()})

    # -- addresses, as the site makes them

    def url(self, path: str) -> str:
        return f"{self.site.base_url}{path}"

    def note_ref(self, note: Note) -> dict[str, Any]:
        return {"slug": note.slug, "title": note.title, "type": str(note.type), "url": self.url(note_path(note.slug)),
                "date": note.date.isoformat() if note.date else None}

    def extraction_url(self, note: Note, ext_id: str) -> str:
        return self.url(f"{note_path(note.slug)}#{extraction_fragment(self.site.statuses, ext_id)}")


def _hit(note: Note, kind: HitKind, key: str, text: str) -> Passage:
    """An extraction or a claim as the search index sees it: ``element`` names its kind."""
    notebooks = tuple(sorted({m.notebook for m in note.memberships}))
    date = note.date.isoformat() if note.date else ""
    return Passage(f"{kind}:{key}", note.slug, note.title, date, str(kind), -1, text, notebooks)


def _kind_of(hit: Passage) -> HitKind:
    return HitKind(hit.element) if hit.index < 0 else HitKind.PASSAGE


def _date(value: str, what: str) -> str:
    value = checked_text(value, what)
    if not value:
        return ""
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        raise AgentError(f"{what} {value[:40]!r}: give a date as YYYY-MM-DD") from None


def _scope(catalogue: Catalogue, notebook: str, categories: Sequence[str]) -> Scope:
    """The filters checked against the public notebooks; a private notebook is refused as
    an unknown one is, in the same words."""
    publication = catalogue.site.publication
    notebook = checked_text(notebook, "notebook")
    if notebook and notebook not in publication.notebooks:
        raise AgentError(f"unknown notebook: the public notebooks are {', '.join(sorted(publication.notebooks))}")
    if len(categories) > MAX_CATEGORIES:
        raise AgentError(f"{len(categories)} categories: give at most {MAX_CATEGORIES}")
    chosen = [publication.notebooks[notebook]] if notebook else list(publication.notebooks.values())
    pairs = []
    for value in categories:
        axis, sep, category = checked_text(value, "category").partition("=")
        axis, category = axis.strip(), category.strip()
        if not sep or not axis or not category:
            raise AgentError("a category is written AXIS=VALUE (e.g. theme=Budget)")
        known = {c for nb in chosen for a in nb.axes if a.key == axis for c in a.categories}
        if category not in known:
            raise AgentError(f"no public notebook{' here' if notebook else ''} has this category on axis "
                             f"{axis!r}" + (f"; its categories: {', '.join(sorted(known))}" if known else ""))
        pairs.append((axis, category))
    return Scope(notebook, tuple(pairs))


def search(catalogue: Catalogue, query: str, kind: HitKind | None = None, notebook: str = "",
           categories: Sequence[str] = (), date_from: str = "", date_to: str = "",
           offset: int = 0, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """Passages, extractions and claims by words (BM25, as ``carnet ask`` searches), best
    first, filtered by kind, notebook, categories and the note's date (inclusive)."""
    query = checked_text(query, "the query", MAX_INPUT_CHARS)
    if not query:
        raise AgentError("the query is empty: give a few words")
    offset, limit = _paging(offset, limit)
    scope = _scope(catalogue, notebook, categories)
    start, end = _date(date_from, "date_from"), _date(date_to, "date_to")
    notes = catalogue.site.publication.notes
    allowed = frozenset(
        hit.id for hit in catalogue.hits
        if (kind is None or _kind_of(hit) is kind) and scope.admits(notes[hit.note])
        and (not (start or end) or (hit.date and (not start or hit.date >= start) and (not end or hit.date <= end))))
    ranked = catalogue.index.search(query, len(catalogue.hits), allowed)
    page, following = _page(ranked, offset, limit)
    return {"query": query[:MAX_QUERY_CHARS], "total": len(ranked), "offset": offset, "next_offset": following,
            "hits": [_found(catalogue, hit, score) for hit, score in page]}


def _found(catalogue: Catalogue, hit: Passage, score: float) -> dict[str, Any]:
    kind = _kind_of(hit)
    note = catalogue.site.publication.notes[hit.note]
    found: dict[str, Any] = {"kind": str(kind), "score": round(score, 6), "note": catalogue.note_ref(note),
                             "notebooks": list(hit.notebooks), "snippet": _snippet(hit.text)}
    if kind is HitKind.PASSAGE:
        found.update(id=hit.id, url=catalogue.url(f"{note_path(note.slug)}#{hit.element}"))
    elif kind is HitKind.EXTRACTION:
        ext_id = hit.id.split(":", 1)[1]
        found.update(id=ext_id, url=catalogue.extraction_url(note, ext_id))
    else:
        claim_id = hit.id.split(":", 1)[1]
        sourced = any(c.id == claim_id and c.sourced for c in catalogue.site.articles[note.slug].claims)
        # only a sourced claim has an anchor on its page (as carnet context links it)
        found.update(id=claim_id, article=note.slug,
                     url=catalogue.url(note_path(note.slug) + (f"#{claim_id}" if sourced else "")))
    return found


def passage(catalogue: Catalogue, key: str, offset: int = 0, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """An extraction, a comment (its extraction, the comment named) or a note's element, by id:
    its text as the note holds it, where it lands, its debate and the pairs citing it."""
    key = checked_text(key, "the id")
    offset, limit = _paging(offset, limit)
    site = catalogue.site
    if key in site.extractions:
        note, extraction = site.extractions[key]
        return _extraction(catalogue, note, extraction, None, offset, limit)
    if key in catalogue.comments:
        note, extraction, comment = catalogue.comments[key]
        return _extraction(catalogue, note, extraction, comment, offset, limit)
    if key in catalogue.passages:
        return _element(catalogue, catalogue.passages[key])
    raise AgentError(UNKNOWN_PASSAGE)


def _comment(catalogue: Catalogue, note: Note, comment: Comment) -> dict[str, Any]:
    """A comment as the note's page shows it: a withdrawn one as its tombstone (no text)."""
    said: dict[str, Any] = {
        "id": comment.id, "author": catalogue.site.publication.name(note.slug, comment.author),
        "date": comment.date.isoformat(), "stance": str(comment.stance),
        "url": catalogue.url(f"{note_path(note.slug)}#com-{comment.id}")}
    if comment.withdrawn is not None:
        said["withdrawn"] = {"date": comment.withdrawn.date.isoformat(), "reason": comment.withdrawn.reason}
        said["text"] = None
    else:
        said["withdrawn"] = None
        said.update(_cut(comment.text or ""))
    return said


def _pair(catalogue: Catalogue, cited: Cited) -> dict[str, Any]:
    """A (claim, source) pair, its state, reason and verifier as the article's page says them."""
    assessment = cited.assessment
    state, verifier = assessment.state, assessment.state.verifier
    article = catalogue.site.publication.notes[cited.article]
    said: dict[str, Any] = {"method": str(verifier.method), "model": verifier.model, "date": verifier.date}
    if verifier.accuracy is not None:
        said["balanced_accuracy"] = verifier.accuracy
    claim = assessment.claim
    return {"article": catalogue.note_ref(article), "claim": {"id": claim.id, **_cut(claim.text),
                                                              "url": catalogue.url(f"{note_path(cited.article)}#{claim.id}")},
            "source": f"{assessment.link.marker.kind}:{assessment.link.marker.key}",
            "source_url": catalogue.url(source_address(assessment.link)),
            "state": str(state.state), "reason": str(state.reason), "verifier": said}


def _extraction(catalogue: Catalogue, note: Note, extraction: Extraction, named: Comment | None,
                offset: int, limit: int) -> dict[str, Any]:
    site = catalogue.site
    anchored = site.anchored.get(note.slug)
    anchor = anchored.anchors.get(extraction.id) if anchored is not None else None
    status = site.statuses.get(extraction.id)
    live = anchor is not None and status is not None and status.is_live
    # the passage as the note holds it: the note's own text over the extraction's portions
    text = portions_text(anchored.document.elements, anchor.portions) if live and anchored and anchor else None
    comments = sorted(extraction.comments, key=lambda c: (c.date, c.id))
    shown, next_comments = _page(comments, offset, limit)
    cited = catalogue.cited.get(extraction.id, ())
    pairs, next_pairs = _page(cited, offset, limit)
    following = [n for n in (next_comments, next_pairs) if n is not None]
    return {
        "kind": "comment" if named is not None else "extraction",
        "id": named.id if named is not None else extraction.id,
        "comment": _comment(catalogue, note, named) if named is not None else None,
        "extraction": {
            "id": extraction.id, "kind": extraction.kind, "url": catalogue.extraction_url(note, extraction.id),
            "author": site.publication.name(note.slug, extraction.author),
            "date": extraction.date.isoformat() if extraction.date else None,
            "anchor": {"state": status.value if status is not None else "detached",
                       "reason": anchor.reason if anchor is not None and not live else ""},
            "quote": _cut(text) if text is not None else None,
            "written_quote": _cut(extraction.quote)},
        "note": catalogue.note_ref(note),
        "notebooks": [m.notebook for m in note.memberships],
        "comments": {"total": len(comments), "offset": offset, "next_offset": next_comments,
                     "items": [_comment(catalogue, note, c) for c in shown]},
        "disagreements": extraction.disagreements,
        "cited_by": {"total": len(cited), "offset": offset, "next_offset": next_pairs,
                     "items": [_pair(catalogue, c) for c in pairs]},
        "next_offset": min(following) if following else None,
    }


def _element(catalogue: Catalogue, found: Passage) -> dict[str, Any]:
    """A note's element (a search hit of kind passage): its text and the extractions landing on it."""
    site = catalogue.site
    note = site.publication.notes[found.note]
    anchored = site.anchored[found.note]
    landing = [e.id for e in note.extractions
               if (a := anchored.anchors.get(e.id)) is not None and site.statuses.get(e.id) is not None
               and site.statuses[e.id].is_live and any(p.element == found.index for p in a.portions)]
    return {"kind": "passage", "id": found.id, "text": _cut(found.text), "note": catalogue.note_ref(note),
            "notebooks": list(found.notebooks), "url": catalogue.url(f"{note_path(note.slug)}#{found.element}"),
            "extractions": [{"id": i, "url": catalogue.extraction_url(note, i)} for i in landing[:MAX_LIMIT]],
            "extractions_total": len(landing)}


def article(catalogue: Catalogue, slug: str, offset: int = 0, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """A wiki, synthesis or saved answer's audit, as its page shows it: claims with each
    pair's state, reason and verifier (unsourced ones too), the tally, the discarded
    evidence (or the refusal when the perimeter is unknown), coverage, standing."""
    slug = checked_text(slug, "the slug")
    offset, limit = _paging(offset, limit)
    site = catalogue.site
    audit = site.articles.get(slug)
    if audit is None:
        raise AgentError(UNKNOWN_ARTICLE)
    note = site.publication.notes[slug]
    path = note_path(slug)
    claims = page_evidence(site, path)["claims"]  # the .json sibling's own record of the pairs
    for claim in claims:
        claim.update(_cut(claim["text"]))
        claim["sourced"] = claim["state"] is None  # the .json's way: an unsourced claim's state is said, a sourced one's are its pairs'
        claim["url"] = catalogue.url(path + (f"#{claim['id']}" if claim["sourced"] else ""))
        claim["state"] = str(claim["state"]) if claim["state"] is not None else None
        for pair in claim["pairs"]:
            pair["state"], pair["reason"] = str(pair["state"]), str(pair["reason"])
            pair["verifier"]["method"] = str(pair["verifier"]["method"])
    shown, next_claims = _page(claims, offset, limit)
    tally = site.tallies[slug]
    spec = note.article
    adoption = spec.adoption if spec is not None else None
    discarded_items = [d for d in audit.discarded or [] if d.note in site.publication.notes]
    discarded, next_discarded = _page(discarded_items, offset, limit)
    coverage = [(n, c) for n, c in sorted(audit.coverage.items()) if n in site.publication.notes]
    covered, next_coverage = _page(coverage, offset, limit)
    following = [n for n in (next_claims, next_discarded, next_coverage) if n is not None]
    return {
        **catalogue.note_ref(note),
        "status": str(audit.status),
        "adoption": {"by": adoption.by, "date": adoption.date.isoformat()} if adoption is not None else None,
        "supersedes": catalogue.url(note_path(audit.supersedes)) if audit.supersedes in site.publication.notes
        else None,
        "superseded_by": [catalogue.url(note_path(s)) for s in audit.superseded_by if s in site.publication.notes],
        "tally": {"states": {str(k): v for k, v in tally.states.items()},
                  "weak_reasons": {str(k): v for k, v in tally.weak.items()},
                  "unsourced_claims": tally.unsourced_claims, "unjudged": tally.unjudged},
        "claims": {"total": len(claims), "offset": offset, "next_offset": next_claims, "items": shown},
        "unsourced_claims": [c["id"] for c in claims if c["state"] is not None][:MAX_LIMIT],
        "perimeter": {"source": audit.perimeter_source,
                      "notes": None if audit.perimeter_notes is None
                      else sum(n in site.publication.notes for n in audit.perimeter_notes),
                      "extractions": None if audit.perimeter_extractions is None
                      else len(audit.perimeter_extractions)},
        "discarded": None if audit.discarded is None else {
            "total": len(discarded_items), "offset": offset, "next_offset": next_discarded,
            "items": [{"id": d.extraction, "passage": d.passage, "exists": d.exists, **_cut(d.quote),
                       "note": d.note, "comments": d.comments, "disagreements": d.disagreements,
                       "url": catalogue.url(f"{note_path(d.note)}#{discarded_fragment(d, site.statuses)}")}
                      for d in discarded]},
        "discarded_refusal": "perimeter unknown: no perimeter was recorded, so what was left out cannot be said"
        if audit.discarded is None else None,
        "coverage": {"total": len(coverage), "offset": offset, "next_offset": next_coverage,
                     "items": [{"note": n, "url": catalogue.url(note_path(n)), "elements_covered": c.count,
                                "elements": c.total} for n, c in covered]},
        "pages": [catalogue.url(p) for p in _audit_pages(site, slug)],
        "next_offset": min(following) if following else None,
    }


def _audit_pages(site: SiteModel, slug: str) -> list[str]:
    """The first page of the article's selection, when it has one (a wiki's)."""
    return [selection_path(slug)] if slug in site.selections else []


def context_request(query: str, budget: int) -> tuple[str, int]:
    """A context bundle's query and budget, checked (the bundle is made by ``carnet context``'s code)."""
    query = checked_text(query, "the query", MAX_INPUT_CHARS)
    if not query:
        raise AgentError("the query is empty: give a few words")
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise AgentError(f"budget {budget}: give a number of characters from {MIN_BUDGET} to {MAX_BUDGET}")
    return query[:MAX_QUERY_CHARS], budget


def mirror_pages(site: SiteModel) -> list[str]:
    """The pages whose Markdown mirror is served as a resource: every published note's
    (notes, wikis, syntheses, saved answers), in slug order."""
    return [note_path(slug) for slug in sorted(site.publication.notes)]
