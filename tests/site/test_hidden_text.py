"""Nothing hidden is published (issue 57): an HTML comment in a note is cut out before
anything reads the note (its lines kept for messages), so no output holds a byte of it
and coverage counts only the elements a reader sees; a comment written in code is code."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.markup import comment_ranges, without_comments
from generator.pipeline import build, check_content
from support.corpus import site_files, write

NOTE = "notes/conseil-c.md"
FRONT = "---\ntitle: Séance C\ndate: 2025-03-01\nauthors: [Yann Realname]\nnotebooks:\n  conseil:\n    theme: [Budget]\n---\n"
VISIBLE = """## Présents

- Alice Visible
<!-- absents excusés :
- HIDDENNAMEONE
- HIDDENNAMETWO
-->
- Bruno Visible

Le budget est voté <!-- HIDDENINLINE --> à l'unanimité.

Le code `<!-- CODESPAN -->` reste du code.

```
<!-- CODEFENCE -->
```

Dernière ligne.
"""


def test_comments_are_cut_keeping_lines_and_code() -> None:
    cut = without_comments(VISIBLE)
    assert cut.count("\n") == VISIBLE.count("\n")
    assert "HIDDEN" not in cut and "<!--" not in cut.replace("<!-- CODESPAN -->", "").replace("<!-- CODEFENCE -->", "")
    assert "`<!-- CODESPAN -->`" in cut and "\n<!-- CODEFENCE -->\n" in cut
    assert cut.split("\n").index("Dernière ligne.") == VISIBLE.split("\n").index("Dernière ligne.")
    # a comment in a quote running over two lines: the quote markers of its lines go with it
    assert without_comments("> a <!-- b\n> c --> d\n") == "> a \n d\n"
    assert comment_ranges("no comment here") == []


def test_a_comment_is_published_nowhere_and_counted_in_no_coverage(small: Path, tmp_path: Path) -> None:
    write(small, NOTE, FRONT + VISIBLE)
    analysis = check_content(small)
    elements = analysis.anchored["conseil-c"].document.elements
    texts = [element.text for element in elements]
    assert not [text for text in texts if "HIDDEN" in text or "absents" in text]
    assert texts[:3] == ["Présents", "Alice Visible", "Bruno Visible"]
    body_line = FRONT.count("\n") + 1
    last = next(e for e in elements if e.text == "Dernière ligne.")
    assert last.line == body_line + VISIBLE.split("\n").index("Dernière ligne.")  # line numbers kept
    assert len(elements) == 7  # heading, two items, two paragraphs, the code paragraph, the fence… and the last one
    out = tmp_path / "site"
    build(small, out)  # with search: the index too
    files = site_files(out)
    assert any(path.startswith("pagefind/") for path in files)
    import gzip

    for path, data in files.items():
        raw = gzip.decompress(data) if path.startswith("pagefind/fragment/") else data
        for secret in (b"HIDDENNAMEONE", b"HIDDENNAMETWO", b"HIDDENINLINE", b"absents excus"):
            assert secret not in raw, (path, secret)
    page = files["notes/conseil-c.html"].decode("utf-8")
    assert "CODESPAN" in page and "CODEFENCE" in page  # code is code
    assert "Bruno Visible" in page


@pytest.mark.parametrize("quote", ["HIDDENNAMEONE"])
def test_an_extraction_quoting_a_comment_detaches_and_says_so(small: Path, quote: str) -> None:
    write(small, NOTE, FRONT + VISIBLE)
    write(small, "notes/conseil-c.extractions.yaml",
          f"extractions:\n  - id: c-hidden\n    quote: {quote}\n    kind: fait\n    author: Yann Realname\n")
    analysis = check_content(small)
    assert not analysis.anchored["conseil-c"].anchors["c-hidden"].status.is_live
    assert [p for p in analysis.problems if p.code == "detached-anchor" and "c-hidden" in p.message]


def test_an_unclosed_comment_is_a_warning_at_its_line(small: Path) -> None:
    write(small, NOTE, FRONT + "Visible.\n\n<!-- never closed\n\nHIDDENTAIL\n")
    analysis = check_content(small)
    (problem,) = [p for p in analysis.problems if p.code == "unclosed-comment"]
    assert problem.file == NOTE and problem.line == FRONT.count("\n") + 3
    assert [e.text for e in analysis.anchored["conseil-c"].document.elements] == ["Visible."]


def test_an_adopted_synthesis_holding_a_comment_checks_cleanly(small: Path) -> None:
    import datetime as dt

    from generator.commands.adopt import adopt

    file = small / "notes" / "synthese-2025.md"
    file.write_text(file.read_text(encoding="utf-8") + "\n<!-- HIDDENNOTE du secrétariat -->\n", encoding="utf-8")
    adopt(file, "Conseil des élèves", dt.date(2025, 4, 10))  # raises if the audit's hash differs from adopt's
    assert [p for p in check_content(small).errors if p.code == "adopted-act-changed"] == []
    assert "HIDDENNOTE" in file.read_text(encoding="utf-8")  # the file keeps its comment


def test_applying_a_proposal_keeps_the_articles_comments(small: Path) -> None:
    import datetime as dt

    from generator.commands.proposals import apply, propose

    wiki = small / "notes" / "wiki-budget.md"
    wiki.write_text(wiki.read_text(encoding="utf-8") + "\n<!-- HIDDENTODO : relire -->\n", encoding="utf-8")
    path = propose(small, "wiki-budget", today=dt.date(2025, 4, 2)).path
    assert [r.accepted for r in apply(path, today=dt.date(2025, 4, 2))] == [True]
    after = wiki.read_text(encoding="utf-8")
    assert "<!-- HIDDENTODO : relire -->" in after and "## Pièces à intégrer" in after
    assert check_content(small).errors == []


def test_applying_refuses_when_a_comment_would_change_what_was_reviewed(small: Path) -> None:
    """Review reads the article as the build does (comments cut); apply writes the file with its
    comments. Where a comment holds what an operation acts on, the two would differ: refused,
    nothing written, the comment's line named."""
    import datetime as dt

    from generator.commands.proposals import ProposalError, apply, propose

    wiki = small / "notes" / "wiki-budget.md"
    path = propose(small, "wiki-budget", today=dt.date(2025, 4, 2)).path
    wiki.write_text(wiki.read_text(encoding="utf-8") + "\n<!--\n## Pièces à intégrer\n-->\n", encoding="utf-8")
    # the proposal was made against the file before the comment: made again, the same operations
    path = propose(small, "wiki-budget", today=dt.date(2025, 4, 2)).path
    before = wiki.read_bytes()
    with pytest.raises(ProposalError, match=r"HTML comment.*wiki-budget.md:\d+"):
        apply(path, today=dt.date(2025, 4, 2))
    assert wiki.read_bytes() == before
