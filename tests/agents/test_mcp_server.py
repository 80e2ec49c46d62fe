"""``carnet mcp`` over stdio, driven by the SDK's own client: the tools and their schemas,
the example's facts as its built site shows them, every URL a file of that site, the
mirrors as resources, hostile calls refused and stdout the protocol's alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
from bs4 import BeautifulSoup

from generator.pipeline import build, check_content
from support.mcp_client import ROOT, error_text, payload, run_client, urls_in

CONTENT = ROOT / "content"
BASE = "https://carnets.example.org/"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the example content and a build of it."""
    root = tmp_path_factory.mktemp("mcp-example")
    content = root / "content"
    shutil.copytree(CONTENT, content)
    out = root / "site"
    build(content, out)
    return content, out


def _published(content: Path) -> tuple[list[str], list[str], list[str]]:
    """The ids each tool accepts: extractions, comments, articles (the published ones)."""
    from generator.pipeline import site_model

    site = site_model(check_content(content), content)
    extractions = sorted(site.extractions)
    comments = sorted(c.id for _n, e in site.extractions.values() for c in e.comments)
    return extractions, comments, sorted(site.articles)


@pytest.mark.slow
def test_the_tools_are_listed_with_their_schemas(example: tuple[Path, Path], tmp_path: Path) -> None:
    async def script(session: Any) -> Any:
        return (await session.list_tools()).tools

    listed = {tool.name: tool for tool in run_client(example[0], script, tmp_path / "err.txt")}
    assert sorted(listed) == ["article", "context", "passage", "search"]
    required = {name: tool.input_schema.get("required", []) for name, tool in listed.items()}
    assert required == {"search": ["query"], "passage": ["id"], "article": ["slug"], "context": ["query"]}
    search = listed["search"].input_schema["properties"]
    assert {"query", "kind", "notebook", "categories", "date_from", "date_to", "offset", "limit"} <= set(search)
    assert search["query"]["maxLength"] == 2000 and search["limit"]["maximum"] == 50
    for tool in listed.values():
        assert tool.description and tool.annotations.read_only_hint is True


@pytest.mark.slow
def test_results_carry_the_sites_facts_and_urls(example: tuple[Path, Path], tmp_path: Path) -> None:
    content, out = example
    extractions, comments, articles = _published(content)

    async def script(session: Any) -> dict[str, Any]:
        results: dict[str, Any] = {"passage": {}, "article": {}}
        for key in extractions + comments:
            results["passage"][key] = payload(await session.call_tool("passage", {"id": key, "limit": 50}))
        for slug in articles:
            results["article"][slug] = payload(await session.call_tool("article", {"slug": slug, "limit": 50}))
        results["search"] = payload(await session.call_tool("search", {"query": "budget foyer bail", "limit": 50}))
        for hit in results["search"]["hits"]:
            if hit["kind"] == "passage":
                results["passage"][hit["id"]] = payload(await session.call_tool("passage", {"id": hit["id"]}))
        results["context"] = payload(await session.call_tool("context", {"query": "budget foyer", "budget": 6000}))
        listing = (await session.list_resources()).resources
        results["resources"] = {str(r.uri): (await session.read_resource(str(r.uri))).contents[0].text
                                for r in listing}
        return results

    results = run_client(content, script, tmp_path / "err.txt")
    analysis = check_content(content)

    # a passage's quote is the note's own text over its portions
    for key in extractions:
        found = results["passage"][key]
        anchor = analysis.anchored[found["note"]["slug"]].anchors[key]
        if anchor.status.is_live:
            elements = analysis.anchored[found["note"]["slug"]].document.elements
            assert found["extraction"]["quote"]["text"] == "\n\n".join(
                elements[p.element].text[p.start:p.end] for p in anchor.portions)

    # an article's pairs are its page's: each citation's source, state and reason, and its .json's claims
    for slug in articles:
        found = results["article"][slug]
        page = f"notes/{slug}.html"
        soup = BeautifulSoup((out / page).read_bytes(), "html.parser")
        shown = Counter()
        for link in soup.select("a.citation"):
            classes = link.get("class") or []
            state = next(c[len("state-"):] for c in classes if c.startswith("state-"))
            reason = next(c[len("reason-"):] for c in classes if c.startswith("reason-"))
            shown[(urljoin(BASE + page, link["href"]), state, reason)] += 1
        given = Counter((p["source_url"], p["state"], p["reason"])
                        for claim in found["claims"]["items"] for p in claim["pairs"])
        assert given == shown, slug
        sibling = json.loads((out / f"notes/{slug}.json").read_text(encoding="utf-8"))
        assert [(c["id"], c["state"], c["pairs"]) for c in sibling["claims"]] == \
            [(c["id"], c["state"], c["pairs"]) for c in found["claims"]["items"]]
        counts = {li["class"][0][len("state-"):]: int(li.get_text().split(":")[1].split("(")[0])
                  for li in soup.select(".state-counts li")}
        assert {k: v for k, v in found["tally"]["states"].items() if k in counts} == counts

    # the mirrors served are the build's, byte for byte: every page's (notes, and home, notebooks, categories…)
    assert {uri[len(BASE):] for uri in results["resources"]} == \
        {p.relative_to(out).as_posix() for p in out.rglob("*.html.md")}
    for uri, text in results["resources"].items():
        assert text == (out / uri[len(BASE):]).read_text(encoding="utf-8"), uri

    # every URL returned is a file of the build, and its fragment an id on the page
    urls = set(urls_in(results, BASE))
    assert len(urls) > 100
    for url in sorted(urls):
        path, _, fragment = url[len(BASE):].partition("#")
        path = path.split("?")[0] or "index.html"  # the site's own address is its home
        assert (out / path).is_file(), url
        if fragment:
            assert f'id="{fragment}"'.encode() in (out / path).read_bytes(), url


@pytest.mark.slow
def test_hostile_calls_get_a_clear_tool_error_and_the_server_goes_on(example: tuple[Path, Path],
                                                                       tmp_path: Path) -> None:
    async def script(session: Any) -> list[tuple[str, str]]:
        calls = [
            ("search", {"query": "budget " * 200_000}),  # 1.4 MB
            ("search", {"query": "budget\u0000foyer"}),
            ("context", {"query": "\u001b[31mbudget"}),
            ("passage", {"id": "no-such-extraction"}),
            ("passage", {"id": "x" * 10_000}),
            ("article", {"slug": "../../etc/passwd"}),
            ("search", {"query": "budget", "offset": -5}),
            ("search", {"query": "budget", "kind": "everything"}),
            ("context", {"query": "budget", "budget": 10**12}),
        ]
        answers = []
        for name, arguments in calls:
            answers.append((name, error_text(await session.call_tool(name, arguments))))
        answers.append(("after", json.dumps(payload(await session.call_tool("search", {"query": "budget"})))))
        return answers

    answers = run_client(example[0], script, tmp_path / "err.txt")
    for name, message in answers[:-1]:
        assert "Traceback" not in message and len(message) < 2000, (name, message)
        assert not message.endswith(f"Error executing tool {name}"), "a refusal, not a crash"
    assert "control character" in answers[1][1] and "control character" in answers[2][1]
    assert "unknown passage id" in answers[3][1] and "unknown article" in answers[5][1]
    assert '"hits"' in answers[-1][1], "the server answers after the hostile calls"
    assert "Traceback" not in (tmp_path / "err.txt").read_text(encoding="utf-8")


@pytest.mark.slow
def test_stdout_is_the_protocols_alone_and_stderr_says_what_was_loaded(example: tuple[Path, Path]) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}
    done = subprocess.run([sys.executable, "-m", "generator", "mcp", str(example[0])], cwd=ROOT,
                          input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert lines and all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)
    assert json.loads(lines[0])["result"]["serverInfo"]["name"] == "carnet"
    said = [line for line in done.stderr.splitlines() if line.startswith("carnet mcp:")]
    assert len(said) == 1 and "published notes" in said[0] and BASE in said[0]


@pytest.mark.slow
def test_content_with_errors_is_refused_at_start(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    wiki = content / "notes" / "cvl-wiki-budget.md"  # a public page pointing into a private note: an error
    wiki.write_text(wiki.read_text(encoding="utf-8") + "\nVoir [[bureau-2025-03-preparation]].\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "generator", "mcp", str(content)], cwd=ROOT, input="",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and done.stdout == ""
    assert "cvl-wiki-budget.md" in done.stderr and "Traceback" not in done.stderr
