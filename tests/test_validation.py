"""Every validation error is reported with its file, its line and what to do.

Each case changes one thing in a copy of the fixture and expects one problem; the
expected line is found in the changed file, never typed by hand.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from generator.pipeline import analyse
from generator.problems import Severity
from support.corpus import line_of, replace, write


@dataclass
class Case:
    name: str
    change: Callable[[Path], None]
    file: str
    code: str
    needle: str | None  # text on the expected line; None → the problem has no line
    severity: Severity = Severity.ERROR
    occurrence: int = 1  # which line holding ``needle`` (a duplicate is reported where it repeats)


def _w(rel: str, text: str | bytes) -> Callable[[Path], None]:
    return lambda root: write(root, rel, text)


def _r(rel: str, old: str, new: str) -> Callable[[Path], None]:
    return lambda root: replace(root, rel, old, new)


def _both(*changes: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(root: Path) -> None:
        for change in changes:
            change(root)
    return run


NOTE = "notes/conseil-c.md"
EXTS = "notes/conseil-a.extractions.yaml"

CASES = [
    Case("malformed yaml", _r("notebooks/veille.yaml", "visibility: public", "visibility: [public"),
         "notebooks/veille.yaml", "yaml-syntax", None),
    Case("yaml python tag", _r("notebooks/veille.yaml", "visibility: public",
                               "visibility: !!python/object/apply:os.system ['echo pwned']"),
         "notebooks/veille.yaml", "yaml-unsupported", "!!python"),
    Case("duplicate key", _r("notebooks/veille.yaml", "authors: full", "authors: full\nauthors: initials"),
         "notebooks/veille.yaml", "duplicate-key", "authors: initials"),
    Case("missing title", _r(NOTE, "title: Séance C\n", ""), NOTE, "missing-field", None),
    Case("wrong type", _r(NOTE, "authors: [Yann Realname]", "authors: {name: Yann}"),
         NOTE, "wrong-type", "authors:"),
    Case("bad date", _r(NOTE, "date: 2025-03-01", "date: un jour"), NOTE, "wrong-type", "date:"),
    Case("bad visibility", _r("notebooks/veille.yaml", "visibility: public", "visibility: semi"),
         "notebooks/veille.yaml", "invalid-value", "visibility:"),
    Case("unknown notebook in note", _r(NOTE, "  conseil:\n", "  conseill:\n"),
         NOTE, "unknown-notebook", "conseill:"),
    Case("unknown notebook in base", _r("bases/reseau.yaml", "  - veille", "  - veile"),
         "bases/reseau.yaml", "unknown-notebook", "- veile"),
    Case("foreign category", _r(NOTE, "theme: [Budget]", "theme: [Subvention]"),
         NOTE, "unknown-category", "theme: [Subvention]"),
    Case("unknown axis", _r(NOTE, "theme: [Budget]", "themes: [Budget]"), NOTE, "unknown-axis", "themes:"),
    Case("duplicate slug", _w("notes/archive/conseil-c.md", "---\ntitle: X\ndate: 2025-01-01\nnotebooks: [club]\n---\nx\n"),
         "notes/conseil-c.md", "duplicate-slug", None),
    Case("duplicate extraction id", _w("notes/conseil-c.extractions.yaml",
                                       "extractions:\n  - id: a-budget\n    quote: Le budget est reconduit.\n"
                                       "    author: Yann Realname\n"),
         "notes/conseil-c.extractions.yaml", "duplicate-id", "- id: a-budget"),
    Case("duplicate comment id", _r(EXTS, "id: ca-2", "id: ca-1"), EXTS, "duplicate-id", "id: ca-1",
         occurrence=2),
    Case("note in no notebook", _r(NOTE, "notebooks:\n  conseil:\n    theme: [Budget]\n    annee: [\"2025\"]\n", ""),
         NOTE, "no-notebook", None),
    Case("missing media", _r(NOTE, "authors:", "media: ../assets/seance.ogg\nauthors:"),
         NOTE, "missing-asset", "media:"),
    Case("media outside content", _r(NOTE, "authors:", "media: ../../../etc/passwd\nauthors:"),
         NOTE, "invalid-path", "media:"),
    Case("broken asset link", _r(NOTE, "reconduit.", "reconduit. [pdf](../assets/absent.pdf)"),
         NOTE, "broken-link", "absent.pdf", Severity.WARNING),
    Case("broken wikilink", _r(NOTE, "reconduit.", "reconduit. [[conseil-z]]"),
         NOTE, "broken-link", "conseil-z", Severity.WARNING),
    Case("link to a missing section", _r(NOTE, "reconduit.", "reconduit. [A](conseil-a.md#nulle-part)"),
         NOTE, "broken-link", "nulle-part", Severity.WARNING),
    Case("invalid utf-8", _w(NOTE, "---\ntitle: x\n---\nun \xe9t\xe9\n".encode("latin-1")),
         NOTE, "encoding", "un "),
    Case("nul byte", _w(NOTE, "---\ntitle: x\n---\nligne\nbinaire\x00\n"), NOTE, "encoding", "binaire"),
    Case("no front matter", _w(NOTE, "# Juste un titre\n"), NOTE, "front-matter-missing", "# Juste"),
    Case("unclosed front matter", _w(NOTE, "---\ntitle: x\n"), NOTE, "front-matter-unclosed", "---"),
    Case("invalid stance", _r(EXTS, "stance: agree", "stance: plutôt"), EXTS, "invalid-value", "stance: plutôt"),
    Case("orphan extractions file", _w("notes/absente.extractions.yaml", "extractions: []\n"),
         "notes/absente.extractions.yaml", "orphan-extractions", None),
    Case("unknown field", _r(NOTE, "authors:", "auteurs: [X]\nauthors:"), NOTE, "unknown-field", "auteurs:",
         Severity.WARNING),
    Case("pinned note outside notebook", _r("notebooks/conseil.yaml", "pinned: [conseil-b]", "pinned: [veille-a]"),
         "notebooks/conseil.yaml", "unknown-note", "pinned:"),
    Case("extractions in front matter", _r(NOTE, "authors:", "extractions: []\nauthors:"), NOTE,
         "misplaced-extractions", "extractions:"),
    Case("withdrawn without date and reason", _r(EXTS, "        withdrawn:\n          date: 2024-10-06\n          reason: propos personnels\n",
                                                  "        withdrawn: true\n"), EXTS, "wrong-type", "withdrawn: true"),
    Case("prefix fitting no occurrence", _r(EXTS, "quote: Le budget s'élève à quatre mille euros",
                                            "quote: euros\n    prefix: dollars"),
         EXTS, "detached-anchor", "- id: a-budget", Severity.NOTICE),
    Case("public page links to private note", _r(NOTE, "reconduit.", "reconduit. [[secret-a]]"),
         NOTE, "private-link", "secret-a"),
    Case("public page cites a private extraction", _r(NOTE, "reconduit.", "reconduit. [[ext:secret-ext]]"),
         NOTE, "private-link", "secret-ext"),
    Case("public page cites a masked extraction", _r(NOTE, "reconduit.", "reconduit. [[ext:a-masked]]"),
         NOTE, "private-link", "a-masked"),
    Case("withdrawn comment without text or hash", _r(EXTS, "        text: WITHDRAWNTEXT à ne jamais publier.\n", ""),
         EXTS, "missing-field", None),
    Case("tampered withdrawn hash", _r(EXTS, "        withdrawn:", "        text_sha256: " + "ab" * 32 + "\n        withdrawn:"),
         EXTS, "hash-mismatch", "text_sha256"),
    Case("invalid slug", _w("notes/Compte Rendu.md", "---\ntitle: x\n---\n"), "notes/Compte Rendu.md",
         "invalid-slug", None),
    Case("bad id", _r(EXTS, "id: a-budget", "id: a budget!"), EXTS, "invalid-id", "id: a budget!"),
    Case("detached quote", _r(EXTS, "quote: Le budget s'élève à quatre mille euros", "quote: Le budget s'élève à cinq mille euros"),
         EXTS, "detached-anchor", "- id: a-budget", Severity.NOTICE),
    Case("ambiguous quote", _r(EXTS, "quote: Le budget s'élève à quatre mille euros", "quote: euros"),
         EXTS, "detached-anchor", "- id: a-budget", Severity.NOTICE),
    Case("too many axes", _r("notebooks/veille.yaml", "axes:\n", "axes:\n  a: {categories: [x]}\n  b: {categories: [x]}\n  c: {categories: [x]}\n"),
         "notebooks/veille.yaml", "too-many-axes", "axes:"),
    Case("missing settings", lambda root: (root / "carnet.yaml").unlink(), "carnet.yaml", "missing-settings", None),
    Case("missing licence", _r("carnet.yaml", "licence: CC BY 4.0\n", ""), "carnet.yaml", "missing-field", None),
    Case("unexpected file", _w("notes/brouillon.txt", "x"), "notes/brouillon.txt", "unexpected-file", None,
         Severity.WARNING),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_problem_is_reported_with_file_and_line(case: Case, small: Path) -> None:
    case.change(small)
    problems = analyse(small).problems
    matching = [p for p in problems if p.code == case.code and p.file == case.file]
    assert matching, f"expected {case.code} in {case.file}, got {[(p.file, p.line, p.code) for p in problems]}"
    problem = matching[0]
    assert problem.severity is case.severity
    if case.needle is not None:
        assert problem.line == line_of(small, case.file, case.needle, case.occurrence)
    assert problem.message and problem.hint, "every problem says what is wrong and what to do"


def test_the_fixture_itself_is_clean(small: Path) -> None:
    problems = analyse(small).problems
    assert [p for p in problems if p.severity is not Severity.NOTICE] == []
    assert {p.code for p in problems} <= {"unjudged-pairs", "unsourced-claim"}, "notices only say what is unjudged"


def test_every_problem_is_collected_not_only_the_first(small: Path) -> None:
    replace(small, NOTE, "theme: [Budget]", "theme: [Subvention]")
    replace(small, "notebooks/veille.yaml", "visibility: public", "visibility: [public")
    replace(small, EXTS, "stance: agree", "stance: plutôt")
    codes = {(p.file, p.code) for p in analyse(small).problems}
    assert {(NOTE, "unknown-category"), ("notebooks/veille.yaml", "yaml-syntax"),
            (EXTS, "invalid-value")} <= codes


def test_symlink_leaving_content_is_not_followed(small: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: Dehors\ndate: 2025-01-01\nnotebooks: [club]\n---\nSECRET\n", encoding="utf-8")
    (small / "notes" / "dehors.md").symlink_to(outside)
    analysis = analyse(small)
    assert "dehors" not in analysis.corpus.notes
    assert any(p.code == "symlink" and p.file == "notes/dehors.md" for p in analysis.problems)


def test_symlinked_directory_is_reported_not_followed(small: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text("---\ntitle: X\n---\n", encoding="utf-8")
    (small / "notes" / "linked").symlink_to(outside, target_is_directory=True)
    analysis = analyse(small)
    assert "x" not in analysis.corpus.notes
    assert any(p.code == "symlink" and p.file == "notes/linked" for p in analysis.problems)


def test_sidecar_of_a_refused_note_is_not_called_orphan(small: Path) -> None:
    write(small, "notes/Mauvais Nom.md", "---\ntitle: x\n---\n")
    write(small, "notes/Mauvais Nom.extractions.yaml", "extractions: []\n")
    codes = [p.code for p in analyse(small).problems if p.severity is not Severity.NOTICE]
    assert codes == ["invalid-slug"]


# -- settings that land in every page (issue 19, item 2) -------------------------------------

@pytest.mark.parametrize("url", ["javascript:alert(1)", "java\tscript:alert(1)", "data:text/html,<script>x</script>",
                                 "/licence.html", "vbscript:msgbox"])
def test_a_licence_link_must_be_an_http_address(small: Path, url: str) -> None:
    """The licence link is on every page: only an http(s) address is accepted, the
    rest is an error at its line of carnet.yaml (and never reaches a page)."""
    replace(small, "carnet.yaml", "licence: CC BY 4.0", f"licence:\n  name: CC BY 4.0\n  url: {json.dumps(url)}")
    analysis = analyse(small)
    (problem,) = [p for p in analysis.problems if p.file == "carnet.yaml" and p.is_error]
    assert problem.code == "invalid-value" and problem.line == 6 and "not an http(s) address" in problem.message
    assert analysis.corpus.settings.licence.url is None and analysis.corpus.settings.licence.name == "CC BY 4.0"


@pytest.mark.parametrize("url, reason", [
    ('https://example.org/"onload="x/', "which would need escaping"),
    ("https://example.org/a b/", "which would need escaping"),
    ("https://example.org/<x>/", "which would need escaping"),
    ("https://user:pass@example.org/", "credentials"),
    ("https:///path/", "names no host"),
    ("ftp://example.org/", r"not an absolute http\(s\) URL"),
])
def test_the_site_address_must_need_no_escaping(small: Path, tmp_path: Path, url: str, reason: str) -> None:
    """base_url lands in attributes, Atom feeds, sitemaps and JSON-LD: a character that
    would need escaping there is an error, in carnet.yaml and on the command line."""
    from generator.pipeline import build
    from generator.problems import SettingsError

    with pytest.raises(SettingsError, match=reason):
        build(small, tmp_path / "cli", base_url=url)
    replace(small, "carnet.yaml", "base_url: https://test.example.org/site/", f"base_url: {json.dumps(url)}")
    (problem,) = [p for p in analyse(small).problems if p.file == "carnet.yaml" and p.code == "invalid-value"]
    assert problem.is_error and problem.line == 2 and re.search(reason, problem.message)
