"""The markdown dialect of notes: CommonMark + tables + strikethrough + ``[[wikilinks]]``,
raw HTML off, URL schemes on an allowlist.

Pure: one parser per call to :func:`make_parser`; no rendering here (see
``generator/site/markdown_html.py``) so that anchoring and link checks read the
same tokens the renderer writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
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


def make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False,
                                   "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"])
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
    # One parser for the process: building one costs as much as parsing a short note,
    # and parsing keeps no state between calls (each call gets fresh env and tokens).
    global _PARSER
    if _PARSER is None:
        _PARSER = make_parser()
    env: dict[str, list[tuple[int, int]]] = {}
    tokens = _PARSER.parse(body, env)
    return tokens, env.get(_TOO_DEEP, [])


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
