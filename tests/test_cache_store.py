"""The memos on disk (generator.engine.cache.MemoStore): a rebuild appends what it made instead
of rewriting the cache, reads entries only when asked, drops what it no longer uses, and
any damage to the store is only a slower build."""

from __future__ import annotations

import os
import pickle
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generator.engine import reads
from generator.engine.cache import MISSING, BuildCache, MemoStore, default_cache_path
from generator.engine.emitters import EMITTERS
from generator.engine.notes import notes_parser
from generator.pipeline import build
from support.corpus import copy_fixture, served, site_files


def _store_files(out: Path) -> dict[str, int]:
    folder = default_cache_path(out).parent
    return {path.name: path.stat().st_size for path in sorted(folder.iterdir())}


def _index(out: Path) -> tuple[str, str, dict[str, dict[str, tuple[int, int]]], int]:
    path = default_cache_path(out)
    data: tuple[str, str, dict[str, dict[str, tuple[int, int]]], int] = pickle.loads(
        path.with_name(path.stem + ".memos.index").read_bytes())
    return data


def _build(content: Path, out: Path) -> BuildCache:
    cache = BuildCache.open(default_cache_path(out))
    build(content, out, search=False, cache=cache)
    return cache


def _append(note: Path, text: str) -> None:
    note.write_text(note.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_an_edit_appends_only_what_it_made(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    _build(content, out)
    _source, pack, where, waste = _index(out)
    size = _store_files(out)[pack]
    assert waste == 0 and {"anchors", "note-facts", "pages", "bodies", "siblings"} <= where.keys()
    note = sorted((content / "notes").glob("*.md"))[0]
    _append(note, "\nUn paragraphe de plus.\n")
    cache = _build(content, out)
    _source, same_pack, after, waste = _index(out)
    assert same_pack == pack  # appended to, not rewritten
    grown = _store_files(out)[pack] - size
    assert 0 < grown < size / 2
    assert waste > 0  # the edited note's old entries: no longer named
    for kind, entries in after.items():  # the index names exactly what the build used
        assert set(entries) == cache.used.get(kind, set()), kind


def test_the_pack_is_rewritten_once_waste_outweighs_what_is_live(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    _build(content, out)
    first = _index(out)[1]
    notes = sorted((content / "notes").glob("*.md"))
    packs = {first}
    for number in range(12):  # every note edited again and again: old entries pile up as waste
        for note in notes:
            _append(note, f"\nÉdition {number}.\n")
        _build(content, out)
        packs.add(_index(out)[1])
        _source, pack, where, waste = _index(out)
        live = sum(length for entries in where.values() for _offset, length in entries.values())
        assert waste <= live + 1  # never more waste than live data for long
        assert [name for name in _store_files(out) if name.endswith(".pack")] == [pack]  # old packs removed
    assert len(packs) > 1
    expected = tmp_path / "full"
    build(content, expected, search=False)
    assert site_files(out, search=False) == site_files(expected, search=False)


def test_a_damaged_store_is_only_a_slower_build(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    _build(content, out)
    _source, pack, _where, _waste = _index(out)
    pack_path = default_cache_path(out).with_name(pack)
    data = pack_path.read_bytes()
    full = tmp_path / "full"
    build(content, full, search=False)
    expected = site_files(full, search=False)

    pack_path.write_bytes(data[: len(data) // 2])  # cut short: nothing of it is trusted
    assert MemoStore.open(default_cache_path(out).with_name(default_cache_path(out).stem + ".memos.index"),
                          BuildCache.open(default_cache_path(out)).source) is None
    note = sorted((content / "notes").glob("*.md"))[1]
    _append(note, "\nAprès la panne.\n")
    cache = _build(content, out)
    assert cache.counts.reused.get("anchors", 0) == 0  # everything redone
    build(content, full, search=False)
    assert site_files(out, search=False) == site_files(full, search=False)

    # bytes a killed build appended and never indexed: harmless
    _source, pack, _where, _waste = _index(out)
    with default_cache_path(out).with_name(pack).open("ab") as stream:
        stream.write(b"\x80\x05half an entry")
    _append(note, "\nEncore.\n")
    cache = _build(content, out)
    assert cache.counts.reused.get("anchors", 0) > 0
    build(content, full, search=False)
    assert site_files(out, search=False) == site_files(full, search=False)

    # a value that does not unpickle: a miss for that entry only
    _source, pack, where, _waste = _index(out)
    offset, length = next(iter(where["anchors"].values()))
    pack_path = default_cache_path(out).with_name(pack)
    damaged = bytearray(pack_path.read_bytes())
    damaged[offset:offset + length] = b"\x00" * length
    pack_path.write_bytes(bytes(damaged))
    _append(note, "\nEt encore.\n")
    cache = _build(content, out)
    assert cache.counts.redone.get("anchors") == 2  # the edited note, the damaged entry
    build(content, full, search=False)
    assert site_files(out, search=False) == site_files(full, search=False)
    del expected


def test_the_single_file_of_older_versions_is_removed(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    legacy = default_cache_path(out).with_name(default_cache_path(out).stem + ".memos.pickle")
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"an older cache")
    _build(content, out)
    assert not legacy.exists()


def test_a_build_writes_each_value_as_it_is_made_and_holds_none(tmp_path: Path) -> None:
    """Flat memory (issue 23, item 4): a disk cache keeps no value in memory; it is on disk
    the moment it is made, named by the index only once the build is saved."""
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    cache = _build(content, out)
    assert cache.counts.redone.get("note-outputs", 0) > 0
    assert all(entries == {} for entries in cache.memos.values()), "every value is in the store, none held"

    before = _index(out)
    pack = default_cache_path(out).with_name(before[1])
    size = pack.stat().st_size
    sizes: list[int] = []

    class Failing:
        name = "failing"

        def emit(self, site: object, theme: object, memo: object) -> Iterator[tuple[str, bytes]]:
            sizes.append(pack.stat().st_size)
            yield from ()
            raise RuntimeError("failed after the notes were made")

    note = sorted((content / "notes").glob("*.md"))[1]
    _append(note, "\nAvant la panne.\n")
    with pytest.raises(RuntimeError):
        build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)),
              emitters=(*EMITTERS, Failing()))
    assert sizes[0] > size, "what the failed build made was written at once"
    assert pack.stat().st_size == size, "and given back when it failed (on a full disk, it would keep it full)"
    assert _index(out) == before, "the index names none of it"
    cache = _build(content, out)
    assert cache.counts.reused.get("anchors", 0) > 0
    full = tmp_path / "full"
    build(content, full, search=False)
    assert site_files(out, search=False) == site_files(full, search=False)


def test_every_entry_a_build_with_workers_indexed_reads_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers are forked while the parent's pack writer holds buffered values: they must
    never write them a second time (every offset after would be wrong)."""
    import generator.engine.jobs as carnet_jobs

    monkeypatch.setattr(carnet_jobs, "WORTH_A_WORKER", 1)  # even this small corpus goes through workers
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    for round_ in range(2):
        build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)), jobs=2)
        _append(sorted((content / "notes").glob("*.md"))[1], f"\nTour {round_}.\n")
    source, pack, where, _waste = _index(out)
    store = MemoStore.open(default_cache_path(out).with_name(default_cache_path(out).stem + ".memos.index"), source)
    assert store is not None
    unreadable = [(kind, key) for kind, entries in where.items() for key in entries
                  if store.get(kind, key) is MISSING]
    assert unreadable == []
    size = default_cache_path(out).with_name(pack).stat().st_size
    assert size == sum(length for entries in where.values() for _o, length in entries.values()) + _waste


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system: the workers are not forked there")
def test_a_forked_reader_never_writes_what_the_parent_buffered(tmp_path: Path) -> None:
    index = tmp_path / "cache.memos.index"
    store = MemoStore(index, "code")
    store.put("anchors", "old", "written before")
    store.save({"anchors": {"old"}})
    assert store.put("anchors", "new", "buffered in the parent")  # small: still in the writer's buffer
    child = os.fork()
    if child == 0:  # a worker: reads an older value, as a render worker does, then leaves without cleanup
        os._exit(0 if store.get("anchors", "old") == "written before" else 1)
    _pid, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    store.save({"anchors": {"old", "new"}})
    reopened = MemoStore.open(index, "code")
    assert reopened is not None
    assert [reopened.get("anchors", key) for key in ("old", "new")] == ["written before", "buffered in the parent"]
    assert reopened.pack_path.stat().st_size == sum(length for _o, length in reopened.where["anchors"].values())


def _counting_compiles(patch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates Jinja compiles from now on (while ``patch`` holds)."""
    import jinja2

    compiles: list[str] = []
    real = jinja2.Environment.compile

    def counting(self, source, name=None, filename=None, raw=False, defer_init=False):  # type: ignore[no-untyped-def]
        compiles.append(name)
        return real(self, source, name, filename, raw, defer_init)

    patch.setattr(jinja2.Environment, "compile", counting)
    return compiles


def test_compiled_templates_are_kept_beside_the_cache_and_damage_only_costs_compiling(tmp_path: Path) -> None:
    """A rebuild from the command line takes the templates' compiled code from
    ``<cache>.templates/`` instead of compiling them again; a damaged or unreadable file
    there is compiled again, never an error, and the site is the same bytes."""

    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    path = default_cache_path(out)
    build(content, out, search=False, cache=BuildCache.open(path))
    compiled = path.with_name(path.stem + ".templates")
    kept = sorted(compiled.iterdir())
    assert kept, "the templates' code is kept"
    expected = site_files(out)
    with pytest.MonkeyPatch.context() as patch:
        compiles = _counting_compiles(patch)
        (content / "notes" / "conseil-c.md").write_text(
            (content / "notes" / "conseil-c.md").read_text(encoding="utf-8") + "\nUn ajout.\n", encoding="utf-8")
        build(content, out, search=False, cache=BuildCache.open(path))
        assert compiles == [], "a rebuild compiles no template"
        for file in kept:
            file.write_bytes(b"damaged")
        (content / "notes" / "conseil-c.md").write_text(
            (content / "notes" / "conseil-c.md").read_text(encoding="utf-8") + "\nUn autre.\n", encoding="utf-8")
        build(content, out, search=False, cache=BuildCache.open(path))
        assert "note.html" in compiles, "damaged code is compiled again"
    build(content, tmp_path / "fresh", search=False)
    assert site_files(out) == site_files(tmp_path / "fresh") != expected


def test_a_rebuild_reads_the_parsed_notes_it_renders_again_and_keeps_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23, item 1: what every note gives every build (its anchoring's problems and
    coverage) is read from a small entry; its parsed body and anchors only when a page is
    made again. The unread ones stay in the cache: the next edit again reads only its own.
    (The suite's read check (generator.engine.reads.check_reads) makes every recalled note again, reading them all: off
    here, as users run it; the whole site is compared with a full build at the end.)"""
    from bench.corpus import plain_notes, write_carnet

    monkeypatch.setattr(reads, "_checking", False)

    content, out = tmp_path / "content", tmp_path / "site"
    write_carnet(content, plain_notes(40, seed=5))
    build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    notes = sorted((content / "notes").glob("note-*.md"))
    for edited in (notes[3], notes[20]):
        edited.write_text(edited.read_text(encoding="utf-8") + "\nUne phrase ajoutée.\n", encoding="utf-8")
        cache = BuildCache.open(default_cache_path(out))
        build(content, out, search=False, cache=cache)
        assert cache.counts.redone.get("anchors") == 1, "only the edited note is parsed and anchored"
        assert cache.counts.reused.get("note-facts") == len(notes) - 1
        # the notes around it (its local graph's neighbours) may be read; not every note
        assert cache.counts.reused.get("anchors", 0) < len(notes) // 4
    build(content, tmp_path / "full", search=False)
    assert site_files(out, search=False) == site_files(tmp_path / "full", search=False)


def test_a_rebuild_compresses_only_the_heavy_pages_it_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The summary's gzipped sizes (graph pages, pages over the budget) are remembered by
    each file's digest: a body edit that leaves the graph pages as they were compresses
    none of them again, and the summary is the one a full build gives."""
    import gzip

    import generator.engine.summary as summary

    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    _build(content, out)
    compressed: list[int] = []
    real = gzip.compress

    def counting(data: bytes, *args: object, **kwargs: object) -> bytes:
        compressed.append(len(data))
        return real(data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(summary.gzip, "compress", counting)
    _append(sorted((content / "notes").glob("*.md"))[0], "\nUn paragraphe de plus.\n")
    cache = BuildCache.open(default_cache_path(out))
    incremental = build(content, out, search=False, cache=cache)
    assert compressed == [] and incremental.summary.graph_pages
    full = build(content, tmp_path / "full", search=False)
    assert len(compressed) == len(full.summary.graph_pages) + len(full.summary.over_budget)
    assert incremental.summary == full.summary


def test_without_a_cache_folder_a_process_compiles_each_template_once_and_an_edited_one_again(
        tmp_path: Path) -> None:
    """``carnet serve`` rebuilds without a cache folder once its first build is saved: the
    templates' code is kept in the process, and a template edited in a theme is compiled
    afresh (Jinja checks the source's sha1), so the page shows the edit."""
    import shutil

    from generator.site.theme import DEFAULT_THEME

    content = copy_fixture("small", tmp_path)
    theme = tmp_path / "theme"
    shutil.copytree(DEFAULT_THEME, theme)
    build(content, tmp_path / "first", search=False, theme_dir=theme)
    with pytest.MonkeyPatch.context() as patch:
        compiles = _counting_compiles(patch)
        build(content, tmp_path / "second", search=False, theme_dir=theme)
        assert compiles == [] and site_files(tmp_path / "second") == site_files(tmp_path / "first")
        page = theme / "templates" / "note.html"
        page.write_text(page.read_text(encoding="utf-8").replace("</article>", "</article><!-- edited -->", 1),
                        encoding="utf-8")
        build(content, tmp_path / "third", search=False, theme_dir=theme)
    assert compiles == ["note.html"]
    assert b"<!-- edited -->" in site_files(tmp_path / "third")["notes/conseil-c.html"]


def test_a_rebuild_reads_only_the_note_files_that_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files the cache digested with the same size, modification time and inode are
    not read again (their parsed notes are recalled by digest); the edited one is, and a
    file changed after it was digested (its stat differs) is read too."""
    import generator.corpus.load as load

    content = copy_fixture("small", tmp_path)
    _age(content)  # written an hour ago: files written just before a build are read anyway (below)
    out = tmp_path / "site"
    _build(content, out)
    notes = sorted((content / "notes").glob("*.md"))
    edited = notes[0]
    _append(edited, "\nUn paragraphe de plus.\n")
    read: list[str] = []
    real = load.Unread.read

    def counting(self: load.Unread) -> bytes:
        read.append(Path(self.path).name)
        return real(self)

    monkeypatch.setattr(load.Unread, "read", counting)
    cache = BuildCache.open(default_cache_path(out))
    build(content, out, search=False, cache=cache)
    assert read == [], "a note recalled by its digest is never read (the edited one is read as it is listed)"
    files = load.read_content_dir(content, cache.known)
    unread = {rel for rel, data in files.notes.items() if isinstance(data, load.Unread)}
    # every note is known after the build, but the one just edited: too recent to trust its stats
    assert unread == {f"notes/{note.name}" for note in notes if note != edited}
    assert any(isinstance(data, load.Unread) for data in files.extractions.values())
    _append(notes[1], "\nÉcrit après le digest.\n")  # its size changed since the cache digested it
    files = load.read_content_dir(content, cache.known)
    assert files.notes[f"notes/{notes[1].name}"] == notes[1].read_bytes()
    # written again within the same mtime (a coarse clock), same size: not trusted, as it was
    # modified just before the stats were taken (git's racily clean files)
    racy = tmp_path / "racy.md"
    racy.write_text("written twice in one tick", encoding="utf-8")
    info = racy.stat()
    stats = BuildCache(stats={str(racy): (info.st_size, info.st_mtime_ns, info.st_ino, "sha of the first write")})
    stats.stats_taken = info.st_mtime_ns + 1
    assert stats.known(str(racy), info) is None
    stats.stats_taken = info.st_mtime_ns + 3_000_000_000
    assert stats.known(str(racy), info) == "sha of the first write", "an older file is trusted by its stats"
    full = tmp_path / "full"
    build(content, full, search=False)
    build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    assert site_files(out, search=False) == site_files(full, search=False)


def test_a_resident_cache_rebuilds_without_reading_its_store_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``carnet serve`` keeps what a rebuild recalls in memory: the next rebuild reads back
    from the store only the kinds left on disk (parsed bodies, bodies' HTML) — none for a
    note left as it was — and the site is the one a full build gives."""
    import generator.engine.cache as carnet_cache

    monkeypatch.setattr(reads, "_checking", False)  # it would read every recalled note's body
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    cache = served(content, out)
    read: list[str] = []
    real = carnet_cache.MemoStore.get

    def counting(self: MemoStore, kind: str, key: str) -> object:
        value = real(self, kind, key)
        if value is not MISSING:  # asked of a new key: a miss, nothing read
            read.append(kind)
        return value

    monkeypatch.setattr(carnet_cache.MemoStore, "get", counting)
    for round_ in range(2):
        _append(sorted((content / "notes").glob("*.md"))[0], f"\nTour {round_}.\n")
        read.clear()
        build(content, out, search=False, cache=cache)
        assert cache.counts.reused.get("note-outputs", 0) > 0
        assert set(read) <= carnet_cache.NOT_RESIDENT, read
        full = tmp_path / f"full-{round_}"
        build(content, full, search=False)
        assert site_files(out, search=False) == site_files(full, search=False)
    assert not pickle.loads(pickle.dumps(cache)).resident, "a cache read from disk is not resident"


def test_serve_finds_what_an_edit_undone_had_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In ``carnet serve`` (a resident cache saved no more) an edit undone is a state the
    session has built: its note's outputs are recalled from the store, not made again."""
    monkeypatch.setattr(reads, "_checking", False)  # counted: no second making to check
    content = copy_fixture("small", tmp_path)
    out = tmp_path / "site"
    cache = served(content, out)
    note = sorted((content / "notes").glob("*.md"))[0]
    _append(note, "\nUne phrase de plus.\n")  # a state this session makes
    build(content, out, search=False, cache=cache)
    text = note.read_text(encoding="utf-8")
    _append(note, "\nEt une autre.\n")
    build(content, out, search=False, cache=cache)
    assert cache.counts.redone.get("note-outputs", 0) == 1
    note.write_text(text, encoding="utf-8")  # undone
    build(content, out, search=False, cache=cache)
    assert cache.counts.redone.get("note-outputs", 0) == 0 and cache.counts.reused.get("note-outputs", 0) > 0


def _age(content: Path) -> None:
    for path in content.rglob("*"):
        os.utime(path, (path.stat().st_atime - 3600, path.stat().st_mtime - 3600))


def test_a_sidecar_read_after_its_note_was_keyed_is_keyed_by_what_was_read(tmp_path: Path) -> None:
    """Found in review: a note's key, first taken with its sidecar unread, was kept once the
    sidecar was read, so a sidecar changed in between was remembered under its old digest."""
    import generator.corpus.load as load
    from generator.engine.cache import BuildCache

    content = copy_fixture("small", tmp_path)
    sidecar = content / "notes" / "conseil-a.extractions.yaml"
    rel = "notes/conseil-a.extractions.yaml"
    files = load.read_content_dir(content)
    digested = files.extractions[rel]
    assert isinstance(digested, bytes) and b"quatre mille" in digested
    files.extractions[rel] = load.Unread(sidecar, load.content_digest(digested))
    sidecar.write_bytes(digested.replace(b"quatre mille", b"cinq mille"))  # changed after it was digested
    memo = BuildCache()
    first, _problems = load.parse_content(files, notes_parser(memo))
    assert any("cinq mille" in e.quote for e in first.notes["conseil-a"].extractions), "parsed as read"
    sidecar.write_bytes(digested)  # back as it was digested: its parse is not the changed one's
    again, _problems = load.parse_content(load.read_content_dir(content), notes_parser(memo))
    assert any("quatre mille" in e.quote for e in again.notes["conseil-a"].extractions)


class _LostEntries:
    """A memo that says it holds every parse and then cannot give it (a damaged entry)."""

    def memo(self, kind: str, key: object, compute: Callable[[], object]) -> object:
        return compute()

    def holds(self, kind: str, key: object) -> bool:
        return True

    def keep(self, kind: str, key: object) -> bool:
        return False


def test_a_note_left_unread_that_goes_before_it_is_read_is_a_clear_problem(tmp_path: Path) -> None:
    """A note known unchanged is read only if it must be parsed: gone by then (moved or
    deleted during the build), it is an ``unreadable-file`` error naming it, not a traceback."""
    import generator.corpus.load as load

    content = copy_fixture("small", tmp_path)
    files = load.read_content_dir(content)
    rel = "notes/conseil-a.md"
    files.notes[rel] = load.Unread(content / "gone.md", load.content_digest(files.notes[rel]))
    from generator.engine.cache import BuildCache

    memo = BuildCache()
    corpus, problems = load.parse_content(files, notes_parser(memo))
    assert "conseil-a" not in corpus.notes
    assert [(p.file, p.code, p.is_error) for p in problems if p.code == "unreadable-file"] == [(rel, "unreadable-file", True)]
    assert sum(memo.counts.redone.values()) == len(corpus.notes), "the failed read is never remembered"
    # a file left unread whose parse the memo lost is read then, and refused if not what was digested
    files = load.read_content_dir(content, lambda path, info: "0" * 64 if path.endswith("conseil-b.md") else None)
    corpus, problems = load.parse_content(files, notes_parser(_LostEntries()))
    assert "conseil-b" not in corpus.notes and "conseil-c" in corpus.notes
    assert [p.message for p in problems if p.file == "notes/conseil-b.md"] == ["changed while the build was reading it"]


def test_a_content_file_unreadable_as_it_is_listed_is_a_clear_problem(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A note the loader cannot read once listed (gone since, or refused) is an
    ``unreadable-file`` error naming it, not a traceback."""
    import generator.corpus.load as load

    content = copy_fixture("small", tmp_path)
    blocked = content / "notes" / "conseil-b.md"
    real = load._bytes_of  # every content file is read through it

    def refusing(path: str) -> bytes:
        if Path(path) == blocked:
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(load, "_bytes_of", refusing)
    files = load.read_content_dir(content)
    assert "notes/conseil-b.md" not in files.notes
    assert [(p.file, p.code, p.message) for p in files.problems if p.code == "unreadable-file"] == \
        [("notes/conseil-b.md", "unreadable-file", "could not be read: Permission denied")]


def test_a_rebuild_with_nothing_to_do_loads_no_site_module(small: Path, tmp_path: Path) -> None:
    """The no-op check reads the cache's small state only: what it keeps for an incremental
    build (the note keys, whose classes live with the site's modules; the files written)
    stays pickled, so nothing of the pipeline is imported (0.25 s of a 0.5 s no-op at
    5,000 notes when the keys were unpickled with the rest)."""
    import subprocess
    import sys

    out = tmp_path / "site"
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    code = ("import sys; from generator.cli import main\n"
            f"try:\n    main(['build', {str(small)!r}, '--out', {str(out)!r}, '--no-search', '--quiet'])\n"
            "except SystemExit as exit:\n    assert not exit.code, exit.code\n"
            "print(sorted(m for m in sys.modules if m.startswith(('generator.site.', 'generator.pipeline'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


def test_a_rebuild_reads_only_the_page_texts_llms_full_keeps_and_makes_a_lost_one_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23, item 1: every rebuild recalls every note's filed outputs; the text of its
    page in llms-full.txt (over a quarter of their weight) is kept apart, read only for the pages
    under the file's cap. A text the cache lost is made again from its page."""
    from bench.corpus import plain_notes, write_carnet

    monkeypatch.setattr(reads, "_checking", False)  # it makes every recalled note again
    content, out, full = tmp_path / "content", tmp_path / "site", tmp_path / "full"
    write_carnet(content, plain_notes(60, seed=3))
    with (content / "carnet.yaml").open("a", encoding="utf-8") as stream:
        stream.write("outputs:\n  llms_full_cap: 30000\n")
    _build(content, out)
    notes = sorted((content / "notes").glob("note-*.md"))
    _append(notes[-1], "\nUne phrase ajoutée.\n")
    cache = _build(content, out)
    read = cache.counts.reused.get("note-chunk", 0)
    # each page's mirror: its address is its first field ("- Adresse : https://…")
    kept = len(re.findall(r"^# .*\n\n- [^:\n]+: https?://\S+/notes/", (out / "llms-full.txt").read_text(encoding="utf-8"),
                          re.M))
    assert 0 < read <= kept + 1 < len(notes) // 2, (read, kept)
    assert len(cache.used["note-chunk"]) >= len(notes), "the unread texts are kept for the next build"
    build(content, full, search=False)
    assert site_files(out, search=False) == site_files(full, search=False)

    # every text lost from the index: each read is made again from its page, the same bytes
    index = default_cache_path(out).with_name(default_cache_path(out).stem + ".memos.index")
    source, pack, where, waste = pickle.loads(index.read_bytes())
    del where["note-chunk"]
    index.write_bytes(pickle.dumps((source, pack, where, waste)))
    _append(notes[-2], "\nUne autre.\n")
    cache = _build(content, out)
    assert cache.counts.reused.get("note-chunk", 0) == 0 and cache.counts.redone.get("note-chunk", 0) >= read
    build(content, full, search=False)
    assert site_files(out, search=False) == site_files(full, search=False)
