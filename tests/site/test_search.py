"""Search: the Pagefind bundle is built from published pages only; --no-search omits it."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

from generator.pipeline import build
from support.corpus import site_files


def fragments(site: Path) -> bytes:
    return b"".join(gzip.decompress(p.read_bytes()) for p in sorted((site / "pagefind" / "fragment").glob("*")))


def test_the_index_holds_published_pages_only(small: Path, tmp_path: Path) -> None:
    build(small, tmp_path / "site")
    text = fragments(tmp_path / "site").decode("utf-8")
    assert "/site/notes/conseil-a.html" in text or "/notes/conseil-a.html" in text
    for secret in ("PRIVATETOKEN", "PRIVATETITLE", "Gaston Confidentiel", "Zoé Realname", "MASKEDCOMMENT",
                   "WITHDRAWNTEXT"):
        assert secret not in text, secret


def test_no_search_omits_the_bundle_and_nothing_else_changes(small: Path, tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "generator", "build", str(small), "--out", str(tmp_path / "quick"),
                             "--no-search", "--quiet"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    build(small, tmp_path / "full")
    quick, full = site_files(tmp_path / "quick"), site_files(tmp_path / "full")
    assert not any(p.startswith("pagefind/") for p in quick)
    assert any(p.startswith("pagefind/") for p in full)
    assert {p: d for p, d in full.items() if not p.startswith("pagefind/")} == quick


def test_pages_declare_their_filters(example_site: Path) -> None:
    page = (example_site / "notes" / "cvl-wiki-budget.html").read_text(encoding="utf-8")
    for marker in ('data-pagefind-body', 'data-pagefind-filter="type:Article wiki"',
                   'data-pagefind-filter="notebook:Conseil de vie lycéenne"', 'data-pagefind-filter="state:vérifié"'):
        assert marker in page, marker


def test_an_incremental_build_reindexes_what_changed(small: Path, tmp_path: Path) -> None:
    from generator.engine.cache import BuildCache, default_cache_path
    from support.corpus import replace

    out = tmp_path / "site"
    build(small, out, cache=BuildCache.open(default_cache_path(out)))
    assert "reconduit" in fragments(out).decode("utf-8")
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est SEARCHABLEWORD reconduit.")
    result = build(small, out, cache=BuildCache.open(default_cache_path(out)))
    assert 0 < result.changed < result.files
    assert "SEARCHABLEWORD" in fragments(out).decode("utf-8")  # the new index was swapped in
    assert not (out / ".pagefind-next").exists()
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    assert not (out / "pagefind").exists()  # as a full build without search: no stale index


def test_excerpts_hold_no_ui_text(tmp_path: Path) -> None:
    """Issue 24: excerpts read "[1] contester": the citations' numbers, the contest links and
    the unsourced marks are left out of the index; the claims' own words are in it."""
    import json
    import shutil
    content = tmp_path / "content"
    shutil.copytree(Path(__file__).resolve().parents[2] / "content", content)
    build(content, tmp_path / "site")
    pages = []
    for path in sorted((tmp_path / "site" / "pagefind" / "fragment").glob("*")):
        data = gzip.decompress(path.read_bytes())
        pages.append(json.loads(data[data.index(b"{"):]))  # after Pagefind's signature
    wiki = next(page for page in pages if page["url"].endswith("/notes/cvl-wiki-budget.html"))
    text = wiki["content"]
    assert "quorum" in text.lower(), "the claims' words are indexed"
    assert "contester" not in text and "[1]" not in text
