"""Link integrity of a built site (INV-17): every internal href/src of every page points
to an emitted file, and every #fragment to an id on the page it names."""

from __future__ import annotations

import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from generator.problems import Problem

_ATTRIBUTES = {"a": "href", "link": "href", "script": "src", "img": "src", "audio": "src", "video": "src",
               "source": "src"}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        element_id = attributes.get("id")
        if element_id:
            self.ids.add(element_id)
        name = attributes.get("name") if tag == "a" else None
        if name:  # a note's raw <a name="x">: browsers land on it as on an id
            self.ids.add(name)
        link = _ATTRIBUTES.get(tag)
        target = attributes.get(link) if link else None
        if target:
            self.links.append((self.getpos()[0], target))


def check_site(root: Path, root_prefix: str = "") -> list[Problem]:
    """``root_prefix``: the path of the base URL when it is not ``/`` (e.g. ``/wiki/``)."""
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    pages: dict[str, _Links] = {}
    for path in sorted(f for f in files if f.endswith(".html")):
        reader = _Links()
        reader.feed((root / path).read_text(encoding="utf-8"))
        pages[path] = reader
    problems = []
    for path, reader in pages.items():
        for line, url in reader.links:
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//") or re.match(r"^[a-z]+:", url):
                continue
            if parts.path.startswith("/"):  # root-relative (404.html): from the site's root
                target = posixpath.normpath(unquote(parts.path).lstrip("/")) if parts.path != "/" else "index.html"
                if root_prefix and parts.path.startswith(root_prefix):
                    target = posixpath.normpath(unquote(parts.path)[len(root_prefix):]) or "index.html"
            else:
                target = posixpath.normpath(posixpath.join(posixpath.dirname(path), unquote(parts.path))) \
                    if parts.path else path
            if target not in files:
                problems.append(Problem(path, line, "broken-link", f"{url!r} leads to no emitted file",
                                        "Rebuild the site; report it if it persists (a link Carnet wrote)."))
            elif parts.fragment and target in pages and parts.fragment not in pages[target].ids:
                problems.append(Problem(path, line, "broken-fragment", f"{url!r}: no id {parts.fragment!r} there",
                                        "Rebuild the site; report it if it persists (a link Carnet wrote)."))
    return problems
