"""``carnet check --fix-anchors [--write]``: show the quote each relocated anchor would
get, and write it only when asked. Detached anchors are listed, never changed;
nothing is deleted. Files are rewritten atomically, with their comments and layout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.anchoring import AnchorStatus
from generator.anchoring.fix import current_quote, replace_value, written_value
from generator.corpus.source import YamlMap, parse_yaml, plain
from generator.files import read_text_file
from generator.pipeline import CheckedContent
from generator.writes import PlannedWrite, reads_back_as, write_content


@dataclass(frozen=True)
class AnchorFix:
    """One relocated extraction and the quote the note's text now gives it."""

    file: str
    line: int
    extraction: str
    old: str
    new: str
    diff: str


def relocated_fixes(analysis: CheckedContent) -> list[AnchorFix]:
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


def write_fixes(content_dir: Path, analysis: CheckedContent, fixes: list[AnchorFix]) -> list[str]:
    """Rewrite the quotes of ``fixes`` in their files; returns the files written. Each
    file goes through the write seam: it must read back with exactly those quotes
    changed, every other record byte for byte; all the files change, or none."""
    by_file: dict[str, list[AnchorFix]] = {}
    for fix in fixes:
        by_file.setdefault(fix.file, []).append(fix)
    writes = []
    for rel, file_fixes in sorted(by_file.items()):
        # the text as written (not normalised), and where each quote lies in it: the
        # lines the fixes do not touch are written back byte for byte
        read, _problems = read_text_file((content_dir / rel).read_bytes(), rel)
        located, _ = parse_yaml(read.text, rel) if read is not None else (None, [])
        if read is None or not isinstance(located, dict) or not isinstance(located.get("extractions"), list):
            continue
        old = plain(located)
        spans = {item.get("id"): item.value_spans["quote"] for item in located["extractions"]
                 if isinstance(item, YamlMap) and "quote" in item.value_spans}
        file_fixes = [fix for fix in file_fixes if fix.extraction in spans]
        items = old["extractions"]
        for inline in (False, True):
            # the quote as a person writes it (a literal block when it spans lines); where
            # that cannot stand (a flow list), on one double-quoted line
            text = read.text
            # later offsets first, so earlier spans stay valid
            for fix in sorted(file_fixes, key=lambda f: spans[f.extraction].start, reverse=True):
                text = replace_value(text, spans[fix.extraction], fix.new, inline)
            new_quotes = {fix.extraction: fix.new if inline else
                          written_value(read.text, spans[fix.extraction], fix.new) for fix in file_fixes}
            changed = [index for index, item in enumerate(items)
                       if isinstance(item, dict) and item.get("id") in new_quotes]
            meant = dict(old, extractions=[dict(item, quote=new_quotes[item["id"]]) if index in changed else item
                                           for index, item in enumerate(items)])
            if reads_back_as(rel, read.encode(text), meant):
                break
        writes.append(PlannedWrite(rel, read.encode(text), meant,
                                   frozenset(("extractions", index) for index in changed)))
    write_content(content_dir, "carnet check --fix-anchors --write", *writes)
    return [write.rel for write in writes]
