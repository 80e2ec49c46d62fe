"""Prompt templates: ``generator/prompts/<name>.j2`` (jinja2, package data of ``generator``),
versioned by the hash of their text."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import jinja2

PROMPTS = Path(__file__).resolve().parent.parent / "prompts"


@dataclass(frozen=True)
class Prompt:
    name: str
    text: str

    @property
    def version(self) -> str:
        """The template's hash: a changed prompt is a new version in every provenance record."""
        return "sha256:" + hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    def render(self, **context: object) -> str:
        environment = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                         trim_blocks=True, lstrip_blocks=True)
        return environment.from_string(self.text).render(**context)


def load_prompt(name: str, folder: Path = PROMPTS) -> Prompt:
    path = folder / f"{name}.j2"
    return Prompt(name, path.read_text(encoding="utf-8"))
