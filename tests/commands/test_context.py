"""`carnet context`: deterministic, cited, within budget, degrading per section, public only."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from generator.commands import context as context_module
from generator.commands.context import context_bundle
from support.corpus import site_files

CONTENT = Path(__file__).resolve().parents[2] / "content"


def test_the_bundle_is_stable_cited_and_within_budget() -> None:
    first = context_bundle(CONTENT, "bail du foyer et risque du budget", 3000)
    assert first == context_bundle(CONTENT, "bail du foyer et risque du budget", 3000)
    assert len(first) <= 3000
    assert [line for line in first.split("\n") if line.startswith("## ")] == [
        "## Ce que disent les wikis et synthèses", "## Passages cités, avec leur état", "## Débats ouverts"]
    assert "#ext-cvl-1114-bail-verbal" in first, "the minority passage is found and cited"


def test_every_link_of_the_bundle_resolves(example_site: Path) -> None:
    bundle = context_bundle(CONTENT, "quorum statuts dépense", 6000)
    files = site_files(example_site)
    base = "https://carnets.example.org/"
    for url in re.findall(r"\]\((https://[^)]+)\)", bundle):
        path, _, fragment = url[len(base):].partition("#")
        assert path in files, url
        if fragment:
            assert f'id="{fragment}"'.encode() in files[path], url


def test_a_failing_section_is_empty_and_the_others_come(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args):
        raise RuntimeError("index unavailable")

    sections = list(context_module.SECTIONS)
    sections[0] = (sections[0][0], broken)
    monkeypatch.setattr(context_module, "SECTIONS", tuple(sections))
    errors = io.StringIO()
    bundle = context_bundle(CONTENT, "budget foyer", 4000, errors=errors)
    assert "index unavailable" in errors.getvalue()
    first, second = bundle.split("## Passages cités, avec leur état")
    assert "(rien)" in first and "#ext-" in second


def test_private_content_never_enters_the_bundle() -> None:
    import yaml
    private = [e["quote"] for path in sorted((CONTENT / "notes").glob("bureau-*.extractions.yaml"))
               for e in yaml.safe_load(path.read_text(encoding="utf-8"))["extractions"]]
    assert private
    query = " ".join(private)
    bundle = context_bundle(CONTENT, query, 8000).split("\n", 1)[1]  # everything but the echoed query
    assert "bureau-" not in bundle and not any(" ".join(q.split())[:40] in bundle for q in private)


def test_the_bundle_speaks_the_sites_language(small: Path) -> None:
    """Issue 24: "disagreement(s)", "cited, verified" and "(unsourced)" in a French bundle."""
    french = context_bundle(CONTENT, "bail du foyer et risque du budget quorum", 8000)
    assert "désaccord" in french and "cité, " in french
    assert not re.search(r"\b(disagreement|cited|verified|unsourced|weak|contested)\b", french)
    text = (small / "carnet.yaml").read_text(encoding="utf-8")
    (small / "carnet.yaml").write_text(re.sub(r"(?m)^language: .*$", "language: en", text)
                                       if re.search(r"(?m)^language:", text) else text + "language: en\n",
                                       encoding="utf-8")
    english = context_bundle(small, "budget foyer mécène", 8000)
    assert english.startswith("# Context: budget foyer mécène\n")
    assert "## What the wikis and syntheses say" in english and "## Open debates" in english
    assert not re.search(r"\b(Contexte|désaccords?|cité|vérifié|rien|Débats)\b", english)
