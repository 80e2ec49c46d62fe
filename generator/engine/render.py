"""Every output of the site, made as a build makes it: each note's own outputs recalled whole
by what they read or made (in worker processes when there are many, each writing its files
into the staging tree), the site-wide outputs (in worker processes on a cold build), then
what is read from the pages themselves and the graph files; every file filed by its digest
into :class:`~generator.engine.output.SiteFiles`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from functools import partial
from typing import Final, TypeVar

from generator.engine import reads
from generator.engine.emitters import (
    EMITTERS,
    Emitter,
    FiledOutputs,
    NoteOutputs,
    PerNote,
    derived_outputs,
    graph_started,
    note_outputs,
)
from generator.engine.jobs import RecordingMemo, fork_iter, replay, workers_for
from generator.engine.memo import NO_MEMO, Kind, KindsOnly, Memo, same
from generator.engine.output import (
    SiteFiles,
    Staged,
)
from generator.engine.summary import weighed
from generator.engine.tracking import KeyBook, Tracking, carried_entries, tracked_keys, world_digest
from generator.problems import SettingsError
from generator.site.addresses import content_behind
from generator.site.model import SiteModel
from generator.site.paging import page_budget
from generator.site.theme import Theme

T = TypeVar("T")


def render_site(site: SiteModel, theme: Theme, emitters: tuple[Emitter, ...] = EMITTERS,
                memo: Memo = NO_MEMO, jobs: int = 1, files: SiteFiles | None = None,
                tracking: Tracking | None = None, meanwhile: Callable[[], None] | None = None) -> SiteFiles:
    """Every output of the site, by path, added to ``files`` (a staging tree's, from
    :func:`generator.engine.output.staged_site`: each written as it comes; by default held
    in memory). With a build cache as ``memo``, what is unchanged is not rendered again:
    a note's outputs are recalled whole by what they read (:mod:`generator.engine.reads`).
    With ``jobs`` > 1, the notes' own outputs (page, text, annotations, siblings, mirror)
    still to make are made in that many worker processes. ``meanwhile`` is called once every
    page is made, while graph.json and graph.jsonld are (:func:`derived_outputs`)."""
    files = SiteFiles() if files is None else files
    owner: dict[str, str] = {}
    kept: list[FiledOutputs] = []  # whose files are theirs is looked up only for a clash: 25,000 at 5,000 notes

    def add(path: str, data: bytes | Staged, name: str, digest: str | None = None) -> None:
        if path in files:
            if isinstance(data, Staged):
                files.discard(data)  # as settle does with a file it refuses
            raise SettingsError(_clash(site, path, name, owner.get(path) or _owner(kept, path)))
        if isinstance(data, Staged):
            files.settle(path, data)
        else:
            files.add(path, data, digest)
        owner[path] = name

    def take(outputs: NoteOutputs) -> FiledOutputs:
        """A note's files go into ``files`` at once (or were written there by a worker
        process: taken as they are); they are kept by their digests."""
        for name, path, data in outputs.emitted:
            add(path, data, name)
        for path, data in outputs.derived.items():
            add(path, data, "a derived output")
        for name, path, staged in outputs.staged:
            add(path, staged, name or "a derived output")
        files.gzipped.update((files.digests[path], size) for path, size in outputs.gzipped.items())
        return FiledOutputs.of(outputs, files.digests)

    def keep(filed: Iterable[FiledOutputs]) -> bool:
        """Recalled notes' files, each the last build's in the live tree: all kept as they
        are, or none (then made again: one taken already clashes there, as :func:`add` then says)."""
        filed = list(filed)
        if not files.keep_each({path: digest for one in filed for _name, path, digest in one.files},
                               sum(len(one.files) for one in filed)):
            return False
        kept.extend(filed)
        return True

    per_note = [e for e in emitters if isinstance(e, PerNote)]
    made = every_note_outputs(site, theme, memo, per_note, jobs, take, keep if files.previous else None,
                              tracking, files if files.tree is not None else None) if per_note else {}
    keys = tracking.book.keys if tracking is not None and tracking.book is not None else None
    if tracking is not None:  # the listings' entries an edit left as they were: not made again
        reads.give_entries(site, theme, carried_entries(site, tracking))
    graph = graph_started(site, files, memo, made, jobs, keys)  # made by a child process while the rest is rendered
    try:
        for emitter, emitted in site_wide_outputs(site, theme, memo, [e for e in emitters if e not in per_note],
                                                  jobs, files if files.tree is not None else None):
            for path, data in emitted:
                add(path, data, emitter.name)
        derived, digests = derived_outputs(site, files, graph, memo, theme, made, meanwhile)
    except BaseException:
        graph.stop()
        raise
    for path, data in derived.items():
        add(path, data, "a derived output", digests[path])
    if tracking is not None and tracking.book is not None:
        tracking.book.entries = reads.entries_made(site)
    return files


def site_wide_outputs(site: SiteModel, theme: Theme, memo: Memo, emitters: list[Emitter], jobs: int = 1,
                      staging: SiteFiles | None = None) -> Iterator[tuple[Emitter, Iterable[tuple[str, bytes | Staged]]]]:
    """Each emitter with its outputs, in order. With ``jobs`` > 1 and ``staging``, the
    emitters are run in that many worker processes, which write their files into the
    staging tree (the listings and graph pages: a second of a 5,000-note build, one core
    idle otherwise, the graph's child process being light); else each here, as its files come.
    Over the last build's tree (an edit) always here: most are recalled, and forking cost more
    than it saved (0.3 s of a 5,000-note rebuild)."""
    if jobs <= 1 or staging is None or staging.previous or workers_for(len(emitters), jobs, worth=1) <= 1:
        yield from ((emitter, emitter.emit(site, theme, memo)) for emitter in emitters)
        return
    # the heaviest handed out first, so that no worker takes one last while the other is idle
    order = sorted(range(len(emitters)), key=lambda index: (_HEAVY.index(emitters[index].name)
                                                            if emitters[index].name in _HEAVY else len(_HEAVY), index))
    made = fork_iter(partial(_site_wide_work, site, theme, memo, emitters, staging), order, jobs, worth=1)
    with contextlib.closing(made):  # the workers stop before the staging tree they write into is removed
        results = dict(zip(order, made, strict=True))
    for index, emitter in enumerate(emitters):
        staged, records = results[index]
        replay(memo, records)
        yield emitter, staged


_HEAVY: Final = ("graph-pages", "notebook-pages", "category-pages")
"""The site-wide emitters that take the longest, heaviest first (at 5,000 notes: 0.9, 0.65
and 0.6 s; the others a few milliseconds)."""


def _site_wide_work(site: SiteModel, theme: Theme, memo: Memo, emitters: list[Emitter], staging: SiteFiles,
                    index: int) -> tuple[list[tuple[str, bytes | Staged]], list[tuple[Kind, str, object]]]:
    """One emitter's outputs, as a worker process makes them: written into ``staging``, with
    the memo entries it used (the emitter is named by its index: a test's own class is not
    pickled)."""
    recording = RecordingMemo(memo)
    staged: list[tuple[str, bytes | Staged]] = [(path, staging.stage(path, data))
                                                for path, data in emitters[index].emit(site, theme, recording)]
    return staged, recording.records


BODIES: Final = frozenset({Kind.BODIES})
"""What a recalled note keeps apart from its outputs: its body's HTML (another note's edit
can change the page around it, seldom the body itself)."""


def every_note_outputs(site: SiteModel, theme: Theme, memo: Memo, emitters: list[PerNote], jobs: int = 1,
                       take: Callable[[NoteOutputs], FiledOutputs] = FiledOutputs.of,
                       keep: Callable[[Iterable[FiledOutputs]], bool] | None = None,
                       tracking: Tracking | None = None, staging: SiteFiles | None = None) -> dict[str, FiledOutputs]:
    """Each published note's own outputs, passed to ``take`` as they are made (it files
    them: digests, not bytes). With ``keep`` (given the last build's files of notes, it
    keeps them all, or says it cannot), a note whose reads are unchanged is recalled by its
    files' digests and its files kept, never made again (with the engine's read check on,
    made again and compared); the others are made (in ``jobs`` worker processes when
    there are enough, while this one takes what they made: with ``staging``, the files a
    worker makes are written into that staging tree by the worker). With ``tracking``, only the keys
    of the notes an edit since the last build can reach are made (:mod:`generator.engine.tracking`),
    and the notes whose keys are the last build's of this process are carried from its book
    (:attr:`KeyBook.filed`), their files kept at once: a rebuild after one edit asks the
    cache and the tree about the few others alone."""
    notes = list(site.publication.notes)
    shell = reads.shell_digest(site, theme, [e.name for e in emitters])
    # each key asked twice (held?, then recalled or stored): made once, here; a functools.cache
    # per note cost more than the keys
    keyed = [slug for slug in notes if reads.keyed(site, slug)]
    carried: dict[str, FiledOutputs] = {}
    if memo is NO_MEMO:  # a full build asks for no key: none is made (0.4 s at 5,000 notes)
        keys = {slug: partial(reads.note_key, shell, site, theme, slug) for slug in keyed}
    else:
        make = partial(reads.note_key, shell, site, theme)
        if tracking is None:
            digests = {slug: make(slug) for slug in keyed}
        else:  # made for the notes an edit can reach, the last build's for the others
            world = world_digest(site, shell, tracking.assets)
            digests, tracking.book = tracked_keys(site, keyed, tracking.sources, world, tracking.last, make)
            if keep is not None and tracking.last is not None:
                carried = _carried(tracking.last, digests, memo)
                if carried and not keep(carried.values()):  # the tree is not as the book has it: note by note
                    carried = {}
        keys = {slug: partial(digests.__getitem__, slug) for slug in digests}
    held = {slug for slug, key in keys.items() if slug not in carried and memo.holds(Kind.NOTE_OUTPUTS, key)} \
        if keep is not None else set()
    todo = [slug for slug in notes if slug not in held and slug not in carried]
    fresh: Generator[tuple[NoteOutputs, list[tuple[Kind, str, object]]], None, None] | None = None
    if workers_for(len(todo), jobs) > 1:
        fresh = fork_iter(partial(_note_work, site, theme, memo, emitters, frozenset(keys), staging), todo, jobs)
    made: dict[str, FiledOutputs] = {}
    checking = reads.checking()
    # closed however this ends: the workers stop before the staging tree they write into is removed
    with contextlib.closing(fresh) if fresh is not None else contextlib.nullcontext():
        for slug in notes:
            if slug in carried:
                made[slug] = carried[slug]
                if checking:
                    reads.check_recalled(slug, carried[slug], FiledOutputs.of(
                        note_outputs(site, theme, NO_MEMO, emitters, slug)).stored())
                continue
            inner = KindsOnly(memo, BODIES) if slug in keys else memo
            compute = partial(note_outputs, site, theme, inner, emitters, slug)
            if fresh is not None and slug not in held:  # the workers' results come in the order of ``todo``
                outputs, records = next(fresh)
                replay(memo, records)
                compute = partial(same, outputs)
            if slug not in keys:
                made[slug] = take(compute())
            elif slug in held:
                assert keep is not None
                taken: list[FiledOutputs] = []
                filed = memo.memo(Kind.NOTE_OUTPUTS, keys[slug], partial(_taken, taken, take, compute))
                if taken:
                    filed = _chunk_filed(memo, taken[0])
                elif not keep([filed]):  # a file of the live tree is not the one filed: made again
                    filed = _chunk_filed(memo, take(compute()))
                elif checking:
                    reads.check_recalled(slug, filed, FiledOutputs.of(
                        note_outputs(site, theme, NO_MEMO, emitters, slug)).stored())
                made[slug] = filed
            else:
                made[slug] = filed = _chunk_filed(memo, take(compute()))
                memo.memo(Kind.NOTE_OUTPUTS, keys[slug], partial(same, filed.stored()))
    if tracking is not None and tracking.book is not None:
        tracking.book.filed = {slug: filed if filed.full_chunk is None else filed.stored()
                               for slug, filed in made.items() if slug in keys}
    return made


def _carried(last: KeyBook, digests: Mapping[str, str], memo: Memo) -> dict[str, FiledOutputs]:
    """The notes whose keys are those of the ``last`` build of this process, with their outputs as
    it filed them: the value each key recalls, asked of ``memo`` all the same (counted as reused and
    kept for the next build; one it lost is given back)."""
    filed = last.filed
    return {slug: memo.memo(Kind.NOTE_OUTPUTS, partial(same, key), partial(same, filed[slug]))
            for slug, key in digests.items() if slug in filed and last.keys.get(slug) == key}


def _taken(taken: list[FiledOutputs], take: Callable[[NoteOutputs], FiledOutputs],
           compute: Callable[[], NoteOutputs]) -> FiledOutputs:
    """A held note's outputs that the memo could not give after all: made, taken, noted in
    ``taken``; filed as the memo keeps them."""
    taken.append(take(compute()))
    return taken[0].stored()


def _chunk_filed(memo: Memo, filed: FiledOutputs) -> FiledOutputs:
    """``filed``, its page's text put in the memo apart from it (see :meth:`FiledOutputs.stored`)."""
    if filed.full_chunk is not None:
        memo.memo(Kind.NOTE_CHUNK, partial(same, filed.chunk_digest), partial(same, filed.full_chunk))
    return filed


def _note_work(site: SiteModel, theme: Theme, memo: Memo, emitters: list[PerNote], keyed: frozenset[str],
               staging: SiteFiles | None, slug: str) -> tuple[NoteOutputs, list[tuple[Kind, str, object]]]:
    """One note's outputs, as a worker process makes them, with the memo entries it used
    (with ``staging``, its files written there, sent back as digests)."""
    recording = RecordingMemo(memo)
    inner: Memo = KindsOnly(recording, BODIES) if slug in keyed else recording
    outputs = note_outputs(site, theme, inner, emitters, slug)
    # its heavy pages gzipped here, the bytes at hand, for the summary (not by the build's own process)
    outputs.gzipped = weighed(((path, data) for _name, path, data in outputs.emitted), page_budget(site), memo)
    if staging is not None:
        outputs.stage(staging)
    return outputs, recording.records


def _owner(kept: Iterable[FiledOutputs], path: str) -> str:
    """The name of the output at ``path`` among the ``kept`` notes' files."""
    return next((name or "a derived output" for filed in kept for name, at, _digest in filed.files if at == path),
                "an output")


def _clash(site: SiteModel, path: str, one: str, other: str) -> str:
    """Two outputs at one path: the analysis refuses every clash content can cause, so this
    is a last resort; it names the content files behind the path to look at."""
    publication = site.publication
    behind = content_behind(path, publication.notes, publication.notebooks, publication.bases,
                            site.published_assets)
    look = f"; look at {', '.join(behind)} (rename it)" if behind else ""
    return (f"{one} and {other} both write {path}{look}. 'carnet check' should have refused this: "
            "please report it with the files named")
