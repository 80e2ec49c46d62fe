"""Rendering the site: page contexts, templates, emitters, machine outputs, writing."""

from generator.bundled import bundled

DEFAULT_THEME = bundled("themes") / "default"
"""The bundled theme: ``themes/default`` at the checkout's top level, ``generator/themes/default``
in an installed wheel (:func:`~generator.bundled.bundled` finds either)."""
