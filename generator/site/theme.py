"""A theme: jinja2 templates and static files (``<theme>/templates``, ``static``); the bundled
one is ``themes/default`` (:data:`DEFAULT_THEME`).

Static files are published under fingerprinted names (``static/style.1a2b3c4d.css``)
so they can be cached for a long time and still change with the theme.
"""

from __future__ import annotations

import contextlib
import hashlib
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jinja2
import jinja2.bccache
import yaml

from generator.problems import SettingsError, ThemeError
from generator.site import DEFAULT_THEME as DEFAULT_THEME  # re-exported (explicitly, for mypy): tests import it here
from generator.site.headers import META_CONTENT_SECURITY_POLICY


def _load_strings(root: Path, language: str) -> dict[str, Any]:
    """``strings/<language>.yaml``; a regional tag falls back to its language (fr-CA → fr),
    an unknown language to French, the theme's own language."""
    folder = root / "strings"
    # only a language tag names a file here (settings refuse anything else; a path never reaches a file)
    tried = (language, language.split("-")[0]) if re.fullmatch(r"[A-Za-z0-9-]{1,40}", language) else ()
    for name in (*tried, "fr"):
        path = folder / f"{name}.yaml"
        if path.is_file():
            try:
                # libyaml's loader where the wheel has it: the strings are read on every build
                data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            except yaml.YAMLError as exc:
                raise ThemeError(f"theme strings {path}: {exc}") from exc
            if not isinstance(data, dict):
                raise ThemeError(f"theme strings {path} must be a mapping of keys to strings")
            return data
    raise ThemeError(f"theme strings not found in {folder}")


def check_theme(root: Path | None) -> Path:
    """The theme directory, or a clear error when it is not one."""
    root = root or DEFAULT_THEME
    if not (root / "templates").is_dir():
        raise SettingsError(f"theme not found: {root / 'templates'} does not exist")
    return root


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """The templates' compiled code kept on disk, so that a rebuild from the command line
    does not compile again the templates of the pages it renders (~0.1 s). Jinja keys each
    by the template's name and checks the sha1 of its source and the Python version before
    using it; each file is written atomically. A folder that cannot be written only costs
    the compiling: it is never an error."""

    def __init__(self, folder: Path) -> None:
        super().__init__(str(folder))
        self.folder = folder

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            super().dump_bytecode(bucket)


class CompiledHere(jinja2.BytecodeCache):
    """The templates' compiled code kept in this process, for builds without a cache folder
    (``carnet serve`` once its first build is saved, a build with ``--no-cache`` run again in
    one process): each rebuild would otherwise compile the templates it renders again
    (0.15 s). Jinja checks the source's sha1 before using an entry, so an edited template
    is compiled afresh."""

    def __init__(self) -> None:
        self.codes: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.codes:
            bucket.bytecode_from_string(self.codes[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.codes[bucket.key] = bucket.bytecode_to_string()


COMPILED_HERE: Final = CompiledHere()


_DICT_NAMES: Final = frozenset(dir(dict))


class _Environment(jinja2.Environment):
    """Jinja's environment, reading ``x.name`` from a dict by its key first. Jinja asks for
    the attribute first, and a dict has no attribute of that name: an exception raised and
    caught each time (half a million times in a 1,000-note build with evidence, whose
    pages' contexts are dicts). The same value either way: a name that is one of dict's own
    attributes (``items``) is left to jinja, which gives the attribute."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_NAMES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


@dataclass
class Theme:
    """Attributes:
        root: the theme directory.
        env: jinja2 environment over ``templates/`` (autoescape on, undefined is an error).
        static: source name (``style.css``) → (published path, bytes).
        strings: the UI strings of the site's language (``strings/<language>.yaml``).
        language: the site's language.
        fingerprint: sha256 of every file of the theme and the language: part of the key
            of every cached page (a theme edit re-renders everything).
    """

    root: Path
    env: jinja2.Environment
    static: dict[str, tuple[str, bytes]]
    strings: dict[str, Any]
    language: str
    fingerprint: str = ""

    @classmethod
    def load(cls, root: Path | None = None, language: str = "fr", compiled: Path | None = None) -> Theme:
        """The theme at ``root`` (the bundled one by default) for ``language``; ``compiled``:
        a folder where the templates' compiled code is kept between builds (see
        :class:`CompiledTemplates`; without one, it is kept in this process)."""
        root = check_theme(root)
        templates = root / "templates"
        env = _Environment(
            loader=jinja2.FileSystemLoader(str(templates)),
            bytecode_cache=CompiledTemplates(compiled) if compiled is not None else COMPILED_HERE,
            # a build's templates are the ones its fingerprint digested: not checked on disk at each
            # page (a stat per template and page, 0.5 s of 5,000 notes); the next build loads them again
            auto_reload=False,
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
                    short = hashlib.sha256(data).hexdigest()[:10]
                    static[name] = (f"static/{stem}.{short}{ext}", data)
        digest = hashlib.sha256(language.encode("utf-8"))
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
        theme = cls(root, env, static, _load_strings(root, language), language, digest.hexdigest())
        env.globals["tr"] = theme.tr
        env.globals["content_security_policy"] = META_CONTENT_SECURITY_POLICY
        return theme

    def tr(self, key: str, **values: object) -> str:
        """The UI string ``key`` with ``{name}`` filled in; with ``k=…`` or else ``n=…``,
        its singular or plural form (by that number)."""
        if key not in self.strings:
            raise ThemeError(f"theme string {key!r} is missing from strings/{self.language}.yaml")
        text = self.strings[key]
        if isinstance(text, dict):
            count = values.get("k", values.get("n", 0))
            singular = count in (0, 1) if self.language.startswith("fr") else count == 1
            text = text["one" if singular else "other"]
        return str(text).format(**values) if values else str(text)

    def static_path(self, name: str) -> str:
        return self.static[name][0]

    def memo_key(self) -> str:
        """What a page rendered with this theme is keyed by (:class:`generator.digest.Keyed`)."""
        return "theme:" + self.fingerprint

    def render(self, template: str, **context: object) -> bytes:
        """``template`` rendered with ``context`` (a page is a function of its template, its
        context and the theme's :attr:`fingerprint`: what a build cache recalls it by)."""
        return self._render(template, context)

    def _render(self, template: str, context: dict[str, object]) -> bytes:
        try:
            return self.env.get_template(template).render(**context).encode("utf-8")
        except jinja2.TemplateError as exc:
            where = f"{exc.filename}:{exc.lineno}" if isinstance(exc, jinja2.TemplateSyntaxError) else template
            raise ThemeError(f"theme template {where}: {exc}") from exc
