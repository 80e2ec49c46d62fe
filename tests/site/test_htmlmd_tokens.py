"""The mirrors' one-expression HTML reader against the standard library's parser: where
it reads a fragment, it gives the walker exactly the events ``HTMLParser`` gives; where
it does not, the fragment goes to ``HTMLParser`` whole — so a mirror is the same bytes
either way, on every page the example site has and on generated hostile fragments."""

from __future__ import annotations

import functools
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.site import htmlmd
from generator.site.htmlmd import H1, MAIN, _Unread, _Walker, absolute_href, html_markdown, read_events

Event = tuple[str, str, tuple[tuple[str, str | None], ...] | None]


class _Recorder:
    """Records the events it is given, a text run whole (the parser may cut one in two)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def handle_data(self, data: str) -> None:
        if self.events and self.events[-1][0] == "data":
            self.events[-1] = ("data", self.events[-1][1] + data, None)
        else:
            self.events.append(("data", data, None))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.events.append(("start", tag, tuple(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.events.append(("startend", tag, tuple(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.events.append(("end", tag, None))


class _Parsed(_Recorder, HTMLParser):
    def __init__(self) -> None:
        _Recorder.__init__(self)
        HTMLParser.__init__(self, convert_charrefs=True)


def _parser_events(fragment: str) -> list[Event]:
    parser = _Parsed()
    parser.feed(fragment)
    parser.close()
    return parser.events


def _read(fragment: str) -> list[Event] | None:
    """The reader's events, ``None`` where it leaves the fragment to the parser."""
    recorder = _Recorder()
    try:
        read_events(fragment, recorder)
    except _Unread:
        return None
    return recorder.events


def _parser_markdown(fragment: str, page: str) -> tuple[list[str], list[htmlmd.Citation]]:
    """The mirror's Markdown as the standard library's parser alone reads it."""
    walker = _Walker(functools.partial(absolute_href, "https://ex.org/", page))
    walker.feed(fragment)
    return walker.finish(), walker.citations


READ = [
    "",
    "texte seul &amp; une entité &eacute; &#233; &#xe9; &nbsp &unknown; & fin &",
    '<ul class="note-list"><li><a href="../notes/a.html">Titre &amp; co</a> <time datetime="2026-01-02">2 janv.</time>'
    "<p>Résumé</p></li></ul>",
    '<figure class="graph" id="graph" data-graph><svg viewBox="0 0 10 10" role="img"><title>t</title>'
    '<circle cx="1" cy="2" r="3"/><line x1="0" y1="0" x2="1" y2="1" /><text x="1">étiquette</text></svg></figure>',
    "<DIV CLASS='Upper' Data-X='a&quot;b'>x</DIV >",
    '<a title="un > deux" href="x.html?a=1&amp;b=2">lien</a>',
    '<input type="checkbox" checked disabled><br><br/><hr /><img src="i.png" alt="">',
    '<p\n  class="multi"\n  id="ligne">texte\nsur deux lignes</p>',
    '<span data-empty="" data-bare class="x  y">a</span>',
    "<p>non fermé <em>encore",
    "</p>fin d'un élément jamais ouvert",
    '<pre><code class="language-python">if a &lt; b:\n    pass\n</code></pre>',
    "<h1>Un</h1><h2>deux</h2><my-element>perso</my-element>",
]

LEFT = [
    "<!-- un commentaire --><p>x</p>",
    "<script>if (a < b) {}</script><p>x</p>",
    "<style>p > a {}</style>",
    "a < b et c > d",
    "<!DOCTYPE html><p>x</p>",
    "<p class=nu>valeur sans guillemets</p>",
    '<a href="x">ok</a x>',
    "<p/ >",
    '<a title="a<b">x</a>',
    "<p>fin sur un <",
    "<?php echo 1; ?>",
    '<a href="x"title="collé">x</a>',
    "<p\u00a0class='x'>espace insécable</p>",
]


@pytest.mark.parametrize("fragment", READ)
def test_the_reader_gives_the_parsers_events(fragment: str) -> None:
    assert _read(fragment) == _parser_events(fragment)


@pytest.mark.parametrize("fragment", LEFT)
def test_what_the_reader_does_not_know_goes_to_the_parser_and_reads_the_same(fragment: str) -> None:
    assert _read(fragment) is None
    assert html_markdown(fragment, functools.partial(absolute_href, "https://ex.org/", "notes/x.html")) == \
        _parser_markdown(fragment, "notes/x.html")


def test_every_page_of_the_example_site_is_read_as_the_parser_reads_it(example_site: Path) -> None:
    pages = sorted(example_site.rglob("*.html"))
    assert len(pages) > 50
    read = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        main = MAIN.search(text)
        if main is None:
            continue
        fragment = H1.sub("", main.group(1), count=1)
        path = page.relative_to(example_site).as_posix()
        events = _read(fragment)
        if events is not None:
            read += 1
            assert events == _parser_events(fragment), path
        absolute = functools.partial(absolute_href, "https://ex.org/", path)
        assert html_markdown(fragment, absolute) == _parser_markdown(fragment, path), path
    # the point of the reader: our own pages are what it reads, none left to the slower parser
    assert read == len([p for p in pages if MAIN.search(p.read_text(encoding="utf-8"))])


_TAGS = st.sampled_from(["p", "a", "li", "ul", "ol", "em", "strong", "code", "pre", "div", "span", "table", "tr",
                         "td", "th", "br", "img", "hr", "svg", "title", "script", "style", "blockquote", "sup",
                         "h2", "nav", "A", "Li", "x-y"])
_NAMES = st.sampled_from(["class", "href", "id", "alt", "src", "data-graph", "hidden", "title", "CLASS", "x:y"])
_VALUES = st.text(alphabet="aé &;#<>\"'=/\n x1", max_size=12)
_TEXT = st.text(alphabet="ab é&;#<>/!-\n amp lt x", max_size=16)
_SPACES = st.sampled_from([" ", "  ", "\n", "\t", "", "\u00a0"])


@st.composite
def _tags(draw: st.DrawFn) -> str:
    name = draw(_TAGS)
    if draw(st.booleans()):
        return f"</{name}{draw(_SPACES)}>"
    attributes = ""
    for _ in range(draw(st.integers(0, 3))):
        quote = draw(st.sampled_from(['"', "'", "", None]))
        value = "" if quote is None else f"={quote}{draw(_VALUES)}{quote}"
        attributes += f"{draw(_SPACES)}{draw(_NAMES)}{value}"
    return f"<{name}{attributes}{draw(_SPACES)}{draw(st.sampled_from(['', '/']))}>"


_FRAGMENTS = st.lists(st.one_of(_tags(), _TEXT, st.sampled_from(["<!-- c -->", "<", "&amp;", "&#60;", "&"])),
                      max_size=14).map("".join)


@given(_FRAGMENTS)
def test_on_any_fragment_the_mirror_is_the_parsers_and_a_read_fragment_its_events(fragment: str) -> None:
    events = _read(fragment)
    if events is not None:
        assert events == _parser_events(fragment)
    absolute = functools.partial(absolute_href, "https://ex.org/", "notebooks/x.html")
    assert html_markdown(fragment, absolute) == _parser_markdown(fragment, "notebooks/x.html")
