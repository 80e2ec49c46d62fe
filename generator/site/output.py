"""Writing the site: a complete new tree, swapped in at the end.

A build never writes into a directory it did not create (it looks for its marker
file), so ``--out .`` cannot wipe a user's files; and a failed or interrupted build
leaves the previous site as it was.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import posixpath
import shutil
from pathlib import Path
from typing import Callable, Mapping

from generator.files import write_atomic
from generator.problems import OutputDirectoryError

MARKER = ".carnet-build"
MARKER_TEXT = b"This directory is written by 'carnet build' and replaced whole at each build.\n"

_RENAME_EXCHANGE = 2


def check_output_dir(out_dir: Path, content_dir: Path) -> None:
    """Refuse an output directory that holds anything Carnet did not write, or that
    overlaps the content."""
    out, content = out_dir.resolve(), content_dir.resolve()
    if out == content or out in content.parents or content in out.parents:
        raise OutputDirectoryError(
            f"the output directory {out_dir} overlaps the content directory {content_dir}; "
            "choose a separate one (default: build/)")
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise OutputDirectoryError(f"{out_dir} exists and is not a directory; choose another --out")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / MARKER).is_file():
        raise OutputDirectoryError(
            f"{out_dir} already exists and was not created by carnet (no {MARKER} file in it); "
            "refusing to replace it. Choose another --out, or empty or remove that directory yourself.")


def _safe_relative(path: str) -> bool:
    normal = posixpath.normpath(path)
    return bool(path) and not path.startswith("/") and normal == path and not normal.startswith("..")


def write_site(files: Mapping[str, bytes], out_dir: Path, content_dir: Path,
               before_swap: Callable[[Path], None] | None = None) -> None:
    """Write ``files`` (site-relative POSIX path → bytes) as the new content of ``out_dir``;
    ``before_swap`` runs on the complete new tree (the search index) before it goes live."""
    check_output_dir(out_dir, content_dir)
    for path in files:
        if not _safe_relative(path) or path == MARKER:
            raise OutputDirectoryError(f"refusing to write {path!r}: outside the output directory")
    parent = out_dir.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = parent / f".{out_dir.name}.tmp-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        staging.mkdir()
        (staging / MARKER).write_bytes(MARKER_TEXT)
        for path in sorted(files):
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[path])
        if before_swap is not None:
            before_swap(staging)
        _swap_in(staging, out_dir.absolute())
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def write_changed(files: Mapping[str, bytes], digests: Mapping[str, str], out_dir: Path, content_dir: Path,
                  previous: Mapping[str, tuple[str, int, int]], last: str = "manifest.json") -> set[str]:
    """The incremental write: replace, one by one and atomically, the files whose digest
    differs from what ``previous`` records in ``out_dir``; remove those no longer built;
    write ``last`` (the manifest) at the very end, so a reader who sees the new manifest
    sees every file it lists. Returns the paths written or removed."""
    check_output_dir(out_dir, content_dir)
    if not (out_dir / MARKER).is_file():
        raise OutputDirectoryError(f"{out_dir} has no {MARKER} file: refusing an incremental write into it")
    for path in files:
        if not _safe_relative(path) or path == MARKER:
            raise OutputDirectoryError(f"refusing to write {path!r}: outside the output directory")
    changes: set[str] = set()
    for path in sorted(files):
        if path != last and (path not in previous or previous[path][0] != digests[path]):
            write_atomic(out_dir / path, files[path])
            changes.add(path)
    for path in sorted(set(previous) - set(files)):
        target = out_dir / path
        if _safe_relative(path) and target.is_file() and not target.is_symlink():
            target.unlink()
            changes.add(path)
            parent = target.parent
            while parent != out_dir and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
    if last in files and (last not in previous or previous[last][0] != digests[last]):
        write_atomic(out_dir / last, files[last])
        changes.add(last)
    return changes


def written_state(files: Mapping[str, bytes], digests: Mapping[str, str], out_dir: Path,
                  previous: Mapping[str, tuple[str, int, int]] | None = None,
                  changed: set[str] | None = None) -> dict[str, tuple[str, int, int]]:
    """What a build left in ``out_dir``: per file its digest, size and modification time,
    so the next build can tell that nobody touched it. After an incremental write only
    the ``changed`` files are looked at again."""
    state = {}
    for path in files:
        if previous is not None and changed is not None and path not in changed and path in previous:
            state[path] = previous[path]
            continue
        info = (out_dir / path).stat()
        state[path] = (digests[path], info.st_size, info.st_mtime_ns)
    return state


def swap_directory(new: Path, current: Path) -> None:
    """Make ``new`` take the place of ``current`` (atomically where the system allows it)."""
    _swap_in(new, current)
    if new.exists():
        shutil.rmtree(new, ignore_errors=True)


def _swap_in(staging: Path, out_dir: Path) -> None:
    """Make ``staging`` the output directory. With an existing one, exchange the two
    atomically when the system allows it (Linux renameat2), so readers and ``serve``
    never see a half-written or missing site; the old tree ends up in ``staging``
    and is removed by the caller."""
    if not out_dir.exists():
        os.rename(staging, out_dir)
        return
    if _exchange(staging, out_dir):
        return
    retired = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    os.rename(out_dir, retired)
    os.rename(staging, out_dir)
    shutil.rmtree(retired, ignore_errors=True)


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
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return result == 0
