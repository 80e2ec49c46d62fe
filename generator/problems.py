"""Problems found in content, and the project's error hierarchy.

Every check in Carnet reports a :class:`Problem` instead of raising, so that a run
collects *all* problems (not only the first) and prints each with its file, line,
what is wrong and what to do about it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TextIO

from generator.terminal import visible

EXIT_OK, EXIT_CONTENT, EXIT_USAGE, EXIT_MODEL = 0, 1, 2, 3
"""Exit codes, the same for every command: done; the content has errors (or warnings
under ``--strict``); usage, settings, the disk or a refused write; the endpoint or its
answers failed, so all or part of the work was not done."""


class Severity(str, Enum):
    """How bad a problem is. Errors stop a build; warnings stop it under ``--strict``;
    notices report an expected state of a living corpus (an anchor detached or
    relocated by an edit of its note) and never stop anything."""

    ERROR = "error"
    WARNING = "warning"
    NOTICE = "notice"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the content.

    Attributes:
        file: path of the offending file, relative to the content directory (POSIX).
        line: 1-based line in that file, or ``None`` when the whole file is concerned.
        code: a short stable identifier (``unknown-category``), for filtering and docs.
        message: what is wrong, in one sentence.
        hint: what to do about it.
        severity: error or warning.
    """

    file: str
    line: int | None
    code: str
    message: str
    hint: str = ""
    severity: Severity = Severity.ERROR

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def stops(self, strict: bool) -> bool:
        """Whether this problem stops a build (or fails a check)."""
        return self.is_error or (strict and self.severity is Severity.WARNING)

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.file, self.line or 0, self.code, self.message)

    def location(self, root: str = "") -> str:
        path = f"{root.rstrip('/')}/{self.file}" if root else self.file
        return f"{path}:{self.line}" if self.line else path

    def format_text(self, root: str = "") -> str:
        """Two lines at most, whatever a file name or a quoted text in the message holds
        (a line feed, a bidi control: shown as escapes, see :func:`generator.terminal.visible`)."""
        text = f"{visible(self.location(root))}: {self.severity.value} [{self.code}] {visible(self.message)}"
        if self.hint:
            text += f"\n    → {visible(self.hint)}"
        return text

    def format_github(self, root: str = "") -> str:
        """A GitHub Actions workflow command, which turns into an inline annotation."""
        path = f"{root.rstrip('/')}/{self.file}" if root else self.file
        props = f"file={_gh_property(path)}"
        if self.line:
            props += f",line={self.line}"
        props += f",title={_gh_property(self.code)}"
        body = self.message + (f" — {self.hint}" if self.hint else "")
        return f"::{self.severity.value} {props}::{_gh_data(body)}"


def _gh_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(value: str) -> str:
    return _gh_data(value).replace(":", "%3A").replace(",", "%2C")


def sorted_problems(problems: Iterable[Problem]) -> list[Problem]:
    """Problems in a stable order (file, line, code), duplicates removed."""
    return sorted(set(problems), key=Problem.sort_key)


class CarnetError(Exception):
    """Base of every error Carnet raises on purpose; the CLI prints it without a traceback."""


class ContentError(CarnetError):
    """The content has errors (or warnings under ``--strict``); nothing was written."""

    def __init__(self, problems: list[Problem], strict: bool = False) -> None:
        self.problems = problems
        self.strict = strict
        errors = sum(p.is_error for p in problems)
        warnings = sum(p.severity is Severity.WARNING for p in problems)
        reason = f"{errors} error(s)"
        if strict and warnings:
            reason += f" and {warnings} warning(s) (--strict)"
        super().__init__(f"the content has {reason}; nothing was written")


class OutputDirectoryError(CarnetError):
    """The output directory cannot be used safely (it holds files Carnet did not write)."""


class SettingsError(CarnetError):
    """The command line or the environment is unusable (missing content directory, theme)."""


class ThemeError(CarnetError):
    """A theme template is broken (syntax, or a name it uses is missing)."""


def print_problems(problems: Iterable[Problem], root: Path | str, fmt: str, out: TextIO) -> None:
    """Every problem on ``out`` as ``carnet check`` prints it (``fmt``: ``text`` or
    ``github``). A problem quotes content (a file name, a value): shown escaped, never
    obeyed by the terminal."""
    for problem in problems:
        if fmt == "github":
            print(visible(problem.format_github(str(root))), file=out)
        else:
            print(visible(problem.format_text(str(root)), keep_newlines=True), file=out)
