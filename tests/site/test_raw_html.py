"""Raw HTML in notes (issue 57): a small allowlist (<a name|id>, <br>, <sup>, <sub>, <kbd>)
written through a sanitiser, everything else shown as the text it is; the allowlist
survives no hostile payload; ``outputs: raw_html: false`` shows every tag as text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.pipeline import build, check_content
from generator.site.integrity import check_site
from support.corpus import replace, write

NOTE = "notes/conseil-c.md"
FRONT = "---\ntitle: Séance C\ndate: 2025-03-01\nauthors: [Yann Realname]\nnotebooks:\n  conseil:\n    theme: [Budget]\n---\n"
BODY = """## Ordre du jour

<a name="vote"></a>

Le budget 2<sup>e</sup> lecture, H<sub>2</sub>O, touche <kbd>Entrée</kbd>,<br>puis la suite.

Voir [le vote](conseil-c.md#vote) et [l'ancre](#point-3) <a id="point-3">ici</a>.
"""

HOSTILE = [
    '<sup onclick="alert(1)">x</sup>', "<kbd onmouseover=alert(2)>x</kbd>", '<a name="x" onclick="alert(3)">y</a>',
    '<a href="javascript:alert(4)" name="z">y</a>', '<a name="w" href="https://evil.example">y</a>',
    '<br onerror=alert(5)>', '<sup style="display:none">x</sup>', '<a id="s" style="color:red">y</a>',
    "<script>alert(6)</script>", '<img src=x onerror="alert(7)">', '<svg onload=alert(8)>',
    '<sup><script>alert(9)</script></sup>', '<a name="ext-c-x">clobber</a>', '<a name="e-1">x</a>',
    '<a name="q"><iframe src="https://evil.example"></iframe></a>', '<a name="u" name="v">x</a>',
    '<details open ontoggle=alert(10)>x</details>', "<sub/onclick=alert(11)>x</sub>", '<a id="t"/onclick=alert(12)>',
]

HOSTILE_BLOCKS = """<details open ontoggle=alert(20)>
<details style="x">
<details>
<summary onclick=alert(21)>x</summary>
<summary><script>alert(22)</script> <img src=x onerror=alert(23)></summary>
</details>
<table onmouseover=alert(24)>
<table>
<tr style="color:red"><td>x</td></tr>
<tr><td onclick=alert(25)>x</td></tr>
<tr><td><iframe src="https://evil.example"></iframe><a name="r" onclick=alert(26)>y</a></td></tr>
<tr><td>[z](javascript:alert(27))</td></tr>
"""


def _main(page: str) -> str:
    return page.split("<main", 1)[1]


def test_allowed_tags_render_and_anchors_land(small: Path, tmp_path: Path) -> None:
    write(small, NOTE, FRONT + BODY)
    analysis = check_content(small)
    assert not [p for p in analysis.problems if p.file == NOTE and p.code in ("broken-link", "broken-fragment")]
    elements = analysis.anchored["conseil-c"].document.elements
    # the tags add no text to their element: quotes land on the words a reader sees
    assert "Le budget 2e lecture, H2O, touche Entrée,\npuis la suite." in [e.text for e in elements]
    out = tmp_path / "site"
    build(small, out, search=False)
    page = _main((out / "notes" / "conseil-c.html").read_text(encoding="utf-8"))
    assert '<a name="vote"></a>' in page and '<a id="point-3">ici</a>' in page
    assert "2<sup>e</sup>" in page and "H<sub>2</sub>O" in page and "<kbd>Entrée</kbd>" in page and "<br>" in page
    assert 'href="conseil-c.html#vote"' in page or 'href="#vote"' in page
    assert not check_site(out, "/site/")


def test_the_link_checker_counts_a_name_as_a_target(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text('<a href="b.html#x">x</a> <a href="b.html#y">y</a>', encoding="utf-8")
    (tmp_path / "b.html").write_text('<p><a name="x"></a></p>', encoding="utf-8")
    problems = check_site(tmp_path)
    assert [p.message for p in problems] == ["'b.html#y': no id 'y' there"]


def test_a_quote_across_a_raw_tag_lands_and_highlights(small: Path, tmp_path: Path) -> None:
    write(small, NOTE, FRONT + BODY)
    write(small, "notes/conseil-c.extractions.yaml",
          "extractions:\n  - id: c-sup\n    quote: \"budget 2e lecture\"\n    kind: fait\n    author: Yann Realname\n")
    analysis = check_content(small)
    assert analysis.anchored["conseil-c"].anchors["c-sup"].status.is_live
    out = tmp_path / "site"
    build(small, out, search=False)
    page = _main((out / "notes" / "conseil-c.html").read_text(encoding="utf-8"))
    assert re.search(r'<mark[^>]*data-ext="c-sup"[^>]*>budget 2</mark><sup><mark[^>]*>e</mark></sup>', page), page


def test_no_hostile_payload_survives_the_allowlist(small: Path, tmp_path: Path) -> None:
    write(small, NOTE, FRONT + "\n\n".join(f"Ligne {n} : {payload} fin." for n, payload in enumerate(HOSTILE))
          + "\n\n" + "\n\n".join(HOSTILE) + "\n\n" + HOSTILE_BLOCKS)
    out = tmp_path / "site"
    build(small, out, search=False)
    page = _main((out / "notes" / "conseil-c.html").read_text(encoding="utf-8"))
    tags = re.findall(r"<[a-zA-Z][^>]*>", page)  # real tags only: text reads &lt;…
    assert not [t for t in tags if re.match(r"<(script|iframe|style|img|svg|object|embed)\b", t, flags=re.I)]
    assert not [t for t in tags if re.search(r"\s(on[a-z]+|style)\s*=", t, flags=re.I)]
    assert not [t for t in tags if re.search(r"javascript:", t, flags=re.I)]
    assert "https://evil.example" not in "".join(tags)
    assert not [t for t in tags if re.search(r'(name|id)="(ext-c-x|e-1)"', t)]  # the site's own anchors not taken
    assert "<sup>x</sup>" not in page and "&lt;sup onclick" in page  # refused: shown as the text it is
    assert "<details>" in page and "<table>" in page  # the allowed blocks stay, bare


def test_raw_html_off_shows_every_tag_as_text(small: Path, tmp_path: Path) -> None:
    write(small, NOTE, FRONT + BODY)
    with (small / "carnet.yaml").open("a", encoding="utf-8") as settings:
        settings.write("outputs:\n  raw_html: false\n")
    out = tmp_path / "site"
    build(small, out, search=False)
    page = _main((out / "notes" / "conseil-c.html").read_text(encoding="utf-8"))
    assert "<sup>" not in page and "<kbd>" not in page and '<a name="vote">' not in page
    assert "2&lt;sup&gt;e&lt;/sup&gt;" in page and "&lt;a name=\"vote\"&gt;&lt;/a&gt;" in page


@pytest.mark.parametrize("value", ["maybe", "0", "[true]"])
def test_raw_html_must_be_a_boolean(small: Path, value: str) -> None:
    replace(small, "carnet.yaml", "description: Corpus de test.", f"description: Corpus de test.\noutputs:\n  raw_html: {value}")
    problems = [p for p in check_content(small).problems if p.code == "invalid-value" and "raw_html" in p.message]
    assert problems and problems[0].file == "carnet.yaml" and problems[0].line


BLOCKS = """## Présences

<details open>
<summary>Les **absents** excusés</summary>

- Alice Absente

</details>

<table>
<tr><th>Nom</th><th>Rôle</th></tr>
<tr>
<td>Bruno</td>
<td>Président</td>
</tr>
</table>

<td>orpheline</td>

</details>

<details>
- jamais fermé
"""


def test_details_summary_and_html_tables_render_as_elements(small: Path, tmp_path: Path) -> None:
    write(small, NOTE, FRONT + BLOCKS)
    write(small, "notes/conseil-c.extractions.yaml",
          "extractions:\n  - id: c-row\n    quote: \"Bruno Président\"\n    kind: fait\n    author: Yann Realname\n"
          "  - id: c-sum\n    quote: \"absents excusés\"\n    kind: fait\n    author: Yann Realname\n")
    analysis = check_content(small)
    anchored = analysis.anchored["conseil-c"]
    texts = [(e.kind, e.text) for e in anchored.document.elements]
    assert ("paragraph", "Les absents excusés") in texts and ("table_row", "Bruno Président") in texts
    assert ("paragraph", "<td>orpheline</td>") in texts and ("paragraph", "</details>") in texts  # out of place: text
    assert all(anchored.anchors[i].status.is_live for i in ("c-row", "c-sum"))
    out = tmp_path / "site"
    build(small, out, search=False)
    page = _main((out / "notes" / "conseil-c.html").read_text(encoding="utf-8"))
    body = page.split('class="note-body', 1)[1]
    assert re.search(r'<details open="">\s*<summary id="e-[0-9a-f]+" class="element[^"]*">Les ', body)
    assert re.search(r'<tr id="e-[0-9a-f]+" class="element[^"]*">\s*<td><span class="ext-anchor" id="ext-c-row">', body)
    assert "&lt;td&gt;orpheline&lt;/td&gt;" in body and "&lt;/details&gt;" in body
    # well nested: every raw tag opened is closed, the one never closed with its note's body
    for tag in ("details", "summary", "table", "tr", "td", "th"):
        assert len(re.findall(rf"<{tag}[\s>]", body)) == len(re.findall(rf"</{tag}>", body)), tag
    assert not check_site(out, "/site/")


def test_raw_blocks_off_are_text(small: Path, tmp_path: Path) -> None:
    write(small, NOTE, FRONT + BLOCKS)
    with (small / "carnet.yaml").open("a", encoding="utf-8") as settings:
        settings.write("outputs:\n  raw_html: false\n")
    out = tmp_path / "site"
    build(small, out, search=False)
    page = _main((out / "notes" / "conseil-c.html").read_text(encoding="utf-8"))
    assert not re.search(r"<(details|summary|table|tr|td|th)[\s>]", page)
    assert "&lt;summary&gt;Les <strong>absents</strong> excusés&lt;/summary&gt;" in page
