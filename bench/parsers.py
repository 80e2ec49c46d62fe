"""Compiled CommonMark parsers against markdown-it-py, on what Carnet parses (issue 58, item 5).

    python -m bench.parsers                        # 5,000 notes of bench.corpus + content/notes
    python -m bench.parsers --notes 1000 --no-profile
    python -m bench.parsers --site /tmp/parsers-venv/lib/python3.11/site-packages

The compiled parsers are optional: install them in a separate environment
(``python3 -m venv /tmp/parsers-venv && /tmp/parsers-venv/bin/pip install markdown-it-pyrs
comrak pyromark``) and name its ``site-packages`` with ``--site``; it is appended to the
path, so Carnet's own markdown-it-py still wins. Those missing are listed, not measured.

On the bodies of :func:`bench.corpus.plain_notes` (the notes ``bench/builds.py`` builds)
and of the example ``content/notes/*.md``, it measures:

(a) **parse time**: CPU time (``time.process_time``) to parse every body, the median of
    ``--repeats`` passes, per parser: markdown-it-py with Carnet's dialect
    (:func:`generator.markup.parse_bounded`, what the build calls), markdown-it-py with only
    CommonMark + tables + strikethrough (what Carnet's own rules cost on top), each compiled
    parser's own output (a tree, events, HTML), markdown-it-pyrs' tree converted to
    markdown-it-py ``Token``s with ``.map`` (:func:`pyrs_tokens`), and that plus Carnet's
    syntax as passes with markdown-it-py as the fallback (:func:`fast_parse`: what would sit
    behind ``parse_bounded``); parse + HTML for reference; and what creating as many bare
    ``Token``s as Carnet's parse makes costs (:func:`token_floor`: the floor of any parser kept
    behind the ``Token`` interface).
(b) **its share of a cold build**: ``carnet build --no-search --no-cache --jobs 1`` on the
    corpus, once in a child process for its CPU time, once in this process under cProfile
    for the cumulative time of ``MarkdownIt.parse`` (every call: bodies, comments, wiki
    sections, tokens parsed again after being dropped), of the body renderer
    (``render_body``) and of everything else; the gain if parsing cost nothing is estimated
    both ways (profiled share × CPU, and the parse time of (a) against the build's CPU).
(c) **what the compiled parsers give Carnet**, on the corpus, the examples and
    :data:`EDGE_CASES` (the parts of CommonMark and of Carnet's dialect the notes use, edges
    included): markdown-it-pyrs' converted tokens against markdown-it-py's (same
    configuration): block start lines, line ranges (``.map``), inline structure (text,
    emphasis, code, links, images, breaks), HTML; then :func:`fast_parse` against Carnet's
    parser: how many bodies fell back, whether anchoring's elements
    (:func:`generator.anchoring.elements.segment`) and Carnet's rendered HTML
    (:func:`generator.site.markdown_html.render_body`) are byte-identical; ``[[…]]`` found
    after the parse against Carnet's inline rule; pyromark's and comrak's HTML against
    markdown-it-py's (CommonMark conformance on these bodies; neither gives a tree with
    positions to Python that could carry ``.map``: pyromark gives events with byte ranges,
    comrak only HTML).

Nothing is asserted: these are measures, read by people.
"""

from __future__ import annotations

import argparse
import bisect
import cProfile
import importlib
import itertools
import pstats
import re
import site
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from generator.markup import (
    _WIKILINK,
    ALIGN_CLASSES,
    MAX_NESTING,
    MAX_TABLE_CELLS,
    RAW_BLOCKS,
    _marker_spacing,
    link_is_safe,
    parse_bounded,
    raw_tag,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "content" / "notes"


@dataclass(frozen=True)
class Candidate:
    """One way to parse a body.

    Attributes:
        name: as the tables show it.
        module: the module it needs (optional ones may be missing).
        make: builds the parse function (once: making a parser is not timed).
        html: builds a body → HTML function, for the reference column and conformance.
    """

    name: str
    module: str
    make: Callable[[], Callable[[str], object]]
    html: Callable[[], Callable[[str], str]] | None = None


def plain_parser() -> MarkdownIt:
    """markdown-it-py as the compiled parsers are configured: CommonMark (raw HTML on), tables,
    strikethrough; none of Carnet's rules."""
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _pyrs() -> Any:
    md = importlib.import_module("markdown_it_pyrs").MarkdownIt("commonmark")
    md.enable_many(["table", "strikethrough"])
    return md


_PYRS_CARNET_RULES = ["blockquote", "code", "fence", "heading", "hr", "lheading", "list", "paragraph", "reference",
                      "autolink", "backticks", "emphasis", "entity", "escape", "image", "link", "newline",
                      "html_inline", "table", "strikethrough"]


def _pyrs_carnet() -> Any:
    """markdown-it-pyrs for Carnet's passes: CommonMark without raw HTML blocks (Carnet reads raw
    HTML off); inline tags kept as nodes, so that :func:`carnet_passes` applies the allowlist."""
    md = importlib.import_module("markdown_it_pyrs").MarkdownIt("zero")
    md.enable_many(_PYRS_CARNET_RULES)
    return md


def _comrak_options() -> tuple[Any, Any]:
    comrak = importlib.import_module("comrak")
    extensions, render = comrak.ExtensionOptions(), comrak.RenderOptions()
    extensions.table, extensions.strikethrough, render.unsafe_ = True, True, True
    return extensions, render


def _comrak_html() -> Callable[[str], str]:
    render_markdown = importlib.import_module("comrak").render_markdown
    extensions, render = _comrak_options()
    return lambda body: str(render_markdown(body, extension_options=extensions, render_options=render))


def _pyromark_options() -> int:
    options = importlib.import_module("pyromark").Options
    return int(options.ENABLE_TABLES | options.ENABLE_STRIKETHROUGH)


def _pyromark_events() -> Callable[[str], object]:
    events_with_range, options = importlib.import_module("pyromark").events_with_range, _pyromark_options()
    return lambda body: events_with_range(body, options=options)


def _pyromark_html() -> Callable[[str], str]:
    html, options = importlib.import_module("pyromark").html, _pyromark_options()
    return lambda body: str(html(body, options=options))


def _pyrs_as_tokens() -> Callable[[str], object]:
    md = _pyrs()
    return lambda body: pyrs_tokens(md.tree(body), body)


def _read_tree(node: Any) -> int:
    """Every node's name, byte range and meta read once (each read builds Python objects)."""
    read = len(node.name) + len(node.srcmap or ()) + len(node.meta)
    return read + sum(_read_tree(child) for child in node.children)


def _pyrs_read() -> Callable[[str], object]:
    md = _pyrs_carnet()
    return lambda body: _read_tree(md.tree(body))


def _pyrs_passes() -> Callable[[str], object]:
    md = _pyrs_carnet()
    return lambda body: fast_parse(md, body)


CANDIDATES = (
    Candidate("markdown-it-py, Carnet's dialect", "markdown_it", lambda: parse_bounded),
    Candidate("markdown-it-py, CommonMark + tables", "markdown_it", lambda: plain_parser().parse,
              lambda: plain_parser().render),
    Candidate("markdown-it-pyrs, tree", "markdown_it_pyrs", lambda: _pyrs().tree, lambda: _pyrs().render),
    Candidate("markdown-it-pyrs, tree + every node's name, range, meta read (an adapter's floor)",
              "markdown_it_pyrs", _pyrs_read),
    Candidate("markdown-it-pyrs, tree → Tokens", "markdown_it_pyrs", _pyrs_as_tokens),
    Candidate("markdown-it-pyrs → Tokens + Carnet's passes (fallback included)", "markdown_it_pyrs", _pyrs_passes),
    Candidate("pyromark, events with ranges", "pyromark", _pyromark_events, _pyromark_html),
    Candidate("comrak (HTML only: no tree in Python)", "comrak", _comrak_html, _comrak_html),
)


def available(candidates: Sequence[Candidate]) -> tuple[list[Candidate], list[str]]:
    """The candidates whose module imports, and the names of the modules that do not."""
    found, missing = [], []
    for candidate in candidates:
        try:
            importlib.import_module(candidate.module)
        except ImportError:
            if candidate.module not in missing:
                missing.append(candidate.module)
            continue
        found.append(candidate)
    return found, missing


def parse_cpu_seconds(parse: Callable[[str], object], bodies: Sequence[str], repeats: int = 3) -> float:
    """CPU seconds to parse every body once: the median of ``repeats`` passes."""
    passes = []
    for _ in range(repeats):
        started = time.process_time()
        for body in bodies:
            parse(body)
        passes.append(time.process_time() - started)
    return statistics.median(passes)


def token_floor(bodies: Sequence[str], repeats: int = 3) -> tuple[int, float]:
    """The tokens Carnet's parser makes for ``bodies`` (block and inline), and the CPU seconds
    creating as many bare ``Token``s takes: what any parser behind the ``Token`` interface pays
    in Python, however fast it parses."""
    count = sum(1 + len(t.children or []) for body in bodies for t in parse_bounded(body).tokens)

    def make(_body: str) -> None:
        for _ in range(count):
            Token("text", "", 0)

    return count, parse_cpu_seconds(make, [""], repeats)


# markdown-it-pyrs' tree → markdown-it-py's tokens. Its nodes carry byte offsets (``srcmap``);
# a tight list item holds its inline nodes directly where markdown-it-py has a hidden paragraph.
_BLOCK_TAGS = {"paragraph": "p", "bullet_list": "ul", "ordered_list": "ol", "list_item": "li",
               "blockquote": "blockquote", "table": "table", "thead": "thead", "tbody": "tbody", "trow": "tr"}
_TOKEN_TYPE = {"trow": "tr"}
_LEAF_BLOCKS = {"fence": ("fence", "code"), "code_block": ("code_block", "code"), "hr": ("hr", "hr"),
                "html_block": ("html_block", "")}
_INLINE_PAIRS = {"em": ("em", "em"), "strong": ("strong", "strong"), "strikethrough": ("s", "s"),
                 "link": ("link", "a"), "autolink": ("link", "a")}
_INLINE_NAMES = {"text", "text_special", "softbreak", "hardbreak", "code_inline", "html_inline", "image",
                 *_INLINE_PAIRS}


class _Lines:
    """Byte offset → 0-based line of a body."""

    def __init__(self, body: str) -> None:
        lines = body.split("\n")
        self.starts = [0, *itertools.accumulate(len(line.encode("utf-8")) + 1 for line in lines[:-1])]
        self.blank = [not line.strip() for line in (lines[:-1] if lines and not lines[-1] else lines)]

    def past_blanks(self, line: int) -> int:
        """The first line at or after ``line`` that is not blank (markdown-it-py ends a list there)."""
        while line < len(self.blank) and self.blank[line]:
            line += 1
        return line

    def of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def map(self, srcmap: tuple[int, int] | None) -> list[int] | None:
        if srcmap is None:
            return None
        start, end = srcmap
        return [self.of(start), self.of(max(start, end - 1)) + 1]


class Fallback(Exception):
    """A body the passes do not read as Carnet's parser does: parsed by markdown-it-py instead."""


def pyrs_tokens(root: Any, body: str, validate: Callable[[str], bool] | None = None,
                bounded: bool = False) -> list[Token]:
    """A markdown-it-pyrs tree as markdown-it-py's flat block tokens (``.map``: line ranges;
    ``inline`` tokens with ``.children``): what anchoring and the renderer would read, with
    markdown-it-py's ranges (a list and its last item take the blank lines after them, an item
    runs to the next one, a table's header is its first line, a cell has none). ``validate``:
    a link whose URL it refuses is the text it was written as; ``bounded``: :class:`Fallback`
    near Carnet's nesting and table-cell bounds. :func:`compare_pyrs` counts how often the
    tokens agree with markdown-it-py's."""
    lines = _Lines(body)
    source = body.encode("utf-8")
    out: list[Token] = []

    def inline(nodes: list[Any], line_map: list[int] | None) -> None:
        # its content: the source it was read from (markdown-it-py's strips a container's markers
        # from continuation lines; only a heading's, one line, is read: synthesis/sections.py)
        first, last = (nodes[0].srcmap, nodes[-1].srcmap) if nodes else (None, None)
        content = source[first[0]:last[1]].decode("utf-8") if first and last else ""
        out.append(Token("inline", "", 0, map=line_map, block=True, content=content,
                         children=_inline_children(nodes, source, validate)))

    cells = 0

    def block(node: Any, header: bool, align: Sequence[str] = (), column: int = 0, level: int = 0) -> None:
        nonlocal cells
        name = node.name
        if bounded and level >= MAX_NESTING - 2:  # near Carnet's bound: its parser says what it dropped
            raise Fallback
        line_map = lines.map(node.srcmap)
        if name in ("heading", "lheading"):
            tag = f"h{node.meta['level']}"
            out.append(Token("heading_open", tag, 1, map=line_map, block=True))
            inline(node.children, line_map)
            out.append(Token("heading_close", tag, -1, block=True))
        elif name == "tcell":
            tag = "th" if header else "td"  # markdown-it-py gives a cell no range, its row one
            side = align[column] if column < len(align) else "none"
            # the alignment as Carnet's table rule writes it: a class (the site's CSP blocks style)
            attrs: dict[str, str | int | float] = \
                {"class": ALIGN_CLASSES[f"text-align:{side}"]} if side != "none" else {}
            out.append(Token(f"{tag}_open", tag, 1, attrs=attrs, block=True))
            inline(node.children, line_map)
            out.append(Token(f"{tag}_close", tag, -1, block=True))
        elif name == "paragraph":
            out.append(Token("paragraph_open", "p", 1, map=line_map, block=True))
            inline(node.children, line_map)
            out.append(Token("paragraph_close", "p", -1, block=True))
        elif name in _BLOCK_TAGS:
            kind, tag = _TOKEN_TYPE.get(name, name), _BLOCK_TAGS[name]
            if line_map and name in ("bullet_list", "ordered_list"):  # markdown-it-py's list takes the blanks after it
                line_map[1] = lines.past_blanks(line_map[1])
            elif line_map and name == "thead":  # markdown-it-py's header is its first line, the delimiter row left out
                line_map[1] = line_map[0] + 1
            opening = Token(f"{kind}_open", tag, 1, map=line_map, block=True)
            if name == "ordered_list" and node.meta.get("start", 1) != 1:
                opening.attrs["start"] = int(node.meta["start"])
            out.append(opening)
            run: list[Any] = []
            items: list[Token] = []
            if name == "table":
                align = [str(a) for a in node.meta.get("alignments", [])]
                cells += len(align) * sum(len(part.children) for part in node.children)
                if bounded and cells > MAX_TABLE_CELLS:  # Carnet's bound: its parser reads the rest as text
                    raise Fallback
            for index, child in enumerate(node.children):
                if child.name in _INLINE_NAMES:  # a tight item's words: markdown-it-py's hidden paragraph
                    run.append(child)
                    continue
                if run:
                    _hidden_paragraph(out, run, lines, inline)
                    run = []
                if child.name == "list_item":
                    items.append(Token("list_item_open", "li", 1))  # a placeholder, replaced below
                    at = len(out)
                    block(child, False, align, 0, level + 2)
                    items[-1] = out[at]
                else:
                    block(child, header or name == "thead", align, index, level + 1)
            if run:
                _hidden_paragraph(out, run, lines, inline)
            # an item runs to the next one, the last to the list's end (markdown-it-py's ranges)
            for item, following in zip(items, [*items[1:], None], strict=False):
                end = following.map[0] if following is not None and following.map else line_map[1] if line_map else None
                if item.map and end is not None:
                    item.map = [item.map[0], end]
            out.append(Token(f"{kind}_close", tag, -1, block=True))
        elif name in _LEAF_BLOCKS:
            kind, tag = _LEAF_BLOCKS[name]
            token = Token(kind, tag, 0, map=line_map, block=True, content=str(node.meta.get("content", "")))
            token.info = str(node.meta.get("info", ""))
            out.append(token)
        # a link reference definition makes no token in markdown-it-py either

    for child in root.children:
        block(child, False)
    return out


def _hidden_paragraph(out: list[Token], run: list[Any], lines: _Lines,
                      inline: Callable[[list[Any], list[int] | None], None]) -> None:
    line_map = lines.map((run[0].srcmap[0], run[-1].srcmap[1])) if run[0].srcmap and run[-1].srcmap else None
    opening = Token("paragraph_open", "p", 1, map=line_map, block=True, hidden=True)
    out.append(opening)
    inline(run, line_map)
    out.append(Token("paragraph_close", "p", -1, block=True, hidden=True))


def _inline_children(nodes: list[Any], source: bytes, validate: Callable[[str], bool] | None) -> list[Token]:
    out: list[Token] = []
    for node in nodes:
        name = node.name
        if name in ("text", "text_special"):
            out.append(Token("text", "", 0, content=str(node.meta.get("content", ""))))
        elif name in ("softbreak", "hardbreak"):
            out.append(Token(name, "br" if name == "hardbreak" else "", 0))
        elif name == "code_inline":
            out.append(Token("code_inline", "code", 0,
                             content="".join(str(c.meta.get("content", "")) for c in node.children)))
        elif name == "html_inline":
            out.append(Token("html_inline", "", 0, content=str(node.meta.get("content", ""))))
        elif name == "image":
            children = _inline_children(node.children, source, validate)
            attrs: dict[str, str | int | float] = {"src": str(node.meta.get("url", "")), "alt": ""}
            if node.meta.get("title"):
                attrs["title"] = str(node.meta["title"])
            token = Token("image", "img", 0, attrs=attrs,
                          children=children, content="".join(c.content for c in children if c.type == "text"))
            out.append(token)
        elif name in _INLINE_PAIRS:
            kind, tag = _INLINE_PAIRS[name]
            url = str(node.meta.get("url", ""))
            if name in ("link", "autolink") and validate is not None and not validate(url) and node.srcmap:
                # refused: the text it is, as markdown-it-py leaves a link whose URL fails validateLink
                start, end = node.srcmap
                inner = node.children[-1].srcmap[1] if node.children and node.children[-1].srcmap else start + 1
                if name == "autolink":
                    out.append(Token("text", "", 0, content=source[start:end].decode("utf-8")))
                    continue
                out.append(Token("text", "", 0, content="["))
                out += _inline_children(node.children, source, validate)
                out.append(Token("text", "", 0, content=source[inner:end].decode("utf-8")))
                continue
            opening = Token(f"{kind}_open", tag, 1, attrs={"href": url} if "url" in node.meta else {})
            if node.meta.get("title"):
                opening.attrs["title"] = str(node.meta["title"])
            out.append(opening)
            out += _inline_children(node.children, source, validate)
            out.append(Token(f"{kind}_close", tag, -1))
    return out


# -- (c): how often a parser's tokens say what markdown-it-py's say

def _merged(children: list[Token]) -> list[tuple[str, str]]:
    """An inline token's children as (type, what it says), adjacent text runs merged."""
    out: list[tuple[str, str]] = []
    for child in children:
        said = child.content if child.type in ("text", "code_inline", "html_inline", "image") else \
            str(child.attrs.get("href", ""))
        if child.type == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + said)
        elif not (child.type == "text" and not said):
            out.append((child.type, said))
    return out


def block_starts(tokens: list[Token]) -> list[tuple[str, int]]:
    """The visible blocks that open, with their first line (what an element's ``line`` is)."""
    return [(t.type, t.map[0]) for t in tokens if t.nesting == 1 and t.block and not t.hidden and t.map]


def block_ranges(tokens: list[Token]) -> list[tuple[str, int, int]]:
    return [(t.type, t.map[0], t.map[1]) for t in tokens if t.nesting >= 0 and t.block and not t.hidden and t.map
            and t.type != "inline"]


def inline_structure(tokens: list[Token]) -> list[list[tuple[str, str]]]:
    return [_merged(t.children or []) for t in tokens if t.type == "inline"]


@dataclass
class Agreement:
    bodies: int = 0
    starts: int = 0
    ranges: int = 0
    inline: int = 0
    html: int = 0
    html_compared: int = 0

    def share(self, count: int, of: int | None = None) -> str:
        total = self.bodies if of is None else of
        return f"{count}/{total} ({100 * count / total:.1f} %)" if total else "—"


_BETWEEN_TAGS = re.compile(r">\s+<")


_ALIGNMENT = re.compile(r' (?:style="text-align: ?|align=")(left|center|right)"')


def _same_html(a: str, b: str) -> bool:
    """Equal but for whitespace between tags and how a column's alignment is spelt (Carnet
    writes it as a class of its own: :data:`generator.markup.ALIGN_CLASSES`)."""
    def norm(html: str) -> str:
        return _ALIGNMENT.sub(r' style="text-align:\1"', _BETWEEN_TAGS.sub("><", html.strip()))
    return norm(a) == norm(b)


def compare_pyrs(bodies: Sequence[str]) -> Agreement:
    """markdown-it-pyrs' converted tokens against markdown-it-py's (same configuration), body by body."""
    md, pyrs = plain_parser(), _pyrs()
    agreement = Agreement()
    for body in bodies:
        expected, got = md.parse(body), pyrs_tokens(pyrs.tree(body), body)
        agreement.bodies += 1
        agreement.starts += block_starts(expected) == block_starts(got)
        agreement.ranges += block_ranges(expected) == block_ranges(got)
        agreement.inline += inline_structure(expected) == inline_structure(got)
    return agreement


def compare_html(render: Callable[[str], str], bodies: Sequence[str]) -> tuple[int, int]:
    """Bodies whose HTML equals markdown-it-py's (whitespace between tags ignored), of all."""
    reference = plain_parser()
    return sum(_same_html(render(body), reference.render(body)) for body in bodies), len(bodies)


def wikilinks_as_pass(bodies: Sequence[str]) -> tuple[int, int, int]:
    """``[[…]]`` found after a markdown-it-pyrs parse, in the merged text runs of its inline
    tokens (a pass around the parser), against the ``wikilink`` tokens of Carnet's own rule:
    (bodies where both find the same targets in the same order, bodies with any, links Carnet finds)."""
    pyrs = _pyrs()
    same = with_links = links = 0
    for body in bodies:
        carnet = [c.meta["target"] for t in parse_bounded(body).tokens if t.type == "inline"
                  for c in t.children or [] if c.type == "wikilink"]
        found = [m.group(1).strip() for runs in inline_structure(pyrs_tokens(pyrs.tree(body), body))
                 for kind, text in runs if kind == "text" for m in _WIKILINK.finditer(text)]
        if carnet or found:
            with_links += 1
            same += carnet == found
        links += len(carnet)
    return same, with_links, links


def carnet_passes(tokens: list[Token]) -> list[Token]:
    """Carnet's own inline syntax as passes after a compiled parse (its raw HTML read as
    markdown-it-py reads it with ``html`` on): ``[[…]]`` found in each text run becomes a
    ``wikilink`` token; an inline tag outside :data:`generator.markup.RAW_TAGS` becomes its
    text; then :func:`generator.markup._marker_spacing`. Not handled: a ``\\[[`` escape (the
    parser has already dropped the backslash) and raw HTML blocks (Carnet's block rule)."""
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        children: list[Token] = []
        for child in token.children:
            if child.type == "html_inline":
                read = raw_tag(child.content)
                if read is None:
                    child = Token("text", "", 0, content=child.content)
                else:
                    child.meta = {"tag": read[0], "closing": read[1], "anchor": read[2]}
            if child.type == "text" and children and children[-1].type == "text":
                children[-1].content += child.content  # one run, as markdown-it-py's text_join makes it
                continue
            children.append(child)
        split: list[Token] = []
        for child in children:
            if child.type != "text" or "[[" not in child.content:
                split.append(child)
                continue
            last = 0
            for match in _WIKILINK.finditer(child.content):
                if match.start() > last:
                    split.append(Token("text", "", 0, content=child.content[last:match.start()]))
                target = match.group(1).strip()
                link = Token("wikilink", "", 0, meta={"target": target, "label": (match.group(2) or "").strip()})
                link.content = link.meta["label"] or target
                split.append(link)
                last = match.end()
            if last < len(child.content):
                split.append(Token("text", "", 0, content=child.content[last:]))
        token.children = split
    _marker_spacing(SimpleNamespace(tokens=tokens))
    return tokens


_RAW_BLOCK_LINE = re.compile(rf"^[ \t]*</?(?:{'|'.join(RAW_BLOCKS)})\b", re.M | re.I)
_ESCAPED_BRACKET = re.compile(r"\\[\[\]]")
_LABEL_AROUND_WIKILINK = re.compile(r"\[[^\[\]\n]*\[\[")
_NEWLINES = re.compile(r"\r\n?")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:", re.M)
_INLINE_SYNTAX = re.compile(r"[*_`~&\\<!]")


def needs_fallback(body: str) -> bool:
    """Whether the text alone shows a body the passes would read otherwise than Carnet's
    parser: a raw HTML block line (Carnet's block rule), or, beside a ``[[``, an escaped
    bracket (the parser drops the backslash before the pass sees it), a link label opened
    before it or a reference definition (Carnet's rule reads ``[[…]]`` first), or a ``[[…]]``
    holding inline syntax (emphasis, code, entity, escape, tag). Nesting and table size are checked in the
    tree (:func:`parse_with_passes`)."""
    if _RAW_BLOCK_LINE.search(body):
        return True
    if "[[" not in body:
        return False
    if _ESCAPED_BRACKET.search(body) or _LABEL_AROUND_WIKILINK.search(body) or _REFERENCE.search(body):
        return True
    # inside ``[[…]]`` Carnet's rule reads the characters as written, where the parser would
    # already have read emphasis, code, an entity or an escape across it
    return any(_INLINE_SYNTAX.search(match.group()) for match in _WIKILINK.finditer(body))


def parse_with_passes(md: Any, body: str) -> list[Token]:
    """A body's tokens from markdown-it-pyrs (``md``: :func:`_pyrs_carnet`) and
    :func:`carnet_passes`, or from Carnet's own parser where :func:`needs_fallback` says so,
    where the tree nests near :data:`generator.markup.MAX_NESTING` (Carnet's bound, reported
    as a problem) or holds near :data:`generator.markup.MAX_TABLE_CELLS` cells."""
    body = _NEWLINES.sub("\n", body).replace("\0", "\ufffd")  # markdown-it-py's normalize
    if needs_fallback(body):
        raise Fallback
    tokens = pyrs_tokens(md.tree(body), body, link_is_safe, bounded=True)
    # nothing for the passes to do without a ``[[`` or a tag (the run merging they do changes no output)
    return carnet_passes(tokens) if "[[" in body or "<" in body else tokens


def fast_parse(md: Any, body: str) -> tuple[list[Token], bool]:
    """The tokens, and whether they came from the fallback."""
    try:
        return parse_with_passes(md, body), False
    except Fallback:
        return parse_bounded(body).tokens, True


def carnet_html(tokens: list[Token]) -> str:
    """A body's HTML from Carnet's renderer (:func:`generator.site.markdown_html.render_body`),
    no extraction on it, every link resolved to its target as written."""
    from generator.anchoring import AnchoredNote
    from generator.anchoring.elements import segment
    from generator.site.markdown_html import Href, RenderState, render_body

    state = RenderState(AnchoredNote(segment(tokens, 1), {}), {}, lambda target, _wiki: Href(target))
    return render_body(state)


@dataclass
class Identity:
    """markdown-it-pyrs + Carnet's passes (:func:`fast_parse`) against Carnet's parser."""

    bodies: int = 0
    fallback: int = 0
    elements: int = 0  # anchoring's elements (id, kind, text, line) equal
    rendered: int = 0  # Carnet's renderer writes the same bytes
    differing: list[int] = field(default_factory=list)


def compare_carnet(bodies: Sequence[str]) -> Identity:
    """Body by body: the elements :func:`generator.anchoring.elements.segment` makes and the
    HTML Carnet's renderer writes, from :func:`fast_parse` and from :func:`parse_bounded`."""
    from generator.anchoring.elements import segment

    md = _pyrs_carnet()
    identity = Identity()
    for index, body in enumerate(bodies):
        tokens, fell = fast_parse(md, body)
        expected = parse_bounded(body).tokens
        same_elements = segment(expected, 1).elements == segment(tokens, 1).elements
        same_html = carnet_html(expected) == carnet_html(tokens)
        identity.bodies += 1
        identity.fallback += fell
        identity.elements += same_elements
        identity.rendered += same_html
        if not (same_elements and same_html):
            identity.differing.append(index)
    return identity


# -- (b): the build's profile

@dataclass(frozen=True)
class BuildProfile:
    """A cold ``--jobs 1`` build, measured three ways (seconds)."""

    cpu: float  # unmeasured, in a child process: its CPU (interpreter start and imports included)
    wall: float
    timed_total: float  # in a child with timers around the two calls (process_time of main())
    timed_parse: float  # in MarkdownIt.parse, every call
    timed_parse_calls: int
    timed_render: float  # in Carnet's renderer of note bodies (_NoteRenderer.render)
    profiled: float  # under cProfile, in this process (its overhead included)
    parse: float  # cumulative in MarkdownIt.parse
    parse_calls: int
    render: float  # cumulative in render_body
    markdown_it: float  # own time of every markdown_it function (parse and render internals)


_TIMED_BUILD = """
import json, sys, time
from markdown_it.main import MarkdownIt
from generator.site import markdown_html
spent = {"parse": 0.0, "parse_calls": 0, "render": 0.0, "render_calls": 0}
def timed(key, function):
    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[key] += time.process_time() - started
            spent[key + "_calls"] += 1
    return wrapper
MarkdownIt.parse = timed("parse", MarkdownIt.parse)
markdown_html._NoteRenderer.render = timed("render", markdown_html._NoteRenderer.render)
from generator.cli import main
started = time.process_time()
main(sys.argv[1:])
spent["total"] = time.process_time() - started
print(json.dumps(spent))
"""
"""A build with a CPU timer around every markdown-it parse and every body render (a patch of
this child process only): cProfile's own cost falls on each of markdown-it's many small calls
and inflates its share, a timer around the two entry points does not."""


def profile_build(notes: int, work: Path) -> BuildProfile:
    """A cold ``--jobs 1`` build of the benchmark's corpus: timed in a child, timed at its two
    entry points in another, profiled with cProfile here."""
    import json
    import subprocess

    from bench.builds import CHILD_ENV, carnet, run
    from bench.corpus import plain_notes, write_carnet
    from generator.cli import main

    content = work / "carnet"
    write_carnet(content, plain_notes(notes))
    options = ["--no-search", "--no-cache", "--jobs", "1", "--quiet"]
    plain = run(carnet(str(content), "--out", str(work / "out-plain"), *options))
    child = subprocess.run([sys.executable, "-c", _TIMED_BUILD, "build", str(content), "--out",
                            str(work / "out-timed"), *options], capture_output=True, text=True, env=CHILD_ENV,
                           check=True)
    timed = json.loads(child.stdout.strip().splitlines()[-1])
    profiler = cProfile.Profile()
    started = time.process_time()
    profiler.runcall(main, ["build", str(content), "--out", str(work / "out-profiled"), *options])
    profiled = time.process_time() - started
    stats: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    parse = render = own = 0.0
    calls = 0
    for (file, _line, function), (_primitive, count, tottime, cumulative, _callers) in stats.items():
        path = file.replace("\\", "/")
        if "/markdown_it/" in path:
            own += tottime
            if path.endswith("markdown_it/main.py") and function == "parse":
                parse, calls = parse + cumulative, calls + count
        if path.endswith("generator/site/markdown_html.py") and function == "render_body":
            render += cumulative
    return BuildProfile(plain.cpu, plain.wall, timed["total"], timed["parse"], timed["parse_calls"], timed["render"],
                        profiled, parse, calls, render, own)


# -- the report

EDGE_CASES = {
    "escaped wikilink": "Pas un lien : \\[[note-a]] ni \\[\\[note-b]].\n",
    "wikilink in emphasis": "*voir [[note-a|la note]]* et **[[note-b]]**\n",
    "wikilink in link text": "[texte [[note-a]]](https://example.org)\n",
    "wikilink over a line": "[[note-a|deux\nlignes]] puis [[note-b]]\n",
    "wikilink holding emphasis marks": "*voir [[note_a*b]] fin* et _x [[n_b]]_\n",
    "wikilink across a code span": "`code [[note-a` b]] et [[note-b|`c`]]\n",
    "wikilink as a reference": "[[note-a]]\n\n[note-a]: /ailleurs\n",
    "wikilink in code": "`[[note-a]]` et\n\n    [[note-b]]\n",
    "citation markers": "voté [[ext:a]] [[ext:b]].\nSuite [[com:c]]\n[[quote:q]] fin.\n",
    "unsafe links": "[a](javascript:alert(1)) [b](ftp://x.org/f) [c](data:text/html,x) <javascript:x>\n",
    "unicode and spaces in URLs": "[a](https://exemple.org/été?q=a b) [b](<https://x.org/a b>) ![i](é.png \"t\")\n",
    "entities and escapes": "&amp; &copy; &#233; &#x1F600; &nosuch; \\* \\_ \\` \\\\\n",
    "allowed raw tags": "x<sup>2</sup> H<sub>2</sub>O <kbd>Ctrl</kbd><br>fin <a name=\"ici\"></a>\n",
    "refused raw tags": "<b>gras</b> <script>x</script> <a href=\"u\">l</a> <!-- c -->\n",
    "raw html block": "<details open>\n<summary>Résumé</summary>\n\nTexte.\n\n</details>\n",
    "html block refused": "<div>\n*x*\n</div>\n",
    "emphasis edge": "*a **b** c* _d_e_ **f*g** ***h*** a*b*c\n",
    "code spans": "`` a ` b `` ` c ` `d\ne`\n",
    "hard and soft breaks": "a  \nb\\\nc\nd\n",
    "setext and atx": "Titre\n=====\n\n## Partie ##\n\n#Pas un titre\n",
    "lists": "1. a\n2. b\n   - c\n\n     d\n3) e\n\n- [ ] t\n* f\n+ g\n",
    "lazy continuation": "> a\nb\n\n- c\nd\n",
    "blockquote nesting": "> a\n> > b\n> > > c\n>\n> - d\n",
    "reference links": "[a][r] [r] ![i][r]\n\n[r]: /u \"t\"\n[R2]: <x y>\n",
    "autolinks": "<https://a.b/c> <mailto:a@b.c> <a@b.c> https://nolink.org\n",
    "tables with escapes": "| a \\| b | `c|d` |\n|:--|:-:|\n| 1 | 2 |\n| 3 |\n",
    "table without body": "| a | b |\n|---|---|\n",
    "strikethrough": "~~barré~~ ~simple~ ~~~trois~~~\n",
    "fences": "```py\nx = 1\n```\n\n~~~\nnon fermé\n",
    "images": "![alt *em* `c`](i.png) ![](vide.png)\n",
    "transcript turn": "[00:14:07] **Jonas** : bonjour\n\n[01:02:03] Ana : oui\n",
    "thematic breaks": "***\n---\n___\n",
    "tabs": "-\ta\n\n\tcode\n",
    "trailing spaces and CRLF": "a\r\nb  \r\n\r\nc\n",
    "NUL and controls": "a\x00b \x0b c\n",
    "deep nesting": "> " * 25 + "fond\n",
}
"""Small bodies for the parts of CommonMark and Carnet's dialect the notes use, the edges
included (escapes, refused links and tags, raw blocks, nesting past Carnet's bound)."""

def corpus_bodies(notes: int) -> list[str]:
    from bench.corpus import plain_notes
    return [note.body for note in plain_notes(notes)]


def example_bodies(folder: Path = EXAMPLES) -> list[str]:
    from generator.corpus.source import split_front_matter
    return [split_front_matter(path.read_text(encoding="utf-8"), path.name).body
            for path in sorted(folder.glob("*.md"))]


def report(sets: dict[str, list[str]], repeats: int, profile: BuildProfile | None, notes: int) -> str:
    found, missing = available(CANDIDATES)
    lines = [f"Python {sys.version.split()[0]}; CPU seconds, median of {repeats}."]
    if missing:
        lines.append(f"Not installed, not measured: {', '.join(missing)} (see --site).")
    names = list(sets)
    lines += ["", "### (a) Parse time of every body", "",
              "| parser | " + " | ".join(f"{n}: parse (s)" for n in names) + " | "
              + " | ".join(f"{n}: × Carnet's" for n in names) + " | "
              + " | ".join(f"{n}: parse + HTML (s)" for n in names) + " |",
              "|---|" + "---:|" * (3 * len(names))]
    baseline: dict[str, float] = {}
    parse_times: dict[tuple[str, str], float] = {}
    for candidate in found:
        parse = candidate.make()
        html = candidate.html() if candidate.html else None
        cells, ratios, htmls = [], [], []
        for name, bodies in sets.items():
            seconds = parse_cpu_seconds(parse, bodies, repeats)
            parse_times[(candidate.name, name)] = seconds
            baseline.setdefault(name, seconds)  # the first candidate: Carnet's dialect
            cells.append(f"{seconds:.3f}")
            ratios.append(f"{seconds / baseline[name]:.3f}" if baseline[name] else "—")
            htmls.append(f"{parse_cpu_seconds(html, bodies, repeats):.3f}" if html else "—")
        lines.append(f"| {candidate.name} | " + " | ".join(cells + ratios + htmls) + " |")
    for name, bodies in sets.items():
        count, seconds = token_floor(bodies, repeats)
        lines.append(f"\n{name}: Carnet's parse makes {count:,} tokens; creating as many bare `Token`s takes "
                     f"{seconds:.3f} s (the floor of any parser behind the `Token` interface).")
    modules = {c.module for c in found}
    checked = {**sets, f"edge cases ({len(EDGE_CASES)})": list(EDGE_CASES.values())}
    lines += ["", "### (c) What the compiled parsers give Carnet", ""]
    if "markdown_it_pyrs" in modules:
        lines += ["markdown-it-pyrs' tree converted to Tokens (`pyrs_tokens`) against markdown-it-py, the same "
                  "CommonMark + tables + strikethrough, body by body:", "",
                  "| bodies | block start lines equal | block line ranges equal | inline structure equal | "
                  "HTML equal |", "|---|---:|---:|---:|---:|"]
        for name, bodies in checked.items():
            agreement = compare_pyrs(bodies)
            same, total = compare_html(_pyrs().render, bodies)
            lines.append(f"| {name} | {agreement.share(agreement.starts)} | {agreement.share(agreement.ranges)} | "
                         f"{agreement.share(agreement.inline)} | {agreement.share(same, total)} |")
        lines += ["", "markdown-it-pyrs + Carnet's syntax as passes (`fast_parse`: `[[…]]`, the raw-tag allowlist, "
                  "link schemes, table classes, marker spacing; markdown-it-py where `needs_fallback` or the "
                  "bounds say so) against Carnet's parser:", "",
                  "| bodies | fell back to markdown-it-py | anchoring elements equal | Carnet's HTML byte-identical |",
                  "|---|---:|---:|---:|"]
        edge_names = list(EDGE_CASES)
        for name, bodies in checked.items():
            identity = compare_carnet(bodies)
            total = identity.bodies
            lines.append(f"| {name} | {identity.fallback}/{total} | {identity.elements}/{total} | "
                         f"{identity.rendered}/{total} |")
            if name.startswith("edge") and identity.differing:
                lines.append(f"| (differing: {', '.join(edge_names[i] for i in identity.differing)}) | | | |")
        for name, bodies in sets.items():
            same, with_links, links = wikilinks_as_pass(bodies)
            if with_links:
                lines.append(f"\n`[[…]]` found in markdown-it-pyrs' text runs ({name}): the same targets in the "
                             f"same order as Carnet's inline rule in {same} of the {with_links} bodies that have "
                             f"any ({links} links).")
    for module, render in (("pyromark", _pyromark_html), ("comrak", _comrak_html)):
        if module in modules:
            cells = []
            for name, bodies in checked.items():
                same, total = compare_html(render(), bodies)
                cells.append(f"{name}: {same}/{total}")
            lines.append(f"\n{module}: HTML equal to markdown-it-py's (whitespace between tags and the spelling "
                         "of a column's alignment aside) in " + ", ".join(cells) + ".")
    if profile is not None:
        lines += profile_lines(profile, notes, parse_times)
    return "\n".join(lines)


def profile_lines(profile: BuildProfile, notes: int, parse_times: dict[tuple[str, str], float]) -> list[str]:
    def row(label: str, seconds: float, total: float) -> str:
        return f"| {label} | {seconds:.2f} | {100 * seconds / total:.1f} % |"

    other = profile.timed_total - profile.timed_parse - profile.timed_render
    profiled_other = profile.profiled - profile.parse - profile.render
    lines = ["", f"### (b) Share of a cold build ({notes:,} notes, --no-search --no-cache --jobs 1)", "",
             f"Unmeasured, in a child process: {profile.wall:.2f} s wall, {profile.cpu:.2f} s CPU "
             "(interpreter start and imports included).", "",
             "| timers around the two entry points (child process) | CPU (s) | share |", "|---|---:|---:|",
             row(f"markdown-it-py parsing (MarkdownIt.parse, {profile.timed_parse_calls:,} calls)",
                 profile.timed_parse, profile.timed_total),
             row("rendering note bodies (Carnet's renderer)", profile.timed_render, profile.timed_total),
             row("everything else", other, profile.timed_total),
             row("whole build (main())", profile.timed_total, profile.timed_total), "",
             "| under cProfile (this process; its overhead inflates markdown-it's many small calls) | "
             "cumulative (s) | share |", "|---|---:|---:|",
             row(f"markdown-it-py parsing (MarkdownIt.parse, {profile.parse_calls:,} calls)", profile.parse,
                 profile.profiled),
             row("rendering note bodies (render_body)", profile.render, profile.profiled),
             row("everything else", profiled_other, profile.profiled),
             row("whole build", profile.profiled, profile.profiled),
             row("(own time in any markdown_it function, parse and render)", profile.markdown_it, profile.profiled)]
    lines += ["", f"If parsing cost nothing, a cold --jobs 1 build would save {profile.timed_parse:.2f} s of "
              f"{profile.cpu:.2f} s CPU ({100 * profile.timed_parse / profile.cpu:.1f} %, timers); cProfile's share "
              f"would say {profile.parse / profile.profiled * profile.cpu:.2f} s."]
    fast = next((seconds for (name, _set), seconds in parse_times.items() if "passes" in name and "corpus" in _set), None)
    carnet = next((seconds for (name, _set), seconds in parse_times.items() if name == CANDIDATES[0].name
                   and "corpus" in _set), None)
    if fast is not None and carnet:
        saved = profile.timed_parse * (1 - fast / carnet)
        lines.append(f"With markdown-it-pyrs + passes at {fast / carnet:.2f} × markdown-it-py's parse time ((a)), "
                     f"it would save {saved:.2f} s ({100 * saved / profile.cpu:.1f} % of the build's CPU).")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=5000, help="notes of bench.corpus (default: 5000)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes, the median kept (default: 3)")
    parser.add_argument("--site", type=Path, action="append", default=[],
                        help="a site-packages holding the compiled parsers (appended to the path)")
    parser.add_argument("--no-profile", action="store_true", help="skip (b), the profiled build")
    parser.add_argument("--work", type=Path, help="where (b) writes its corpus and sites (default: a temporary folder)")
    args = parser.parse_args(argv)
    for folder in args.site:
        site.addsitedir(str(folder))  # appended: Carnet's own markdown-it-py is found first
    sets = {f"corpus ({args.notes:,})": corpus_bodies(args.notes), f"examples ({len(example_bodies())})":
            example_bodies()}
    profile = None
    if not args.no_profile:
        with tempfile.TemporaryDirectory(prefix="carnet-parsers-") as temporary:
            work = args.work or Path(temporary)
            print(f"profiling a cold build of {args.notes} notes in {work}…", file=sys.stderr, flush=True)
            profile = profile_build(args.notes, work)
    print(report(sets, args.repeats, profile, args.notes))


if __name__ == "__main__":
    main()
