"""Every validation error is reported with its file, its line and what to do.

Each case changes one thing in a copy of the fixture and expects one problem; the
expected line is found in the changed file, never typed by hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.pipeline import check_content
from generator.problems import Severity
from support.cli import Run, carnet_here
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
    problems = check_content(small).problems
    matching = [p for p in problems if p.code == case.code and p.file == case.file]
    assert matching, f"expected {case.code} in {case.file}, got {[(p.file, p.line, p.code) for p in problems]}"
    problem = matching[0]
    assert problem.severity is case.severity
    if case.needle is not None:
        assert problem.line == line_of(small, case.file, case.needle, case.occurrence)
    assert problem.message and problem.hint, "every problem says what is wrong and what to do"


def test_the_fixture_itself_is_clean(small: Path) -> None:
    problems = check_content(small).problems
    assert [p for p in problems if p.severity is not Severity.NOTICE] == []
    assert {p.code for p in problems} <= {"unjudged-pairs", "unsourced-claim"}, "notices only say what is unjudged"


def test_every_problem_is_collected_not_only_the_first(small: Path) -> None:
    replace(small, NOTE, "theme: [Budget]", "theme: [Subvention]")
    replace(small, "notebooks/veille.yaml", "visibility: public", "visibility: [public")
    replace(small, EXTS, "stance: agree", "stance: plutôt")
    codes = {(p.file, p.code) for p in check_content(small).problems}
    assert {(NOTE, "unknown-category"), ("notebooks/veille.yaml", "yaml-syntax"),
            (EXTS, "invalid-value")} <= codes


def test_symlink_leaving_content_is_not_followed(small: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: Dehors\ndate: 2025-01-01\nnotebooks: [club]\n---\nSECRET\n", encoding="utf-8")
    (small / "notes" / "dehors.md").symlink_to(outside)
    analysis = check_content(small)
    assert "dehors" not in analysis.corpus.notes
    assert any(p.code == "symlink" and p.file == "notes/dehors.md" for p in analysis.problems)


def test_symlinked_directory_is_reported_not_followed(small: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text("---\ntitle: X\n---\n", encoding="utf-8")
    (small / "notes" / "linked").symlink_to(outside, target_is_directory=True)
    analysis = check_content(small)
    assert "x" not in analysis.corpus.notes
    assert any(p.code == "symlink" and p.file == "notes/linked" for p in analysis.problems)


def test_sidecar_of_a_refused_note_is_not_called_orphan(small: Path) -> None:
    write(small, "notes/Mauvais Nom.md", "---\ntitle: x\n---\n")
    write(small, "notes/Mauvais Nom.extractions.yaml", "extractions: []\n")
    codes = [p.code for p in check_content(small).problems if p.severity is not Severity.NOTICE]
    assert codes == ["invalid-slug"]


# -- settings that land in every page (issue 19, item 2) -------------------------------------

@pytest.mark.parametrize("url", ["javascript:alert(1)", "java\tscript:alert(1)", "data:text/html,<script>x</script>",
                                 "/licence.html", "vbscript:msgbox"])
def test_a_licence_link_must_be_an_http_address(small: Path, url: str) -> None:
    """The licence link is on every page: only an http(s) address is accepted, the
    rest is an error at its line of carnet.yaml (and never reaches a page)."""
    replace(small, "carnet.yaml", "licence: CC BY 4.0", f"licence:\n  name: CC BY 4.0\n  url: {json.dumps(url)}")
    analysis = check_content(small)
    (problem,) = [p for p in analysis.problems if p.file == "carnet.yaml" and p.is_error]
    assert problem.code == "invalid-value" and problem.line == 6 and "not an http(s) address" in problem.message
    assert analysis.corpus.settings.licence.url is None and analysis.corpus.settings.licence.name == "CC BY 4.0"


@pytest.mark.parametrize("language", ["/tmp/strings", "../../etc/x", "fr\nen", "français", ""])
def test_the_language_must_be_a_language_tag(small: Path, language: str) -> None:
    """``language:`` names the UI strings' file and every page's ``lang``: a path or any
    text but a language tag is an error at its line, and the site stays in French."""
    replace(small, "carnet.yaml", "language: fr", f"language: {json.dumps(language)}")
    analysis = check_content(small)
    (problem,) = [p for p in analysis.problems if p.file == "carnet.yaml" and p.is_error]
    assert problem.code == "invalid-value" and "not a language tag" in problem.message
    assert problem.line == line_of(small, "carnet.yaml", "language:")
    assert analysis.corpus.settings.language == "fr"


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
    (problem,) = [p for p in check_content(small).problems if p.file == "carnet.yaml" and p.code == "invalid-value"]
    assert problem.is_error and problem.line == 2 and re.search(reason, problem.message)


# -- nothing dropped silently; check refuses what build refuses (issue 19, item 4) -----------

LIMIT = 200  # the most characters a slug, an alias or an axis key may have (MAX_SLUG, generator/corpus/fields.py)


def _check_and_build(content: Path, out: Path) -> tuple[Run, Run]:
    return carnet_here("check", content), carnet_here("build", content, "--out", out, "--no-search", "--no-cache")


def _refused_by_both(content: Path, out: Path, file: str, line: int | None, code: str) -> str:
    """Both commands exit 1 with the same problem at ``file:line``; the problem's text."""
    check, build = _check_and_build(content, out)
    where = f"{content}/{file}" + (f":{line}" if line else "")
    expected = f"{where}: error [{code}]"
    assert check.code == 1 and expected in check.text, check
    assert build.code == 1 and expected in build.text and "nothing was written" in build.text, build
    assert not out.exists()
    text = check.text[check.text.index(expected):]
    return text.split("\n/", 1)[0]


DEEP_LIST = "".join("  " * i + f"- point {i}\n" for i in range(30))


@pytest.mark.parametrize("body, needle", [
    (DEEP_LIST, "- point 9"),
    (">" * 30 + " tout au fond\n", "tout au fond"),
    ("- " + "> - " * 12 + "profond\n", "profond"),
], ids=["list", "quote", "list-and-quote"])
def test_nesting_past_what_the_parser_reads_is_an_error(small: Path, tmp_path: Path, body: str, needle: str) -> None:
    """markdown-it reads no block nested 20 levels deep and drops the rest of its
    container without a word: both commands refuse it, at the line where it starts."""
    replace(small, NOTE, "reconduit.", "reconduit.\n\n" + body + "\nLa suite de la séance.\n")
    text = _refused_by_both(small, tmp_path / "site", NOTE, line_of(small, NOTE, needle), "nesting-too-deep")
    assert "would be missing" in text and "Flatten" in text, text


def test_two_thousand_nested_items_are_refused_with_what_is_lost(small: Path) -> None:
    body = "".join("  " * i + f"- item {i}\n" for i in range(2000))
    replace(small, NOTE, "reconduit.", "reconduit.\n\n" + body)
    (problem,) = [p for p in check_content(small).problems if p.code == "nesting-too-deep"]
    assert problem.file == NOTE and problem.line == line_of(small, NOTE, "- item 9")
    assert "(1991 lines)" in problem.message, problem.message


def test_a_wiki_nested_too_deep_is_refused_too(small: Path) -> None:
    replace(small, "notes/wiki-budget.md", "[[ext:a-budget]].", "[[ext:a-budget]].\n\n" + ">" * 25 + " citation\n")
    (problem,) = [p for p in check_content(small).problems if p.code == "nesting-too-deep"]
    assert problem.file == "notes/wiki-budget.md" and problem.line == line_of(small, "notes/wiki-budget.md", "citation")


def test_deep_lists_the_parser_still_reads_are_fine(small: Path) -> None:
    replace(small, NOTE, "reconduit.", "reconduit.\n\n" + "".join("  " * i + f"- point {i}\n" for i in range(9))
            + ">" * 19 + " presque au fond\n")
    assert not [p for p in check_content(small).problems if p.code == "nesting-too-deep"]


@pytest.mark.parametrize("text", [
    "*" * 60 + "mot" + "*" * 60,
    "**" * 40 + "mot" + "**" * 40,
    "[" * 60 + "mot" + "](u)" * 60,
    "".join("*a [b " for _ in range(40)) + "mot" + "".join("](u) c*" for _ in range(40)),
    "".join("**a ~~[b _" for _ in range(40)) + "mot" + "".join("_ ](u)~~ c**" for _ in range(40)),
    "".join("![a " for _ in range(40)) + "mot" + "".join("](u) c" for _ in range(40)),
], ids=["em", "strong", "links", "em-links", "mixed", "images"])
def test_inline_nesting_keeps_every_character(text: str) -> None:
    """Inline, markdown-it past its nesting bound keeps what it does not read as literal
    text (a link past 20 levels shows its brackets): no word is lost, so no problem."""
    from generator.markup import leaf_text, parse_checked

    tokens, dropped = parse_checked(text + "\n")
    assert dropped == []

    def words(children) -> str:
        return "".join(leaf_text(c) + (words(c.children) if c.type == "image" else "") for c in children or [])

    shown = "".join(words(t.children) for t in tokens if t.type == "inline")
    assert sorted(re.findall(r"[abc]|mot", shown)) == sorted(re.findall(r"[abc]|mot", text.replace("(u)", "")))


def _note(notebook: str = "club") -> str:
    return f"---\ntitle: X\ndate: 2025-01-01\nnotebooks: [{notebook}]\n---\nx\n"


def test_a_note_slug_too_long_for_a_file_name(small: Path, tmp_path: Path) -> None:
    """251 characters passed check; build then failed writing notes/<slug>.annotations.jsonld
    ("File name too long", "free some space")."""
    rel = f"notes/{'a' * 251}.md"
    write(small, rel, _note())
    text = _refused_by_both(small, tmp_path / "site", rel, None, "name-too-long")
    assert f"at most {LIMIT} characters" in text and "free some space" not in text, text


def test_a_slug_of_the_limit_builds(small: Path, tmp_path: Path) -> None:
    slug = "a" * LIMIT
    write(small, f"notes/{slug}.md", _note())
    check, build = _check_and_build(small, tmp_path / "site")
    assert check.code == 0 and build.code == 0, build
    assert (tmp_path / "site" / "notes" / f"{slug}.annotations.jsonld").is_file()


def test_an_alias_too_long(small: Path, tmp_path: Path) -> None:
    replace(small, NOTE, "authors:", f"aliases: [{'b' * (LIMIT + 1)}]\nauthors:")
    _refused_by_both(small, tmp_path / "site", NOTE, line_of(small, NOTE, "aliases:"), "name-too-long")


@pytest.mark.parametrize("kind", ["notebooks", "bases"])
def test_a_notebook_or_base_slug_too_long(small: Path, tmp_path: Path, kind: str) -> None:
    rel = f"{kind}/{'c' * (LIMIT + 1)}.yaml"
    write(small, rel, "title: Long\nvisibility: public\n" if kind == "notebooks" else "title: Long\nnotebooks: [club]\n")
    _refused_by_both(small, tmp_path / "site", rel, None, "name-too-long")


def test_an_axis_key_too_long(small: Path, tmp_path: Path) -> None:
    key = "d" * (LIMIT + 1)
    replace(small, "notebooks/veille.yaml", "axes:\n", f"axes:\n  {key}: {{categories: [x]}}\n")
    _refused_by_both(small, tmp_path / "site", "notebooks/veille.yaml",
                     line_of(small, "notebooks/veille.yaml", key), "name-too-long")


def test_a_long_category_gets_a_shortened_address(small: Path, tmp_path: Path) -> None:
    """A category is a label people read, not a file name they chose: past 200 characters
    its address is cut, with a short hash of the whole name, so the build never fails on it."""
    from generator.text import category_slug, slugify

    long_a, long_b = "Budget " + "très long " * 40 + "A", "Budget " + "très long " * 40 + "B"
    assert len(category_slug(long_a)) <= LIMIT and category_slug(long_a) != category_slug(long_b)
    assert category_slug("Vie scolaire") == slugify("Vie scolaire") == "vie-scolaire"
    replace(small, "notebooks/conseil.yaml", "categories: [Budget, Vie scolaire]",
            f"categories: [Budget, Vie scolaire, {long_a}, {long_b}]")
    replace(small, NOTE, "theme: [Budget]", f"theme: [{long_a}]")
    check, build = _check_and_build(small, tmp_path / "site")
    assert check.code == 0 and build.code == 0, build
    page = tmp_path / "site" / "notebooks" / "conseil" / "theme" / f"{category_slug(long_a)}.html"
    assert page.is_file() and page.with_suffix(".json").is_file()
    assert f"theme/{category_slug(long_a)}.html" in (tmp_path / "site" / "notes" / "conseil-c.html").read_text()


@pytest.mark.parametrize("slug", ["notes", "articles"])
def test_a_notebook_named_like_a_site_wide_feed(small: Path, tmp_path: Path, slug: str) -> None:
    """feeds/<notebook>.xml would be the site-wide feeds/notes.xml (or articles.xml): build
    stopped on 'feeds and feeds both write feeds/notes.xml'; now both refuse it at the notebook."""
    rel = f"notebooks/{slug}.yaml"
    write(small, rel, "title: Un carnet\nvisibility: public\n")
    text = _refused_by_both(small, tmp_path / "site", rel, None, "address-taken")
    assert f"feeds/{slug}.xml" in text and "Rename" in text, text


def test_a_private_notebook_named_like_a_feed_is_refused_as_well(small: Path) -> None:
    """Making a notebook public must not be what breaks the build: the address is taken anyway."""
    write(small, "notebooks/notes.yaml", "title: Un carnet\nvisibility: private\n")
    assert [p.file for p in check_content(small).problems if p.code == "address-taken"] == ["notebooks/notes.yaml"]


def test_two_categories_at_one_address(small: Path, tmp_path: Path) -> None:
    replace(small, "notebooks/veille.yaml", "categories: [Subvention, Mécénat]",
            "categories: [Subvention, Écoles, ecoles]")
    _refused_by_both(small, tmp_path / "site", "notebooks/veille.yaml",
                     line_of(small, "notebooks/veille.yaml", "categories:"), "duplicate-category")


def test_an_alias_at_another_notes_address(small: Path, tmp_path: Path) -> None:
    replace(small, NOTE, "authors:", "aliases: [conseil-a]\nauthors:")
    _refused_by_both(small, tmp_path / "site", NOTE, line_of(small, NOTE, "aliases:"), "duplicate-slug")


def test_an_asset_name_too_long_once_normalised(small: Path, tmp_path: Path) -> None:
    """U+0958 is one character on disk (3 bytes) and two once NFC-normalised (6 bytes):
    83 of them and '.csv' fit a file name here, but not the published one."""
    import unicodedata

    name = "\u0958" * 83 + ".csv"  # an extension on the assets' list (issue 56)
    (small / "assets" / name).write_bytes(b"x")
    published = unicodedata.normalize("NFC", f"assets/{name}")
    replace(small, NOTE, "reconduit.", f"reconduit. [fichier](../{published})")
    text = _refused_by_both(small, tmp_path / "site", published, None, "name-too-long")
    assert "255 bytes" in text, text


def test_the_last_resort_guard_names_the_content_behind_a_clash(small: Path) -> None:
    """render_site still refuses two outputs at one path (should the analysis miss one):
    its message names the content file to look at, not only the emitters."""
    from generator.engine.emitters import NotePages
    from generator.pipeline import render_site, site_model
    from generator.problems import SettingsError
    from generator.site.theme import Theme

    @dataclass(frozen=True)
    class Again:
        name: str = "again"

        def emit(self, site: object, theme: object, memo: object) -> Iterator[tuple[str, bytes]]:
            yield "notes/conseil-c.html", b"x"

    site = site_model(check_content(small), small)
    with pytest.raises(SettingsError, match=r"again and note-pages both write notes/conseil-c.html; "
                                            r"look at notes/conseil-c.md"):
        render_site(site, Theme.load(None, "fr"), (NotePages(), Again()))



def test_a_link_is_resolved_the_same_remembered_or_not_and_a_huge_one_is_not_kept(
        small: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Link targets are remembered across rebuilds (``serve``), but only short ones: a
    note of megabyte-long targets must not grow the process's memory with them."""
    import functools

    from generator.corpus import links
    kept: list[str] = []

    def remembered(folder: str, raw: str) -> tuple[str, str, str]:
        kept.append(raw)
        return links._written_path(folder, raw)

    monkeypatch.setattr(links, "_remembered_path", functools.lru_cache(maxsize=None)(remembered))
    huge = "x" * 200_000
    replace(small, NOTE, "reconduit.", f"reconduit. [A](conseil-a.md#nulle-part) [B]({huge}.md) [C](./conseil-a.md)")
    first = [(p.code, p.line, p.message[:60]) for p in check_content(small).problems if p.code == "broken-link"]
    again = [(p.code, p.line, p.message[:60]) for p in check_content(small).problems if p.code == "broken-link"]
    assert first == again and len(first) == 2, "the missing section and the huge missing file, each time"
    assert "./conseil-a.md" in kept and kept.count("./conseil-a.md") == 1, "a short target: remembered once"
    assert all(len(raw) < 1_000 for raw in kept), "the huge target was resolved without being kept"
