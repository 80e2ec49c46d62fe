"""Writing the site: a complete new tree, swapped in at the end.

A build never writes into a directory it did not create, so ``--out .`` cannot wipe a
user's files; and a failed or interrupted build leaves the previous site as it was.

The output directory is published as it is, so what tells a later build that the
directory is Carnet's lives beside it, never in it: a record (``.carnet-build.<name>``)
of the identity (device, inode) of the tree Carnet put there. A user's directory put in
its place under the same name has another inode and is refused. Trees being written
hold a marker file until just before they go live, so those a killed build left behind
are still known as Carnet's; the record covers the moment after (see ``_go_live``).
Directories written by older versions, with that marker in the output itself, are still
accepted, and the next build replaces them with a tree without it.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import gc
import glob
import hashlib
import itertools
import json
import os
import posixpath
import shutil
import signal
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any, Final, cast

from generator.files import UNLISTED, listing_digest, listing_line
from generator.problems import OutputDirectoryError

MARKER = ".carnet-build"  # inside trees being written (and the output of older versions)
MARKER_TEXT = b"This directory is being written by 'carnet build'.\n"
RECORD_PREFIX = ".carnet-build."
RECORD_ABOUT = ("Written by 'carnet build': the directory beside this file that it built (device, inode), "
                "so that the next build may replace it. Deleting this file makes the next build refuse that "
                "directory until you remove it yourself.")

Identity = tuple[int, int]  # (st_dev, st_ino) of a directory

_RENAME_EXCHANGE = 2


def check_output_dir(out_dir: Path, content_dir: Path) -> None:
    """Refuse an output directory that holds anything Carnet did not write, or that
    overlaps the content."""
    try:
        _check_output_dir(out_dir, content_dir)
    except OSError as exc:
        raise OutputDirectoryError(f"cannot use the output directory {out_dir}: {exc.strerror or exc}; "
                                   "choose another --out") from None


def _check_output_dir(out_dir: Path, content_dir: Path) -> None:
    out, content = out_dir.resolve(), content_dir.resolve()
    if out == content or out in content.parents or content in out.parents:
        raise OutputDirectoryError(
            f"the output directory {out_dir} overlaps the content directory {content_dir}; "
            "choose a separate one (default: build/)")
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise OutputDirectoryError(f"{out_dir} exists and is not a directory; choose another --out")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not is_carnet_tree(out_dir):
        record = record_path(out_dir)
        why = (f"{record.name} beside it records another directory under that name" if record.is_file()
               else f"no {record.name} beside it records it")
        raise OutputDirectoryError(
            f"{out_dir} already exists and was not created by carnet ({why}); refusing to replace it. "
            "Choose another --out, or empty or remove that directory yourself.")


def record_path(out_dir: Path) -> Path:
    """Where the build state of ``out_dir`` is kept: a file beside it, so it is never published."""
    out = out_dir.absolute()
    return out.parent / f"{RECORD_PREFIX}{out.name}"


def is_carnet_tree(out_dir: Path) -> bool:
    """``out_dir`` is the tree Carnet last put there (or one written by an older version)."""
    if not out_dir.is_dir() or out_dir.is_symlink():
        return False
    return _identity(out_dir) in _recorded(out_dir) or (out_dir / MARKER).is_file()


def _identity(path: Path) -> Identity:
    info = os.lstat(path)
    return info.st_dev, info.st_ino


def _recorded(out_dir: Path) -> set[Identity]:
    """The trees the record beside ``out_dir`` names; none when it is missing or damaged."""
    try:
        data = json.loads(record_path(out_dir).read_bytes())
    except FileNotFoundError:
        return set()
    except ValueError:  # not JSON, not UTF-8: recognises nothing
        return set()
    trees = data.get("trees") if isinstance(data, dict) else None
    if not isinstance(trees, list):
        return set()
    return {(tree[0], tree[1]) for tree in trees
            if isinstance(tree, list) and len(tree) == 2 and all(type(n) is int for n in tree)}


def _record(out_dir: Path, trees: Iterable[Identity]) -> None:
    """Replace the record beside ``out_dir`` (atomically: a killed build leaves the old one or the new)."""
    record = record_path(out_dir)
    data = json.dumps({"about": RECORD_ABOUT, "trees": sorted(trees)}, indent=1) + "\n"
    temporary = record.with_name(f"{record.name}.tmp-{os.getpid()}")
    try:
        with open(temporary, "w", encoding="utf-8") as stream:
            stream.write(data)
        os.replace(temporary, record)
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)


def _safe_relative(path: str) -> bool:
    normal = posixpath.normpath(path)
    return bool(path) and not path.startswith("/") and normal == path and not normal.startswith("..")


@dataclass(frozen=True)
class Staged:
    """A file a worker process wrote into the staging tree itself (:meth:`SiteFiles.stage`),
    for the build to take (:meth:`SiteFiles.settle`): what comes back from the worker
    instead of the file's bytes.

    Attributes:
        digest: the file's sha256.
        size: its size in bytes.
        temporary: where it was written when not at its path (the tree's own name for
            it, moved there when taken); ``None`` when at its path already, or when it is
            the last build's file, which stays the link to it (nothing written).
    """

    digest: str
    size: int
    temporary: str | None


class SiteFiles(Mapping[str, bytes]):
    """The site's files by path, each with its sha256 and size, as the build makes them.

    Held in memory, or (from :func:`staged_site`) written into the staging tree as each
    one comes and read back from there when asked: the build keeps digests, not bytes,
    so its memory does not grow with the site. Staged over a live tree, a file whose
    digest is the one the last build wrote stays the hard link to the live file (its
    inode and modification time kept); only the others are written (``changed``).

    Attributes:
        tree: the staging tree the files are written into (``None``: held in memory).
        previous: path → (sha256, size, mtime) of what the last build left in the live
            tree, for an incremental build (empty for a new tree).
        digests: path → sha256 of every file added.
        sizes: path → size in bytes of every file added.
        changed: the paths written into the tree (new, or with another digest).
        gzipped: sha256 → gzipped size of a file, where it was measured as it was made
            (the build's summary weighs the heavy pages: not compressed a second time).
    """

    def __init__(self, tree: Path | None = None, previous: Mapping[str, tuple[str, int, int]] | None = None) -> None:
        self.tree = tree
        self.previous: Mapping[str, tuple[str, int, int]] = previous or {}
        self.digests: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        self.changed: set[str] = set()
        self.gzipped: dict[str, int] = {}
        self._held: dict[str, bytes] = {}
        self._folders: set[str] = set()
        self._order: list[str] | None = None
        self._pending: set[str] = set()  # paths a child process is making (:meth:`start_streams`)
        self._temporaries = itertools.count()

    def add(self, path: str, data: bytes | Iterable[bytes], digest: str | None = None) -> None:
        """Add the file at ``path`` (a site-relative POSIX path, not there yet): its bytes, or
        its chunks (written as they come, never joined: a large site's graph). ``digest``: the
        sha256 of the bytes, when the caller made it already (llms-full.txt weighs megabytes)."""
        self._check_new(path)
        self._order = None
        if not isinstance(data, bytes):
            if self.tree is not None:
                self._add_chunks(path, data)
                return
            data = b"".join(data)
        if digest is None:
            digest = hashlib.sha256(data).hexdigest()
        self.digests[path], self.sizes[path] = digest, len(data)
        if self.tree is None:
            self._held[path] = data
        elif path not in self.previous or self.previous[path][0] != digest:
            self.changed.add(path)
            self._write(path, data)

    def stage(self, path: str, data: bytes) -> Staged:
        """``data`` written into the staging tree by a worker process making pages, for this
        build's own process to :meth:`settle`: the bytes and their hashing stay in the
        worker (not pickled back, hashed and written by the process that takes them,
        which would be a third process on two cores). Into a new tree, the file is written
        at its path; over the last build's tree, where it differs from the file left
        there, beside it (the build moves it there). A path the build would refuse, or
        one taken already, is left to :meth:`settle` to refuse."""
        assert self.tree is not None
        digest = hashlib.sha256(data).hexdigest()
        if self.previous:
            if path in self.previous and self.previous[path][0] == digest:
                return Staged(digest, len(data), None)
        elif _safe_relative(path) and path != MARKER:
            try:
                self._write(path, data)
                return Staged(digest, len(data), None)
            except (FileExistsError, NotADirectoryError):  # another file's path: for settle to refuse
                pass
        temporary = os.path.join(self.tree, f".carnet-chunks-{os.getpid()}-{next(self._temporaries)}")
        _write_file(temporary, data)
        return Staged(digest, len(data), temporary)

    def settle(self, path: str, staged: Staged) -> None:
        """Add the file a worker process wrote (:meth:`stage`) as :meth:`add` adds one."""
        if staged.temporary is not None:
            try:
                self._check_new(path)
            except BaseException:
                self.discard(staged)
                raise
            self._place(path, staged.temporary, staged.digest, staged.size)
            return
        self._check_new(path)
        self._order = None
        self.digests[path], self.sizes[path] = staged.digest, staged.size
        if not self.previous:  # written at its path; else the last build's, left as it is
            self.changed.add(path)

    def discard(self, staged: Staged) -> None:
        """Remove the temporary of a file a worker process wrote (:meth:`stage`) that the
        build refuses (not left in the staging tree until the failed build removes it)."""
        if staged.temporary is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(staged.temporary)

    def can_keep(self, path: str, digest: str) -> bool:
        """Whether the last build's file at ``path`` (not added yet) is the one of ``digest``,
        linked into the staging tree."""
        return self.tree is not None and path not in self.digests and path in self.previous \
            and self.previous[path][0] == digest

    def last_file(self, path: str) -> str | None:
        """Where the last build's file at ``path`` is while this build has not added its own
        (the staging tree's link to it), when it is as that build recorded it (its size and
        modification time); else ``None``."""
        if self.tree is None or path in self.digests or path not in self.previous:
            return None
        where = os.path.join(self.tree, path)
        try:
            info = os.stat(where)
        except OSError:
            return None
        _digest, size, mtime = self.previous[path]
        return where if (info.st_size, info.st_mtime_ns) == (size, mtime) else None

    def keep(self, path: str) -> None:
        """Add the last build's file at ``path`` as it is (see :meth:`can_keep`): its bytes
        are neither made nor read again."""
        if not self.keep_all([(path, self.previous[path][0] if path in self.previous else "")]):
            raise OutputDirectoryError(f"cannot keep {path!r}: the last build left no such file")

    def keep_all(self, files: Iterable[tuple[str, str]]) -> bool:
        """Keep the last build's file at each ``(path, sha256)`` (see :meth:`keep`) if every
        one of them can be kept, else none; whether they were."""
        files = list(files)
        return self.keep_each(dict(files), len(files))

    def keep_each(self, files: dict[str, str], named: int) -> bool:
        """:meth:`keep_all` of ``files`` (path → sha256), which were ``named`` pairs (more:
        a path named twice, kept by none). The notes' outputs of a rebuild, 25,000 files at
        5,000 notes: looked up as sets and dicts at once, but the digests, one by one."""
        # views on both sides: the smaller is walked (a dict would be walked whole, 25,000 times a rebuild)
        if self.tree is None or len(files) != named or not files.keys().isdisjoint(self.digests.keys()):
            return False
        previous, left = self.previous, _NOT_LEFT
        for path, digest in files.items():  # as can_keep, inline
            if previous.get(path, left)[0] != digest:
                return False
        self._order = None
        self.digests.update(files)
        self.sizes.update({path: previous[path][1] for path in files})
        return True

    def add_streams(self, streams: Mapping[str, Iterable[bytes]]) -> None:
        """Several files, each from its chunks (as :meth:`add`), made at once: see :meth:`start_streams`."""
        self.start_streams(streams).finish()

    def start_streams(self, streams: Mapping[str, Iterable[bytes]],
                      prepare: Callable[[], object] | None = None) -> Streaming:
        """Several files, each from its chunks (as :meth:`add`), made and written by a child
        process (:class:`Background`) while this one goes on with the rest of the site:
        graph.json and graph.jsonld take most of a second of a 5,000-note rebuild. They
        are added when :meth:`Streaming.finish` is called (not before: nothing read in
        between sees them); in memory, or where processes cannot be forked, made then.
        ``prepare`` makes what the streams share (the graph's assembly): the child calls it,
        then writes each file after the first in a child of its own, beside it."""
        paths = list(streams)
        for path in paths:
            self._check_new(path)
        self._pending.update(paths)
        if self.tree is None or not hasattr(os, "fork"):
            return Streaming(self, paths, streams, None)
        return Streaming(self, paths, None, Background(partial(self._all_written, paths, streams, prepare)))

    def _all_written(self, paths: list[str], streams: Mapping[str, Iterable[bytes]],
                     prepare: Callable[[], object] | None) -> list[tuple[str, str, int]]:
        # with what they share made first, the files are written side by side: the build waits
        # for them once the pages are made, a second core idle then (3.9 s of an edit's 9.7 s
        # with wikis at 5,000 notes, one file after the other)
        written: dict[str, tuple[str, str, int]] = {}
        beside: dict[str, Background] = {}
        try:
            if prepare is not None:
                prepare()
                if can_tie():  # else one after the other: a child left running would write into a tree removed
                    for path in paths[1:]:
                        try:
                            beside[path] = Background(partial(self._chunks_written, path, streams[path]), tied=True)
                        except OSError:  # no process to spare: the others written here, in turn
                            break
            for path in paths:
                if path not in beside:
                    written[path] = self._chunks_written(path, streams[path])
            for path, child in beside.items():
                temporary, digest, size = cast(list[Any], child.join())
                written[path] = (str(temporary), str(digest), int(size))
        except BaseException:
            for child in beside.values():
                child.stop()  # joined already: nothing
            for temporary, _digest, _size in written.values():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temporary)
            raise
        return [written[path] for path in paths]

    def _check_new(self, path: str) -> None:
        if not _safe_relative(path) or path == MARKER:
            raise OutputDirectoryError(f"refusing to write {path!r}: outside the output directory")
        if path in self.digests or path in self._pending:
            raise OutputDirectoryError(f"refusing to write {path!r} twice in one build")

    def _add_chunks(self, path: str, chunks: Iterable[bytes]) -> None:
        """Chunks into a new file of the staging tree, hashed as they go; a file that comes
        out as the last build's stays the link to it."""
        self._place(path, *self._chunks_written(path, chunks))

    def _chunks_written(self, path: str, chunks: Iterable[bytes]) -> tuple[str, str, int]:
        """The chunks in a new temporary file of the staging tree: its name, sha256 and size."""
        assert self.tree is not None
        hasher, size = hashlib.sha256(), 0
        # opened as every other file of the site is (mode from the umask: mkstemp's 0600 would
        # hide graph.json from a web server running as another user)
        temporary = os.path.join(self.tree, f".carnet-chunks-{os.getpid()}-{next(self._temporaries)}")
        try:
            with open(temporary, "xb") as stream:
                for chunk in chunks:
                    hasher.update(chunk)
                    size += len(chunk)
                    stream.write(chunk)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
        return temporary, hasher.hexdigest(), size

    def _place(self, path: str, temporary: str, digest: str, size: int) -> None:
        """The file ``temporary`` made for ``path``: moved there, or dropped when it is the
        last build's (the link to that one stays)."""
        self._order = None
        try:
            self.digests[path], self.sizes[path] = digest, size
            if path in self.previous and self.previous[path][0] == digest:
                return
            self.changed.add(path)
            self._write(path, None, temporary)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)

    def _write(self, path: str, data: bytes | None, written: str | None = None) -> None:
        """``data`` (or the file ``written`` already, moved there) at ``path`` in the tree."""
        assert self.tree is not None
        folder = posixpath.dirname(path)
        target = os.path.join(self.tree, path)
        if folder not in self._folders:  # each folder made once: a mkdir per file costs seconds at 25,000
            try:
                os.makedirs(os.path.join(self.tree, folder), exist_ok=True)
            except (FileExistsError, NotADirectoryError):
                self._clear_way(folder)
                os.makedirs(os.path.join(self.tree, folder), exist_ok=True)
            self._folders.add(folder)
        if self.previous:
            try:
                os.unlink(target)  # a link to the live file: never write through it
            except FileNotFoundError:
                pass
            except IsADirectoryError:  # the last build's folder of that name: only links (a file of this
                shutil.rmtree(target)  # build under it would clash with this one, refused before)
        if written is not None:
            os.rename(written, target)
        else:
            assert data is not None
            _write_file(target, data)

    def _clear_way(self, folder: str) -> None:
        """A last build's file where this build needs a folder: only a link to the live
        tree is removed (a file this build wrote would be a clash, refused before)."""
        parts = folder.split("/")
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            candidate = os.path.join(str(self.tree), prefix)
            if os.path.isfile(candidate) and prefix in self.previous and prefix not in self.changed:
                os.unlink(candidate)
                return

    def __getitem__(self, path: str) -> bytes:
        if path not in self.digests:
            raise KeyError(path)
        if self.tree is None:
            return self._held[path]
        with open(os.path.join(self.tree, path), "rb") as stream:
            return stream.read()

    def __contains__(self, path: object) -> bool:
        return path in self.digests

    def __iter__(self) -> Iterator[str]:
        if self._order is None:
            self._order = sorted(self.digests)
        return iter(self._order)

    def __len__(self) -> int:
        return len(self.digests)


_NOT_LEFT: Final[tuple[None, int, int]] = (None, 0, 0)
"""What :meth:`SiteFiles.keep_all` reads for a path the last build left no file at: no digest is equal to its."""


class Streaming:
    """Files a child process is making for a :class:`SiteFiles` (:meth:`SiteFiles.start_streams`)."""

    def __init__(self, files: SiteFiles, paths: list[str], streams: Mapping[str, Iterable[bytes]] | None,
                 child: Background | None) -> None:
        self.files, self.paths, self.streams, self.child = files, paths, streams, child

    def finish(self) -> None:
        """Wait for the files and add them; the child's error (a full disk…) is raised here."""
        files, child, streams = self.files, self.child, self.streams
        self.child = self.streams = None
        if child is None and streams is None:
            return
        files._pending.difference_update(self.paths)
        if streams is not None:
            for path in self.paths:
                files.add(path, streams[path])
            return
        assert child is not None
        written = cast(list[Any], child.join())
        for path, (temporary, digest, size) in zip(self.paths, written, strict=True):
            files._place(path, str(temporary), str(digest), int(size))

    def stop(self) -> None:
        """The build failed meanwhile: the child is stopped and waited for (what it wrote is
        in the staging tree, removed with it); nothing is added. Once finished, nothing."""
        child, self.child, self.streams = self.child, None, None
        self.files._pending.difference_update(self.paths)
        if child is not None:
            child.stop()


class Background:
    """Work on the site's files (hard-linking the live tree, removing the retired one,
    writing graph.jsonld) done by a forked child process while the build goes on: on a
    second core it costs no wall time (~0.5 s of a 5,000-note rebuild for the trees). A
    thread would not do: the Python loop around each system call holds the interpreter's
    lock, so two threads only take turns. Where processes cannot be forked, the work is
    done at once. :meth:`join` waits for it and returns its result (a JSON value), or
    raises its error (an :class:`OSError` keeps its number, reason and file name)."""

    def __init__(self, work: Callable[[], object], tied: bool = False) -> None:
        """``tied``: the child is killed with this process (see :func:`can_tie`), so that what
        a child starts stops with it."""
        self._pid = 0
        self._result: object = None
        if not hasattr(os, "fork"):
            self._result = work()
            return
        read, write = os.pipe()
        parent = os.getpid() if tied else 0
        try:
            pid = os.fork()
        except OSError:  # no process to spare (EAGAIN, ENOMEM): the pipe is not left open
            os.close(read)
            os.close(write)
            raise
        if pid == 0:  # the child: the work, its result or error down the pipe, and out
            if tied:
                _tie_to_parent()
                if os.getppid() != parent:
                    os._exit(1)  # its parent ended already: nobody waits for the work
            os.close(read)
            gc.disable()  # short-lived: a collection would touch, hence copy, the parent's whole heap
            code = 1
            try:
                try:
                    message = json.dumps(["done", work()])
                    code = 0
                except OSError as exc:
                    message = json.dumps(["failed", exc.errno or 0, exc.strerror or str(exc),
                                          os.fsdecode(exc.filename) if exc.filename else None])
                except BaseException as exc:  # a bug: said as it is, not as a disk's refusal
                    message = json.dumps(["broke", f"{type(exc).__name__}: {exc}"])
                with os.fdopen(write, "wb") as stream:
                    stream.write(message.encode("utf-8"))
            finally:
                os._exit(code)
        os.close(write)
        self._pid, self._pipe = pid, read

    def stop(self) -> None:
        """Kill the work and wait for it to end (the build failed: nothing it made is wanted)."""
        if not self._pid:
            return
        pid, self._pid = self._pid, 0
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(self._pipe)

    def join(self) -> object:
        """Wait for the work; its result, or its error raised here."""
        if not self._pid:
            return self._result
        pid, self._pid = self._pid, 0
        with os.fdopen(self._pipe, "rb") as stream:
            said = stream.read()
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        message = json.loads(said) if said else None
        if isinstance(message, list) and message[0] == "done" and code == 0:
            self._result = message[1]
            return self._result
        if isinstance(message, list) and message[0] == "failed":
            _, number, reason, filename = message
            raise OSError(number, reason, filename) if filename else OSError(number, reason)
        if isinstance(message, list) and message[0] == "broke":
            raise RuntimeError(f"a child process of the build failed: {message[1]}")
        ended = f"was killed by signal {-code}" if code < 0 else f"ended with status {code}"
        raise OSError(0, f"the process writing the staging tree {ended}")


class Staging:
    """A staging tree beside the output directory, as :func:`staging_tree` makes it.

    Attributes:
        path: the tree.
        linking: the live tree being hard-linked into it (``None``: a new tree, or done).
        retiring: the old tree being removed once swapped out (``None``: nothing to remove).
        keeps: the old tree swapped out is kept as the next staging tree's start, not removed
            (``carnet serve``, see :data:`_SPARES`).
    """

    def __init__(self, path: Path, keeps: bool = False) -> None:
        self.path = path
        self.keeps = keeps
        self.linking: Background | None = None
        self.retiring: Background | None = None
        self._listing: str | None = None

    def live_listing(self) -> str | None:
        """The listing digest of the live tree the linking found (waiting for it); ``None``
        when the tree was not linked."""
        self.wait()
        return self._listing

    def files(self, previous: Mapping[str, tuple[str, int, int]] | None = None) -> SiteFiles:
        """The site's files, written into this tree (over the linked live one with ``previous``)."""
        self.wait()
        return SiteFiles(self.path, previous or {})

    def wait(self) -> None:
        """Wait for the work on the trees (raising its error)."""
        if self.linking is not None:
            listing = self.linking.join()
            self._listing = listing if isinstance(listing, str) else None
        if self.retiring is not None:
            self.retiring.join()
        self.linking = self.retiring = None


@dataclass(frozen=True)
class Spare:
    """The tree a lingering build swapped out, kept beside the output directory
    (``.<name>.old-<pid>``, named by the record) as the next staging tree's start: hard
    links to the files of the tree before, which the next build's child brings in line
    with the live tree (:func:`_link_tree`), a few dozen links where making the tree
    anew takes 25,000 (~0.2 s at 5,000 notes, on the path of every rebuild in ``serve``).

    Attributes:
        path: where it is.
        identity: its (device, inode) when it was kept: anything else found there is not used.
        owner: the process that kept it (a forked child that exits never removes it).
    """

    path: Path
    identity: Identity
    owner: int = field(default_factory=os.getpid)


_SPARES: dict[Path, Spare] = {}
"""Output directory → the tree its last lingering build swapped out (``carnet serve``)."""


def drop_spare(out_dir: Path) -> None:
    """Remove the tree kept for ``out_dir``'s next build, if any (and its mention in the
    record): at the process's exit, it is of no more use."""
    spare = _SPARES.pop(out_dir.absolute(), None)
    if spare is not None and spare.owner == os.getpid() and _kept_as(spare):
        with contextlib.suppress(OSError):
            live = {_identity(out_dir.absolute())} if out_dir.is_dir() else set()
            _retire(spare.path, out_dir.absolute(), live)


@atexit.register
def _all_spares_dropped() -> None:
    for out_dir in list(_SPARES):
        drop_spare(out_dir)


def _kept_as(spare: Spare) -> bool:
    """``spare`` is still the tree that was kept (a directory, not a link, the same inode)."""
    try:
        return _identity(spare.path) == spare.identity and not spare.path.is_symlink() and spare.path.is_dir()
    except OSError:
        return False


@contextlib.contextmanager
def staging_tree(out_dir: Path, content_dir: Path, link: bool = False, linger: bool = False) -> Iterator[Staging]:
    """A staging tree beside ``out_dir`` for a new site; with ``link`` (the live tree is
    Carnet's), it starts as hard links to the live one, made by a child process
    (:class:`Background`) while the caller goes on: :meth:`Staging.files` waits for them, and
    :meth:`Staging.live_listing` tells whether it was the tree the last build left. The
    staging tree goes whatever happens: a failed or interrupted build leaves the previous
    site as it was. With ``linger`` (``carnet serve``), the old tree swapped out is not
    removed but kept for the next staging tree of ``out_dir`` in this process to start from
    (:class:`Spare`): the child then only links what differs (:func:`_link_tree`); the
    process's exit removes it (:func:`drop_spare`)."""
    check_output_dir(out_dir, content_dir)
    if link and not is_carnet_tree(out_dir):
        raise OutputDirectoryError(f"{out_dir} is not a tree carnet built: refusing an incremental write into it")
    spare = _SPARES.pop(out_dir.absolute(), None)  # a fresh tree (not linked) clears it as a leftover
    with _staging(out_dir, spare if link and spare is not None and _kept_as(spare) else None) as path:
        staging = Staging(path, linger)
        try:
            if link:
                # an older version's marker is not carried over: the staging tree has its own, dropped before it goes live
                staging.linking = Background(partial(_link_tree, out_dir, path,
                                                     {".pagefind-next", MARKER}))
            yield staging
        except BaseException:
            with contextlib.suppress(Exception):  # one is being raised already
                staging.wait()
            raise
        staging.wait()


@contextlib.contextmanager
def staged_site(out_dir: Path, content_dir: Path,
                previous: Mapping[str, tuple[str, int, int]] | None = None) -> Iterator[SiteFiles]:
    """The files of a new site, written into a staging tree beside ``out_dir`` as they are
    added; :func:`go_live` swaps it in. With ``previous`` (what the last build left in the
    live tree, which must be intact), the staging tree starts as hard links to the live
    one, so only what changed is written (see :func:`staging_tree`)."""
    with staging_tree(out_dir, content_dir, previous is not None) as staging:
        yield staging.files(previous)


def go_live(files: SiteFiles, out_dir: Path, index: Callable[[Path], None] | None = None,
            stage: Staging | None = None) -> set[str]:
    """Swap the staged ``files`` in as ``out_dir``, once the files the last build wrote and
    this one did not are removed from it. ``index`` (the search) runs on the new tree;
    over a live tree, only when a page changed or there is no index yet (else the live
    index is kept). Without ``index`` the tree has no search bundle. With ``stage`` (the
    files' :class:`Staging`), the old tree is removed by a child process, waited for when
    the staging ends, or kept for the next build when the staging :attr:`~Staging.keeps` it.
    Returns the paths written or removed."""
    staging = files.tree
    assert staging is not None, "go_live takes the files of staged_site"
    gone = {path for path in files.previous if path not in files and _safe_relative(path)}
    for path in sorted(gone):
        with contextlib.suppress(FileNotFoundError, NotADirectoryError, IsADirectoryError):
            os.unlink(os.path.join(staging, path))  # gone already: its folder became this build's file
    _prune_empty(staging, gone)
    reindex = index is not None and (not files.previous or any(path.endswith(".html") for path in files.changed)
                                     or not (out_dir / "pagefind").is_dir())
    if not (index is not None and not reindex) and (staging / "pagefind").is_dir():
        shutil.rmtree(staging / "pagefind")  # links to the live index: that one stays as it is until the swap
    if reindex:
        assert index is not None
        index(staging)
    live = out_dir.absolute()
    old = _go_live(staging, live)
    if old is not None:
        if stage is not None and stage.keeps:  # the record names it still, with the live tree
            _SPARES[live] = Spare(old, _identity(old))
        else:
            retire = partial(_retire, old, live, {_identity(live)})
            if stage is None:
                retire()
            else:
                stage.retiring = Background(retire)
    files.tree = out_dir.absolute()  # where the files are read back from now
    return files.changed | gone


def _write_file(path: str, data: bytes) -> None:
    with open(path, "xb") as stream:  # "x": a new file, never written through a link to the live tree
        stream.write(data)


@contextlib.contextmanager
def _staging(out_dir: Path, spare: Spare | None = None) -> Iterator[Path]:
    """A staging directory beside ``out_dir``, marked as Carnet's, removed afterwards whatever
    happens: the ``spare`` tree moved there, else an empty one. Leftovers of killed builds are
    cleared first.
    A failure to write (read-only or full disk) becomes a clear error; the live site is
    untouched since nothing is swapped in until the new tree is complete."""
    parent = out_dir.absolute().parent
    staging = parent / f".{out_dir.name}.tmp-{os.getpid()}"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _clear_leftovers(out_dir.absolute(), spare.path if spare is not None else None)
        if staging.exists():
            shutil.rmtree(staging)
        if spare is not None:
            with contextlib.suppress(FileNotFoundError):  # gone meanwhile: a tree made anew
                os.rename(spare.path, staging)
        if not staging.exists():
            staging.mkdir()
        (staging / MARKER).write_bytes(MARKER_TEXT)
        yield staging
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = f" ({exc.filename})" if exc.filename else ""
        raise OutputDirectoryError(
            f"could not write the site into {out_dir}: {reason}{where}. The previous site, if any, is left as "
            f"it was; free some space, make {parent} writable, or choose another --out.") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _clear_leftovers(out_dir: Path, spare: Path | None = None) -> None:
    """Remove the staging and retired trees that a killed build left beside the output
    directory: only Carnet's own (with the marker file, or named by the record), and only
    a dead process's (this one's too, but for the ``spare`` tree this build starts from)."""
    name, recorded = out_dir.name, _recorded(out_dir)
    for entry in out_dir.parent.glob(f".{glob.escape(name)}.*-*"):
        kind, _, pid = entry.name[len(name) + 2:].partition("-")
        if kind not in ("tmp", "old") or not pid.isdigit() or not entry.is_dir() or entry.is_symlink():
            continue
        if entry == spare:
            continue
        if not _alive(int(pid)) and ((entry / MARKER).is_file() or _identity(entry) in recorded):
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # our own leftover from an earlier run in this process: not in use
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _link_tree(source: Path, target: Path, skip: set[str]) -> str:
    """Make ``target`` hold ``source`` as hard links (directories made anew), leaving out the
    relative paths in ``skip`` (files, or whole directories); returns the listing digest of
    ``source`` as :meth:`generator.engine.cache.BuildCache.output_intact` makes it, from the
    same walk: the build asks whether the live tree is the one it left while it is being
    linked, not before (25,000 stats at 5,000 notes). ``target`` is empty (a tree linked anew)
    or the tree the last build swapped out (:class:`Spare`), mostly hard links to the live
    files: each folder of both is listed (an entry's inode comes with its name, without a
    ``stat``), an entry of ``target`` that is the very file of ``source`` stays, any other is
    removed, what is missing is linked. Whatever happened to ``target`` meanwhile, it ends the
    same (its own marker, at the top, left alone)."""
    lines: list[str] = []

    def remove(entry: os.DirEntry[str]) -> None:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)

    def walk(directory: str, prefix: str, listed: bool, linked: bool) -> None:
        held: dict[str, os.DirEntry[str]] = {}
        if linked:
            with os.scandir(os.path.join(target, prefix)) as scan:
                held = {entry.name: entry for entry in scan}
            if not prefix:
                held.pop(MARKER, None)  # the staging tree's own
        with os.scandir(directory) as scan:
            for entry in scan:
                name = prefix + entry.name
                there = held.pop(entry.name, None)
                if entry.is_dir(follow_symlinks=False):
                    lists = listed and (prefix != "" or entry.name not in UNLISTED)
                    links = linked and name not in skip
                    if there is not None and not (links and there.is_dir(follow_symlinks=False)):
                        remove(there)
                        there = None
                    if links and there is None:
                        os.mkdir(os.path.join(target, name))
                    if lists or links:
                        walk(entry.path, name + "/", lists, links)
                    continue
                if listed:  # an older version's marker too, and a link: as output_intact lists them
                    info = entry.stat(follow_symlinks=False)
                    lines.append(listing_line(name, info.st_size, info.st_mtime_ns))
                wanted = linked and name not in skip and entry.is_file(follow_symlinks=False)
                if there is not None and wanted and not there.is_dir(follow_symlinks=False) \
                        and not there.is_symlink() and there.inode() == entry.inode():
                    continue  # the same file (a hard link to it): inodes are not reused while both hold it
                if there is not None:
                    remove(there)
                if wanted:
                    try:
                        os.link(entry.path, os.path.join(target, name))
                    except OSError:  # a file system without hard links: a copy, modification time kept
                        shutil.copy2(entry.path, os.path.join(target, name))
        for there in held.values():  # in the target alone
            remove(there)

    walk(str(source), "", True, True)
    return listing_digest(lines)


def _prune_empty(root: Path, removed: set[str]) -> None:
    """Remove the directories that the ``removed`` files leave empty."""
    for path in sorted(removed):
        parent = (root / path).parent
        while parent != root and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent


def written_state(files: Mapping[str, bytes], digests: Mapping[str, str], out_dir: Path,
                  previous: dict[str, tuple[str, int, int]] | None = None,
                  changed: set[str] | None = None) -> dict[str, tuple[str, int, int]]:
    """What a build left in ``out_dir``: per file of ``files`` (``digests``: the sha256 of
    each) its digest, size and modification time, so the next build can tell that nobody
    touched it. After an incremental write (``previous``: the last build's state; ``changed``:
    the paths written or removed since, every file added or gone among them, as
    :func:`go_live` returns them) only those are looked at again: ``previous`` is patched in
    place and returned (:func:`_state_patched`)."""
    if previous is None or changed is None:
        return {path: _file_state(out_dir, path, digests[path]) for path in files}
    # with the read check on, made file by file as well (before the patch: from the last state)
    full = _state_walked(files, digests, out_dir, previous, changed) if _checking_reads() else None
    state = _state_patched(digests, out_dir, previous, changed)
    if state is None:  # a file added or gone that ``changed`` does not name: file by file
        return _state_walked(files, digests, out_dir, previous, changed)
    if full is not None and full != state:
        from generator.engine.reads import StaleOutputs
        raise StaleOutputs("the output tree's state was patched from the last build's but differs from the one "
                           "made in full: generator/engine/output.py:_state_patched missed a change")
    return state


def _state_patched(digests: Mapping[str, str], out_dir: Path, previous: dict[str, tuple[str, int, int]],
                   changed: Collection[str]) -> dict[str, tuple[str, int, int]] | None:
    """``previous`` patched in place with the ``changed`` paths alone (each file written
    looked at again, each gone dropped), a few dozen of 30,000 at 5,000 notes: a walk over
    every file would touch each one's state, a page copied for each (``carnet serve``'s
    last tree is removed meanwhile by a forked child that shares the build's memory).
    ``None``, ``previous`` left as it was, where the files then differ from ``digests``'s."""
    fresh = {path: _file_state(out_dir, path, digests[path]) for path in changed if path in digests}
    gone = [path for path in changed if path not in digests and path in previous]
    if len(previous) - len(gone) + sum(path not in previous for path in fresh) != len(digests):
        return None
    for path in gone:
        del previous[path]
    previous.update(fresh)
    return previous


def _state_walked(files: Mapping[str, bytes], digests: Mapping[str, str], out_dir: Path,
                  previous: Mapping[str, tuple[str, int, int]], changed: Collection[str]) -> dict[str, tuple[str, int, int]]:
    """:func:`written_state` file by file: the last state of each file not ``changed``."""
    return {path: previous[path] if path not in changed and path in previous
            else _file_state(out_dir, path, digests[path]) for path in files}


def _file_state(out_dir: Path, path: str, digest: str) -> tuple[str, int, int]:
    info = os.stat(os.path.join(out_dir, path))
    return digest, info.st_size, info.st_mtime_ns


def _checking_reads() -> bool:
    # imported here: the engine's read check, on in the test suite (the site's modules load with it)
    from generator.engine import reads
    return reads.checking()


def swap_directory(new: Path, current: Path) -> None:
    """Make ``new`` take the place of ``current`` (atomically where the system allows it)."""
    old = _swap_in(new, current)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _go_live(staging: Path, out_dir: Path) -> Path | None:
    """Swap the complete ``staging`` tree in as ``out_dir``; returns where the old tree now
    is (``None``: there was none), for the caller to remove (:func:`_retire`) or keep. The
    record names both trees from before the swap until the old one is gone, so whenever the
    build is killed, the output directory (either tree) is known as Carnet's and a leftover
    is cleared by the next build, marker or not; the staging tree's marker goes just before
    the swap, so it is never published."""
    live = {_identity(out_dir)} if out_dir.is_dir() else set()
    _record(out_dir, live | {_identity(staging)})
    (staging / MARKER).unlink()
    old = _swap_in(staging, out_dir)
    if old is None:
        _record(out_dir, {_identity(out_dir)})
    return old


def _retire(old: Path, out_dir: Path, live: set[Identity]) -> None:
    """Remove the tree swapped out, then the record's mention of it (``live``: what it names besides)."""
    shutil.rmtree(old, ignore_errors=True)
    left = {_identity(old)} if old.is_dir() else set()  # not removed: still cleared later
    _record(out_dir, live | left)


def _swap_in(staging: Path, out_dir: Path) -> Path | None:
    """Make ``staging`` the output directory. With an existing one, exchange the two
    atomically when the system allows it (Linux renameat2), so readers and ``serve``
    never see a half-written or missing site. Returns where the old tree now is (at
    ``.<name>.old-<pid>``, out of the way of the next staging tree), for the caller to
    remove; ``None`` if there was none."""
    if not out_dir.exists():
        os.rename(staging, out_dir)
        return None
    retired = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    if retired.exists():  # this process's last old tree, which could not all be removed
        shutil.rmtree(retired, ignore_errors=True)
    if _exchange(staging, out_dir):
        os.rename(staging, retired)  # the next build of this process may stage while it is removed
        return retired
    os.rename(out_dir, retired)
    os.rename(staging, out_dir)
    return retired


_PR_SET_PDEATHSIG, _PR_GET_PDEATHSIG = 1, 2


@cache
def _prctl() -> Callable[..., int] | None:
    """Linux's prctl, when it answers (a sandbox may refuse it)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = cast(Callable[..., int], ctypes.CDLL(None, use_errno=True).prctl)  # the process's own libc
    except (OSError, AttributeError):
        return None
    current = ctypes.c_int()
    return prctl if prctl(_PR_GET_PDEATHSIG, ctypes.byref(current)) == 0 else None


def can_tie() -> bool:
    """Whether a child process can be made to die with its parent (Linux's PR_SET_PDEATHSIG)."""
    return _prctl() is not None


def _tie_to_parent() -> None:
    """This process killed when its parent ends (see :func:`can_tie`); refused, it goes on
    untied: its work is the same."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL))


def _exchange(a: Path, b: Path) -> bool:
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    # ctypes' default restype is c_int: the call returns a Python int
    result: int = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return result == 0
