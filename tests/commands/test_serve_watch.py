"""`carnet serve` watching the content: only content-changing events rebuild (the build's
own reads must not start the next build), a burst of writes makes one rebuild, and each
rebuild's result, or each problem with file:line, is printed in the terminal."""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileClosedNoWriteEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileOpenedEvent,
    FileSystemEvent,
)

from generator.commands.serve import Server, Watched, watched_folders
from generator.problems import ContentError
from generator.site.theme import check_theme
from support.corpus import replace, write

pytestmark = pytest.mark.slow  # holds a live server idle for seconds at a time

IDLE = 4.0  # seconds serve is left alone: a rebuild loop shows within it many times over
PATIENCE = 60.0  # seconds to wait for an expected rebuild on a loaded machine


class Counted:
    """Server.rebuild wrapped to count the rebuilds begun and ended."""

    def __init__(self, server: Server) -> None:
        self.started = 0
        self.finished = 0
        self.lock = threading.Lock()
        original = server.rebuild

        def rebuild() -> bool:
            with self.lock:
                self.started += 1
            try:
                return original()
            finally:
                with self.lock:
                    self.finished += 1

        server.rebuild = rebuild  # type: ignore[method-assign]  # the debounce timer looks it up on the instance


def eventually(condition: Callable[[], bool], timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the expected rebuild never came"
        time.sleep(0.05)


@pytest.fixture
def watched(small: Path, tmp_path: Path) -> Iterator[tuple[Server, Counted]]:
    running = Server(small, tmp_path / "site", port=0, search=False)
    running.start()
    counted = Counted(running)
    yield running, counted
    running.close()


def test_a_standing_content_error_rebuilds_once_then_serve_stays_idle(
        watched: tuple[Server, Counted], small: Path) -> None:
    server, counted = watched
    replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [Inconnue]")
    eventually(lambda: counted.finished >= 1)
    assert server.hub.event[0] == "error-report"
    time.sleep(IDLE)
    assert counted.started == 1, f"{counted.started} rebuilds for one edit"


def test_after_a_successful_rebuild_serve_stays_idle(watched: tuple[Server, Counted], small: Path) -> None:
    server, counted = watched
    time.sleep(IDLE)  # untouched since the first build: nothing to do
    assert counted.started == 0
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est reconduit et augmenté.")
    eventually(lambda: counted.finished >= 1)
    assert server.hub.event[0] == "reload"
    time.sleep(IDLE)
    assert counted.started == 1, f"{counted.started} rebuilds for one edit"


def test_a_burst_of_writes_makes_one_rebuild(small: Path, tmp_path: Path) -> None:
    # a debounce longer than any gap inside the burst, even on a loaded machine
    server = Server(small, tmp_path / "site", port=0, search=False, debounce=2.0)
    server.start()
    try:
        counted = Counted(server)
        note = small / "notes" / "conseil-c.md"
        text = note.read_text(encoding="utf-8")
        for n in range(5):
            note.write_text(text.replace("Le budget est reconduit.", f"Le budget est reconduit ({n})."),
                            encoding="utf-8")
        write(small, "notes/.conseil-c.md.swp", "an editor's swap file")
        eventually(lambda: counted.finished >= 1)
        time.sleep(IDLE)
        assert counted.started == 1
        assert b"reconduit (4)" in (server.out / "notes" / "conseil-c.html").read_bytes()
    finally:
        server.close()


def test_each_rebuild_is_reported_in_the_terminal_and_errors_with_file_and_line(
        small: Path, tmp_path: Path) -> None:
    from generator.pipeline import check_content

    out, err = io.StringIO(), io.StringIO()
    server = Server(small, tmp_path / "site", port=0, search=False, stdout=out, stderr=err)
    server.start()
    try:
        counted = Counted(server)
        note = small / "notes" / "conseil-c.md"
        good = note.read_text(encoding="utf-8")
        # broken front matter, and a category no taxonomy has
        note.write_text(good.replace("theme: [Budget]", "theme: [Inconnue]\ndate: [", 1), encoding="utf-8")
        eventually(lambda: counted.finished >= 1)
        report = err.getvalue()
        expected = [p.format_text(str(small)) for p in check_content(small).problems]  # what `carnet check` prints
        assert expected and all(line in report for line in expected), report
        assert "notes/conseil-c.md:" in report
        assert "the previous site stays served" in report
        assert out.getvalue() == ""

        note.write_text(good.replace("Le budget est reconduit.", "Le budget est enfin reconduit."),
                        encoding="utf-8")
        eventually(lambda: counted.finished >= 2)
        assert "rebuilt in " in out.getvalue() and "file(s) rewritten" in out.getvalue(), out.getvalue()
        assert err.getvalue() == report, "a successful rebuild adds nothing to stderr"
    finally:
        server.close()


def test_problem_text_reaches_the_terminal_escaped(small: Path, tmp_path: Path) -> None:
    err = io.StringIO()
    server = Server(small, tmp_path / "site", port=0, search=False, stdout=io.StringIO(), stderr=err)
    server.start()
    try:
        counted = Counted(server)
        replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [\"In\\e[2Jconnue\"]")
        eventually(lambda: counted.finished >= 1)
        assert "unknown-category" in err.getvalue()
        assert "\x1b" not in err.getvalue() and "\\x1b" in err.getvalue()
    finally:
        server.close()


# -- which events count ----------------------------------------------------------------

def _events(root: Path) -> list[tuple[FileSystemEvent, bool]]:
    content, theme = root / "content", root / "theme"
    note = str(content / "notes" / "a.md")
    return [
        (FileOpenedEvent(note), False),  # the build's own reads
        (FileClosedNoWriteEvent(note), False),
        (FileClosedEvent(note), False),  # follows a write, which was reported as modified
        (DirModifiedEvent(str(content / "notes")), False),  # an entry's own event says what changed
        (FileModifiedEvent(note), True),
        (FileModifiedEvent(os.fsencode(note)), True),
        (FileCreatedEvent(note), True),
        (FileDeletedEvent(note), True),
        (FileModifiedEvent(str(theme / "templates" / "page.html")), True),
        (DirCreatedEvent(str(content / "notes" / "new")), True),
        (DirDeletedEvent(str(content / "notes" / "old")), True),
        (DirMovedEvent(str(content / "a"), str(content / "b")), True),
        (FileMovedEvent(str(content / "notes" / ".a.md.tmp-12"), note), True),  # an atomic save
        (FileMovedEvent(note, str(root / "elsewhere.md")), True),  # moved out: gone from the site
        (FileMovedEvent(str(root / "x.md"), str(root / "y.md")), False),
        (FileModifiedEvent(str(content / "notes" / ".a.md.swp")), False),  # editors' scratch files
        (FileCreatedEvent(str(content / "notes" / "a.md~")), False),
        (FileCreatedEvent(str(content / "notes" / "#a.md#")), False),
        (FileModifiedEvent(str(content / ".git" / "index")), False),
        (FileModifiedEvent(str(theme / "site" / "index.html")), False),  # the output, inside the theme
        (FileModifiedEvent(str(root / ".carnet-cache" / "site.pickle")), False),
        (FileModifiedEvent(str(root / "notes.md")), False),  # outside every watched folder
    ]


def test_only_content_changing_events_under_the_watched_folders_count(tmp_path: Path) -> None:
    watched = Watched((tmp_path / "content", tmp_path / "theme"),
                      (tmp_path / "theme" / "site", tmp_path / ".carnet-cache"))
    wrong = [(event, expected) for event, expected in _events(tmp_path) if watched.relevant(event) != expected]
    assert wrong == []


def test_a_content_folder_below_a_hidden_one_is_watched(tmp_path: Path) -> None:
    content = tmp_path / ".local" / "content"
    assert Watched((content,)).relevant(FileModifiedEvent(str(content / "notes" / "a.md")))


def test_the_folders_watched_are_those_the_build_reads(small: Path, tmp_path: Path) -> None:
    server = Server(small, tmp_path / "site", port=0, search=False)
    try:
        watched = server.watched()
    finally:
        server.httpd.server_close()
    assert small.resolve() in watched.folders
    assert check_theme(None).resolve() in watched.folders  # the bundled theme, wherever it lies
    assert (tmp_path / "site").resolve() in watched.ignored
    theme = tmp_path / "theme"
    inner = theme / "content"
    inner.mkdir(parents=True)
    folders = watched_folders(inner, theme)
    assert theme.resolve() in folders and inner.resolve() not in folders, "watched once, through the theme"
    assert watched_folders(tmp_path / "missing", theme) == watched_folders(theme, theme)


def test_a_first_build_stopped_by_the_content_prints_its_problems(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [Inconnue]")
    err = io.StringIO()
    server = Server(small, tmp_path / "site", port=0, search=False, stdout=io.StringIO(), stderr=err)
    try:
        with pytest.raises(ContentError):
            server.start()
    finally:
        server.httpd.server_close()
    assert "notes/conseil-c.md:" in err.getvalue() and "unknown-category" in err.getvalue()


def test_a_rebuild_looks_again_at_the_paths_the_watcher_saw_alone(
        small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first rebuild walks the inputs (what changed while the first build ran is not
    known), and so does one after a rebuild that stopped; the others are given the paths
    the watcher named since the last one, and show the edit."""
    import generator.commands.serve as serve

    given: list[object] = []

    def build(*args: object, **kwargs: object) -> object:
        given.append(kwargs.get("edited"))
        return original(*args, **kwargs)

    original = serve.build
    monkeypatch.setattr(serve, "build", build)
    server = Server(small, tmp_path / "site", port=0, search=False)
    server.start()
    try:
        counted = Counted(server)
        note = small / "notes" / "conseil-c.md"
        for n, text in enumerate(("Le budget est revu.", "Le budget est revu deux fois.")):
            replace(small, "notes/conseil-c.md", "Le budget est reconduit." if n == 0 else "Le budget est revu.",
                    text)
            eventually(lambda n=n: counted.finished >= n + 1)  # type: ignore[misc]
            assert text.encode() in (server.out / "notes" / "conseil-c.html").read_bytes()
        assert given[1] is None, "the first rebuild must walk the inputs"
        assert given[2] == {note.resolve()}
        replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [Inconnue]")
        eventually(lambda: counted.finished >= 3)
        replace(small, "notes/conseil-c.md", "theme: [Inconnue]", "theme: [Budget]")
        eventually(lambda: counted.finished >= 4)
        assert given[3] == {note.resolve()} and given[4] is None, "after a rebuild that stopped, a walk"
        assert server.hub.event[0] == "reload"
    finally:
        server.close()
