"""The example corpus in content/ is clean, builds under --strict, and keeps the site
invariants (highlights, links, privacy)."""

from __future__ import annotations

from pathlib import Path

from generator.corpus.load import load_corpus
from generator.pipeline import check_content
from support.corpus import site_files
from support.site_checks import broken_internal_links, highlight_mismatches

CONTENT = Path(__file__).resolve().parents[1] / "content"


def test_example_content_has_no_problem_but_its_planted_anchors() -> None:
    problems = check_content(CONTENT).problems
    assert [p.format_text() for p in problems if p.severity.value != "notice"] == []
    anchors = sorted((p.code, p.message.split("'")[1]) for p in problems
                     if p.code in ("detached-anchor", "relocated-anchor"))
    assert anchors == [("detached-anchor", "cvl-0515-fermeture-epreuves"),
                       ("relocated-anchor", "cvl-0515-livraison-date")]
    assert {p.code for p in problems} <= {"detached-anchor", "relocated-anchor", "unsourced-claim", "unjudged-pairs"}


def test_example_highlights_and_links(example_site: Path) -> None:
    assert highlight_mismatches(CONTENT, example_site) == []
    assert broken_internal_links(example_site) == []


def test_example_private_notebook_leaves_no_trace(example_site: Path) -> None:
    corpus, _ = load_corpus(CONTENT)
    private = [nb for nb in corpus.notebooks.values() if not nb.is_public]
    assert private, "the example corpus shows a private notebook"
    secrets = [nb.title for nb in private] + [nb.slug for nb in private]
    for note in corpus.notes.values():
        if all(not corpus.notebooks[m.notebook].is_public for m in note.memberships):
            secrets += [note.slug, note.title] + [e.quote for e in note.extractions]
    leaks = [(path, s) for path, data in site_files(example_site).items() for s in secrets
             if s.encode("utf-8") in data or s in path]
    assert leaks == []


def test_planted_cases_hold() -> None:
    """The cases later features are tested on, checked on the corpus as an auditor would."""
    analysis = check_content(CONTENT)
    corpus = analysis.corpus
    notes = corpus.notes
    extractions = {e.id: (n, e) for n in notes.values() for e in n.extractions}
    comments = [c for _n, e in extractions.values() for c in e.comments]

    # the reference scale the issue asks for
    cvl = corpus.notes_of("cvl")
    minutes = [n for n in cvl if n.type.value == "note" and n.media is None]
    assert len(minutes) >= 8
    assert {y for n in minutes for y in n.membership("cvl").categories.get("annee", ())} >= {"2024-2025", "2025-2026"}
    assert len(extractions) >= 60
    assert {"agree", "disagree"} <= {c.stance for c in comments}
    assert any(e.masked for _n, e in extractions.values()) and any(c.withdrawn for c in comments)
    assert any(not nb.is_public for nb in corpus.notebooks.values())
    assert sum("cvl" in b.notebooks for b in corpus.bases.values()) >= 2, "one notebook in two bases"

    # one note, "Budget" in one notebook and "Subvention" in the other
    shared = [n for n in notes.values() if len(n.memberships) > 1]
    assert any({"Budget"} <= set(n.membership("cvl").categories.get("theme", ())) and
               {"Subvention"} <= set(n.membership("veille-financement").categories.get("theme", ()))
               for n in shared if n.membership("cvl") and n.membership("veille-financement"))

    # a minority extraction nobody else mentions, called "le vrai risque du budget" by a comment
    _note, lease = extractions["cvl-1114-bail-verbal"]
    assert "accord verbal" in lease.quote and "propriétaire" in lease.quote
    others = [e for i, (_n, e) in extractions.items() if i != lease.id]
    assert not any(word in e.quote.lower() for e in others for word in ("bail", "propriétaire", "accord verbal"))
    risk = [c for c in comments if c.text and "le vrai risque du budget" in c.text]
    assert [c.extraction for c in risk] == [lease.id]

    # an extraction bridging the spending threshold and the statutes
    _n, bridge = extractions["cvl-1114-seuil-statuts"]
    assert "500 €" in bridge.quote and "statuts" in bridge.quote

    # a sentence said literally in a transcript turn that no extraction covers
    sentence = "L'ordre du jour sera transmis par écrit."
    transcripts = [n for n in cvl if n.media]
    assert transcripts
    hits = []
    for transcript in transcripts:
        document = analysis.anchored[transcript.slug].document
        for index, element in enumerate(document.elements):
            start = element.text.find(sentence)
            if start >= 0:
                assert element.kind == "turn"
                covered = [x for x, anchor in analysis.anchored[transcript.slug].anchors.items()
                           for p in anchor.portions if p.element == index and p.start < start + len(sentence)
                           and start < p.end]
                hits.append((transcript.slug, covered))
    assert len(hits) == 1 and hits[0][1] == []
