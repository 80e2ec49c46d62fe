"""Rendering the site: page contexts, templates, emitters, machine outputs, writing."""

from pathlib import Path

DEFAULT_THEME = Path(__file__).resolve().parent.parent / "themes" / "default"
"""The bundled theme, package data of ``generator`` (``generator/themes/default``): found the same
way in a checkout, an editable install and an installed wheel."""
