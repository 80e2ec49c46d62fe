"""Note body → HTML, with element ids, extraction highlights and resolved links.

Highlights are cut at every inline boundary (emphasis, link, code), so a passage
that crosses ``*emphasis*`` or a link still yields well-nested HTML; overlapping
extractions share one ``<mark>`` per segment listing all their ids.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from html import escape
from itertools import pairwise

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from generator.anchoring import Anchor, AnchoredNote, Document
from generator.corpus.model import Extraction, SiteSettings
from generator.markup import leaf_text, make_parser


@dataclass(frozen=True)
class Mark:
    """A highlighted range of one element's text, for one extraction."""

    start: int
    end: int
    extraction: str


@dataclass(frozen=True)
class Href:
    """A link as the page shows it: ``url`` is ``None`` for a broken or refused link."""

    url: str | None
    css_class: str = ""
    title: str = ""


@dataclass(frozen=True)
class CitationView:
    """A citation marker as the page shows it.

    Attributes:
        number: display number (``None`` for a broken citation).
        href: link to the passage (``None`` when there is none to land on).
        title: tooltip and accessible description.
        preview: data for the preview (quote, note, date, comments, debate).
        css_class: ``citation`` plus its state.
        after: HTML placed after the marker (the claim's contest link, after its group).
    """

    number: int | None
    href: str | None
    title: str
    preview: dict[str, str]
    css_class: str
    after: str = ""
    label: str = ""


@dataclass
class RenderState:
    """What rendering one body needs; passed through markdown-it's ``env``.

    Attributes:
        anchored: the note's parsed body and anchors.
        marks: element index → marks in that element.
        resolve: (raw target, is wikilink) → how to show the link.
        covered: indexes of the elements carrying a live extraction (margin stripe).
        citations: (inline token index, child index) of a citation marker → how to show it.
        after_inline: inline token index → HTML placed after its content (an unsourced
            claim's mark).
        holes: while a :class:`BodyTemplate` is made, each link met (``None``: rendering
            a page, links resolved).
        raw_html: whether the allowed raw tags (:data:`generator.markup.RAW_TAGS`) are
            written as tags (the site's ``outputs: raw_html``), else as the text they are.
        raw_open: the raw tags opened in the element being rendered, closed at its end.
    """

    anchored: AnchoredNote
    marks: dict[int, list[Mark]]
    resolve: Callable[[str, bool], Href]
    covered: frozenset[int] = frozenset()
    citations: dict[tuple[int, int], CitationView] = field(default_factory=dict)
    after_inline: dict[int, str] = field(default_factory=dict)
    inline_index: int = -1
    started: set[str] = field(default_factory=set)
    cursor: _Cursor | None = None
    closers: list[str] = field(default_factory=list)
    holes: list[Hole] | None = None
    raw_html: bool = True
    raw_open: list[str] = field(default_factory=list)
    raw_text: list[bool] = field(default_factory=list)


class HoleKind(Enum):
    OPEN = "open"  # a link's opening tag
    CLOSE = "close"  # its closing one
    IMAGE = "image"


@dataclass(frozen=True)
class Hole:
    """A link of a :class:`BodyTemplate`, as its page resolves it.

    Attributes:
        kind: what the page writes there (for ``CLOSE``, ``opening`` names the hole that
            opens it: ``</a>``, or ``</span>`` after a broken link).
        raw: the target as written (``open``, ``image``).
        wiki: whether it is a ``[[wikilink]]``.
        alt, title: an image's.
    """

    kind: HoleKind
    raw: str = ""
    wiki: bool = False
    opening: int = -1
    alt: str = ""
    title: str = ""


def _hole(state: RenderState, hole: Hole) -> tuple[str, int]:
    """The marker of ``hole`` in the template's HTML, and its index."""
    assert state.holes is not None
    state.holes.append(hole)
    return f"{_HOLE}{len(state.holes) - 1}{_HOLE}", len(state.holes) - 1


_HOLE = "\x00"
"""What marks a hole in a template's HTML: markdown-it reads U+0000 as U+FFFD (CommonMark),
so no rendered body holds one."""


@dataclass(frozen=True)
class BodyTemplate:
    """A note's body rendered by the worker process that parsed it, before the site is
    known: the HTML with a hole at each link, filled by the page's worker
    (:func:`fill_body`) without parsing the body a second time (a quarter of that
    worker's time). It holds for the marks and covered elements it was made with.

    Attributes:
        parts: the HTML between the holes, and each hole's index in ``holes`` between them
            (``[html, "0", html, "1", html]``).
        holes: the links, in reading order.
        marks, covered: as :class:`RenderState`'s, when it was made.
    """

    parts: tuple[str, ...]
    holes: tuple[Hole, ...]
    marks: dict[int, list[Mark]]
    covered: frozenset[int]
    raw_html: bool = True


def body_template(anchored: AnchoredNote, marks: dict[int, list[Mark]], covered: frozenset[int],
                  raw_html: bool = True) -> BodyTemplate:
    """The body of ``anchored`` (its tokens at hand), its links left as holes."""
    def unresolved(raw: str, wiki: bool) -> Href:
        raise AssertionError("a template resolves no link")

    state = RenderState(anchored, marks, unresolved, covered=covered, holes=[], raw_html=raw_html)
    html = render_body(state)
    return BodyTemplate(tuple(html.split(_HOLE)), tuple(state.holes or ()), marks, covered, raw_html)


def fill_body(template: BodyTemplate, state: RenderState) -> str:
    """What :func:`render_body` gives for ``state``, from ``template`` when it was made for
    its marks and covered elements (and the note has no citation), its links resolved by
    ``state``; else rendered."""
    if template.marks != state.marks or template.covered != state.covered or state.citations \
            or template.raw_html != state.raw_html \
            or state.after_inline or len(template.parts) != 2 * len(template.holes) + 1:
        return render_body(state)
    out = []
    resolved: dict[int, Href] = {}
    for index, part in enumerate(template.parts):
        if not index % 2:
            out.append(part)
            continue
        number = int(part)
        hole = template.holes[number]
        if hole.kind is HoleKind.OPEN:
            resolved[number] = href = state.resolve(hole.raw, hole.wiki)
            out.append(_anchor(href, None))
        elif hole.kind is HoleKind.CLOSE:
            out.append("</span>" if resolved[hole.opening].url is None else "</a>")
        else:
            out.append(_image(state.resolve(hole.raw, False), hole.alt, hole.title))
    return "".join(out)


def note_marks(extractions: Iterable[Extraction], anchors: Mapping[str, Anchor]) -> dict[int, list[Mark]]:
    """Element index → the marks of the live ``extractions`` (a page's: masked ones are not
    published) in it, in the extractions' order."""
    marks: dict[int, list[Mark]] = {}
    for extraction in extractions:
        anchor = anchors[extraction.id]
        for portion in anchor.portions if anchor.status.is_live else ():
            marks.setdefault(portion.element, []).append(Mark(portion.start, portion.end, extraction.id))
    return marks


class _Cursor:
    """Walks one element's text while inline tokens are rendered, wrapping marked ranges.

    The element's marks are swept once into segments (between consecutive mark edges,
    each with the ids covering it), so wrapping a piece of text costs its own segments
    only: ten thousand marks on one line render in linear time, not quadratic."""

    def __init__(self, marks: Sequence[Mark], offset: int, started: set[str]) -> None:
        self.marks = marks
        self.offset = offset
        self.started = started
        self.starting: dict[int, list[str]] = {}  # position → extractions starting there, in mark order
        events: dict[int, list[tuple[int, str]]] = {}
        for mark in marks:
            self.starting.setdefault(mark.start, []).append(mark.extraction)
            if mark.start < mark.end:
                events.setdefault(mark.start, []).append((1, mark.extraction))
                events.setdefault(mark.end, []).append((-1, mark.extraction))
        self.edges = sorted(events)
        self.covering: list[tuple[str, ...]] = []  # ids over [edges[i], edges[i + 1])
        active: dict[str, int] = {}
        for edge in self.edges:
            for change, extraction in events[edge]:
                active[extraction] = active.get(extraction, 0) + change
                if not active[extraction]:
                    del active[extraction]
            self.covering.append(tuple(sorted(active)))

    def wrap(self, text: str, shown: str | None = None) -> str:
        start, end = self.offset, self.offset + len(text)
        self.offset = end
        shown = text if shown is None else shown
        if not self.marks or start == end:
            return escape(shown, quote=False)
        first, last = bisect_right(self.edges, start), bisect_left(self.edges, end)
        points = [start, *self.edges[first:last], end]
        out = []
        for number, (a, b) in enumerate(pairwise(points)):
            segment = first - 1 + number  # the segment that a (an edge, or the start) opens
            ids = self.covering[segment] if segment >= 0 else ()
            for extraction in self.starting.get(a, ()):
                if extraction not in self.started:
                    self.started.add(extraction)
                    out.append(f'<span class="ext-anchor" id="ext-{escape(extraction)}"></span>')
            piece = escape(shown[a - start:b - start], quote=False)
            if ids:
                overlap = " overlap" if len(ids) > 1 else ""
                out.append(f'<mark class="extraction{overlap}" data-ext="{escape(" ".join(ids))}">'
                           f"{piece}</mark>")
            else:
                out.append(piece)
        return "".join(out)


_ADJACENT_MARKS = re.compile(
    r'(<mark class="([^"]*)" data-ext="([^"]*)">)([^<]*)</mark><mark class="\2" data-ext="\3">')


def _merge_adjacent_marks(html: str) -> str:
    """One ``<mark>`` where a passage runs over a line break, instead of three."""
    while True:
        merged = _ADJACENT_MARKS.sub(r"\1\4", html)
        if merged == html:
            return html
        html = merged


def _cursor(env: EnvType) -> _Cursor | None:
    state: RenderState = env["carnet"]
    return state.cursor


class _NoteRenderer(RendererHTML):
    def render(self, tokens: Sequence[Token], options: OptionsDict, env: EnvType) -> str:
        state: RenderState = env["carnet"]
        doc = state.anchored.document
        out = []
        for index, token in enumerate(tokens):
            element_id = doc.id_at.get(index)
            if element_id is not None:
                token.attrSet("id", element_id)
                element_index = doc.index_of(element_id)
                element = doc.elements[element_index]
                classes = "element" + (" turn" if element.kind == "turn" else "") + \
                    (" covered" if element_index in state.covered else "")
                token.attrSet("class", classes)
                if element.kind == "turn":
                    token.attrSet("data-time", str(element.time))
            if token.type == "inline":
                located = doc.inline_at.get(index)
                if located is None:
                    state.cursor = _Cursor((), 0, state.started)
                else:
                    inline_element, base = located
                    state.cursor = _Cursor(state.marks.get(inline_element, ()), base, state.started)
                    heading_id = doc.heading_ids.get(inline_element)
                    if heading_id and base == 0:
                        out.append(f'<span class="heading-anchor" id="{heading_id}"></span>')
                state.inline_index = index
                out.append(_merge_adjacent_marks(self.renderInline(token.children or [], options, env)))
                # a raw tag left open closes with its element: nothing it holds spills into the next
                out += [f"</{tag}>" for tag in reversed(state.raw_open)]
                state.raw_open.clear()
                out.append(state.after_inline.get(index, ""))
                state.cursor = None
            elif token.type in ("fence", "code_block"):
                out.append(self._code(token, doc.block_at.get(index), doc, state))
            elif "raw" in token.meta and not state.raw_html:
                out.append(self._raw_block_as_text(token, element_id is not None or token.tag == "tr", state))
            elif token.type in self.rules:
                out.append(self.rules[token.type](tokens, index, options, env))
            else:
                out.append(self.renderToken(tokens, index, options, env))
        return "".join(out)

    def _raw_block_as_text(self, token: Token, holds: bool, state: RenderState) -> str:
        """A raw block tag when ``outputs: raw_html`` is false: the text it is, in the
        paragraph of the element it holds (``holds``) or in one of its own."""
        written = escape(str(token.meta["raw"]), quote=False)
        inside = any(state.raw_text)
        if token.nesting == 1:
            state.raw_text.append(holds and not inside)
            if holds and not inside:
                return f"<p{self.renderAttrs(token)}>{written}"
            return written if inside else f"<p>{written}</p>\n"
        opened = state.raw_text.pop() if state.raw_text else False
        if opened:
            return f"{written}</p>\n"
        return written if inside or not written else f"<p>{written}</p>\n"

    def _code(self, token: Token, element: int | None, doc: Document, state: RenderState) -> str:
        text = token.content.rstrip("\n")
        cursor = _Cursor(state.marks.get(element, ()) if element is not None else (), 0, state.started)
        element_id = doc.elements[element].id if element is not None else ""
        language = token.info.strip().split()[0] if token.info.strip() else ""
        lang_attr = f' class="language-{escape(language)}"' if language else ""
        covered = " covered" if element in state.covered else ""
        id_attr = f' id="{element_id}" class="element{covered}"' if element_id else ""
        return f"<pre{id_attr}><code{lang_attr}>{cursor.wrap(text)}\n</code></pre>\n"

    def text(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        cursor = _cursor(env)
        content = tokens[idx].content
        return cursor.wrap(content) if cursor else escape(content, quote=False)

    def code_inline(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        cursor = _cursor(env)
        content = tokens[idx].content
        inner = cursor.wrap(content) if cursor else escape(content, quote=False)
        return f"<code>{inner}</code>"

    def softbreak(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        cursor = _cursor(env)
        return cursor.wrap(leaf_text(tokens[idx]), "\n") if cursor else "\n"

    def hardbreak(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        cursor = _cursor(env)
        if cursor:
            cursor.wrap(leaf_text(tokens[idx]), "")
        return "<br>\n"

    def html_inline(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        state: RenderState = env["carnet"]
        token = tokens[idx]
        cursor = state.cursor
        text = leaf_text(token)
        if cursor:
            cursor.wrap(text, "")  # a line break's offset: the tag itself is written below, never marked
        tag = token.meta["tag"]
        if not state.raw_html:
            return escape(token.content, quote=False)
        if token.meta["closing"]:
            if tag not in state.raw_open:  # closes nothing opened: the text it is
                return escape(token.content, quote=False)
            closed = []
            while state.raw_open:
                opened = state.raw_open.pop()
                closed.append(f"</{opened}>")
                if opened == tag:
                    break
            return "".join(closed)
        return _raw_opening(token.content, tag, state)

    def wikilink(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        state: RenderState = env["carnet"]
        token = tokens[idx]
        citation = state.citations.get((state.inline_index, idx))
        if citation is not None:
            label = state.cursor.wrap(leaf_text(token)) if state.cursor else escape(leaf_text(token))
            return label + _citation(citation)
        # the offsets advance by what the element's text holds (nothing, for an unlabelled
        # [[ext:…]] outside an article), whatever the link shows
        text = leaf_text(token)
        shown = None if text == token.content else token.content
        inner = state.cursor.wrap(text, shown) if state.cursor else escape(token.content, quote=False)
        if state.holes is not None:
            opening, index = _hole(state, Hole(HoleKind.OPEN, token.meta["target"], True))
            return opening + inner + _hole(state, Hole(HoleKind.CLOSE, opening=index))[0]
        return _anchor(state.resolve(token.meta["target"], True), inner)

    def link_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        state: RenderState = env["carnet"]
        raw = str(tokens[idx].attrGet("href") or "")
        if state.holes is not None:
            opening, index = _hole(state, Hole(HoleKind.OPEN, raw))
            state.closers.append(_hole(state, Hole(HoleKind.CLOSE, opening=index))[0])
            return opening
        href = state.resolve(raw, False)
        if href.url is None:
            state.closers.append("</span>")
            return f'<span class="broken-link" title="{escape(href.title)}">'
        state.closers.append("</a>")
        return _anchor(href, None)

    def link_close(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        state: RenderState = env["carnet"]
        return state.closers.pop() if state.closers else "</a>"

    def image(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        state: RenderState = env["carnet"]
        token = tokens[idx]
        alt = "".join(leaf_text(child) for child in token.children or [])
        raw, title = str(token.attrGet("src") or ""), str(token.attrGet("title") or "")
        if state.holes is not None:
            return _hole(state, Hole(HoleKind.IMAGE, raw, alt=alt, title=title))[0]
        return _image(state.resolve(raw, False), alt, title)


def raw_html_on(settings: SiteSettings) -> bool:
    """Whether the site writes the allowed raw tags as HTML (``outputs: raw_html``, on unless
    set false; checked when the settings are read)."""
    outputs = settings.extra.get("outputs")
    return not isinstance(outputs, dict) or outputs.get("raw_html", True) is not False


_VOID = frozenset({"br"})


def _raw_opening(written: str, tag: str, state: RenderState) -> str:
    """An allowed raw tag as the sanitiser (nh3, html5ever's parser) writes it: only the tag
    and an ``<a>``'s ``name``/``id`` survive, whatever else was written."""
    clean = nh3.clean(written, tags={tag}, attributes={"a": {"name", "id"}}, link_rel=None,
                      strip_comments=True, url_schemes=set())
    opening = clean[:clean.find(">") + 1] if clean.startswith(f"<{tag}") else ""
    if opening and tag not in _VOID:
        state.raw_open.append(tag)
    return opening


def _image(href: Href, alt: str, title: str) -> str:
    if href.url is None:
        return f'<span class="broken-link" title="{escape(href.title)}">[{escape(alt, quote=False)}]</span>'
    title_attr = f' title="{escape(title)}"' if title else ""
    return f'<img src="{escape(href.url)}" alt="{escape(alt)}"{title_attr} loading="lazy">'


def _citation(view: CitationView) -> str:
    shown = f"[{view.number}]" if view.number is not None else f"[{escape(view.label) or '?'}]"
    data = "".join(f' data-preview-{key}="{escape(value)}"' for key, value in sorted(view.preview.items()))
    if view.href is None:
        body = f'<span class="{escape(view.css_class)}" title="{escape(view.title)}"{data}>{shown}</span>'
    else:
        body = (f'<a class="{escape(view.css_class)}" href="{escape(view.href)}" title="{escape(view.title)}"'
                f'{data}>{shown}</a>')
    # search excerpts leave out the UI around a claim: its numbers and its contest link
    return f'{CITE_OPEN}{body}</sup>{view.after}'


def _anchor(href: Href, inner: str | None) -> str:
    if href.url is None:
        opening = f'<span class="broken-link" title="{escape(href.title)}">'
        return opening if inner is None else f"{opening}{inner}</span>"
    attrs = f' href="{escape(href.url)}"'
    if href.css_class:
        attrs += f' class="{escape(href.css_class)}"'
    if href.title:
        attrs += f' title="{escape(href.title)}"'
    opening = f"<a{attrs}>"
    return opening if inner is None else f"{opening}{inner}</a>"


@cache
def _parser() -> MarkdownIt:
    return make_parser()


@cache
def _renderer() -> _NoteRenderer:
    # one for the process: making one lists its rules by introspection (as long as rendering
    # a short note), and rendering keeps its state in ``env``, not in the renderer
    return _NoteRenderer(_parser())


CITE_OPEN = '<sup class="cite" data-pagefind-ignore>'
"""A citation's number, left out of search excerpts with the UI around a claim."""


def render_body(state: RenderState) -> str:
    """Render a note body whose tokens were produced by :func:`generator.markup.parse`."""
    # a citation's number hugs the word it follows: the parser gave the blank before it to the
    # mark (markup._marker_spacing), so none is left in the element's text or the search index
    return _renderer().render(state.anchored.document.tokens, _parser().options, {"carnet": state})
