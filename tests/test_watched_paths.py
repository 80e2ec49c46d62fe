"""`carnet serve` patches what the last build knew of its inputs with the paths its watcher
saw change, rather than walking the content and theme again: the digest so patched is the
one a walk gives, whatever the change (a file written, added, removed, a folder added,
removed or moved, a link), and a rebuild given the paths looks at those alone."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from generator.corpus import load
from generator.engine import notes, reads
from generator.engine.cache import BuildCache, build_options, default_cache_path
from generator.pipeline import build
from generator.site.theme import check_theme
from support.corpus import copy_fixture, served, site_files

OPTIONS = build_options(False, None, False, check_theme(None))


def _walked(folders: list[Path]) -> str:
    """The digest a build with no past makes: every file under ``folders`` read."""
    return BuildCache(path=None).inputs_digest(folders, OPTIONS)


def test_a_digest_patched_with_the_paths_changed_is_the_one_a_walk_gives(tmp_path: Path) -> None:
    root = tmp_path / "content"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("a", encoding="utf-8")
    (root / "notes" / "b.md").write_text("b", encoding="utf-8")
    cache = BuildCache(path=None)
    last = cache.inputs_digest([root], OPTIONS)

    def changes(*paths: Path) -> None:
        nonlocal last
        patched = cache.inputs_digest([root], OPTIONS, set(paths))
        assert patched == _walked([root]), f"after a change of {[p.name for p in paths]}"
        assert patched != last, "the change was not seen"
        last = patched

    (root / "notes" / "a.md").write_text("a, edited", encoding="utf-8")
    changes(root / "notes" / "a.md")
    (root / "notes" / "c.md").write_text("c", encoding="utf-8")
    changes(root / "notes" / "c.md")
    (root / "notes" / "b.md").unlink()
    changes(root / "notes" / "b.md")
    (root / "assets" / "img").mkdir(parents=True)  # a folder with files: named by the folder alone
    (root / "assets" / "img" / "x.png").write_bytes(b"x")
    (root / "assets" / "img" / "y.png").write_bytes(b"y")
    changes(root / "assets")
    (root / "assets" / "img").rename(root / "assets" / "pictures")  # a move names both ends
    changes(root / "assets" / "img", root / "assets" / "pictures")
    os.symlink("../notes/a.md", root / "assets" / "link.md")
    changes(root / "assets" / "link.md")
    shutil.rmtree(root / "assets")
    changes(root / "assets")
    # a path outside the folders digested is no input; a path the watcher names unchanged changes nothing
    assert cache.inputs_digest([root], OPTIONS, {tmp_path / "elsewhere.md", root / "notes" / "a.md"}) == last


def test_paths_named_by_their_real_path_are_those_of_the_folder_digested(tmp_path: Path) -> None:
    """A watcher names what it watches by real paths; the build may be given a link to the content."""
    real = tmp_path / "real"
    (real / "notes").mkdir(parents=True)
    (real / "notes" / "a.md").write_text("a", encoding="utf-8")
    os.symlink(real, tmp_path / "content")
    cache = BuildCache(path=None)
    cache.inputs_digest([tmp_path / "content"], OPTIONS)
    (real / "notes" / "a.md").write_text("a, edited", encoding="utf-8")
    assert cache.inputs_digest([tmp_path / "content"], OPTIONS, {real / "notes" / "a.md"}) == \
        _walked([tmp_path / "content"])


def test_a_rebuild_given_the_paths_edited_looks_at_those_alone(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True  # as carnet serve keeps it
    build(content, out, search=False, cache=cache)
    note = content / "notes" / "conseil-c.md"
    note.write_text(note.read_text(encoding="utf-8").replace("Le budget est reconduit.", "Le budget est revu."),
                    encoding="utf-8")
    # told that nothing changed, the build takes the inputs as they were: nothing walked, nothing done
    assert build(content, out, search=False, cache=cache, edited=set()).changed == 0
    assert b"revu" not in (out / "notes" / "conseil-c.html").read_bytes()
    # told which file changed, it sees it, and gives what a full build gives
    assert build(content, out, search=False, cache=cache, edited={note}).changed > 0
    build(content, tmp_path / "full", search=False)
    assert site_files(out, search=False) == site_files(tmp_path / "full", search=False)


def test_a_cache_read_from_disk_walks_the_inputs_whatever_the_paths_given(tmp_path: Path) -> None:
    """The paths a watcher names are since a digest made in its own process: a cache opened
    from disk has none to patch."""
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    note = content / "notes" / "conseil-c.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nAjout.\n", encoding="utf-8")
    assert build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)), edited=set()).changed > 0


def test_a_rebuild_given_the_paths_edited_reads_the_content_from_those_alone(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The content's files the last build of the process read are patched with the paths
    (generator/engine/content.py): the content is not walked again; the paths of a build
    that found nothing to do are still patched in by the next one; told nothing, it walks."""
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(content, out, search=False, cache=cache)
    walks: list[Path] = []
    real = load.read_content_dir

    def walked(root: Path, known: object = None) -> load.ContentFiles:
        walks.append(root)
        return real(root, known)  # type: ignore[arg-type]

    monkeypatch.setattr(load, "read_content_dir", walked)
    monkeypatch.setattr(reads, "_checking", False)  # the check walks to compare: counted without it

    def full() -> dict[str, bytes]:
        shutil.rmtree(tmp_path / "full", ignore_errors=True)
        build(content, tmp_path / "full", search=False)
        walks.remove(content)  # the full build's own walk
        return site_files(tmp_path / "full", search=False)

    note = content / "notes" / "conseil-c.md"
    note.write_text(note.read_text(encoding="utf-8").replace("Le budget est reconduit.", "Le budget est revu."),
                    encoding="utf-8")
    build(content, out, search=False, cache=cache, edited={note})
    assert walks == [] and site_files(out, search=False) == full()
    # a path named that changed nothing: no build; a note added since is patched in with the next edit
    assert build(content, out, search=False, cache=cache, edited={content / "notes" / "conseil-a.md"}).changed == 0
    (content / "notes" / "ajout.md").write_text(
        "---\ntitle: Ajout\ndate: 2024-11-01\nnotebooks:\n  conseil:\n    theme: [Budget]\n---\nUn ajout.\n",
        encoding="utf-8")
    build(content, out, search=False, cache=cache, edited={content / "notes" / "ajout.md"})
    assert walks == [] and site_files(out, search=False) == full()
    note.write_text(note.read_text(encoding="utf-8") + "\nEncore.\n", encoding="utf-8")
    build(content, out, search=False, cache=cache, edited=None)  # not all known: walked
    assert walks == [content]
    assert site_files(out, search=False) == full()


def test_the_parses_a_patch_carries_stay_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild that patches the parse asks the cache for no note it carries; those parses are
    kept all the same (a cache keeps only what a build used): a later rebuild that parses
    everything (a note added) recalls them, and parses the new note alone."""
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    cache = served(content, out)
    cache.store = None  # in memory alone, as the benchmark keeps it: nothing read back from disk
    parsed: list[str] = []
    real = notes.parse_note_files

    def counted(files: load.NoteFiles) -> load.ParsedNote:
        parsed.append(files.rel)
        return real(files)

    monkeypatch.setattr(notes, "parse_note_files", counted)
    monkeypatch.setattr(reads, "_checking", False)  # the check's own parse in full would use every note's
    note = content / "notes" / "conseil-c.md"
    note.write_text(note.read_text(encoding="utf-8").replace("Le budget est reconduit.", "Le budget est revu."),
                    encoding="utf-8")
    build(content, out, search=False, cache=cache, edited={note})
    assert parsed == ["notes/conseil-c.md"]
    parsed.clear()
    (content / "notes" / "ajout.md").write_text(
        "---\ntitle: Ajout\ndate: 2024-11-01\nnotebooks:\n  conseil:\n    theme: [Budget]\n---\nUn ajout.\n",
        encoding="utf-8")
    build(content, out, search=False, cache=cache, edited={content / "notes" / "ajout.md"})
    assert parsed == ["notes/ajout.md"], parsed


def test_the_anchorings_a_patch_carries_stay_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild that patches the anchoring anchors the note edited alone and asks the cache
    for none it carries; their entries are kept all the same: a later rebuild that anchors
    everything (a note added) recalls them, and anchors the new note alone."""
    from generator.engine import anchors
    from generator.engine.memo import Kind

    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(content, out, search=False, cache=cache)  # saved on disk, as serve's: what a build did not use is dropped
    anchored: list[str] = []
    real = anchors.anchor_note

    def counted(note: object) -> object:
        anchored.append(note.slug)  # type: ignore[attr-defined]
        return real(note)  # type: ignore[arg-type]

    monkeypatch.setattr(anchors, "anchor_note", counted)
    monkeypatch.setattr(reads, "_checking", False)  # the check's own anchoring in full would hide a loss
    note = content / "notes" / "conseil-c.md"
    note.write_text(note.read_text(encoding="utf-8").replace("Le budget est reconduit.", "Le budget est revu."),
                    encoding="utf-8")
    build(content, out, search=False, cache=cache, edited={note})
    assert anchored == ["conseil-c"]
    assert len(cache.used[Kind.ANCHORS]) == len(cache.used[Kind.NOTE_FACTS]) == len(list(
        (content / "notes").glob("*.md"))), "every note's anchoring kept, carried or not"
    anchored.clear()
    (content / "notes" / "ajout.md").write_text(
        "---\ntitle: Ajout\ndate: 2024-11-01\nnotebooks:\n  conseil:\n    theme: [Budget]\n---\nUn ajout.\n",
        encoding="utf-8")
    build(content, out, search=False, cache=cache, edited={content / "notes" / "ajout.md"})
    assert anchored == ["ajout"], anchored
    full = tmp_path / "full"
    build(content, full, search=False)
    assert site_files(out, search=False) == site_files(full, search=False)


def test_the_note_graph_of_a_rebuild_is_patched_from_the_last_one(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild in the process of the last build patches that build's note graph where the
    edges are as they were (a title edited), and makes it whole where they are not (a link
    added); either way the site is the full build's (and, under the read check, the graph is
    the one made whole)."""
    from generator.site import graph_view, model

    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(content, out, search=False, cache=cache)
    patched: list[bool] = []
    real = graph_view.graph_patched

    def spied(*args: object) -> object:
        made = real(*args)  # type: ignore[arg-type]
        patched.append(made is not None)
        return made

    monkeypatch.setattr(model, "graph_patched", spied)
    note = content / "notes" / "conseil-c.md"
    for old, new, expected in (("title: ", "title: Budget, ", True), ("Le budget est reconduit.",
                                                                       "Le budget est reconduit ([[conseil-a]]).", False)):
        patched.clear()
        note.write_text(note.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
        build(content, out, search=False, cache=cache, edited={note})
        assert patched == [expected], (old, patched)
        assert cache.graph_kept is not None
        assert cache.graph_kept[1].nodes["note:conseil-c"].title.startswith("Budget, ")
        full = tmp_path / f"full-{expected}"
        build(content, full, search=False)
        assert site_files(out, search=False) == site_files(full, search=False)
