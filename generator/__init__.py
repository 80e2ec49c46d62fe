"""Carnet: a static site generator that compiles notebooks of notes into an auditable public wiki.

The public API is small: :func:`build` and :func:`analyse` (what ``carnet build`` and
``carnet check`` run), :func:`load_corpus`, and the error hierarchy rooted at
:class:`CarnetError`. Problems in content are :class:`Problem` values, never exceptions.
"""

from __future__ import annotations

__version__ = "0.1.0"

from generator.problems import (  # noqa: E402
    CarnetError, ContentError, OutputDirectoryError, Problem, Severity, SettingsError,
)


def build(*args, **kwargs):  # noqa: D103 - thin re-export, documented in generator.pipeline
    from generator.pipeline import build as _build

    return _build(*args, **kwargs)


def analyse(*args, **kwargs):  # noqa: D103
    from generator.pipeline import analyse as _analyse

    return _analyse(*args, **kwargs)


def load_corpus(*args, **kwargs):  # noqa: D103
    from generator.corpus.load import load_corpus as _load

    return _load(*args, **kwargs)


__all__ = [
    "CarnetError", "ContentError", "OutputDirectoryError", "Problem", "Severity", "SettingsError",
    "analyse", "build", "load_corpus", "__version__",
]
