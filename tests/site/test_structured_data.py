"""The pages' schema.org JSON-LD: every claim, the authors shown, the act's adoption, and
every property inside its schema.org domain (checked offline against a pinned vocabulary,
tests/fixtures/schemaorg/)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from pyld import jsonld  # type: ignore[import-untyped]

from generator.pipeline import check_content, render_site, site_model
from generator.site.graph import jsonld_vocabulary
from generator.site.model import SiteModel, note_path
from generator.site.structured import VOCABULARY, XSD_DATE
from generator.site.theme import Theme

CONTENT = Path(__file__).resolve().parents[2] / "content"
PINNED = Path(__file__).resolve().parents[1] / "fixtures" / "schemaorg"
SCHEMA_ORG = ("http://schema.org/", "https://schema.org/")
_SCRIPT = re.compile(rb'<script type="application/ld\+json">(.*?)</script>', re.DOTALL)


@pytest.fixture(scope="module")
def built() -> tuple[SiteModel, dict[str, bytes]]:
    analysis = check_content(CONTENT)
    site = site_model(analysis, CONTENT)
    return site, render_site(site, Theme.load(None, analysis.publication.settings.language))


def page_jsonld(page: bytes) -> dict[str, Any]:
    blocks = _SCRIPT.findall(page)
    assert len(blocks) == 1
    return json.loads(blocks[0])


def articles(built: tuple[SiteModel, dict[str, bytes]]) -> list[tuple[str, dict[str, Any], BeautifulSoup]]:
    site, files = built
    assert site.articles
    return [(slug, page_jsonld(files[note_path(slug)]), BeautifulSoup(files[note_path(slug)], "html.parser"))
            for slug in sorted(site.articles)]


def test_every_claim_of_every_article_is_listed_unsourced_ones_included(built) -> None:
    site, _ = built
    unsourced_seen = False
    for slug, data, page in articles(built):
        on_page = [e["id"] for e in page.select("span.claim-end[id], sup.unsourced-claim[id]")]
        unsourced_seen |= bool(page.select("sup.unsourced-claim[id]"))
        claims = site.articles[slug].claims
        listed = [(c["identifier"], c["text"]) for c in data["hasPart"]]
        assert listed == [(c.id, c.text) for c in sorted(claims, key=lambda c: c.rank)], slug
        assert sorted(on_page) == sorted(c.id for c in claims), slug
        canonical = data["@id"]
        assert all(c["@id"] == f"{canonical}#{c['identifier']}" for c in data["hasPart"])
    assert unsourced_seen  # the example has unsourced claims: they must be among those listed


def test_each_pair_carries_the_core_state_reason_and_verifier(built) -> None:
    site, _ = built
    vocab = "carnet:"
    for slug, data, _ in articles(built):
        by_id = {c["identifier"]: c for c in data["hasPart"]}
        expected: dict[str, list[tuple[str, str, str]]] = {}
        for a in site.assessments.get(slug, []):
            expected.setdefault(a.claim.id, []).append((a.state.state, a.state.reason, a.state.verifier.method))
        for claim_id, node in by_id.items():
            pairs = [(p[vocab + "state"], p[vocab + "reason"], p[vocab + "verifier"])
                     for p in node.get(vocab + "verification", [])]
            assert pairs == expected.get(claim_id, []), (slug, claim_id)
        cited = {s["@id"] for c in data["hasPart"] for s in c.get("citation", [])}
        assert cited == {s["@id"] for s in data.get("citation", [])}, slug


def _shown_authors(page: BeautifulSoup) -> list[str]:
    meta = page.select_one("header.note-header p.meta")
    parts = meta.get_text(" ", strip=True).split("·") if meta else []
    return [name.strip() for name in parts[1].split(",")] if len(parts) > 1 else []


def test_authors_are_those_the_page_shows_and_never_an_empty_list(built) -> None:
    site, files = built
    with_authors = 0
    for slug in sorted(site.publication.notes):
        data = page_jsonld(files[note_path(slug)])
        shown = _shown_authors(BeautifulSoup(files[note_path(slug)], "html.parser"))
        if shown:
            with_authors += 1
            assert [a["name"] for a in data["author"]] == shown, slug
        else:
            assert "author" not in data, slug
    assert with_authors


def test_adopted_synthesis_has_its_adoption_and_what_it_supersedes(built) -> None:
    site, files = built
    adopted = 0
    for slug, audit in sorted(site.articles.items()):
        data = page_jsonld(files[note_path(slug)])
        note = site.publication.notes[slug]
        adoption = note.article.adoption if note.article else None
        assert data["carnet:status"] == audit.status
        if adoption:
            assert data["carnet:adoptedBy"] == adoption.by
            assert data["carnet:dateAdopted"] == {"@value": adoption.date.isoformat(), "@type": XSD_DATE}
        else:
            assert "carnet:adoptedBy" not in data
        if audit.supersedes in site.publication.notes:
            assert data["carnet:supersedes"] == {"@id": site.base_url + note_path(audit.supersedes)}
            later = page_jsonld(files[note_path(audit.supersedes)])
            assert {"@id": site.base_url + note_path(slug)} in later["carnet:supersededBy"]
        if audit.status == "adopted":
            assert adoption, slug
            adopted += "carnet:supersedes" in data
    assert adopted  # the example's budget synthesis, adopted, supersedes the provisional one
    budget = page_jsonld(files[note_path("cvl-synthese-budget-2024-2025")])
    assert budget["carnet:supersedes"] == {"@id": site.base_url + note_path("cvl-synthese-budget-provisoire")}


# --- schema.org domains, offline -------------------------------------------------------

def _pinned_loader(url: str, options: Any = None) -> dict[str, Any]:
    if url.rstrip("/") not in ("https://schema.org", "http://schema.org"):
        raise AssertionError(f"the JSON-LD needs a remote document: {url}")
    document = json.loads((PINNED / "context.jsonld").read_text(encoding="utf-8"))
    return {"contextUrl": None, "documentUrl": url, "document": document}


def _domain_errors(node: Any, vocabulary: dict[str, Any], own: set[str], where: str) -> list[str]:
    """Every property of every (expanded) node checked against the pinned domains."""
    if isinstance(node, list):
        return [e for item in node for e in _domain_errors(item, vocabulary, own, where)]
    if not isinstance(node, dict) or "@value" in node:
        return []
    errors: list[str] = []
    classes: set[str] = set()
    for iri in node.get("@type", []):
        if iri.startswith(SCHEMA_ORG):
            name = iri.rsplit("/", 1)[1]
            if name not in vocabulary["superclasses"]:
                errors.append(f"{where}: type {name} is not in the pinned vocabulary")
            classes |= {name, *vocabulary["superclasses"].get(name, [])}
        elif iri not in own:
            errors.append(f"{where}: type {iri} is neither schema.org's nor the project's")
    for key, value in node.items():
        if key.startswith("@"):
            errors += _domain_errors(value, vocabulary, own, where) if key in ("@graph", "@list") else []
            continue
        if key.startswith(SCHEMA_ORG):
            name = key.rsplit("/", 1)[1]
            domains = vocabulary["properties"].get(name)
            if domains is None:
                errors.append(f"{where}: property {name} is not in the pinned vocabulary")
            elif not classes & set(domains):
                errors.append(f"{where}: {name} on {sorted(classes) or 'an untyped node'}, outside {domains}")
        elif key not in own:
            errors.append(f"{where}: {key} is neither schema.org's nor the project's")
        errors += _domain_errors(value, vocabulary, own, where)
    return errors


def test_every_property_is_inside_its_schema_org_domain(built) -> None:
    site, files = built
    vocabulary = json.loads((PINNED / "vocabulary.json").read_text(encoding="utf-8"))
    own = {jsonld_vocabulary(site.base_url) + term for term in VOCABULARY}
    errors: list[str] = []
    pages = [path for path in files if path.endswith(".html") and _SCRIPT.search(files[path])]
    assert note_path(min(site.articles)) in pages
    for path in pages:
        expanded = jsonld.expand(page_jsonld(files[path]), {"documentLoader": _pinned_loader})
        assert expanded, path
        errors += _domain_errors(expanded, vocabulary, own, path)
    assert not errors, "\n".join(sorted(set(errors))[:40])


def test_checker_refuses_a_property_outside_its_domain() -> None:
    """The check itself bites: additionalProperty on a Claim (the old output) is refused."""
    vocabulary = {"properties": {"additionalProperty": ["Place", "Product", "QualitativeValue"]},
                  "superclasses": {"Claim": ["CreativeWork", "Thing"]}}
    node = [{"@type": ["http://schema.org/Claim"], "http://schema.org/additionalProperty": [{"@value": "x"}]}]
    assert _domain_errors(node, vocabulary, set(), "p")
    assert _domain_errors([{"@type": ["http://schema.org/Claim"], "https://example.org/v#x": [{"@value": 1}]}],
                          vocabulary, set(), "p")
