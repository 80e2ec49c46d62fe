"""Section operations on a wiki article (INV-9): a pure applier.

Sections are the lead (before the first H2; named by the empty heading) and each
top-level H2 up to the next. Both the headings and the content of an operation are read
with the build's own parser (:func:`generator.markup.parse`), never line by line, so a
``##`` inside a code fence is no heading and an indented or setext one is. Operations are
applied one after the other; each is accepted or rejected on its own, visibly, with its
content kept in the result. Untouched sections stay byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markdown_it.token import Token

from generator.corpus.proposal import Op, Operation
from generator.kinds import WikiKind
from generator.markup import MAX_NESTING, parse, parse_checked, parse_wiki_target

# In an article, what follows an operation's content is the next heading line.
_SENTINEL = "carnet-end-of-content"
_CONTAINERS = {"blockquote_open": "a blockquote", "list_item_open": "a list item"}


@dataclass(frozen=True)
class OperationResult:
    """The applier's verdict on one operation.

    Attributes:
        accepted: whether it changed (or, for NoChange, left) the article.
        reason: why it was rejected ("" when accepted), in English.
        code, values: the same reason for a page to word it (see :class:`Reason`).
        removed: for an accepted ReplaceSection, the text it removed.
        sources: the markers the content cites ((kind, id), in order).
    """

    index: int
    operation: Operation
    accepted: bool
    reason: str = ""
    removed: str = ""
    sources: tuple[tuple[str, str], ...] = ()
    code: str = ""
    values: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Reason:
    """Why an operation is refused: ``text`` in English for the terminal and the
    proposal's record, ``code`` and ``values`` for a page to say it in the site's
    language (the theme's ``rejection_<code>`` string, filled with ``values``)."""

    code: str
    text: str
    values: tuple[tuple[str, str], ...] = ()


REJECTION_CODES: frozenset[str] = frozenset({
    "no-sources", "source-in-article", "outside-perimeter", "carriage-return", "front-matter",
    "too-deep", "heading-in-content", "fence-open", "block-open", "block-open-somewhere", "indented-start",
    "heading-line-break", "heading-reads-otherwise", "changes-sections", "runs-into-next", "heading-not-found",
    "heading-ambiguous", "after-heading-not-found", "after-heading-ambiguous", "no-heading", "heading-exists",
})
"""Every :class:`Reason` code: each has a ``rejection_<code>`` string (``-`` as ``_``) in
every language of the theme."""


def _reason(code: str, text: str, **values: object) -> Reason:
    assert code in REJECTION_CODES, code
    return Reason(code, text, tuple(sorted((key, str(value)) for key, value in values.items())))


@dataclass(frozen=True)
class Section:
    """``heading`` is ``None`` for the lead; ``start``/``end`` are line indexes [start, end);
    ``content_start`` is the first line after the heading (two lines for a setext one)."""

    heading: str | None
    start: int
    end: int
    content_start: int


@dataclass(frozen=True)
class Sources:
    """What citations may name: the perimeter's extraction and comment ids, and the ids
    of extractions or comments held by wikis or syntheses (never a source, INV-3)."""

    perimeter: frozenset[str]
    articles: frozenset[str] = field(default_factory=frozenset)


def _h2_headings(body: str) -> list[tuple[int, int, str]]:
    """(first line, line after it, text) of each top-level H2 the build renders.

    One inside a blockquote or a list is left out: a section cannot be cut out of its container.
    """
    tokens = parse(body)
    return [(token.map[0], token.map[1], tokens[index + 1].content.strip())
            for index, token in enumerate(tokens)
            if token.type == "heading_open" and token.tag == "h2" and token.level == 0 and token.map]


def sections(body: str) -> list[Section]:
    lines = body.split("\n")
    h2 = _h2_headings(body)
    result = [Section(None, 0, h2[0][0] if h2 else len(lines), 0)]
    for number, (start, after, text) in enumerate(h2):
        end = h2[number + 1][0] if number + 1 < len(h2) else len(lines)
        result.append(Section(text, start, end, after))
    return result


def markers(content: str) -> tuple[tuple[str, str], ...]:
    """The citation markers of ``content`` as the build reads them ((kind, id), in order):
    read with its parser, so one inside code or escaped (``\\[[ext:…]]``) is no source."""
    found: list[tuple[str, str]] = []
    for token in parse(content):
        for child in token.children or ():
            if child.type == "wikilink":
                target = parse_wiki_target(child.meta["target"])
                if target.kind in (WikiKind.EXT, WikiKind.COM):
                    found.append((target.kind, target.key))
    return tuple(found)


def _front_matter(lines: list[str], first: int) -> int | None:
    """The line closing a front-matter block opened on line ``first``, as notes are split."""
    if lines[first].strip() != "---":
        return None
    return next((i for i in range(first + 1, len(lines)) if lines[i].strip() in ("---", "...")), None)


def _describe_heading(token: Token, container: str) -> str:
    level = token.tag[1:]
    if token.markup.startswith("#"):
        where = f"level {level}, {token.markup!r}, on line {token.map[0] + 1}" if token.map else f"level {level}"
    else:  # setext: a paragraph underlined with === or ---
        lines = f", on lines {token.map[0] + 1} to {token.map[1]}" if token.map else ""
        where = f"level {level}, underlined with {token.markup!r}{lines}"
    return where + (f", inside {container}" if container else "")


def _left_open(tokens: list[Token], sentinel_line: int) -> Reason:
    """Name the top-level block that runs past the content's last line."""
    for token in tokens:
        if token.level == 0 and token.map and token.map[0] < sentinel_line < token.map[1]:
            line = token.map[0] + 1
            if token.type == "fence":
                return _reason("fence-open", f"the content's code fence {token.markup!r} opened on line {line} is "
                               "never closed: every section after it would become code", fence=token.markup, line=line)
            kind = token.type.removesuffix("_open").replace("_", " ")
            return _reason("block-open", f"the content leaves a {kind} opened on line {line} open: it would swallow "
                           "the next heading", line=line)
    return _reason("block-open-somewhere", "the content leaves a block open: it would swallow the next heading")


def _structure_problem(content: str) -> Reason | None:
    """Why ``content`` would change the article's structure once in place, or ``None``."""
    if "\r" in content:  # the parser reads it as a line end, the section splitter does not
        return _reason("carriage-return", "the content holds a carriage return: lines end with \\n only")
    lines = content.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None
    close = _front_matter(lines, first)
    if close is not None:
        return _reason("front-matter", f"the content starts with a front-matter block ('---' on lines {first + 1} to "
                       f"{close + 1}): an article's fields are not section content", first=first + 1, last=close + 1)
    # The content is parsed followed by what follows it in an article, a heading line:
    # if that heading does not come out as a top-level heading, something the content
    # left open swallows it (a fence never closed, or any other block) and would swallow
    # every later section too. This asks the parser itself, rather than re-implementing
    # the closing rules of fences (marker, length, info string, indentation) by hand.
    sentinel_line = len(content.rstrip("\n").split("\n"))
    tokens, too_deep = parse_checked(content.rstrip("\n") + "\n## " + _SENTINEL)
    if too_deep:  # the article would then fail to build: refused here, before it is written in
        return _reason("too-deep", f"the content nests lists or quotes {MAX_NESTING} levels deep from its line "
                       f"{too_deep[0][0] + 1}: the parser reads no deeper and what follows would be lost; flatten it",
                       levels=MAX_NESTING, line=too_deep[0][0] + 1)
    open_blocks: list[str] = []
    for token in tokens:
        if token.nesting == -1 and open_blocks:
            open_blocks.pop()
        if token.type == "heading_open" and token.map and token.map[0] < sentinel_line:
            container = next((_CONTAINERS[kind] for kind in reversed(open_blocks) if kind in _CONTAINERS), "")
            return _reason("heading-in-content", f"the content holds a heading ({_describe_heading(token, container)}): "
                           "only InsertSection creates a section", line=token.map[0] + 1)
        if token.nesting == 1:
            open_blocks.append(token.type)
    ends_open = not (len(tokens) >= 3 and tokens[-3].type == "heading_open" and tokens[-3].level == 0
                     and tokens[-2].content == _SENTINEL)
    if ends_open:
        return _left_open(tokens, sentinel_line)
    if lines[first][:1] in (" ", "\t"):
        # after a list, an indented line continues its last item: "    ## x" would become its heading
        return _reason("indented-start", f"the content's first line is indented (line {first + 1}): it would continue "
                       "the block before it (after a list, its last item); start the content at the margin", line=first + 1)
    return None


def _check_content(content: str, sources: Sources) -> tuple[Reason | None, tuple[tuple[str, str], ...]]:
    cited = markers(content)
    problem = _structure_problem(content)
    if problem:
        return problem, cited
    if not cited:
        return _reason("no-sources", "no sources: the content cites no [[ext:…]] or [[com:…]]"), cited
    for kind, key in cited:
        if key in sources.articles:
            return _reason("source-in-article", f"[[{kind}:{key}]] points into a wiki or synthesis, which is never a "
                           "source", marker=f"[[{kind}:{key}]]"), cited
        if key not in sources.perimeter:
            return _reason("outside-perimeter", f"[[{kind}:{key}]] is outside the article's perimeter",
                           marker=f"[[{kind}:{key}]]"), cited
    return None, cited


def _heading_problem(heading: str) -> Reason | None:
    """Why the new section's heading, written ``## heading``, would not read as given, or ``None``:
    the section could then never be named again by the text it was created with."""
    text = heading.strip()
    if "\n" in text or "\r" in text:
        return _reason("heading-line-break", f"the heading {heading!r} holds a line break: a heading is one line",
                       heading=" ".join(text.split()))
    tokens = parse(f"## {text}")
    rendered = tokens[1].content.strip() if len(tokens) == 3 else None
    if rendered != text:
        return _reason("heading-reads-otherwise", f"the heading {heading!r} would read {rendered!r} once written "
                       f"'## {text}'; name it as it reads", heading=text, rendered=rendered or "")
    return None


def _block(content: str) -> list[str]:
    return content.strip("\n").split("\n")


def _separated(block: list[str], tail: list[str]) -> list[str]:
    # a line right after the content would continue its last paragraph (a setext heading's text would)
    return block + ([""] if tail and tail[0].strip() else []) + tail


def _merged_reason(following: str | None) -> Reason:
    if following is None:
        return _reason("changes-sections", "once in place, the content would change the article's sections")
    return _reason("runs-into-next", f"once in place, the content would run into the next heading {following!r}, "
                   "which would no longer start a section (end the content with a paragraph)", heading=following)


def apply_operations(body: str, operations: list[Operation], sources: Sources) -> tuple[str, list[OperationResult]]:
    """Apply ``operations`` in order; return the new body and one result per operation."""
    results: list[OperationResult] = []
    for index, operation in enumerate(operations):
        body, result = _apply_one(body, index, operation, sources)
        results.append(result)
    return body, results


def _apply_one(body: str, index: int, operation: Operation, sources: Sources) -> tuple[str, OperationResult]:
    def reject(reason: Reason, cited: tuple[tuple[str, str], ...] = ()) -> tuple[str, OperationResult]:
        return body, OperationResult(index, operation, False, reason.text, sources=cited, code=reason.code,
                                     values=reason.values)

    if operation.op is Op.NO_CHANGE:
        return body, OperationResult(index, operation, True)
    problem, cited = _check_content(operation.content, sources)
    if problem:
        return reject(problem, cited)
    lines = body.split("\n")
    current = sections(body)
    by_heading: dict[str, list[Section]] = {}
    for existing in current:
        if existing.heading is not None:
            by_heading.setdefault(existing.heading, []).append(existing)

    def find(heading: str, what: str, fallback: str = "") -> tuple[Section | None, Reason | None]:
        if not heading.strip():  # the empty heading names the lead (the text before the first H2)
            return current[0], None
        matches = by_heading.get(heading.strip(), [])
        code = what.replace("_", "-")
        if not matches:
            return None, _reason(f"{code}-not-found", f"{what} {heading!r} not found{fallback}", heading=heading.strip())
        if len(matches) > 1:
            return None, _reason(f"{code}-ambiguous", f"{what} {heading!r} is ambiguous: {len(matches)} sections bear "
                                 f"it{fallback}", heading=heading.strip(), count=len(matches))
        return matches[0], None

    def accept(new: list[str], after: Section, inserted: str | None = None, removed: str = "") -> tuple[
            str, OperationResult]:
        # The content was judged alone; in place, what follows it (an indented or setext
        # heading after a list, say) can still merge into it. The sections must come out
        # as expected, or the operation is refused.
        position = next(i for i, existing in enumerate(current) if existing is after)
        expected = [existing.heading for existing in current]
        if inserted is not None:
            expected.insert(position + 1, inserted)
        new_body = "\n".join(new)
        if [existing.heading for existing in sections(new_body)] != expected:
            following = current[position + 1].heading if position + 1 < len(current) else None
            return reject(_merged_reason(following), cited)
        return new_body, OperationResult(index, operation, True, removed=removed, sources=cited)

    if operation.op in (Op.APPEND, Op.REPLACE):
        section, problem = find(operation.heading, "heading")
        if section is None:
            assert problem is not None
            return reject(problem, cited)
        content_start = section.content_start
        end = section.end
        while end > content_start and not lines[end - 1].strip():
            end -= 1  # keep the blank lines that separate it from the next section
        if operation.op is Op.APPEND:
            return accept(lines[:end] + [""] + _separated(_block(operation.content), lines[end:]), section)
        removed = "\n".join(lines[content_start:end]).strip("\n")
        lead = [] if section.heading is None else [""]
        new = lines[:content_start] + lead + _separated(_block(operation.content), lines[end:])
        return accept(new, section, removed=removed)

    # InsertSection: a new H2 right after an existing section
    if not operation.heading.strip():
        return reject(_reason("no-heading", "no heading given for the new section"), cited)
    problem = _heading_problem(operation.heading)
    if problem:
        return reject(problem, cited)
    if operation.heading.strip() in by_heading:
        return reject(_reason("heading-exists", f"a section {operation.heading!r} already exists: insertion under an "
                              "existing heading would make headings ambiguous (use AppendToSection or ReplaceSection)",
                              heading=operation.heading.strip()), cited)
    anchor, problem = find(operation.after_heading, "after_heading", " (no fallback to the end)")
    if anchor is None:
        assert problem is not None
        return reject(problem, cited)
    end = anchor.end
    while end > anchor.content_start and not lines[end - 1].strip():
        end -= 1
    new = lines[:end] + ["", f"## {operation.heading.strip()}", ""] + _separated(_block(operation.content), lines[end:])
    return accept(new, anchor, inserted=operation.heading.strip())
