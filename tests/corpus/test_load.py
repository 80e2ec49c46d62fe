"""Every content kind is loaded into the typed model as written."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.corpus.load import load_corpus
from generator.corpus.model import AuthorRule, NoteType, Visibility
from generator.pipeline import build
from support.corpus import line_of, replace, write


def test_settings(small: Path) -> None:
    corpus, problems = load_corpus(small)
    assert problems == []
    settings = corpus.settings
    assert (settings.title, settings.base_url, settings.language, settings.licence.name) == \
        ("Petit carnet de test", "https://test.example.org/site/", "fr", "CC BY 4.0")


def test_bases_and_notebooks(small: Path) -> None:
    corpus, _ = load_corpus(small)
    assert corpus.bases["reseau"].notebooks == ("veille", "conseil")
    conseil = corpus.notebooks["conseil"]
    assert [a.key for a in conseil.axes] == ["theme", "annee"]
    assert conseil.axis("annee").categories == ("2024", "2025")
    assert conseil.pinned == ("conseil-b",) and conseil.order == ("conseil-a",)
    assert conseil.visibility is Visibility.PUBLIC and conseil.author_rule is AuthorRule.PSEUDONYM
    assert conseil.pseudonym_prefix == "Élève" and conseil.pseudonyms == {"Anne Enseignante": "Mme E."}
    assert conseil.writing_guide == "Citer exactement."
    assert corpus.notebooks["secret"].visibility is Visibility.PRIVATE
    assert corpus.notebooks["club"].axes == ()


def test_notes_memberships_and_types(small: Path) -> None:
    corpus, _ = load_corpus(small)
    note = corpus.notes["conseil-a"]
    assert note.type is NoteType.NOTE and note.date == dt.date(2024, 10, 1)
    assert note.authors == ("Zoé Realname",)
    assert {m.notebook: m.categories for m in note.memberships} == {
        "conseil": {"theme": ("Budget",), "annee": ("2024",)},
        "veille": {"theme": ("Subvention",)},
    }
    assert note.body.startswith("## Budget")
    assert note.body_line == line_of(small, "notes/conseil-a.md", "## Budget")
    assert corpus.notes["wiki-budget"].type is NoteType.WIKI and corpus.notes["wiki-budget"].date is None
    assert corpus.notes["synthese-2025"].type is NoteType.SYNTHESIS
    assert corpus.notes["club-a"].memberships[0].categories == {}


def test_extractions_and_comments(small: Path) -> None:
    corpus, _ = load_corpus(small)
    extractions = {e.id: e for e in corpus.notes["conseil-a"].extractions}
    assert list(extractions) == ["a-budget", "a-two-paragraphs", "a-masked"]
    budget = extractions["a-budget"]
    assert budget.kind == "fait" and budget.author == "Zoé Realname" and not budget.masked
    assert [c.stance for c in budget.comments] == ["agree", "disagree", "disagree"]
    withdrawn = budget.comments[2]
    assert withdrawn.withdrawn is not None and withdrawn.withdrawn.reason == "propos personnels"
    assert withdrawn.text_sha256 == hashlib.sha256(withdrawn.text.encode("utf-8")).hexdigest()
    assert extractions["a-two-paragraphs"].quote == "voté à l'unanimité.\n\nDeuxième paragraphe"
    assert extractions["a-masked"].masked


def test_withdrawn_comment_whose_text_was_removed_keeps_its_hash(small: Path) -> None:
    digest = hashlib.sha256("WITHDRAWNTEXT à ne jamais publier.".encode()).hexdigest()
    replace(small, "notes/conseil-a.extractions.yaml", "        text: WITHDRAWNTEXT à ne jamais publier.\n",
            f"        text_sha256: {digest}\n")
    corpus, problems = load_corpus(small)
    assert problems == []
    comment = corpus.notes["conseil-a"].extractions[0].comments[2]
    assert comment.text is None and comment.text_sha256 == digest


def test_media_is_published_with_a_player(small: Path, tmp_path: Path) -> None:
    write(small, "assets/audio/seance.ogg", b"OggS\x00fake-but-present")
    replace(small, "notes/conseil-c.md", "authors:", "media: ../assets/audio/seance.ogg\nauthors:")
    corpus, problems = load_corpus(small)
    assert problems == [] and corpus.notes["conseil-c"].media == "assets/audio/seance.ogg"
    build(small, tmp_path / "site")
    page = BeautifulSoup((tmp_path / "site" / "notes" / "conseil-c.html").read_bytes(), "html.parser")
    assert page.select_one("audio")["src"] == "../assets/audio/seance.ogg"
    assert (tmp_path / "site" / "assets" / "audio" / "seance.ogg").read_bytes() == b"OggS\x00fake-but-present"


def test_crlf_bom_and_decomposed_accents_are_normalised(small: Path) -> None:
    text = "\ufeff---\r\ntitle: Se\u0301ance\r\ndate: 2025-01-01\r\nnotebooks: [club]\r\n---\r\nE\u0301te\u0301\r\n"
    write(small, "notes/club-b.md", text.encode("utf-8"))
    corpus, problems = load_corpus(small)
    assert problems == []
    assert corpus.notes["club-b"].title == "Séance" and corpus.notes["club-b"].body == "Été\n"


def test_wiki_and_synthesis_are_listed_in_their_notebook(small_site: Path) -> None:
    page = BeautifulSoup((small_site / "notebooks" / "conseil.html").read_bytes(), "html.parser")
    assert [a.get_text() for a in page.select("#tab-wikis .note-link")] == ["Le budget (wiki)"]
    assert [a.get_text() for a in page.select("#tab-syntheses .note-link")] == ["Synthèse du budget 2025"]
    assert page.select_one("#tab-syntheses .badge.status").get_text() == "brouillon"


def test_a_single_notebook_may_be_written_as_a_string(small: Path) -> None:
    replace(small, "notes/club-a.md", "notebooks:\n  club:\n", "notebooks: club\n")
    corpus, problems = load_corpus(small)
    assert problems == [] and [m.notebook for m in corpus.notes["club-a"].memberships] == ["club"]


def _located(value: object) -> object:
    """A parsed value with everything the loader remembers of where it was written."""
    from generator.corpus.source import YamlList, YamlMap
    if isinstance(value, YamlMap):
        spans = {repr(k): (s.start, s.end, s.key_column) for k, s in value.value_spans.items()}
        return ("map", value.line, {repr(k): line for k, line in value.key_lines.items()}, spans,
                [(_located(k), _located(v)) for k, v in value.items()])
    if isinstance(value, YamlList):
        return ("list", value.line, value.item_lines, [_located(v) for v in value])
    return (type(value).__name__, value)


EDGE_YAML = [
    "a: 1\nb: 2.5\nc: true\nd: null\ne: 2025-03-01\nf: '2025-03-01'\ng: ~\nh: 0x1F\n",
    "a: 1\na: 2\nlist:\n  - x\n  - {k: v, k: w}\n  - [1, [2, [3]]]\n",
    "base: {x: 1}\nmerged:\n  <<: {y: 2}\n  z: 3\n",  # a merge key: PyYAML's walk
    "s: !!set {a, b}\n",
    "=: value-key\n",
    "text: |\n  two\n  lines\nfolded: >\n  one\n  line\n",
    "",
    "- 1\n- 2\n",
]


@pytest.mark.parametrize("text", EDGE_YAML + ["<example>"])
def test_the_quick_yaml_walk_gives_what_pyyamls_gives(text: str) -> None:
    """The loader's own walk (the plain nodes content is made of) and PyYAML's (what it
    leaves to it) make the same values, lines, spans and duplicate keys."""
    from generator.corpus.source import _LineLoader, _refuse_aliases
    content = Path(__file__).resolve().parents[2] / "content"
    texts = [text] if text != "<example>" else \
        [p.read_text(encoding="utf-8") for p in sorted(content.rglob("*.yaml"))]
    assert texts
    for one in texts:
        quick, slow = _LineLoader(one, 1), _LineLoader(one, 1)
        node = slow.get_single_node()
        if node is not None:
            _refuse_aliases(node)
        expected = (_located(slow.construct_document(node) if node is not None else None),
                    [(d.key, d.line) for d in slow.duplicates])
        assert (_located(quick.get_single_data()), [(d.key, d.line) for d in quick.duplicates]) == expected


def test_yaml_nested_past_pythons_recursion_is_read_or_refused_never_a_crash() -> None:
    """PyYAML's walk is recursive: 400 nested lists raised RecursionError. libyaml reads
    1,000 levels at most, and says so."""
    from generator.corpus.source import parse_yaml
    for depth in (400, 999):
        value, problems = parse_yaml("a: " + "[" * depth + "]" * depth + "\n", "x.yaml")
        assert problems == []
        inner = value["a"]
        for _ in range(depth - 1):
            (inner,) = inner
        assert inner == []
    value, problems = parse_yaml("a: " + "[" * 5000 + "]" * 5000 + "\n", "x.yaml")
    assert value is None and [(p.code, p.line) for p in problems] == [("yaml-syntax", 1)]
