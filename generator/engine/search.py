"""Search: Pagefind (the binary of its PyPI package) indexes the finished pages before the
site is swapped in. Pages mark their text with ``data-pagefind-body`` and their filters
(notebook, category, page type, verification state) with ``data-pagefind-filter``; only
published pages exist, so private content is never indexed.

Determinism: Pagefind 1.5.2 from PyPI names some filter shards non-deterministically, so
``pagefind/`` is left out of the byte-identity guarantee and of ``manifest.json``; its
equality across builds is checked by search results (tests/browser).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from generator.problems import CarnetError


class SearchIndexError(CarnetError):
    """Pagefind could not index the site."""


def index_site(site_dir: Path, language: str, output: Path | None = None) -> None:
    """Index ``site_dir`` into ``site_dir/pagefind`` (or into ``output``, to be swapped in)."""
    where = ["--output-path", str(output.absolute())] if output else ["--output-subdir", "pagefind"]
    command = [sys.executable, "-m", "pagefind", "--site", str(site_dir), *where,
               "--force-language", language.split("-")[0], "--silent"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SearchIndexError(f"Pagefind could not run: {exc}; build with --no-search to skip the index") from exc
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise SearchIndexError("Pagefind failed: " + " / ".join(detail) + " (build with --no-search to skip it)")


def reindex_site(site_dir: Path, language: str) -> None:
    """Re-index a live site: the new index is built beside the old one and swapped in, so
    the search keeps working meanwhile."""
    from generator.engine.output import swap_directory

    fresh = site_dir / ".pagefind-next"
    if fresh.exists():
        shutil.rmtree(fresh)
    try:
        index_site(site_dir, language, fresh)
        swap_directory(fresh, site_dir / "pagefind")
    finally:
        if fresh.exists():
            shutil.rmtree(fresh, ignore_errors=True)
