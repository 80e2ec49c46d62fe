"""``carnet adopt FILE --by NAME [--date D] [--no-perimeter]``: adopt a directed synthesis.

Freezes its perimeter in the file (the notes and the extractions it was given, with
their quotes and hashes) unless it was recorded at production, records who adopted it
and when with a hash of body + adoption block, and appends ``adopted`` to its history.
The rest of the file is left exactly as written; the write goes through the write seam
(read back, then swapped in atomically).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from generator.corpus.model import NoteType
from generator.corpus.source import split_front_matter
from generator.files import decode_text, read_text_file
from generator.pipeline import check_content
from generator.problems import CarnetError
from generator.synthesis.audit import default_spec
from generator.synthesis.lifecycle import adoption_hash, quote_hash
from generator.synthesis.perimeter import live_perimeter, perimeter_extractions
from generator.writes import PlannedWrite, read_back, write_content


class AdoptionError(CarnetError):
    """The synthesis cannot be adopted as it stands."""


def content_dir_of(file: Path) -> Path:
    for folder in file.resolve().parents:
        if (folder / "carnet.yaml").is_file():
            return folder
    raise AdoptionError(f"{file} is not inside a content directory (no carnet.yaml above it)")


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def adopt(file: Path, by: str, date: dt.date, record_perimeter: bool = True) -> str:
    """Adopt the synthesis in ``file``; returns a one-line summary."""
    if not by.strip():
        raise AdoptionError("say who adopts the act (--by)")
    content = content_dir_of(file)
    rel = file.resolve().relative_to(content.resolve()).as_posix()
    analysis = check_content(content)
    note = next((n for n in analysis.corpus.notes.values() if n.source.file == rel), None)
    if note is None:
        raise AdoptionError(f"{file} is not a loaded note (check it with 'carnet check')")
    if note.type is not NoteType.SYNTHESIS:
        raise AdoptionError(f"{file} is a {note.type.value}, not a directed synthesis ('type: synthesis')")
    errors = [p for p in analysis.problems if p.is_error and p.file == rel]
    if errors:
        raise AdoptionError(f"{file} has errors; fix them first:\n" + "\n".join(p.format_text() for p in errors))
    spec = note.article
    if spec.adopted or spec.adoption is not None:
        raise AdoptionError(f"{note.slug} is already adopted: adopted acts are immutable; write a new synthesis "
                            "that supersedes it")
    if spec.history and spec.history[0].date and date < spec.history[0].date:
        raise AdoptionError("the adoption date is earlier than the act's history")

    raw = file.read_bytes()
    read, problems = read_text_file(raw, rel)  # as written (not normalised): the lines kept stay byte for byte
    if read is None:
        raise AdoptionError(problems[0].format_text())
    text = read.text
    old, _problems = read_back(rel, raw)
    meant = dict(old["front_matter"])
    lines = text.split("\n")
    doc = split_front_matter(text, rel)
    closing = doc.body_line - 2  # index of the closing '---' line
    added: list[str] = []
    frozen = 0
    if spec.recorded is None and record_perimeter:
        perimeter = spec.perimeter or default_spec(note)
        if perimeter is None:
            raise AdoptionError(f"{note.slug} states no perimeter: add 'perimeter:' or use --no-perimeter for a "
                                "historical act whose perimeter was never recorded")
        notes = live_perimeter(analysis.corpus, perimeter)
        ids = perimeter_extractions(analysis.corpus, notes)
        extraction = {e.id: e for n in notes for e in analysis.corpus.notes[n].extractions}
        added += ["proposed:", f"  notes: [{', '.join(notes)}]", "  extractions:" + ("" if ids else " []")]
        for extraction_id in ids:
            item = extraction[extraction_id]
            added += [f"    - id: {item.id}", f"      note: {item.note}", f"      quote: {_q(item.quote)}",
                      f"      sha256: {_q(quote_hash(item.quote))}"]
        frozen = len(ids)
        meant["proposed"] = {"notes": list(notes), "extractions": [
            {"id": extraction[i].id, "note": extraction[i].note, "quote": extraction[i].quote,
             "sha256": quote_hash(extraction[i].quote)} for i in ids]}
    added += ["adoption:", f"  by: {_q(by.strip())}", f"  date: {date.isoformat()}", "  hash: PENDING"]
    history_line = note.field_lines.get("history")
    if history_line is None:
        first = note.date or date
        added += ["history:", f"  - {{status: draft, date: {first.isoformat()}}}",
                  f"  - {{status: adopted, date: {date.isoformat()}}}"]
        new_lines = lines[:closing] + added + lines[closing:]
        meant["history"] = [{"status": "draft", "date": first}, {"status": "adopted", "date": date}]
    else:
        # append to the existing history (a block list), right after its last item
        key_line = history_line - 1
        if lines[key_line].split(":", 1)[1].strip():
            raise AdoptionError("write 'history:' as a block list (one '- {status: …, date: …}' per line) "
                                "so that adoption can append to it")
        last, items = key_line, []
        while last + 1 < closing and lines[last + 1].startswith((" ", "-")):
            last += 1
            if lines[last].lstrip().startswith("- "):
                items.append(lines[last])
        indent = items[-1][: len(items[-1]) - len(items[-1].lstrip())] if items else "  "
        entry = f"{indent}- {{status: adopted, date: {date.isoformat()}}}"
        new_lines = lines[:last + 1] + [entry] + lines[last + 1:closing] + added + lines[closing:]
        meant["history"] = list(meant.get("history") or []) + [{"status": "adopted", "date": date}]
    draft = "\n".join(new_lines)
    # the hash is of the text as the build reads it (NFC, LF line ends)
    parsed = split_front_matter(decode_text(read.encode(draft), rel)[0] or "", rel)
    meta = parsed.meta
    # of the body as the loader read it (no forbidden character, no HTML comment): what the audit hashes
    # again; adopting edits only the front matter, so the loaded body is the draft's
    digest = adoption_hash(note.body, meta.get("perimeter"), meta.get("proposed"), by.strip(), date)
    final = draft.replace("  hash: PENDING", f"  hash: {digest}", 1)
    meant["adoption"] = {"by": by.strip(), "date": date, "hash": digest}
    # read back before the swap: the old fields byte for byte, plus exactly the adoption
    write_content(content, f"carnet adopt {rel}",
                  PlannedWrite(rel, read.encode(final), {"front_matter": meant, "body": old["body"]}))
    after = check_content(content)
    still = [p for p in after.problems if p.is_error and p.file == rel]
    if still:
        raise AdoptionError("the adopted file does not check cleanly:\n" + "\n".join(p.format_text() for p in still))
    perimeter_note = f"perimeter frozen: {frozen} extraction(s)" if frozen or (spec.recorded is None and \
        record_perimeter) else ("perimeter recorded at production kept" if spec.recorded else "no perimeter recorded")
    return f"adopted {note.slug} on {date.isoformat()} by {by.strip()} ({perimeter_note}; {digest})"
