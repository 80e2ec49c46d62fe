"""A theme: jinja2 templates and static files (``themes/<name>/templates``, ``static``).

Static files are published under fingerprinted names (``static/style.1a2b3c4d.css``)
so they can be cached for a long time and still change with the theme.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass
from pathlib import Path

import jinja2

from generator.problems import SettingsError, ThemeError

DEFAULT_THEME = Path(__file__).resolve().parents[2] / "themes" / "default"


@dataclass
class Theme:
    """Attributes:
        root: the theme directory.
        env: jinja2 environment over ``templates/`` (autoescape on, undefined is an error).
        static: source name (``style.css``) → (published path, bytes).
    """

    root: Path
    env: jinja2.Environment
    static: dict[str, tuple[str, bytes]]

    @classmethod
    def load(cls, root: Path | None = None) -> "Theme":
        root = root or DEFAULT_THEME
        templates = root / "templates"
        if not templates.is_dir():
            raise SettingsError(f"theme not found: {templates} does not exist")
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates)),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        static: dict[str, tuple[str, bytes]] = {}
        static_dir = root / "static"
        if static_dir.is_dir():
            for path in sorted(static_dir.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    data = path.read_bytes()
                    name = path.relative_to(static_dir).as_posix()
                    stem, ext = posixpath.splitext(name)
                    digest = hashlib.sha256(data).hexdigest()[:10]
                    static[name] = (f"static/{stem}.{digest}{ext}", data)
        return cls(root, env, static)

    def static_path(self, name: str) -> str:
        return self.static[name][0]

    def render(self, template: str, **context: object) -> bytes:
        try:
            return self.env.get_template(template).render(**context).encode("utf-8")
        except jinja2.TemplateError as exc:
            where = f"{exc.filename}:{exc.lineno}" if isinstance(exc, jinja2.TemplateSyntaxError) else template
            raise ThemeError(f"theme template {where}: {exc}") from exc
