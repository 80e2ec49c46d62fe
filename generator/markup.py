"""The markdown dialect of notes: CommonMark + tables + strikethrough + ``[[wikilinks]]``,
raw HTML off, URL schemes on an allowlist.

Pure: one parser per call to :func:`make_parser`; no rendering here (see
``generator/site/markdown_html.py``) so that anchoring and link checks read the
same tokens the renderer writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_block import table as gfm_table
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

ALLOWED_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_WIKILINK = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|([^\[\]\n]+?))?\]\]")


def link_is_safe(url: str) -> bool:
    """Only http, https, mailto and scheme-less (relative) URLs pass.

    Browsers ignore tabs, newlines and leading spaces inside a scheme
    (``java\\tscript:``), so those are removed before looking at it.
    """
    cleaned = _CONTROL.sub("", url)
    match = _SCHEME.match(cleaned)
    if match is None:
        return True
    return match.group(1).lower() in ALLOWED_SCHEMES


_UNSAFE_IN_ADDRESS = re.compile(r"[\x00-\x20\x7f-\x9f\"'<>\\^`{|}]")


def site_address_problem(url: str) -> str | None:
    """Why ``url`` cannot be the address a site is published at, or None: it must be
    an absolute http(s) URL with a host, holding no character that would need
    escaping where it lands (attributes, XML feeds, sitemaps, JSON-LD)."""
    if not url.startswith(("http://", "https://")):
        return "it is not an absolute http(s) URL"
    bad = _UNSAFE_IN_ADDRESS.search(url)
    if bad is not None:
        return f"it holds {bad.group()!r}, which would need escaping (percent-encode it, e.g. %22 for a quote)"
    host = url.split("://", 1)[1].split("/", 1)[0]
    if not host or "@" in host:
        return "it names no host" if not host else "it holds credentials (user@host)"
    return None


CITATION_KINDS = ("ext", "com", "quote")
"""What a ``[[kind:ID]]`` citation marker can name (anything else names a note)."""


@dataclass(frozen=True)
class WikiTarget:
    """What a ``[[…]]`` names.

    Attributes:
        kind: ``note`` (a slug), ``ext`` (an extraction id), ``com`` (a comment id) or
            ``quote`` (a quote of a saved answer, by its id in the answer's file).
        key: the slug or id.
        fragment: ``#…`` part of a note link, without the ``#``.
    """

    kind: str
    key: str
    fragment: str = ""


def parse_wiki_target(raw: str) -> WikiTarget:
    raw = raw.strip()
    for kind in CITATION_KINDS:
        if raw.startswith(kind + ":"):
            return WikiTarget(kind, raw[len(kind) + 1:].strip())
    slug, _, fragment = raw.partition("#")
    return WikiTarget("note", slug.strip(), fragment.strip())


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("[[", state.pos):
        return False
    match = _WIKILINK.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        target = match.group(1).strip()
        token.meta = {"target": target, "label": (match.group(2) or "").strip()}
        token.content = token.meta["label"] or target
    state.pos = match.end()
    return True


MAX_NESTING = 20
"""Block levels markdown-it reads (its ``maxNesting``): a quote is one level, a list
two (the list and its item). Past it the parser stops and drops the rest of the
container; :func:`parse_checked` says where, so content is refused rather than lost.
Inline, past the same bound, the text is kept as literal characters: nothing is lost."""

_TOO_DEEP = "carnet_too_deep"  # env key: the (start, end) body lines the parser did not read


def _report_too_deep(md: MarkdownIt) -> None:
    """Wrap the block tokenizer so that a range it would skip for nesting is recorded.

    markdown-it's loop skips ``[line, end)`` as soon as it is entered at
    ``level >= maxNesting`` on a line that belongs to the container (its own checks,
    in its own order); the level does not change inside one call, so looking at entry
    is enough.
    """
    tokenize = md.block.tokenize
    limit = md.options.maxNesting

    def guarded(state: StateBlock, start_line: int, end_line: int) -> None:
        if state.level >= limit:
            line = state.skipEmptyLines(start_line)
            if line < end_line and state.sCount[line] >= state.blkIndent:
                state.env.setdefault(_TOO_DEEP, []).append((line, end_line))
        tokenize(state, start_line, end_line)

    md.block.tokenize = guarded  # type: ignore[method-assign, assignment]


MAX_TABLE_CELLS = 20_000
"""Cells the tables of one body hold together, header cells included (2,000 rows of 10
columns). markdown-it makes three tokens of a cell (about 1.3 KB with the element it joins)
and gives every row as many cells as its header has, however short the row: a 600-column
table of empty cells cost 800 bytes of memory per byte of the note, a 600-column header over
rows of ``|x|`` far more. Past the bound a table's next rows are read as the paragraph they
then are (their text kept), and :func:`parse_bounded` says from which line."""

_TABLE_CELLS = "carnet_table_cells"  # env key: cells the body's tables hold so far
_TABLES_CUT = "carnet_tables_cut"  # env key: the TableCut of each table the bound cut

ALIGN_CLASSES = {"text-align:left": "align-left", "text-align:center": "align-center",
                 "text-align:right": "align-right"}
"""markdown-it's ``style`` of an aligned column (``|:-:|``) → the class the stylesheet aligns:
the site's CSP (``style-src 'self'``) blocks every ``style`` attribute."""


@dataclass(frozen=True)
class TableCut:
    """A table cut at :data:`MAX_TABLE_CELLS`.

    Attributes:
        start: the table's first line (0-based, in the body).
        text_from: its first line read as text instead (``start`` when no cell was left for it).
    """

    start: int
    text_from: int


def _line(state: StateBlock, line: int) -> str:
    return state.src[state.bMarks[line] + state.tShift[line]:state.eMarks[line]]


def _row_follows(state: StateBlock, line: int, end_line: int) -> bool:
    """Whether markdown-it's table rule would read ``line`` as one more row (its own tests,
    in its own order: indent, a block that ends a table, a blank line, code)."""
    if line >= end_line or state.sCount[line] < state.blkIndent:
        return False
    parent, state.parentType = state.parentType, "table"
    try:
        if any(rule(state, line, end_line, True) for rule in state.md.block.ruler.getRules("blockquote")):
            return False
    finally:
        state.parentType = parent
    return bool(_line(state, line).strip()) and not state.is_code_block(line)


def _bounded_table(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """markdown-it's table rule, given only the rows that fit in what is left of
    :data:`MAX_TABLE_CELLS`, its alignments written as classes."""
    if not gfm_table(state, start_line, end_line, True):
        return False
    # the rule has checked the delimiter row: one non-empty part per column
    columns = sum(1 for part in _line(state, start_line + 1).split("|") if part.strip())
    left = MAX_TABLE_CELLS - state.env.get(_TABLE_CELLS, 0)
    if left < columns:  # not even its header: the whole table is text
        if not silent:
            state.env.setdefault(_TABLES_CUT, []).append(TableCut(start_line, start_line))
        return False
    if silent:
        return True
    limit = min(end_line, start_line + 1 + left // columns)  # the header, the delimiter, then rows
    first = len(state.tokens)
    gfm_table(state, start_line, limit, False)
    state.env[_TABLE_CELLS] = state.env.get(_TABLE_CELLS, 0) + columns * (state.line - start_line - 1)
    if state.line == limit and _row_follows(state, limit, end_line):
        state.env.setdefault(_TABLES_CUT, []).append(TableCut(start_line, limit))
    for token in state.tokens[first:]:
        if token.attrs:
            style = token.attrs.pop("style", None)
            if style is not None:
                token.attrs["class"] = ALIGN_CLASSES[str(style)]
    return True


def make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False,
                                   "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"])
    md.block.ruler.at("table", _bounded_table, {"alt": ["paragraph", "reference"]})
    md.validateLink = link_is_safe  # type: ignore[method-assign]
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    _report_too_deep(md)
    return md


_PARSER: MarkdownIt | None = None


def parse(body: str) -> list[Token]:
    return parse_checked(body)[0]


def parse_checked(body: str) -> tuple[list[Token], list[tuple[int, int]]]:
    """The tokens of ``body``, and each range of its lines (0-based, end excluded) that
    the parser dropped for being nested :data:`MAX_NESTING` levels deep."""
    parsed = parse_bounded(body)
    return parsed.tokens, parsed.too_deep


@dataclass(frozen=True)
class ParsedBody:
    """A body's tokens and where the parser's bounds changed how it was read.

    Attributes:
        tokens: markdown-it's block tokens.
        too_deep: each range of lines (0-based, end excluded) dropped for being nested
            :data:`MAX_NESTING` levels deep.
        tables_cut: each table whose rows past :data:`MAX_TABLE_CELLS` were read as text.
    """

    tokens: list[Token]
    too_deep: list[tuple[int, int]]
    tables_cut: list[TableCut]


def parse_bounded(body: str) -> ParsedBody:
    # One parser for the process: building one costs as much as parsing a short note,
    # and parsing keeps no state between calls (each call gets fresh env and tokens).
    global _PARSER
    if _PARSER is None:
        _PARSER = make_parser()
    env: dict[str, Any] = {}  # markdown-it's env: what the rules above record
    tokens = _PARSER.parse(body, env)
    return ParsedBody(tokens, env.get(_TOO_DEEP, []), env.get(_TABLES_CUT, []))


def leaf_text(token: Token) -> str:
    """The plain text one inline token contributes to its element.

    The renderer advances its offsets with the very same function, so highlighted
    ranges computed on plain text land on the same characters in the HTML.
    """
    if token.type == "wikilink":
        # a citation marker without a label is shown as a number, not as text
        if not token.meta.get("label") and parse_wiki_target(token.meta["target"]).kind in CITATION_KINDS:
            return ""
        return token.content
    if token.type in ("text", "code_inline"):
        return token.content
    if token.type == "softbreak":
        return " "
    if token.type == "hardbreak":
        return "\n"
    return ""
