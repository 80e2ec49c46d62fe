"""Changes to several content files at once, all or nothing.

``carnet apply`` writes the article (or the note's extractions file), then the decisions
into the proposal. Each write is atomic, but a command killed between two of them would
leave half a change: the wiki edited and its proposal still pending, which a second
``apply`` would refuse as stale. So such a command keeps an undo journal:

    with Change(content, "carnet apply proposals/sections/wiki/1.yaml") as change:
        change.write("notes/wiki.md", data)
        change.write("proposals/sections/wiki/1.yaml", record)

Before each write, ``content/.carnet-change.json`` (hidden: the loader skips it)
records every file's bytes before the change and a digest of what is about to be
written. When the block ends normally the journal is removed; when it raises, the
files are put back. When the process was killed, the next writing command calls
:func:`recover` first, which puts back every file that still holds what it held before
or what the command wrote — never one edited by hand since, which is left and named.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path
from types import TracebackType

from generator.files import write_atomic

JOURNAL = ".carnet-change.json"


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


class Change:
    """One change to several files under ``root`` (see the module's docstring)."""

    def __init__(self, root: Path, command: str) -> None:
        self.root = root
        self.command = command
        self.before: dict[str, bytes | None] = {}
        self.written: dict[str, str | None] = {}
        self.restored = True  # False when a failed change could not be undone (its journal is kept)
        self.journaled = False  # a journal was written: until then no file of the change was

    def __enter__(self) -> Change:
        return self

    def write(self, rel: str, data: bytes | None) -> None:
        """Write ``data`` to ``root/rel`` (``None``: remove it), journal first."""
        path = self.root / rel
        if rel not in self.before:
            self.before[rel] = _read(path)
        self.written[rel] = _digest(data)
        self._save()
        if data is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, data)

    def _save(self) -> None:
        files = {rel: {"before": None if data is None else base64.b64encode(data).decode("ascii"),
                       "written": self.written[rel]} for rel, data in sorted(self.before.items())}
        record = {"command": self.command, "files": files}
        write_atomic(self.root / JOURNAL, json.dumps(record, indent=1, sort_keys=True).encode("utf-8"))
        self.journaled = True

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if not self.journaled:  # each write comes after its journal: none was made, there is nothing to undo
            return
        try:
            if kind is not None and self.before:
                _undo(self.root, {rel: (data, self.written[rel]) for rel, data in self.before.items()})
            (self.root / JOURNAL).unlink(missing_ok=True)
        except OSError:
            # the disk refuses even the undo: the journal stays, and the next writing command recovers
            self.restored = False


def _undo(root: Path, files: dict[str, tuple[bytes | None, str | None]]) -> list[str]:
    """Put back each file that holds what it held before or what the change wrote;
    returns the files left alone because someone changed them since."""
    kept = []
    for rel, (before, written) in sorted(files.items()):
        path = root / rel
        now = _digest(_read(path))
        if now == _digest(before):
            continue
        if now != written:
            kept.append(rel)
            continue
        if before is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, before)
    return kept


def interrupted(root: Path) -> str | None:
    """The command whose change a kill left half made under ``root``, if any."""
    path = root / JOURNAL
    if not path.is_file():
        return None
    try:
        return str(json.loads(path.read_bytes())["command"])
    except (ValueError, KeyError, TypeError):
        return "an interrupted command"


_TEMPORARY = re.compile(r"^\..+\.tmp-(\d+)$")
"""What :func:`generator.files.write_atomic` names the file it writes before its rename."""


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def leftover_temporaries(root: Path) -> list[str]:
    """The temporary files of atomic writes a killed command left under ``root`` (the
    process that was writing them no longer runs), by relative path."""
    found = []
    for directory, folders, files in os.walk(root):
        folders.sort()
        for name in sorted(files):
            match = _TEMPORARY.match(name)
            if match and int(match.group(1)) != os.getpid() and not _running(int(match.group(1))):
                found.append(Path(directory, name).relative_to(root).as_posix())
    return found


def recover(root: Path) -> list[str]:
    """Undo the change a killed command left half made, and remove the temporary files
    killed writes left; what to tell the user."""
    lines = []
    for rel in leftover_temporaries(root):
        (root / rel).unlink(missing_ok=True)
        lines.append(f"removed {rel}, a temporary file a killed command left")
    path = root / JOURNAL
    if not path.is_file():
        return lines
    try:
        record = json.loads(path.read_bytes())
        command = str(record["command"])
        files = {rel: (None if entry["before"] is None else base64.b64decode(entry["before"]), entry["written"])
                 for rel, entry in record["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        path.unlink()  # written atomically, so never half a journal: only a hand-made one is unreadable
        return [*lines, f"removed an unreadable {JOURNAL}"]
    kept = _undo(root, files)
    path.unlink()
    lines.append(f"'{command}' was interrupted: its files are back as they were before it; run it again")
    lines += [f"  {rel} was changed since, and is left as it is: check it" for rel in kept]
    return lines
