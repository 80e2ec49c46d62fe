"""Writing user-visible files safely: a temporary file beside the target, then an atomic
rename, so an interrupted command never leaves a half-written file. And reading a text
file for an edit that keeps its byte-order mark and line ends (:func:`read_text_file`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from generator.corpus.source import decode_text
from generator.problems import Problem


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
