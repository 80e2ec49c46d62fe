"""The section-operation applier (INV-9), rule by rule, and its byte-identity property."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.corpus.proposal import Op, Operation
from generator.markup import parse
from generator.synthesis.sections import Sources, apply_operations, sections

ARTICLE = """Le budget du conseil finance le foyer [[ext:a1]].

## Montant

Le budget s'élève à 4 200 € [[ext:a1]].

## Financements

La Région finance le foyer [[ext:a2]].

```
## pas un titre
```
"""
SOURCES = Sources(perimeter=frozenset({"a1", "a2", "a3", "c1"}), articles=frozenset({"w1"}))

RULES = [
    ("heading not found", Operation(Op.APPEND, heading="Inconnu", content="Texte [[ext:a3]]."),
     "not found"),
    ("after_heading not found, no fallback", Operation(Op.INSERT, heading="Nouveau", after_heading="Inconnu",
                                                       content="Texte [[ext:a3]]."), "no fallback"),
    ("content holds a heading", Operation(Op.APPEND, heading="Montant", content="## Titre\n\nTexte [[ext:a3]]."),
     "holds a heading"),
    ("insertion under an existing heading", Operation(Op.INSERT, heading="Montant", after_heading="Financements",
                                                      content="Texte [[ext:a3]]."), "already exists"),
    ("no sources", Operation(Op.REPLACE, heading="Montant", content="Un texte sans source."), "no sources"),
    ("outside the perimeter", Operation(Op.APPEND, heading="Montant", content="Texte [[ext:zz]]."),
     "outside the article's perimeter"),
    ("into a wiki or synthesis", Operation(Op.APPEND, heading="Montant", content="Texte [[ext:w1]]."),
     "never a source"),
    ("heading inside a code fence is not a heading", Operation(Op.APPEND, heading="pas un titre",
                                                               content="Texte [[ext:a3]]."), "not found"),
]


@pytest.mark.parametrize("name,operation,reason", RULES, ids=[r[0] for r in RULES])
def test_each_rule_rejects_visibly_and_changes_nothing(name, operation, reason) -> None:
    body, (result,) = apply_operations(ARTICLE, [operation], SOURCES)
    assert not result.accepted and reason in result.reason
    assert result.operation.content == operation.content, "the rejected content is kept in the result"
    assert body == ARTICLE


# Content is judged by the parser the build renders with, not line by line: each of
# these would change the article's structure once applied.
BROKEN_CONTENT = [
    ("unclosed ``` fence", "Texte [[ext:a3]].\n\n```\ncode", "code fence '```' opened on line 3 is never closed"),
    ("unclosed ~~~ fence", "Texte [[ext:a3]].\n\n~~~\ncode\n```", "code fence '~~~' opened on line 3"),
    ("fence closed by a shorter fence", "Texte [[ext:a3]].\n\n````\ncode\n```", "opened on line 3 is never closed"),
    ("fence closed by a fence with an info string", "Texte [[ext:a3]].\n\n```\ncode\n```python",
     "opened on line 3 is never closed"),
    ("setext heading ===", "Titre\n===\n\nTexte [[ext:a3]].", "holds a heading (level 1, underlined with '='"),
    ("setext heading ---", "Texte [[ext:a3]].\nTitre\n---", "holds a heading (level 2, underlined with '-'"),
    ("indented ATX heading", "Texte [[ext:a3]].\n\n   ## Titre", "holds a heading (level 2, '##', on line 3)"),
    ("heading in a blockquote", "> ## Titre\n\nTexte [[ext:a3]].", "on line 1, inside a blockquote"),
    ("heading in a list item", "- ## Titre\n\nTexte [[ext:a3]].", "on line 1, inside a list item"),
    ("heading in a nested list item", "- Texte [[ext:a3]].\n\n  > ### Titre", "on line 3, inside a blockquote"),
    ("front matter", "---\ntitle: Budget\n---\nTexte [[ext:a3]].", "front-matter block ('---' on lines 1 to 3)"),
    ("front matter closed by ...", "---\ntags:\n- budget\n...\n\nTexte [[ext:a3]].", "front-matter block"),
    # after a list item, an indented first line joins that item: '    ## x' would become its heading
    ("indented first line", "    ## Titre\n\nTexte [[ext:a3]].", "first line is indented"),
    # past 20 levels of lists and quotes the parser reads no deeper: the rest would be lost (issue 19, item 4)
    ("nested too deep", "Texte [[ext:a3]].\n\n" + "> " * 25 + "perdu [[ext:a1]]", "20 levels deep from its line 3"),
]


@pytest.mark.parametrize("name,content,reason", BROKEN_CONTENT, ids=[c[0] for c in BROKEN_CONTENT])
def test_content_that_would_break_the_structure_is_refused(name, content, reason) -> None:
    operation = Operation(Op.APPEND, heading="Montant", content=content)
    body, (result,) = apply_operations(ARTICLE, [operation], SOURCES)
    assert not result.accepted and reason in result.reason, result.reason
    assert result.operation.content == content and body == ARTICLE


FINE_CONTENT = [
    ("paragraphs", "Le budget est voté [[ext:a3]].\n\nIl est exécuté en juin [[ext:a1]]."),
    ("a list", "- Le budget est voté [[ext:a3]].\n- Il est exécuté en juin.\n  1. en deux fois"),
    ("a closed fence holding a ## line", "Exemple [[ext:a3]] :\n\n```\n## pas un titre\n```"),
    ("a closed ~~~ fence holding ``` and ##", "Exemple [[ext:a3]] :\n\n~~~\n```\n## pas un titre\n~~~"),
    ("a longer fence holding a shorter one", "Exemple [[ext:a3]] :\n\n````\n```\n## pas un titre\n```\n````"),
    ("a thematic break after a blank line", "Avant [[ext:a3]].\n\n---\n\nAprès."),
    ("a table", "| Poste | Montant |\n|---|---|\n| Foyer | 4 200 € [[ext:a3]] |"),
    ("citation markers", "Voté [[ext:a3|le vote]] et commenté [[com:c1]]."),
    ("a # that is not a heading", "Le numéro #2 [[ext:a3]].\n\n\\## échappé"),
    ("an indented code block after a paragraph", "Exemple [[ext:a3]] :\n\n    ## du code"),
]


@pytest.mark.parametrize("name,content", FINE_CONTENT, ids=[c[0] for c in FINE_CONTENT])
def test_ordinary_content_is_accepted(name, content) -> None:
    for operation in (Operation(Op.APPEND, heading="Montant", content=content),
                      Operation(Op.REPLACE, heading="", content=content),
                      Operation(Op.INSERT, heading="Nouveau", after_heading="Montant", content=content)):
        body, (result,) = apply_operations(ARTICLE, [operation], SOURCES)
        assert result.accepted, (operation.op, result.reason)
        assert content in body


def _rendered_headings(body: str) -> list[tuple[str, int, str]]:
    tokens = parse(body)
    return [(t.tag, t.level, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]


SPLITTING = [
    ("## in a ~~~ fence", "Avant.\n\n~~~\n## x\n~~~\n\n## A\n\nTexte.\n", [None, "A"]),
    ("## after an info-string line in a fence", "```\n```python\n## x\n```\n\n## A\n", [None, "A"]),
    ("## in a longer fence", "````\n```\n## x\n````\n\n## A\n", [None, "A"]),
    ("an indented ATX heading", "Avant.\n\n   ## A\n\nTexte.\n", [None, "A"]),
    ("a trailing # kept in the text", "## C#\n\nTexte.\n", [None, "C#"]),
    ("a closing sequence dropped", "## A ##\n\nTexte.\n", [None, "A"]),
    ("a setext H2", "Avant.\n\nA\n---\n\nTexte.\n", [None, "A"]),
    ("an H2 in a blockquote is not a section", "Avant.\n\n> ## x\n\n## A\n", [None, "A"]),
    ("four spaces: code, not a heading", "Avant.\n\n    ## x\n\n## A\n", [None, "A"]),
]


@pytest.mark.parametrize("name,body,headings", SPLITTING, ids=[c[0] for c in SPLITTING])
def test_sections_follow_the_rendered_h2s(name, body, headings) -> None:
    assert [s.heading for s in sections(body)] == headings
    assert [text for tag, level, text in _rendered_headings(body) if tag == "h2" and level == 0] == headings[1:]


def test_append_to_a_setext_section_lands_after_its_underline() -> None:
    body = "Avant [[ext:a1]].\n\nMontant\n-------\n\nTexte [[ext:a1]].\n"
    new, (result,) = apply_operations(body, [Operation(Op.REPLACE, heading="Montant",
                                                       content="Nouveau [[ext:a2]].")], SOURCES)
    assert result.accepted and result.removed == "Texte [[ext:a1]]."
    assert new == "Avant [[ext:a1]].\n\nMontant\n-------\n\nNouveau [[ext:a2]].\n"


@pytest.mark.parametrize("heading,reason", [("Budget #", "would read 'Budget'"), ("#", "would read ''"),
                                            ("Un\nDeux", "line break")])
def test_an_inserted_heading_must_read_as_given(heading, reason) -> None:
    operation = Operation(Op.INSERT, heading=heading, after_heading="Montant", content="Texte [[ext:a3]].")
    body, (result,) = apply_operations(ARTICLE, [operation], SOURCES)
    assert not result.accepted and reason in result.reason, result.reason
    assert body == ARTICLE



def test_content_that_would_swallow_the_next_heading_in_place_is_refused() -> None:
    # alone, "1. un" is fine; before an indented heading, that heading would continue its item
    body = "## A\n\nTexte [[ext:a1]].\n   ## B\n\nSuite [[ext:a2]].\n"
    new, (result,) = apply_operations(body, [Operation(Op.APPEND, heading="A", content="1. un [[ext:a3]]")],
                                      SOURCES)
    assert not result.accepted and "would run into the next heading 'B'" in result.reason, result.reason
    assert new == body


def test_content_is_kept_apart_from_the_next_heading() -> None:
    # with no blank line after it, a setext heading's text line would continue the content's paragraph
    body = "## A\nB\n---\nSuite [[ext:a2]].\n"
    new, (result,) = apply_operations(body, [Operation(Op.APPEND, heading="A", content="Neuf [[ext:a3]].")],
                                      SOURCES)
    assert result.accepted and new == "## A\n\nNeuf [[ext:a3]].\n\nB\n---\nSuite [[ext:a2]].\n"
    assert [s.heading for s in sections(new)] == [None, "A", "B"]
    body = "## A\nTexte [[ext:a1]].\n## B\nSuite [[ext:a2]].\n"
    new, results = apply_operations(body, [Operation(Op.REPLACE, heading="A", content="Neuf [[ext:a3]]."),
                                           Operation(Op.APPEND, heading="B", content="Fin [[ext:a3]].")],
                                    SOURCES)
    assert all(r.accepted for r in results)
    assert new == "## A\n\nNeuf [[ext:a3]].\n\n## B\nSuite [[ext:a2]].\n\nFin [[ext:a3]].\n"

LIST_ENDED = ("Avant [[ext:a1]].\n\n## Liste\n\n- un [[ext:a1]]\n- deux\n## Serré\nTexte [[ext:a1]].\n"
              "## Fin\n\nTexte [[ext:a2]].")
LINES = st.sampled_from(["", "Texte [[ext:a3]].", "## Titre", "   ## Titre", "    ## Code", "> ## Cité", "- ## Puce",
                         "- item", "  ## sous", "```", "````", "~~~", "```py", "---", "===", "Titre", "...",
                         "| a | b |", "|---|---|", "> texte", "1. un", "\t## tab"])


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=8).map("\n".join),
       st.sampled_from(["", "Liste", "Serré", "Fin"]), st.sampled_from(["AppendToSection", "ReplaceSection"]))
def test_accepted_content_never_adds_or_hides_a_heading(content, heading, kind) -> None:
    new, (result,) = apply_operations(LIST_ENDED, [Operation(kind, heading=heading, content=content)], SOURCES)
    if result.accepted:
        assert _rendered_headings(new) == _rendered_headings(LIST_ENDED)
        assert [s.heading for s in sections(new)] == [s.heading for s in sections(LIST_ENDED)]


def test_ambiguous_heading_is_refused() -> None:
    doubled = ARTICLE + "\n## Montant\n\nAutre [[ext:a2]].\n"
    _, (result,) = apply_operations(doubled, [Operation(Op.APPEND, heading="Montant",
                                                        content="Texte [[ext:a3]].")], SOURCES)
    assert not result.accepted and "ambiguous" in result.reason


def test_append_replace_insert_and_no_change() -> None:
    operations = [
        Operation(Op.NO_CHANGE),
        Operation(Op.APPEND, heading="Montant", content="Le solde est reporté [[ext:a3]]."),
        Operation(Op.REPLACE, heading="Financements", content="La Région a accordé 1 440 € [[ext:a2]] [[com:c1]]."),
        Operation(Op.INSERT, heading="Règles", after_heading="Montant", content="Les dépenses sont votées [[ext:a1]]."),
    ]
    body, results = apply_operations(ARTICLE, operations, SOURCES)
    assert [r.accepted for r in results] == [True, True, True, True]
    assert results[2].removed.startswith("La Région finance le foyer [[ext:a2]].")
    assert results[2].sources == (("ext", "a2"), ("com", "c1"))
    assert [s.heading for s in sections(body)] == [None, "Montant", "Règles", "Financements"]
    assert "Le solde est reporté [[ext:a3]]." in body and "La Région finance le foyer" not in body
    assert "```\n## pas un titre\n```" in results[2].removed, "the fence belonged to the replaced section"


def test_the_lead_is_a_section() -> None:
    body, (result,) = apply_operations(ARTICLE, [Operation(Op.APPEND, heading="",
                                                           content="Il est voté chaque année [[ext:a1]].")], SOURCES)
    assert result.accepted
    lead = sections(body)[0]
    assert "Il est voté chaque année" in "\n".join(body.split("\n")[lead.start:lead.end])


def test_a_rejected_operation_does_not_stop_the_next() -> None:
    operations = [Operation(Op.APPEND, heading="Inconnu", content="X [[ext:a1]]."),
                  Operation(Op.APPEND, heading="Montant", content="Y [[ext:a3]].")]
    body, results = apply_operations(ARTICLE, operations, SOURCES)
    assert [r.accepted for r in results] == [False, True] and "Y [[ext:a3]]." in body


paragraph = st.lists(st.sampled_from(["budget", "foyer", "vote", "région", "[[ext:a1]]", "élèves", "«", "»"]),
                     min_size=1, max_size=10).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Alpha", "Beta", "Gamma", "Delta", "Epsilon"]), paragraph),
                min_size=1, max_size=5, unique_by=lambda t: t[0]),
       st.integers(0, 4), st.sampled_from(["AppendToSection", "ReplaceSection"]), paragraph)
def test_sections_no_operation_touches_stay_byte_identical(parts, target, kind, text) -> None:
    body = "Introduction [[ext:a1]].\n\n" + "\n".join(f"## {h}\n\n{p}\n" for h, p in parts)
    heading = parts[target % len(parts)][0]
    new, (result,) = apply_operations(body, [Operation(kind, heading=heading, content=text + " [[ext:a2]]")], SOURCES)
    assert result.accepted
    old_lines, new_lines = body.split("\n"), new.split("\n")
    before = {s.heading: "\n".join(old_lines[s.start:s.end]) for s in sections(body)}
    after = {s.heading: "\n".join(new_lines[s.start:s.end]) for s in sections(new)}
    for name, text_before in before.items():
        if name != heading:
            assert after[name] == text_before, name


@pytest.mark.parametrize("name,operation,reason", RULES, ids=[r[0] for r in RULES])
def test_each_rejection_has_a_code_worded_in_every_language(name, operation, reason) -> None:
    """Issue 24: the page words the reason in the site's language, from its code and values."""
    import yaml

    from generator.site.theme import DEFAULT_THEME
    from generator.synthesis.sections import REJECTION_CODES

    _body, (result,) = apply_operations(ARTICLE, [operation], SOURCES)
    assert result.code in REJECTION_CODES
    for path in sorted((DEFAULT_THEME / "strings").glob("*.yaml")):
        strings = yaml.safe_load(path.read_text(encoding="utf-8"))
        worded = strings["rejection_" + result.code.replace("-", "_")].format(**dict(result.values))
        assert "{" not in worded.replace("{ext:", "").replace("[[", ""), (path.name, worded)


def test_every_rejection_code_is_worded_in_every_language() -> None:
    import re

    import yaml

    import generator.synthesis.sections as module
    from generator.site.theme import DEFAULT_THEME

    source = Path(module.__file__).read_text(encoding="utf-8")
    made = set(re.findall(r'_reason\("([a-z-]+)"', source)) | {f"{w}-{o}" for w in ("heading", "after-heading")
                                                                 for o in ("not-found", "ambiguous")}
    assert made == set(module.REJECTION_CODES)
    for path in sorted((DEFAULT_THEME / "strings").glob("*.yaml")):
        strings = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert {c for c in module.REJECTION_CODES if "rejection_" + c.replace("-", "_") not in strings} == set()
