"""Invariants recomputed from a built site, as a reader or an auditor would: no access to
Carnet's internals beyond loading the content files."""

from __future__ import annotations

import posixpath
from pathlib import Path
from urllib.parse import urlsplit

from bs4 import BeautifulSoup

from generator.anchoring.normalise import normalise_quote
from generator.corpus.load import load_corpus
from support.corpus import site_files


def highlight_mismatches(content: Path, site: Path) -> list[str]:
    """Each published, unmasked extraction's marked text, read back from its page, equals
    its quote (normalised), and its anchor exists once; masked ones leave no trace.
    Extractions reported as detached must have no mark at all."""
    corpus, _ = load_corpus(content)
    wrong: list[str] = []
    for note in corpus.notes.values():
        path = site / "notes" / f"{note.slug}.html"
        if not path.exists():
            continue
        page = BeautifulSoup(path.read_bytes(), "html.parser")
        for extraction in note.extractions:
            marks = [m for m in page.select("mark.extraction") if extraction.id in m["data-ext"].split()]
            anchors = page.select(f'[id="ext-{extraction.id}"]')
            entry = page.select_one(f'[id="entry-{extraction.id}"]')
            if extraction.masked:
                if marks or anchors or entry:
                    wrong.append(f"{extraction.id}: masked but shown")
                continue
            if entry is None:
                wrong.append(f"{extraction.id}: not listed")
                continue
            if "detached" in entry.get("class", []):
                if marks or anchors:
                    wrong.append(f"{extraction.id}: detached but highlighted")
                continue
            # marks of one element are contiguous pieces (cut at inline markup); elements
            # (and cells of a row) are joined by a space, as the projection joins them
            pieces: dict[int, str] = {}
            for mark in marks:
                # a table row's cells are joined by a space too, as the row's text joins them
                holder = mark.find_parent(["td", "th"]) or mark.find_parent(class_="element")
                key = id(holder)
                pieces[key] = pieces.get(key, "") + mark.get_text()
            shown = normalise_quote(" ".join(pieces.values()))
            quote = normalise_quote(extraction.quote)
            if "relocated" in entry.get("class", []):
                # an edited passage: what is highlighted is the note's text, within 10 % of the quote
                fits = shown != quote and _edit_distance(shown, quote) <= len(quote) // 10
            else:
                fits = shown == quote
            if len(anchors) != 1 or not fits:
                wrong.append(f"{extraction.id}: highlighted {shown!r}")
    return wrong


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[-1]


def broken_internal_links(site: Path) -> list[tuple[str, str]]:
    """Every internal href/src of every page points to an emitted file, and every
    fragment to an id on that page."""
    files = site_files(site)
    ids_cache: dict[str, set[str]] = {}

    def ids(path: str) -> set[str]:
        if path not in ids_cache:
            page = BeautifulSoup(files[path], "html.parser")
            ids_cache[path] = {tag["id"] for tag in page.select("[id]")}
        return ids_cache[path]

    broken = []
    for path, data in files.items():
        # 404.html is served at any address, so its links are root-relative (see check_site)
        if not path.endswith(".html") or path == "404.html":
            continue
        page = BeautifulSoup(data, "html.parser")
        for tag in page.select("a[href], link[href], script[src], img[src], audio[src], video[src]"):
            url = tag.get("href") or tag.get("src")
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//"):
                continue
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), parts.path)) if parts.path else path
            if target not in files or (parts.fragment and target.endswith(".html") and parts.fragment not in ids(target)):
                broken.append((path, url))
    return broken
