"""A page's HTML body as Markdown, for its mirror (llmstxt.org's "page URL + .md"): the
structure the page shows kept — headings, lists, tables, code, quotes, links made
absolute, images — and its furniture left out (contest links, search metadata, scripts).

Citations read as the page numbers them: an article's ``<sup class="cite">`` is its
``[n]`` (its sources block, from the evidence model, says the rest); a note's own
citation links (``a.citation`` in its text) are numbered here in page order and
returned, so its mirror lists their passages. Pure: HTML text in, Markdown lines out.
Our own templates' output is the input, read with the standard library's parser.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser
from typing import Protocol

_SKIPPED = frozenset({"script", "style", "svg", "button", "template", "nav", "form", "input", "select",
                      "textarea", "noscript", "dialog"})
_VOID = frozenset({"br", "img", "hr", "input", "meta", "link", "source", "wbr", "col", "area", "base", "embed",
                   "param", "track"})
_SKIPPED_CLASSES = frozenset({"claim-end", "contest", "heading-anchor", "ext-anchor", "skip-link", "visually-hidden"})
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = frozenset({"p", "div", "section", "article", "header", "footer", "aside", "figure", "figcaption",
                     "details", "summary", "dl", "dt", "dd", "main", "address", "fieldset", "legend"})
_BREAK = "\x00"  # a hard line break inside a block; never in content (the loader refuses NUL bytes)
_URL_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
_SPACES = re.compile(r"[ \t\r\n\f]+")

_SPACE = r"[ \t\n\r\f]"
_NAME = r"[a-zA-Z_:][-a-zA-Z0-9_:.]*"
_VALUE = r"""(?:="[^"<]*"|='[^'<]*')?"""
# one token: a run of text, or a tag as our templates and markdown-it write it
_TOKEN = re.compile(rf"([^<]+)|<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:{_SPACE}+{_NAME}{_VALUE})*){_SPACE}*(/?)>")
_ATTRIBUTE = re.compile(rf"""({_NAME})(?:="([^"<]*)"|='([^'<]*)'|())""")
# what the standard library's parser reads as raw text (its end found another way)
_RAW_TEXT = frozenset({"script", "style"})


class _Unread(Exception):
    """The fragment holds HTML the one-expression reader leaves to the standard library's."""


def _attributes(text: str) -> list[tuple[str, str | None]]:
    """A tag's attributes as ``HTMLParser`` gives them: names lowered, values unquoted and
    unescaped, a bare one ``None``."""
    if not text:
        return []
    return [(m[1].lower(), None if m[4] is not None else unescape(m[2] if m[2] is not None else m[3]))
            for m in _ATTRIBUTE.finditer(text)]


class _Events(Protocol):
    """What reads a fragment's events (``HTMLParser``'s handler methods)."""

    def handle_data(self, data: str) -> None: ...
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None: ...
    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None: ...
    def handle_endtag(self, tag: str) -> None: ...


def read_events(fragment: str, events: _Events) -> None:
    """Give ``events`` what ``HTMLParser(convert_charrefs=True)`` would for ``fragment``
    (a text run whole, where the parser may give it in pieces), or raise :class:`_Unread`
    where the fragment is not HTML our templates write — having given some of them."""
    position = 0
    data, start, startend, end = (events.handle_data, events.handle_starttag, events.handle_startendtag,
                                  events.handle_endtag)
    for match in _TOKEN.finditer(fragment):
        if match.start() != position:
            raise _Unread
        position = match.end()
        text, closing, name, attributes, slash = match.groups()
        if text is not None:
            data(unescape(text))
            continue
        tag = name.lower()
        if closing:
            if attributes or slash:
                raise _Unread
            end(tag)
        elif tag in _RAW_TEXT:
            raise _Unread
        elif slash:
            startend(tag, _attributes(attributes))
        else:
            start(tag, _attributes(attributes))
    if position != len(fragment):
        raise _Unread


@dataclass(frozen=True)
class Citation:
    """A note's citation link, as its page shows it: its number, the passage's address, its text."""

    number: int
    url: str
    text: str


@dataclass
class _List:
    ordered: bool
    count: int = 0


def _width(item_list: _List) -> int:
    return len(f"{item_list.count}. ") if item_list.ordered else 2


@dataclass
class _Table:
    rows: list[list[str]] = field(default_factory=list)
    header: bool = False
    cell: list[str] | None = None


class _Walker(HTMLParser):
    def __init__(self, absolute: Callable[[str], str]) -> None:
        super().__init__(convert_charrefs=True)
        self.absolute = absolute
        self.lines: list[str] = []
        self.citations: list[Citation] = []
        self._buffer: list[str] = []
        self._stack: list[tuple[str, str]] = []  # (tag, what its end does)
        self._skip = 0  # depth inside a skipped element
        self._containers: list[_List | None] = []  # open lists and quotes (None), outermost first
        self._lists: list[_List] = []
        self._marker = ""  # a list item's marker, written before its first line
        self._tables: list[_Table] = []
        self._pre: list[str] | None = None
        self._pre_info = ""
        self._link: list[tuple[str, bool, int]] = []  # (href, is a citation, buffer length at its start)
        self._cite = 0  # depth inside an article's <sup class="cite">
        self._unsourced = 0

    # -- blocks -------------------------------------------------------------------------
    def _prefix(self, first: bool) -> str:
        """What starts a line here, containers in their nesting order: a quote's "> ", an
        enclosing item's indent (its text starts after its marker, "- " or "1. "), and on
        an item's first line its marker."""
        innermost = self._lists[-1] if self._lists else None
        parts = []
        for container in self._containers:
            if container is None:
                parts.append("> ")
            elif container is innermost and first and self._marker:
                parts.append(self._marker)
            else:
                parts.append(" " * _width(container))
        return "".join(parts)

    def _flush(self, blank: bool = True) -> None:
        if self._tables:
            return  # a cell's blocks are inline in it
        text = _SPACES.sub(" ", "".join(self._buffer)).strip() if self._buffer else ""
        self._buffer = []
        if text:
            for i, line in enumerate(part.strip() for part in text.split(_BREAK)):
                if not line:
                    continue
                self.lines.append(self._prefix(i == 0) + line)
                self._marker = ""
        if blank and not self._lists:
            self._blank()

    def _blank(self) -> None:
        if self.lines and self.lines[-1].strip("> ") != "":
            self.lines.append(self._prefix(False).rstrip())

    def _emit(self, line: str) -> None:
        self.lines.append(self._prefix(True) + line)  # a list item's marker, if its first line
        self._marker = ""

    # -- the parser's events ------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            self._void(tag, dict(attrs))
            return
        attributes = dict(attrs)
        classes = set((attributes.get("class") or "").split())
        if self._skip or tag in _SKIPPED or classes & _SKIPPED_CLASSES or "hidden" in attributes:
            self._skip += 1
            self._stack.append((tag, "skip"))
            return
        self._stack.append((tag, self._start(tag, attributes, classes)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            self._void(tag, dict(attrs))

    def _void(self, tag: str, attributes: dict[str, str | None]) -> None:
        if self._skip:
            return
        if tag == "br":
            self._text(" " if self._tables else _BREAK)
        elif tag == "hr":
            self._flush()
            self._emit("---")
            self._blank()
        elif tag == "img":
            src = attributes.get("src") or ""
            alt = " ".join((attributes.get("alt") or "").split())
            if src:
                self._text(f"![{alt}]({self.absolute(src)})")

    def _start(self, tag: str, attributes: dict[str, str | None], classes: set[str]) -> str:
        if self._pre is not None:
            if tag == "code":  # its language names the fence
                self._pre_info = next((c[len("language-"):] for c in sorted(classes) if c.startswith("language-")), "")
            return ""
        if tag in _HEADINGS:
            self._flush()
            self._buffer.append("#" * _HEADINGS[tag] + " ")
            return "block"
        if tag in ("ul", "ol"):
            self._flush(blank=not self._lists)
            self._lists.append(_List(tag == "ol"))
            self._containers.append(self._lists[-1])
            return "list"
        if tag == "li":
            self._flush(blank=False)
            current = self._lists[-1] if self._lists else None
            if current is not None:
                current.count += 1
                self._marker = f"{current.count}. " if current.ordered else "- "
            return "block-tight"
        if tag == "blockquote":
            self._flush()
            self._containers.append(None)
            return "quote"
        if tag == "pre":
            self._flush()
            self._pre = []
            return "pre"
        if tag == "code":
            self._buffer.append("`")
            return "`"
        if tag == "table":
            self._flush()
            self._tables.append(_Table())
            return "table"
        if self._tables and tag in ("td", "th"):
            table = self._tables[-1]
            table.cell = []
            if tag == "th" and len(table.rows) == 1:  # the first row's
                table.header = True
            return "cell"
        if self._tables and tag == "tr":
            self._tables[-1].rows.append([])
            return ""
        if tag == "sup" and "cite" in classes:
            self._cite += 1
            self._text(" ")
            return "cite"
        if tag == "sup" and "unsourced-claim" in classes:
            self._unsourced += 1
            self._text(" [")
            return "unsourced"
        if tag == "a":
            href = attributes.get("href")
            if href is None or self._cite or self._unsourced:
                return ""
            self._link.append((href, "citation" in classes, len(self._buffer)))
            self._buffer.append("")  # the link's opening bracket, set at its end
            return "a"
        if tag in ("strong", "b"):
            self._buffer.append("**")
            return "**"
        if tag in ("em", "i"):
            self._buffer.append("*")
            return "*"
        if tag == "dt" or tag == "summary":
            self._flush()
            self._buffer.append("**")
            return "block-strong"
        if tag in _BLOCKS:
            self._flush(blank=not self._lists)
            return "block"
        return ""

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        # close up to the matching open tag (our templates nest properly; a stray end tag is ignored)
        stack = self._stack
        if stack and stack[-1][0] == tag:  # the usual case, without a walk of the stack
            self._end(stack.pop()[1])
            return
        if not any(open_tag == tag for open_tag, _ in stack):
            return
        while self._stack:
            open_tag, action = self._stack.pop()
            self._end(action)
            if open_tag == tag:
                break

    def _end(self, action: str) -> None:
        if action == "skip":
            self._skip -= 1
            return
        if action == "block":
            self._flush(blank=not self._lists)
        elif action == "block-tight":
            self._flush(blank=False)
            self._marker = ""
        elif action == "block-strong":
            self._buffer.append("**")
            self._flush()
        elif action == "list":
            self._flush(blank=False)
            self._lists.pop()
            self._containers.pop()
            self._marker = ""
            if not self._lists:
                self._blank()
        elif action == "quote":
            self._flush(blank=False)
            self._containers.pop()
            while self.lines and self.lines[-1] and not self.lines[-1].strip("> "):
                self.lines.pop()  # the quote's own trailing empty line: a blank line outside it instead
            self._blank()
        elif action == "pre":
            code = "".join(self._pre or []).strip("\n")
            self._pre = None
            self._emit(f"```{self._pre_info}")
            for line in code.split("\n"):
                self._emit(line)
            self._emit("```")
            self._pre_info = ""
            self._blank()
        elif action == "table":
            self._table(self._tables.pop())
        elif action == "cell":
            table = self._tables[-1]
            text = " ".join("".join(table.cell or []).split()).replace("|", "\\|")
            if not table.rows:
                table.rows.append([])
            table.rows[-1].append(text)
            table.cell = None
        elif action == "cite":
            self._cite -= 1
        elif action == "unsourced":
            self._unsourced -= 1
            self._text("]")
        elif action == "a":
            self._close_link()
        elif action in ("`", "**", "*"):
            self._buffer.append(action)

    def _close_link(self) -> None:
        href, citation, start = self._link.pop()
        target = self._buffer_of()
        text = " ".join("".join(target[start + 1:]).split())
        url = self.absolute(href)
        if citation:
            number = len(self.citations) + 1
            self.citations.append(Citation(number, url, text))
            target[start] = ""
            target.append(f" [{number}]")
        elif text and url:
            target[start] = "["
            target.append(f"]({url})")

    def _buffer_of(self) -> list[str]:
        if self._tables and self._tables[-1].cell is not None:
            return self._tables[-1].cell
        return self._buffer

    def _table(self, table: _Table) -> None:
        rows = [row for row in table.rows if row]
        if not rows:
            return
        width = max(len(row) for row in rows)
        rows = [row + [""] * (width - len(row)) for row in rows]
        head, body = (rows[0], rows[1:]) if table.header else ([""] * width, rows)
        for row in [head, ["---"] * width, *body]:
            self._emit("| " + " | ".join(row) + " |")
        self._blank()

    def _text(self, data: str) -> None:
        self._buffer_of().append(data)

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._pre is not None:
            self._pre.append(data)
            return
        self._text(data)

    def finish(self) -> list[str]:
        self.close()
        while self._stack:
            self._end(self._stack.pop()[1])
        self._flush()
        lines = self.lines
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        return lines


def html_markdown(fragment: str, absolute: Callable[[str], str]) -> tuple[list[str], list[Citation]]:
    """``fragment`` (HTML) as Markdown lines, and the citation links of its text in page
    order; ``absolute(href)``: the link's absolute address."""
    walker = _Walker(absolute)
    try:
        read_events(fragment, walker)
    except _Unread:
        walker = _Walker(absolute)
        walker.feed(fragment)
    return walker.finish(), walker.citations


@functools.lru_cache(maxsize=65536)
def absolute_href(base_url: str, page: str, href: str) -> str:
    """``href`` on page ``page`` as an absolute address (an external one as it is).
    Remembered: a listing's links are the same from one rebuild to the next."""
    if _URL_SCHEME.match(href) or href.startswith("//"):
        return href
    if href.startswith("#"):
        return base_url + page + href
    path, hash_, fragment = href.partition("#")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), path)) if path else page
    target = "" if target == "index.html" else target
    return base_url + target + hash_ + fragment


MAIN = re.compile(r"<main\b[^>]*>(.*)</main>", re.S)
H1 = re.compile(r"<h1\b[^>]*>(.*?)</h1\s*>", re.S)
TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_TAGS = re.compile(r"<[^>]*>")


def page_heading(html: str) -> str | None:
    """The text of a page's first ``<h1>`` in its <main>, as the reader sees it (``None`` without one)."""
    main = MAIN.search(html)
    heading = H1.search(main.group(1)) if main else None
    return " ".join(unescape(_TAGS.sub("", heading.group(1))).split()) if heading else None
