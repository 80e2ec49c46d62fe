"""Deployment: netlify.toml sends the headers the browser tests use; renamed notes keep
their old addresses; the documented CI workflow runs the checks, passes actionlint, pins
its actions by commit and holds a read-only token."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from generator.pipeline import build, check_content
from generator.site.headers import ASSET_HEADERS, ASSETS, SECURITY_HEADERS, headers_for
from support.corpus import replace, site_files

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "site.yml"


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


def test_netlify_sends_the_assets_a_sandboxed_policy_of_their_own() -> None:
    """Issue 56: /assets/* gets a policy that replaces the site's (its rule comes after /*),
    the one `carnet serve` and the browser tests send there (headers_for)."""
    config = tomllib.loads((ROOT / "netlify.toml").read_text(encoding="utf-8"))
    rules = [rule["for"] for rule in config["headers"]]
    assert ASSETS == "/assets/" and rules.index("/assets/*") > rules.index("/*")
    assets = next(h for h in config["headers"] if h["for"] == "/assets/*")["values"]
    assert assets == ASSET_HEADERS
    policy = assets["Content-Security-Policy"].split("; ")
    assert policy[0] == "sandbox" and "default-src 'none'" in policy and not any("script" in d for d in policy)
    merged = {**next(h for h in config["headers"] if h["for"] == "/*")["values"], **assets}  # later rules win
    assert merged == headers_for("/assets/doc/scan.pdf") and merged["X-Content-Type-Options"] == "nosniff"
    assert headers_for("/notes/a.html") == SECURITY_HEADERS
    assert headers_for("/./ASSETS//x.pdf") == merged, "the address a server would find the file at"


def test_aliases_redirect_and_old_wikilinks_follow(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/conseil-c.md", "authors:", "aliases: [ancienne-seance-c]\nauthors:")
    replace(small, "notes/conseil-b.md", "Retour vers [[conseil-a]].", "Retour vers [[conseil-a]] et [[ancienne-seance-c]].")
    assert check_content(small).errors == []
    build(small, tmp_path / "site")
    files = site_files(tmp_path / "site")
    assert files["_redirects"].decode() == "/site/notes/ancienne-seance-c.html /site/notes/conseil-c.html 301!\n"
    page = BeautifulSoup(files["notes/ancienne-seance-c.html"], "html.parser")
    assert page.select_one('meta[http-equiv="refresh"]')["content"] == "0; url=conseil-c.html"
    assert "notes/ancienne-seance-c.txt" not in files and b"ancienne-seance-c" not in files["sitemap.xml"]
    b = BeautifulSoup(files["notes/conseil-b.html"], "html.parser")
    assert "conseil-c.html" in [a["href"] for a in b.select(".note-body a")]


def test_every_alias_rule_is_forced_since_a_redirect_page_stands_at_the_old_address(small: Path,
                                                                                   tmp_path: Path) -> None:
    # Netlify serves an existing file before a plain rule: only "301!" redirects past the page
    replace(small, "notes/conseil-c.md", "authors:", "aliases: [ancienne-seance-c, seance-c-2024]\nauthors:")
    replace(small, "notes/conseil-a.md", "authors:", "aliases: [premiere-seance]\nauthors:")
    build(small, tmp_path / "site", search=False)
    files = site_files(tmp_path / "site", search=False)
    rules = [line.split() for line in files["_redirects"].decode().splitlines()]
    assert len(rules) == 3
    assert all(len(rule) == 3 and rule[2] == "301!" for rule in rules), rules
    for old, _new, _status in rules:
        assert old.removeprefix("/site/") in files, "the redirect page stays, for other hosts and file://"


def test_an_alias_cannot_shadow_a_note(small: Path) -> None:
    replace(small, "notes/conseil-c.md", "authors:", "aliases: [conseil-a]\nauthors:")
    assert any(p.code == "duplicate-slug" and "alias" in p.message for p in check_content(small).errors)


def test_the_documented_workflow_checks_and_builds_strictly() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    commands = [step.get("run", "") for step in workflow["jobs"]["site"]["steps"]]
    assert any("carnet check content --format github" in c for c in commands)
    assert any("carnet build content --out build --strict" in c for c in commands)
    assert any("carnet check --site build" in c for c in commands)


PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")


def test_the_documented_workflow_pins_its_actions_and_holds_a_read_only_token() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    assert workflow.get("permissions") == {"contents": "read"}, "least privilege for the whole workflow"
    assert all("write" not in str(job.get("permissions", "")) for job in workflow["jobs"].values())
    steps = [step for job in workflow["jobs"].values() for step in job["steps"] if "uses" in step]
    assert steps, "the workflow uses actions"
    # a tag can be moved to other code, a commit cannot
    assert [step["uses"] for step in steps if not PINNED.fullmatch(step["uses"])] == []
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith(("uses:", "- uses:"))]
    assert len(lines) == len(steps)
    assert all(re.search(r"@[0-9a-f]{40} # v\d+(\.\d+)*$", line) for line in lines), \
        "each pin says which release it is, for whoever updates it"
    checkouts = [step for step in steps if step["uses"].startswith("actions/checkout@")]
    assert checkouts and all(step.get("with", {}).get("persist-credentials") is False for step in checkouts), \
        "the token is not left in .git/config for the later steps"


def _actionlint() -> str | None:
    """The actionlint of the test extra (beside this interpreter), else one on PATH."""
    beside = Path(sys.executable).parent / "actionlint"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("actionlint")


def test_the_documented_workflow_passes_actionlint() -> None:
    binary = _actionlint()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("actionlint is missing: it comes with the test extra (pip install -e '.[test]')")
        pytest.skip("actionlint is not installed: pip install -e '.[test]'")
    # shellcheck and pyflakes are left out: whether a machine has them would change the verdict
    run = subprocess.run([binary, "-oneline", "-no-color", "-shellcheck=", "-pyflakes=", str(WORKFLOW)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
