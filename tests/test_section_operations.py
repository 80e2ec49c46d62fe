"""The section-operation applier (INV-9), rule by rule, and its byte-identity property."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.synthesis.sections import Operation, Sources, apply_operations, sections

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
    ("heading not found", Operation("AppendToSection", heading="Inconnu", content="Texte [[ext:a3]]."),
     "not found"),
    ("after_heading not found, no fallback", Operation("InsertSection", heading="Nouveau", after_heading="Inconnu",
                                                       content="Texte [[ext:a3]]."), "no fallback"),
    ("content holds a heading", Operation("AppendToSection", heading="Montant", content="## Titre\n\nTexte [[ext:a3]]."),
     "heading line"),
    ("insertion under an existing heading", Operation("InsertSection", heading="Montant", after_heading="Financements",
                                                      content="Texte [[ext:a3]]."), "already exists"),
    ("no sources", Operation("ReplaceSection", heading="Montant", content="Un texte sans source."), "no sources"),
    ("outside the perimeter", Operation("AppendToSection", heading="Montant", content="Texte [[ext:zz]]."),
     "outside the article's perimeter"),
    ("into a wiki or synthesis", Operation("AppendToSection", heading="Montant", content="Texte [[ext:w1]]."),
     "never a source"),
    ("heading inside a code fence is not a heading", Operation("AppendToSection", heading="pas un titre",
                                                               content="Texte [[ext:a3]]."), "not found"),
    ("unknown operation", Operation("DeleteSection", heading="Montant"), "unknown operation"),
]


@pytest.mark.parametrize("name,operation,reason", RULES, ids=[r[0] for r in RULES])
def test_each_rule_rejects_visibly_and_changes_nothing(name, operation, reason) -> None:
    body, (result,) = apply_operations(ARTICLE, [operation], SOURCES)
    assert not result.accepted and reason in result.reason
    assert result.operation.content == operation.content, "the rejected content is kept in the result"
    assert body == ARTICLE


def test_ambiguous_heading_is_refused() -> None:
    doubled = ARTICLE + "\n## Montant\n\nAutre [[ext:a2]].\n"
    _, (result,) = apply_operations(doubled, [Operation("AppendToSection", heading="Montant",
                                                        content="Texte [[ext:a3]].")], SOURCES)
    assert not result.accepted and "ambiguous" in result.reason


def test_append_replace_insert_and_no_change() -> None:
    operations = [
        Operation("NoChange"),
        Operation("AppendToSection", heading="Montant", content="Le solde est reporté [[ext:a3]]."),
        Operation("ReplaceSection", heading="Financements", content="La Région a accordé 1 440 € [[ext:a2]] [[com:c1]]."),
        Operation("InsertSection", heading="Règles", after_heading="Montant", content="Les dépenses sont votées [[ext:a1]]."),
    ]
    body, results = apply_operations(ARTICLE, operations, SOURCES)
    assert [r.accepted for r in results] == [True, True, True, True]
    assert results[2].removed.startswith("La Région finance le foyer [[ext:a2]].")
    assert results[2].sources == (("ext", "a2"), ("com", "c1"))
    assert [s.heading for s in sections(body)] == [None, "Montant", "Règles", "Financements"]
    assert "Le solde est reporté [[ext:a3]]." in body and "La Région finance le foyer" not in body
    assert "```\n## pas un titre\n```" in results[2].removed, "the fence belonged to the replaced section"


def test_the_lead_is_a_section() -> None:
    body, (result,) = apply_operations(ARTICLE, [Operation("AppendToSection", heading="",
                                                           content="Il est voté chaque année [[ext:a1]].")], SOURCES)
    assert result.accepted
    lead = sections(body)[0]
    assert "Il est voté chaque année" in "\n".join(body.split("\n")[lead.start:lead.end])


def test_a_rejected_operation_does_not_stop_the_next() -> None:
    operations = [Operation("AppendToSection", heading="Inconnu", content="X [[ext:a1]]."),
                  Operation("AppendToSection", heading="Montant", content="Y [[ext:a3]].")]
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
