"""No private string in any answer of ``carnet mcp`` (INV-12): every tool called over every
id it accepts on the privacy fixture, and over the private ids, which are answered as unknown
ones, word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.answering.passages import passages
from generator.pipeline import check_content, site_model
from generator.synthesis.coverage import masked_elements
from support.corpus import copy_fixture
from support.mcp_client import dumped, error_text, payload, run_client

PRIVATE_STRINGS = [
    "PRIVATETOKEN", "PRIVATETITLE", "PRIVATECOMMENT", "PRIVATEASSET", "SECRETNOTEBOOK", "Gaston Confidentiel",
    "secret-a", "secret-ext", "secret-com", "Base entièrement privée", "cachee",
    "MASKEDCOMMENT", "a-masked", "ca-masked", "WITHDRAWNTEXT",
    "Zoé Realname", "Yann Realname", "Anne Enseignante", "Jean-Paul Lecteur",
]
"""tests/corpus/test_privacy.py's: in no file of the site, so in no answer."""
MASKED = "MASKEDPASSAGE"
"""The text a masked extraction covers: the note's page still shows it (and so does its mirror),
but no tool searches or quotes it, as ``carnet ask`` sends it to no model."""


@pytest.mark.slow
def test_no_tool_answers_anything_private(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    analysis = check_content(content)
    site = site_model(analysis, content)
    extractions = sorted(site.extractions)
    comments = sorted(c.id for _n, e in site.extractions.values() for c in e.comments)
    elements = sorted(p.id for p in passages(site.publication.notes, site.anchored,
                                             masked_elements(analysis.corpus.notes, analysis.anchored)))
    articles = sorted(site.articles)
    notebooks = sorted(site.publication.notebooks)
    categories = sorted({f"{axis.key}={c}" for nb in site.publication.notebooks.values() for axis in nb.axes
                         for c in axis.categories})
    words = sorted({w for note in analysis.corpus.notes.values() for w in note.body.split()} | set(PRIVATE_STRINGS))
    assert "ca-3" in comments and extractions and elements and articles

    async def script(session: Any) -> dict[str, Any]:
        answers: list[Any] = []
        refusals: dict[str, str] = {}
        for key in extractions + comments + elements:
            answers.append(payload(await session.call_tool("passage", {"id": key, "limit": 50})))
        for slug in articles:
            answers.append(payload(await session.call_tool("article", {"slug": slug, "limit": 50})))
        for query in [" ".join(words), *PRIVATE_STRINGS, MASKED]:
            for notebook in ["", *notebooks]:
                found = payload(await session.call_tool("search", {"query": query, "notebook": notebook, "limit": 50}))
                answers.append(found["hits"])  # the query itself is echoed: only the hits are the corpus's
            for category in categories:
                found = await session.call_tool("search", {"query": query, "categories": [category], "limit": 50})
                if not found.is_error:  # a category of another notebook than the one named: refused, rightly
                    answers.append(payload(found)["hits"])
            bundle = payload(await session.call_tool("context", {"query": query, "budget": 32000}))
            answers.append(bundle.split("\n", 1)[1])  # its first line echoes the query
        mirrors = []
        for resource in (await session.list_resources()).resources:
            mirrors.append(str(resource.uri))
            mirrors.append((await session.read_resource(str(resource.uri))).contents[0].text)
        for key in ("secret-ext", "secret-com", "a-masked", "ca-masked", "secret-a#e-0", "no-such-id"):
            refusals[f"passage:{key}"] = error_text(await session.call_tool("passage", {"id": key}))
        for slug in ("secret-a", "no-such-article"):
            refusals[f"article:{slug}"] = error_text(await session.call_tool("article", {"slug": slug}))
        for notebook in ("secret", "no-such-notebook"):
            refusals[f"notebook:{notebook}"] = error_text(
                await session.call_tool("search", {"query": "budget", "notebook": notebook}))
        return {"answers": answers, "mirrors": mirrors, "refusals": refusals}

    results = run_client(content, script, tmp_path / "err.txt")
    text = dumped(results["answers"])
    assert len(results["answers"]) > 50
    assert [s for s in [*PRIVATE_STRINGS, MASKED] if s in text] == []
    uris = set(results["mirrors"][::2])  # every note's page, and the others (home, notebooks, categories…)
    assert {f"{site.base_url}notes/{slug}.html.md" for slug in site.publication.notes} < uris
    assert f"{site.base_url}index.html.md" in uris
    assert [s for s in PRIVATE_STRINGS if s in dumped(results["mirrors"])] == []
    refusals = results["refusals"]
    passage_errors = {v for k, v in refusals.items() if k.startswith("passage:")}
    article_errors = {v for k, v in refusals.items() if k.startswith("article:")}
    notebook_errors = {v for k, v in refusals.items() if k.startswith("notebook:")}
    assert len(passage_errors) == len(article_errors) == len(notebook_errors) == 1, refusals
    assert [s for s in PRIVATE_STRINGS if s in dumped(list(refusals.values()))] == []
