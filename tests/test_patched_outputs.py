"""`carnet serve` patches what its last build made of every output file rather than walking
all of them again: manifest.json (a line per file), the cache's listing of the output tree
(:attr:`BuildCache.listing`) and its state of each file (:attr:`BuildCache.written`). What a
patch gives is what the full computation gives — the files on disk hashed and listed again,
and a cold build of the same content — whatever the edit; a patch makes the lines of the
files that changed alone; and with the engine's read check on, a patch that forgets a change
fails the build."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import generator.engine.cache as cache_module
import generator.engine.manifest as manifest
import generator.engine.output as output
import generator.site.machine as machine
from generator.engine import reads
from generator.engine.cache import BuildCache, default_cache_path
from generator.files import listing_digest, listing_line
from generator.pipeline import build
from support.corpus import site_files


def _edit_body(content: Path, name: str = "veille-a") -> set[Path]:
    note = content / "notes" / f"{name}.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nUn paragraphe ajouté.\n", encoding="utf-8")
    return {note}


def _add_note(content: Path) -> set[Path]:
    note = content / "notes" / "ajout.md"
    note.write_text("---\ntitle: Ajout\ndate: 2025-02-03\nnotebooks:\n  veille:\n    theme: [Mécénat]\n---\n"
                    "Un ajout, voir [[veille-a]].\n", encoding="utf-8")
    return {note}


def _remove_note(content: Path) -> set[Path]:
    note = content / "notes" / "veille-a.md"
    note.unlink()
    return {note}


def _edit_asset(content: Path) -> set[Path]:
    asset = content / "assets" / "public.csv"
    asset.write_bytes(asset.read_bytes() + b"3,4\n")
    return {asset}


def _add_asset(content: Path) -> set[Path]:
    asset, note = content / "assets" / "ajout.csv", content / "notes" / "veille-a.md"
    asset.write_bytes(b"a,b\n1,2\n")
    note.write_text(note.read_text(encoding="utf-8") + "\nLe [tableau ajouté](../assets/ajout.csv).\n",
                    encoding="utf-8")
    return {asset, note}


def _remove_asset(content: Path) -> set[Path]:
    asset, note = content / "assets" / "public.csv", content / "notes" / "conseil-a.md"
    note.write_text(note.read_text(encoding="utf-8").replace("[tableau](../assets/public.csv)", "tableau"),
                    encoding="utf-8")
    asset.unlink()
    return {asset, note}


EDITS: dict[str, Callable[[Path], set[Path]]] = {
    "body edited": _edit_body, "note added": _add_note, "note removed": _remove_note,
    "asset edited": _edit_asset, "asset added": _add_asset, "asset removed": _remove_asset,
}


@pytest.fixture
def unchecked() -> Iterator[None]:
    """The read check off: what the build keeps is the patch's own result, not checked and
    not made a second time in full (which would make every line again)."""
    reads.check_reads(False)
    try:
        yield
    finally:
        reads.check_reads(True)


def _served(small: Path, out: Path) -> BuildCache:
    """A site built as `carnet serve` builds its first one: the cache resident, then in memory only."""
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    build(small, out, search=False, cache=cache, linger=True)
    cache.save()
    cache.path = None
    return cache


def _full_manifest(files: dict[str, bytes]) -> bytes:
    """manifest.json as the full computation makes it from the files on disk: every file but itself."""
    listed = {path: data for path, data in files.items() if path != "manifest.json"}
    return machine.manifest({path: len(data) for path, data in listed.items()},
                            {path: hashlib.sha256(data).hexdigest() for path, data in listed.items()})


def _full_written(out: Path, files: dict[str, bytes]) -> dict[str, tuple[str, int, int]]:
    """What the output tree holds, each file hashed and looked at again."""
    state = {}
    for path, data in files.items():
        info = (out / path).stat()
        state[path] = (hashlib.sha256(data).hexdigest(), info.st_size, info.st_mtime_ns)
    return state


def _held_to_full(cache: BuildCache, out: Path, cold: Path) -> None:
    files = site_files(out, search=False)
    assert files["manifest.json"] == _full_manifest(files)
    assert files["manifest.json"] == (cold / "manifest.json").read_bytes()
    assert cache.written == _full_written(out, files)
    assert cache.listing == listing_digest([listing_line(path, size, mtime)
                                            for path, (_sha, size, mtime) in _full_written(out, files).items()])
    assert cache.output_intact(out)  # the tree as walked: the next build goes on from it


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which walk made each line (of manifest.json, of the listing, of the state) from now on."""
    made: list[str] = []

    def counting(walk: str, make: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*given: Any) -> Any:
            made.append(walk)
            return make(*given)
        return counted

    line = counting("manifest", machine.manifest_line)
    for module in (machine, manifest):  # the line of a file in manifest.json, made by either
        monkeypatch.setattr(module, "manifest_line", line)
    monkeypatch.setattr(cache_module, "listing_line", counting("listing", cache_module.listing_line))
    monkeypatch.setattr(output, "_file_state", counting("state", output._file_state))
    return made


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_resident_rebuild_patches_the_manifest_listing_and_state_of_the_last_build(
        small: Path, tmp_path: Path, edit: str, unchecked: None, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    cache = _served(small, out)
    files = len(cache.written)
    for round_ in range(2):  # twice: the second patches what the first patched
        edited = EDITS[edit](small) if round_ == 0 else _edit_body(small, "conseil-b")
        made = _counted(monkeypatch)
        build(small, out, search=False, cache=cache, linger=True, edited=edited)
        monkeypatch.undo()
        cold = tmp_path / f"cold-{round_}"
        build(small, cold, search=False)
        _held_to_full(cache, out, cold)
        # the lines of the files this edit changed, not one per file
        for walk in ("manifest", "listing", "state"):
            assert 0 < made.count(walk) < files // 3, f"{walk}: {made.count(walk)} lines made of {files} files"


def test_a_rebuild_from_the_cache_on_disk_computes_them_in_full(small: Path, tmp_path: Path,
                                                                unchecked: None) -> None:
    out = tmp_path / "site"
    _served(small, out)
    _edit_body(small)
    cache = BuildCache.open(default_cache_path(out))  # `carnet build`: no last result in this process
    build(small, out, search=False, cache=cache)
    build(small, tmp_path / "cold", search=False)
    _held_to_full(cache, out, tmp_path / "cold")


def _manifest_forgets_the_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest, "manifest_patched", lambda kept, files, derived, made_digests: True)


def _listing_forgets_a_change(monkeypatch: pytest.MonkeyPatch) -> None:
    patched = cache_module._listing_patched  # manifest.json is written again by every edit
    monkeypatch.setattr(cache_module, "_listing_patched", lambda lines, written, changed:
                        patched(lines, written, set(changed) - {"manifest.json"}))


def _state_forgets_a_change(monkeypatch: pytest.MonkeyPatch) -> None:
    patched = output._state_patched
    monkeypatch.setattr(output, "_state_patched", lambda digests, out_dir, previous, changed:
                        patched(digests, out_dir, previous, set(changed) - {"manifest.json"}))


@pytest.mark.parametrize("broken", [_manifest_forgets_the_changes, _listing_forgets_a_change,
                                    _state_forgets_a_change])
def test_the_read_check_fails_a_patch_that_forgets_a_change(small: Path, tmp_path: Path,
                                                            broken: Callable[[pytest.MonkeyPatch], None],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    cache = _served(small, out)
    broken(monkeypatch)
    with pytest.raises(reads.StaleOutputs):
        build(small, out, search=False, cache=cache, linger=True, edited=_add_note(small))
