"""``llm:`` in carnet.yaml → :class:`LLMSettings`.

    llm:
      base_url: http://localhost:11434/v1   # any OpenAI-compatible endpoint
      model: qwen2.5:7b-instruct
      api_key_env: CARNET_LLM_KEY           # the variable holding the key (optional for local servers)
      timeout: 60                           # seconds: the deadline of each whole request
      max_retries: 3                        # on 429, 5xx and timeouts, with exponential backoff
      embeddings_model: nomic-embed-text    # optional
      max_output_tokens: 4096               # optional: a cap on every answer (a server's small context)

Each request asks for at most the tokens its answer needs (its items × their expected size);
``max_output_tokens`` lowers that bound for every request.

``timeout`` is a deadline for the whole request (connecting, waiting, reading the answer),
not for each read: a server sending a byte at a time is cut there. A call with its retries
and the waits between them sends nothing past (``max_retries`` + 1) × ``timeout`` from its
start (a back-off of the ``openai`` client, at most 8 s, may end past it, sending nothing).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.llm.errors import LLMConfigError

MAX_TIMEOUT = 86_400.0
"""Longest ``llm.timeout`` (a day): a deadline, never a wait without bound."""
MAX_RETRIES = 10
"""Most ``llm.max_retries``: each retry may take a whole ``timeout``."""


@dataclass(frozen=True)
class LLMSettings:
    base_url: str
    model: str
    api_key_env: str = ""
    timeout: float = 60.0
    max_retries: int = 3
    embeddings_model: str = ""
    max_output_tokens: int = 0  # 0: no cap beyond each request's own bound

    def api_key(self, environ: Mapping[str, str] = os.environ) -> str:
        if not self.api_key_env:
            return "not-needed"  # local servers accept any key; the client needs one
        key = environ.get(self.api_key_env, "")
        if not key:
            raise LLMConfigError(f"the environment variable {self.api_key_env} (llm.api_key_env in carnet.yaml) "
                                 "is not set: export it with the endpoint's key")
        return key


def llm_settings(extra: Mapping[str, Any]) -> LLMSettings:
    """Settings from carnet.yaml's ``llm`` mapping, with clear errors."""
    raw = extra.get("llm")
    if not isinstance(raw, Mapping):
        raise LLMConfigError("carnet.yaml has no 'llm:' section: add base_url and model (see generator/llm/config.py), "
                             "or use the offline provider")
    base_url, model = raw.get("base_url"), raw.get("model")
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise LLMConfigError("llm.base_url must be the http(s) address of an OpenAI-compatible endpoint")
    if not isinstance(model, str) or not model.strip():
        raise LLMConfigError("llm.model must name the model to use")
    try:
        timeout = float(raw.get("timeout", 60))
        retries = raw.get("max_retries", 3)
        cap = int(raw.get("max_output_tokens", 0) or 0)
    except (TypeError, ValueError) as exc:
        raise LLMConfigError("llm.timeout, llm.max_retries and llm.max_output_tokens must be numbers") from exc
    if not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT):
        raise LLMConfigError(f"llm.timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:,.0f} "
                             f"(the deadline of each request), not {raw.get('timeout')!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
        raise LLMConfigError(f"llm.max_retries must be a whole number from 0 to {MAX_RETRIES}, not {retries!r}")
    if cap < 0:
        raise LLMConfigError("llm.max_output_tokens must be a positive number of tokens (or left out)")
    return LLMSettings(base_url.rstrip("/"), model.strip(), str(raw.get("api_key_env", "") or ""), timeout,
                       retries, str(raw.get("embeddings_model", "") or ""), cap)
