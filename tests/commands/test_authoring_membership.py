"""A note's ``notebooks:`` rewritten by the extract form's categories (issue 59): only its
lines, in a form the loader reads back as meant; a block that cannot be rewritten without
losing something (a comment, an anchor) is refused."""

from __future__ import annotations

import pytest

from generator.authoring.membership import set_notebooks
from generator.corpus.load import ContentFiles, parse_content
from generator.writes import read_back
from generator.yamledit import EditError

BODY = "## Séance\n\nLe budget est voté.\n"
NOTEBOOKS = """title: Cahier
axes:
  theme:
    categories: [Budget, "Oui: non", 2025-01-01, "[x]", Prêt d'honneur]
"""


def note(notebooks: str, after: str = "date: 2024-09-19\n") -> str:
    return f"---\ntitle: Séance\n{notebooks}{after}---\n{BODY}"


def memberships(text: str) -> dict[str, dict[str, tuple[str, ...]]]:
    """What the loader makes of the note's memberships (with a notebook whose categories need quoting)."""
    files = ContentFiles()
    files.notes["notes/n.md"] = text.encode()
    files.notebooks["notebooks/cvl.yaml"] = NOTEBOOKS.encode()
    corpus, problems = parse_content(files)
    assert not [p for p in problems if p.file == "notes/n.md"], problems
    return {m.notebook: m.categories for m in corpus.notes["n"].memberships}


@pytest.mark.parametrize("written", [
    "notebooks: [cvl, bureau]\n",
    "notebooks:\n- cvl\n- bureau\n",
    "notebooks:\n  cvl:\n    theme:\n      - Budget\n  bureau:\n",
    "notebooks: {cvl: {theme: [Budget]}, bureau: }\n",
], ids=["flow list", "block list at the key's column", "block lists", "flow mapping"])
def test_every_form_the_loader_accepts_is_rewritten_and_only_its_lines(written: str) -> None:
    text = note(written, after="\ndate: 2024-09-19\n")
    current = read_back("notes/n.md", text.encode())[0]["front_matter"]["notebooks"]
    wanted = {"cvl": {"theme": ["Budget", "Oui: non", "2025-01-01", "[x]", "Prêt d'honneur"]}, "bureau": {}}
    new = set_notebooks(text, current, wanted)
    assert new == note("notebooks:\n  cvl:\n    theme: [Budget, \"Oui: non\", \"2025-01-01\", \"[x]\", Prêt d'honneur]\n"
                       "  bureau: {}\n", after="\ndate: 2024-09-19\n"), "the blank line after the block stays"
    assert read_back("notes/n.md", new.encode())[0]["front_matter"]["notebooks"] == wanted
    assert memberships(new)["cvl"] == {"theme": ("Budget", "Oui: non", "2025-01-01", "[x]", "Prêt d'honneur")}


@pytest.mark.parametrize(("written", "said"), [
    ("notebooks:\n  # le carnet du CVL\n  cvl: {}\n", "comment"),
    ("notebooks:\n  cvl:  # le CVL\n    theme: [Budget]\n", "comment"),
    ("notebooks: &m\n  cvl: {}\n", "anchor"),
    ("notebooks: !!map\n  cvl: {}\n", "tag"),
], ids=["comment line", "comment after a value", "anchor", "tag"])
def test_a_block_that_cannot_be_rewritten_safely_is_refused(written: str, said: str) -> None:
    text = note(written)
    current = read_back("notes/n.md", text.encode())[0]["front_matter"]["notebooks"]
    with pytest.raises(EditError, match=rf"{said}.*by hand"):
        set_notebooks(text, current, {"cvl": {"theme": ["Budget"]}})
