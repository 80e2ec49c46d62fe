"""Prompt templates: ``prompts/<language>/<name>.j2`` (jinja2; ``generator/prompts/`` in an
installed wheel, see :mod:`generator.bundled`), one per task and language, versioned by the
hash of their text.

A site speaks one language (``language:`` in carnet.yaml), its prompts included: each
prompt is asked in that language and tells the model to answer in it. A regional tag
takes its language's prompts (``fr-CA`` → ``fr``). A language Carnet has no prompts for
is asked in English (:data:`FALLBACK`), and a notice says so once per process: the model
commands still run, in the language small models read best, rather than refusing a site
whose pages the theme can show.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

import jinja2

from generator.bundled import bundled
from generator.terminal import visible

PROMPTS = bundled("prompts")
FALLBACK = "en"
"""The prompts' language for a site whose language has none."""

_noticed: set[str] = set()  # the languages already said to fall back, in this process


@dataclass(frozen=True)
class Prompt:
    """One template.

    Attributes:
        name: the task (``verify_pairs``), as provenance records it and the server's
            ``response_format`` names the answer: the same in every language, so that
            records made before prompts had languages still read alike. The language
            shows in ``version``, which hashes the text.
        text: the template.
        language: the language it is written in ("" for a template made in code).
    """

    name: str
    text: str
    language: str = ""

    @property
    def version(self) -> str:
        """The template's hash: a changed prompt, or another language, is a new version in
        every provenance record."""
        return "sha256:" + hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    def render(self, **context: object) -> str:
        return _compiled(self.text).render(**context)


@functools.lru_cache(maxsize=64)
def _compiled(text: str) -> jinja2.Template:
    """A template compiled once: a plan renders each request's prompt, then the send again."""
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                     trim_blocks=True, lstrip_blocks=True)
    return environment.from_string(text)


def prompt_languages(folder: Path = PROMPTS) -> tuple[str, ...]:
    """The languages there are prompts in: the folders of ``folder``."""
    return tuple(sorted(p.name for p in folder.iterdir() if p.is_dir())) if folder.is_dir() else ()


def prompt_files(folder: Path = PROMPTS) -> list[tuple[str, str]]:
    """Every template as (language, name), sorted."""
    return [(language, path.stem) for language in prompt_languages(folder)
            for path in sorted((folder / language).glob("*.j2"))]


def prompt_language(language: str, folder: Path = PROMPTS) -> str:
    """The language of the prompts a site in ``language`` (a BCP 47 tag) is asked in: its
    own, its primary language's (``en-GB`` → ``en``), else :data:`FALLBACK`."""
    available = prompt_languages(folder)
    return next((candidate for candidate in _candidates(language) if candidate in available), FALLBACK)


def _candidates(language: str) -> tuple[str, str]:
    tag = language.strip().lower().replace("_", "-")
    return tag, tag.split("-")[0]


def load_prompt(name: str, language: str, folder: Path = PROMPTS) -> Prompt:
    """The template ``name`` in the site's ``language`` (see :func:`prompt_language`)."""
    chosen = prompt_language(language, folder)
    if chosen not in _candidates(language) and language not in _noticed:
        _noticed.add(language)
        print(visible(f"carnet: Carnet has no prompts in the site's language {language!r} (only in "
                      f"{', '.join(prompt_languages(folder))}): the model is asked, and answers, in {chosen}"),
              file=sys.stderr)
    path = folder / chosen / f"{name}.j2"
    return Prompt(name, path.read_text(encoding="utf-8"), chosen)
