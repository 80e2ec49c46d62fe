"""Files read and written safely. Reading: content bytes → text (strict UTF-8, no NUL, LF,
NFC; :func:`decode_text`), and a text file read for an edit that keeps its byte-order mark and
line ends (:func:`read_text_file`). Writing: a temporary file beside the target, then an atomic
rename, so an interrupted command never leaves a half-written file."""

from __future__ import annotations

import hashlib
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from generator.problems import Problem


def decode_text(data: bytes, file: str) -> tuple[str | None, list[Problem]]:
    """Bytes of a content file → text: strict UTF-8, no NUL, LF line ends, NFC.

    NFC matters for anchoring: a quote typed with a composed «é» must match a note
    saved with a decomposed one.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [
            Problem(
                file, line, "encoding",
                f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                "Save the file as UTF-8.",
            )
        ]
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        return None, [
            Problem(file, line, "encoding", "the file contains a NUL byte (binary data?)",
                    "Remove the binary content; only text files belong here.")
        ]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return unicodedata.normalize("NFC", text), []


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()


BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class TextFile:
    """A text file read for an edit: its text with LF line ends, and how to write the
    edited text back as the file was laid out (a UTF-8 byte-order mark, CRLF line ends).

    Attributes:
        text: the text, without BOM, with LF line ends (NFC when read with ``nfc``).
    """

    text: str
    bom: bool
    crlf: bool

    def encode(self, text: str) -> bytes:
        """``text`` (LF line ends) as bytes laid out like the file that was read."""
        data = text.replace("\n", "\r\n") if self.crlf else text
        return (BOM if self.bom else b"") + data.encode("utf-8")


def read_text_file(data: bytes, file: str, nfc: bool = False) -> tuple[TextFile | None, list[Problem]]:
    """The bytes of content file ``file`` for an edit, or None and the problems (not
    UTF-8, a NUL byte) at their lines. Without ``nfc`` the text is kept as written, so
    the lines an edit does not touch are written back byte for byte."""
    decoded, problems = decode_text(data, file)
    if decoded is None or problems:
        return None, problems
    # CRLF throughout is written back CRLF; mixed line ends are kept as they are
    crlf = b"\r\n" in data and data.count(b"\n") == data.count(b"\r\n")
    raw = data.removeprefix(BOM).decode("utf-8")
    text = decoded if nfc else (raw.replace("\r\n", "\n") if crlf else raw)
    return TextFile(text, data.startswith(BOM), crlf), []


UNLISTED = frozenset({"pagefind", ".pagefind-next"})
"""The output directory's top folders its listing leaves out: the search bundle is rebuilt apart."""


def listing_line(path: str, size: int, mtime_ns: int) -> str:
    """A file of a built tree as its listing names it (path relative to the tree)."""
    return f"{path}\x00{size}\x00{mtime_ns}"


def listing_digest(lines: list[str]) -> str:
    """sha256 of a tree's listing (:func:`listing_line` of each file), whatever the order
    the lines came in (sorted here, in place)."""
    # one string sorted and hashed at once: 30,000 files at 5,000 notes
    lines.sort()
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()
