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

from generator.kinds import WikiKind

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


CITATION_KINDS = (WikiKind.EXT, WikiKind.COM, WikiKind.QUOTE)
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

    kind: WikiKind
    key: str
    fragment: str = ""


def parse_wiki_target(raw: str) -> WikiTarget:
    raw = raw.strip()
    for kind in CITATION_KINDS:
        if raw.startswith(kind + ":"):
            return WikiTarget(kind, raw[len(kind) + 1:].strip())
    slug, _, fragment = raw.partition("#")
    return WikiTarget(WikiKind.NOTE, slug.strip(), fragment.strip())


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


RAW_TAGS = ("a", "br", "sup", "sub", "kbd")
"""The raw HTML a note may write among its words (everything else stays text): ``<a name>`` or
``<a id>`` as a link's target (no ``href``: links are markdown's), a line break, exponents,
indices, keys. They are read as ``html_inline`` tokens (``meta``: ``tag``, ``closing``,
``anchor``), add no text to their element but a line break's, and are written by the renderer
through a sanitiser, or as text when the site's ``outputs: raw_html`` is false."""

_ATTRIBUTE = r"""\s+([a-zA-Z][a-zA-Z0-9_:.-]*)(?:\s*=\s*("[^"<>]*"|'[^'<>]*'|[^\s"'=<>`]+))?"""
_RAW_TAG = re.compile(rf"<(/?)({'|'.join(RAW_TAGS)})((?:{_ATTRIBUTE})*)\s*(/?)>", re.IGNORECASE)
_RAW_ANCHOR = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,99}")
RESERVED_ANCHORS = ("e-", "ext-", "com-", "entry-", "h-")
"""Ids the site gives its own anchors (elements, passages, comments): a raw anchor never takes one."""


def raw_tag(text: str) -> tuple[str, bool, str] | None:
    """``text`` (from ``<``) read as one allowed raw tag: its name, whether it closes, and the
    anchor it names (an ``<a>``'s ``name`` or ``id``); ``None`` when it is not one (an ``<a>``
    with an ``href``, an anchor the site reserves, an attribute written twice…)."""
    match = _RAW_TAG.match(text)
    if match is None:
        return None
    closing, tag = bool(match.group(1)), match.group(2).lower()
    attributes: dict[str, str] = {}
    for name, value in re.findall(_ATTRIBUTE, match.group(3)):
        name = name.lower()
        if name in attributes:
            return None
        attributes[name] = value[1:-1] if value[:1] in "\"'" and value else value
    if closing:
        return (tag, True, "") if not attributes and not match.group(4) else None
    if tag != "a":
        return (tag, False, "") if not attributes else None
    anchors = {attributes.get("name"), attributes.get("id")} - {None}
    if set(attributes) - {"name", "id"} or len(anchors) != 1:
        return None
    anchor = str(anchors.pop())
    if not _RAW_ANCHOR.fullmatch(anchor) or anchor.startswith(RESERVED_ANCHORS):
        return None
    return tag, False, anchor


def _raw_html_rule(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "<":
        return False
    match = _RAW_TAG.match(state.src, state.pos)
    read = raw_tag(match.group()) if match is not None else None
    if match is None or read is None:
        return False
    if not silent:
        token = state.push("html_inline", "", 0)
        token.content = match.group()
        token.meta = {"tag": read[0], "closing": read[1], "anchor": read[2]}
    state.pos = match.end()
    return True


RAW_BLOCKS = ("details", "summary", "table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td")
"""The raw HTML blocks a note may write, each tag on a line made only of such tags:
``<details>`` (``open`` allowed), ``<summary>`` and an HTML table's elements. ``<summary>``,
``<caption>``, ``<th>`` and ``<td>`` hold their text between their tags on their one line
(it is an element's text, read as markdown: quotes land on it); a tag where HTML does not
allow it (``<td>`` outside ``<tr>``, a closing tag that closes nothing) makes its line the
text it is. A tag left open closes with its container, a table before any other block; one nested
more than :data:`MAX_NESTING` deep in raw tags is text."""

_HOLDERS = ("summary", "caption", "th", "td")
_BLOCK_TAG = rf"</?(?:{'|'.join(RAW_BLOCKS)})\b"
_RAW_BLOCK_ITEM = re.compile(
    rf"\s*(?:<(details)(\s+open)?\s*>|<(/?)({'|'.join(t for t in RAW_BLOCKS if t not in _HOLDERS)})\s*>"
    rf"|<({'|'.join(_HOLDERS)})\s*>((?:(?!{_BLOCK_TAG}).)*?)</\5\s*>)\s*", re.IGNORECASE)
_PARENTS = {"summary": ("details",), "caption": ("table",), "thead": ("table",), "tbody": ("table",),
            "tfoot": ("table",), "tr": ("table", "thead", "tbody", "tfoot"), "th": ("tr",), "td": ("tr",)}
_TABLE_PARTS = ("table", "thead", "tbody", "tfoot", "tr")
_RAW_GROUP = "carnet_raw_group"  # env key: the number of raw block lines read so far


def _raw_block_rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """A line made only of :data:`RAW_BLOCKS` tags → their tokens (``meta``: ``raw``, the tag
    as written; ``group``, the line's number among such lines; the first one's ``written``,
    the whole line). The level is left as it was: a tag left open is closed by
    :func:`_balance_raw`, never counted as nesting (past :data:`MAX_NESTING` the parser
    would stop reading)."""
    if state.is_code_block(start_line):
        return False
    line = _line(state, start_line)
    if not line.startswith("<"):
        return False
    items, at = [], 0
    while at < len(line):
        match = _RAW_BLOCK_ITEM.match(line, at)
        if match is None or match.end() == at:
            return False
        items.append(match)
        at = match.end()
    if silent:
        return True
    group = state.env[_RAW_GROUP] = state.env.get(_RAW_GROUP, 0) + 1
    level = state.level
    made: list[Token] = []
    for match in items:
        written = match.group().strip()
        if match.group(1):  # <details>, open or not
            token = state.push("details_open", "details", 1)
            if match.group(2):
                token.attrSet("open", "")
            made.append(token)
        elif match.group(4):
            tag = match.group(4).lower()
            made.append(state.push(f"{tag}_{'close' if match.group(3) else 'open'}", tag, -1 if match.group(3) else 1))
        else:
            tag = match.group(5).lower()
            made.append(state.push(f"{tag}_open", tag, 1))
            made[-1].meta["raw"] = line[match.start(5) - 1:match.start(6)]
            inline = state.push("inline", "", 0)
            inline.content, inline.children = match.group(6).strip(), []
            made.append(inline)
            made.append(state.push(f"{tag}_close", tag, -1))
            made[-1].meta["raw"] = line[match.end(6):match.end()].strip()
        for token in made[-3:] if not match.group(1) and not match.group(4) else made[-1:]:
            token.map = [start_line, start_line + 1]
            token.meta = {**token.meta, "group": group}
            if token.type != "inline":
                token.meta.setdefault("raw", written)
    made[0].meta["written"] = line
    state.level = level
    state.line = start_line + 1
    return True


def _is_raw(token: Token) -> bool:
    return "raw" in token.meta


def _closer(opener: Token) -> Token:
    return Token(f"{opener.tag}_close", opener.tag, -1, map=opener.map, block=True, meta={"raw": ""})


def _as_text(tokens: list[Token]) -> list[Token]:
    """A raw block line whose tags HTML would not take there: the paragraph of its text."""
    line_map = tokens[0].map
    inline = Token("inline", "", 0, map=line_map, content=tokens[0].meta["written"], children=[])
    return [Token("paragraph_open", "p", 1, map=line_map, block=True), inline,
            Token("paragraph_close", "p", -1, block=True)]


def _balance_raw(state: Any) -> None:
    """Raw block tags made well nested (a core rule, after the block rules): each in a
    parent HTML allows (else its line is text), each closing tag closing one opened in the
    same container (else its line is text), each left open closed with its container, a
    table's before any other block."""
    tokens: list[Token] = state.tokens
    if not any(_is_raw(token) for token in tokens):
        return
    out: list[Token] = []
    stack: list[Token] = []
    at = 0
    while at < len(tokens):
        token = tokens[at]
        group = token.meta.get("group")
        if group is not None:
            end = at
            while end < len(tokens) and tokens[end].meta.get("group") == group:
                end += 1
            # tried on the stack itself, undone if the line does not fit (a copy per line
            # would cost the square of a note's unclosed tags)
            made, pushed, popped, fits = [], 0, [], True
            for part in tokens[at:end]:
                top = stack[-1].tag if stack and _is_raw(stack[-1]) else None
                if part.nesting == 1:
                    parents = _PARENTS.get(part.tag)
                    # nested at most MAX_NESTING deep in one container: a closing tag's search stays short
                    deep = len(stack) >= MAX_NESTING and all(_is_raw(t) for t in stack[-MAX_NESTING:])
                    if deep or ((top not in parents) if parents else top in _TABLE_PARTS):
                        fits = False
                        break
                    stack.append(part)
                    pushed += 1
                elif part.nesting == -1:
                    depth = len(stack) - 1
                    while depth >= 0 and _is_raw(stack[depth]) and stack[depth].tag != part.tag:
                        depth -= 1
                    if depth < 0 or not _is_raw(stack[depth]):
                        fits = False
                        break
                    while len(stack) > depth:
                        closed = stack.pop()
                        if pushed:
                            pushed -= 1
                        else:
                            popped.append(closed)
                        if len(stack) > depth:
                            made.append(_closer(closed))
                made.append(part)
            if fits:
                out += made
            else:
                del stack[len(stack) - pushed:]
                stack += reversed(popped)
                while stack and _is_raw(stack[-1]) and stack[-1].tag in _TABLE_PARTS:
                    out.append(_closer(stack.pop()))
                out += _as_text(tokens[at:end])
            at = end
            continue
        if token.nesting == -1 or (stack and _is_raw(stack[-1]) and stack[-1].tag in _TABLE_PARTS):
            while stack and _is_raw(stack[-1]) and (token.nesting == -1 or stack[-1].tag in _TABLE_PARTS):
                out.append(_closer(stack.pop()))
        if token.nesting == -1 and stack:
            stack.pop()
        elif token.nesting == 1:
            stack.append(token)
        out.append(token)
        at += 1
    out += [_closer(stack.pop()) for _ in range(len(stack))]
    state.tokens = out


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


def _hidden_marker(token: Token) -> bool:
    """A citation marker without a label: shown as a number, no text of its element."""
    return (token.type == "wikilink" and not token.meta.get("label")
            and parse_wiki_target(token.meta["target"]).kind in CITATION_KINDS)


def _marker_spacing(state: Any) -> None:
    """The blank before a run of unlabelled citation markers (and between them) belongs to
    the mark, as a footnote call's: "voté [[ext:a]] [[ext:b]]." reads "voté." in the
    element's text, so no " ." is left where the numbers were (text siblings, search,
    quotes copied from the page), and "voté[1][2]." on the page."""
    for block in state.tokens:
        children = block.children if block.type == "inline" else None
        if not children:
            continue
        hidden = [_hidden_marker(child) for child in children]
        for index in (i for i, is_marker in enumerate(hidden) if is_marker):
            # back to the previous mark of the run at most (it did the rest): one walk per blank
            back = index - 1
            while back >= 0 and not hidden[back] and (children[back].type == "softbreak" or (
                    children[back].type == "text" and not children[back].content.strip())):
                children[back].type, children[back].content = "text", ""
                back -= 1
            if back >= 0 and not hidden[back] and children[back].type == "text":
                children[back].content = children[back].content.rstrip(" \t")


def make_parser(html: bool = False) -> MarkdownIt:
    """The notes' dialect; ``html``: raw HTML read as markdown reads it (only to find the
    comments :func:`without_comments` cuts: the renderer never writes it)."""
    md = MarkdownIt("commonmark", {"html": html, "linkify": False, "typographer": False,
                                   "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"])
    md.block.ruler.at("table", _bounded_table, {"alt": ["paragraph", "reference"]})
    md.validateLink = link_is_safe  # type: ignore[method-assign]
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("html_inline", "raw_html", _raw_html_rule)
    md.block.ruler.before("html_block", "raw_block", _raw_block_rule, {"alt": ["paragraph", "reference", "blockquote"]})
    md.core.ruler.before("inline", "raw_balance", _balance_raw)
    md.core.ruler.push("marker_spacing", _marker_spacing)
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
    if token.type == "hardbreak" or (token.type == "html_inline" and token.meta.get("tag") == "br"):
        return "\n"
    return ""


_COMMENT_IN_BLOCK = re.compile(r"<!--.*?(?:-->|\Z)", re.S)  # unclosed: CommonMark's comment block runs to the end
_COMMENT_PARSER: MarkdownIt | None = None


def _comment_parser() -> MarkdownIt:
    """The dialect with raw HTML on: only to find what markdown reads as an HTML comment."""
    global _COMMENT_PARSER
    if _COMMENT_PARSER is None:  # the same bounds (tables, nesting) as the notes' own parser
        _COMMENT_PARSER = make_parser(html=True)
    return _COMMENT_PARSER


def _found(body: str, text: str, start: int, end: int, code: bool = False) -> tuple[int, int] | None:
    """Where ``text`` (a token's content) is written in ``body[start:end]``: verbatim, or with
    the markers markdown took off its continuation lines (``> ``, an item's indent); a code
    span's (``code``) spaces may be the line feeds markdown turned into spaces."""
    at = body.find(text, start, end)
    if at >= 0:
        return at, at + len(text)
    gap = r"\n[ \t>]*"
    if code:
        pattern = f"(?: |{gap})".join(re.escape(part) for part in text.split(" "))
    elif "\n" in text:
        pattern = gap.join(re.escape(part) for part in text.split("\n"))
    else:
        return None
    match = re.compile(pattern).search(body, start, end)
    return (match.start(), match.end()) if match else None


def comment_ranges(body: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` character ranges of ``body`` that markdown reads as HTML comments
    (a comment block, or a comment among a paragraph's words), in order; a ``<!-- -->``
    inside a code span or a code block is code, not a comment."""
    if "<!--" not in body:
        return []
    starts = [0]
    for line in body.split("\n"):
        starts.append(starts[-1] + len(line) + 1)

    def offset(line: int) -> int:
        return starts[min(line, len(starts) - 1)]

    ranges: list[tuple[int, int]] = []
    for token in _comment_parser().parse(body):
        if token.map is None:
            continue
        start, end = offset(token.map[0]), min(offset(token.map[1]), len(body))
        if token.type == "html_block":
            ranges += [(start + m.start(), start + m.end()) for m in _COMMENT_IN_BLOCK.finditer(body[start:end])]
        elif token.type == "inline":
            cursor = start
            for child in token.children or []:
                # a code span matters only if it holds what could be read as a comment
                if child.type not in ("code_inline", "html_inline") or "<!--" not in child.content:
                    continue
                place = _found(body, child.content, cursor, end, code=child.type == "code_inline")
                if place is None:
                    continue
                cursor = place[1]  # past a code span too: a comment written inside it is its text
                if child.type == "html_inline" and child.content.startswith("<!--"):
                    ranges.append(place)
    return ranges


def without_comments(body: str, ranges: list[tuple[int, int]] | None = None) -> str:
    """``body`` with every HTML comment markdown sees (:func:`comment_ranges`, or ``ranges``
    when already found) cut out, its line feeds kept: the lines after it keep their numbers
    for every message."""
    out, last = [], 0
    for start, end in comment_ranges(body) if ranges is None else ranges:
        out += [body[last:start], "\n" * body.count("\n", start, end)]
        last = end
    return "".join(out) + body[last:] if out else body
