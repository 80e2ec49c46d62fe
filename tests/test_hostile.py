"""Hostile and broken content (issue 12, first part): every bad input gets a clear
problem with file:line or builds safely — never a traceback, never a file outside the
output directory — and nothing from content reaches a page as live markup or script."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from generator.pipeline import build, check_content
from generator.problems import ContentError
from support.corpus import site_files, write

NOTE = "notes/conseil-c.md"
FRONT = "---\ntitle: {title}\ndate: 2025-03-01\nauthors: [Yann Realname]\nnotebooks:\n  conseil:\n    theme: [Budget]\n---\n"


def _carnet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator", *args], capture_output=True, text=True, timeout=120)


def _codes(root: Path) -> dict[str, list]:
    found: dict[str, list] = {}
    for problem in check_content(root).problems:
        found.setdefault(problem.code, []).append(problem)
    return found


def test_a_yaml_alias_bomb_is_refused_quickly_with_its_line(small: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))
    write(small, "notebooks/veille.yaml", "title: Veille\nvisibility: public\nauthors: full\n" + bomb)
    result = _carnet("check", str(small))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert re.search(r"notebooks/veille\.yaml:\d+: error \[yaml-unsupported\]", result.stderr), result.stderr


def test_binary_junk_is_an_encoding_error_not_a_crash(small: Path) -> None:
    write(small, NOTE, bytes(range(256)) * 64)
    result = _carnet("check", str(small))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{NOTE}:" in result.stderr and "[encoding]" in result.stderr


def test_a_huge_note_with_one_huge_line_builds(small: Path, tmp_path: Path) -> None:
    line = "Le budget est reconduit. " + "mot " * 250_000  # a 1 MB paragraph on one line
    write(small, NOTE, FRONT.format(title="Séance C") + line + "\n")
    build(small, tmp_path / "site", search=False)
    assert b"mot mot mot" in (tmp_path / "site" / "notes" / "conseil-c.html").read_bytes()


def test_absolute_and_escaping_media_paths_are_refused(small: Path) -> None:
    for media in ("/etc/passwd", "../../../../etc/passwd", "assets/../../secret.ogg"):
        write(small, NOTE, FRONT.format(title="Séance C").replace("authors:", f"media: {media}\nauthors:")
              + "Le budget est reconduit.\n")
        problems = [p for p in check_content(small).problems if p.file == NOTE and p.is_error]
        assert problems and all(p.line for p in problems), media


def test_quotes_among_rtl_overrides_combining_marks_and_emoji_land_exactly(small: Path, tmp_path: Path) -> None:
    text = "Avant 🎉👩‍👩‍👧 \u202egauche\u202c puis e\u0301te\u0301 et 🇫🇷 le vote final 🗳️ ici, fin."
    write(small, NOTE, FRONT.format(title="Séance C") + text + "\n")
    write(small, "notes/conseil-c.extractions.yaml",
          "extractions:\n  - id: c-vote\n    quote: \"le vote final 🗳️ ici\"\n    kind: fait\n    author: Yann Realname\n"
          "  - id: c-rtl\n    quote: \"\u202egauche\u202c puis été\"\n    kind: fait\n    author: Yann Realname\n")
    analysis = check_content(small)
    anchors = analysis.anchored["conseil-c"].anchors
    elements = analysis.anchored["conseil-c"].document.elements
    for ext_id, quote in (("c-vote", "le vote final 🗳️ ici"), ("c-rtl", "\u202egauche\u202c puis été")):
        (portion,) = anchors[ext_id].portions
        assert elements[portion.element].text[portion.start:portion.end] == quote  # code points, exactly
    build(small, tmp_path / "site", search=False)
    page = (tmp_path / "site" / "notes" / "conseil-c.html").read_text(encoding="utf-8")
    assert re.search(r'<mark[^>]*data-ext="c-vote"[^>]*>le vote final 🗳️ ici</mark>', page) or \
        "le vote final 🗳️ ici</mark>" in page


HOSTILE_BODY = """Le budget est reconduit.

[a](javascript:alert(1)) [b](JaVaScRiPt:alert(2)) [c](java&#x09;script:alert(3)) [d](&#106;avascript:alert(4))
[e](data:text/html;base64,PHNjcmlwdD5hbGVydCg1KTwvc2NyaXB0Pg==) [f](vbscript:msgbox(6)) [g]( javascript:alert(7))
<script>alert(8)</script> <iframe src="https://evil.example"></iframe> <style>body{display:none}</style>
<img src=x onerror="alert(9)"> <a href="#" onclick="alert(10)">clic</a> <svg onload=alert(11)>

![img](javascript:alert(12)) [[javascript:alert(13)]] {{ 7*7 }} {% if true %}JINJA{% endif %}
"""


def test_nothing_from_content_runs_as_script_or_markup(small: Path, tmp_path: Path) -> None:
    title = 'Séance </script><script>alert("t")</script> <!--<script> {{ 7*7 }}'
    write(small, NOTE, FRONT.format(title=f"'{title}'") + HOSTILE_BODY)
    write(small, "notes/conseil-c.extractions.yaml",
          "extractions:\n  - id: c-x\n    quote: Le budget est reconduit.\n    kind: fait\n"
          "    author: \"<b onmouseover=alert(14)>Yann</b>\"\n    comments:\n      - id: c-x-1\n"
          "        author: Zoé Realname\n        date: 2025-03-02\n        stance: agree\n"
          "        text: \"</script><script>alert(15)</script> <a href='javascript:alert(16)'>x</a> {{ 7*7 }}\"\n")
    out = tmp_path / "site"
    try:
        build(small, out, search=False)
    except ContentError as exc:  # refusing is acceptable too, if it says where
        assert all(p.file and p.line for p in exc.problems if p.is_error)
        return
    for path, data in site_files(out, search=False).items():
        if not path.endswith((".html", ".json", ".jsonld", ".xml", ".txt")):
            continue
        text = data.decode("utf-8")
        if path.endswith(".html"):
            main = text.split("<main", 1)[-1]
            tags = re.findall(r"<[a-zA-Z][^>]*>", main)  # real tags only: escaped text reads &lt;…
            assert not [t for t in tags if re.match(r"<(script|iframe|style|object|embed)\b", t, flags=re.I)], path
            assert not [t for t in tags if re.search(r"\son[a-z]+\s*=", t, flags=re.I)], path
            assert not re.search(r"""(href|src|action|formaction)\s*=\s*["']?\s*(javascript|vbscript|data):""",
                                 text, flags=re.I), path
            for block in re.findall(r'<script type="application/ld\+json">(.*?)</script>', text, flags=re.S):
                # JSON-LD can never be closed early, nor enter the parser's "escaped" states (<!--)
                assert "<" not in block and ">" not in block, path
                json.loads(block)
            assert "alert(8)</script>" not in text and "JINJA" not in text.replace("{% if true %}JINJA", ""), path
        assert ">49<" not in text and " 49 " not in text, f"template syntax evaluated in {path}"


# -- found by the fuzz test (tests/test_fuzz.py), kept as plain regressions -----------------

def test_a_date_that_does_not_exist_is_an_error_at_its_line_even_deep_in_a_file(small: Path) -> None:
    write(small, "notes/conseil-c.extractions.yaml",
          "extractions:\n  - id: c-x\n    quote: Le budget est reconduit.\n    kind: fait\n    author: Yann\n"
          "    comments:\n      - id: c-x-1\n        author: Zoé Realname\n        date: 2025-02-30\n"
          "        stance: agree\n        text: Oui.\n")
    write(small, NOTE, FRONT.format(title="Séance C").replace("2025-03-01", "2025-13-01") + "Le budget est reconduit.\n")
    result = _carnet("check", str(small))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "notes/conseil-c.extractions.yaml:9: error [invalid-date] '2025-02-30' is not a real date" in result.stderr
    assert f"{NOTE}:3: error [invalid-date] '2025-13-01'" in result.stderr


def test_a_passage_after_an_extraction_link_in_a_source_note_is_highlighted_exactly(small: Path,
                                                                                   tmp_path: Path) -> None:
    # outside articles, [[ext:…]] is a plain link that adds no text: the highlight must not shift
    write(small, NOTE, FRONT.format(title="Séance C") + "Voir [[ext:a-budget]] puis la réserve du budget.\n")
    write(small, "notes/conseil-c.extractions.yaml",
          "extractions:\n  - id: c-x\n    quote: la réserve du budget\n    kind: fait\n    author: Yann\n")
    build(small, tmp_path / "site", search=False)
    page = (tmp_path / "site" / "notes" / "conseil-c.html").read_text(encoding="utf-8")
    assert re.findall(r'<mark class="extraction" data-ext="c-x">([^<]*)</mark>', page) == ["la réserve du budget"]


def test_a_relocated_quote_is_measured_without_the_separators_it_would_span(small: Path) -> None:
    # "…budget\n``" once matched "…budget" plus the separator before the next element,
    # within the edit budget; what was shown (no separator) was not: now it is detached
    write(small, NOTE, FRONT.format(title="Séance C") + "```\nréserve budget budget\n```\n\n> Le vote suit.\n")
    write(small, "notes/conseil-c.extractions.yaml",
          "extractions:\n  - id: c-x\n    quote: \"erve budget budget\\n``\"\n    kind: fait\n    author: Yann\n")
    anchor = check_content(small).anchored["conseil-c"].anchors["c-x"]
    assert anchor.status.value == "detached" and anchor.portions == ()
