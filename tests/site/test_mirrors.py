"""Markdown mirrors as a machine reader checks them, independently of the generator's own
reading of its pages: every page links its mirror, every mirror holds the addresses of the
passages its page cites and a Markdown heading for each of the page's <h2>; llms-full.txt,
made of the mirrors, keeps every article's sources. Plus the HTML→Markdown walk itself."""

from __future__ import annotations

import json
import posixpath
from html import unescape
from pathlib import Path
from urllib.parse import urljoin

from bench.machine_reader import failures, headings, pages, read
from generator.site.htmlmd import absolute_href, html_markdown
from support.corpus import site_files

BASE = "https://carnets.example.org/"


def test_every_page_links_its_markdown_mirror_which_exists(example_site: Path) -> None:
    files = site_files(example_site)
    for page in pages(files):
        alternates = read(files[page]).alternates
        assert len(alternates) == 1, page
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page), alternates[0]))
        assert target == page + ".md" and target in files, page


def test_every_mirror_holds_every_passage_its_page_cites(example_site: Path) -> None:
    files = site_files(example_site)
    checked = 0
    for page in pages(files):
        mirror = files[page + ".md"].decode("utf-8")
        for href in read(files[page]).citations:
            url = urljoin(BASE + page, href)
            assert url.startswith(BASE), (page, href)
            assert url in mirror, f"{page}.md lacks {url}"
            checked += 1
    assert checked > 30  # the example's articles and notes cite passages
    # the issue's case: a plain note's own citations, with their passages' addresses
    note = files["notes/veille-2025-04-regles-cofinancement.html.md"].decode("utf-8")
    assert f"{BASE}notes/veille-2025-02-region-amenagement.html#ext-veille-0203-cofinancement" in note
    assert f"{BASE}notes/veille-2025-02-region-amenagement.html#com-c-0203-1" in note


def test_a_mirror_has_a_markdown_heading_for_each_h2_of_its_page(example_site: Path) -> None:
    files = site_files(example_site)
    seen = 0
    for page in pages(files):
        reader = read(files[page])
        mirror = files[page + ".md"].decode("utf-8")
        # a note's mirror is its body, then its own sections; another page's, its whole <main>
        wanted = reader.body_h2 if page.startswith("notes/") and "." not in page[len("notes/"):-len(".html")] \
            else reader.h2 + reader.body_h2
        missing = set(wanted) - headings(mirror)
        assert not missing, f"{page}.md lacks ## {sorted(missing)}"
        seen += len(wanted)
    assert seen > 20
    body = files["notes/veille-2025-04-regles-cofinancement.html.md"].decode("utf-8").splitlines()
    assert "## Pourquoi un cofinancement" in body
    assert any(line.startswith("- La Région demande au moins 20 %") for line in body)  # list items as "- "


def test_llms_full_keeps_every_articles_sources(example_site: Path) -> None:
    files = site_files(example_site)
    full = files["llms-full.txt"].decode("utf-8")
    articles = 0
    for page in pages(files):
        record = json.loads(files[page[: -len(".html")] + ".json"])
        if record["kind"] not in ("wiki", "synthesis", "answer"):
            continue
        articles += 1
        for citation in record["citations"]:
            assert citation["source_url"] in full, (page, citation["source_url"])
    assert articles >= 3
    # the states and reasons said with them, as the mirrors say them
    assert "— vérifié, le passage soutient l'affirmation" in full and "## Sources citées" in full
    # made of the mirrors: each note's mirror is in it whole
    mirror = files["notes/cvl-wiki-budget.html.md"].decode("utf-8")
    assert mirror in full


def test_json_titles_and_urls_are_those_the_reader_sees(example_site: Path) -> None:
    files = site_files(example_site)
    assert json.loads(files["index.json"])["url"] == BASE  # the site's root, as its canonical link
    categories = [p for p in pages(files) if p.startswith("notebooks/") and p.count("/") > 1]
    assert categories
    for page in categories:
        record = json.loads(files[page[: -len(".html")] + ".json"])
        html = files[page].decode("utf-8")
        h1 = html[html.index("<h1"):]
        h1 = h1[h1.index(">") + 1:h1.index("</h1>")]
        assert record["title"] == " ".join(unescape(h1).split()), page


def _md(html: str, page: str = "notes/x.html") -> list[str]:
    return html_markdown(html, lambda href: absolute_href(BASE, page, href))[0]


def test_html_to_markdown_keeps_structure() -> None:
    lines = _md(
        "<h2>Titre</h2><p>Un <strong>gras</strong>, un <em>italique</em>, <code>x = 1</code> et "
        '<a href="y.html#ext-a">un lien</a>, <a href="https://ex.org/p">dehors</a>.</p>'
        "<ul><li>un<ul><li>sous-point</li></ul></li><li>deux</li></ul>"
        "<ol><li>premier</li><li>second</li></ol>"
        "<blockquote><p>cité</p></blockquote>"
        '<pre><code class="language-python">def f():\n    return 1\n</code></pre>'
        "<table><thead><tr><th>A</th><th>B|C</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>"
        '<p><img src="../assets/i.png" alt="une image"></p>')
    text = "\n".join(lines)
    assert lines[0] == "## Titre"
    assert ("Un **gras**, un *italique*, `x = 1` et [un lien](https://carnets.example.org/notes/y.html#ext-a), "
            "[dehors](https://ex.org/p).") in lines
    assert "- un\n  - sous-point\n- deux" in text
    assert "1. premier\n2. second" in text
    assert "> cité" in lines
    assert "```python\ndef f():\n    return 1\n```" in text
    assert "| A | B\\|C |\n| --- | --- |\n| 1 | 2 |" in text
    assert "![une image](https://carnets.example.org/assets/i.png)" in lines


def test_html_to_markdown_numbers_a_notes_citations_and_drops_page_furniture() -> None:
    lines, citations = html_markdown(
        '<p>Voir <a class="citation" href="a.html#ext-q">ce passage</a>.<span class="claim-end">'
        '<a class="contest" href="mailto:x">contester</a></span>'
        '<sup class="cite"><a class="citation state-verified" href="b.html#ext-r">[1]</a></sup>'
        '<script>alert(1)</script><button>Copier</button></p>',
        lambda href: absolute_href(BASE, "notes/x.html", href))
    assert lines == ["Voir ce passage [1]. [1]"]
    assert [(c.number, c.url, c.text) for c in citations] == [(1, f"{BASE}notes/a.html#ext-q", "ce passage")]


def test_absolute_href_makes_the_home_the_root() -> None:
    assert absolute_href(BASE, "notebooks/cvl.html", "../index.html") == BASE
    assert absolute_href(BASE, "notebooks/cvl.html", "#top") == BASE + "notebooks/cvl.html#top"
    assert absolute_href(BASE, "notes/x.html", "mailto:a@b") == "mailto:a@b"


def test_html_to_markdown_nests_quotes_and_code_in_list_items() -> None:
    lines = _md("<ol><li><h3>G</h3><ol><li><blockquote><p>cité</p></blockquote><p>après</p></li>"
                "<li>deux</li></ol></li></ol><p>suite</p><ul><li><pre><code>x\ny</code></pre></li></ul>")
    assert lines == ["1. ### G", "   1. > cité", "", "      après", "   2. deux", "", "suite", "",
                     "- ```", "  x", "  y", "  ```"]


def test_the_machine_reader_passes_the_example_and_bites_on_a_broken_mirror(example_site: Path) -> None:
    """bench/machine_reader.py, what the issue's check runs on a real corpus: nothing wrong
    with the example; a mirror missing a cited passage, or a page without its link, is named."""
    files = site_files(example_site)
    wrong, counts = failures(files, BASE)
    assert wrong == [] and counts["citations"] > 30 and counts["article sources"] > 10
    page = "notes/veille-2025-04-regles-cofinancement.html"
    cited = f"{BASE}notes/veille-2025-02-region-amenagement.html#ext-veille-0203-cofinancement"
    broken = dict(files, **{page + ".md": files[page + ".md"].replace(cited.encode(), b"")})
    assert f"{page}.md lacks {cited}" in failures(broken, BASE)[0]
    unlinked = dict(files, **{page: files[page].replace(b'type="text/markdown"', b'type="text/plain"')})
    assert any(line.startswith(f"{page}: links []") for line in failures(unlinked, BASE)[0])
