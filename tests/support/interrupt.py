"""Run the carnet CLI and kill it with SIGKILL (no cleanup, no ``finally``) at a chosen
moment — the fault a CI runner's timeout, the OOM killer or a power cut inflicts:

    python tests/support/interrupt.py MODULE:ATTR WHEN N -- build content --out site

WHEN is ``before`` or ``after`` the N-th call of ``MODULE.ATTR`` (a function, or a
method written ``Class.method``). The hook is installed before the CLI is imported, so
modules that import the function by name get the hooked one. Exits normally, with the
command's status, when the moment never comes.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def hook(spec: str, when: str, nth: int) -> None:
    module_name, _, attr_path = spec.partition(":")
    owner: Any = importlib.import_module(module_name)
    *parents, name = attr_path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    original: Callable[..., Any] = getattr(owner, name)
    calls = 0

    def hooked(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == nth and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        value = original(*args, **kwargs)
        if calls == nth and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return value

    setattr(owner, name, hooked)


def main(argv: list[str]) -> int:
    spec, when, nth, separator, *command = argv
    assert separator == "--" and when in ("before", "after"), __doc__
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    hook(spec, when, int(nth))
    from generator.cli import main as carnet

    return carnet(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
