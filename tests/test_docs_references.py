"""What the documentation names exists: every repository path (``generator/…``, ``tests/…``,
``themes/…``…), test name, ``make`` target, linked file and top-level ``*.md`` that README.md,
CONTRIBUTING.md and docs/ cite, in code spans, commands, links or the layout trees. A newcomer
follows these first; a file moved or a page never written must fail here, not mislead them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ["README.md", "CONTRIBUTING.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
PREFIXES = ("generator", "tests", "docs", "themes", "prompts", "bench", "scripts", ".ci", ".github")

FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"(?<![\w/.-])((?:" + "|".join(re.escape(p) for p in PREFIXES) + r")/[\w./<>*{}-]*)(::\w+)?")
MAKE = re.compile(r"(?:^|[\s;&|(])make ([a-z][\w-]*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
TOP_LEVEL_MD = re.compile(r"(?<![\w/.-])([A-Z][A-Z_-]+\.md)\b")
TREE_ENTRY = re.compile(r"^( *)([\w.-]+(?:/[\w.-]+)*/?)(?: {2,}\S.*)?$")


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", text, re.MULTILINE))


def _tree_paths(block: str) -> list[str]:
    """The entries of a layout tree (a name at its indentation, a description after two
    spaces), as paths: a line indented deeper than a child of the entry above continues
    that entry's description. Only trees of the repository (``generator/`` at the top)."""
    entries: list[str] = []
    stack: list[tuple[int, str]] = []  # (indentation, folder path with its slash)
    for line in block.splitlines():
        match = TREE_ENTRY.match(line)
        if match is None:
            continue
        indent, name = len(match[1]), match[2]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if (stack and indent > stack[-1][0] + 2) or (not stack and indent):
            continue  # a wrapped description
        path = (stack[-1][1] if stack else "") + name
        entries.append(path)
        if name.endswith("/"):
            stack.append((indent, path))
    return entries if "generator/" in entries else []


def references(text: str) -> dict[str, set[str]]:
    """What a markdown document names, by kind: ``path`` (repository paths, ``::test`` kept),
    ``make`` (targets), ``link`` (relative link targets), ``md`` (top-level markdown files)."""
    found: dict[str, set[str]] = {"path": set(), "make": set(), "link": set(), "md": set()}
    code: list[str] = []
    for info, block in FENCE.findall(text):
        tree = _tree_paths(block) if not info.strip() else []
        found["path"].update(tree)
        # a tree's names are relative to their folder: only its descriptions are read as text
        code.extend(TREE_ENTRY.sub(r"\1", line) if tree else line for line in block.splitlines())
    prose = FENCE.sub("", text)
    code.extend(CODE_SPAN.findall(prose))
    for snippet in code:
        for match in PATH.finditer(snippet):
            path = match[1].rstrip(".,:;")
            found["path"].add(path + (match[2] or ""))
        found["make"].update(MAKE.findall(snippet))
    outside_code = CODE_SPAN.sub("", prose)
    found["link"].update(target for target in LINK.findall(outside_code) if "://" not in target
                         and not target.startswith(("#", "mailto:")))
    found["md"].update(TOP_LEVEL_MD.findall(outside_code))
    found["md"].update(name for snippet in code for name in TOP_LEVEL_MD.findall(snippet))
    return found


def missing(text: str, source: Path) -> list[str]:
    """What ``text``, the markdown of ``source``, names that the repository does not have."""
    found = references(text)
    absent: list[str] = []
    for reference in sorted(found["path"]):
        path, _, test = reference.partition("::")
        # a pattern (tests/<package>/, prompts/<language>/x.j2): the folder before it must exist
        path = re.split(r"[^/]*[<*{]", path)[0]
        target = ROOT / path
        if not target.exists():
            absent.append(f"path {reference.partition('::')[0]}")
        elif test and not re.search(rf"^(?:async )?def {re.escape(test)}\(", target.read_text(encoding="utf-8"),
                                    re.MULTILINE):
            absent.append(f"test {reference}")
    absent.extend(f"make target {target}" for target in sorted(found["make"] - _make_targets()))
    for link in sorted(found["link"]):
        relative = link.split("#")[0]
        if relative and not (source.parent / relative).exists():
            absent.append(f"link {link}")
    absent.extend(f"file {name}" for name in sorted(found["md"]) if not (ROOT / name).exists())
    return absent


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_reference_exists(document: str) -> None:
    source = ROOT / document
    assert missing(source.read_text(encoding="utf-8"), source) == [], \
        f"{document} names what the repository does not have"


def test_the_reader_finds_what_each_kind_of_reference_names() -> None:
    """The parser itself: a reference of each kind is found, and a missing one is reported."""
    text = ("See `generator/nowhere.py`, `prompts/old/<language>/absent.j2` and [the guide](docs/absent.md), run `make nothing`,\n"
            "read DESIGN-X.md.\n\n```sh\n.venv/bin/pytest tests/test_docs_references.py::test_absent\n```\n\n"
            "```\ngenerator/\n  cli.py      arguments\n              wrapped/ description\n  gone/       a folder\n"
            "themes/\n```\n")
    found = references(text)
    assert "prompts/old/<language>/absent.j2" in found["path"]
    assert found["path"] >= {"generator/nowhere.py", "tests/test_docs_references.py::test_absent", "generator/",
                             "generator/cli.py", "generator/gone/", "themes/"}
    assert "generator/wrapped/" not in found["path"], "a wrapped description is no entry"
    assert found["make"] == {"nothing"}
    assert found["link"] == {"docs/absent.md"}
    assert found["md"] == {"DESIGN-X.md"}
    assert missing(text, ROOT / "README.md") == [
        "path generator/gone/", "path generator/nowhere.py", "path prompts/old/<language>/absent.j2",
        "test tests/test_docs_references.py::test_absent", "make target nothing", "link docs/absent.md",
        "file DESIGN-X.md"]
    assert missing("`prompts/<language>/x.j2`, `tests/<package>/`, `make test`, `CONTRIBUTING.md`",
                   ROOT / "README.md") == [], "a pattern is checked up to its first placeholder"
