"""Drive ``carnet mcp`` as an agent's client does (tests/agents/): the SDK's own stdio client,
the server spawned as ``python -m generator mcp CONTENT``."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")

Script = Callable[[ClientSession], Awaitable[T]]


def run_client(content: Path, script: Script[T], errors: Path) -> T:
    """``script`` run against a server of ``content`` (its stderr written to ``errors``)."""
    parameters = StdioServerParameters(command=sys.executable, args=["-m", "generator", "mcp", str(content)],
                                       cwd=str(ROOT))

    async def main() -> T:
        # a hang (at start or in a call) fails the test, never the suite
        with errors.open("w", encoding="utf-8") as log, anyio.fail_after(300):
            async with stdio_client(parameters, errlog=log) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await script(session)

    return anyio.run(main)


def payload(result: Any) -> Any:
    """A tool result's JSON (its structured content), or the tool error's message."""
    assert not result.is_error, result.content[0].text
    if result.structured_content is not None:
        return result.structured_content
    return result.content[0].text


def error_text(result: Any) -> str:
    assert result.is_error, "the call was expected to be refused"
    return str(result.content[0].text)


def urls_in(value: Any, base: str) -> Iterator[str]:
    """Every URL of the site in a result, however deep."""
    if isinstance(value, str):
        if value.startswith(base):
            yield value
        else:
            yield from (u.rstrip(")") for u in _links(value, base))
    elif isinstance(value, dict):
        for item in value.values():
            yield from urls_in(item, base)
    elif isinstance(value, list):
        for item in value:
            yield from urls_in(item, base)


def _links(text: str, base: str) -> list[str]:
    return re.findall(re.escape(base) + r"[^\s)\]]*", text)


def dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
