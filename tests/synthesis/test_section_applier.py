"""The section-operation applier (INV-9) as a pure function, without a build: how an
article splits into sections, each operation kind's exact result, each refusal with its
reason, and what a sequence of operations does (order, idempotence, untouched bytes)."""

from __future__ import annotations

import itertools

import pytest

from generator.corpus.proposal import OPERATIONS, Op, Operation
from generator.markup import parse
from generator.synthesis.claims import read_claims
from generator.synthesis.sections import OperationResult, Section, Sources, apply_operations, markers, sections

ARTICLE = ("Le conseil finance le foyer [[ext:a1]].\n\n"
           "## Montant\n\nLe budget s'élève à 4 200 € [[ext:a1]].\n\n"
           "## Financements\n\nLa Région finance le foyer [[ext:a2]].\n")
SOURCES = Sources(perimeter=frozenset({"a1", "a2", "a3", "c1"}), articles=frozenset({"w1", "wc"}))
NEW = "Le bilan est positif [[ext:a3]]."


def text_of(body: str, heading: str | None) -> str:
    """A section's lines, as the splitter cuts them."""
    lines = body.split("\n")
    (section,) = [s for s in sections(body) if s.heading == heading]
    return "\n".join(lines[section.start:section.end])


# ---------------------------------------------------------------- sections

SECTIONS = [
    ("empty body: only the lead", "", [(None, 0, 1, 0)]),
    ("lead only", "Un lead.\n", [(None, 0, 2, 0)]),
    ("lead and two sections", ARTICLE, [(None, 0, 2, 0), ("Montant", 2, 6, 3), ("Financements", 6, 10, 7)]),
    ("a heading first: the lead is empty", "## A\n\nx\n", [(None, 0, 0, 0), ("A", 0, 4, 1)]),
    ("closing hashes are no part of the name", "## Budget ##\n\nx\n", [(None, 0, 0, 0), ("Budget", 0, 4, 1)]),
    ("a setext heading's content starts after its underline", "Montant\n-------\n\ntexte\n",
     [(None, 0, 0, 0), ("Montant", 0, 5, 2)]),
    ("H1 and H3 cut no section", "# Titre\n\n### Sous\n\n## Vrai\n\ny", [(None, 0, 4, 0), ("Vrai", 4, 7, 5)]),
    ("no H2 in a fence, a quote or a list", "```\n## non\n```\n\n> ## non plus\n\n- ## pas ici\n", [(None, 0, 8, 0)]),
    ("twice the same heading: two sections", "## A\n\n## A\n", [(None, 0, 0, 0), ("A", 0, 2, 1), ("A", 2, 4, 3)]),
]


@pytest.mark.parametrize("body,expected", [s[1:] for s in SECTIONS], ids=[s[0] for s in SECTIONS])
def test_sections(body: str, expected: list[tuple[str | None, int, int, int]]) -> None:
    found = sections(body)
    assert found == [Section(*item) for item in expected]
    # the sections tile the body: each starts where the previous ends
    assert found[-1].end == len(body.split("\n"))
    assert all(a.end == b.start for a, b in itertools.pairwise(found))


@pytest.mark.parametrize("content,expected", [
    ("x [[ext:a1]] [[com:c1|le commentaire]] [[ext: a2 ]]", (("ext", "a1"), ("com", "c1"), ("ext", "a2"))),
    ("un lien [[n1]], pas une source", ()),
    ("[[ext:a1]] puis [[ext:a1]]", (("ext", "a1"), ("ext", "a1"))),  # in order, repeats kept
])
def test_markers(content: str, expected: tuple[tuple[str, str], ...]) -> None:
    assert markers(content) == expected


# ---------------------------------------------------------------- each operation

ACCEPTED = [
    ("append to a section", Operation(Op.APPEND, "Montant", content=NEW),
     ARTICLE.replace("4 200 € [[ext:a1]].\n", f"4 200 € [[ext:a1]].\n\n{NEW}\n"), ""),
    ("append to the lead", Operation(Op.APPEND, "", content=NEW),
     ARTICLE.replace("foyer [[ext:a1]].\n", f"foyer [[ext:a1]].\n\n{NEW}\n", 1), ""),
    ("replace a section, showing what it removes", Operation(Op.REPLACE, "Montant", content=NEW),
     ARTICLE.replace("Le budget s'élève à 4 200 € [[ext:a1]].", NEW), "Le budget s'élève à 4 200 € [[ext:a1]]."),
    ("replace the last section", Operation(Op.REPLACE, "Financements", content=NEW),
     ARTICLE.replace("La Région finance le foyer [[ext:a2]].", NEW), "La Région finance le foyer [[ext:a2]]."),
    ("replace the lead", Operation(Op.REPLACE, "", content=NEW),
     ARTICLE.replace("Le conseil finance le foyer [[ext:a1]].", NEW), "Le conseil finance le foyer [[ext:a1]]."),
    ("insert after a section", Operation(Op.INSERT, "Bilan", "Montant", NEW),
     ARTICLE.replace("\n## Financements", f"\n## Bilan\n\n{NEW}\n\n## Financements"), ""),
    ("insert after the last section", Operation(Op.INSERT, "Bilan", "Financements", NEW),
     ARTICLE + f"\n## Bilan\n\n{NEW}\n", ""),
    ("insert after the lead: the first section", Operation(Op.INSERT, "Bilan", "", NEW),
     ARTICLE.replace("\n## Montant", f"\n## Bilan\n\n{NEW}\n\n## Montant"), ""),
    ("a heading is matched stripped", Operation(Op.APPEND, "  Montant ", content=NEW),
     ARTICLE.replace("4 200 € [[ext:a1]].\n", f"4 200 € [[ext:a1]].\n\n{NEW}\n"), ""),
    ("no change", Operation(Op.NO_CHANGE), ARTICLE, ""),
]


@pytest.mark.parametrize("operation,body,removed", [a[1:] for a in ACCEPTED], ids=[a[0] for a in ACCEPTED])
def test_each_operation_kind(operation: Operation, body: str, removed: str) -> None:
    new_body, (result,) = apply_operations(ARTICLE, [operation], SOURCES)
    assert new_body == body
    assert result == OperationResult(0, operation, True, "", removed,
                                     () if operation.op == "NoChange" else (("ext", "a3"),))


def test_sources_are_derived_from_the_content() -> None:
    content = "Deux sources [[ext:a2]] et un avis [[com:c1|Léa]]."
    _body, (result,) = apply_operations(ARTICLE, [Operation(Op.APPEND, "Montant", content=content)], SOURCES)
    assert result.accepted and result.sources == (("ext", "a2"), ("com", "c1"))


# ---------------------------------------------------------------- refusals

REFUSED = [
    ("heading not found", Operation(Op.APPEND, "Inconnu", content=NEW), "heading 'Inconnu' not found"),
    ("replace: heading not found", Operation(Op.REPLACE, "Inconnu", content=NEW), "heading 'Inconnu' not found"),
    ("after_heading not found: no fallback to the end", Operation(Op.INSERT, "Bilan", "Inconnu", NEW),
     "after_heading 'Inconnu' not found (no fallback to the end)"),
    ("only InsertSection creates a section", Operation(Op.APPEND, "Montant", content=f"## Bilan\n\n{NEW}"),
     "the content holds a heading (level 2, '##', on line 1)"),
    ("insertion under an existing heading", Operation(Op.INSERT, "Montant", "Financements", NEW),
     "a section 'Montant' already exists"),
    ("no sources", Operation(Op.REPLACE, "Montant", content="Un texte sans aucune source."),
     "no sources: the content cites no [[ext:…]] or [[com:…]]"),
    ("a source outside the perimeter", Operation(Op.APPEND, "Montant", content=f"{NEW} [[ext:zz]]"),
     "[[ext:zz]] is outside the article's perimeter"),
    ("a source in a wiki or synthesis", Operation(Op.APPEND, "Montant", content="Voir [[com:wc]]."),
     "[[com:wc]] points into a wiki or synthesis, which is never a source"),
    ("no heading for the new section", Operation(Op.INSERT, " ", "Montant", NEW),
     "no heading given for the new section"),
    ("a heading on two lines", Operation(Op.INSERT, "Bi\nlan", "Montant", NEW), "holds a line break"),
    ("a carriage return", Operation(Op.APPEND, "Montant", content=f"Ligne\r\n{NEW}"), "carriage return"),
]


@pytest.mark.parametrize("operation,reason", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refusals_keep_the_article_and_the_content(operation: Operation, reason: str) -> None:
    body, (result,) = apply_operations(ARTICLE, [operation], SOURCES)
    assert body == ARTICLE
    assert not result.accepted and reason in result.reason
    assert result.operation is operation, "the refused content is kept in the result, to be shown"
    assert result.sources == markers(operation.content)


def test_an_ambiguous_heading_is_refused() -> None:
    body = ARTICLE + "\n## Montant\n\nBis [[ext:a2]].\n"
    for operation in (Operation(Op.APPEND, "Montant", content=NEW),
                      Operation(Op.INSERT, "Bilan", "Montant", NEW)):
        new_body, (result,) = apply_operations(body, [operation], SOURCES)
        assert (new_body, result.accepted) == (body, False)
        assert "'Montant' is ambiguous: 2 sections bear it" in result.reason


@pytest.mark.parametrize("content", ["Le bilan de cette année est positif `[[ext:a3]]`.",
                                     "Le bilan de cette année est positif.\n\n```\n[[ext:a3]]\n```",
                                     "Le bilan de cette année est positif \\[[ext:a3]]."],
                         ids=["code span", "code fence", "escaped"])
def test_a_marker_the_build_does_not_read_is_no_source(content: str) -> None:
    """Sources are read with the build's parser: what the build would read as an unsourced
    claim is refused, not accepted on the strength of a marker in code or escaped."""
    as_built = [c for c in read_claims("w", parse(content + "\n"), 1) if "bilan" in c.text]
    assert as_built and not any(c.sourced for c in as_built), "the build reads the new claim as unsourced"
    body, (result,) = apply_operations(ARTICLE, [Operation(Op.APPEND, "Montant", content=content)], SOURCES)
    assert not result.accepted and "no sources" in result.reason
    assert body == ARTICLE


# ---------------------------------------------------------------- sequences

def test_operations_apply_in_order_each_on_its_own() -> None:
    operations = [Operation(Op.APPEND, "Bilan", content=NEW),  # not there yet
                  Operation(Op.INSERT, "Bilan", "Montant", NEW),
                  Operation(Op.APPEND, "Inconnu", content=NEW),  # refused: the next still applies
                  Operation(Op.APPEND, "Bilan", content="Et encore [[ext:a2]].")]
    body, results = apply_operations(ARTICLE, operations, SOURCES)
    assert [(r.index, r.accepted) for r in results] == [(0, False), (1, True), (2, False), (3, True)]
    assert "'Bilan' not found" in results[0].reason
    assert text_of(body, "Bilan") == f"## Bilan\n\n{NEW}\n\nEt encore [[ext:a2]].\n"
    assert [s.heading for s in sections(body)] == [None, "Montant", "Bilan", "Financements"]


def test_replace_and_insert_are_idempotent_append_is_not() -> None:
    replace = Operation(Op.REPLACE, "Montant", content=NEW)
    once, _ = apply_operations(ARTICLE, [replace], SOURCES)
    twice, results = apply_operations(ARTICLE, [replace, replace], SOURCES)
    assert twice == once and results[1].removed == NEW

    insert = Operation(Op.INSERT, "Bilan", "Montant", NEW)
    once, _ = apply_operations(ARTICLE, [insert], SOURCES)
    twice, results = apply_operations(ARTICLE, [insert, insert], SOURCES)
    assert twice == once and not results[1].accepted and "already exists" in results[1].reason

    append = Operation(Op.APPEND, "Montant", content=NEW)
    twice, _ = apply_operations(ARTICLE, [append, append], SOURCES)
    assert text_of(twice, "Montant").count(NEW) == 2


@pytest.mark.parametrize("operation", [o for _name, o, _b, _r in ACCEPTED if o.op != "NoChange"],
                         ids=[name for name, o, _b, _r in ACCEPTED if o.op != "NoChange"])
def test_untouched_sections_stay_byte_identical(operation: Operation) -> None:
    body, (result,) = apply_operations(ARTICLE, [operation], SOURCES)
    assert result.accepted
    target = operation.heading.strip() or None
    for section in sections(ARTICLE):
        if section.heading == target or (operation.op == "InsertSection" and
                                         section.heading == (operation.after_heading.strip() or None)):
            continue
        # the last section before an insertion gains a separating line, nothing else moves
        assert text_of(body, section.heading).rstrip("\n") == text_of(ARTICLE, section.heading).rstrip("\n")


def test_the_operation_kinds() -> None:
    assert OPERATIONS == ("NoChange", "AppendToSection", "ReplaceSection", "InsertSection")
    assert Operation(Op.NO_CHANGE) == Operation(Op.NO_CHANGE, "", "", "")
