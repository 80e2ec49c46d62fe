"""An independent machine reader of a built site (issue 57): what an agent or a crawler
checks, read with the standard library's HTML parser, never with the generator's code.

    python -m bench.machine_reader build/ https://carnets.example.org/

- every page links its Markdown mirror (``<link rel="alternate" type="text/markdown">``),
  and the mirror exists;
- every mirror holds the absolute URL of every passage its page cites;
- a mirror has a ``##`` heading for each ``<h2>`` of its page's main content;
- ``llms-full.txt`` holds every article's sources (each citation's ``source_url``).

Prints each failure and a count of what was checked; exits 1 on any failure.
"""

from __future__ import annotations

import json
import posixpath
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin


class PageReader(HTMLParser):
    """What a machine reader takes from a page: its markdown alternate, the citation links
    and the <h2> texts of its main content (a note's body, else its <main>)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.alternates: list[str] = []
        self.citations: list[str] = []
        self.h2: list[str] = []
        self.body_h2: list[str] = []
        self._depth: list[str] = []  # open elements' tags (void ones never pushed)
        self._main = self._body = -1  # depth at which <main> / the note body opened
        self._heading: list[str] | None = None
        self._hidden = -1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "link" and a.get("rel") == "alternate" and a.get("type") == "text/markdown":
            self.alternates.append(a.get("href") or "")
        if tag in ("link", "meta", "br", "img", "input", "hr", "source", "wbr"):
            return
        self._depth.append(tag)
        if tag == "main":
            self._main = len(self._depth)
        if "note-body" in classes:
            self._body = len(self._depth)
        if self._hidden < 0 and (tag in ("nav", "button", "dialog", "template", "script") or "hidden" in a):
            self._hidden = len(self._depth)
        if tag == "a" and "citation" in classes and self._main > 0:
            self.citations.append(a.get("href") or "")
        if tag == "h2" and self._main > 0 and self._hidden < 0:
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag not in self._depth:
            return
        while self._depth:
            open_tag = self._depth.pop()
            depth = len(self._depth) + 1
            if open_tag == "h2" and self._heading is not None:
                text = " ".join("".join(self._heading).split())
                (self.body_h2 if self._body > 0 else self.h2).append(text)
                self._heading = None
            if depth == self._hidden:
                self._hidden = -1
            if depth == self._body:
                self._body = -1
            if depth == self._main:
                self._main = -1
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading.append(data)


def read(html: bytes) -> PageReader:
    reader = PageReader()
    reader.feed(html.decode("utf-8"))
    return reader


def pages(files: dict[str, bytes]) -> list[str]:
    return [p for p in files if p.endswith(".html") and p != "404.html" and b'http-equiv="refresh"' not in files[p]]


def headings(mirror: str) -> set[str]:
    """The mirror's ``##`` headings, as text (each link in one by its words)."""
    return {" ".join(_LINK.sub(r"\1", line[3:]).split()) for line in mirror.splitlines() if line.startswith("## ")}


_LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")
"""A Markdown link ``[words](url)``: a reader reads its words."""



def site_files(site: Path) -> dict[str, bytes]:
    """Every file of a built site but the search bundle, by relative path."""
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and not p.relative_to(site).as_posix().startswith("pagefind/")}


def is_note_page(page: str) -> bool:
    """A note's page (``notes/<slug>.html``), whose mirror is its body then its own sections."""
    return page.startswith("notes/") and "." not in page[len("notes/"):-len(".html")]


def failures(files: dict[str, bytes], base: str) -> tuple[list[str], dict[str, int]]:
    """What a machine reader finds wrong with the site ``files`` published at ``base``, and
    how many of each thing it checked."""
    wrong: list[str] = []
    counts = {"pages": 0, "citations": 0, "headings": 0, "article sources": 0}
    full = files.get("llms-full.txt", b"").decode("utf-8")
    for page in pages(files):
        counts["pages"] += 1
        reader = read(files[page])
        targets = [posixpath.normpath(posixpath.join(posixpath.dirname(page), a)) for a in reader.alternates]
        if targets != [page + ".md"] or page + ".md" not in files:
            wrong.append(f"{page}: links {reader.alternates} as its Markdown mirror")
            continue
        mirror = files[page + ".md"].decode("utf-8")
        for href in reader.citations:
            counts["citations"] += 1
            url = urljoin(base + page, href)
            if url not in mirror:
                wrong.append(f"{page}.md lacks {url}")
        wanted = reader.body_h2 if is_note_page(page) else reader.h2 + reader.body_h2
        counts["headings"] += len(wanted)
        wrong += [f"{page}.md lacks ## {h}" for h in sorted(set(wanted) - headings(mirror))]
        record = files.get(page[: -len(".html")] + ".json")
        if record is not None and json.loads(record).get("kind") in ("wiki", "synthesis", "answer"):
            for citation in json.loads(record).get("citations", []):
                counts["article sources"] += 1
                if citation["source_url"] not in full:
                    wrong.append(f"llms-full.txt lacks {citation['source_url']} (cited by {page})")
    return wrong, counts


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    wrong, counts = failures(site_files(Path(argv[0])), argv[1])
    for line in wrong[:50]:
        print(line)
    print(", ".join(f"{n:,} {what}" for what, n in counts.items()) + f" checked: {len(wrong)} failure(s)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
