"""The write seam (generator/writes.py) and the layout-keeping YAML append
(generator/yamledit.py): every layout a person may write a list in is extended in
place, reads back as meant, and keeps every old record byte for byte; anything else is
refused with nothing written."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
import yaml

from generator.writes import ALL, PlannedWrite, WriteFailed, WriteRefused, appended, check, write_content
from generator.yamledit import EditError, append_items, one_line, records

ITEM = {"claim": "Une affirmation\navec deux lignes", "verdict": "supported",
        "rationale": "Oui : « ça » # pas un commentaire",
        "provenance": {"method": "llm", "model": "m\n- claim: injecté", "date": "2026-12-01"}}

LAYOUTS = {
    "indent 0": "verdicts:\n- claim: a\n  verdict: supported\n- claim: b\n  verdict: partial\n",
    "indent 2": "verdicts:\n  - claim: a\n    verdict: supported\n  - claim: b\n    verdict: partial\n",
    "indent 4": "verdicts:\n    - claim: a\n      verdict: supported\n    - claim: b\n      verdict: partial\n",
    "comments between records": "# head\nverdicts:\n- claim: a  # inline\n  verdict: supported\n\n# between\n\n"
                                 "- claim: b\n  verdict: partial\n# tail\n",
    "flow": "verdicts: [{claim: a, verdict: supported}, {claim: b, verdict: partial}]\n",
    "flow on several lines": "verdicts: [\n  {claim: a, verdict: supported},\n  {claim: b, verdict: partial}\n]\n",
    "quoted keys": '"verdicts":\n  - "claim": "a"\n    \'verdict\': supported\n',
    "no final newline": "verdicts:\n- claim: a\n  verdict: supported",
    "a key after the list": "verdicts:\n- claim: a\n  verdict: |\n    supported\n\nnote: la fin\n",
    "empty flow list": "verdicts: []  # rien encore\n",
    "flow with a trailing comma": "verdicts: [\n  {claim: a},\n  {claim: b},\n]\n",
    "empty value": "verdicts:\n",
    "explicit null": "verdicts: ~\n",
    "no such key": "# a file with only a comment\n",
    "empty file": "",
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_appending_keeps_the_layout_and_reads_back(layout: str) -> None:
    text = LAYOUTS[layout]
    new = append_items(text, "verdicts", [ITEM, {"claim": "é"}], comment="added by 'carnet verify'\x1b[31m\nnext")
    old = yaml.safe_load(text) or {}
    assert yaml.safe_load(new) == dict(old, verdicts=list(old.get("verdicts") or []) + [ITEM, {"claim": "é"}])
    before = records(text)
    after = records(new)
    assert all(after[key] == value for key, value in before.items() if key != ("verdicts",)), \
        "every old record keeps its exact text"
    for line in new.split("\n"):
        assert "\x1b" not in line and not line.lstrip().startswith("- claim: injecté")
    if not layout.startswith(("flow", "explicit")):
        assert "# added by 'carnet verify'\\x1b[31m\\x0anext" in new, "one comment line, control characters escaped"


@pytest.mark.parametrize("text", ["{verdicts: [{claim: a}]}\n", "verdicts: 3\n", "- a\n- b\n", "verdicts: [a\n"])
def test_what_cannot_be_extended_in_place_is_refused(text: str) -> None:
    with pytest.raises(EditError):
        append_items(text, "verdicts", [ITEM])


def test_one_line_makes_every_line_break_and_control_visible() -> None:
    assert one_line("a\nb\rc\u2028d\x1b[0m\u202ee") == "a\\x0ab\\x0dc\\u2028d\\x1b[0m\\u202ee"


def _content(tmp_path: Path) -> Path:
    content = tmp_path / "content"
    (content / "verdicts").mkdir(parents=True)
    (content / "carnet.yaml").write_text("title: T\nbase_url: https://example.org/\nlanguage: fr\nlicence: CC0\n",
                                         encoding="utf-8")
    return content


VERDICT = {"claim": "x", "claim_sha256": "sha256:1", "source": "ext:a", "source_sha256": "sha256:2",
           "verdict": "supported", "rationale": "Oui.", "provenance": {"method": "llm", "date": "2026-12-01"}}


HUMAN = {
    "indent 0": "verdicts:\n- claim: a\n  provenance: {method: human}\n- claim: b\n  provenance:\n    method: human\n",
    "indent 4": "verdicts:\n    - claim: a\n      provenance: {method: human}\n",
    "flow": "verdicts: [{claim: a, provenance: {method: human}}, {claim: b, provenance: {method: human}}]\n",
    "comments between records": "# à la main\nverdicts:\n  - claim: a  # celle-ci\n    provenance: {method: human}\n"
                                 "\n  # puis\n  - claim: b\n    provenance: {method: human}\n",
}


@pytest.mark.parametrize("layout", sorted(HUMAN))
@pytest.mark.parametrize("bom, crlf", [(False, False), (True, False), (False, True), (True, True)])
def test_a_verdicts_file_is_extended_with_its_bom_and_line_ends(tmp_path: Path, layout: str, bom: bool,
                                                                crlf: bool) -> None:
    content = _content(tmp_path)
    text = HUMAN[layout]
    data = (b"\xef\xbb\xbf" if bom else b"") + (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")
    path = content / "verdicts" / "wiki.yaml"
    path.write_bytes(data)
    write_content(content, "test", appended(content, "verdicts/wiki.yaml", "verdicts", [VERDICT]))
    new = path.read_bytes()
    assert new.startswith(b"\xef\xbb\xbf") == bom
    assert (b"\n" not in new.replace(b"\r\n", b"")) if crlf else (b"\r" not in new)
    old_records = records(data.decode("utf-8-sig"))
    new_records = records(new.decode("utf-8-sig"))
    assert old_records and all(new_records[k] == v for k, v in old_records.items())
    parsed = yaml.safe_load(new.decode("utf-8-sig"))["verdicts"]
    assert parsed[:-1] == yaml.safe_load(text)["verdicts"] and parsed[-1] == VERDICT


def test_a_write_that_would_not_read_back_as_meant_is_refused(tmp_path: Path) -> None:
    content = _content(tmp_path)
    path = content / "verdicts" / "wiki.yaml"
    path.write_text(LAYOUTS["indent 0"], encoding="utf-8")
    before = path.read_bytes()
    # the bug of the first wave: records appended at another indentation than the file's
    broken = before + b"  - claim: x\n    verdict: supported\n"
    meant = {"verdicts": yaml.safe_load(LAYOUTS["indent 0"])["verdicts"] + [{"claim": "x", "verdict": "supported"}]}
    with pytest.raises(WriteRefused, match="would not be readable"):
        write_content(content, "test", PlannedWrite("verdicts/wiki.yaml", broken, meant))
    with pytest.raises(WriteRefused, match=r"does not read back as meant \(verdicts\[2\]\.verdict"):
        write_content(content, "test", PlannedWrite("verdicts/wiki.yaml", before + b"- claim: x\n  verdict: partial\n",
                                                    meant))
    assert path.read_bytes() == before


def test_a_write_that_moves_or_drops_a_record_is_refused(tmp_path: Path) -> None:
    content = _content(tmp_path)
    path = content / "verdicts" / "wiki.yaml"
    path.write_text("verdicts:\n- claim: a\n  verdict: supported   # vérifié à la main\n", encoding="utf-8")
    before = path.read_bytes()
    same_meaning = b"verdicts:\n- claim: a\n  verdict: supported\n"
    with pytest.raises(WriteRefused, match=r"change or drop what is written there \(verdicts\[0\]\)"):
        check(content, PlannedWrite("verdicts/wiki.yaml", same_meaning, yaml.safe_load(same_meaning)))
    check(content, PlannedWrite("verdicts/wiki.yaml", same_meaning, yaml.safe_load(same_meaning), ALL))
    with pytest.raises(WriteRefused, match="change or drop"):
        check(content, PlannedWrite("verdicts/wiki.yaml", b"verdicts: []\n", {"verdicts": []}))
    assert path.read_bytes() == before


def test_a_write_that_drops_a_comment_is_refused(tmp_path: Path) -> None:
    """Comments belong to no record, and are the person's all the same."""
    content = _content(tmp_path)
    path = content / "verdicts" / "wiki.yaml"
    path.write_text("# Vérifiés à la main, ne pas effacer\nverdicts:\n- claim: a\n", encoding="utf-8")
    rewritten = b"verdicts:\n- claim: a\n- claim: b\n"
    with pytest.raises(WriteRefused, match=r"change or drop what is written there \(comments\)"):
        check(content, PlannedWrite("verdicts/wiki.yaml", rewritten, yaml.safe_load(rewritten),
                                    frozenset({("verdicts",)})))


def test_an_empty_or_comment_only_file_is_extended(tmp_path: Path) -> None:
    content = _content(tmp_path)
    path = content / "verdicts" / "wiki.yaml"
    path.write_text("# à remplir\n", encoding="utf-8")
    write_content(content, "test", appended(content, "verdicts/wiki.yaml", "verdicts", [VERDICT]))
    assert path.read_text(encoding="utf-8").startswith("# à remplir\nverdicts:\n- claim: x\n")


def test_no_command_writes_into_content_but_through_the_seam() -> None:
    """A guard for future commands: outside the seam (and the site's output, the build
    cache and the file helpers it uses), no module of the package writes a file."""
    import re

    root = Path(__file__).resolve().parents[1] / "generator"
    allowed = {"writes.py", "journal.py", "files.py", "cache.py"}
    pattern = re.compile(r"write_atomic\(|\.write_bytes\(|\.write_text\(|open\([^)]*[\"'][wa]b?[\"']|os\.replace\(")
    found = [f"{path.relative_to(root)}:{number}" for path in sorted(root.rglob("*.py"))
             # the engine writes the output tree and the build cache, never content/
             if path.name not in allowed and path.relative_to(root).parts[0] not in ("site", "engine")
             for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1)
             if pattern.search(line) and not line.lstrip().startswith("#")]
    assert found == [], "write through generator/writes.py instead"


def test_a_write_the_loader_would_report_is_refused(tmp_path: Path) -> None:
    content = _content(tmp_path)
    bad = dict(VERDICT, verdict="excellent")
    with pytest.raises(WriteRefused, match=r"\[invalid-value\] verdict 'excellent' is unknown"):
        write_content(content, "test", appended(content, "verdicts/wiki.yaml", "verdicts", [bad]))
    assert not (content / "verdicts" / "wiki.yaml").exists()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
@pytest.mark.parametrize("files", [1, 2])
def test_a_disk_that_refuses_is_a_clear_error_and_the_content_stays(tmp_path: Path, monkeypatch, code: int,
                                                                    files: int) -> None:
    import os

    import generator.files

    content = _content(tmp_path)
    (content / "verdicts" / "a.yaml").write_text(LAYOUTS["indent 2"], encoding="utf-8")
    (content / "verdicts" / "b.yaml").write_text(LAYOUTS["flow"], encoding="utf-8")
    before = {p: p.read_bytes() for p in sorted(content.rglob("*")) if p.is_file()}
    writes = [appended(content, f"verdicts/{name}.yaml", "verdicts", [VERDICT]) for name in "ab"[:files]]
    real = generator.files.write_atomic
    calls = []

    def failing(path: Path, data: bytes) -> None:
        calls.append(path.name)
        if path.name == writes[-1].rel.split("/")[-1]:  # the last content file of the change
            raise OSError(code, os.strerror(code), str(path))
        real(path, data)

    monkeypatch.setattr(generator.files, "write_atomic", failing)
    monkeypatch.setattr("generator.journal.write_atomic", failing)
    with pytest.raises(WriteFailed, match=rf"could not write {writes[-1].rel}: {os.strerror(code)}"):
        write_content(content, "test", *writes)
    assert {p: p.read_bytes() for p in sorted(content.rglob("*")) if p.is_file()} == before
    if files == 2:
        assert calls[0] == ".carnet-change.json", "a change of several files is journaled"
