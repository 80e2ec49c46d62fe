"""``carnet check --fix-anchors [--write]``: show the quote each relocated anchor would
get, and write it only when asked. Detached anchors are listed, never changed;
nothing is deleted. Files are rewritten atomically, with their comments and layout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.anchoring import AnchorStatus
from generator.anchoring.fix import current_quote, replace_value
from generator.files import read_text_file, write_atomic
from generator.pipeline import Analysis


@dataclass(frozen=True)
class AnchorFix:
    """One relocated extraction and the quote the note's text now gives it."""

    file: str
    line: int
    extraction: str
    old: str
    new: str
    diff: str


def relocated_fixes(analysis: Analysis) -> list[AnchorFix]:
    fixes = []
    for slug, note in analysis.corpus.notes.items():
        anchored = analysis.anchored[slug]
        for extraction in note.extractions:
            anchor = anchored.anchors[extraction.id]
            if anchor.status is AnchorStatus.RELOCATED:
                fixes.append(AnchorFix(extraction.source.file, extraction.source.line, extraction.id,
                                       extraction.quote, current_quote(anchor, anchored.document.elements),
                                       anchor.reason))
    return sorted(fixes, key=lambda f: (f.file, f.line))


def write_fixes(content_dir: Path, analysis: Analysis, fixes: list[AnchorFix]) -> list[str]:
    """Rewrite the quotes of ``fixes`` in their files; returns the files written."""
    spans = {e.id: e.quote_span for n in analysis.corpus.notes.values() for e in n.extractions}
    by_file: dict[str, list[AnchorFix]] = {}
    for fix in fixes:
        by_file.setdefault(fix.file, []).append(fix)
    written = []
    for rel, file_fixes in sorted(by_file.items()):
        path = content_dir / rel
        # spans are offsets in the text the loader read: decoded the same way (NFC)
        read, _problems = read_text_file(path.read_bytes(), rel, nfc=True)
        if read is None:
            continue
        text = read.text
        # later offsets first, so earlier spans stay valid
        for fix in sorted(file_fixes, key=lambda f: spans[f.extraction].start, reverse=True):
            text = replace_value(text, spans[fix.extraction], fix.new)
        write_atomic(path, read.encode(text))
        written.append(rel)
    return written
