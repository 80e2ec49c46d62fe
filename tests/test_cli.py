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


def test_build_of_a_missing_directory_says_so_without_a_traceback(tmp_path: Path) -> None:
    """It went through the build cache's digest of the inputs, which walked the missing folder."""
    missing = tmp_path / "nowhere"
    result = carnet("build", str(missing), "--out", str(tmp_path / "site"))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"content directory not found: {missing}" in result.stderr and "carnet.yaml" in result.stderr
    assert not (tmp_path / "site").exists()


def test_the_build_cache_digests_a_missing_folder_instead_of_failing(tmp_path: Path) -> None:
    from generator.engine.cache import BuildCache, build_options
    from generator.pipeline import build
    from generator.problems import SettingsError
    from generator.site import DEFAULT_THEME

    cache = BuildCache.open(tmp_path / "cache.pickle")
    options = build_options(False, None, False, DEFAULT_THEME)
    (tmp_path / "empty").mkdir()
    assert cache.inputs_digest([tmp_path / "nowhere"], options) != cache.inputs_digest([tmp_path / "empty"], options)
    with pytest.raises(SettingsError, match="content directory not found"):
        build(tmp_path / "nowhere", tmp_path / "site", cache=BuildCache.open(tmp_path / "cache.pickle"))


PATHS = [  # every path a command is given; {missing} is a path that does not exist
    (["build", "{missing}", "--out", "{tmp}/site"], "content directory not found"),
    (["build", "{small}", "--out", "{tmp}/site", "--theme", "{missing}"], "theme directory not found"),
    (["check", "{missing}"], "content directory not found"),
    (["check", "{small}", "--site", "{missing}"], "built site not found"),
    (["serve", "{missing}", "--out", "{tmp}/site", "--port", "0"], "content directory not found"),
    (["propose", "wiki-budget", "--content", "{missing}"], "content directory not found"),
    (["analyse", "conseil-a", "--content", "{missing}"], "content directory not found"),
    (["verify", "--content", "{missing}"], "content directory not found"),
    (["select", "wiki-budget", "--content", "{missing}"], "content directory not found"),
    (["context", "budget", "--content", "{missing}"], "content directory not found"),
    (["ask", "Le budget ?", "--content", "{missing}"], "content directory not found"),
    (["review", "{missing}"], "proposal not found"),
    (["apply", "{missing}"], "proposal not found"),
    (["adopt", "{missing}", "--by", "Le conseil"], "synthesis file not found"),
]


@pytest.mark.parametrize("argv,said", PATHS, ids=[" ".join(a[:1] + a[-2:]) for a, _ in PATHS])
def test_a_missing_path_is_named_with_what_to_do(argv: list[str], said: str, small: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from generator.cli import main

    missing = tmp_path / "nowhere"
    args = [a.format(missing=missing, tmp=tmp_path, small=small) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"carnet: {said}: {missing}" in err and " — " in err, err  # the path, then what to do
    assert not (tmp_path / "site").exists()


def test_a_path_of_the_wrong_kind_or_unreadable_is_named(small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import os

    from generator.cli import main

    note = small / "notes" / "conseil-a.md"
    assert main(["check", str(note)]) == 2
    assert f"{note} is a file, not a content directory" in capsys.readouterr().err
    assert main(["apply", str(small / "notes")]) == 2
    assert f"{small / 'notes'} is a directory, not a proposal file" in capsys.readouterr().err
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: Path(path) != small and real(path, mode, **kw))
    assert main(["ask", "Le budget ?", "--content", str(small)]) == 2
    assert f"content directory cannot be read: {small}" in capsys.readouterr().err


def proposal_of(small: Path, operations: str) -> Path:
    """An extractive proposal for wiki-budget, its operations replaced by ``operations`` (YAML)."""
    assert carnet("propose", "wiki-budget", "--content", str(small)).returncode == 0
    (path,) = (small / "proposals" / "sections" / "wiki-budget").glob("*.yaml")
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:text.index("operations:")] + operations, encoding="utf-8")
    return path


def test_apply_of_an_empty_proposal_says_nothing_was_applied(small: Path) -> None:
    path = proposal_of(small, "operations: []\n")
    before = (small / "notes" / "wiki-budget.md").read_bytes()
    result = carnet("apply", str(path))
    assert result.returncode == 0, result.stderr
    assert "nothing was applied: the proposal holds no operation" in result.stdout
    assert (small / "notes" / "wiki-budget.md").read_bytes() == before


def test_apply_that_accepts_nothing_says_so_with_its_counts(small: Path) -> None:
    path = proposal_of(small, "operations:\n- op: AppendToSection\n  heading: Aucune section de ce nom\n"
                              "  after_heading: ''\n  content: '- « voté à l''unanimité » [[ext:a-budget]]'\n"
                              "- op: NoChange\n  heading: ''\n  after_heading: ''\n  content: ''\n")
    before = (small / "notes" / "wiki-budget.md").read_bytes()
    result = carnet("apply", str(path))
    # a rejection is the applier's verdict, recorded with its reason: the command did its work (exit 0)
    assert result.returncode == 0, result.stderr
    assert "[1] AppendToSection 'Aucune section de ce nom': rejected:" in result.stdout
    assert "0 operation(s) applied (1 accepted: NoChange only, 1 rejected): the article was not changed" \
        in result.stdout
    assert (small / "notes" / "wiki-budget.md").read_bytes() == before


def test_apply_and_propose_say_what_they_did(small: Path) -> None:
    made = carnet("propose", "wiki-budget", "--content", str(small))
    assert made.returncode == 0 and "wrote 1 operation(s)" in made.stdout, made.stdout
    assert "no usable operation" not in made.stdout
    (path,) = (small / "proposals" / "sections" / "wiki-budget").glob("*.yaml")
    applied = carnet("apply", str(path))
    assert applied.returncode == 0 and "1 operation(s) applied (1 accepted, 0 rejected)" in applied.stdout
    # everything is cited now: the next proposal has nothing to offer, and says so
    again = carnet("propose", "wiki-budget", "--content", str(small))
    assert again.returncode == 0 and "no usable operation" in again.stdout, again.stdout
