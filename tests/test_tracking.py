"""Note keys made only for the notes an edit can reach (generator/engine/tracking.py).

Each case edits the small fixture, rebuilds with the cache and compares with a full build;
the suite's read check (generator.engine.reads.check_reads) also makes every key taken from the last build again and
refuses one that differs (``check_tracked``), so a relation the tracker misses fails here.
The counts show the point of it: one edit makes few keys."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.engine import reads, tracking
from generator.engine.cache import BuildCache, default_cache_path
from generator.pipeline import build
from support.corpus import full_site, replace, site_files

pytestmark = pytest.mark.slow  # builds the fixture over and over


def _rebuilt(content: Path, out: Path) -> dict[str, bytes]:
    build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    return site_files(out, search=False)


def _full(content: Path, tmp_path: Path) -> dict[str, bytes]:
    return full_site(content, tmp_path / "full")


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The notes whose key a build makes (the check's second making not counted)."""
    made: list[str] = []
    monkeypatch.setattr(reads, "_checking", False)  # counted without the check's own making, then checked below
    real = reads.note_key

    def counted(shell: str, site: object, theme: object, slug: str) -> str:
        made.append(slug)
        return real(shell, site, theme, slug)  # type: ignore[arg-type]

    monkeypatch.setattr(reads, "note_key", counted)
    return made


def _notes(small: Path) -> int:
    return len(list((small / "notes").glob("*.md")))


def test_a_body_edited_makes_the_keys_of_its_note_and_of_the_notes_around_it(small: Path, tmp_path: Path,
                                                                           made: list[str]) -> None:
    out = tmp_path / "site"
    _rebuilt(small, out)
    assert len(made) >= _notes(small) - 3  # a first build makes every key (the private notes have none)
    made.clear()
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est prolongé.")
    assert _rebuilt(small, out) == _full(small, tmp_path)
    assert "conseil-c" in made and len(set(made)) < _notes(small) - 3, made


@pytest.mark.parametrize("check", ["0", "1"])
def test_a_note_added_mends_a_broken_link_of_a_note_not_edited(small: Path, tmp_path: Path, made: list[str],
                                                               monkeypatch: pytest.MonkeyPatch, check: str) -> None:
    """[[nouvelle]] names no note; the note added under that name is linked from then on, though
    the linking note's file did not change and the new note knew nothing of it before."""
    monkeypatch.setattr(reads, "_checking", check == "1")
    out = tmp_path / "site"
    text = (small / "notes" / "conseil-b.md").read_text(encoding="utf-8")
    (small / "notes" / "conseil-b.md").write_text(text + "\nVoir [[nouvelle]].\n", encoding="utf-8")
    _rebuilt(small, out)
    conseil_c = (small / "notes" / "conseil-c.md").read_text(encoding="utf-8")
    (small / "notes" / "nouvelle.md").write_text(conseil_c.replace("Séance C", "Nouvelle séance"), encoding="utf-8")
    assert _rebuilt(small, out) == _full(small, tmp_path)
    assert b'href="nouvelle.html"' in (out / "notes" / "conseil-b.html").read_bytes()


def test_a_title_edited_reaches_the_notes_linking_to_it(small: Path, tmp_path: Path, made: list[str]) -> None:
    out = tmp_path / "site"
    _rebuilt(small, out)
    linking = [path.stem for path in (small / "notes").glob("*.md")
               if "conseil-a" in path.read_text(encoding="utf-8") and path.stem not in ("conseil-a", "secret-a")]
    made.clear()
    replace(small, "notes/conseil-a.md", "title: Séance A", "title: Séance A renommée")
    assert _rebuilt(small, out) == _full(small, tmp_path)
    assert {"conseil-a", *linking} <= set(made), (linking, made)


def test_a_key_the_tracker_misses_is_refused(small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check itself, shown with a tracker that forgets backlinks and the notes a changed
    note consults: a link added to a note changes its target's backlinks, which it misses."""
    out = tmp_path / "site"
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    monkeypatch.setattr(tracking, "consulted", lambda site, slug: set())
    text = (small / "notes" / "conseil-d.md").read_text(encoding="utf-8")
    (small / "notes" / "conseil-d.md").write_text(text + "\nVoir [[conseil-c]].\n", encoding="utf-8")
    with pytest.raises(reads.StaleOutputs, match=r"tracking\.py:consulted"):
        build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))


def _article_notes(small: Path) -> dict[str, set[str]]:
    from generator.pipeline import check_content, site_model

    site = site_model(check_content(small), small)
    return {slug: reads.article_notes(site, slug) for slug in site.articles}


def test_an_article_is_keyed_again_only_when_an_edit_reaches_what_it_reads(small: Path, tmp_path: Path,
                                                                          made: list[str]) -> None:
    """An article reads the notes of its perimeter, those it involves and those of its
    selection, which do not read it back: a body edited outside all of them leaves its key
    as it was; one inside (or a note added to its perimeter, which it did not read before)
    makes it again; a verdict recorded for one of its pairs (no note's file) makes it again."""

    out = tmp_path / "site"
    _rebuilt(small, out)
    read = _article_notes(small)
    outside = sorted(path.stem for path in (small / "notes").glob("*.md")
                     if path.stem not in read and not any(path.stem in notes for notes in read.values())
                     and path.stem != "secret-a")
    assert outside and "conseil-c" in read["wiki-budget"], (outside, read)
    made.clear()
    _append_text(small / "notes" / f"{outside[0]}.md", "\nUne phrase de plus.\n")
    assert _rebuilt(small, out) == _full(small, tmp_path)
    assert made and not set(made) & set(read), made
    made.clear()
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est prolongé.")
    assert _rebuilt(small, out) == _full(small, tmp_path)
    assert "wiki-budget" in made, made
    made.clear()
    conseil_c = (small / "notes" / "conseil-c.md").read_text(encoding="utf-8")
    (small / "notes" / "conseil-e.md").write_text(conseil_c.replace("Séance C", "Séance E"), encoding="utf-8")
    assert _rebuilt(small, out) == _full(small, tmp_path)
    assert "wiki-budget" in made and "conseil-e" in _article_notes(small)["wiki-budget"], made
    made.clear()
    _record(small, "verdict")
    assert _rebuilt(small, out) == _full(small, tmp_path)
    assert "synthese-2025" in made, made


def test_an_articles_notes_involved_are_taken_from_the_last_book_while_its_inputs_are_the_same(
        small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What an article involves (:func:`reads.article_notes`: thousands of discarded passages
    walked) is kept in the book: an edit that leaves its inputs as they were walks none; a
    book whose notes involved are not those of now is refused by the read check."""
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    build(small, out, search=False, cache=cache)
    assert cache.keys is not None and cache.keys.involved == {slug: frozenset(notes)
                                                              for slug, notes in _article_notes(small).items()
                                                              if slug in cache.keys.involved}
    assert "wiki-budget" in cache.keys.involved
    walked: list[str] = []
    real = reads.article_notes
    monkeypatch.setattr(reads, "_checking", False)  # counted without the check's own walk
    monkeypatch.setattr(reads, "article_notes", lambda site, slug: walked.append(slug) or real(site, slug))
    _append_text(small / "notes" / "club-a.md", "\nUne phrase de plus.\n")
    assert _rebuilt(small, out) == _full(small, tmp_path)
    assert "wiki-budget" not in walked, walked
    monkeypatch.setattr(reads, "_checking", True)
    cache = BuildCache.open(default_cache_path(out))
    assert cache.keys is not None
    cache.keys.involved["wiki-budget"] = frozenset()  # a book that missed what it involves
    _append_text(small / "notes" / "club-a.md", "\nEncore une.\n")
    with pytest.raises(reads.StaleOutputs, match="tracked_keys"):
        build(small, out, search=False, cache=cache)


def _append_text(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.mark.parametrize("forgets", ["everything", "inputs"])
def test_an_article_key_the_tracker_misses_is_refused(small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     forgets: str) -> None:
    """The check, shown with a tracker that forgets what an article reads: its inputs beyond
    the notes (a verdict recorded); or those and the notes it reads (a note added to its
    perimeter: the audit's key in its inputs digests the perimeter's files too)."""

    out = tmp_path / "site"
    monkeypatch.setattr(tracking.reads, "article_inputs", lambda site, slug: "")
    if forgets == "everything":
        monkeypatch.setattr(tracking.reads, "article_notes", lambda site, slug: set())
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    if forgets == "everything":
        conseil_c = (small / "notes" / "conseil-c.md").read_text(encoding="utf-8")
        (small / "notes" / "conseil-e.md").write_text(conseil_c.replace("Séance C", "Séance E"), encoding="utf-8")
    else:
        _record(small, "verdict")
    with pytest.raises(reads.StaleOutputs):
        build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))


def _record(small: Path, record: str) -> None:
    """A verdict or a contestation recorded for one of synthese-2025's judgeable pairs."""
    import yaml

    from generator.pipeline import check_content

    (pair, *_rest) = [a for a in check_content(small).assessments["synthese-2025"] if a.judgeable]
    if record == "verdict":
        written = {"verdicts": [{"claim_sha256": pair.claim_sha256, "source_sha256": pair.source_sha256,
                                 "verdict": "supported", "rationale": "r",
                                 "provenance": {"method": "human", "date": "2025-06-01"}}]}
    else:
        written = {"contestations": [{"claim": pair.claim.id, "author": "Camille Martin", "date": "2025-06-02",
                                      "reason": "Le passage dit autre chose."}]}
    (small / f"{record}s").mkdir(exist_ok=True)
    (small / f"{record}s" / "synthese-2025.yaml").write_text(yaml.safe_dump(written, allow_unicode=True),
                                                             encoding="utf-8")


@pytest.mark.parametrize("record", ["verdict", "contestation"])
def test_an_articles_pairs_are_read_through_its_evidence_key_and_a_key_without_its_records_is_refused(
        small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record: str) -> None:
    """An article's pairs' states (and their tally) are keyed by its evidence key, not
    pickled whole: the key takes the records of the article's own files, so a verdict or a
    contestation recorded makes its pages again, as a full build has them; with the records
    left out of the key (a mutation of Carnet's code) the same rebuild is refused."""
    from generator.corpus.verdicts import VerificationRecords

    out = tmp_path / "site"
    _rebuilt(small, out)
    page = (out / "notes" / "synthese-2025.html").read_bytes()
    _record(small, record)
    assert _rebuilt(small, out) == _full(small, tmp_path)
    assert (out / "notes" / "synthese-2025.html").read_bytes() != page

    mutated = tmp_path / "mutated"
    shutil.copytree(small, mutated)
    shutil.rmtree(mutated / f"{record}s")
    _rebuilt(mutated, tmp_path / "site-mutated")
    monkeypatch.setattr(VerificationRecords, "by_article", property(lambda records: {}))
    _record(mutated, record)
    with pytest.raises(reads.StaleOutputs):
        _rebuilt(mutated, tmp_path / "site-mutated")
