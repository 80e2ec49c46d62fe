"""The build cache: content-hash memos of a build's expensive pure steps, so a rebuild
redoes only what its inputs changed — and gives the very bytes a full build gives.

Every entry is keyed by a sha256 of *everything* its step reads, never by a file name
or a date, so a stale entry can only be missed, never wrongly reused:

- **inputs**: every content and theme file (read again only when its size, mtime or
  inode moved), the build options and the generator's own source. Equal to the last
  build's, with the output directory as that build left it → nothing to do.
- **anchors**: a note's body and extractions → its parsed body and anchors (in memory
  only: reading them back from disk is slower than anchoring again).
- **selections**: a wiki's perimeter extractions and settings → its grouping and map.
- **pages**: the template, its whole context (closures by their code and captured
  values) and the theme's fingerprint → the rendered bytes.
- **siblings**: a page's bytes and citations → its ``.txt``/``.json`` siblings.

A :class:`BuildCache` is the :class:`generator.memo.Memo` an incremental build passes to
its steps (a full build passes :data:`generator.memo.NO_MEMO`). In memory for ``carnet
serve``; on disk for ``carnet build`` as one pickle under
``.carnet-cache/``, written atomically. Deleting it is always safe: the next build is a
full one. Entries not used by a build are dropped, so it never grows past one site.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from generator import __version__
from generator.files import write_atomic
from generator.result import BuildResult

T = TypeVar("T")
BuildOptions = tuple[bool, str | None, bool, str, list[str] | None]
"""strict, base URL, search, theme folder, emitters: what decides a build besides its files."""

CACHE_DIR = ".carnet-cache"
IN_MEMORY_ONLY = frozenset({"anchors"})
"""Memos kept by a live process (``serve``) but never written to disk: unpickling a
site's parsed token trees (80 MB at 5,000 notes) takes longer than anchoring again."""
_FORMAT = 1


def _source_digest() -> str:
    """The generator's own code: an edited generator never reuses what an older one made."""
    digest = hashlib.sha256(f"{__version__}|{sys.version}|{_FORMAT}".encode())
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@dataclass
class CacheStats:
    """What the last build reused and redid, for the build summary."""

    reused: dict[str, int] = field(default_factory=dict)
    redone: dict[str, int] = field(default_factory=dict)

    def count(self, kind: str, hit: bool) -> None:
        bucket = self.reused if hit else self.redone
        bucket[kind] = bucket.get(kind, 0) + 1


@dataclass
class BuildCache:
    """Attributes:
        path: the pickle on disk, or ``None`` for a cache that lives in memory only.
        source: digest of the generator's code the entries were made with.
        stats: file path → (size, mtime_ns, inode, sha256), to avoid rehashing unchanged files.
        inputs: digest of every input of the last complete build.
        result: that build's result (reports and problems, for a no-op rebuild's summary).
        written: site path → (sha256, size, mtime_ns) of what the last build left in the
            output directory.
        memos: kind → key → value (anchors, selections, pages, siblings).
        save_error: why the last :meth:`save` could not write (read-only or full disk), or ``None``.
    """

    path: Path | None = None
    source: str = ""
    memo_file_loaded: bool = field(default=True, repr=False)
    memo_dirty: bool = field(default=False, repr=False)
    stats: dict[str, tuple[int, int, int, str]] = field(default_factory=dict)
    inputs: str = ""
    pending: str = ""
    asked: tuple[str, str, BuildOptions] | None = field(default=None, repr=False)  # the build whose inputs were just digested
    result: BuildResult | None = None
    written: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    memos: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: dict[str, set[str]] = field(default_factory=dict, repr=False)
    counts: CacheStats = field(default_factory=CacheStats, repr=False)
    save_error: str | None = field(default=None, repr=False)  # why the last save failed

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
        cache.begin()
        return cache

    @property
    def memo_path(self) -> Path | None:
        return None if self.path is None else self.path.with_name(self.path.stem + ".memos.pickle")

    def _load_memos(self) -> None:
        self.memo_file_loaded = True
        memo_path = self.memo_path
        if memo_path is None or not memo_path.is_file():
            return
        try:
            with memo_path.open("rb") as stream:
                source, memos = pickle.load(stream)
            if source == self.source and isinstance(memos, dict):
                self.memos = memos
        except Exception:
            self.memos = {}

    def begin(self) -> None:
        self.used = {}
        self.counts = CacheStats()

    def save(self) -> None:
        """Keep only what this build used, then write the state (and the memos, when this
        build touched them) atomically."""
        if self.memo_file_loaded:
            kept = {kind: {key: value for key, value in entries.items() if key in self.used.get(kind, ())}
                    for kind, entries in self.memos.items()}
            if any(len(kept[kind]) != len(self.memos[kind]) for kind in kept):
                self.memo_dirty = True
            self.memos = kept
        if self.path is None:
            return
        self.save_error = None
        try:
            if self.memo_dirty and self.memo_path is not None:
                stored = {kind: entries for kind, entries in self.memos.items() if kind not in IN_MEMORY_ONLY}
                write_atomic(self.memo_path, pickle.dumps((self.source, stored), protocol=pickle.HIGHEST_PROTOCOL))
                self.memo_dirty = False
            write_atomic(self.path, pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError as exc:  # the site is written; without a cache the next build is only slower
            self.save_error = f"could not save the build cache {self.path}: {exc.strerror or exc}"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["path"] = None
        state["memos"] = {}
        state["used"] = {}
        state["counts"] = CacheStats()
        return state

    # -- memos -------------------------------------------------------------------------------

    def memo(self, kind: str, key: Callable[[], str], compute: Callable[[], T]) -> T:
        """The value of ``compute()`` remembered under ``key()`` (see :class:`generator.memo.Memo`)."""
        if not self.memo_file_loaded:
            self._load_memos()
        entries = self.memos.setdefault(kind, {})
        digest = key()
        self.used.setdefault(kind, set()).add(digest)
        hit = digest in entries
        self.counts.count(kind, hit)
        if not hit:
            entries[digest] = compute()
            self.memo_dirty = True
        value: T = entries[digest]
        return value

    # -- inputs ------------------------------------------------------------------------------

    def inputs_digest(self, folders: list[Path], options: BuildOptions) -> str:
        """sha256 of the options and of every file under ``folders`` (path and content);
        a file is read again only when its size, mtime or inode changed."""
        digest = hashlib.sha256(repr(options).encode("utf-8"))
        stats: dict[str, tuple[int, int, int, str]] = {}

        def walk(directory: str) -> None:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
            for entry in entries:
                if entry.is_symlink():
                    digest.update(f"{entry.path}|link:{os.readlink(entry.path)}\n".encode())
                elif entry.is_dir():
                    walk(entry.path)
                elif entry.is_file():
                    info = entry.stat()
                    known = self.stats.get(entry.path)
                    if known and known[:3] == (info.st_size, info.st_mtime_ns, info.st_ino):
                        sha = known[3]
                    else:
                        with open(entry.path, "rb") as stream:
                            sha = hashlib.sha256(stream.read()).hexdigest()
                    stats[entry.path] = (info.st_size, info.st_mtime_ns, info.st_ino, sha)
                    digest.update(f"{entry.path}|{sha}\n".encode())

        for folder in folders:
            walk(os.path.abspath(folder))
        self.stats = stats
        return digest.hexdigest()

    def output_intact(self, out_dir: Path) -> bool:
        """The output directory holds exactly what the last build left there: the same
        files, each with the size and modification time it was written with."""
        if not self.written or not out_dir.is_dir():
            return False
        found: dict[str, tuple[int, int]] = {}

        def walk(directory: str, prefix: str) -> None:
            with os.scandir(directory) as scan:
                for entry in scan:
                    name = prefix + entry.name
                    if entry.is_dir(follow_symlinks=False):
                        if name not in ("pagefind", ".pagefind-next"):  # the search bundle is rebuilt apart
                            walk(entry.path, name + "/")
                    else:  # an older version's marker too: a full build then writes a tree without it
                        info = entry.stat(follow_symlinks=False)
                        found[name] = (info.st_size, info.st_mtime_ns)

        walk(str(out_dir), "")
        # nothing missing, nothing added, nothing rewritten since: else a full build puts it right
        return found == {path: (size, mtime) for path, (_sha, size, mtime) in self.written.items()}


def build_options(strict: bool, base_url: str | None, search: bool, theme_root: Path,
                  emitters: list[str] | None = None) -> BuildOptions:
    """What, besides the files, decides a build's output (``emitters``: ``None`` for the
    standard set, whose code the source digest already covers)."""
    return (strict, base_url, search, str(theme_root.resolve()), emitters)


def unchanged_build(cache: BuildCache, content_dir: Path, out_dir: Path, theme_root: Path,
                    options: BuildOptions) -> BuildResult | None:
    """The last build's result if nothing it depends on changed and the output directory
    is as it left it; else ``None`` (and the inputs' digest waits in ``cache.pending``).
    Asked twice for the same build (the CLI asks before importing the pipeline, then
    ``build`` asks), the inputs are walked once."""
    question = (str(content_dir), str(out_dir), options)
    if cache.asked == question:
        return None  # already answered "changed" for this very build
    cache.begin()
    # digested before anything is read: an edit made during the build changes it again
    cache.pending = cache.inputs_digest([content_dir, theme_root], options)
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
