"""The one seam for every write into ``content/`` (INV-19).

A command that changes the user's files — ``verify``, ``analyse``, ``apply`` of either
kind, ``adopt``, ``check --fix-anchors --write``, ``select --oppositions``,
``select --reindex``, ``propose`` — describes each file it wants to write as a
:class:`PlannedWrite`: the new bytes, what they must mean, and which of the old file's
records it means to change. Before anything touches the disk the new bytes are read
back with the build's own reader and loader, and refused unless:

- they read back as exactly what was meant (the old records plus the new ones);
- every record of the old file the command did not mean to change is still there,
  byte for byte (:func:`generator.yamledit.records`): nothing a person wrote moves;
- the build's loader finds no problem in the new file that the old one did not have.

Then the files are written through the undo journal (:mod:`generator.journal`): each
atomically, all of a change or none. A refused write raises :class:`WriteRefused`, a
disk that refuses (full, read-only, no permission) :class:`WriteFailed`; both name the
file, and in both cases the content is left as it was.

    with ContentChange(content, "carnet verify") as change:
        change.write(PlannedWrite("verdicts/wiki.yaml", data, meant))
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from generator.corpus.source import plain
from generator.journal import Change
from generator.problems import CarnetError, Problem, Severity
from generator.yamledit import EditError, Record, append_items, block_item, records

ALL: frozenset[Record] = frozenset({("*",)})
"""``changes`` of a file the command owns whole (its fingerprints record, an embeddings
cache): every record of it may change."""


class WriteError(CarnetError):
    """A write into the content directory did not happen; the content is as it was."""


class WriteRefused(WriteError):
    """The new text would not read back as meant, or would change what was written."""


class WriteFailed(WriteError):
    """The disk refused the write (full, read-only, no permission)."""


@dataclass(frozen=True)
class PlannedWrite:
    """One file of a change.

    Attributes:
        rel: the file, relative to the content directory (POSIX).
        data: its new bytes (laid out like the old file: BOM, line ends).
        meant: what the new file must read back as — a YAML file's value, a note's
            ``{"front_matter": …, "body": …}``, a JSON file's value — as plain data.
        changes: the records of the old file this write means to change (see
            :data:`generator.yamledit.Record`; a note's front-matter records are
            ``("front_matter", *record)`` and its body ``("body",)``); :data:`ALL` for
            a file the command owns whole.
    """

    rel: str
    data: bytes
    meant: Any
    changes: frozenset[Record] = field(default_factory=frozenset)


def _nfc(value: Any) -> Any:
    """Text is read back NFC (as the loader reads it): what was meant is compared NFC."""
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, dict):
        return {_nfc(k): _nfc(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nfc(v) for v in value]
    return value


def read_back(rel: str, data: bytes) -> tuple[Any, list[Problem]]:
    """``data`` as the build reads the file ``rel``: decoded (UTF-8, NFC, LF) and parsed
    by the loader's own YAML reader; a note split into front matter and body."""
    from generator.corpus.source import parse_yaml, split_front_matter
    from generator.files import decode_text

    text, problems = decode_text(data, rel)
    if text is None:
        return None, problems
    if rel.endswith(".md"):
        doc = split_front_matter(text, rel)
        return {"front_matter": plain(doc.meta), "body": doc.body}, problems + doc.problems
    if rel.endswith(".json"):
        try:
            return json.loads(text), problems
        except ValueError as exc:
            return None, problems + [Problem(rel, None, "json-syntax", f"not valid JSON: {exc}")]
    value, yaml_problems = parse_yaml(text, rel)
    return plain(value), problems + yaml_problems


def reads_back_as(rel: str, data: bytes, meant: Any) -> bool:
    """Whether ``data`` reads back (:func:`read_back`) as ``meant``, text compared NFC."""
    return bool(read_back(rel, data)[0] == _nfc(plain(meant)))


def _raw(data: bytes) -> str:
    """The text as written (BOM dropped, nothing normalised), for byte comparisons."""
    return data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")


def _front_matter_end(lines: list[str]) -> int | None:
    """The index of the line closing a note's front matter (as the loader finds it)."""
    return next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)


def written_records(rel: str, data: bytes) -> dict[Record, str]:
    """The records of a file and their exact text (a note: its front matter's records
    and its body). Raises :class:`EditError` when the file is not readable."""
    if rel.endswith(".json"):
        return {("*",): _raw(data)}
    try:
        text = _raw(data)
    except UnicodeDecodeError as exc:
        raise EditError("the file is not UTF-8 text") from exc
    if not rel.endswith(".md"):
        return records(text)
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {("body",): text}
    end = _front_matter_end(lines)
    if end is None:
        raise EditError("the front matter is never closed")
    found = {("front_matter", *key): value for key, value in records("\n".join(lines[1:end])).items()}
    found[("body",)] = "\n".join(lines[end + 1:])
    return found


def _difference(meant: Any, got: Any, path: str = "") -> str:
    """Where two values first differ, for the refusal message."""
    if isinstance(meant, dict) and isinstance(got, dict):
        for key in list(meant) + [k for k in got if k not in meant]:
            if key not in got:
                return f"{path}{key}: missing"
            if key not in meant:
                return f"{path}{key}: not meant to be there"
            if meant[key] != got[key]:
                return _difference(meant[key], got[key], f"{path}{key}.")
    if isinstance(meant, list) and isinstance(got, list):
        if len(meant) != len(got):
            return f"{path.rstrip('.')}: {len(got)} item(s) instead of {len(meant)}"
        for index, (a, b) in enumerate(zip(meant, got, strict=False)):
            if a != b:
                return _difference(a, b, f"{path.rstrip('.')}[{index}].")
    shown = repr(got)
    return f"{path.rstrip('.') or 'the file'}: reads back as {shown[:80]}{'…' if len(shown) > 80 else ''}"


def _shown(record: Record) -> str:
    return ".".join(str(part) if not isinstance(part, int) else f"[{part}]" for part in record).replace(".[", "[")


def _comments(rel: str, data: bytes) -> list[str]:
    """The comment lines of a YAML file (of a note: of its front matter), which belong
    to no record but are the person's all the same."""
    lines = _raw(data).replace("\r\n", "\n").split("\n")
    if rel.endswith(".md"):
        lines = lines[1:_front_matter_end(lines) or 0] if lines and lines[0].strip() == "---" else []
    return [line.strip() for line in lines if line.lstrip().startswith("#")]


def _analysis_problems(rel: str, data: bytes) -> Counter[tuple[str, str]]:
    """The problems ``review`` and ``analyse`` would find in a file of
    ``proposals/extractions/``: an extraction proposal, or a fingerprints record."""
    from generator.corpus.analysed import RECORD_NAME, RecordError, parse_record
    from generator.corpus.proposal import parse_extraction_proposal
    from generator.corpus.source import parse_yaml
    from generator.files import decode_text

    text, problems = decode_text(data, rel)
    value, yaml_problems = parse_yaml(text, rel) if text is not None else (None, [])
    problems += yaml_problems
    if rel.endswith("/" + RECORD_NAME):
        try:
            parse_record(_raw(data))
        except (RecordError, UnicodeDecodeError) as exc:
            problems.append(Problem(rel, None, "unreadable-record", str(exc)))
    elif value is not None:
        parse_extraction_proposal(rel, value, problems)
    return Counter((p.code, p.message) for p in problems if p.severity is not Severity.NOTICE)


def _loader_problems(content: Path, rel: str, data: bytes | None,
                     planned: dict[str, bytes]) -> Counter[tuple[str, str]]:
    """The problems the build's loader finds in file ``rel`` holding ``data``
    (warnings and errors, as (code, message), counted); companions (a note and its
    extractions file) are read as planned or as on disk."""
    if data is None:
        return Counter()
    from generator.corpus.load import SETTINGS_FILE, ContentFiles, parse_content

    def current(other: str) -> bytes | None:
        if other in planned:
            return planned[other]
        return _current(content, other)

    parts = rel.split("/")
    files = ContentFiles(settings=current(SETTINGS_FILE))
    if parts[0] in ("verdicts", "contestations", "oppositions") and len(parts) == 2:
        getattr(files, parts[0])[rel] = data
    elif parts[:2] == ["proposals", "sections"] and len(parts) == 4:
        files.proposals[rel] = data
    elif parts[:2] == ["proposals", "extractions"] and len(parts) == 4:  # not loaded by the build
        return _analysis_problems(rel, data)
    elif parts[0] == "notes" and rel.endswith((".extractions.yaml", ".md")):
        # a note and its extractions file are parsed together
        note = rel.removesuffix(".extractions.yaml") + ".md" if rel.endswith(".extractions.yaml") else rel
        sidecar = note.removesuffix(".md") + ".extractions.yaml"
        for other, kind in ((note, files.notes), (sidecar, files.extractions)):
            other_data = data if other == rel else current(other)
            if other_data is not None:
                kind[other] = other_data
    else:
        return Counter()
    _corpus, problems = parse_content(files)
    return Counter((p.code, p.message) for p in problems if p.file == rel and p.severity is not Severity.NOTICE)


def check(content: Path, write: PlannedWrite, planned: dict[str, bytes] | None = None) -> None:
    """Refuse ``write`` (:class:`WriteRefused`) unless it reads back as meant, keeps
    every record it does not mean to change, and adds no problem for the loader."""
    rel, planned = write.rel, planned or {}
    refused = f"{rel}: refused to write"
    value, problems = read_back(rel, write.data)
    blocking = [p for p in problems if p.severity is Severity.ERROR]
    if value is None or blocking:
        details = "; ".join(p.format_text() for p in blocking) or "unreadable"
        raise WriteRefused(f"{refused}: the new text would not be readable ({details}); nothing was written")
    meant = _nfc(plain(write.meant))
    if value != meant:  # (reads_back_as, with the difference said)
        raise WriteRefused(f"{refused}: the new text does not read back as meant ({_difference(meant, value)}); "
                           "nothing was written")
    old = _current(content, rel)
    if old is not None and write.changes != ALL:
        try:
            before = written_records(rel, old)
        except EditError as exc:
            raise WriteRefused(f"{refused}: {exc} now, so what it holds could not be kept; fix it first") from exc
        after = written_records(rel, write.data)
        moved = [record for record, text in before.items()
                 if record not in write.changes and after.get(record) != text]
        if Counter(_comments(rel, old)) - Counter(_comments(rel, write.data)):
            moved.append(("comments",))
        if moved:
            shown = ", ".join(_shown(r) for r in moved[:5]) + (f" and {len(moved) - 5} more" if len(moved) > 5 else "")
            raise WriteRefused(f"{refused}: it would change or drop what is written there ({shown}); "
                               "nothing was written")
    added = _loader_problems(content, rel, write.data, planned) - _loader_problems(content, rel, old, planned)
    added = +added
    if added:
        details = "; ".join(f"[{code}] {message}" for code, message in sorted(added)[:3])
        raise WriteRefused(f"{refused}: the build would then report {details}; nothing was written")


def _current(content: Path, rel: str) -> bytes | None:
    """What file ``rel`` holds now (None: no such file); a file that cannot be read is
    a clear error, not a traceback."""
    path = content / rel
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError as exc:
        raise WriteFailed(f"could not read {rel}: {exc.strerror or exc}; nothing was written") from exc


def _failure(rel: str, exc: OSError) -> WriteFailed:
    """The disk's refusal, naming the file (the change puts back what it wrote)."""
    reason = exc.strerror or str(exc)
    return WriteFailed(f"could not write {rel}: {reason}; the content directory is as it was "
                       "(free some space or make it writable, then run the command again)")


class ContentChange:
    """Writes into ``content`` that happen together or not at all (see the module's
    docstring). Each :meth:`write` is checked first; an exception inside the block —
    a refused write, a full disk, a check of the caller's — puts back every file
    already written."""

    def __init__(self, content: Path, command: str) -> None:
        self.content = content
        self.change = Change(content, command)
        self.planned: dict[str, bytes] = {}

    def __enter__(self) -> ContentChange:
        self.change.__enter__()
        return self

    def write(self, write: PlannedWrite) -> None:
        """Check ``write``, then make it (journaled, atomic)."""
        check(self.content, write, self.planned)
        self._make(write)

    def _make(self, write: PlannedWrite) -> None:
        self.planned[write.rel] = write.data
        try:
            self.change.write(write.rel, write.data)
        except OSError as exc:
            raise _failure(write.rel, exc) from exc

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.change.__exit__(kind, error, trace)
        if kind is not None and not self.change.restored:
            raise WriteFailed(f"{error}; but the files this change wrote before could not be put back (the disk "
                              "refuses): its journal .carnet-change.json is kept, the next command that writes "
                              "content puts them back, and 'build --strict' fails until then") from error


def write_content(content: Path, command: str, *writes: PlannedWrite) -> None:
    """Check every write, then make them all (one change)."""
    if not writes:
        return
    planned = {w.rel: w.data for w in writes}
    for write in writes:
        check(content, write, planned)
    if len(writes) == 1:  # one atomic rename is all or nothing already: no journal to recover
        from generator.files import write_atomic

        try:
            write_atomic(content / writes[0].rel, writes[0].data)
        except OSError as exc:
            raise _failure(writes[0].rel, exc) from exc
        return
    with ContentChange(content, command) as change:
        for write in writes:
            change._make(write)  # checked above, all of them before the first is made


def appended(content: Path, rel: str, key: str, items: list[Any], comment: str = "",
             render: Callable[[Any, str], list[str]] = block_item) -> PlannedWrite:
    """The write that appends ``items`` to the list ``key`` of the YAML file ``rel``
    (made when missing), in the file's own layout (:func:`generator.yamledit.append_items`)
    and with its BOM and line ends; what it must mean: the old value, its list longer
    by exactly ``items``."""
    from generator.files import read_text_file

    old = _current(content, rel)
    encode: Callable[[str], bytes]
    if old is None:
        text, encode = "", (lambda new: new.encode("utf-8"))
        value: Any = None
    else:
        read, problems = read_text_file(old, rel)
        if read is None:
            raise WriteRefused("; ".join(f"{p.location()}: {p.message}" for p in problems)
                               + " — fix the file (UTF-8 text) first; nothing was written")
        text, encode = read.text, read.encode
        value, problems = read_back(rel, old)  # None without problems: empty, or only comments
        if any(p.severity is Severity.ERROR for p in problems):
            raise WriteRefused(f"{rel}: refused to write: the file does not read now ("
                               + "; ".join(p.format_text() for p in problems) + "); fix it first, nothing was written")
    if value is not None and not isinstance(value, dict):
        raise WriteRefused(f"{rel}: refused to write: the file is not a mapping with '{key}:'; nothing was written")
    existing = (value or {}).get(key)
    if existing is not None and not isinstance(existing, list):
        raise WriteRefused(f"{rel}: refused to write: '{key}' is not a list; nothing was written")
    try:
        new_text = append_items(text, key, items, comment, render)
    except EditError as exc:
        raise WriteRefused(f"{rel}: refused to write: {exc}; nothing was written") from exc
    meant = dict(value or {})
    meant[key] = list(existing or []) + [plain(item) for item in items]
    return PlannedWrite(rel, encode(new_text), meant, frozenset({(key,)}))
