"""``build --jobs N``: the per-note work (parse, anchor, render a note's outputs) in forked
worker processes gives the very bytes of one process, full or incremental, and whatever a
worker learns reaches the build cache."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import generator.engine.anchors as engine_anchors
import generator.engine.notes as engine_notes
import generator.engine.render as engine_render
import generator.pipeline as pipeline
from bench.corpus import Densities, plain_notes, write_carnet
from generator.engine.cache import BuildCache, default_cache_path
from generator.engine.jobs import BLAS_THREADS, fork_iter, fork_map, workers_for
from generator.pipeline import build
from generator.site.model import SiteModel
from support.corpus import site_files

NOTES = 150  # enough for two workers (workers_for: 64 notes each at least)
WIKIS = 3


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jobs") / "content"
    write_carnet(root, plain_notes(NOTES, seed=3),
                 Densities(extractions=6 * NOTES, comments=1.0, wikis=WIKIS, citations=NOTES))
    return root


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many items each call of fork_map handed to its workers (calls that forked only)."""
    seen: list[int] = []

    def spying(real):  # type: ignore[no-untyped-def]
        def spy(task, items, jobs, worth=None):  # type: ignore[no-untyped-def]
            if workers_for(len(items), jobs, worth) > 1 and worth is None:  # the notes' (not the selections')
                seen.append(len(items))
            return real(task, items, jobs, worth)
        return spy

    monkeypatch.setattr(engine_notes, "fork_map", spying(fork_map))  # the notes' parse
    monkeypatch.setattr(engine_anchors, "fork_map", spying(fork_map))  # their anchoring
    monkeypatch.setattr(engine_render, "fork_iter", spying(fork_iter))  # the rendering: results taken as they come
    return seen


def test_two_jobs_give_the_bytes_of_one(corpus: Path, tmp_path: Path, forks: list[int],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert workers_for(NOTES + WIKIS, 2) == 2
    workers = tmp_path / "site-wide"  # each process that made a site-wide output (listings, graph pages…)
    workers.mkdir()

    def spied(*args):  # type: ignore[no-untyped-def]
        (workers / f"{os.getpid()}-{args[-1]}").touch()
        return site_wide_work(*args)

    site_wide_work = engine_render._site_wide_work
    monkeypatch.setattr(engine_render, "_site_wide_work", spied)
    build(corpus, tmp_path / "one", search=False, jobs=1)
    assert forks == [] and list(workers.iterdir()) == []
    build(corpus, tmp_path / "two", search=False, jobs=2)
    assert forks == [NOTES + WIKIS] * 3  # reading, anchoring, then rendering, each in workers
    makers = {path.name.split("-")[0] for path in workers.iterdir()}
    assert len(makers) == 2 and str(os.getpid()) not in makers  # the site-wide outputs too
    one, two = site_files(tmp_path / "one", search=False), site_files(tmp_path / "two", search=False)
    assert sorted(one) == sorted(two)
    assert [path for path in one if one[path] != two[path]] == []
    assert sum(path.startswith("notes/") and path.endswith(".html") for path in two) >= NOTES


def test_what_workers_compute_reaches_the_cache(corpus: Path, tmp_path: Path, forks: list[int]) -> None:
    content = tmp_path / "content"
    shutil.copytree(corpus, content)
    out = tmp_path / "site"
    build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)), jobs=2)
    assert forks == [NOTES + WIKIS] * 3
    # a rebuild from disk after one edit: one note anchored and rendered again, in this process
    edited = sorted((content / "notes").glob("note-*.md"))[7]
    edited.write_text(edited.read_text(encoding="utf-8") + "\nUne phrase ajoutée.\n", encoding="utf-8")
    cache = BuildCache.open(default_cache_path(out))
    result = build(content, out, search=False, cache=cache, jobs=2)
    assert forks == [NOTES + WIKIS] * 3  # too little to redo for workers
    assert cache.counts.redone.get("anchors") == 1
    assert cache.counts.reused.get("anchors") == len(list((content / "notes").glob("*.md"))) - 1
    assert cache.counts.redone.get("bodies", 0) <= 3  # the note, and pages that cite it
    assert 0 < result.changed < 40
    build(content, tmp_path / "full", search=False, jobs=1)
    assert site_files(out, search=False) == site_files(tmp_path / "full", search=False)


def test_workers_write_their_files_and_what_an_edit_leaves_alone_stays_linked(
        corpus: Path, tmp_path: Path, forks: list[int]) -> None:
    """A worker writes the files it makes into the staging tree itself (they never pass
    through the build's own process): into a new tree at their paths; over the last
    build's tree, only those that changed (the others stay links to the live files, their
    inodes kept). Either way the site is a one-process build's, with nothing left over."""
    content = tmp_path / "content"
    shutil.copytree(corpus, content)
    out = tmp_path / "site"
    build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)), jobs=2)
    before = {path: (out / path).stat().st_ino for path in site_files(out, search=False)}
    settings = content / "carnet.yaml"  # the site's title: on every page, in no text sibling
    settings.write_text(settings.read_text(encoding="utf-8").replace("Banc d'essai", "Banc d'essai renommé"),
                        encoding="utf-8")
    result = build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)), jobs=2)
    assert forks == [NOTES + WIKIS] * 3 + [NOTES + WIKIS]  # the rebuild: every page made again, in workers
    build(content, tmp_path / "full", search=False, jobs=1)
    after = site_files(out, search=False)
    assert after == site_files(tmp_path / "full", search=False)
    texts = [path for path in after if path.startswith("notes/") and path.endswith(".txt")]
    pages = [path for path in after if path.startswith("notes/") and path.endswith(".html")]
    assert len(texts) >= NOTES and len(pages) >= NOTES
    assert all((out / path).stat().st_ino == before[path] for path in texts), "unchanged: still the same file"
    assert all((out / path).stat().st_ino != before[path] for path in pages), "changed: written anew"
    assert b"renomm" in after[pages[0]] and 0 < result.changed < len(after)
    leftovers = [p.name for p in out.rglob("*") if p.name.startswith(".carnet")] + \
        [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]
    assert leftovers == []


def test_two_workers_writing_one_path_is_the_clash_error_not_a_file_overwritten(
        corpus: Path, tmp_path: Path) -> None:
    """Two notes' outputs at one path, written by worker processes: the build refuses it
    as it refuses any clash (naming the outputs), the live site untouched."""
    from generator.engine.emitters import EMITTERS
    from generator.problems import SettingsError

    @dataclass(frozen=True)
    class Everyone:
        name: str = "everyone"

        def emit(self, site: SiteModel, theme: object, memo: object) -> Iterator[tuple[str, bytes]]:
            return self.emit_notes(site, theme, memo, site.publication.notes)

        def emit_notes(self, site: SiteModel, theme: object, memo: object,
                       slugs: Iterable[str]) -> Iterator[tuple[str, bytes]]:
            for slug in slugs:
                yield "notes/shared.txt", slug.encode()

    out = tmp_path / "site"
    build(corpus, out, search=False, jobs=2)
    live = site_files(out, search=False)
    with pytest.raises(SettingsError, match=r"everyone and everyone both write notes/shared.txt"):
        build(corpus, out, search=False, jobs=2, emitters=(*EMITTERS, Everyone()))
    assert site_files(out, search=False) == live
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_a_worker_that_cannot_write_is_the_builds_clear_error_and_the_site_stays(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk met by a worker process writing its files: the build's own error (what to
    do, no traceback), the live site as it was, no staging tree left beside it."""
    import errno

    from generator.engine import output
    from generator.problems import OutputDirectoryError

    out = tmp_path / "site"
    build(corpus, out, search=False, jobs=2)
    live = site_files(out, search=False)
    writes = iter(range(10**6))
    real = output._write_file

    parent = os.getpid()

    def filling(path: str, data: bytes) -> None:  # forked: each worker counts its own writes
        if os.getpid() != parent and next(writes) == 40:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data)

    monkeypatch.setattr(output, "_write_file", filling)
    with pytest.raises(OutputDirectoryError, match=r"could not write the site into .*No space left on device"):
        build(corpus, out, search=False, jobs=2)
    assert site_files(out, search=False) == live
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name or ".old-" in p.name] == []


def test_a_failing_worker_is_an_error_of_the_build_not_a_hang() -> None:
    def task(n: int) -> int:
        if n == 100:
            raise ValueError("note 100 cannot be read")
        return n

    with pytest.raises(ValueError, match="note 100"):
        fork_map(task, list(range(200)), 2)
    assert fork_map(lambda n: n * 2, list(range(200)), 2) == [n * 2 for n in range(200)]  # in order


def test_a_build_runs_the_cycle_collector_less_often_and_gives_its_settings_back(small: Path,
                                                                                  tmp_path: Path) -> None:
    """A build holds millions of small objects to its end: Python's collector is run less
    often while it works (every COLLECT_EVERY allocations, not 700; the older generations,
    which walk everything read back from the cache, in effect not at all), its workers
    included, then set back as it was, whether the build succeeds or fails."""
    import gc

    from generator.engine.emitters import EMITTERS

    seen: list[tuple[int, ...]] = []

    class Looking:
        name = "looking"

        def emit(self, site: object, theme: object, memo: object):  # type: ignore[no-untyped-def]
            seen.append(gc.get_threshold())
            yield from ()

    before = gc.get_threshold()
    build(small, tmp_path / "site", search=False, emitters=(*EMITTERS, Looking()))
    assert seen == [(pipeline.COLLECT_EVERY, pipeline.OLDER_EVERY, pipeline.OLDER_EVERY)]
    assert gc.get_threshold() == before

    class Failing(Looking):
        def emit(self, site: object, theme: object, memo: object):  # type: ignore[no-untyped-def]
            raise RuntimeError("an emitter fails")

    with pytest.raises(RuntimeError):
        build(small, tmp_path / "other", search=False, emitters=(*EMITTERS, Failing()))
    assert gc.get_threshold() == before


def test_the_pipeline_loads_numpy_and_scipy_only_when_a_step_uses_them() -> None:
    """A rebuild that groups no evidence and lays no graph out (one body edited) never pays
    for loading numpy and scipy (~0.1 s of every command line rebuild), nor a build for
    http.client and ssl (which xml.sax.saxutils loads)."""
    import subprocess
    import sys

    code = ("import sys, generator.pipeline, generator.cli, generator.engine.emitters; "
            "print(sorted(m for m in ('numpy', 'scipy', 'http.client', 'ssl') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"





_BLAS_PROBE = """
import os
from generator.engine.jobs import fork_map, loaded_openblas

def threads(_item):
    # what a process sees: OPENBLAS_NUM_THREADS, and the thread count of each OpenBLAS loaded
    import numpy as np, scipy.linalg
    assert float((np.ones((64, 64)) @ np.ones((64, 64)))[0, 0]) == 64.0  # numpy's BLAS, used
    scipy.linalg.eigh(np.eye(8))  # scipy's
    return os.environ.get("OPENBLAS_NUM_THREADS"), tuple(int(getattr(library, setter.replace("_set_", "_get_"))())
                                                          for library, setter in loaded_openblas())
"""


@pytest.mark.parametrize("loaded_before", [False, True])
def test_a_worker_runs_its_numerical_libraries_on_one_thread(loaded_before: bool) -> None:
    """The workers are the build's parallelism: numpy's and scipy's BLAS, on a pool of threads
    in each of them, would oversubscribe the cores. Told so whether their libraries were loaded
    before the fork (a serve process building again: they are told directly) or not (a first
    build: the variables are read when they load)."""
    import os
    import subprocess
    import sys

    code = _BLAS_PROBE + ("print('parent', threads(0))\n" if loaded_before else "") + \
        "print('workers', sorted(set(fork_map(threads, list(range(4)), 2, worth=1))))\n"
    env = {key: value for key, value in os.environ.items() if key not in BLAS_THREADS}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=env, cwd=Path(__file__).parent.parent)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    if loaded_before:
        assert lines.pop(0).startswith("parent (None, (")  # the parent's own are left as they are
    assert lines == ["workers [('1', (1, 1))]"]  # numpy's OpenBLAS and scipy's, one thread each


def test_work_is_handed_out_in_chunks_that_shrink_towards_the_end() -> None:
    """The articles come last and weigh most (a wiki's pages): the last chunks are single
    items, so no worker is left with a long tail while the others wait."""
    from generator.engine.jobs import _chunks

    chunks = _chunks(list(range(5100)), 2)
    assert [item for chunk in chunks for item in chunk] == list(range(5100))  # all, in order
    sizes = [len(chunk) for chunk in chunks]
    assert sizes[0] == 64 and sizes == sorted(sizes, reverse=True) and sizes[-8:] == [1] * 8
    assert _chunks([], 2) == [] and _chunks(["a"], 2) == [["a"]]


LINKED = """---
title: Séance E
date: 2025-04-01
authors: [Yann Realname]
notebooks:
  conseil:
    theme: [Budget]
---
## Liens de *toutes* sortes

Voir [la séance A](conseil-a.md#budget), [une section absente](conseil-a.md#nulle-part),
[un fichier absent](absente.md), [le tableau](../assets/public.csv), [le site](https://example.org/a?b=1&c=2)
et [la suite](conseil-d.md), puis [[conseil-b]], [[ext:a-budget]], [[Séance C|conseil-c]] et [[absente]].

![un schéma](../assets/public.csv "Titre <b>") et ![absent](../assets/absent.png) ; **[gras *et* lien](conseil-b.md)**.

Le passage marqué traverse [un lien vers B](conseil-b.md) puis continue jusqu'ici.

- une liste avec [un lien](conseil-c.md)
- et `du code [pas un lien](x.md)`

| tableau | lien |
| --- | --- |
| case | [C](conseil-c.md) |

```python
print("[pas un lien](y.md)")
```
"""
LINKED_EXTRACTIONS = """extractions:
  - id: e-traverse
    quote: passage marqué traverse un lien vers B puis continue
    kind: fait
    author: Yann Realname
  - id: e-masque
    quote: une liste avec un lien
    kind: fait
    author: Yann Realname
    masked: true
  - id: e-lien
    quote: la séance A
    kind: fait
    author: Yann Realname
"""


def test_a_body_rendered_where_it_was_parsed_is_the_body_rendered_with_its_page(
        small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Anchored in worker processes, a note's body is rendered there, its links left as
    holes that its page's worker fills (no second parse): the pages are a serial build's,
    for links of every kind, images, marks across a link and a masked extraction; and every
    plain note's template is used, not rendered again."""
    from generator.site import markdown_html, pages

    (small / "notes" / "conseil-e.md").write_text(LINKED, encoding="utf-8")
    (small / "notes" / "conseil-e.extractions.yaml").write_text(LINKED_EXTRACTIONS, encoding="utf-8")
    build(small, tmp_path / "serial", search=False, jobs=1)
    used: list[bool] = []

    def filled(template: markdown_html.BodyTemplate, state: markdown_html.RenderState) -> str:
        used.append(template.marks == state.marks and template.covered == state.covered)
        return markdown_html.fill_body(template, state)

    # the workers' path, in this process: the corpus is too small for worker processes
    monkeypatch.setattr(engine_anchors, "workers_for", lambda count, jobs, worth=None: 2)
    monkeypatch.setattr(pages, "fill_body", filled)
    build(small, tmp_path / "templates", search=False, jobs=2)
    serial, templated = site_files(tmp_path / "serial", search=False), site_files(tmp_path / "templates", search=False)
    assert sorted(serial) == sorted(templated)
    assert [path for path in serial if serial[path] != templated[path]] == []
    page = serial["notes/conseil-e.html"].decode()
    assert 'class="broken-link"' in page and 'href="https://example.org/a?b=1&amp;c=2"' in page and "<img" in page
    assert 'data-ext="e-traverse"' in page and "e-masque" not in page
    plain = [p for p in (small / "notes").glob("*.md") if "type:" not in p.read_text(encoding="utf-8")]
    assert len(used) >= len(plain) - 1 and all(used), "each public plain note's template filled (the secret one has no page)"
