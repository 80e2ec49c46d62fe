"""Rendering the site: page contexts, templates, emitters, machine outputs, writing."""

from pathlib import Path

DEFAULT_THEME = Path(__file__).resolve().parents[2] / "themes" / "default"
