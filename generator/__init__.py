"""Carnet: a static site generator that compiles notebooks of notes into an auditable public wiki.

The public API is small: :func:`build` and :func:`analyse` (what ``carnet build`` and
``carnet check`` run), :func:`load_corpus`, and the error hierarchy rooted at
:class:`CarnetError`. Problems in content are :class:`Problem` values, never exceptions.
"""

from __future__ import annotations

__version__ = "0.1.0"

from generator.corpus.load import load_corpus  # noqa: E402
from generator.pipeline import Analysis, BuildResult, analyse, build  # noqa: E402
from generator.problems import (  # noqa: E402
    CarnetError, ContentError, OutputDirectoryError, Problem, Severity, SettingsError, ThemeError,
)

__all__ = [
    "Analysis", "BuildResult", "CarnetError", "ContentError", "OutputDirectoryError", "Problem", "Severity",
    "SettingsError", "ThemeError", "analyse", "build", "load_corpus", "__version__",
]
