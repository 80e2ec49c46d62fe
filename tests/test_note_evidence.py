"""The notes' evidence facts (coverage, anchor statuses) of a rebuild in the process of the
last build: taken from that build for the notes whose published note and anchoring are the
same objects, made again for the others, and always what a build made whole gives."""

from __future__ import annotations

import shutil
from pathlib import Path

from generator.anchoring import AnchorFacts
from generator.corpus.publication import Publication
from generator.engine.cache import BuildCache, default_cache_path
from generator.engine.evidence import NoteEvidence, note_evidence
from generator.pipeline import CheckedContent, build, check_content
from support.corpus import replace, site_files

EXAMPLE = Path(__file__).resolve().parents[1] / "content"


NOTE = "cvl-2024-09-19"


def _edited(tmp_path: Path, old: str, new: str) -> tuple[NoteEvidence, Publication, dict[str, AnchorFacts],
                                                         CheckedContent]:
    """The example's evidence, then its sidecar of :data:`NOTE` edited (``old`` → ``new``): the last
    evidence, and the publication and facts of now with the notes not changed the last build's
    objects (as a build of the same process has them), and the content checked anew."""
    root = tmp_path / "content"
    shutil.copytree(EXAMPLE, root)
    before = check_content(root)
    last = note_evidence(before.publication, before.facts)
    replace(root, f"notes/{NOTE}.extractions.yaml", old, new)
    after = check_content(root)
    facts = {slug: before.facts[slug] if slug != NOTE else fact for slug, fact in after.facts.items()}
    notes = {slug: before.publication.notes[slug] if slug != NOTE else published
             for slug, published in after.publication.notes.items()}
    object.__setattr__(after.publication, "notes", notes)
    return last, after.publication, facts, after


def test_the_evidence_of_the_notes_not_changed_is_taken_as_it_was(tmp_path: Path) -> None:
    last, publication, facts, after = _edited(tmp_path, "quote: ", "quote: pas dans le texte ")  # one detached
    got = note_evidence(publication, facts, last)
    full = note_evidence(publication, facts)
    assert (got.coverage, got.statuses, got.merged) == (full.coverage, full.statuses, full.merged)
    assert got.statuses[NOTE] != last.statuses[NOTE], "the note changed is made again"
    assert got.merged is not last.merged, "its statuses changed: merged again"
    assert all(got.coverage[slug] is last.coverage[slug] for slug in got.coverage if slug != NOTE)
    # merged as a reader would: every published extraction's status, by its id
    assert got.merged == {e.id: after.facts[slug].landed[e.id][0] for slug, published in publication.notes.items()
                          if slug in after.facts for e in published.extractions}
    again = note_evidence(publication, {**facts}, got)  # the same statuses: merged ones carried
    assert again.merged is got.merged and again.merged == full.merged


def test_an_edit_that_keeps_every_status_carries_the_merged_statuses(tmp_path: Path) -> None:
    last, publication, facts, _after = _edited(tmp_path, "kind: objection", "kind: proposition")  # no anchor moves
    got = note_evidence(publication, facts, last)
    assert got.merged is last.merged and got.merged == note_evidence(publication, facts).merged


def test_serve_rebuilds_take_the_evidence_of_the_last_one_and_equal_a_full_build(tmp_path: Path) -> None:
    root = tmp_path / "content"
    shutil.copytree(EXAMPLE, root)
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(root, out, search=False, cache=cache)
    first = cache.evidence_kept
    assert first is not None
    sidecar = root / "notes" / "cvl-2024-09-19.extractions.yaml"
    replace(root, "notes/cvl-2024-09-19.extractions.yaml", "quote: ", "quote: pas dans le texte ")
    build(root, out, search=False, cache=cache, edited={sidecar})
    kept = cache.evidence_kept
    assert kept is not None and kept is not first
    assert sum(kept.coverage[slug] is first.coverage[slug] for slug in kept.coverage) >= len(kept.coverage) - 1
    full = tmp_path / "full"
    build(root, full, search=False)
    assert site_files(out, search=False) == site_files(full, search=False)
