"""Kinds are enums, not strings (issue 58): the closed sets the cores and the site tell apart
— what a ``[[…]]`` names, what a link points to, an article's kind and status, a proposal's
operations — are typed as enums, and no code of ``generator/`` compares a ``.kind``, ``.op``
or ``.status`` with a string literal (a misspelt literal is silently false; a misspelt member
is an error)."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import typing
from enum import Enum
from pathlib import Path

import pytest

from generator.corpus.article import StatusEntry
from generator.corpus.links import LinkTarget
from generator.corpus.proposal import Operation
from generator.markup import WikiTarget
from generator.synthesis.audit import ArticleAudit
from generator.synthesis.claims import Marker
from generator.verification import states

PACKAGE = Path(__file__).resolve().parents[1] / "generator"

TYPED: list[tuple[type[object], str]] = [
    (WikiTarget, "kind"), (Marker, "kind"), (LinkTarget, "kind"), (ArticleAudit, "kind"),
    (ArticleAudit, "status"), (StatusEntry, "status"), (Operation, "op"),
]


@pytest.mark.parametrize("owner,name", TYPED, ids=[f"{o.__name__}.{n}" for o, n in TYPED])
def test_the_field_is_an_enum(owner: type[object], name: str) -> None:
    assert name in {f.name for f in dataclasses.fields(owner)}  # type: ignore[arg-type]
    hint = typing.get_type_hints(owner)[name]
    assert isinstance(hint, type) and issubclass(hint, Enum), f"{owner.__name__}.{name} is {hint!r}"


@pytest.mark.parametrize("function", [states.pair_state, states._state])
def test_the_pair_state_takes_a_marker_kind(function: object) -> None:
    hint = typing.get_type_hints(function)["kind"]
    assert isinstance(hint, type) and issubclass(hint, Enum)
    assert hint is typing.get_type_hints(Marker)["kind"]


def test_the_enums_write_the_strings_they_replace() -> None:
    """Pages, YAML and JSON write a member as its value: the site stays byte-identical."""
    for owner, name in TYPED:
        for member in typing.get_type_hints(owner)[name]:
            assert isinstance(member, str) and f"{member}" == str(member) == member.value
    assert [op.value for op in typing.get_type_hints(Operation)["op"]] == [
        "NoChange", "AppendToSection", "ReplaceSection", "InsertSection"]


STATE_LIKE = {"kind", "op", "status"}

ALLOWED: dict[tuple[str, str], str] = {
    # anchoring's Element.kind: markdown block kinds (heading, paragraph, list_item, …); an
    # element pickles as a plain tuple on the cache's hot path, where an enum member would
    # pickle by reference, several times slower (left for its own change)
    ("anchoring/elements.py", 'element.kind == "heading"'): "Element.kind",
    ("anchoring/timing.py", 'elements[i].kind != "turn"'): "Element.kind",
    ("anchoring/timing.py", 'e.kind == "turn"'): "Element.kind",
    ("site/pages.py", 'e.kind == "heading"'): "Element.kind",
    ("site/pages.py", 'e.kind == "turn"'): "Element.kind",
    ("site/markdown_html.py", 'element.kind == "turn"'): "Element.kind",
}


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_literal(e) for e in node.elts)
    return False


def _state_like(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in STATE_LIKE


def string_comparisons(source: str) -> list[str]:
    """Each comparison of a ``.kind``, ``.op`` or ``.status`` with a string literal (or a
    tuple, list or set holding one), as written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for left, right in itertools.pairwise(operands):
            if (_state_like(left) and _literal(right)) or (_literal(left) and _state_like(right)):
                found.append(ast.get_source_segment(source, node) or ast.dump(node))
                break
    return found


def test_the_scan_sees_what_it_must() -> None:
    """A guard for the guard."""
    assert string_comparisons('if link.kind == "note": pass') == ['link.kind == "note"']
    assert string_comparisons('x = a.b.op in ("NoChange", "X")') == ['a.b.op in ("NoChange", "X")']
    assert string_comparisons('y = "adopted" != audit.status') == ['"adopted" != audit.status']
    assert string_comparisons("z = link.kind is LinkKind.NOTE and token.type == 'inline'") == []


def test_no_kind_is_compared_by_its_spelling() -> None:
    found: list[tuple[str, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        found += [(rel, " ".join(c.split())) for c in string_comparisons(path.read_text(encoding="utf-8"))]
    unexpected = [f"{rel}: {c}" for rel, c in found if (rel, c) not in ALLOWED]
    assert unexpected == [], "compare with an enum member instead:\n" + "\n".join(unexpected)
    stale = sorted(set(ALLOWED) - set(found))
    assert stale == [], f"allowed comparisons no longer there (drop them from ALLOWED): {stale}"



PROPOSAL = """\
id: p1
kind: sections
target: budget
article_sha256: abc
perimeter: []
provenance: {method: human}
operations:
  - op: AppendToSection
    heading: Montant
    content: Texte.
  - op: DeleteSection
    heading: Montant
"""


def test_an_operation_is_read_once_into_its_enum() -> None:
    """The loader turns ``op:`` into an :class:`Op`; an unknown one is an error at its line
    that says which are known (review and apply refuse such a file)."""
    from generator.corpus.proposal import Op, parse_proposal
    from generator.corpus.source import parse_yaml

    rel = "proposals/sections/budget/p1.yaml"
    value, problems = parse_yaml(PROPOSAL, rel)
    proposal = parse_proposal(rel, value, problems)
    assert proposal is not None
    assert [o.op for o in proposal.operations] == [Op.APPEND]
    assert type(proposal.operations[0].op) is Op
    (problem,) = [p for p in problems if p.is_error]
    assert (problem.file, problem.line, problem.code) == (rel, 11, "invalid-value")
    assert "'DeleteSection'" in problem.message and "AppendToSection" in problem.hint


def test_a_history_status_is_read_once_into_its_enum() -> None:
    from generator.corpus.article import ActStatus, parse_article
    from generator.corpus.fields import Fields
    from generator.corpus.source import parse_yaml

    text = "history:\n  - {status: draft, date: 2024-01-02}\n  - {status: superseded, date: 2024-02-03}\n"
    value, problems = parse_yaml(text, "wiki/acte.md")
    spec = parse_article(Fields(value, "wiki/acte.md", "the article", problems))
    assert [(type(e.status), e.status) for e in spec.history] == [(ActStatus, ActStatus.DRAFT)]
    (problem,) = [p for p in problems if p.is_error]
    assert (problem.line, problem.code) == (3, "invalid-value") and "supersedes:" in problem.hint
