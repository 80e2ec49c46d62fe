"""Wikis and directed syntheses: invariants recomputed from the built pages and the
content files (not from Carnet's model), the INV-3 guard, and the lifecycle of acts."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from generator.anchoring.normalise import normalise_quote
from generator.commands.adopt import AdoptionError, adopt
from generator.pipeline import build, check_content
from generator.problems import ContentError
from support.corpus import replace, write

CONTENT = Path(__file__).resolve().parents[2] / "content"
MARKER = re.compile(r"\[\[(ext|com):([^\]|]+)(?:\|[^\]]*)?\]\]")



@pytest.fixture
def site(example_site: Path) -> Path:
    """The example site, built once for the session (tests/conftest.py)."""
    return example_site

def front_matter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    _, meta, body = text.split("---\n", 2)
    return yaml.safe_load(meta), body


def sidecar(content: Path, slug: str) -> list[dict]:
    path = content / "notes" / f"{slug}.extractions.yaml"
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("extractions", []) if path.exists() else []


def articles(content: Path) -> dict[str, tuple[dict, str]]:
    found = {}
    for path in sorted((content / "notes").glob("*.md")):
        meta, body = front_matter(path)
        if meta.get("type") in ("wiki", "synthesis"):
            found[path.stem] = (meta, body)
    return found


def recompute_perimeter(content: Path, meta: dict) -> list[str] | None:
    """The perimeter's extraction ids, read from the files as an auditor would."""
    if meta.get("type") == "synthesis":
        if "proposed" in meta:
            return [e["id"] for e in meta["proposed"]["extractions"] or []]
        return None
    spec = meta["perimeter"]
    ids = []
    for path in sorted((content / "notes").glob("*.md")):
        note, _ = front_matter(path)
        membership = (note.get("notebooks") or {}).get(spec["notebook"])
        if note.get("type", "note") != "note" or membership is None:
            continue
        membership = membership or {}
        if all(set(v) & set(membership.get(axis, [])) for axis, v in (spec.get("categories") or {}).items()):
            ids += [e["id"] for e in sidecar(content, path.stem) if not e.get("masked")]
    return ids


def test_discarded_is_perimeter_minus_cited_on_every_page(site: Path) -> None:
    checked = 0
    for slug, (meta, body) in articles(CONTENT).items():
        page = BeautifulSoup((site / "notes" / f"{slug}.html").read_bytes(), "html.parser")
        perimeter = recompute_perimeter(CONTENT, meta)
        shown = [li["data-ext"] for li in page.select(".discarded-item")]
        if perimeter is None:
            assert page.select_one(".discarded .refusal") is not None, slug
            assert shown == []
            continue
        cited = {key for kind, key in MARKER.findall(body) if kind == "ext"}
        assert sorted(shown) == sorted(set(perimeter) - cited), slug
        checked += 1
    assert checked >= 4


def test_discarded_shows_the_minority_lease_extraction(site: Path) -> None:
    page = BeautifulSoup((site / "notes" / "cvl-synthese-budget-2024-2025.html").read_bytes(), "html.parser")
    items = page.select(".discarded-item")
    lease = page.select_one('.discarded-item[data-ext="cvl-1114-bail-verbal"]')
    assert lease is not None and "accord verbal" in lease.get_text()
    debate = [int(re.search(r"(\d+) désaccord", li.get_text()).group(1)) if "désaccord" in li.get_text() else 0
              for li in items]
    assert debate == sorted(debate, reverse=True), "debated first"


def test_citation_numbers_follow_first_appearance(site: Path) -> None:
    for slug, (_meta, body) in articles(CONTENT).items():
        page = BeautifulSoup((site / "notes" / f"{slug}.html").read_bytes(), "html.parser")
        shown = [a.get_text() for a in page.select(".note-body .citation")]
        sources = [f"{k}:{v}" for k, v in MARKER.findall(body)]
        assert len(shown) == len(sources), slug
        first: dict[str, int] = {}
        for source in sources:
            first.setdefault(source, len(first) + 1)
        assert shown == [f"[{first[s]}]" for s in sources], slug


def test_every_citation_lands_on_an_element_holding_its_quote(site: Path) -> None:
    quotes = {e["id"]: e["quote"] for path in (CONTENT / "notes").glob("*.extractions.yaml")
              for e in sidecar(CONTENT, path.name[: -len(".extractions.yaml")])}
    pages: dict[str, BeautifulSoup] = {}
    landed = 0
    for slug in articles(CONTENT):
        page = BeautifulSoup((site / "notes" / f"{slug}.html").read_bytes(), "html.parser")
        for link in page.select(".note-body a.citation"):
            target, _, fragment = link["href"].partition("#")
            if not fragment.startswith("ext-"):
                continue
            other = pages.setdefault(target, BeautifulSoup((site / "notes" / target).read_bytes(), "html.parser"))
            anchor = other.select_one(f'[id="{fragment}"]')
            element = anchor.find_parent(class_="element")
            first_paragraph = quotes[fragment[4:]].strip().split("\n\n")[0]
            assert normalise_quote(first_paragraph)[:40] in normalise_quote(element.get_text(" ")), fragment
            landed += 1
    assert landed >= 20


def test_coverage_recounted_from_the_pages(site: Path) -> None:
    page = BeautifulSoup((site / "notes" / "cvl-wiki-budget.html").read_bytes(), "html.parser")
    rows = page.select(".coverage-rows > li")
    assert rows
    for row in rows:
        k, n = map(int, re.search(r"(\d+) éléments? sur (\d+)", row.get_text()).groups())
        note = BeautifulSoup((site / "notes" / row.a["href"].split("#")[0]).read_bytes(), "html.parser")
        elements = note.select(".note-body .element")
        with_marks = [e for e in elements if e.select("mark.extraction")]
        assert (k, n) == (len(with_marks), len(elements)), row.a["href"]


def test_unextracted_transcript_sentence_is_explained_by_coverage(site: Path) -> None:
    page = BeautifulSoup((site / "notes" / "cvl-wiki-budget.html").read_bytes(), "html.parser")
    said = page.select(".said-here > li")
    places = [a["href"] for item in said if "ordre du jour" in item.q.get_text() for a in item.select("a")]
    assert places and all(p.startswith("cvl-2025-10-16-transcription.html#e-") for p in places)


def test_comment_citation_is_debate_sourced(site: Path) -> None:
    page = BeautifulSoup((site / "notes" / "cvl-wiki-budget.html").read_bytes(), "html.parser")
    link = page.select_one('.note-body a.citation[href$="#com-c-1114-1"]')
    assert link is not None and "debate" in link["class"]
    assert "20 %" in link["data-preview-quote"]


def test_source_notes_list_the_articles_citing_each_extraction(site: Path) -> None:
    page = BeautifulSoup((site / "notes" / "cvl-2024-11-14.html").read_bytes(), "html.parser")
    cited_by = page.select_one("#entry-cvl-1114-budget-total .cited-by").get_text(" ")
    for title in ("Le budget du CVL", "Bilan budgétaire 2024-2025", "Synthèse budgétaire provisoire 2024-2025"):
        assert title in cited_by
    assert page.select_one("#entry-cvl-1114-bail-verbal .cited-by") is None


def test_status_and_supersedes_chain(site: Path) -> None:
    notebook = BeautifulSoup((site / "notebooks" / "cvl.html").read_bytes(), "html.parser")
    statuses = {li.select_one(".note-link").get_text(): li.select_one(".badge.status").get_text()
                for li in notebook.select("#tab-syntheses .note-item")}
    assert statuses == {"Bilan budgétaire 2024-2025": "adoptée", "Synthèse budgétaire provisoire 2024-2025": "remplacée",
                        "Bilan du CVL 2023-2024": "adoptée"}
    old = BeautifulSoup((site / "notes" / "cvl-synthese-budget-provisoire.html").read_bytes(), "html.parser")
    assert "Bilan budgétaire 2024-2025" in old.select_one(".act-status").get_text()


# --- the guard and the lifecycle, on the small fixture --------------------------------

def test_a_synthesis_is_never_a_source(small: Path, tmp_path: Path) -> None:
    write(small, "notes/wiki-budget.extractions.yaml",
          "extractions:\n  - id: w-ext\n    quote: Le budget est de quatre mille euros\n    author: Zoé Realname\n")
    replace(small, "notes/conseil-c.md", "reconduit.", "reconduit [[ext:w-ext]].")
    replace(small, "notes/conseil-c.md", "notebooks:", "type: wiki\nnotebooks:")
    problems = [p for p in check_content(small).problems if p.code == "broken-citation"]
    assert any("never a source" in p.message for p in problems)
    with pytest.raises(ContentError):
        build(small, tmp_path / "strict", strict=True)
    build(small, tmp_path / "site")
    page = BeautifulSoup((tmp_path / "site" / "notes" / "conseil-c.html").read_bytes(), "html.parser")
    assert page.select_one(".note-body .citation.broken") is not None
    assert "jamais une source" in page.select_one(".broken-citations").get_text()


def _adopt_fixture(small: Path) -> Path:
    file = small / "notes" / "synthese-2025.md"
    adopt(file, "Conseil des élèves", dt.date(2025, 4, 10))
    return file


def test_adoption_freezes_the_perimeter_and_records_a_hash(small: Path) -> None:
    file = _adopt_fixture(small)
    meta, _ = front_matter(file)
    assert [e["id"] for e in meta["proposed"]["extractions"]] == ["a-budget", "a-two-paragraphs"]
    assert meta["adoption"]["by"] == "Conseil des élèves" and meta["adoption"]["hash"].startswith("sha256:")
    assert [h["status"] for h in meta["history"]] == ["draft", "adopted"]
    assert check_content(small).errors == []
    with pytest.raises(AdoptionError, match="immutable"):
        adopt(file, "Quelqu'un", dt.date(2025, 5, 1))


def test_a_changed_adopted_act_is_refused(small: Path) -> None:
    file = _adopt_fixture(small)
    file.write_text(file.read_text(encoding="utf-8").replace("reconduit", "augmenté"), encoding="utf-8")
    errors = [p for p in check_content(small).errors if p.code == "adopted-act-changed"]
    assert len(errors) == 1 and "supersedes" in errors[0].hint


def test_deleted_evidence_of_an_adopted_act_is_refused(small: Path) -> None:
    _adopt_fixture(small)
    replace(small, "notes/conseil-a.extractions.yaml", "  - id: a-budget\n", "  - id: a-budget-renamed\n")
    errors = [p for p in check_content(small).errors if p.code == "deleted-evidence"]
    assert len(errors) == 1 and "a-budget" in errors[0].message and "synthese-2025" in errors[0].message


def test_deleted_discarded_evidence_still_shows_from_its_frozen_quote(small: Path, tmp_path: Path) -> None:
    _adopt_fixture(small)
    replace(small, "notes/conseil-a.extractions.yaml", "  - id: a-two-paragraphs\n", "  - id: a-two-renamed\n")
    analysis = check_content(small)
    assert not [p for p in analysis.errors if p.code == "deleted-evidence"]
    build(small, tmp_path / "site")
    page = BeautifulSoup((tmp_path / "site" / "notes" / "synthese-2025.html").read_bytes(), "html.parser")
    item = page.select_one('.discarded-item[data-ext="a-two-paragraphs"]')
    assert item is not None and "Deuxième paragraphe" in item.blockquote.get_text()
    assert "supprimée depuis l'adoption" in item.get_text()


def test_a_changed_cited_passage_is_flagged(small: Path, tmp_path: Path) -> None:
    _adopt_fixture(small)
    replace(small, "notes/conseil-a.md", "euros, voté", "euros, adopté et voté")
    replace(small, "notes/conseil-a.extractions.yaml", "      voté à l'unanimité.", "      adopté et voté à l'unanimité.")
    warnings = [p for p in check_content(small).problems if p.code == "changed-evidence"]
    assert len(warnings) == 1 and warnings[0].severity.value == "warning"
    build(small, tmp_path / "site")
    page = BeautifulSoup((tmp_path / "site" / "notes" / "synthese-2025.html").read_bytes(), "html.parser")
    assert "a-two-paragraphs" in page.select_one(".act-status .changed").get_text()


def test_a_back_transition_is_refused(small: Path) -> None:
    file = _adopt_fixture(small)
    text = file.read_text(encoding="utf-8")
    file.write_text(text.replace("  - {status: adopted, date: 2025-04-10}",
                                 "  - {status: adopted, date: 2025-04-10}\n  - {status: draft, date: 2025-04-11}"),
                    encoding="utf-8")
    codes = {p.code for p in check_content(small).errors}
    assert "lifecycle" in codes


def test_superseded_is_never_written(small: Path) -> None:
    replace(small, "notes/synthese-2025.md", "perimeter:", "history:\n  - {status: superseded, date: 2025-04-01}\nperimeter:")
    assert any(p.code == "invalid-value" and "supersedes" in p.hint for p in check_content(small).errors)


def test_a_wiki_citing_a_deleted_extraction_says_source_deleted(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/wiki-budget.md", "[[ext:a-budget]]", "[[ext:a-budget]] [[ext:a-disparue]]")
    build(small, tmp_path / "site")
    page = BeautifulSoup((tmp_path / "site" / "notes" / "wiki-budget.html").read_bytes(), "html.parser")
    deleted = page.select_one(".note-body .citation.deleted")
    assert deleted is not None and "source supprimée" in deleted.get_text()
    assert "ext:a-disparue" in page.select_one(".broken-citations").get_text()


def test_a_synthesis_with_no_recorded_perimeter_is_refused_not_emptied(small: Path, tmp_path: Path) -> None:
    file = small / "notes" / "synthese-2025.md"
    adopt(file, "Conseil des élèves", dt.date(2025, 4, 10), record_perimeter=False)
    build(small, tmp_path / "site")
    page = BeautifulSoup((tmp_path / "site" / "notes" / "synthese-2025.html").read_bytes(), "html.parser")
    assert "Périmètre inconnu" in page.select_one(".discarded .refusal").get_text()
    assert page.select(".discarded-item") == []


def test_adopt_command_line(small: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "generator", "adopt", str(small / "notes" / "synthese-2025.md"),
                             "--by", "Conseil", "--date", "2025-04-10"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "adopted synthese-2025" in result.stdout
    again = subprocess.run([sys.executable, "-m", "generator", "adopt", str(small / "notes" / "wiki-budget.md"),
                            "--by", "Conseil"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "not a directed synthesis" in again.stderr


def test_debate_rises_to_the_citation(site: Path) -> None:
    """INV-8: a citation whose extraction carries disagreeing comments shows it."""
    disagreeing = set()
    for path in (CONTENT / "notes").glob("*.extractions.yaml"):
        for extraction in sidecar(CONTENT, path.name[: -len(".extractions.yaml")]):
            comments = [c for c in extraction.get("comments") or [] if not c.get("withdrawn")]
            if any(c.get("stance") == "disagree" for c in comments):
                disagreeing.add(extraction["id"])
    seen = 0
    for slug in articles(CONTENT):
        page = BeautifulSoup((site / "notes" / f"{slug}.html").read_bytes(), "html.parser")
        for link in page.select(".note-body a.citation"):
            fragment = link["href"].partition("#")[2]
            if not fragment.startswith("ext-"):
                continue
            disputed = fragment[4:] in disagreeing
            assert ("disputed" in link["class"]) is disputed, fragment
            seen += disputed
    assert seen >= 1
