"""Fixtures of the real-model tier (tests/support/model_server.py): the server, started once
per session, and copies of the example corpus pointed at it. Without `make model-server`
the tier skips and says why; under CI=true it fails instead (`.ci/run` installs it)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from support.model_server import ModelServer, missing


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    """llama-cpp-python's server on a free port of 127.0.0.1, one thread, its log in a
    temporary file (``model_server.log``); stopped at the end of the session."""
    reason = missing()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the real-model tier cannot run under CI: {reason}")
        pytest.skip(f"real-model tests skipped: {reason}")
    server = ModelServer(tmp_path_factory.mktemp("model-server") / "server.log").start()
    try:
        yield server
    finally:
        server.stop()
