"""Output is reproducible, swapped in whole, and never destroys files Carnet did not write."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.engine.cache import BuildCache, default_cache_path
from generator.engine.emitters import EMITTERS
from generator.engine.output import MARKER, RECORD_PREFIX, go_live, record_path, staged_site, written_state
from generator.pipeline import build
from generator.problems import ContentError, OutputDirectoryError
from support.corpus import replace, site_files


def test_two_builds_are_byte_identical(small: Path, tmp_path: Path) -> None:
    build(small, tmp_path / "one")
    build(small, tmp_path / "two")
    one, two = site_files(tmp_path / "one", search=False), site_files(tmp_path / "two", search=False)
    assert one.keys() == two.keys()
    assert [path for path in one if one[path] != two[path]] == []


def test_rebuild_in_place_is_identical_and_drops_stale_files(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out)
    first = site_files(out, search=False)
    (small / "notes" / "conseil-d.md").unlink()
    build(small, out)
    assert "notes/conseil-d.html" not in site_files(out, search=False)
    replace(small, "notes/conseil-c.md", "reconduit.", "reconduit.")  # no-op edit
    (small / "notes" / "conseil-d.md").write_text(
        "---\ntitle: Séance D\ndate: 2024-12-01\nauthors: [Zoé Realname]\nnotebooks:\n  conseil:\n"
        "    theme: [Vie scolaire]\n---\nUne séance sans histoire.\n", encoding="utf-8")
    build(small, out)
    assert site_files(out, search=False) == first


def test_failed_build_leaves_previous_site_intact(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out)
    before = site_files(out)
    replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [Inconnue]")
    with pytest.raises(ContentError) as raised:
        build(small, out)
    assert any(p.code == "unknown-category" for p in raised.value.problems)
    assert site_files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".carnet-build.site", "site", "small"], \
        "no staging directory left behind, only the record beside the site"


def test_crash_while_writing_leaves_previous_site_intact(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out)
    before = site_files(out)

    class Exploding:
        name = "exploding"

        def emit(self, site: object, theme: object, memo: object) -> Iterator[tuple[str, bytes]]:
            yield "half-written.html", b"<p>"
            raise RuntimeError("disk full")

    replace(small, "notes/conseil-c.md", "reconduit.", "reconduit et augmenté.")
    with pytest.raises(RuntimeError):
        build(small, out, emitters=(*EMITTERS, Exploding()))
    assert site_files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".carnet-build.site", "site", "small"]


def test_refuses_a_directory_it_did_not_create(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    precious = out / "thesis.tex"
    precious.write_text("years of work", encoding="utf-8")
    with pytest.raises(OutputDirectoryError, match="not created by carnet"):
        build(small, out)
    assert precious.read_text(encoding="utf-8") == "years of work"
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]


def test_refuses_output_dot_and_content_overlap(small: Path, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputDirectoryError):
        build(small, Path("."))
    with pytest.raises(OutputDirectoryError, match="overlaps"):
        build(small, small / "site")
    with pytest.raises(OutputDirectoryError, match="overlaps"):
        build(small, small)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_accepts_an_empty_directory_and_records_it_beside(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    build(small, out)
    assert (out / "index.html").is_file() and not (out / MARKER).exists()
    info = out.stat()
    assert [info.st_dev, info.st_ino] in json.loads(record_path(out).read_text(encoding="utf-8"))["trees"]


def test_nothing_is_written_outside_the_output_directory(small: Path, tmp_path: Path) -> None:
    before = set(tmp_path.rglob("*"))
    build(small, tmp_path / "site")
    created = set(tmp_path.rglob("*")) - before
    assert record_path(tmp_path / "site") == tmp_path / ".carnet-build.site"
    assert all(tmp_path / "site" in p.parents or p == tmp_path / "site" for p in created
               if p != record_path(tmp_path / "site")), "only the build state beside it"


# -- build state stays out of the published tree (issue 19, item 7) ------------------------------

def _carnet_state(out: Path) -> list[str]:
    """Files of the tree that are Carnet's state (the marker, a record, a cache), not the site."""
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                  if p.name in (MARKER, ".carnet-cache") or p.name.startswith(RECORD_PREFIX))


def test_the_published_tree_holds_no_build_state_after_full_and_incremental_builds(small: Path,
                                                                                    tmp_path: Path) -> None:
    out = tmp_path / "site"
    cache_path = default_cache_path(out)
    first = build(small, out, search=False, cache=BuildCache.open(cache_path))
    assert first.changed == first.files and _carnet_state(out) == []
    replace(small, "notes/conseil-c.md", "reconduit.", "reconduit et augmenté.")
    incremental = build(small, out, search=False, cache=BuildCache.open(cache_path))
    assert 0 < incremental.changed < incremental.files, "an incremental write replaced it"
    assert b"augment" in (out / "notes" / "conseil-c.html").read_bytes() and _carnet_state(out) == []
    replace(small, "notes/conseil-c.md", "reconduit et augmenté.", "reconduit encore.")
    build(small, out, search=False)  # a full build (no cache) replaces it too
    assert b"reconduit encore" in (out / "notes" / "conseil-c.html").read_bytes() and _carnet_state(out) == []
    assert build(small, out, search=False, cache=BuildCache.open(cache_path)).changed > 0
    assert _carnet_state(out) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [".carnet-build.site", ".carnet-cache", "site", "small"]


def test_refuses_a_directory_put_in_place_of_its_own_under_the_same_name(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out)
    out.rename(tmp_path / "site-kept")
    out.mkdir()
    (out / "thesis.tex").write_text("years of work", encoding="utf-8")
    with pytest.raises(OutputDirectoryError, match=r"not created by carnet.*records another directory"):
        build(small, out)
    shutil.rmtree(out)
    shutil.copytree(tmp_path / "site-kept", out)  # a copy of the site is not the tree carnet wrote either
    (out / "thesis.tex").write_text("years of work", encoding="utf-8")
    with pytest.raises(OutputDirectoryError, match="not created by carnet"):
        build(small, out, cache=BuildCache.open(default_cache_path(out)))
    assert (out / "thesis.tex").read_text(encoding="utf-8") == "years of work"


def test_refuses_its_own_directory_once_the_record_is_gone(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out, search=False)
    record_path(out).write_bytes(b"garbage")  # damaged: recognises nothing
    with pytest.raises(OutputDirectoryError, match="not created by carnet"):
        build(small, out, search=False)
    record_path(out).unlink()
    with pytest.raises(OutputDirectoryError, match=r"no \.carnet-build\.site beside it"):
        build(small, out, search=False)


@pytest.mark.parametrize("cached", [False, True], ids=["full", "incremental"])
def test_accepts_a_directory_built_by_an_older_version(small: Path, tmp_path: Path, cached: bool) -> None:
    out = tmp_path / "site"
    cache_path = default_cache_path(out)
    build(small, out, search=False, cache=BuildCache.open(cache_path) if cached else None)
    # as an older version left it: its marker inside, no record beside
    (out / MARKER).write_bytes(b"This directory is written by 'carnet build' and replaced whole at each build.\n")
    (out / "stale.html").write_bytes(b"<p>from an older build</p>")
    record_path(out).unlink()
    result = build(small, out, search=False, cache=BuildCache.open(cache_path) if cached else None)
    assert result.changed == result.files, "not the tree the cache describes: rebuilt whole"
    assert _carnet_state(out) == [] and not (out / "stale.html").exists()
    assert record_path(out).is_file()
    assert build(small, out, search=False).changed > 0, "recognised from now on by the record"


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_leftovers_of_a_killed_build_are_cleared_only_when_they_are_carnets(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out, search=False)
    pid, other = _dead_pid(), _dead_pid()
    marked, recorded, users = (tmp_path / f".site.tmp-{pid}", tmp_path / f".site.old-{pid}",
                               tmp_path / f".site.tmp-{other}")
    for tree in (marked, recorded, users):
        tree.mkdir()
        (tree / "index.html").write_bytes(b"<p>")
    (marked / MARKER).write_bytes(b"")  # a staging tree killed while written
    info = recorded.stat()  # a tree killed between the swap and the end: known by the record only
    record = json.loads(record_path(out).read_text(encoding="utf-8"))
    record_path(out).write_text(json.dumps({**record, "trees": record["trees"] + [[info.st_dev, info.st_ino]]}),
                                encoding="utf-8")
    build(small, out, search=False)
    assert not marked.exists() and not recorded.exists()
    assert (users / "index.html").read_bytes() == b"<p>", "a directory of the user's, named like a leftover, stays"


# -- flat memory: files written as they are rendered (issue 23, item 4) ----------------------------

def test_each_file_is_on_disk_as_soon_as_it_is_added_and_read_back_from_there(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    with staged_site(out, small) as files:
        files.add("notes/a.html", b"<p>a</p>")
        assert files.tree is not None and (files.tree / "notes" / "a.html").read_bytes() == b"<p>a</p>"
        (files.tree / "notes" / "a.html").write_bytes(b"<p>changed on disk</p>")
        assert files["notes/a.html"] == b"<p>changed on disk</p>", "the bytes are not held, only read back"
        assert files.sizes == {"notes/a.html": 8} and list(files) == ["notes/a.html"]
        with pytest.raises(OutputDirectoryError):
            files.add("../outside.html", b"")
        go_live(files, out)
    assert (out / "notes" / "a.html").read_bytes() == b"<p>changed on disk</p>"


def test_a_later_emitter_finds_the_notes_pages_already_written(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    seen: dict[str, bytes] = {}

    class Looking:
        name = "looking"

        def emit(self, site: object, theme: object, memo: object) -> Iterator[tuple[str, bytes]]:
            (staging,) = tmp_path.glob(".site.tmp-*")
            seen.update((p.relative_to(staging).as_posix(), p.read_bytes()) for p in staging.rglob("*.html"))
            yield from ()

    build(small, out, search=False, emitters=(*EMITTERS, Looking()))
    assert "notes/conseil-c.html" in seen, "the notes' pages were on disk before the site-wide outputs"
    assert seen["notes/conseil-c.html"] == (out / "notes" / "conseil-c.html").read_bytes()


def _stage(out: Path, content: Path, wanted: dict[str, bytes],
           previous: dict[str, tuple[str, int, int]] | None) -> dict[str, tuple[str, int, int]]:
    with staged_site(out, content, previous) as files:
        for path, data in wanted.items():
            files.add(path, data)
        changed = go_live(files, out)
    return written_state(files, files.digests, out, previous, changed if previous is not None else None)


def test_an_incremental_stage_links_what_is_unchanged_and_swaps_files_and_folders(small: Path,
                                                                                   tmp_path: Path) -> None:
    out = tmp_path / "site"
    state = _stage(out, small, {"index.html": b"i", "a": b"a file", "b/c.html": b"c", "d/e.html": b"e"}, None)
    inode = (out / "index.html").stat().st_ino
    # "a" becomes a folder, "b" a file, "d/e.html" goes; "index.html" is unchanged
    state = _stage(out, small, {"index.html": b"i", "a/x.html": b"x", "b": b"b file"}, state)
    assert site_files(out, search=False) == {"index.html": b"i", "a/x.html": b"x", "b": b"b file"}
    assert (out / "index.html").stat().st_ino == inode, "an unchanged file stays the live one, linked"
    assert not (out / "d").exists()
    assert set(state) == {"index.html", "a/x.html", "b"}


def test_a_notes_files_are_kept_all_together_or_none_of_them(small: Path, tmp_path: Path) -> None:
    """``keep_all`` keeps a recalled note's files only if each is the last build's, with the
    digest the note was filed with, and none is taken already: else it keeps none (the note
    is then made again)."""
    import hashlib

    out = tmp_path / "site"
    state = _stage(out, small, {"notes/a.html": b"a", "notes/a.txt": b"a text", "notes/b.html": b"b"}, None)
    sha = {path: digest for path, (digest, _size, _mtime) in state.items()}
    with staged_site(out, small, state) as files:
        assert not files.keep_all([("notes/a.html", sha["notes/a.html"]), ("notes/a.txt", hashlib.sha256(b"x").hexdigest())])
        assert not files.keep_all([("notes/a.html", sha["notes/a.html"]), ("notes/gone.txt", sha["notes/a.txt"])])
        assert not files.keep_all([("notes/b.html", sha["notes/b.html"]), ("notes/b.html", sha["notes/b.html"])])
        assert "notes/a.html" not in files and "notes/b.html" not in files, "a refused note keeps nothing"
        files.add("notes/b.html", b"b again")
        assert not files.keep_all([("notes/b.html", sha["notes/b.html"])]), "a path taken already is not kept"
        assert files.keep_all([("notes/a.html", sha["notes/a.html"]), ("notes/a.txt", sha["notes/a.txt"])])
        assert files["notes/a.txt"] == b"a text" and files.sizes["notes/a.txt"] == len(b"a text")
        go_live(files, out)
    assert site_files(out, search=False) == {"notes/a.html": b"a", "notes/a.txt": b"a text", "notes/b.html": b"b again"}


# -- the page byte budget (issue 24, item 3) -----------------------------------------------------

def test_a_staged_file_refused_leaves_no_temporary_whoever_refuses_it(small: Path, tmp_path: Path) -> None:
    """A file a worker wrote beside its path (over the last build's tree) that the build
    refuses, by ``settle`` (a path taken twice) or by the build's own clash check
    (``discard``), is removed at once: nothing of it stays in the staging tree."""
    out = tmp_path / "site"
    state = _stage(out, small, {"notes/a.html": b"a"}, None)
    with staged_site(out, small, state) as files:
        assert files.tree is not None
        first, second, third = (files.stage("notes/a.html", data) for data in (b"one", b"two", b"three"))
        assert all(staged.temporary is not None and os.path.exists(staged.temporary)
                   for staged in (first, second, third)), "a changed file is written beside its path"
        files.settle("notes/a.html", first)
        with pytest.raises(OutputDirectoryError, match="twice"):
            files.settle("notes/a.html", second)
        files.discard(third)
        files.discard(third)  # gone already: nothing to do
        assert [p.name for p in Path(files.tree).rglob(".carnet-chunks-*")] == []
        assert files["notes/a.html"] == b"one"

def test_pages_over_the_byte_budget_are_reported_heaviest_first(small: Path, tmp_path: Path) -> None:
    import zlib
    out = tmp_path / "site"
    assert build(small, out, search=False).summary.over_budget == (), "the default budget (60 KB gzipped) holds"
    with (small / "carnet.yaml").open("a", encoding="utf-8") as stream:
        stream.write("outputs:\n  page_budget_kb: 2\n")
    result = build(small, out, search=False)
    # recomputed from the written site: each page gzipped (level 6), against 2 KiB
    def gzipped(data: bytes) -> int:  # a gzip stream (wbits 31), as a server sends the page
        packer = zlib.compressobj(6, zlib.DEFLATED, 31)
        return len(packer.compress(data) + packer.flush())

    expected = sorted(((p.relative_to(out).as_posix(), gzipped(p.read_bytes())) for p in out.rglob("*.html")),
                      key=lambda item: (-item[1], item[0]))
    over = [(path, size) for path, size in expected if size > 2048]
    assert over and list(result.summary.over_budget) == over
    line = result.summary.budget_lines()[0]
    assert f"{len(over)} page(s) over the page budget of 2 KB gzipped: {over[0][0]}" in line
    assert "outputs.page_budget_kb" in line


def test_the_notes_heavy_pages_are_weighed_by_the_workers_that_made_them(small: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """With worker processes, a note's pages over the budget as they are are gzipped by the
    worker that made them (the bytes in its hands), not read back and gzipped again by the
    build's own process for its summary: the summary is the one a single process gives."""
    import hashlib

    import generator.engine.jobs as carnet_jobs
    import generator.engine.summary as summary

    with (small / "carnet.yaml").open("a", encoding="utf-8") as stream:
        stream.write("outputs:\n  page_budget_kb: 2\n")
    alone = build(small, tmp_path / "alone", search=False, jobs=1).summary
    here: list[str] = []  # what this process compressed (a worker's calls are its own)
    real = summary.gzip.compress
    monkeypatch.setattr(summary.gzip, "compress", lambda data, *args, **kwargs: (
        here.append(hashlib.sha256(data).hexdigest()), real(data, *args, **kwargs))[1])
    monkeypatch.setattr(carnet_jobs, "WORTH_A_WORKER", 1)  # the small corpus through the workers
    out = tmp_path / "site"
    result = build(small, out, search=False, jobs=2)
    assert result.summary == alone and alone.over_budget
    notes = {hashlib.sha256(page.read_bytes()).hexdigest() for page in (out / "notes").glob("*.html")
             if len(page.read_bytes()) > 2048}
    assert notes and not notes & set(here), "no note's page gzipped again by the build's process"


@pytest.mark.parametrize("key", ["page_budget_kb", "feed_entries"])
@pytest.mark.parametrize("value", ["'60'", "0", "-5", "true", "[60]"])
def test_a_bad_output_size_stops_the_build_at_its_line(small: Path, tmp_path: Path, key: str, value: str) -> None:
    with (small / "carnet.yaml").open("a", encoding="utf-8") as stream:
        stream.write(f"outputs:\n  {key}: {value}\n")
    with pytest.raises(ContentError) as raised:
        build(small, tmp_path / "site", search=False)
    (problem,) = [p for p in raised.value.problems if p.is_error]
    assert (problem.file, problem.code) == ("carnet.yaml", "invalid-value") and key in problem.message
    lines = (small / "carnet.yaml").read_text(encoding="utf-8").split("\n")
    assert lines[problem.line - 1].startswith(f"  {key}:")


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_every_published_file_has_the_mode_the_umask_gives_even_one_written_in_chunks(
        small: Path, tmp_path: Path, umask: int) -> None:
    """A web server running as another user must be able to read graph.json (streamed in
    chunks through a temporary file) as it reads every page."""
    import os
    previous = os.umask(umask)
    try:
        build(small, tmp_path / "site", search=False)
    finally:
        os.umask(previous)
    modes = {path.relative_to(tmp_path / "site").as_posix(): path.stat().st_mode & 0o777
             for path in (tmp_path / "site").rglob("*") if path.is_file()}
    assert "graph.json" in modes and "graph.jsonld" in modes
    assert {path: mode for path, mode in modes.items() if mode != 0o666 & ~umask} == {}


def test_streams_are_written_side_by_side_and_a_childs_failure_is_raised_here(small: Path, tmp_path: Path) -> None:
    """graph.json and graph.jsonld are made at once, one by a child process: the files and
    digests are those of their chunks; a child's refusal (a full disk) or bug is raised in
    the build, and nothing of it is left once the staging tree goes."""
    import hashlib

    out = tmp_path / "site"
    chunks = {"graph.json": [b"{", b"}\n"], "graph.jsonld": [b"[", b"1", b"]\n"]}
    with staged_site(out, small) as files:
        files.add_streams({path: iter(parts) for path, parts in chunks.items()})
        assert files.digests == {path: hashlib.sha256(b"".join(parts)).hexdigest() for path, parts in chunks.items()}
        go_live(files, out)
    assert {path: (out / path).read_bytes() for path in chunks} == {p: b"".join(c) for p, c in chunks.items()}

    def refusing() -> Iterator[bytes]:
        yield b"{"
        raise OSError(28, "No space left on device", "graph.json")

    def broken() -> Iterator[bytes]:
        yield b"{"
        raise ValueError("edge data has no term")

    for child, error in ((refusing, OutputDirectoryError), (broken, RuntimeError)):
        with pytest.raises(error) as raised, staged_site(out, small) as files:
            files.add_streams({"graph.json": child(), "graph.jsonld": iter([b"[]"])})
        assert "No space left" in str(raised.value) or "ValueError: edge data has no term" in str(raised.value)
        assert _leftovers_of(out) == []


def test_streams_started_are_unseen_until_finished_and_stopped_with_a_failed_build(small: Path, tmp_path: Path) -> None:
    """The graph is made by a child process while the rest of the site is rendered: until
    it is finished its files are in no listing (llms.txt and the sitemap, made meanwhile,
    must not see them) but their paths are taken; a build that fails meanwhile stops the
    child and leaves nothing behind."""
    import hashlib
    import os
    import time

    out = tmp_path / "site"
    with staged_site(out, small) as files:
        streaming = files.start_streams({"graph.json": iter([b"{", b"}\n"]), "graph.jsonld": iter([b"[]\n"])})
        assert "graph.json" not in files and "graph.json" not in list(files)
        with pytest.raises(OutputDirectoryError, match="twice"):
            files.add("graph.jsonld", b"other")
        streaming.finish()
        assert files.digests["graph.json"] == hashlib.sha256(b"{}\n").hexdigest()
        assert files["graph.jsonld"] == b"[]\n"
        streaming.stop()  # once finished: nothing
        assert "graph.json" in files

    def endless() -> Iterator[bytes]:
        while True:  # a graph that would take far longer than the build it belongs to
            time.sleep(0.01)
            yield b"."

    with pytest.raises(RuntimeError, match="meanwhile"), staged_site(out, small) as files:
        streaming = files.start_streams({"graph.json": endless(), "graph.jsonld": iter([b"[]"])})
        assert streaming.child is not None
        pid = streaming.child._pid
        try:
            raise RuntimeError("a page failed meanwhile")
        finally:
            streaming.stop()
            with pytest.raises(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)  # killed and reaped, not left running
    assert _leftovers_of(out) == []


def test_streams_sharing_what_they_are_made_from_are_written_side_by_side_and_stopped_together(
        small: Path, tmp_path: Path) -> None:
    """With what the files share made first (``prepare``: the graph's assembly, made once),
    each file after the first is written by a child of the child, tied to it: stopping the
    build stops both, and nothing of theirs is left running or written."""
    import hashlib
    import os
    import time

    from generator.engine.output import can_tie

    if not can_tie():  # Linux's PR_SET_PDEATHSIG: elsewhere the files are written one after the other
        if os.environ.get("CI") == "true":
            pytest.fail("a child cannot be tied to its parent on the CI machine")
        pytest.skip("a child cannot be tied to its parent here (not Linux)")
    prepared = tmp_path / "prepared"

    def prepare() -> None:
        with open(prepared, "a") as stream:
            stream.write(f"{os.getpid()}\n")

    out = tmp_path / "site"
    with staged_site(out, small) as files:
        files.start_streams({"graph.json": iter([b"{", b"}\n"]), "graph.jsonld": iter([b"[]\n"])}, prepare).finish()
        assert files.digests["graph.json"] == hashlib.sha256(b"{}\n").hexdigest()
        assert files["graph.jsonld"] == b"[]\n"
    made_by = prepared.read_text().split()
    assert len(made_by) == 1 and int(made_by[0]) != os.getpid(), "made once, in the child, for both files"

    def endless() -> Iterator[bytes]:
        while True:
            time.sleep(0.01)
            yield b"."

    def state(pid: int) -> str:  # "" once gone; "Z" once dead, not reaped yet
        try:
            return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return ""

    with pytest.raises(RuntimeError, match="meanwhile"), staged_site(out, small) as files:
        streaming = files.start_streams({"graph.json": iter([b"{}"]), "graph.jsonld": endless()}, prepare)
        assert files.tree is not None and streaming.child is not None
        child, deadline = streaming.child._pid, time.monotonic() + 30
        writer: int | None = None
        try:
            while not (beside := [int(name.split("-")[2]) for name in os.listdir(files.tree)  # named after its process
                                  if name.startswith(".carnet-chunks-") and name.split("-")[2] != str(child)]):
                assert time.monotonic() < deadline, "graph.jsonld's writer never started"
                time.sleep(0.01)
            writer = beside[0]
            raise RuntimeError("a page failed meanwhile")
        finally:
            streaming.stop()
            while writer is not None and state(writer) not in ("", "Z", "X"):
                assert time.monotonic() < deadline, "the writer beside outlived the child that started it"
                time.sleep(0.01)
    assert _leftovers_of(out) == []


def test_a_lingering_build_keeps_its_old_tree_for_the_next_one_to_start_from(small: Path, tmp_path: Path) -> None:
    """``carnet serve`` rebuilds with ``linger``: the tree swapped out is kept beside the
    output (named by the record, its files hard links to the live ones it shares), and the
    next rebuild stages into it rather than linking 25,000 files anew: that tree is the one
    that goes live. The process's exit (here :func:`drop_spare`) removes it; none is left."""
    from generator.engine import output

    out = tmp_path / "site"
    spare = out.parent / f".{out.name}.old-{os.getpid()}"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(small, out, search=False, cache=cache)
    assert not spare.exists(), "a build that does not linger removes its old tree"
    for number in range(4):
        replace(small, "notes/conseil-c.md", "Le budget", f"Le budget ({number})")
        kept = output._identity(spare) if spare.exists() else None
        build(small, out, search=False, cache=cache, linger=True)
        if kept is not None:
            assert output._identity(out) == kept, "the spare tree was staged into and went live"
        assert spare.is_dir() and output._identity(spare) in output._recorded(out)
        assert not (spare / MARKER).exists() and _leftovers_of(out) == []
        shared = out / "notes" / "conseil-a.html"  # not edited: one file in both trees
        assert (spare / "notes" / "conseil-a.html").stat().st_ino == shared.stat().st_ino
        assert (spare / "notes" / "conseil-c.html").stat().st_ino != (out / "notes" / "conseil-c.html").stat().st_ino
        full = tmp_path / f"full-{number}"
        build(small, full, search=False)
        assert site_files(out, search=False) == site_files(full, search=False)
    output.drop_spare(out)
    assert not spare.exists() and out.absolute() not in output._SPARES
    assert output._recorded(out) == {output._identity(out)}


def test_a_spare_tree_touched_meanwhile_is_brought_in_line_or_left_aside(small: Path, tmp_path: Path) -> None:
    """Whatever happened to the kept tree between two rebuilds (files removed, added, replaced
    by copies, a folder where a file was, the whole tree gone or another in its place), the
    next rebuild is the full build's, and a tree not the one kept is never staged into."""
    from generator.engine import output

    out = tmp_path / "site"
    spare = out.parent / f".{out.name}.old-{os.getpid()}"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(small, out, search=False, cache=cache)

    def stray_files(tree: Path) -> None:
        (tree / "notes" / "conseil-a.html").unlink()
        (tree / "stray.html").write_bytes(b"not the site's")
        (tree / "stray").mkdir()
        (tree / "stray" / "deep.txt").write_bytes(b"nor this")
        copy = tree / "index.html"
        data = copy.read_bytes()
        copy.unlink()
        copy.write_bytes(data + b"<!-- a copy, not the live file -->")
        shutil.rmtree(tree / "notes")
        (tree / "notes").write_bytes(b"a file where a folder was")

    def gone(tree: Path) -> None:
        shutil.rmtree(tree)

    def another(tree: Path) -> None:
        shutil.rmtree(tree)
        tree.mkdir()
        (tree / "theirs.txt").write_bytes(b"someone else's tree under that name")

    for number, touch in enumerate((stray_files, gone, another, stray_files)):
        replace(small, "notes/conseil-c.md", "Le budget", f"Le budget ({number})")
        build(small, out, search=False, cache=cache, linger=True)
        touch(spare)
        replace(small, "notes/conseil-c.md", f"Le budget ({number})", f"Le budget ({number}).")
        build(small, out, search=False, cache=cache, linger=True)
        full = tmp_path / f"full-{number}"
        build(small, full, search=False)
        assert site_files(out, search=False) == site_files(full, search=False), touch.__name__
        assert not (out / "stray.html").exists() and not (out / "theirs.txt").exists()
    output.drop_spare(out)


def test_the_synced_tree_is_the_linked_tree(tmp_path: Path) -> None:
    """The staging tree brought in line with the live one (:func:`_link_tree` over the tree swapped out) holds what a
    tree linked anew holds: the same paths, each the live file itself
    (same inode), the left-out paths absent, its own marker kept; and both give the same
    listing of the live tree."""
    from generator.engine import output

    live = tmp_path / "live"
    for path, data in {"index.html": b"i", "a/b.html": b"b", "a/c/d.txt": b"d", "e/f.json": b"f", "g.css": b"g",
                       ".pagefind-next/x": b"x", "pagefind/p.js": b"p"}.items():
        (live / path).parent.mkdir(parents=True, exist_ok=True)
        (live / path).write_bytes(data)
    (live / "h.html").symlink_to(live / "index.html")
    skip = {".pagefind-next", MARKER}
    fresh, synced = tmp_path / "fresh", tmp_path / "synced"
    fresh.mkdir()
    linked = output._link_tree(live, fresh, skip)
    synced.mkdir()
    output._link_tree(live, synced, skip)
    (synced / MARKER).write_bytes(output.MARKER_TEXT)
    # the tree the last build swapped out, then the live tree's next build, then hands elsewhere
    (live / "a" / "b.html").unlink()
    (live / "a" / "b.html").write_bytes(b"b, rewritten")
    (live / "g.css").unlink()
    (live / "new").mkdir()
    (live / "new" / "n.html").write_bytes(b"n")
    shutil.rmtree(live / "e")
    (live / "e").write_bytes(b"a file where a folder was")
    (synced / "stray.txt").write_bytes(b"s")
    (synced / ".pagefind-next").mkdir(exist_ok=True)
    (synced / "a" / "c" / "d.txt").unlink()
    (synced / "a" / "c" / "d.txt").write_bytes(b"d")  # a copy: not the live file
    (synced / "h.html").write_bytes(b"a file where the live tree has a link")
    fresh_again = tmp_path / "fresh-again"
    fresh_again.mkdir()
    linked = output._link_tree(live, fresh_again, skip)
    assert output._link_tree(live, synced, skip) == linked

    def tree(root: Path) -> dict[str, int | None]:
        return {path.relative_to(root).as_posix(): None if path.is_dir() else path.stat().st_ino
                for path in root.rglob("*") if path.relative_to(root).as_posix() != MARKER}

    assert tree(synced) == tree(fresh_again)
    assert tree(synced)["a/c/d.txt"] == (live / "a" / "c" / "d.txt").stat().st_ino
    assert (synced / MARKER).read_bytes() == output.MARKER_TEXT, "the staging tree's own marker stays"
    assert ".pagefind-next" not in tree(synced) and "h.html" not in tree(synced)


def _leftovers_of(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.tmp"))


def test_the_linking_child_lists_the_live_tree_as_the_cache_checks_it(small: Path, tmp_path: Path) -> None:
    """A rebuild links the last build's tree into its staging tree before it knows whether
    that tree is intact; the same walk lists it, as BuildCache.output_intact would (the
    search bundle left out, a link and a stray file in): the build goes on from the linked
    tree only if that listing is the one the last build left."""
    from generator.engine.output import staging_tree

    out = tmp_path / "site"
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    (out / "pagefind").mkdir()
    (out / "pagefind" / "bundle.js").write_bytes(b"rebuilt apart: not listed")
    (out / "notes" / "deep").mkdir()
    (out / "notes" / "deep" / "stray.txt").write_bytes(b"listed")
    (out / "here.html").symlink_to(out / "index.html")
    with staging_tree(out, small, link=True) as staging:
        listing = staging.live_listing()
        assert (staging.path / "pagefind" / "bundle.js").is_file() and (staging.path / "notes" / "deep").is_dir()
        assert not (staging.path / "here.html").exists(), "a link is listed, not linked"
    cache = BuildCache(listing=listing or "")
    assert listing and cache.output_intact(out)
    (out / "pagefind" / "bundle.js").write_bytes(b"changed: still not listed")
    assert cache.output_intact(out)
    (out / "notes" / "deep" / "stray.txt").write_bytes(b"touched")
    assert not cache.output_intact(out)
    (out / "notes" / "deep" / "stray.txt").unlink()
    assert not cache.output_intact(out)
    with staging_tree(out, small, link=True) as staging:
        assert not cache.listed_as_left(staging.live_listing())


def test_the_summary_counts_the_extractions_and_statuses_the_notes_json_publish(tmp_path: Path) -> None:
    """The build's summary (what ``carnet build`` prints) counts each published extraction once,
    and its detached and relocated ones, as a reader recounts them from every note's JSON
    sibling; an incremental rebuild after a quote edited counts the same as a full one."""
    from collections import Counter

    content = tmp_path / "content"
    shutil.copytree(Path(__file__).resolve().parents[2] / "content", content)
    out = tmp_path / "site"

    def recounted() -> tuple[int, int, int]:
        anchors: Counter[str] = Counter()
        for page in (out / "notes").rglob("*.json"):
            record = json.loads(page.read_text(encoding="utf-8"))
            if isinstance(record, dict) and "extractions" in record and "kind" in record:
                anchors.update(extraction["anchor"] for extraction in record["extractions"])
        return anchors.total(), anchors["detached"], anchors["relocated"]

    summary = build(content, out, search=False).summary
    assert (summary.extractions, summary.detached, summary.relocated) == recounted()
    assert summary.detached and summary.relocated, "the example has both"
    replace(content, "notes/cvl-2025-05-15.extractions.yaml", "livré le 6 mai", "livré le 5 mai")
    again = build(content, out, search=False, cache=BuildCache.open(default_cache_path(out))).summary
    assert (again.extractions, again.detached, again.relocated) == recounted() != (
        summary.extractions, summary.detached, summary.relocated)


def test_a_build_failing_as_the_graph_files_start_leaves_no_layout_folder(small: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An incremental build notes where the graph files' writers lay their layout out, in a
    temporary folder: a failure as the writing starts (no process to spare, a full disk)
    removes it with the staging tree, as a failure later does."""
    import tempfile

    import generator.engine.output as output

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "site"
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget change.")

    def refused(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.SiteFiles, "start_streams", refused)
    with pytest.raises(OutputDirectoryError, match="No space left"):
        build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    assert list((tmp_path / "tmp").glob("carnet-graph-layout-*")) == []
