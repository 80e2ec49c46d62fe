"""manifest.json as ``carnet serve``'s rebuilds make it: the last build's lines patched with the
files that changed (:func:`manifest_patched`), kept on the resident build cache between builds
(:class:`ManifestKeeper`), rather than a line made again for each of the site's files."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from generator.engine.output import SiteFiles
from generator.site.machine import manifest_line, manifest_lines


@dataclass
class KeptManifest:
    """manifest.json's lines, in its order: each file's path (sorted) and its line. A resident
    build cache (``carnet serve``) keeps the last build's, for the next build over that build's
    tree to patch in place (:func:`manifest_patched`): a line per file changed, no walk over
    every file — in a build whose forked children share its memory, each object a walk touches
    is a page copied (12,000 faults for 25,000 files at 5,000 notes, more than the lines cost)."""

    paths: list[str]
    lines: list[str]
    derived: dict[str, str]  # the digest of each output :func:`derived_outputs` made (not kept whole: made each time)

    @classmethod
    def of(cls, lines: Mapping[str, str], derived: dict[str, str]) -> KeptManifest:
        """Of each file's line by path."""
        paths = sorted(lines)
        return cls(paths, [lines[path] for path in paths], derived)


def manifest_patched(kept: KeptManifest, files: SiteFiles, derived: Mapping[str, bytes],
                      made_digests: Mapping[str, str]) -> bool:
    """Patch ``kept``, the manifest the build over whose tree ``files`` are staged wrote (its
    files are ``files.previous``), into this build's: the lines of the files changed since
    (``files.changed``) and of those made here (``derived``, their digests ``made_digests``)
    made again, those of the files gone dropped. Whether it could: a file the last manifest
    did not list must be among those (else the caller makes the manifest in full)."""
    paths, lines, last = kept.paths, kept.lines, kept.derived
    for path in files.changed.union(derived):
        if path in derived:
            if made_digests[path] == last.get(path):  # its line as it was
                continue
            line = manifest_line(path, made_digests[path], len(derived[path]))
        else:
            line = manifest_line(path, files.digests[path], files.sizes[path])
        at = bisect_left(paths, path)
        if at < len(paths) and paths[at] == path:
            lines[at] = line
        else:
            paths.insert(at, path)
            lines.insert(at, line)
    listed = len(files.digests) + len(derived)  # the files the manifest lists: none is both
    if len(paths) > listed:  # files gone: the one walk over them all, for an edit that removes some
        left = [at for at, path in enumerate(paths) if path in files.digests or path in derived]
        paths[:] = [paths[at] for at in left]
        lines[:] = [lines[at] for at in left]
    if len(paths) != listed:
        return False
    kept.derived = dict(made_digests)
    return True


def manifest_of_build(kept: KeptManifest | None, lines: dict[str, str] | None, files: SiteFiles,
                      derived: Mapping[str, bytes], made_digests: Mapping[str, str]) -> tuple[KeptManifest, bool]:
    """This build's manifest, and whether it was patched: ``kept`` (the last build's) patched
    (:func:`manifest_patched`), else made whole from ``lines`` (each file's line made already,
    by path; without them, those of the outputs ``derived`` made here) and the lines of the
    files they lack (``files``'s)."""
    if kept is not None and manifest_patched(kept, files, derived, made_digests):
        return kept, True
    if lines is None:
        lines = manifest_lines({path: len(data) for path, data in derived.items()}, made_digests)
    lines.update(manifest_lines({path: files.sizes[path] for path in files.digests.keys() - lines.keys()},
                                files.digests))
    return KeptManifest.of(lines, dict(made_digests)), False


@runtime_checkable
class ManifestKeeper(Protocol):
    """What keeps the last build's manifest for the next (a resident
    :class:`~generator.engine.cache.BuildCache`)."""

    resident: bool
    manifest_made: KeptManifest | None

    def take_manifest(self, previous: Mapping[str, tuple[str, int, int]]) -> KeptManifest | None:
        """The last build's manifest, when this build's files are staged over its tree."""
        ...
