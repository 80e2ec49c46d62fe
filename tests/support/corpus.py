"""Helpers to copy a fixture corpus and change files in it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generator.engine.cache import BuildCache

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def copy_fixture(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(FIXTURES / name, target)
    return target


def served(content: Path, out: Path) -> BuildCache:
    """A build cache as ``carnet serve`` holds it after its first build: that build made with
    it on disk, then kept in memory alone (resident, saved no more)."""
    from generator.engine.cache import BuildCache, default_cache_path
    from generator.pipeline import build

    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(content, out, search=False, cache=cache)
    cache.save()
    cache.path = None
    return cache


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def replace(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def full_site(content: Path, out: Path) -> dict[str, bytes]:
    """The site a full build of ``content`` writes into ``out`` (made afresh), without search."""
    from generator.pipeline import build

    shutil.rmtree(out, ignore_errors=True)
    build(content, out, search=False)
    return site_files(out, search=False)


def line_of(root: Path, rel: str, needle: str, occurrence: int = 1) -> int:
    """1-based line of the ``occurrence``-th line containing ``needle``: tests compute
    expected lines instead of typing them."""
    text = (root / rel).read_bytes().decode("utf-8", errors="replace")
    for number, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            occurrence -= 1
            if occurrence == 0:
                return number
    raise AssertionError(f"{needle!r} not in {rel}")


def site_files(out: Path, search: bool = True) -> dict[str, bytes]:
    """Every file of a built site; ``search=False`` leaves out the Pagefind bundle, whose
    shard names vary between builds (its equality is checked by search results)."""
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return files if search else {k: v for k, v in files.items() if not k.startswith("pagefind/")}
