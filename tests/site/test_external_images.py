"""External images said at build (issue 57): an image on another site, which the site's
Content-Security-Policy would block, is a warning at its line with the two ways out; with
its host listed in ``csp: img_hosts`` it is not, and every page's policy names the host."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from generator.pipeline import build, check_content
from generator.site.headers import CONTENT_SECURITY_POLICY, headers_for
from support.corpus import line_of, replace, write

NOTE = "notes/conseil-c.md"
FRONT = "---\ntitle: Séance C\ndate: 2025-03-01\nauthors: [Yann Realname]\nnotebooks:\n  conseil:\n    theme: [Budget]\n---\n"
BODY = "Le plan :\n\n![plan](https://images.example.org/plan.png)\n\nEt ![logo](https://cdn.other.example/logo.png).\n"


def _blocked(root: Path) -> list:
    return [p for p in check_content(root).problems if p.code == "blocked-image"]


def test_an_external_image_is_a_warning_at_its_line(small: Path) -> None:
    write(small, NOTE, FRONT + BODY)
    problems = _blocked(small)
    assert [(p.file, p.line) for p in problems] == [(NOTE, line_of(small, NOTE, "![plan]")),
                                                     (NOTE, line_of(small, NOTE, "![logo]"))]
    assert all(not p.is_error for p in problems)
    assert "assets/" in problems[0].hint and "img_hosts: [images.example.org]" in problems[0].hint
    assert "netlify.toml" in problems[0].hint


def test_a_listed_host_is_allowed_and_named_in_every_pages_policy(small: Path, tmp_path: Path) -> None:
    write(small, NOTE, FRONT + BODY)
    replace(small, "carnet.yaml", "description: Corpus de test.",
            "description: Corpus de test.\ncsp:\n  img_hosts: [images.example.org, '*.other.example']")
    assert _blocked(small) == []
    out = tmp_path / "site"
    build(small, out, search=False)
    for page in sorted(out.rglob("*.html")):
        policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">',
                           page.read_text(encoding="utf-8"))
        assert policy, page
        assert "img-src 'self' data: *.other.example images.example.org;" in unescape(policy.group(1)), page
    header = headers_for("/notes/conseil-c.html", ("images.example.org",))["Content-Security-Policy"]
    assert "img-src 'self' data: images.example.org;" in header and "frame-ancestors 'none'" in header
    assert headers_for("/assets/x.png", ("images.example.org",))["Content-Security-Policy"].startswith("sandbox")


def test_without_the_setting_the_policy_is_unchanged(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out, search=False)
    page = unescape((out / "index.html").read_text(encoding="utf-8"))
    assert "img-src 'self' data:;" in page
    assert headers_for("/index.html")["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


@pytest.mark.parametrize("hosts", ["[https://images.example.org]", "[images.example.org/x]", "images.example.org",
                                   "[\"a.org; script-src *\"]", "['*']"])
def test_img_hosts_must_be_host_names(small: Path, hosts: str) -> None:
    replace(small, "carnet.yaml", "description: Corpus de test.", f"description: Corpus de test.\ncsp:\n  img_hosts: {hosts}")
    problems = [p for p in check_content(small).problems if p.is_error and p.file == "carnet.yaml"]
    assert problems and "img_hosts" in problems[0].message and problems[0].line


def test_serve_sends_the_widened_policy_and_follows_the_settings(small: Path, tmp_path: Path) -> None:
    import http.client

    from generator.commands.serve import Server

    replace(small, "carnet.yaml", "description: Corpus de test.",
            "description: Corpus de test.\ncsp:\n  img_hosts: [images.example.org]")
    running = Server(small, tmp_path / "site", port=0, search=False)
    running.start()
    try:
        def policy(path: str) -> str:
            host, port = running.httpd.server_address[:2]
            connection = http.client.HTTPConnection(str(host), int(port), timeout=10)
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            return str(response.getheader("Content-Security-Policy"))

        assert "img-src 'self' data: images.example.org;" in policy("/index.html")
        assert policy("/assets/public.csv").startswith("sandbox;")
        replace(small, "carnet.yaml", "csp:\n  img_hosts: [images.example.org]", "")
        assert running.rebuild()
        assert policy("/index.html") == CONTENT_SECURITY_POLICY
    finally:
        running.close()
