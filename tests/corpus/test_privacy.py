"""Private notebooks, notes only in private notebooks, masked extractions and the text of
withdrawn comments appear in no emitted file (INV-12); names follow each notebook's rule."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from bs4 import BeautifulSoup

from generator.commands.context import context_bundle
from generator.corpus.authors import display_names, initials, people_in_order
from generator.corpus.load import load_corpus
from generator.corpus.publication import publish
from generator.pipeline import build, check_content
from support.corpus import line_of, replace, site_files, write

PRIVATE_STRINGS = [
    "PRIVATETOKEN", "PRIVATETITLE", "PRIVATECOMMENT", "PRIVATEASSET", "SECRETNOTEBOOK", "Gaston Confidentiel",
    "secret-a", "secret-ext", "secret-com", "Base entièrement privée", "cachee",
    "MASKEDCOMMENT", "a-masked", "ca-masked", "WITHDRAWNTEXT",
    # real names of people a pseudonym or initials rule protects
    "Zoé Realname", "Yann Realname", "Anne Enseignante", "Jean-Paul Lecteur",
]


def test_private_content_is_absent_from_every_emitted_file(small_site: Path) -> None:
    files = site_files(small_site)
    assert files, "the site was built"
    leaks = [(path, secret) for path, data in files.items() for secret in PRIVATE_STRINGS
             if secret.encode("utf-8") in data or secret in path]
    assert leaks == []


def test_private_asset_is_not_copied_public_one_is(small_site: Path) -> None:
    files = site_files(small_site)
    assert "assets/public.csv" in files
    assert "assets/private.csv" not in files


def test_bases_show_only_public_notebooks(small_site: Path) -> None:
    files = site_files(small_site)
    assert "bases/cachee.html" not in files, "a base of private notebooks only is not published"
    soup = BeautifulSoup(files["bases/ecole.html"], "html.parser")
    titles = [a.get_text() for a in soup.select(".cards a")]
    assert titles == ["Conseil des élèves"]


def test_membership_in_a_private_notebook_is_not_published(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/conseil-c.md", "notebooks:\n", "notebooks:\n  secret:\n    theme: [Interne]\n")
    build(small, tmp_path / "site")
    page = (tmp_path / "site" / "notes" / "conseil-c.html").read_text(encoding="utf-8")
    assert "SECRETNOTEBOOK" not in page and "Interne" not in page
    assert "Dans 1 carnet" in page


def test_public_note_linking_to_private_note_stops_the_build(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/conseil-c.md", "reconduit.", "reconduit, voir [[secret-a]].")
    errors = [p for p in check_content(small).errors if p.code == "private-link"]
    assert len(errors) == 1 and errors[0].file == "notes/conseil-c.md"


def test_private_note_may_link_to_public_note(small: Path) -> None:
    # secret-a links to [[conseil-a]]: that is fine, and creates no public backlink
    assert check_content(small).errors == []


def test_withdrawn_comment_shows_a_tombstone_not_its_text(small_site: Path) -> None:
    soup = BeautifulSoup((small_site / "notes" / "conseil-a.html").read_bytes(), "html.parser")
    tombstone = soup.select_one("#com-ca-3")
    assert tombstone is not None and "withdrawn" in tombstone["class"]
    text = tombstone.get_text(" ", strip=True)
    assert "retiré le" in text and "6 octobre 2024" in text and "propos personnels" in text
    expected = hashlib.sha256("WITHDRAWNTEXT à ne jamais publier.".encode()).hexdigest()
    assert f"sha256:{expected}" in text


def test_author_rules_on_pages(small_site: Path) -> None:
    note_a = BeautifulSoup((small_site / "notes" / "conseil-a.html").read_bytes(), "html.parser")
    commenters = [c.select_one(".meta strong").get_text() for c in note_a.select(".comment:not(.withdrawn)")]
    assert commenters == ["Élève 2", "Mme E."], "pseudonyms by first appearance, pins kept"
    club = (small_site / "notes" / "club-a.html").read_text(encoding="utf-8")
    assert "J.-P. L." in club
    veille = (small_site / "notes" / "veille-a.html").read_text(encoding="utf-8")
    assert "Claire Publique" in veille


def test_shared_note_uses_the_most_protective_rule(small: Path) -> None:
    corpus, _ = load_corpus(small)
    publication = publish(corpus)
    # conseil-a is in 'conseil' (pseudonyms) and 'veille' (full names): pseudonyms win
    assert publication.governing["conseil-a"] == "conseil"
    assert publication.name("conseil-a", "Zoé Realname") == "Élève 1"


def test_pseudonyms_are_stable_when_later_contributions_arrive(small: Path) -> None:
    corpus, _ = load_corpus(small)
    notebook = corpus.notebooks["conseil"]
    before = display_names(notebook, corpus.notes_of("conseil"))
    replace(small, "notes/conseil-c.md", "authors: [Yann Realname]", "authors: [Nouvelle Élève, Yann Realname]")
    corpus, _ = load_corpus(small)
    after = display_names(notebook, corpus.notes_of("conseil"))
    assert all(after[name] == shown for name, shown in before.items())
    assert after["Nouvelle Élève"] not in before.values()


def test_people_order_and_initials() -> None:
    assert initials("Marie-Claire Dubois") == "M.-C. D."
    assert initials("Jonas") == "J."
    assert people_in_order([]) == []


def test_initials_keep_particles_and_compound_names() -> None:
    """Issue 24: "Antoine du Hamel" was "A. D. H."; a particle's initial reads as a name."""
    assert initials("Antoine du Hamel") == "A. du H."
    assert initials("Jean de la Fontaine") == "J. de la F."
    assert initials("Valéry Giscard d'Estaing") == "V. G. d'E."
    assert initials("Ludwig van Beethoven") == "L. van B."
    assert initials("Jean-Pierre de Gaulle-Martin") == "J.-P. de G.-M."
    assert initials("Van Morrison") == "V. M.", "a capitalised first word is a name, not a particle"
    assert initials("Du Bellay") == "D. B."
    assert initials("du") == "D.", "a name of one word is never only a particle"


def test_a_stricter_rule_from_a_shared_membership_is_said_on_the_page_and_in_the_build(small: Path,
                                                                                       tmp_path: Path) -> None:
    """Issue 24: a note in a notebook with full names and one with pseudonyms shows
    pseudonyms everywhere; its page and the build's summary say why."""
    corpus, _ = load_corpus(small)
    public = {slug: nb for slug, nb in corpus.notebooks.items() if nb.is_public}
    # recomputed from the files: a public notebook's notes also in a public notebook protecting more
    expected = {slug: tuple(n.slug for n in corpus.notes_of(slug)
                            if any(public[m.notebook].author_rule.protection > nb.author_rule.protection
                                   for m in n.memberships if m.notebook in public))
                for slug, nb in public.items()}
    assert expected["veille"] == ("conseil-a",)
    result = build(small, tmp_path / "site", search=False)
    assert {r.notebook: r.stricter for r in result.reports} == expected
    page = BeautifulSoup((tmp_path / "site" / "notes" / "conseil-a.html").read_bytes(), "html.parser")
    said = page.select_one(".author-rule").get_text()
    assert "« Conseil des élèves »" in said and "pseudonymes" in said and "« Veille »" in said
    alone = BeautifulSoup((tmp_path / "site" / "notes" / "veille-a.html").read_bytes(), "html.parser")
    assert "plus stricte" not in alone.select_one(".author-rule").get_text()
    printed = subprocess.run([sys.executable, "-m", "generator", "build", str(small), "--out", str(tmp_path / "cli"),
                              "--no-search"], capture_output=True, text=True, timeout=300)
    assert printed.returncode == 0, printed.stderr
    assert "1 of its note(s) show names by a stricter rule, of another notebook they are also in: conseil-a" \
        in printed.stdout


def test_build_reports_what_each_public_notebook_publishes(small: Path, tmp_path: Path) -> None:
    result = build(small, tmp_path / "site")
    reports = {r.notebook: r for r in result.reports}
    assert set(reports) == {"club", "conseil", "veille"}, "private notebooks are not reported as published"
    conseil = reports["conseil"]
    # recompute independently from the files: comments on unmasked extractions of its notes
    corpus, _ = load_corpus(small)
    live = [c for n in corpus.notes_of("conseil") for e in n.extractions if not e.masked for c in e.comments]
    assert conseil.comments == sum(c.withdrawn is None for c in live)
    assert conseil.withdrawn == sum(c.withdrawn is not None for c in live)
    assert "Zoé Realname" not in conseil.authors and "Élève 1" in conseil.authors


OPPOSITIONS = """wiki: wiki-budget
provenance: {method: human, date: '2025-06-01'}
oppositions:
  - a: a-budget
    b: secret-ext
    question: PRIVATEQUESTION le contrat est-il signé ?
  - a: a-masked
    b: a-budget
    question: MASKEDQUESTION le passage masqué compte-t-il ?
  - a: a-budget
    b: a-two-paragraphs
    question: PUBLICQUESTION le budget est-il voté ?
"""


def test_an_opposition_touching_private_content_reaches_no_output(small: Path, tmp_path: Path) -> None:
    write(small, "oppositions/wiki-budget.yaml", OPPOSITIONS)
    out = tmp_path / "site"
    result = build(small, out)
    files = site_files(out)
    secrets = ["PRIVATEQUESTION", "MASKEDQUESTION", *PRIVATE_STRINGS]
    leaks = [(path, secret) for path, data in files.items() for secret in secrets
             if secret.encode("utf-8") in data or secret in path]
    assert leaks == []
    assert b"PUBLICQUESTION" in files["graph.json"], "a pair of two published extractions is still published"
    assert b"PUBLICQUESTION" in files["notes/wiki-budget.selection.html"]
    graph = json.loads(files["graph.json"])
    oppositions = [n for n in graph["nodes"] if n.get("type") == "opposition"]
    assert len(oppositions) == 1
    opposes = [e for e in graph["links"] if e["type"] == "opposes"]
    assert sorted(e["source"] for e in opposes) == ["extraction:a-budget", "extraction:a-two-paragraphs"]
    bundle = context_bundle(small, "budget voté contrat")  # what 'carnet context' hands an agent
    assert "PUBLICQUESTION" in bundle and not [s for s in secrets if s in bundle]
    warned = [(p.file, p.line) for p in result.problems if p.code == "private-opposition"]
    assert warned == [("oppositions/wiki-budget.yaml", line_of(small, "oppositions/wiki-budget.yaml", "- a:", n))
                      for n in (1, 2)], "each pair left out is reported where it is written"


PRIVATE_WIKI = """---
title: Wiki PRIVATETITLE
type: wiki
notebooks:
  secret:
    theme: [Interne]
---
Le contrat est signé PRIVATETOKEN [[ext:secret-ext]].
"""


def test_a_private_articles_verdicts_change_no_public_pair(small: Path, tmp_path: Path) -> None:
    write(small, "notes/secret-wiki.md", PRIVATE_WIKI)
    (public,) = check_content(small).assessments["wiki-budget"]
    write(small, "verdicts/secret-wiki.yaml", (
        f"verdicts:\n  - claim_sha256: {public.claim_sha256}\n    source: ext:a-budget\n"
        f"    source_sha256: {public.source_sha256}\n    verdict: supported\n"
        "    rationale: PRIVATERATIONALE du carnet privé.\n    provenance: {method: human, date: '2025-06-01'}\n"))
    analysis = check_content(small)
    assert [a.state.reason for a in analysis.assessments["wiki-budget"]] == ["not-judged"]
    (stray,) = [p for p in analysis.problems if p.code == "stray-verdict"]
    assert stray.file == "verdicts/secret-wiki.yaml" and "verdicts/wiki-budget.yaml" in stray.hint
    out = tmp_path / "site"
    build(small, out)
    assert [path for path, data in site_files(out).items() if b"PRIVATERATIONALE" in data] == []
