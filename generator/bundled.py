"""Where the files Carnet ships beside its code are: the bundled theme and the model prompts.

The repository keeps them at its top level (``themes/``, ``prompts/``: data, not code, and
what a theme author or a prompt reviewer opens first); the wheel carries them inside the
package (``generator/themes``, ``generator/prompts``, as pyproject.toml maps them), since an
installed package may only rely on its own folder."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def bundled(name: str, package: Path = PACKAGE) -> Path:
    """The folder ``name`` shipped with Carnet: the packaged copy beside the modules (an
    installed wheel), else the checkout's top-level one (a checkout or an editable install,
    where the package is the checkout's ``generator/``). The packaged copy comes first so an
    installed Carnet never reads a folder that merely sits beside its site-packages."""
    packaged = package / name
    return packaged if packaged.is_dir() else package.parent / name
