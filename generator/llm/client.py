"""Chat (JSON answers) and embeddings over the ``openai`` client, with provenance.

Retries with exponential backoff on 429 and 5xx are the client's own (``max_retries``);
a timeout or a connection failure after them is a :class:`LLMTransportError`. A
truncated answer (``finish_reason == "length"``), invalid JSON or an answer outside the
schema is a :class:`LLMAnswerError`: never recorded as a success (INV-15).

Answers are asked for in the request's own JSON schema, as a structured-output constraint
(:data:`FORMATS`, from OpenAI's ``json_schema`` down to plain ``json_object`` for a server that
refuses it, said once), with a ``max_tokens`` bound from the expected answer's size; the
schema check after the answer stays, whatever the server promised.

Every string from the server is data (INV-21): an answer longer than
:data:`MAX_ANSWER_CHARS` or a model name longer than :data:`MAX_MODEL_CHARS` is
refused; the endpoint is recorded and shown without its credentials, query or
fragment (:func:`redacted_endpoint`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import openai

from generator.llm.config import LLMSettings
from generator.llm.errors import BudgetSpent, LLMAnswerError, LLMError, LLMTransportError, ToolsRefused
from generator.llm.plan import Ledger, Limits, PlannedRequest
from generator.llm.prompts import Prompt
from generator.llm.schema import parse_answer, shown, strict_form, validate
from generator.llm.transport import BoundedTransport
from generator.terminal import visible

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
FORMATS = ("json_schema", "json_object with schema", "json_object")
"""How an answer's shape is asked for, best first: OpenAI's ``json_schema`` (hosted APIs,
vLLM, Ollama, llama.cpp's own server), ``json_object`` with a ``schema`` key (llama-cpp-python's
server, which turns it into a grammar), plain ``json_object`` (valid JSON only)."""


def response_format(form: str, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` of a request in ``form`` (one of :data:`FORMATS`)."""
    if form == "json_schema":
        strict = strict_form(schema)
        return {"type": "json_schema", "json_schema": {"name": name or "answer", "strict": strict is not None,
                                                       "schema": strict or schema}}
    if form == "json_object with schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


_FORMAT_REFUSAL = re.compile(
    # a validation error located at the field (pydantic's loc, llama-cpp-python 0.3.16's 500), or
    # words of refusal next to its name; a field merely echoed back (an error's "input") is none
    r"\(\s*'body',\s*'response_format'"
    r"|(response_format|json_schema)[^.\n]{0,80}?\b(not supported|unsupported|invalid|unknown|must|should|expected)"
    r"|\b(not supported|unsupported|invalid|unknown)\b[^.\n]{0,80}?(response_format|json_schema)")
_TOKEN_FIELD_REFUSAL = re.compile(r"max_tokens[^\n]{0,120}max_completion_tokens")


def _refuses_format(exc: openai.APIStatusError) -> bool:
    """Whether an HTTP error says the request's ``response_format`` is not understood (a
    400, 422 or 500 that says so), rather than anything else being wrong."""
    return exc.status_code in (400, 422, 500) and _FORMAT_REFUSAL.search(f"{exc.message}".lower()) is not None


def _refuses_max_tokens(exc: openai.APIStatusError) -> bool:
    """Whether the endpoint wants ``max_completion_tokens`` where ``max_tokens`` was sent
    (OpenAI's newer models refuse the older name)."""
    return exc.status_code == 400 and _TOKEN_FIELD_REFUSAL.search(f"{exc.message}".lower()) is not None


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
        listed_model: the model the endpoint lists (``/models``) when it is not the one its
            answer names (a server that echoes the name it was asked for): both are recorded.
    """

    method: str
    model: str = ""
    endpoint: str = ""
    prompt: str = ""
    prompt_version: str = ""
    date: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    listed_model: str = ""

    def as_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"method": self.method}
        for key in ("model", "listed_model", "endpoint", "prompt", "prompt_version", "date"):
            if getattr(self, key):
                record[key] = getattr(self, key)
        if self.usage:
            record["usage"] = dict(self.usage)
        return record


_T = TypeVar("_T", bound=tuple[Any, Any])

MAX_TOOL_CALLS = 8
"""Tool calls one turn may make."""
MAX_TOOL_ARGUMENTS_CHARS = 4_000
"""Longest arguments of one tool call (a query, a few ids)."""


@dataclass(frozen=True)
class ToolCall:
    """A call the model made: ``id`` (to answer it), the tool's ``name``, its ``arguments``
    parsed (a JSON object) and as sent (``raw``, to send back in the conversation)."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw: str


@dataclass(frozen=True)
class ToolTurn:
    """One turn of a conversation with tools: the text, or the calls; ``usage`` its tokens."""

    content: str
    calls: tuple[ToolCall, ...]
    usage: dict[str, int]


def turn_characters(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """The characters a turn with tools sends: its messages' text and the tools' schemas."""
    return sum(len(str(m.get("content") or "")) for m in messages) + len(json.dumps(tools))


_CLIENTS: list[LLMClient] = []
"""The clients made since :func:`clients` last took them: what a command spent (done,
failed or interrupted) is said from them at its end."""
_CLIENTS_LOCK = threading.Lock()


def clients() -> Iterator[LLMClient]:
    """Takes the clients made since the last call, those that sent something, in the order made."""
    with _CLIENTS_LOCK:
        made = list(_CLIENTS)
        _CLIENTS.clear()
    return iter([c for c in made if c.ledger.requests or c.ledger.unanswered or c.ledger.in_flight])


class LLMClient:
    """One endpoint, one model. ``today`` is injectable so records are reproducible in tests.
    ``ledger`` records what every request spent (:class:`~generator.llm.plan.Ledger`);
    with ``limits``, a request the run's budget no longer covers (by the ratio the server's
    usage measured so far) is not sent: :class:`~generator.llm.errors.BudgetSpent`."""

    def __init__(self, settings: LLMSettings, today: dt.date | None = None,
                 notice: Callable[[str], None] | None = None, ledger: Ledger | None = None,
                 limits: Limits | None = None) -> None:
        self.settings = settings
        self.ledger = ledger or Ledger()
        self.limits = limits
        self._listed: list[str] | None = None  # the endpoint's /models, asked once
        self._listing_lock = threading.Lock()
        self.today = today or dt.date.today()
        self.endpoint = redacted_endpoint(settings.base_url)
        # the most structured answer format the endpoint accepted (an index into FORMATS);
        # shared by the threads of --jobs: a refusal moves every later request down
        self.form = 0
        self.token_field = "max_tokens"  # or max_completion_tokens, for an endpoint that wants it
        self._form_lock = threading.Lock()
        self._notice = notice
        # the one seam to the network: a response body is read up to a bound, never more, and
        # a request ends at its deadline (llm.timeout), however slowly the server answers
        self._transport = BoundedTransport(timeout=settings.timeout)
        self._client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key(),
                                     timeout=settings.timeout, max_retries=settings.max_retries,
                                     http_client=openai.DefaultHttpxClient(transport=self._transport))
        with _CLIENTS_LOCK:
            _CLIENTS.append(self)

    def close(self) -> None:
        """Close the connections: a request in flight is abandoned (the server sees the
        connection go; a server that notices stops generating)."""
        self._client.close()

    def _count(self, characters: int, answered: bool, spent: dict[str, int]) -> None:
        """Record a call in the ledger: the answered attempt with its usage (once), and each
        attempt before it (the client's retries) or instead of it that got no answer."""
        attempts = max(1, self._transport.attempts)
        if answered:
            self.ledger.answered(characters, spent)
            attempts -= 1
        for _ in range(attempts):
            self.ledger.failed(characters)

    @property
    def call_seconds(self) -> float:
        """The most one call takes, its retries and their waits included: each attempt ends
        within ``llm.timeout``, and all of them within (``max_retries`` + 1) × ``llm.timeout``."""
        return (self.settings.max_retries + 1) * self.settings.timeout

    def completion(self, max_tokens: int) -> int:
        """The completion a request asking for ``max_tokens`` is sent with (``llm.max_output_tokens``
        lowers it)."""
        limit = self.settings.max_output_tokens
        return min(max_tokens, limit) if limit else max_tokens

    def _counted(self, characters: int, completion: int, call: Callable[[], _T]) -> _T:
        """``call()``, recorded in the ledger whatever its outcome (an interrupt included);
        not made when the run's budget does not cover ``characters`` of prompt and
        ``completion`` tokens."""
        if self.limits is not None and not self.ledger.admits(self.limits, PlannedRequest("", characters, completion)):
            cost = self.ledger.estimate(self.limits, PlannedRequest("", characters, completion))
            raise BudgetSpent(f"a request of about {cost:,} tokens would pass the run's budget of "
                              f"{self.limits.max_tokens:,}: not sent (raise --max-tokens)")
        self._transport.attempts = 0
        self.ledger.started(characters)
        try:
            with self._transport.call(self.call_seconds):
                result = call()
        except LLMError as exc:  # an answer refused was still an answer, with its tokens
            self._count(characters, bool(exc.usage) or isinstance(exc, LLMAnswerError), exc.usage)
            raise
        except BaseException:
            self._count(characters, False, {})
            raise
        finally:
            self.ledger.ended(characters)
        provenance = result[1]
        assert isinstance(provenance, Provenance)
        self._count(characters, True, provenance.usage)
        return result

    def _listed_models(self, model: str) -> list[str]:
        """The models the endpoint lists (``GET /models``), asked once a run; [] when it
        lists none or cannot say."""
        with self._listing_lock:
            if self._listed is None:
                self._listed = []
                attempts = self._transport.attempts  # the listing is no attempt of the chat request
                try:  # one attempt, with its own deadline (not what is left of the call it serves)
                    with self._transport.call(self.settings.timeout):
                        page = self._client.with_options(max_retries=0).models.list()
                    names = [getattr(m, "id", None) for m in list(getattr(page, "data", []) or [])[:100]]
                    self._listed = [n for n in names if isinstance(n, str) and 0 < len(n) <= MAX_MODEL_CHARS]
                except (openai.APIError, ValueError, TypeError, RecursionError):
                    self._listed = []
                finally:
                    self._transport.attempts = attempts
                if self._listed and model not in self._listed:
                    self.say(f"the endpoint {self.endpoint} answers as model {shown(model, 80)} but lists "
                             f"{', '.join(shown(n, 80) for n in self._listed[:3])}: both are recorded with each answer")
            return self._listed

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
        listed = self._listed_models(model)
        other = listed[0] if listed and model not in listed and len(listed) == 1 else ""
        return Provenance("llm", model, self.endpoint, prompt.name if prompt else "",
                          prompt.version if prompt else "", self.today.isoformat(), counts, other)

    def _transport_error(self, exc: openai.APIError, what: str) -> LLMTransportError | LLMAnswerError:
        """The client's exception as ours: the address shown redacted, the server's
        own message cut short (it is data)."""
        retries = self.settings.max_retries
        if isinstance(exc, openai.APITimeoutError) and self._transport.late and self._transport.last_status >= 400:
            return LLMTransportError(f"the endpoint answered HTTP {self._transport.last_status} to {what}, and "
                                     "its retries ran past the call's deadline ((llm.max_retries + 1) × llm.timeout "
                                     f"= {self.call_seconds:g} s): check the endpoint, or raise llm.timeout")
        if isinstance(exc, openai.APITimeoutError):
            return LLMTransportError(f"the endpoint {self.endpoint} did not answer {what} within "
                                     f"{self.settings.timeout:g} s (after {retries} retries): llm.timeout in "
                                     "carnet.yaml is the deadline of each whole request (connecting, waiting and "
                                     "reading the answer); raise it for a slow model")
        if isinstance(exc, openai.APIConnectionError):
            return LLMTransportError(f"cannot reach {self.endpoint} for {what}: {shown(str(exc), 120)}")
        if isinstance(exc, openai.APIStatusError):
            context = exc.status_code == 400 and "context" in str(exc.message).lower()
            hint = ("; the prompt and the answer asked for do not fit the model's context: set llm.context_tokens "
                    "in carnet.yaml to the server's context (every request is then planned to fit it; "
                    "--dry-run shows the plan)") if context else ""
            wait = self._transport.refused_wait
            tried = f"after {retries} retries"
            if wait:  # the server's own wait would outlast the call: not waited for
                tried = "not retried"
                hint += (f"; it asked to wait {wait:,.0f} s before a retry, past the call's deadline "
                         f"((llm.max_retries + 1) × llm.timeout = {self.call_seconds:g} s): try again later")
            return LLMTransportError(f"the endpoint answered HTTP {exc.status_code} to {what} ({tried}): "
                                     f"{shown(str(exc.message), MAX_SERVER_MESSAGE_CHARS)}{hint}")
        # a response the client could not read (APIResponseValidationError and the like)
        return LLMAnswerError(f"the endpoint's response to {what} is unreadable: {shown(str(exc), 120)}")

    def progress(self, what: str) -> None:
        """Progress of a run (the request about to be sent), on a terminal only: a CI log
        gets the run's summary instead."""
        if sys.stderr.isatty():
            self.say(f"sending {what}")

    def say(self, message: str) -> None:
        """A notice for the person running the command (stderr unless told otherwise)."""
        if self._notice is not None:
            self._notice(message)
        else:
            print(visible(f"carnet: {message}"), file=sys.stderr)

    def _refused_format(self, form: int) -> bool:
        """Move down from ``form`` after the endpoint refused it; False when none is left."""
        with self._form_lock:
            if form + 1 >= len(FORMATS):
                return False
            if self.form == form:  # said once, by the first thread to hit the refusal
                self.form = form + 1
                self.say(f"the endpoint {self.endpoint} refused response_format {FORMATS[form]}: asking for "
                         f"{FORMATS[form + 1]} instead (every answer is still checked against its schema)")
            return True

    def chat_json(self, prompt: Prompt, schema: dict[str, Any], *, max_tokens: int,
                  constraint: dict[str, Any] | None = None, **context: object) -> tuple[dict[str, Any], Provenance]:
        """See :meth:`_chat_json`; what it spends goes into the ledger."""
        text = prompt.render(**context)
        tokens = self.completion(max_tokens)
        return self._counted(len(SYSTEM) + len(text), tokens,
                             lambda: self._chat_json(prompt, text, schema, max_tokens=tokens, constraint=constraint))

    def request_characters(self, prompt: Prompt, **context: object) -> int:
        """The characters :meth:`chat_json` would send for ``prompt`` on ``context`` (a plan's)."""
        return len(SYSTEM) + len(prompt.render(**context))

    def _chat_json(self, prompt: Prompt, text: str, schema: dict[str, Any], *, max_tokens: int,
                   constraint: dict[str, Any] | None = None) -> tuple[dict[str, Any], Provenance]:
        """Ask with ``prompt`` rendered (``text``) for an answer in ``schema``, in at most
        ``max_tokens`` tokens; return the JSON answer
        checked against ``schema``. ``constraint`` is what the server is asked to follow when
        it is tighter than the shape checked here (``schema`` with arrays bounded to the
        request, ids as an enum of those sent): an answer outside it is not refused whole,
        since the callers check each item against the request and refuse it alone."""
        messages: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
        tokens = max_tokens
        while True:
            form = self.form
            try:
                # in the body as is: "json_object with schema" is no form the client's types know
                field = self.token_field
                response = self._client.chat.completions.create(
                    model=self.settings.model, messages=messages, temperature=0,
                    extra_body={field: tokens,
                                "response_format": response_format(FORMATS[form], prompt.name, constraint or schema)})
                break
            except openai.APIStatusError as exc:
                if self._too_large() is None and _refuses_format(exc) and self._refused_format(form):
                    continue
                if self._too_large() is None and field == "max_tokens" and _refuses_max_tokens(exc):
                    self.token_field = "max_completion_tokens"
                    continue
                raise self._too_large() or self._transport_error(exc, "the chat request") from exc
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
            raise LLMAnswerError(f"the answer was cut off at {tokens:,} tokens (finish_reason: length): nothing "
                                 "was recorded; the model wandered, or ask for less (a smaller batch)", spent)
        content = getattr(getattr(choice, "message", None), "content", None) or ""
        if not isinstance(content, str):
            raise LLMAnswerError(f"the answer is a {type(content).__name__}, not text: nothing was recorded", spent)
        if len(content) > MAX_ANSWER_CHARS:
            raise LLMAnswerError(f"the answer holds {len(content):,} characters, more than the {MAX_ANSWER_CHARS:,} "
                                 "accepted: refused unread, nothing was recorded", spent)
        data = parse_answer(content, spent)
        if _unpaired_surrogate(data):  # no file and no terminal can hold it: the answer is not text
            raise LLMAnswerError("the answer holds text that is not valid Unicode (an unpaired surrogate, "
                                 "\\ud800–\\udfff): nothing was recorded", spent)
        try:
            validate(data, schema)
        except LLMAnswerError as exc:
            exc.usage = dict(spent)
            raise
        return data, provenance

    def chat_tools(self, prompt: Prompt, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                   max_tokens: int, tool_choice: str = "auto") -> tuple[ToolTurn, Provenance]:
        """See :meth:`_chat_tools`; what it spends goes into the ledger."""
        tokens = self.completion(max_tokens)
        return self._counted(turn_characters(messages, tools), tokens,
                             lambda: self._chat_tools(prompt, messages, tools, max_tokens=tokens,
                                                      tool_choice=tool_choice))

    def _chat_tools(self, prompt: Prompt, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                    max_tokens: int, tool_choice: str = "auto") -> tuple[ToolTurn, Provenance]:
        """One turn of a conversation where the model may call ``tools`` (OpenAI's function
        calling): what it said, or the calls it made, checked as data (each call's name and
        arguments bounded, the arguments parsed as a JSON object). A server that refuses
        tools raises :class:`ToolsRefused`, so the caller can do without them."""
        tokens = max_tokens
        try:
            sent: list[Any] = messages
            response = self._client.chat.completions.create(
                model=self.settings.model, messages=sent, temperature=0,
                extra_body={self.token_field: tokens, "tools": tools, "tool_choice": tool_choice})
        except openai.APIStatusError as exc:
            if self._too_large() is None and exc.status_code in (400, 404, 422, 500, 501) and \
                    "tool" in str(exc.message).lower():
                raise ToolsRefused(f"the endpoint {self.endpoint} refused tool calls: "
                                   f"{shown(str(exc.message), MAX_SERVER_MESSAGE_CHARS)}") from exc
            raise self._too_large() or self._transport_error(exc, "the chat request") from exc
        except openai.APIError as exc:
            raise self._too_large() or self._transport_error(exc, "the chat request") from exc
        except (ValueError, TypeError, RecursionError) as exc:
            raise self._too_large() or LLMAnswerError(f"the endpoint's response to the chat request is "
                                                      f"unreadable: {shown(str(exc), 120)}") from exc
        too_large = self._too_large()
        if too_large is not None:
            raise too_large
        spent = _usage_counts(getattr(response, "usage", None))
        provenance = self._provenance(prompt, getattr(response, "model", None), getattr(response, "usage", None))
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise LLMAnswerError("the endpoint returned no answer", spent)
        choice = choices[0]
        if getattr(choice, "finish_reason", None) == "length":
            raise LLMAnswerError(f"the answer was cut off at {tokens:,} tokens (finish_reason: length): nothing "
                                 "was recorded", spent)
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None) or ""
        if not isinstance(content, str) or len(content) > MAX_ANSWER_CHARS or _unpaired_surrogate(content):
            raise LLMAnswerError("the answer's text is not text of at most "
                                 f"{MAX_ANSWER_CHARS:,} characters: nothing was recorded", spent)
        calls = getattr(message, "tool_calls", None) or []
        if not isinstance(calls, list) or len(calls) > MAX_TOOL_CALLS:
            raise LLMAnswerError(f"the answer makes more than {MAX_TOOL_CALLS} tool calls at once (or not a list of "
                                 "them): nothing was recorded", spent)
        made = []
        for number, call in enumerate(calls, 1):
            function = getattr(call, "function", None)
            name, arguments = getattr(function, "name", None), getattr(function, "arguments", None)
            identifier = getattr(call, "id", None) or f"call-{number}"
            if not (isinstance(name, str) and isinstance(arguments, str) and isinstance(identifier, str)) or \
                    len(name) > 64 or len(arguments) > MAX_TOOL_ARGUMENTS_CHARS or len(identifier) > 100 or \
                    _unpaired_surrogate([name, arguments, identifier]):
                raise LLMAnswerError(f"tool call {number} is not a name and arguments of at most "
                                     f"{MAX_TOOL_ARGUMENTS_CHARS:,} characters: nothing was recorded", spent)
            parsed = parse_answer(arguments or "{}", spent, f"tool call {number}'s arguments")
            if not isinstance(parsed, dict):
                raise LLMAnswerError(f"tool call {number}'s arguments are not a JSON object: nothing was recorded",
                                     spent)
            made.append(ToolCall(identifier, name, parsed, arguments))
        return ToolTurn(content, tuple(made), spent), provenance

    def embed(self, texts: list[str]) -> tuple[list[list[float]], Provenance]:
        """Vectors of ``texts``; what it spends goes into the ledger."""
        return self._counted(sum(len(t) for t in texts), 0, lambda: self._embed(texts))

    def _embed(self, texts: list[str]) -> tuple[list[list[float]], Provenance]:
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
