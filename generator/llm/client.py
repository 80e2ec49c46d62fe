"""Chat (JSON answers) and embeddings over the ``openai`` client, with provenance.

Retries with exponential backoff on 429 and 5xx are the client's own (``max_retries``);
a timeout or a connection failure after them is a :class:`LLMTransportError`. A
truncated answer (``finish_reason == "length"``), invalid JSON or an answer outside the
schema is a :class:`LLMAnswerError`: never recorded as a success (INV-15).

Every string from the server is data (INV-21): an answer longer than
:data:`MAX_ANSWER_CHARS` or a model name longer than :data:`MAX_MODEL_CHARS` is
refused; the endpoint is recorded and shown without its credentials, query or
fragment (:func:`redacted_endpoint`).
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
from generator.llm.schema import shown, validate
from generator.llm.transport import BoundedTransport

SYSTEM = ("You answer with one JSON object and nothing else, following the requested fields exactly. "
          "Unused text fields are empty strings.")
MAX_ANSWER_CHARS = 1_000_000
"""Longest answer (message content) read: past it the answer is refused, unparsed."""
MAX_MODEL_CHARS = 200
"""Longest model name the server may report; it is recorded with every answer."""
MAX_SERVER_MESSAGE_CHARS = 300
"""Longest part of a server's error message quoted in ours."""
MAX_TOKEN_COUNT = 10**12
"""Largest token count kept from a server's usage (a bigger one is no count: dropped)."""
MAX_VECTOR_SIZE = 65_536
"""Most dimensions an embedding may have."""


def redacted_endpoint(url: str) -> str:
    """``url`` as host[:port]/path: never its ``user:password@``, query or fragment,
    which may hold a key. It is what provenance records and what messages show."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # an unparsable port or address: show none of it
        return "(an unparsable address)"
    if ":" in host:  # IPv6
        host = f"[{host}]"
    return f"{host}{f':{port}' if port is not None else ''}{parts.path}"


def _unpaired_surrogate(value: object) -> bool:
    """Whether any text in a parsed JSON value holds a lone surrogate (JSON's
    ``"\\ud800"`` parses into one; UTF-8 cannot encode it)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any("\ud800" <= char <= "\udfff" for char in item):
                return True
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
    return False


def _usage_counts(usage: object) -> dict[str, int]:
    """The token counts the server reported, kept only when they are whole numbers."""
    counts = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = getattr(usage, key, None) if usage is not None else None
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT:
            counts[key] = value
    return counts


@dataclass(frozen=True)
class Provenance:
    """Where a machine-made record comes from, written with it.

    Attributes:
        method: ``llm``, ``scripted`` or ``human``.
        model, endpoint: the model as the server named it, and the endpoint as
            host[:port]/path (:func:`redacted_endpoint`).
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
        self.endpoint = redacted_endpoint(settings.base_url)
        # the one seam to the network: a response body is read up to a bound, never more
        self._transport = BoundedTransport()
        self._client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key(),
                                     timeout=settings.timeout, max_retries=settings.max_retries,
                                     http_client=openai.DefaultHttpxClient(transport=self._transport))

    def _too_large(self) -> LLMAnswerError | None:
        """The refusal of a response whose body went past the transport's bound."""
        if not self._transport.exceeded:
            return None
        return LLMAnswerError(f"the endpoint's response is larger than {self._transport.limit:,} bytes: refused "
                              "unread, nothing was recorded")

    def _provenance(self, prompt: Prompt | None, model: object, usage: object) -> Provenance:
        """The provenance of an answer; a model name that is not a short string is
        refused (with the answer's tokens), since it is recorded with the answer."""
        counts = _usage_counts(usage)
        if model is None or model == "":
            model = self.settings.model
        if not isinstance(model, str):
            raise LLMAnswerError(f"the server's model name is not a string ({type(model).__name__}): "
                                 "nothing was recorded", counts)
        if _unpaired_surrogate(model):
            raise LLMAnswerError("the server's model name is not valid Unicode (an unpaired surrogate): nothing "
                                 "was recorded", counts)
        if len(model) > MAX_MODEL_CHARS:
            raise LLMAnswerError(f"the server named its model with {len(model):,} characters (at most "
                                 f"{MAX_MODEL_CHARS} are accepted): nothing was recorded", counts)
        return Provenance("llm", model, self.endpoint, prompt.name if prompt else "",
                          prompt.version if prompt else "", self.today.isoformat(), counts)

    def _transport_error(self, exc: openai.APIError, what: str) -> LLMTransportError | LLMAnswerError:
        """The client's exception as ours: the address shown redacted, the server's
        own message cut short (it is data)."""
        retries = self.settings.max_retries
        if isinstance(exc, openai.APITimeoutError):
            return LLMTransportError(f"the endpoint {self.endpoint} did not answer {what} within "
                                     f"{self.settings.timeout:g} s (after {retries} retries)")
        if isinstance(exc, openai.APIConnectionError):
            return LLMTransportError(f"cannot reach {self.endpoint} for {what}: {shown(str(exc), 120)}")
        if isinstance(exc, openai.APIStatusError):
            return LLMTransportError(f"the endpoint answered HTTP {exc.status_code} to {what} (after {retries} "
                                     f"retries): {shown(str(exc.message), MAX_SERVER_MESSAGE_CHARS)}")
        # a response the client could not read (APIResponseValidationError and the like)
        return LLMAnswerError(f"the endpoint's response to {what} is unreadable: {shown(str(exc), 120)}")

    def chat_json(self, prompt: Prompt, schema: dict[str, Any], **context: object) -> tuple[dict[str, Any], Provenance]:
        """Ask with ``prompt`` rendered on ``context``; return the validated JSON answer."""
        messages: list[Any] = [{"role": "system", "content": SYSTEM},
                               {"role": "user", "content": prompt.render(**context)}]
        try:
            response = self._client.chat.completions.create(
                model=self.settings.model, messages=messages, temperature=0,
                response_format={"type": "json_object"})
        except openai.APIError as exc:
            raise self._too_large() or self._transport_error(exc, "the chat request") from exc
        except (ValueError, TypeError, RecursionError) as exc:  # a body the client cannot even decode
            raise self._too_large() or LLMAnswerError(f"the endpoint's response to the chat request is "
                                                      f"unreadable: {shown(str(exc), 120)}") from exc
        too_large = self._too_large()
        if too_large is not None:
            raise too_large
        spent = _usage_counts(getattr(response, "usage", None))  # an unusable answer still cost its tokens
        provenance = self._provenance(prompt, getattr(response, "model", None), getattr(response, "usage", None))
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise LLMAnswerError("the endpoint returned no answer", spent)
        choice = choices[0]
        if getattr(choice, "finish_reason", None) == "length":
            raise LLMAnswerError("the answer was cut off (finish_reason: length): nothing was recorded; "
                                 "raise the model's output limit or ask for less", spent)
        content = getattr(getattr(choice, "message", None), "content", None) or ""
        if not isinstance(content, str):
            raise LLMAnswerError(f"the answer is a {type(content).__name__}, not text: nothing was recorded", spent)
        if len(content) > MAX_ANSWER_CHARS:
            raise LLMAnswerError(f"the answer holds {len(content):,} characters, more than the {MAX_ANSWER_CHARS:,} "
                                 "accepted: refused unread, nothing was recorded", spent)
        try:
            data = json.loads(content)
        except json.JSONDecodeError as exc:
            raise LLMAnswerError(f"the answer is not JSON ({exc.msg} at character {exc.pos}): nothing was "
                                 "recorded", spent) from exc
        except RecursionError as exc:  # nested deeper than the parser goes
            raise LLMAnswerError("the answer is JSON nested too deep to read: nothing was recorded", spent) from exc
        if _unpaired_surrogate(data):  # no file and no terminal can hold it: the answer is not text
            raise LLMAnswerError("the answer holds text that is not valid Unicode (an unpaired surrogate, "
                                 "\\ud800–\\udfff): nothing was recorded", spent)
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
        except openai.APIError as exc:
            raise self._too_large() or self._transport_error(exc, "the embeddings request") from exc
        except (ValueError, TypeError, RecursionError) as exc:
            raise self._too_large() or LLMAnswerError(f"the endpoint's response to the embeddings request is "
                                                      f"unreadable: {shown(str(exc), 120)}") from exc
        too_large = self._too_large()
        if too_large is not None:
            raise too_large
        spent = _usage_counts(getattr(response, "usage", None))
        provenance = self._provenance(None, getattr(response, "model", None), getattr(response, "usage", None))
        data = getattr(response, "data", None)
        if not isinstance(data, list):
            raise LLMAnswerError("the embeddings answer holds no list of vectors", spent)
        items = sorted(data, key=lambda d: d.index if isinstance(getattr(d, "index", None), int) else -1)
        given = [getattr(item, "embedding", None) for item in items]
        if len(given) != len(texts):
            raise LLMAnswerError(f"{len(given)} vectors for {len(texts)} texts", spent)
        vectors = [v for v in given if isinstance(v, list)]
        sizes = {len(v) for v in vectors}
        if len(vectors) != len(given) or len(sizes) > 1 or not 0 < min(sizes, default=1) <= MAX_VECTOR_SIZE or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for v in vectors for x in v):
            raise LLMAnswerError(f"the embeddings are not vectors of numbers of one size (1 to {MAX_VECTOR_SIZE:,})",
                                 spent)
        return vectors, provenance
