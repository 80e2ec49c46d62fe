"""The content as a build reads, parses and publishes it: in full, or in ``carnet serve`` what
the last build of this process made of it patched with what changed since: its files with the
paths its watcher saw (:func:`generator.corpus.load.patch_content_files`: a body edited at 5,000
notes looks at one file, where a walk lists and stats them all), their parse with the notes whose
files changed (:func:`~generator.corpus.load.parse_patched`), their anchoring with those notes
(:func:`~generator.engine.anchors.anchors_patched`), the public part with those notes
(:func:`~generator.corpus.publication.publication_patched`). Each patch is compared with what is
made in full under the engine's read check."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the build cache holds one: loaded before a build that has nothing to do, which reads nothing
    from generator.corpus.load import ContentFiles, KnownFiles, Loaded, NotesParser, Unread
    from generator.corpus.model import Corpus
    from generator.corpus.publication import Publication
    from generator.engine.anchors import AnchoredNotes
    from generator.engine.memo import Memo
    from generator.problems import Problem


class ContentKept:
    """What the last build of this process read of the content and made of it (its files,
    their parse, their anchoring, its publication), and every path changed since it began
    (``None`` when they are not all known: the next read walks). Kept only for a resident
    cache (``keep``)."""

    def __init__(self) -> None:
        self.keep = False
        self.files: ContentFiles | None = None
        self.loaded: Loaded | None = None
        self.before: Corpus | None = None  # the last build's corpus, while this one's is published
        self.publication: Publication | None = None
        self.anchoring: tuple[Corpus, AnchoredNotes] | None = None  # the corpus anchored, and how
        self.edited: set[str] | None = None

    def changed(self, edited: Collection[Path] | None, keep: bool) -> None:
        """Told as each build begins what changed since the last one began (``None``: not
        known), whether this build reads the content or finds nothing to do; ``keep``: what
        it makes is kept for the next (a resident cache)."""
        self.keep = keep
        if edited is None or not keep:
            self.files = self.loaded = self.before = self.publication = self.edited = self.anchoring = None
        elif self.edited is not None:
            self.edited.update(str(path) for path in edited)

    def load(self, root: Path, parser: NotesParser, known: KnownFiles | None = None,
             memo: Memo | None = None) -> tuple[Corpus, list[Problem]]:
        """The content now, as :func:`~generator.corpus.load.load_corpus` gives it: the last
        read patched with the paths changed (else walked), and the last parse patched with the
        notes whose files changed (else everything parsed, by ``parser``, which recalls each
        note's parse from ``memo``: the parses a patch carries are kept there for a build
        that parses all, as if recalled). With the engine's read check on, each patch is
        compared with what is made in full."""
        from generator.corpus.load import parse_loaded, parse_patched
        from generator.engine import reads
        from generator.engine.memo import Kind

        files = self.read(root, known)
        loaded = parse_patched(self.loaded, files, parser) if self.loaded is not None else None
        if loaded is not None and memo is not None:  # a note's parse is remembered by its files' digest
            memo.keep_all(Kind.NOTES, loaded.corpus.sources.values())
        if loaded is not None and reads.checking():
            full = parse_loaded(files, parser)
            carried = loaded.corpus.__dict__.get("holders")  # an index carried from the last corpus
            if (loaded.corpus, loaded.problems) != (full.corpus, full.problems) or (carried is not None and (
                    list(carried.extraction.items()), list(carried.comment.items())) != (
                    list(full.corpus.holders.extraction.items()), list(full.corpus.holders.comment.items()))):
                raise reads.StaleOutputs("the content's parse patched with the notes changed differs from the one "
                                         "made in full: generator/corpus/load.py:parse_patched")
        if loaded is None:
            loaded = parse_loaded(files, parser)
        self.before = self.loaded.corpus if self.loaded is not None else None
        self.files, self.loaded, self.edited = (files, loaded, set()) if self.keep else (None, None, None)
        return loaded.corpus, loaded.problems

    def anchor(self, corpus: Corpus, memo: Memo, jobs: int = 1, templates: bool = False) -> AnchoredNotes:
        """Every note of ``corpus`` anchored, as :func:`~generator.engine.anchors.anchor_notes`
        does it: the last build's anchoring patched with the notes changed since
        (:func:`~generator.engine.anchors.anchors_patched`), else made in full. Compared under
        the read check with an anchoring made without any memo."""
        from generator.engine import reads
        from generator.engine.anchors import anchor_notes, anchors_patched
        from generator.engine.memo import NO_MEMO

        made = anchors_patched(self.anchoring[1], self.anchoring[0], corpus, memo) if self.anchoring else None
        if made is not None and reads.checking():
            full = anchor_notes(corpus, NO_MEMO)
            # the parses themselves are not compared: reading them through the memo would keep its
            # entries, and hide one the patch failed to keep (their facts say where each anchor landed)
            if (list(made.anchored), made.facts, made.uses, made.problems, made.keys) != (
                    list(full.anchored), full.facts, full.uses, full.problems, full.keys):
                raise reads.StaleOutputs("the anchoring patched with the notes changed differs from the one made "
                                         "in full: generator/engine/anchors.py:anchors_patched")
        if made is None:
            made = anchor_notes(corpus, memo, jobs, templates)
        self.anchoring = (corpus, made) if self.keep else None
        return made

    def publish(self, corpus: Corpus) -> Publication:
        """The public part of ``corpus``: the last build's patched with the notes changed since
        (``publication_patched``), else published in full. Compared under the read check."""
        from generator.corpus.publication import CARRIED_IDS, publication_patched, publish
        from generator.engine import reads

        last, before = self.publication, self.before
        made = None
        if last is not None and before is not None:
            if corpus is before:
                made = last
            else:
                changed = [slug for slug in corpus.notes.keys() | before.notes.keys()
                           if corpus.notes.get(slug) is not before.notes.get(slug)]  # a note carried is the same
                made = publication_patched(last, before, corpus, changed)
            if made is not None and reads.checking():
                full = publish(corpus)
                if made != full or made.reports != full.reports or any(
                        name in made.__dict__ and made.__dict__[name] != getattr(full, name)
                        for name in CARRIED_IDS):
                    raise reads.StaleOutputs("the publication patched with the notes changed differs from the one "
                                             "made in full: generator/corpus/publication.py:publication_patched")
        if made is None:
            made = publish(corpus)
        self.before, self.publication = None, made if self.keep else None
        return made

    def read(self, root: Path, known: KnownFiles | None) -> ContentFiles:
        """The content's files now: the last read patched with the paths changed, else walked.
        With the engine's read check on, a patch is compared with a walk."""
        from generator.corpus.load import patch_content_files, read_content_dir
        from generator.engine import reads

        files = None
        if self.files is not None and self.edited is not None:
            files = patch_content_files(self.files, root, sorted(self.edited), known)
            if files is not None and reads.checking() and not same_files(files, read_content_dir(root)):
                raise reads.StaleOutputs("the content's files patched with the paths changed differ from a walk "
                                         "of the content: generator/corpus/load.py:patch_content_files")
        return files if files is not None else read_content_dir(root, known)


def same_files(one: ContentFiles, other: ContentFiles) -> bool:
    """Whether two reads of the content found the same files with the same bytes and problems
    (a note or sidecar left unread by its digest is the same as its bytes read)."""
    from generator.corpus.load import content_digest

    def digests(files: Mapping[str, bytes | Unread]) -> dict[str, str]:
        return {rel: content_digest(data) for rel, data in files.items()}

    return one.besides_notes() == other.besides_notes() and list(one.notes) == list(other.notes) and list(one.extractions) == list(other.extractions) \
        and digests(one.notes) == digests(other.notes) and digests(one.extractions) == digests(other.extractions)
