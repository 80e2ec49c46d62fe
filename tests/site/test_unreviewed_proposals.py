"""No unreviewed text reaches the site (issue 56, item 4): a proposal nobody reviewed, and the
operations a review rejected or skipped, show in the wiki's audit panel as decisions (the
operation, the section it names when the article has it, the decision and its reason, the
date, who or what proposed it), never with the text nobody accepted: not the proposed
section text, nor a new heading, in any output file (Pagefind's fragments included).
``carnet check --strict`` names each proposal still waiting for review."""

from __future__ import annotations

import gzip
from pathlib import Path

from bs4 import BeautifulSoup

from generator.pipeline import build, check_content
from generator.problems import Severity
from support.cli import carnet_here
from support.corpus import write

PENDING = """id: 2026-01-10-attente
kind: sections
target: wiki-budget
article_sha256: sha256:0000
perimeter: []
provenance: {method: llm, model: modele-test, date: '2026-01-10'}
operations:
- op: AppendToSection
  heading: PENDINGHEADING
  after_heading: ''
  content: "Le modèle écrit PENDINGTEXT [[ext:a-budget]]."
- op: InsertSection
  heading: Nouvelle section PENDINGTITLE
  after_heading: ''
  content: "Le modèle résume PENDINGPRIVATE, tiré de [[ext:secret-ext]]."
"""
REVIEWED = """id: 2026-01-11-relue
kind: sections
target: wiki-budget
article_sha256: sha256:0000
perimeter: []
provenance: {method: llm, model: modele-test, date: '2026-01-11'}
operations:
- op: AppendToSection
  heading: ''
  after_heading: ''
  content: "Texte accepté ACCEPTEDTEXT [[ext:a-budget]]."
- op: AppendToSection
  heading: REJECTEDHEADING
  after_heading: ''
  content: "Le modèle invente REJECTEDTEXT sur [[ext:secret-ext]]."
- op: InsertSection
  heading: SKIPPEDTITLE
  after_heading: ''
  content: "SKIPPEDTEXT [[ext:a-budget]]."
applied:
  date: '2026-01-12'
  results:
  - {index: 0, decision: accepted}
  - index: 1
    decision: rejected
    reason: "section 'REJECTEDHEADING' not found"
    reason_code: heading-not-found
    reason_values: {heading: REJECTEDHEADING}
  - {index: 2, decision: skipped, reason: not chosen (--only)}
"""
UNACCEPTED = ["PENDINGHEADING", "PENDINGTEXT", "PENDINGTITLE", "PENDINGPRIVATE", "REJECTEDHEADING", "REJECTEDTEXT",
              "SKIPPEDTITLE", "SKIPPEDTEXT"]


def _proposals(small: Path) -> None:
    write(small, "proposals/sections/wiki-budget/2026-01-10-attente.yaml", PENDING)
    write(small, "proposals/sections/wiki-budget/2026-01-11-relue.yaml", REVIEWED)


def _every_output(site: Path) -> dict[str, bytes]:
    """Every file of the site, Pagefind's compressed fragments read uncompressed."""
    files = {}
    for path in sorted(site.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            if "pagefind" in path.parts and data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            files[path.relative_to(site).as_posix()] = data
    return files


def test_text_nobody_accepted_is_in_no_output_and_the_decisions_are(small: Path, tmp_path: Path) -> None:
    _proposals(small)
    build(small, tmp_path / "site")
    files = _every_output(tmp_path / "site")
    leaks = [(name, marker) for name, data in files.items() for marker in UNACCEPTED if marker.encode() in data]
    assert leaks == [], "text nobody accepted was published"
    page = BeautifulSoup(files["notes/wiki-budget.html"], "html.parser")
    proposals = page.select("#proposals details.proposal")
    assert len(proposals) == 2
    summaries = [p.select_one("summary").get_text(" ", strip=True) for p in proposals]
    assert "par un modèle" in summaries[0] and "modele-test" in summaries[0] and "en attente" in summaries[0]
    assert "proposée le 2026-01-10" in summaries[0], "the date it was proposed"
    assert "appliquée le 2026-01-12" in summaries[1]
    rows = [[o["class"][1], o.select_one("code").get_text()] for p in proposals for o in p.select(".operation")]
    assert rows == [["decision-pending", "AppendToSection"], ["decision-pending", "InsertSection"],
                    ["decision-accepted", "AppendToSection"], ["decision-rejected", "AppendToSection"],
                    ["decision-skipped", "InsertSection"]], "every operation is there, as a decision"
    operations = [o for p in proposals for o in p.select(".operation")]
    assert "titre non publié" in operations[0].get_text() and "titre non publié" in operations[1].get_text()
    assert operations[3].select_one(".reason").get_text() == "Section « … » introuvable.", "the reason, worded"
    assert "ACCEPTEDTEXT" in operations[2].select_one("pre.content").get_text(), "accepted text is shown"
    assert all(o.select_one("pre.content") is None for n, o in enumerate(operations) if n != 2)
    assert "secret-ext" not in page.decode()


def test_check_strict_names_each_proposal_waiting_for_review(small: Path) -> None:
    assert carnet_here("check", small, "--strict").code == 0, "no proposal: nothing to say"
    _proposals(small)
    warnings = [p for p in check_content(small).problems if p.code == "pending-proposal"]
    assert [(p.file, p.severity) for p in warnings] == [
        ("proposals/sections/wiki-budget/2026-01-10-attente.yaml", Severity.WARNING)], "the reviewed one is not"
    assert "2 operation(s)" in warnings[0].message and "carnet review" in warnings[0].hint
    strict = carnet_here("check", small, "--strict")
    assert strict.code == 1 and "2026-01-10-attente.yaml" in strict.text, strict
    assert carnet_here("check", small).code == 0, "a warning: only --strict fails on it"
