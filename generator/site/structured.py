"""The schema.org JSON-LD of each page (the ``<script type="application/ld+json">``). Pure.

Every property is used inside its schema.org domain: ``citation``, ``hasPart``, ``author``,
``position``, ``text`` on a CreativeWork (Article, Report and Claim are ones);
``appearance`` on a Claim; ``name``, ``url``, ``identifier`` on any Thing. What schema.org
cannot say (an act's adoption, a pair's verification state) is said with the project's own
terms, declared in the ``@context`` under the prefix ``carnet`` (the IRI base of
graph.jsonld's terms, so both documents share one namespace) and listed in
:data:`VOCABULARY`. Not ``additionalProperty`` (outside Claim's domain) and not
ClaimReview (a verification state is not a fact-check).
"""

from __future__ import annotations

import posixpath
from typing import Any

from generator.corpus.model import Note
from generator.site.graph import jsonld_vocabulary
from generator.site.model import SiteModel, note_path, notebook_path, source_address
from generator.synthesis.audit import ArticleAudit, CitationLink

XSD_DATE = "http://www.w3.org/2001/XMLSchema#date"

VOCABULARY: dict[str, str] = {
    "status": "an article's standing: wiki, draft, adopted or superseded",
    "adoptedBy": "who adopted the act (as its adoption record names them)",
    "dateAdopted": "when the act was adopted (xsd:date)",
    "supersedes": "the act this one replaces (its page)",
    "supersededBy": "an act replacing this one (its page)",
    "verification": "on a Claim: one carnet:Verification per (claim, source) pair",
    "Verification": "a (claim, source) pair and what is known of it",
    "source": "the pair's source: the cited extraction or comment (its anchor)",
    "state": "the pair's state: verified, weak, unsourced, contested or debate-sourced",
    "reason": "why the pair has its state (supported, partial, not-judged…)",
    "verifier": "what established the state: human, llm, scripted or build",
    "balancedAccuracy": "a model judge's balanced accuracy on labelled pairs (0 to 1), by its latest calibration",
    "suggestion": "on a Verification: a model's verdict that changed no state, its judge not being qualified",
    "Suggestion": "a model's verdict kept as a suggestion: what it said, by which model, how well measured",
    "verdict": "what a model said of a pair: supported, partial or unsupported",
    "model": "the model that judged",
    "qualified": "whether the judge reached the site's bar of balanced accuracy",
}
"""The project's terms, each ``carnet:<term>``: the documented vocabulary."""


def context(base_url: str) -> list[Any]:
    return ["https://schema.org", {"carnet": jsonld_vocabulary(base_url)}]


def _ref(iri: str) -> dict[str, str]:
    return {"@id": iri}


def source_iri(site: SiteModel, link: CitationLink) -> str | None:
    """The anchor of a pair's source on its note's page; ``None`` when that page is not
    published (no address to give, and its ids stay private)."""
    if not link.note or link.note not in site.publication.notes:
        return None
    return f"{site.base_url}{source_address(link)}"


def _verification(site: SiteModel, assessment: Any) -> dict[str, Any]:
    # the verifier is the core's decision (PairState.verifier), never recomputed here
    state = assessment.state
    node: dict[str, Any] = {"@type": "carnet:Verification", "carnet:state": str(state.state),
                            "carnet:reason": str(state.reason), "carnet:verifier": str(state.verifier.method)}
    if state.verifier.accuracy is not None:
        node["carnet:balancedAccuracy"] = state.verifier.accuracy
    if state.suggestion is not None and state.judge is not None:
        suggestion: dict[str, Any] = {"@type": "carnet:Suggestion", "carnet:verdict": state.suggestion.verdict,
                                      "carnet:model": state.judge.model, "carnet:qualified": False}
        if state.judge.accuracy is not None:
            suggestion["carnet:balancedAccuracy"] = state.judge.accuracy
        node["carnet:suggestion"] = suggestion
    iri = source_iri(site, assessment.link)
    if iri:
        node["carnet:source"] = _ref(iri)
    return node


def claim_nodes(site: SiteModel, audit: ArticleAudit, canonical: str) -> list[dict[str, Any]]:
    """Every claim of the article in reading order, unsourced ones included, each with
    its sources and the state of each of its pairs."""
    pairs: dict[str, list[Any]] = {}
    for assessment in site.assessments.get(audit.slug, []):
        pairs.setdefault(assessment.claim.id, []).append(assessment)
    nodes = []
    for claim in sorted(audit.claims, key=lambda c: (c.rank, c.id)):
        node: dict[str, Any] = {"@type": "Claim", "@id": f"{canonical}#{claim.id}", "identifier": claim.id,
                                "text": claim.text, "position": claim.rank, "appearance": _ref(canonical)}
        own = pairs.get(claim.id, [])
        sources = sorted({iri for a in own if (iri := source_iri(site, a.link))})
        if sources:
            node["citation"] = [_ref(s) for s in sources]
        if own:
            node["carnet:verification"] = [_verification(site, a) for a in own]
        nodes.append(node)
    return nodes


def act_fields(site: SiteModel, note: Note, audit: ArticleAudit) -> dict[str, Any]:
    """An article's standing, as its page's act status shows it: adoption (who, when) and
    the acts it supersedes or that supersede it, published ones only."""
    published = site.publication.notes
    fields: dict[str, Any] = {"carnet:status": audit.status}
    adoption = note.article.adoption if note.article else None
    if adoption:
        fields["carnet:adoptedBy"] = adoption.by
        fields["carnet:dateAdopted"] = {"@value": adoption.date.isoformat(), "@type": XSD_DATE}
    if audit.supersedes in published:
        fields["carnet:supersedes"] = _ref(site.base_url + note_path(audit.supersedes))
    later = [_ref(site.base_url + note_path(s)) for s in audit.superseded_by if s in published]
    if later:
        fields["carnet:supersededBy"] = later
    return fields


def article_fields(site: SiteModel, note: Note, audit: ArticleAudit, canonical: str) -> dict[str, Any]:
    sources = sorted({iri for a in site.assessments.get(audit.slug, []) if (iri := source_iri(site, a.link))})
    fields: dict[str, Any] = {"hasPart": claim_nodes(site, audit, canonical), **act_fields(site, note, audit)}
    if sources:
        fields["citation"] = [_ref(s) for s in sources]
    return fields


def note_fields(site: SiteModel, slug: str, canonical: str) -> dict[str, Any]:
    publication = site.publication
    note = publication.notes[slug]
    fields: dict[str, Any] = {"@type": {"note": "Article", "wiki": "Article", "synthesis": "Report",
                                         "answer": "Article"}[note.type.value],
                              "headline": note.title}
    if note.date:
        fields["datePublished"] = note.date.isoformat()
    if note.authors:  # as the page shows them (the notebook's naming rule); none: no empty list
        fields["author"] = [{"@type": "Person", "name": publication.name(slug, a)} for a in note.authors]
    fields["isPartOf"] = [{"@type": "Collection", "name": publication.notebooks[m.notebook].title,
                           "url": site.base_url + notebook_path(m.notebook)} for m in note.memberships]
    audit = site.articles.get(slug)
    if audit is not None:
        fields.update(article_fields(site, note, audit, canonical))
    return fields


def structured_data(site: SiteModel, path: str, title: str, kind: str) -> dict[str, Any]:
    """The page's JSON-LD object (to be written with ``pages.json_ld``, which escapes it)."""
    settings = site.publication.settings
    canonical = site.base_url + ("" if path == "index.html" else path)
    data: dict[str, Any] = {"@context": context(site.base_url), "@id": canonical, "url": canonical, "name": title,
                            "inLanguage": settings.language, "license": settings.licence.url or settings.licence.name}
    if kind == "home":
        data["@type"] = "WebSite"
    elif kind == "note":
        data.update(note_fields(site, posixpath.basename(path)[: -len(".html")], canonical))
    else:
        data["@type"] = "CollectionPage"
    return data
