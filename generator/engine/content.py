"""The content's files as a build reads them: walked, or in ``carnet serve`` the last read of
this process patched with the paths its watcher saw change since
(:func:`generator.corpus.load.patch_content_files`: a body edited at 5,000 notes looks at one
file, where a walk lists and stats them all)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the build cache holds one: loaded before a build that has nothing to do, which reads nothing
    from generator.corpus.load import ContentFiles, KnownFiles, Unread


class ContentKept:
    """What the last build of this process read of the content, and every path changed since
    it began (``None`` when they are not all known: the next read walks)."""

    def __init__(self) -> None:
        self.files: ContentFiles | None = None
        self.edited: set[str] | None = None

    def changed(self, edited: Collection[Path] | None) -> None:
        """Told as each build begins what changed since the last one began (``None``: not
        known), whether this build reads the content or finds nothing to do."""
        if edited is None:
            self.files = self.edited = None
        elif self.edited is not None:
            self.edited.update(str(path) for path in edited)

    def read(self, root: Path, known: KnownFiles | None, keep: bool) -> ContentFiles:
        """The content's files now: the last read patched with the paths changed, else walked;
        kept for the next build with ``keep`` (a resident cache). With the engine's read check
        on, a patch is compared with a walk."""
        from generator.corpus.load import patch_content_files, read_content_dir
        from generator.engine import reads

        files = None
        if self.files is not None and self.edited is not None:
            files = patch_content_files(self.files, root, sorted(self.edited), known)
            if files is not None and reads.checking() and not same_files(files, read_content_dir(root)):
                raise reads.StaleOutputs("the content's files patched with the paths changed differ from a walk "
                                         "of the content: generator/corpus/load.py:patch_content_files")
        if files is None:
            files = read_content_dir(root, known)
        self.files, self.edited = (files, set()) if keep else (None, None)
        return files


def same_files(one: ContentFiles, other: ContentFiles) -> bool:
    """Whether two reads of the content found the same files with the same bytes and problems
    (a note or sidecar left unread by its digest is the same as its bytes read)."""
    from generator.corpus.load import content_digest

    def digests(files: Mapping[str, bytes | Unread]) -> dict[str, str]:
        return {rel: content_digest(data) for rel, data in files.items()}

    return (one.settings, one.bases, one.notebooks, one.proposals, one.verdicts, one.contestations, one.oppositions,
            one.assets, one.asset_paths, one.problems) == (
        other.settings, other.bases, other.notebooks, other.proposals, other.verdicts, other.contestations,
        other.oppositions, other.assets, other.asset_paths, other.problems) \
        and list(one.notes) == list(other.notes) and list(one.extractions) == list(other.extractions) \
        and digests(one.notes) == digests(other.notes) and digests(one.extractions) == digests(other.extractions)
