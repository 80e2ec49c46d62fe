"""Running ``carnet`` as a user does, and looking at what it left in ``content/``.

    run = carnet("verify", "--content", content)           # python -m generator …, a subprocess
    run = carnet_here("build", content, "--no-search")      # generator.cli.main, in this process
    run.code, run.out, run.err

Both return a :class:`Run`. In this process an exception escaping ``main`` becomes a
traceback in ``err`` and the code 120 (what Python's own exit status would have
said), so a test asserts on a traceback the same way for both.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
INTERRUPT = Path(__file__).resolve().parent / "interrupt.py"


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def carnet(*args: object, moment: tuple[str, str, int] | None = None, env: dict[str, str] | None = None,
           timeout: float = 300) -> Run:
    """``python -m generator ARGS`` from the repository root (``moment``: killed there,
    see tests/support/interrupt.py)."""
    command = [sys.executable, "-m", "generator", *map(str, args)]
    if moment is not None:
        spec, when, nth = moment
        command = [sys.executable, str(INTERRUPT), spec, when, str(nth), "--", *map(str, args)]
    done = subprocess.run(command, capture_output=True, timeout=timeout, cwd=REPOSITORY,
                          env=dict(os.environ, CI="true", **(env or {})))
    return Run(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))


def carnet_here(*args: object) -> Run:
    """``generator.cli.main(ARGS)`` in this process, its output captured."""
    from generator.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except Exception:
            traceback.print_exc(file=err)
            code = 120
    return Run(int(code or 0), out.getvalue(), err.getvalue())


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (hidden ones included), by relative path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def configure_llm(content: Path, url: str, model: str = "modele-test", extra: str = "") -> None:
    """Add an ``llm:`` section to ``content/carnet.yaml`` (the example has none)."""
    path = content / "carnet.yaml"
    text = path.read_text(encoding="utf-8")
    if not text.endswith("\n"):
        text += "\n"
    path.write_text(text + f"llm:\n  base_url: {url}\n  model: {model}\n  timeout: 10\n  max_retries: 0\n{extra}",
                    encoding="utf-8")


def qualify(content: Path, model: str = "modele-test", language: str = "fr") -> None:
    """A calibration of the scripted judge above the bar, as ``carnet verify --calibrate``
    records one (method scripted: written by the test, no model measured): an uncalibrated
    judge's verdicts are suggestions, and a strict build warns of them (issue 55)."""
    import yaml

    from generator.corpus.verdicts import CALIBRATIONS_FILE
    from generator.llm.prompts import load_prompt

    record = {"method": "scripted", "model": model, "prompt_version": load_prompt("verify_pairs", language).version,
              "date": "2025-01-01", "pairs": 66, "answered": 66, "balanced_accuracy": 0.9,
              "recall": {"supported": 0.9, "partial": 0.9, "unsupported": 0.9}}
    path = content / CALIBRATIONS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"calibrations": [record]}, allow_unicode=True, sort_keys=False), encoding="utf-8")
