"""One emitter per output. Each declares which parts of the model it reads, so an
incremental build can tell what to redo, and yields ``(site path, bytes)`` pairs.

Parts of the model: ``settings``, ``bases``, ``notebooks``, ``notes`` (bodies,
memberships, extractions, comments), ``anchors``, ``links``, ``assets``, ``theme``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from urllib.parse import urlsplit
from typing import Any, Iterator, Protocol

from generator.cache import digest_of
from generator.site import pages
from generator.site.annotations import note_annotations
from generator.site.graph import graph_outputs
from generator.site.jsonout import dumps
from generator.site.mirrors import mirrors
from generator.site.machine import (
    DEFAULT_FULL_CAP, feeds, llms_full, llms_txt, manifest, not_found_page, robots, siblings, sitemap, strings_of,
)
from generator.site.model import (
    SiteModel, annotations_path, base_path, category_path, note_path, notebook_path, selection_path, text_path,
)
from generator.site.selection_page import selection_context
from generator.site.theme import Theme

Output = Iterator[tuple[str, bytes]]


class Emitter(Protocol):
    name: str
    reads: frozenset[str]

    def emit(self, site: SiteModel, theme: Theme) -> Output: ...


@dataclass(frozen=True)
class ThemeStatic:
    name: str = "theme-static"
    reads: frozenset[str] = frozenset({"theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        for published, data in theme.static.values():
            yield published, data


@dataclass(frozen=True)
class ContentAssets:
    """Copies the assets published notes use (links, images, media) — and only those:
    a file only a private note uses is never published."""

    name: str = "content-assets"
    reads: frozenset[str] = frozenset({"assets", "links", "notes"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        for path, on_disk in site.published_assets.items():  # the name on disk may be decomposed (NFD)
            yield path, (site.content_dir / on_disk).read_bytes()


@dataclass(frozen=True)
class HomePage:
    name: str = "home"
    reads: frozenset[str] = frozenset({"settings", "bases", "notebooks", "notes", "theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        yield "index.html", theme.render("home.html", **pages.home_context(site, theme))


@dataclass(frozen=True)
class BasePages:
    name: str = "base-pages"
    reads: frozenset[str] = frozenset({"settings", "bases", "notebooks", "notes", "theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        for slug in site.publication.bases:
            yield base_path(slug), theme.render("base.html", **pages.base_context(site, theme, slug))


@dataclass(frozen=True)
class NotebookPages:
    name: str = "notebook-pages"
    reads: frozenset[str] = frozenset({"settings", "bases", "notebooks", "notes", "theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        for slug in site.publication.notebooks:
            yield notebook_path(slug), theme.render("notebook.html", **pages.notebook_context(site, theme, slug))


@dataclass(frozen=True)
class CategoryPages:
    name: str = "category-pages"
    reads: frozenset[str] = frozenset({"settings", "bases", "notebooks", "notes", "theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        for slug, notebook in site.publication.notebooks.items():
            for axis in notebook.axes:
                for category in axis.categories:
                    context = pages.category_context(site, theme, slug, axis.key, category)
                    yield category_path(slug, axis.key, category), theme.render("category.html", **context)


@dataclass(frozen=True)
class NotePages:
    name: str = "note-pages"
    reads: frozenset[str] = frozenset({"settings", "bases", "notebooks", "notes", "anchors", "links", "theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        for slug in site.publication.notes:
            yield note_path(slug), theme.render("note.html", **pages.note_context(site, theme, slug))


@dataclass(frozen=True)
class TextProjections:
    """``notes/<slug>.txt``: element texts joined by blank lines, the text that
    annotation offsets count in (code points)."""

    name: str = "text-projections"
    reads: frozenset[str] = frozenset({"notes", "anchors"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        for slug, anchored in site.anchored.items():
            yield text_path(slug), (anchored.document.projection + "\n").encode("utf-8")


@dataclass(frozen=True)
class WebAnnotations:
    """``notes/<slug>.annotations.jsonld``: W3C Web Annotations of each note."""

    name: str = "web-annotations"
    reads: frozenset[str] = frozenset({"settings", "notes", "anchors"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        for slug in site.publication.notes:
            data = note_annotations(site, slug)
            if theme.memo is None:
                yield annotations_path(slug), dumps(data, levels=3)
            else:  # pickling for the key is several times faster than the JSON layout
                yield annotations_path(slug), theme.memo.memo("annotations", digest_of(data),
                                                             lambda: dumps(data, levels=3))


@dataclass(frozen=True)
class SelectionPages:
    """``notes/<wiki>.selection.html``: groups, explanations, warnings, oppositions, map."""

    name: str = "selection-pages"
    reads: frozenset[str] = frozenset({"settings", "notes", "anchors", "theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        for slug in site.selections:
            yield selection_path(slug), theme.render("selection.html", **selection_context(site, theme, slug))


@dataclass(frozen=True)
class NotFoundPage:
    name: str = "not-found"
    reads: frozenset[str] = frozenset({"settings", "bases", "notebooks", "theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        yield "404.html", not_found_page(site, theme)


@dataclass(frozen=True)
class SearchPage:
    name: str = "search-page"
    reads: frozenset[str] = frozenset({"settings", "bases", "notebooks", "theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        from generator.site.pages import common
        context = common(site, theme, "search.html", theme.tr("search"), "search")
        context["results_label"] = theme.tr("search_results", n=2)
        yield "search.html", theme.render("search.html", **context)


@dataclass(frozen=True)
class Feeds:
    name: str = "feeds"
    reads: frozenset[str] = frozenset({"settings", "notebooks", "notes", "theme"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        yield from feeds(site, theme)


@dataclass(frozen=True)
class Robots:
    name: str = "robots"
    reads: frozenset[str] = frozenset({"settings"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        yield "robots.txt", robots(site)


@dataclass(frozen=True)
class Redirects:
    """Former slugs (``aliases:``) keep working: ``_redirects`` for Netlify, and a small
    HTML page at each old address for other hosts (and file://). The rules are forced
    (``301!``): Netlify serves an existing file before a plain rule, so with the page
    there a plain 301 would never fire."""

    name: str = "redirects"
    reads: frozenset[str] = frozenset({"settings", "notes"})

    def emit(self, site: SiteModel, theme: Theme) -> Output:
        root = urlsplit(site.base_url).path  # "/" or "/wiki/"
        lines = []
        for slug, note in site.publication.notes.items():
            for alias in sorted(note.aliases):
                lines.append(f"{root}{note_path(alias)} {root}{note_path(slug)} 301!")
                target = f"{slug}.html"
                yield note_path(alias), theme.render("redirect.html", target=target, title=note.title,
                                                     canonical=site.base_url + note_path(slug),
                                                     language=site.publication.settings.language)
        if lines:
            yield "_redirects", ("\n".join(sorted(lines)) + "\n").encode("utf-8")



EMITTERS: tuple[Emitter, ...] = (
    ThemeStatic(), ContentAssets(), HomePage(), BasePages(), NotebookPages(), CategoryPages(), NotePages(),
    TextProjections(), WebAnnotations(), SelectionPages(), NotFoundPage(), SearchPage(), Feeds(), Robots(), Redirects(),
)


def derived_outputs(site: SiteModel, files: dict[str, bytes], memo: Any = None,
                    digests: dict[str, str] | None = None, theme: Theme | None = None) -> dict[str, bytes]:
    """Outputs read from the pages themselves, in order: siblings of every page, llms.txt,
    llms-full.txt, the sitemap, the graph — then the manifest of everything. ``digests``
    receives the sha256 of every file (the manifest's and the incremental writer's);
    ``theme`` words llms.txt and llms-full.txt (the default theme's, without one)."""
    redirects = {note_path(alias) for note in site.publication.notes.values() for alias in note.aliases}
    pages = {path: data for path, data in files.items() if path not in redirects}  # redirects are not pages
    derived = dict(siblings(site, pages, memo))
    derived.update(mirrors(site, pages, strings_of(site, theme)))
    everything = {**pages, **derived}
    raw = site.publication.settings.extra.get("outputs") or {}
    cap = raw.get("llms_full_cap", DEFAULT_FULL_CAP) if isinstance(raw, dict) else DEFAULT_FULL_CAP
    derived["llms.txt"] = llms_txt(site, everything, theme)
    derived["llms-full.txt"] = llms_full(site, everything, int(cap), theme)
    derived["sitemap.xml"] = sitemap(site, everything)
    derived.update(graph_outputs(site, memo))
    listed = {**files, **derived}
    digests = {} if digests is None else digests
    digests.update((path, hashlib.sha256(data).hexdigest()) for path, data in listed.items())
    derived["manifest.json"] = manifest(listed, digests)
    digests["manifest.json"] = hashlib.sha256(derived["manifest.json"]).hexdigest()
    return derived
