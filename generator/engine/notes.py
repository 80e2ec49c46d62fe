"""The notes' parse as a build makes it: recalled from the build cache by the digest of
their files, the others parsed in worker processes (:data:`generator.corpus.load.NotesParser`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from generator.corpus.load import NoteFiles, NotesParser, ParsedNote, Unreadable, parse_note_files
from generator.engine.jobs import fork_map
from generator.engine.memo import Kind, Memo, same
from generator.problems import Problem

NOTES = Kind.NOTES
"""The memo's kind for a note's parse."""


def notes_parser(memo: Memo, jobs: int = 1) -> NotesParser:
    """A :data:`NotesParser` that recalls each note ``memo`` holds by its files' digest
    (never reading a file left unread) and parses the others, in ``jobs`` worker processes."""
    return partial(_parse_notes, memo, jobs)


def _parse_notes(memo: Memo, jobs: int, notes: Sequence[NoteFiles]) -> list[ParsedNote | Problem]:
    todo: list[NoteFiles] = []
    ready: dict[str, NoteFiles | Problem] = {}
    for files in notes:
        if memo.holds(NOTES, partial(same, files.digest)):
            ready[files.rel] = files
            continue
        try:  # to parse: read now, and keyed by the bytes read (the file may have changed since it was digested)
            ready[files.rel] = read = files.read()
        except Unreadable as exc:  # moved or deleted since it was listed: said, never remembered
            ready[files.rel] = exc.problem
            continue
        todo.append(read)
    made = dict(zip((files.rel for files in todo), fork_map(parse_note_files, todo, jobs), strict=True))
    parsed: list[ParsedNote | Problem] = []
    for files in notes:
        found = ready[files.rel]
        if isinstance(found, Problem):
            parsed.append(found)
            continue
        compute = partial(made.pop, files.rel) if files.rel in made else partial(parse_note_files, found)
        try:
            parsed.append(memo.memo(NOTES, partial(same, found.digest), compute))
        except Unreadable as exc:  # held, then lost: read late, and not the bytes digested
            parsed.append(exc.problem)
    return parsed
