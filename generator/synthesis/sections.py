"""Section operations on a wiki article (INV-9): a pure applier.

Sections are the lead (before the first H2; named by the empty heading) and each H2
up to the next; a ``##`` line inside a code fence is not a heading. Operations are applied one after the
other; each is accepted or rejected on its own, visibly, with its content kept in
the result. Untouched sections stay byte-identical.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

OPERATIONS = ("NoChange", "AppendToSection", "ReplaceSection", "InsertSection")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
_MARKER = re.compile(r"\[\[(ext|com):([^\]|]+)(?:\|[^\]]*)?\]\]")


@dataclass(frozen=True)
class Operation:
    """One proposed change. Fields an operation does not use are empty strings."""

    op: str
    heading: str = ""
    after_heading: str = ""
    content: str = ""


@dataclass(frozen=True)
class OperationResult:
    """The applier's verdict on one operation.

    Attributes:
        accepted: whether it changed (or, for NoChange, left) the article.
        reason: why it was rejected ("" when accepted).
        removed: for an accepted ReplaceSection, the text it removed.
        sources: the markers the content cites ((kind, id), in order).
    """

    index: int
    operation: Operation
    accepted: bool
    reason: str = ""
    removed: str = ""
    sources: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Section:
    """``heading`` is ``None`` for the lead; ``start``/``end`` are line indexes [start, end)."""

    heading: str | None
    start: int
    end: int


@dataclass(frozen=True)
class Sources:
    """What citations may name: the perimeter's extraction and comment ids, and the ids
    of extractions or comments held by wikis or syntheses (never a source, INV-3)."""

    perimeter: frozenset[str]
    articles: frozenset[str] = field(default_factory=frozenset)


def heading_lines(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, level, text) of every ATX heading outside code fences."""
    found, fence = [], ""
    for index, line in enumerate(lines):
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        match = _HEADING.match(line)
        if match:
            found.append((index, len(match.group(1)), match.group(2).strip()))
    return found


def sections(body: str) -> list[Section]:
    lines = body.split("\n")
    h2 = [(i, text) for i, level, text in heading_lines(lines) if level == 2]
    result = [Section(None, 0, h2[0][0] if h2 else len(lines))]
    for number, (index, text) in enumerate(h2):
        end = h2[number + 1][0] if number + 1 < len(h2) else len(lines)
        result.append(Section(text, index, end))
    return result


def markers(content: str) -> tuple[tuple[str, str], ...]:
    return tuple((kind, key.strip()) for kind, key in _MARKER.findall(content))


def _check_content(content: str, sources: Sources) -> tuple[str, tuple[tuple[str, str], ...]]:
    cited = markers(content)
    if heading_lines(content.split("\n")):
        return "the content holds a heading line: only InsertSection creates a section", cited
    if not cited:
        return "no sources: the content cites no [[ext:…]] or [[com:…]]", cited
    for kind, key in cited:
        if key in sources.articles:
            return f"[[{kind}:{key}]] points into a wiki or synthesis, which is never a source", cited
        if key not in sources.perimeter:
            return f"[[{kind}:{key}]] is outside the article's perimeter", cited
    return "", cited


def _block(content: str) -> list[str]:
    return content.strip("\n").split("\n")


def apply_operations(body: str, operations: list[Operation], sources: Sources) -> tuple[str, list[OperationResult]]:
    """Apply ``operations`` in order; return the new body and one result per operation."""
    results: list[OperationResult] = []
    for index, operation in enumerate(operations):
        body, result = _apply_one(body, index, operation, sources)
        results.append(result)
    return body, results


def _apply_one(body: str, index: int, operation: Operation, sources: Sources) -> tuple[str, OperationResult]:
    def reject(reason: str, cited: tuple = ()) -> tuple[str, OperationResult]:
        return body, OperationResult(index, operation, False, reason, sources=cited)

    if operation.op not in OPERATIONS:
        return reject(f"unknown operation {operation.op!r}")
    if operation.op == "NoChange":
        return body, OperationResult(index, operation, True)
    problem, cited = _check_content(operation.content, sources)
    if problem:
        return reject(problem, cited)
    lines = body.split("\n")
    current = sections(body)
    by_heading: dict[str, list[Section]] = {}
    for section in current:
        if section.heading is not None:
            by_heading.setdefault(section.heading, []).append(section)

    def find(heading: str, what: str) -> tuple[Section | None, str]:
        if not heading.strip():  # the empty heading names the lead (the text before the first H2)
            return current[0], ""
        matches = by_heading.get(heading.strip(), [])
        if not matches:
            return None, f"{what} {heading!r} not found"
        if len(matches) > 1:
            return None, f"{what} {heading!r} is ambiguous: {len(matches)} sections bear it"
        return matches[0], ""

    if operation.op in ("AppendToSection", "ReplaceSection"):
        section, problem = find(operation.heading, "heading")
        if section is None:
            return reject(problem, cited)
        content_start = section.start + (0 if section.heading is None else 1)
        end = section.end
        while end > content_start and not lines[end - 1].strip():
            end -= 1  # keep the blank lines that separate it from the next section
        if operation.op == "AppendToSection":
            new = lines[:end] + [""] + _block(operation.content) + lines[end:]
            return "\n".join(new), OperationResult(index, operation, True, sources=cited)
        removed = "\n".join(lines[content_start:end]).strip("\n")
        lead = [] if section.heading is None else [""]
        new = lines[:content_start] + lead + _block(operation.content) + lines[end:]
        return "\n".join(new), OperationResult(index, operation, True, removed=removed, sources=cited)

    # InsertSection: a new H2 right after an existing section
    if not operation.heading.strip():
        return reject("no heading given for the new section", cited)
    if operation.heading.strip() in by_heading:
        return reject(f"a section {operation.heading!r} already exists: insertion under an existing heading "
                      "would make headings ambiguous (use AppendToSection or ReplaceSection)", cited)
    anchor, problem = find(operation.after_heading, "after_heading")
    if anchor is None:
        return reject(problem + " (no fallback to the end)", cited)
    end = anchor.end
    while end > anchor.start + (0 if anchor.heading is None else 1) and not lines[end - 1].strip():
        end -= 1
    inserted = ["", f"## {operation.heading.strip()}", ""] + _block(operation.content)
    tail = lines[end:]
    if tail and tail[0].strip():
        inserted.append("")
    new = lines[:end] + inserted + tail
    return "\n".join(new), OperationResult(index, operation, True, sources=cited)
