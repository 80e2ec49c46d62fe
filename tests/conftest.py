from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the property tests on a fixed sequence of examples, so a red CI is reproducible.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

sys.path.insert(0, str(Path(__file__).resolve().parent))

# every note an incremental build recalls is made again and compared (generator/engine/reads.py): a
# read missing from a note's key fails whichever test rebuilds after the edit that exposes it
from generator.engine.reads import check_reads  # noqa: E402
from support.corpus import copy_fixture  # noqa: E402

check_reads(True)


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """A fresh copy of tests/fixtures/small that a test may change."""
    return copy_fixture("small", tmp_path)


@pytest.fixture(scope="session")
def small_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small fixture built once (read-only for tests)."""
    from generator.pipeline import build

    root = tmp_path_factory.mktemp("small-site")
    content = copy_fixture("small", root)
    out = root / "site"
    build(content, out)
    return out


CONTENT = Path(__file__).resolve().parent.parent / "content"


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example corpus built once, strictly (read-only for tests)."""
    from generator.pipeline import build

    out = tmp_path_factory.mktemp("example") / "site"
    build(CONTENT, out, strict=True)
    return out


@pytest.fixture
def llm_server():
    """An OpenAI-compatible server on 127.0.0.1 answering what the test scripts."""
    from support.llm_server import ScriptedLLMServer

    server = ScriptedLLMServer().start()
    yield server
    server.stop()
