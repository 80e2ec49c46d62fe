"""Deployment: netlify.toml sends the headers the browser tests use; renamed notes keep
their old addresses; the documented CI workflow runs the checks."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml
from bs4 import BeautifulSoup

from generator.pipeline import analyse, build
from generator.site.headers import SECURITY_HEADERS
from support.corpus import replace, site_files

ROOT = Path(__file__).resolve().parents[1]


def test_netlify_sends_the_headers_the_site_is_tested_under() -> None:
    config = tomllib.loads((ROOT / "netlify.toml").read_text(encoding="utf-8"))
    assert config["build"]["publish"] == "build" and "--strict" in config["build"]["command"]
    everything = next(h for h in config["headers"] if h["for"] == "/*")["values"]
    assert everything == SECURITY_HEADERS
    assert "wasm-unsafe-eval" in everything["Content-Security-Policy"]
    assert everything["Strict-Transport-Security"].startswith("max-age=") and "camera=()" in \
        everything["Permissions-Policy"], "HSTS and a Permissions-Policy (issue 19)"
    static = next(h for h in config["headers"] if h["for"] == "/static/*")["values"]
    assert "immutable" in static["Cache-Control"]


def test_aliases_redirect_and_old_wikilinks_follow(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/conseil-c.md", "authors:", "aliases: [ancienne-seance-c]\nauthors:")
    replace(small, "notes/conseil-b.md", "Retour vers [[conseil-a]].", "Retour vers [[conseil-a]] et [[ancienne-seance-c]].")
    assert analyse(small).errors == []
    build(small, tmp_path / "site")
    files = site_files(tmp_path / "site")
    assert files["_redirects"].decode() == "/site/notes/ancienne-seance-c.html /site/notes/conseil-c.html 301\n"
    page = BeautifulSoup(files["notes/ancienne-seance-c.html"], "html.parser")
    assert page.select_one('meta[http-equiv="refresh"]')["content"] == "0; url=conseil-c.html"
    assert "notes/ancienne-seance-c.txt" not in files and b"ancienne-seance-c" not in files["sitemap.xml"]
    b = BeautifulSoup(files["notes/conseil-b.html"], "html.parser")
    assert "conseil-c.html" in [a["href"] for a in b.select(".note-body a")]


def test_an_alias_cannot_shadow_a_note(small: Path) -> None:
    replace(small, "notes/conseil-c.md", "authors:", "aliases: [conseil-a]\nauthors:")
    assert any(p.code == "duplicate-slug" and "alias" in p.message for p in analyse(small).errors)


def test_the_documented_workflow_checks_and_builds_strictly() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "site.yml").read_text(encoding="utf-8"))
    commands = [step.get("run", "") for step in workflow["jobs"]["site"]["steps"]]
    assert any("carnet check content --format github" in c for c in commands)
    assert any("carnet build content --out build --strict" in c for c in commands)
    assert any("carnet check --site build" in c for c in commands)
