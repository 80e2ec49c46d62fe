"""The example corpus in content/ is clean, builds under --strict, and keeps the site
invariants (highlights, links, privacy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.corpus.load import load_corpus
from generator.pipeline import analyse, build
from support.corpus import site_files
from support.site_checks import broken_internal_links, highlight_mismatches

CONTENT = Path(__file__).resolve().parents[1] / "content"


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("example") / "site"
    build(CONTENT, out, strict=True)
    return out


def test_example_content_has_no_problem() -> None:
    problems = analyse(CONTENT).problems
    assert [p.format_text() for p in problems] == []


def test_example_highlights_and_links(example_site: Path) -> None:
    assert highlight_mismatches(CONTENT, example_site) == []
    assert broken_internal_links(example_site) == []


def test_example_private_notebook_leaves_no_trace(example_site: Path) -> None:
    corpus, _ = load_corpus(CONTENT)
    private = [nb for nb in corpus.notebooks.values() if not nb.is_public]
    assert private, "the example corpus shows a private notebook"
    secrets = [nb.title for nb in private] + [nb.slug for nb in private]
    for note in corpus.notes.values():
        if all(not corpus.notebooks[m.notebook].is_public for m in note.memberships):
            secrets += [note.slug, note.title] + [e.quote for e in note.extractions]
    leaks = [(path, s) for path, data in site_files(example_site).items() for s in secrets
             if s.encode("utf-8") in data or s in path]
    assert leaks == []
