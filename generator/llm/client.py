"""Chat (JSON answers) and embeddings over the ``openai`` client, with provenance.

Retries with exponential backoff on 429 and 5xx are the client's own (``max_retries``);
a timeout or a connection failure after them is a :class:`LLMTransportError`. A
truncated answer (``finish_reason == "length"``), invalid JSON or an answer outside the
schema is a :class:`LLMAnswerError`: never recorded as a success (INV-15).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import openai

from generator.llm.config import LLMSettings
from generator.llm.errors import LLMAnswerError, LLMTransportError
from generator.llm.prompts import Prompt
from generator.llm.schema import validate

SYSTEM = ("You answer with one JSON object and nothing else, following the requested fields exactly. "
          "Unused text fields are empty strings.")


@dataclass(frozen=True)
class Provenance:
    """Where a machine-made record comes from, written with it.

    Attributes:
        method: ``llm``, ``scripted`` or ``human``.
        model, endpoint: the model as the server named it, and the endpoint's host.
        prompt, prompt_version: template name and hash.
        date: ISO date of the call.
        usage: token counts as the server reported them (``usage``); none are estimated.
    """

    method: str
    model: str = ""
    endpoint: str = ""
    prompt: str = ""
    prompt_version: str = ""
    date: str = ""
    usage: dict[str, int] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"method": self.method}
        for key in ("model", "endpoint", "prompt", "prompt_version", "date"):
            if getattr(self, key):
                record[key] = getattr(self, key)
        if self.usage:
            record["usage"] = dict(self.usage)
        return record


class LLMClient:
    """One endpoint, one model. ``today`` is injectable so records are reproducible in tests."""

    def __init__(self, settings: LLMSettings, today: dt.date | None = None) -> None:
        self.settings = settings
        self.today = today or dt.date.today()
        self._client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key(),
                                     timeout=settings.timeout, max_retries=settings.max_retries)

    def _provenance(self, prompt: Prompt | None, model: str, usage: Any) -> Provenance:
        counts = {}
        if usage is not None:
            for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
                value = getattr(usage, key, None)
                if isinstance(value, int):
                    counts[key] = value
        return Provenance("llm", model or self.settings.model, urlsplit(self.settings.base_url).netloc,
                          prompt.name if prompt else "", prompt.version if prompt else "", self.today.isoformat(),
                          counts)

    def chat_json(self, prompt: Prompt, schema: dict[str, Any], **context: object) -> tuple[dict[str, Any], Provenance]:
        """Ask with ``prompt`` rendered on ``context``; return the validated JSON answer."""
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": prompt.render(**context)}]
        try:
            response = self._client.chat.completions.create(
                model=self.settings.model, messages=messages, temperature=0,
                response_format={"type": "json_object"})
        except openai.APITimeoutError as exc:
            raise LLMTransportError(f"the endpoint {self.settings.base_url} did not answer within "
                                    f"{self.settings.timeout:g} s (after {self.settings.max_retries} retries)") from exc
        except openai.APIConnectionError as exc:
            raise LLMTransportError(f"cannot reach {self.settings.base_url}: {exc}") from exc
        except openai.APIStatusError as exc:
            raise LLMTransportError(f"the endpoint answered HTTP {exc.status_code} "
                                    f"(after {self.settings.max_retries} retries): {exc.message}") from exc
        provenance = self._provenance(prompt, response.model, response.usage)
        spent = provenance.usage  # an unusable answer still cost its tokens: the error carries them
        if not response.choices:
            raise LLMAnswerError("the endpoint returned no answer", spent)
        choice = response.choices[0]
        if choice.finish_reason == "length":
            raise LLMAnswerError("the answer was cut off (finish_reason: length): nothing was recorded; "
                                 "raise the model's output limit or ask for less", spent)
        content = choice.message.content or ""
        try:
            data = json.loads(content)
        except json.JSONDecodeError as exc:
            raise LLMAnswerError(f"the answer is not JSON ({exc.msg} at character {exc.pos}): nothing was "
                                 "recorded", spent) from exc
        try:
            validate(data, schema)
        except LLMAnswerError as exc:
            exc.usage = dict(spent)
            raise
        return data, provenance

    def embed(self, texts: list[str]) -> tuple[list[list[float]], Provenance]:
        model = self.settings.embeddings_model or self.settings.model
        try:
            response = self._client.embeddings.create(model=model, input=texts)
        except openai.APITimeoutError as exc:
            raise LLMTransportError(f"the endpoint {self.settings.base_url} timed out") from exc
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            raise LLMTransportError(f"embeddings failed at {self.settings.base_url}: {exc}") from exc
        vectors = [item.embedding for item in sorted(response.data, key=lambda d: d.index)]
        if len(vectors) != len(texts):
            raise LLMAnswerError(f"{len(vectors)} vectors for {len(texts)} texts")
        return vectors, self._provenance(None, response.model, response.usage)
