"""A rebuild in the process of the last one (``carnet serve``) carries the outputs of the notes
whose keys it takes from that build's book (generator/engine/render.py:every_note_outputs), their
files kept at once: it asks the build cache and the output tree about the notes an edit reaches
alone. What it carries is what the cache would recall: the site is the full build's, and a book
whose files the tree does not hold (as recalled) falls back to asking note by note."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from generator.engine import reads
from generator.engine.cache import BuildCache, default_cache_path
from generator.engine.memo import Kind
from generator.pipeline import build
from support.corpus import full_site, replace, site_files

pytestmark = pytest.mark.slow  # builds the fixture several times


def _full(content: Path, tmp_path: Path) -> dict[str, bytes]:
    return full_site(content, tmp_path / "full")


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys of the notes' outputs the build asks the cache whether it holds."""
    asked: list[str] = []
    real = BuildCache.holds

    def holds(self: BuildCache, kind: Kind, key: object) -> bool:
        if kind is Kind.NOTE_OUTPUTS:
            asked.append(key())  # type: ignore[operator]
        return real(self, kind, key)  # type: ignore[arg-type]

    monkeypatch.setattr(BuildCache, "holds", holds)
    return asked


def test_a_rebuild_in_process_carries_the_notes_an_edit_does_not_reach(small: Path, tmp_path: Path,
                                                                     asked: list[str]) -> None:
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(small, out, search=False, cache=cache)
    assert cache.keys is not None and cache.keys.filed, "the book keeps what the build filed"
    published = len(cache.keys.filed)
    asked.clear()
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est prolongé.")
    build(small, out, search=False, cache=cache, edited={small / "notes/conseil-c.md"})
    assert site_files(out, search=False) == _full(small, tmp_path)
    # a few notes asked about (the one edited and those around it), not every published one
    assert 0 < len(asked) < published - 3, (len(asked), published)
    assert cache.counts.reused[Kind.NOTE_OUTPUTS] >= published - len(asked), "carried notes count as reused"


def test_the_book_of_a_build_pickled_carries_nothing(small: Path, tmp_path: Path, asked: list[str]) -> None:
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    build(small, out, search=False, cache=cache)
    assert cache.keys is not None
    assert pickle.loads(pickle.dumps(cache.keys)).filed == {}, "a property of the process that made it"
    asked.clear()
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est prolongé.")
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))  # as the command line does
    assert site_files(out, search=False) == _full(small, tmp_path)
    assert len(asked) > 3, "a cache read from disk asks about every note"


def test_outputs_recalled_whose_files_the_tree_does_not_hold_are_asked_note_by_note(
        small: Path, tmp_path: Path, asked: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(small, out, search=False, cache=cache)
    assert cache.keys is not None
    # one note's outputs as the cache recalls them, with a digest its file in the tree does not have
    slug = next(slug for slug in cache.keys.filed if slug != "conseil-c")
    key = cache.keys.keys[slug]
    filed = cache.memos[Kind.NOTE_OUTPUTS][key]
    name, path, _digest = filed.files[0]
    cache.memos[Kind.NOTE_OUTPUTS][key] = dataclasses.replace(filed, files=((name, path, "0" * 64), *filed.files[1:]))
    monkeypatch.setattr(reads, "_checking", False)  # the wrong digest is the test's, not a read missed
    asked.clear()
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est prolongé.")
    build(small, out, search=False, cache=cache, edited={small / "notes/conseil-c.md"})
    assert site_files(out, search=False) == _full(small, tmp_path)
    assert len(asked) >= len(cache.keys.filed) - 3, "nothing carried: every note asked about, as without a book"
