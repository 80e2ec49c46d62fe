"""Carnet: a static site generator that compiles notebooks of notes into an auditable public wiki.

The public API is small: :func:`build` and :func:`check_content` (what ``carnet build`` and
``carnet check`` run), :func:`load_corpus`, and the error hierarchy rooted at
:class:`CarnetError`. Problems in content are :class:`Problem` values, never exceptions.

The pipeline is imported on first use, so a command with nothing to build (a rebuild
whose inputs are unchanged) never pays for loading the parser, numpy and scipy.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

from generator.problems import (
    CarnetError,
    ContentError,
    OutputDirectoryError,
    Problem,
    SettingsError,
    Severity,
    ThemeError,
)

_LAZY = {"CheckedContent": "generator.pipeline", "BuildResult": "generator.result", "check_content": "generator.pipeline",
         "build": "generator.pipeline", "load_corpus": "generator.corpus.load"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'generator' has no attribute {name!r}")


__all__ = [
    "BuildResult",
    "CarnetError",
    "CheckedContent",
    "ContentError",
    "OutputDirectoryError",
    "Problem",
    "SettingsError",
    "Severity",
    "ThemeError",
    "__version__",
    "build",
    "check_content",
    "load_corpus",
]
