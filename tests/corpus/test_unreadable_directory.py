"""A directory the loader cannot read (here: deeper than the system's PATH_MAX) is said,
with its path, never silently left out of the site (issue 56)."""

from __future__ import annotations

import os
from pathlib import Path

from generator.pipeline import check_content
from generator.problems import Severity
from support.corpus import copy_fixture


def _deep(root: Path, levels: int) -> str:
    """Folders of 200 characters, ``levels`` deep, made by descriptor (a path that long
    cannot be opened whole); the relative path of the last."""
    name = "d" * 200
    descriptor = os.open(root, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=descriptor)
            inner = os.open(name, os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        made = os.open("figure.csv", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=descriptor)
        os.write(made, b"a,b\n")
        os.close(made)
    finally:
        os.close(descriptor)
    return "/".join([name] * levels)


def test_an_asset_folder_deeper_than_path_max_is_a_warning_not_a_silent_loss(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    _deep(content / "assets", 25)  # 25 × 201 bytes: past Linux's 4,096
    problems = [p for p in check_content(content).problems if p.code == "unreadable-directory"]
    assert problems, "the folder that cannot be opened is named"
    assert problems[0].severity is Severity.WARNING and problems[0].file.startswith("assets/ddd")
    assert "shorten its path" in problems[0].hint


def test_building_it_with_the_cache_is_no_traceback(tmp_path: Path) -> None:
    from support.cli import carnet_here

    content = copy_fixture("small", tmp_path)
    _deep(content / "assets", 25)
    for _ in range(2):  # the first build, then one over its cache
        run = carnet_here("build", content, "--out", tmp_path / "site", "--no-search")
        assert run.code == 0 and "Traceback" not in run.err, str(run)
        assert "unreadable-directory" in run.err + run.out
