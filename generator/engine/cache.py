"""The build cache: content-hash memos of a build's expensive pure steps, so a rebuild
redoes only what its inputs changed — and gives the very bytes a full build gives.

Every entry is keyed by a sha256 of *everything* its step reads, never by a file name
or a date, so a stale entry can only be missed, never wrongly reused:

- **inputs**: every content and theme file (read again only when its size, mtime or
  inode moved), the build options and the generator's own source. Equal to the last
  build's, with the output directory as that build left it → nothing to do.
- **anchors**: a note's body and extractions → its elements and anchors (on disk without
  the markdown tokens, which are parsed again only for a page rendered again).
- **selections**: a wiki's perimeter extractions and settings → its grouping and map.
- **pages**: the template, its whole context (closures by their code and captured
  values) and the theme's fingerprint → the rendered bytes.
- **siblings**: a page's bytes and citations → its ``.txt``/``.json`` siblings.

A :class:`BuildCache` is the :class:`generator.engine.memo.Memo` an incremental build passes to
its steps (a full build passes :data:`generator.engine.memo.NO_MEMO`). In memory for ``carnet
serve``; on disk for ``carnet build`` under ``.carnet-cache/``: a small state pickle,
written atomically, and a :class:`MemoStore` whose values are written as they are made
and read when asked, so a build holds no more of the cache than it is using. Deleting it
is always safe: the next build is a full one. Entries not used by a build are dropped,
so it never grows past one site.
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import os
import pickle
import stat as stat_module
import sys
import time
import weakref
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final, TypeVar

from generator import __version__
from generator.engine.content import ContentKept
from generator.engine.memo import Kind
from generator.files import UNLISTED, listing_digest, listing_line, write_atomic
from generator.result import BuildResult

if TYPE_CHECKING:
    from generator.engine.evidence import NoteEvidence
    from generator.engine.graph_files import _Assembly
    from generator.engine.manifest import KeptManifest
    from generator.engine.tracking import KeyBook
    from generator.site.graph_view import GraphInputs, NoteGraph
    from generator.site.model import ListedBefore, SiteModel
    from generator.site.theme import Theme

T = TypeVar("T")
BuildOptions = tuple[bool, str | None, bool, str, list[str] | None]
"""strict, base URL, search, theme folder, emitters: what decides a build besides its files."""

CACHE_DIR = ".carnet-cache"
_FORMAT = 1


def _source_digest() -> str:
    """The generator's own code: an edited generator never reuses what an older one made."""
    digest = hashlib.sha256(f"{__version__}|{sys.version}|{_FORMAT}".encode())
    package = Path(__file__).resolve().parent.parent  # the whole generator package, engine included
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@dataclass
class CacheStats:
    """What the last build reused and redid, for the build summary."""

    reused: dict[str, int] = field(default_factory=dict)
    redone: dict[str, int] = field(default_factory=dict)

    def count(self, kind: Kind, hit: bool) -> None:
        bucket = self.reused if hit else self.redone
        bucket[kind] = bucket.get(kind, 0) + 1


_PACKED: Final = ("written", "keys")
""":class:`BuildCache` attributes that come back from disk still pickled: ``written``
(30,000 entries at 5,000 notes) and ``keys`` (whose classes would load the site's
modules): the no-op check needs neither, an incremental build unpickles each on first use."""


@dataclass
class BuildCache:
    """Attributes:
        path: the pickle on disk, or ``None`` for a cache that lives in memory only.
        source: digest of the generator's code the entries were made with.
        stats: file path → (size, mtime_ns, inode, sha256), to avoid rehashing unchanged files.
        stats_taken: when :attr:`stats` were taken (ns since the epoch): a file modified within
            :data:`RACY_NS` before is not trusted by them.
        inputs: digest of every input of the last complete build.
        result: that build's result (reports and problems, for a no-op rebuild's summary).
        written: site path → (sha256, size, mtime_ns) of what the last build left in the
            output directory (kept pickled on disk, unpickled on first use: a rebuild with
            nothing to do only compares ``listing``).
        listing: digest of the paths, sizes and modification times in ``written``.
        memos: kind → key → value (anchors, selections, pages, siblings).
        resident: also keep in :attr:`memos` the values read from or written to the store
            (all but :data:`NOT_RESIDENT`), so the next build in this process recalls them
            without unpickling (``carnet serve``: a rebuild then reads nothing back from disk).
        save_error: why the last :meth:`save` could not write (read-only or full disk), or ``None``.
        keys: the last build's note keys, with what each note's reads consulted
            (:mod:`generator.engine.tracking`): a rebuild makes again only those an edit can reach.
    """

    path: Path | None = None
    source: str = ""
    memo_file_loaded: bool = field(default=True, repr=False)
    memo_dirty: bool = field(default=False, repr=False)
    stats: dict[str, tuple[int, int, int, str]] = field(default_factory=dict)
    stats_taken: int = 0
    inputs: str = ""
    pending: str = ""
    asked: tuple[str, str, BuildOptions] | None = field(default=None, repr=False)  # the build whose inputs were just digested
    result: BuildResult | None = None
    written: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    listing: str = ""
    memos: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: dict[str, set[str]] = field(default_factory=dict, repr=False)
    counts: CacheStats = field(default_factory=CacheStats, repr=False)
    save_error: str | None = field(default=None, repr=False)  # why the last save failed
    resident: bool = field(default=False, repr=False)
    store: MemoStore | None = field(default=None, repr=False)  # the memos on disk, read entry by entry
    # no class attribute for it (a factory, not a default): unpickled on first use (:data:`_PACKED`)
    keys: KeyBook | None = field(default_factory=lambda: None, repr=False)
    # resident only, never pickled: the content's files the last build of this process read (a patch's start)
    content: ContentKept = field(default_factory=ContentKept, repr=False)
    # what :meth:`inputs_digest` last digested (path → its line) over which folders: a patch's start
    lines: dict[str, str] = field(default_factory=dict, repr=False)
    walked: tuple[str, ...] = field(default=(), repr=False)
    # resident only (``carnet serve``), never pickled: what the last build in this process made of
    # every output file, for the next one over its tree to patch: the manifest it wrote
    # (:func:`generator.engine.emitters.derived_outputs`; this build's, until it is recorded) and
    # the listing's lines of :attr:`written` (the very dict they list)
    manifest_kept: KeptManifest | None = field(default=None, repr=False)
    manifest_made: KeptManifest | None = field(default=None, repr=False)
    listing_kept: tuple[dict[str, tuple[str, int, int]], list[str]] | None = field(default=None, repr=False)
    # resident only, never pickled: the last build's note graph and what it was made of, for the
    # next one's to be patched from (:func:`generator.site.graph_view.graph_patched`)
    graph_kept: tuple[GraphInputs, NoteGraph] | None = field(default=None, repr=False)
    # resident only, never pickled: the notes' evidence the last build made (generator.engine.evidence.note_evidence)
    evidence_kept: NoteEvidence | None = field(default=None, repr=False)
    # resident only, never pickled: the indices of the last build's model that list notes, with its
    # notes and notebooks, for the next one's to be patched from (generator.site.model.ListedBefore)
    listed_kept: ListedBefore | None = field(default=None, repr=False)
    # resident only, never pickled: the graph files' assembly the last build made, for the next
    # one's to be patched from (generator.engine.graph_files._Assembly.patched)
    assembly_kept: _Assembly | None = field(default=None, repr=False)
    # resident only, never pickled: the theme the last build loaded, with what it was loaded from
    # (:meth:`theme`: its files' names, sizes, times and inodes, the language, the compiled folder)
    theme_kept: tuple[object, Theme] | None = field(default=None, repr=False)

    # -- life cycle --------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | None) -> BuildCache:
        """The cache at ``path`` (a fresh one if missing, unreadable or from other code).
        Only the small state is read here; the memos (large) are read on first use, so a
        rebuild with nothing to do never pays for them."""
        source = _source_digest()
        if path is not None and path.is_file():
            try:
                with path.open("rb") as stream:
                    cache = pickle.load(stream)
                if isinstance(cache, cls) and cache.source == source:
                    cache.path = path
                    cache.memos = {}
                    cache.memo_file_loaded = False
                    cache.memo_dirty = False
                    cache.begin()
                    return cache
            except Exception:
                pass
        cache = cls(path=path, source=source)
        cache.memo_file_loaded = path is None  # on disk: the store is opened (or made) on first use
        cache.begin()
        return cache

    @property
    def templates_path(self) -> Path | None:
        """Where the theme's compiled templates are kept (:class:`generator.site.theme.CompiledTemplates`)."""
        return None if self.path is None else self.path.with_name(self.path.stem + ".templates")

    @property
    def memo_path(self) -> Path | None:
        """The memo store's index (the values live in packs beside it, see :class:`MemoStore`)."""
        return None if self.path is None else self.path.with_name(self.path.stem + ".memos.index")

    def _load_memos(self) -> None:
        self.memo_file_loaded = True
        self.memos = {}
        # on disk, each value is written to the store as soon as it is made (none is held here)
        self.store = (MemoStore.open(self.memo_path, self.source) or MemoStore(self.memo_path, self.source)
                      if self.memo_path is not None else None)

    def begin(self) -> None:
        self.used = {}
        self.counts = CacheStats()

    def save(self) -> None:
        """Keep only what this build used, then write the state (and the memos' index, when
        this build touched them) atomically: on disk, the values this build made were
        appended to the store as they were made (see :class:`MemoStore`)."""
        if self.memo_file_loaded:
            for kind, entries in self.memos.items():
                # in C, and in place: after one edit a kind lacks a few of its thousands of keys
                stale = entries.keys() - self.used.get(kind, set())
                for key in stale:
                    del entries[key]
                self.memo_dirty = self.memo_dirty or bool(stale)
        if self.path is None:
            return
        self.save_error = None
        try:
            store = self.store
            if self.memo_file_loaded and store is not None and (
                    self.memo_dirty or store.failed is not None
                    or any(not self.used.get(kind, set()).issuperset(entries) for kind, entries in store.where.items())):
                store.save(self.used)
                self.memo_dirty = False
            write_atomic(self.path, pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError as exc:  # the site is written; without a cache the next build is only slower
            self.save_error = f"could not save the build cache {self.path}: {exc.strerror or exc}"
            self.discard()

    def discard(self) -> None:
        """Take back the memos a failed build appended to the store (see :meth:`MemoStore.discard`)."""
        if self.memo_file_loaded and self.store is not None:
            self.store.discard()

    def record_output(self, written: dict[str, tuple[str, int, int]], changed: Collection[str] | None = None) -> None:
        """What the build just left in the output directory (:attr:`written`, :attr:`listing`).
        ``changed``: the paths whose state differs from the last one recorded (written, added
        or gone), where ``written`` is that state patched in place
        (:func:`~generator.engine.output.written_state`). Resident, the listing's lines are
        then patched too, not made again per file; and the manifest this build wrote is kept."""
        kept, self.listing_kept = self.listing_kept, None
        lines = None
        if kept is not None and changed is not None and kept[0] is written:
            lines = _listing_patched(kept[1], written, changed)
        if lines is None:
            lines = [listing_line(path, size, mtime) for path, (_sha, size, mtime) in written.items()]
        elif _checking_reads():
            full = [listing_line(path, size, mtime) for path, (_sha, size, mtime) in written.items()]
            if listing_digest(full) != listing_digest(lines):
                from generator.engine.reads import StaleOutputs
                raise StaleOutputs("the output tree's listing was patched from the last build's but differs from "
                                   "the one made in full: generator/engine/cache.py:_listing_patched missed a change")
        self.written = written
        self.listing = listing_digest(lines)  # sorted in place: the next patch's start
        if self.resident:
            self.listing_kept = (written, lines)
            self.manifest_kept = self.manifest_made
        self.manifest_made = None

    def keep_graph(self, site: SiteModel) -> None:
        """Keep the note graph ``site`` made (resident: for the next build to patch). One
        patched from the last build's is compared, under the read check, with one made whole."""
        from generator.site.graph_view import layout_digest  # not loaded by a build with nothing to do

        graph = site.__dict__.get("note_graph")  # made by this build, or not asked for
        if graph is not None and site.graph_before is not None and _checking_reads() \
                and (graph != (whole := site.graph_inputs.graph()) or graph.layout not in (None, layout_digest(whole))):
            from generator.engine.reads import StaleOutputs
            raise StaleOutputs("the note graph patched from the last build's differs from the one made whole: "
                               "generator/site/graph_view.py:graph_patched")
        self.graph_kept = (site.graph_inputs, graph) if self.resident and graph is not None else None

    def theme(self, root: Path, language: str, load: Callable[[], Theme]) -> Theme:
        """The theme at ``root`` for ``language``, as ``load()`` loads it: the last build's in
        this process (resident) while none of its files changed (each file's name, size,
        modification time and inode: what the inputs' digest trusts as well), with its
        templates compiled already; loaded otherwise (reading, digesting every file and the
        strings, ~15 ms an edit)."""
        if not self.resident:
            return load()
        files = sorted((path.relative_to(root).as_posix(), info.st_size, info.st_mtime_ns, info.st_ino)
                       for path in root.rglob("*") if path.is_file() and not path.is_symlink()
                       for info in (path.stat(),))
        key = (str(root.resolve()), language, str(self.templates_path), files)
        if self.theme_kept is not None and self.theme_kept[0] == key:
            return self.theme_kept[1]
        theme = load()
        self.theme_kept = (key, theme)
        return theme

    def keep_listed(self, site: SiteModel) -> None:
        """Keep the indices that list notes ``site`` made (resident: for the next build to
        patch). Patched ones are compared, under the read check, with those made whole."""
        from generator.site.model import LISTED, ListedBefore  # not loaded by a build with nothing to do

        made = {name: site.__dict__[name] for name in LISTED if name in site.__dict__}
        if site.listed_before is not None and site.__dict__.get("listed_changes") is not None and _checking_reads():
            whole = replace(site, listed_before=None)
            for name, value in made.items():
                if value != getattr(whole, name) or not _same_notes(value, getattr(whole, name)):
                    from generator.engine.reads import StaleOutputs
                    raise StaleOutputs(f"the model's {name} patched from the last build's differs from the one made "
                                       "whole: generator/site/model.py:SiteModel.listed_changes")
        publication = site.publication
        self.listed_kept = ListedBefore(publication.notes, publication.notebooks, made, site.selections) \
            if self.resident else None

    def take_manifest(self, previous: Mapping[str, tuple[str, int, int]]) -> KeptManifest | None:
        """The manifest the last build recorded wrote, when this build's files are staged
        over that build's tree (``previous`` is :attr:`written`): for this build to patch
        (taken: a build that fails after patching it leaves none, and the next makes it whole)."""
        kept, self.manifest_kept = self.manifest_kept, None
        return kept if kept is not None and previous is self.__dict__.get("written") else None

    def __getattr__(self, name: str) -> Any:
        if name in _PACKED and f"_{name}_packed" in self.__dict__:
            value = pickle.loads(self.__dict__.pop(f"_{name}_packed"))
            setattr(self, name, value)
            return value
        raise AttributeError(name)

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name in _PACKED:
            if isinstance(state.get(name), bytes):
                state[f"_{name}_packed"] = state.pop(name)
        self.__dict__.update(state)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in _PACKED:
            packed = state.pop(f"_{name}_packed", None)
            state[name] = packed if name not in self.__dict__ else pickle.dumps(self.__dict__[name],
                                                                                 protocol=pickle.HIGHEST_PROTOCOL)
        state["path"] = None
        state["memos"] = {}
        state["store"] = None
        state["used"] = {}
        state["counts"] = CacheStats()
        state["resident"] = False  # a property of the process that holds it
        state["lines"], state["walked"] = {}, ()  # a patch starts from a digest made in this process
        state["content"] = ContentKept()  # and from content read in this process
        state["manifest_kept"] = state["manifest_made"] = state["listing_kept"] = None  # outputs made in this process
        state["graph_kept"] = state["evidence_kept"] = state["assembly_kept"] = state["listed_kept"] = None
        state["theme_kept"] = None
        return state

    # -- memos -------------------------------------------------------------------------------

    def memo(self, kind: Kind, key: Callable[[], str], compute: Callable[[], T]) -> T:
        """The value of ``compute()`` remembered under ``key()`` (see :class:`generator.engine.memo.Memo`)."""
        if not self.memo_file_loaded:
            self._load_memos()
        entries = self.memos.setdefault(kind, {})
        digest = key()
        self.used.setdefault(kind, set()).add(digest)
        value: Any = entries.get(digest, MISSING)
        if value is MISSING and self.store is not None:
            value = self.store.get(kind, digest)  # read from disk when asked, kept here only when resident
            if value is not MISSING and self._resident(kind):
                entries[digest] = value
        hit = value is not MISSING
        self.counts.count(kind, hit)
        if not hit:
            value = compute()
            self.memo_dirty = True
            # written to the store in serve too: a value this build stops using is dropped from memory
            # at its end, and the store is where an edit undone finds it again
            if self.store is None or not self.store.put(kind, digest, value) or self._resident(kind):
                entries[digest] = value  # in memory (serve), or in a worker, or after the disk refused
        result: T = value
        return result

    def _resident(self, kind: Kind) -> bool:
        return self.resident and kind not in NOT_RESIDENT

    def holds(self, kind: Kind, key: Callable[[], str]) -> bool:
        if not self.memo_file_loaded:
            self._load_memos()
        digest = key()
        return digest in self.memos.get(kind, {}) or (self.store is not None and self.store.has(kind, digest))

    def keep(self, kind: Kind, key: Callable[[], str]) -> bool:
        digest = key()
        if not self.holds(kind, lambda: digest):
            return False
        self.used.setdefault(kind, set()).add(digest)  # counted as reused only if it is read
        return True

    def keep_all(self, kind: Kind, digests: Iterable[str]) -> None:
        if not self.memo_file_loaded:
            self._load_memos()
        held, store = self.memos.get(kind, {}), self.store
        self.used.setdefault(kind, set()).update(
            digest for digest in digests if digest in held or (store is not None and store.has(kind, digest)))

    # -- inputs ------------------------------------------------------------------------------

    def inputs_digest(self, folders: list[Path], options: BuildOptions,
                      changed: Collection[Path] | None = None) -> str:
        """sha256 of the options and of every file under ``folders`` (path and content);
        a file is read again only when its size, mtime or inode changed. With ``changed``
        (``carnet serve``: the paths its watcher saw change since the last digest, made
        in this process over the same folders), the last digest's files are taken as
        they were but those, which are looked at again (a folder: all it holds), and
        the folders are not walked."""
        roots = tuple(os.path.abspath(folder) for folder in folders)
        taken = time.time_ns()
        patched = changed is not None and self.walked == roots
        lines: dict[str, str] = dict(self.lines) if patched else {}
        stats: dict[str, tuple[int, int, int, str]] = dict(self.stats) if patched else {}

        def walk(directory: str) -> None:
            try:
                with os.scandir(directory) as scan:
                    entries = list(scan)
            except OSError as exc:  # missing or unreadable: digested as such, and the loader says what is wrong
                lines[directory] = f"unreadable:{exc.errno}"
                return
            for entry in entries:
                try:
                    if entry.is_symlink():
                        lines[entry.path] = f"link:{os.readlink(entry.path)}"
                    elif entry.is_dir():
                        walk(entry.path)
                    elif entry.is_file():
                        file(entry.path, entry.stat())
                except OSError as exc:  # gone or unreadable since it was listed: the same
                    lines[entry.path] = f"unreadable:{exc.errno}"

        def file(path: str, info: os.stat_result) -> None:
            # a path the watcher names is read again, whatever its stats (two writes within one tick)
            sha = self.known(path, info) if not patched else None
            if sha is None:
                with open(path, "rb") as stream:
                    sha = hashlib.sha256(stream.read()).hexdigest()
            stats[path] = (info.st_size, info.st_mtime_ns, info.st_ino, sha)
            lines[path] = sha

        if not patched:
            for root in roots:
                walk(root)
        else:
            for path in sorted({_under(roots, os.path.abspath(p)) or "" for p in changed or ()} - {""}):
                if path in stats:  # a file digested last time: nothing under it
                    del lines[path], stats[path]
                else:  # a folder (or a path new, or not a file): it and all it held
                    inside = path + os.sep
                    for gone in [known for known in lines if known == path or known.startswith(inside)]:
                        del lines[gone]
                        stats.pop(gone, None)
                try:
                    info = os.lstat(path)
                    if stat_module.S_ISLNK(info.st_mode):
                        lines[path] = f"link:{os.readlink(path)}"
                    elif stat_module.S_ISDIR(info.st_mode):
                        walk(path)
                    elif stat_module.S_ISREG(info.st_mode):
                        file(path, info)
                except FileNotFoundError:
                    continue  # removed: out of the digest
                except OSError as exc:
                    lines[path] = f"unreadable:{exc.errno}"
        digest = hashlib.sha256(repr(options).encode("utf-8"))
        for path in sorted(lines):
            digest.update(f"{path}|{lines[path]}\n".encode())
        self.stats, self.stats_taken, self.lines, self.walked = stats, taken, lines, roots
        return digest.hexdigest()

    def known(self, path: str, info: os.stat_result) -> str | None:
        """The sha256 :attr:`stats` hold for the file at ``path`` (absolute) if its size, mtime
        and inode are still those of ``info``, and it was not modified just before they were
        taken (it could have been written again within the same mtime: git's racily clean
        files). See :data:`generator.corpus.load.KnownFiles`."""
        seen = self.stats.get(path)
        if seen is None or seen[:3] != (info.st_size, info.st_mtime_ns, info.st_ino):
            return None
        return seen[3] if seen[1] < self.stats_taken - RACY_NS else None

    def output_intact(self, out_dir: Path) -> bool:
        """The output directory holds exactly what the last build left there: the same
        files, each with the size and modification time it was written with."""
        if not self.listing or not out_dir.is_dir():
            return False
        found: list[str] = []

        def walk(directory: str, prefix: str) -> None:  # as the staging tree's linking lists it too
            with os.scandir(directory) as scan:
                for entry in scan:
                    if entry.is_dir(follow_symlinks=False):
                        if prefix or entry.name not in UNLISTED:
                            walk(entry.path, prefix + entry.name + "/")
                    else:  # an older version's marker too: a full build then writes a tree without it
                        info = entry.stat(follow_symlinks=False)
                        found.append(listing_line(prefix + entry.name, info.st_size, info.st_mtime_ns))

        walk(str(out_dir), "")
        return self.listed_as_left(listing_digest(found))

    def listed_as_left(self, listing: str | None) -> bool:
        """``listing`` (:func:`~generator.files.listing_digest` of the output directory's
        files) is the one the last build left: nothing missing, nothing added, nothing
        rewritten since (else a full build puts it right)."""
        return bool(self.listing) and listing == self.listing


RACY_NS: Final = 2_000_000_000
"""A file modified less than this before its stats were taken is read again, not trusted by
them: two writes within one tick of a coarse clock (or FAT's 2 s) leave the same mtime."""

NOT_RESIDENT: Final = frozenset({Kind.ANCHORS, Kind.BODIES})
"""Kinds a resident cache leaves on disk: a note's parsed body and its body's HTML, large,
read back only for the notes an edit redoes."""

MISSING: Any = object()  # what MemoStore.get says of a key it does not hold
_OPEN_STORES: weakref.WeakSet[MemoStore] = weakref.WeakSet()


def _flush_open_stores() -> None:
    for store in list(_OPEN_STORES):
        store.flush()


os.register_at_fork(before=_flush_open_stores)


class MemoStore:
    """The memos on disk: an index (kind → key → where its value lies) and a pack file of
    pickled values, each read only when a build asks for it.

    A value is written to the end of the pack as soon as it is made (:meth:`put`), so a
    build never holds the cache in memory; a save writes the index atomically, naming
    the entries the build used. A rebuild after one edit thus writes what that edit
    changed, not the whole cache. Entries the build did not use leave the index (their
    bytes stay in the pack, counted as waste); once the waste outweighs what is live, the
    live entries are copied into a new pack. A killed build leaves at most unindexed
    bytes at the pack's end.
    """

    def __init__(self, index_path: Path, source: str, pack: str = "", where: dict[str, dict[str, tuple[int, int]]]
                 | None = None, waste: int = 0) -> None:
        self.index_path = index_path
        self.source = source
        self.pack = pack  # file name of the pack, beside the index ("" before the first value)
        self.where = where or {}
        self.waste = waste
        self.failed: str | None = None  # why a value could not be written: the index is then left as it was
        self._writer: BinaryIO | None = None
        # values are read with pread, not a map: a mapped pack would count in the build's memory as it is read
        self._reader: BinaryIO | None = None
        self._owner = os.getpid()  # a forked worker reads the store but never writes to it
        self._flushed = 0  # the pack's bytes on disk from this process's writes (older ones are all there)
        self._start = 0  # the pack's size before this build appended to it (:meth:`discard`)
        self._rewritten = False  # a new pack was written: the others go once the index names it
        _OPEN_STORES.add(self)

    def flush(self) -> None:
        """Put what is buffered into the pack file (before a fork: a worker must inherit an
        empty buffer, which it could otherwise write into the pack a second time). A
        worker never flushes: the buffer is the parent's."""
        if self._writer is not None and os.getpid() == self._owner:
            self._writer.flush()
            self._flushed = self._writer.tell()

    @classmethod
    def open(cls, index_path: Path, source: str) -> MemoStore | None:
        """The store at ``index_path``, or ``None`` (missing, damaged, or from other code)."""
        try:
            with index_path.open("rb") as stream:
                stored_source, pack, where, waste = pickle.load(stream)
            store = cls(index_path, source, pack, where, waste)
            if stored_source != source or not isinstance(where, dict) or not store.pack_path.is_file():
                return None
            size = store.pack_path.stat().st_size
            if any(offset + length > size for entries in where.values() for offset, length in entries.values()):
                return None  # a pack cut short: nothing of it is trusted
            store._flushed = store._start = size
            return store
        except Exception:
            return None

    @property
    def pack_path(self) -> Path:
        return self.index_path.with_name(self.pack)

    def has(self, kind: Kind, key: str) -> bool:
        return key in self.where.get(kind, {})

    def get(self, kind: Kind, key: str) -> Any:
        place = self.where.get(kind, {}).get(key)
        if place is None:
            return MISSING
        offset, length = place
        try:
            if offset + length > self._flushed:  # a value this build wrote, still in the buffer
                self.flush()
            if self._reader is None:
                self._reader = self.pack_path.open("rb")
            return pickle.loads(os.pread(self._reader.fileno(), length, offset))
        except Exception:  # a damaged entry is only a miss: its step runs again
            return MISSING

    def put(self, kind: Kind, key: str, value: Any) -> bool:
        """Write ``value`` at the end of the pack; ``False`` when this process may not
        (a worker: the parent writes what it returns) or the disk refused (see ``failed``)."""
        if self.failed is not None or os.getpid() != self._owner:
            return False
        try:
            writer = self._open_writer()
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            offset = writer.tell()
            writer.write(data)
        except OSError as exc:
            self.failed = f"{exc.strerror or exc}"
            return False
        self.where.setdefault(kind, {})[key] = (offset, len(data))
        return True

    def _open_writer(self) -> BinaryIO:
        if self._writer is None:
            if not self.pack:  # the first value: a new pack
                self.index_path.parent.mkdir(parents=True, exist_ok=True)
                self.pack = self._new_pack_name()
                self._rewritten = True
            self._writer = self.pack_path.open("ab")
            self._writer.seek(0, os.SEEK_END)
        return self._writer

    def _new_pack_name(self) -> str:
        """A pack name no index can name: past every pack in the folder (a damaged store's
        index must never point into new bytes)."""
        numbers = [int(number) for pack in self.index_path.parent.glob(glob.escape(self.index_path.stem) + ".*.pack")
                   if (number := pack.name[len(self.index_path.stem) + 1:-len(".pack")]).isdigit()]
        return f"{self.index_path.stem}.{max(numbers, default=0) + 1}.pack"

    def save(self, used: dict[str, set[str]]) -> None:
        """Make the index name exactly the entries ``used`` by this build (written by
        :meth:`put` or there before), once the pack holds them on disk."""
        if self.failed is not None:
            raise OSError(self.failed)
        live = {kind: {key: place for key, place in entries.items() if key in used.get(kind, ())}
                for kind, entries in self.where.items()}
        self.waste += sum(length for kind, entries in self.where.items() for key, (_o, length) in entries.items()
                          if key not in live[kind])
        self.where = live
        writer = self._open_writer()
        writer.flush()
        os.fsync(writer.fileno())  # the index that points here is written after
        self.close()
        kept = sum(length for entries in live.values() for _o, length in entries.values())
        if self.waste > kept:  # more dead bytes than live ones: the live ones move to a new pack
            self._compact()
        write_atomic(self.index_path, pickle.dumps((self.source, self.pack, self.where, self.waste),
                                                   protocol=pickle.HIGHEST_PROTOCOL))
        if self._rewritten:  # packs no index names any more (the last one, or one of other code)
            self._rewritten = False
            for pack in self.index_path.parent.glob(glob.escape(self.index_path.stem) + ".*.pack"):
                if pack.name != self.pack:
                    pack.unlink(missing_ok=True)
        legacy = self.index_path.with_name(self.index_path.stem + ".pickle")  # the single file of older versions
        legacy.unlink(missing_ok=True)
        self._flushed = self._start = self.pack_path.stat().st_size

    def discard(self) -> None:
        """Take back what this build appended to the pack (a failed build: on a full disk,
        those bytes would keep it full); the entries pointing into them are forgotten."""
        self.close()
        if not self.pack:
            return
        try:
            if self._start == 0:
                self.pack_path.unlink(missing_ok=True)
                self.pack = ""
            else:
                os.truncate(self.pack_path, self._start)
        except OSError:  # the disk refuses even this: the bytes stay unindexed, as after a kill
            return
        self.where = {kind: {key: (offset, length) for key, (offset, length) in entries.items()
                             if offset + length <= self._start} for kind, entries in self.where.items()}
        self._flushed = self._start
        self.failed = None

    def _compact(self) -> None:
        """A new pack holding only the live entries, copied one by one; the old one goes
        once the index no longer names it."""
        old = self.pack_path
        self.pack = self._new_pack_name()
        temporary = self.pack_path.with_name(f".{self.pack}.tmp-{os.getpid()}")
        where: dict[str, dict[str, tuple[int, int]]] = {kind: {} for kind in self.where}
        try:
            with old.open("rb") as source, temporary.open("wb") as target:
                offset = 0
                for kind, entries in self.where.items():
                    for key, (start, length) in entries.items():
                        target.write(os.pread(source.fileno(), length, start))
                        where[kind][key] = (offset, length)
                        offset += length
                target.flush()
                os.fsync(target.fileno())
            os.replace(temporary, self.pack_path)
        finally:
            temporary.unlink(missing_ok=True)
        self.where, self.waste = where, 0
        self._rewritten = True

    def close(self) -> None:
        for handle in (self._writer, self._reader):
            if handle is not None:
                handle.close()
        self._writer = self._reader = None


def _under(roots: tuple[str, ...], path: str) -> str | None:
    """``path`` as it is under one of ``roots`` (absolute), should it be under one itself or
    under its real path (a watcher names what it watches by real paths); else ``None``."""
    for root in roots:
        for seen in (root, os.path.realpath(root)):
            if path == seen or path.startswith(seen + os.sep):
                return root + path[len(seen):]
    return None


def _listing_patched(lines: list[str], written: Mapping[str, tuple[str, int, int]],
                     changed: Collection[str]) -> list[str] | None:
    """The listing's lines of ``written`` (:func:`~generator.files.listing_line` of each file,
    sorted), patched in place from the last state's (``lines``): the lines of the ``changed``
    paths alone made again, added or dropped. ``None`` where ``changed`` missed a file (the
    lines are then made again)."""
    for path in changed:
        # a path holds no NUL: its line sorts as the path and a NUL, before every longer path
        at = bisect_left(lines, path + "\x00")
        there = at < len(lines) and lines[at].startswith(path + "\x00")
        if path in written:
            _sha, size, mtime = written[path]
            if there:
                lines[at] = listing_line(path, size, mtime)
            else:
                lines.insert(at, listing_line(path, size, mtime))
        elif there:
            del lines[at]
    return lines if len(lines) == len(written) else None


def _same_notes(value: object, whole: object) -> bool:
    """Whether an index lists the very notes (objects) the one made whole lists: this build's,
    never an equal one of the last build's."""
    if isinstance(value, dict) and isinstance(whole, dict):
        return value.keys() == whole.keys() and all(_same_notes(value[key], whole[key]) for key in value)
    if isinstance(value, list | tuple) and isinstance(whole, list | tuple):
        return [id(item) for item in value] == [id(item) for item in whole]
    return True


def _checking_reads() -> bool:
    # imported here: the site's modules are not loaded by a build that has nothing to do
    from generator.engine import reads
    return reads.checking()


def build_options(strict: bool, base_url: str | None, search: bool, theme_root: Path,
                  emitters: list[str] | None = None) -> BuildOptions:
    """What, besides the files, decides a build's output (``emitters``: ``None`` for the
    standard set, whose code the source digest already covers)."""
    return (strict, base_url, search, str(theme_root.resolve()), emitters)


def unchanged_build(cache: BuildCache, content_dir: Path, out_dir: Path, theme_root: Path,
                    options: BuildOptions, changed: Collection[Path] | None = None) -> BuildResult | None:
    """The last build's result if nothing it depends on changed and the output directory
    is as it left it; else ``None`` (and the inputs' digest waits in ``cache.pending``).
    Asked twice for the same build (the CLI asks before importing the pipeline, then
    ``build`` asks), the inputs are walked once; with ``changed`` (the paths a watcher saw
    change since the last build in this process), not walked (:meth:`BuildCache.inputs_digest`)."""
    question = (str(content_dir), str(out_dir), options)
    if cache.asked == question:
        return None  # already answered "changed" for this very build
    cache.begin()
    # digested before anything is read: an edit made during the build changes it again
    cache.pending = cache.inputs_digest([content_dir, theme_root], options, changed)
    search = options[2]
    if (cache.pending == cache.inputs and cache.result is not None and cache.output_intact(out_dir)
            and (not search or (out_dir / "pagefind").is_dir())):
        return dataclasses.replace(cache.result, changed=0)
    cache.asked = question
    return None


def default_cache_path(out_dir: Path) -> Path:
    """``.carnet-cache/<output name>.pickle`` beside the output directory."""
    out = out_dir.absolute()
    return out.parent / CACHE_DIR / f"{out.name}.pickle"
