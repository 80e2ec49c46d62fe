"""The command line, run as a user runs it: a real process, its exit code and its output."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator import __version__
from support.corpus import line_of, replace

ROOT = Path(__file__).resolve().parents[1]


def carnet(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_version() -> None:
    result = carnet("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"carnet {__version__}"


@pytest.mark.parametrize("command,options", [
    ((), ["build", "check"]),
    (("build",), ["--out", "--strict", "--base-url", "CONTENT"]),
    (("check",), ["--format", "github", "--strict"]),
])
def test_help_on_every_command(command: tuple[str, ...], options: list[str]) -> None:
    result = carnet(*command, "--help")
    assert result.returncode == 0
    for option in options:
        assert option.lower() in result.stdout.lower()


def test_check_clean_content_exits_zero(small: Path) -> None:
    result = carnet("check", str(small))
    assert result.returncode == 0, result.stderr
    assert "0 error(s), 0 warning(s)" in result.stderr


def test_check_reports_errors_with_file_and_line(small: Path) -> None:
    replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [Inconnue]")
    line = line_of(small, "notes/conseil-c.md", "Inconnue")
    result = carnet("check", str(small))
    assert result.returncode == 1
    assert f"{small}/notes/conseil-c.md:{line}: error [unknown-category]" in result.stderr
    assert "→" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_problem_reaches_the_terminal_with_its_control_characters_escaped(small: Path, fmt: str) -> None:
    """A file name is content too: one holding an escape sequence or a bidi override is
    reported (bad slug) with them shown as escapes, never obeyed by the terminal."""
    (small / "notes" / "a\x1b[2Jb\u202e.md").write_text("---\ntitle: x\n---\nTexte.\n", encoding="utf-8")
    result = carnet("check", str(small), "--format", fmt)
    assert result.returncode == 1, result.stderr
    shown = result.stderr + result.stdout
    assert "\x1b" not in shown and "\u202e" not in shown
    assert "a\\x1b[2Jb\\u202e.md" in shown


def test_check_github_format(small: Path) -> None:
    replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [Inconnue]")
    line = line_of(small, "notes/conseil-c.md", "Inconnue")
    result = carnet("check", str(small), "--format", "github")
    assert result.returncode == 1
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert len(annotations) == 1
    assert re.match(rf"::error file={re.escape(str(small))}/notes/conseil-c\.md,line={line},"
                    r"title=unknown-category::.+", annotations[0])


def test_warnings_pass_unless_strict(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/conseil-c.md", "reconduit.", "reconduit. [[conseil-z]]")
    assert carnet("check", str(small)).returncode == 0
    assert carnet("check", str(small), "--strict").returncode == 1
    ok = carnet("build", str(small), "--out", str(tmp_path / "site"))
    assert ok.returncode == 0 and "warning [broken-link]" in ok.stderr
    strict = carnet("build", str(small), "--out", str(tmp_path / "strict"), "--strict")
    assert strict.returncode == 1 and not (tmp_path / "strict").exists()


def test_build_stops_on_content_errors_without_traceback(small: Path, tmp_path: Path) -> None:
    (small / "notebooks" / "veille.yaml").write_text("title: [oops\n", encoding="utf-8")
    result = carnet("build", str(small), "--out", str(tmp_path / "site"))
    assert result.returncode == 1
    assert "yaml-syntax" in result.stderr and "nothing was written" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "site").exists()


def test_build_prints_what_each_public_notebook_publishes(small: Path, tmp_path: Path) -> None:
    result = carnet("build", str(small), "--out", str(tmp_path / "site"))
    assert result.returncode == 0, result.stderr
    assert re.search(r"published notebook conseil: 6 note\(s\), 2 comment\(s\) \(\+1 withdrawn.*\); "
                     r"names shown: Élève 1, Élève 2, Mme E\.", result.stdout)
    assert "secret" not in result.stdout


def test_build_ends_with_a_summary_and_rebuilds_only_what_changed(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    first = carnet("build", str(small), "--out", str(out), "--no-search")
    assert first.returncode == 0, first.stderr
    assert re.search(r"built \d+ files into .* in [\d.]+ s \(full build; 0 error\(s\), \d+ warning\(s\)", first.stdout)
    summary = dict(re.findall(r"^  (\w+) +(.+)$", first.stdout, flags=re.M))
    assert summary["pages"].isdigit() and summary["notes"].startswith("8")
    assert re.match(r"\d+ \(\d+ detached, \d+ relocated\)", summary["extractions"])
    assert re.match(r"\d+ \(.*weak.*\)", summary["citations"]) and summary["operations"] == "0 rejected"
    assert "\r" not in first.stderr, "no progress line when stderr is not a terminal"
    again = carnet("build", str(small), "--out", str(out), "--no-search")
    assert "(nothing changed;" in again.stdout
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est reconduit, dit-on.")
    edited = carnet("build", str(small), "--out", str(out), "--no-search")
    assert re.search(r"\((\d+) file\(s\) rewritten;", edited.stdout), edited.stdout
    assert "reconduit, dit-on" in (out / "notes" / "conseil-c.html").read_text(encoding="utf-8")
    assert (tmp_path / ".carnet-cache" / "site.pickle").is_file()


def test_build_refuses_foreign_output_directory(small: Path, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("mine", encoding="utf-8")
    result = carnet("build", str(small), "--out", str(tmp_path / "docs"))
    assert result.returncode == 2 and "refusing" in result.stderr and "Traceback" not in result.stderr
    assert (tmp_path / "docs" / "index.md").read_text(encoding="utf-8") == "mine"


def test_missing_content_directory(tmp_path: Path) -> None:
    result = carnet("check", str(tmp_path / "nowhere"))
    assert result.returncode == 2 and "content directory not found" in result.stderr


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("carnet")
    assert script.exists(), "pip install -e . provides the 'carnet' command"
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0


def test_a_no_op_build_still_sees_a_hand_touched_output(small: Path, tmp_path: Path) -> None:
    """The no-op check compares a digest of the output tree's paths, sizes and times, not the
    last build's whole record: a file edited, removed or added by hand is still seen, and put right."""
    import os
    out = tmp_path / "site"
    assert carnet("build", str(small), "--out", str(out), "--no-search").returncode == 0
    page = out / "notes" / "conseil-c.html"
    built = page.read_bytes()
    touches = [
        lambda: os.utime(page, ns=(page.stat().st_atime_ns, page.stat().st_mtime_ns + 10**9)),  # same bytes, later
        lambda: page.write_bytes(built.replace(b"reconduit", b"RECONDUIT")),  # same size, other bytes
        lambda: page.unlink(),
        lambda: (out / "notes" / "stray.html").write_text("x", encoding="utf-8"),
    ]
    for touch in touches:
        assert "(nothing changed;" in carnet("build", str(small), "--out", str(out), "--no-search").stdout
        touch()
        again = carnet("build", str(small), "--out", str(out), "--no-search")
        assert again.returncode == 0 and "(nothing changed;" not in again.stdout, again.stdout
        assert page.read_bytes() == built and not (out / "notes" / "stray.html").exists()
