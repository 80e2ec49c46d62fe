"""Plans and ledgers: what a model command will send before it sends, and what it spent.

A command lays out its requests first (:class:`Plan`): each request's prompt is rendered,
its characters counted and its prompt tokens estimated with a stated ratio
(:data:`CHARACTERS_PER_TOKEN`, ``llm.characters_per_token``), and the completion it asks
for is the bound of its expected answer. The plan says whether each request fits the
model's context (``llm.context_tokens``) and whether the whole run fits its budget
(``--max-tokens``, default ``llm.max_tokens_per_run``). ``--dry-run`` prints it and sends
nothing; a plan over budget sends nothing either and says how to raise the budget.

While the command runs, a :class:`Ledger` records every request sent: the usage the
server reported for it (once, whatever how many records it produced), and the attempts
that got no usable answer. Its ratio of characters to reported prompt tokens corrects the
estimate of what remains, so a run stops before it spends past its budget.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

CHARACTERS_PER_TOKEN = 2.5
"""Characters per prompt token assumed before the server says: SmolLM2's tokenizer reads
2.3 to 2.8 characters of the example's French a token (measured by the real-model tier,
docs/models.md), English prose ~4; ids and markup take more tokens. A plan that
overestimates sends requests that fit (with the 90 % margin, down to 2.3)."""
CONTEXT_TOKENS = 8192
"""The model's context when ``llm.context_tokens`` is not set: a small local model's."""
MAX_TOKENS_PER_RUN = 200_000
"""The budget of one command when neither ``--max-tokens`` nor ``llm.max_tokens_per_run`` is set."""
CONTEXT_MARGIN = 0.9
"""The share of the context a request may fill by the estimate (tokenisers differ)."""


@dataclass(frozen=True)
class Limits:
    """The bounds a plan is made within.

    Attributes:
        context_tokens: the model's context (prompt and completion together).
        max_tokens: the budget of the run (estimated prompt tokens plus completion bounds).
        characters_per_token: the ratio of the estimate.
    """

    context_tokens: int = CONTEXT_TOKENS
    max_tokens: int = MAX_TOKENS_PER_RUN
    characters_per_token: float = CHARACTERS_PER_TOKEN

    def tokens(self, characters: int) -> int:
        """The prompt tokens ``characters`` are estimated to take."""
        return math.ceil(characters / self.characters_per_token)

    def room(self, completion_tokens: int) -> int:
        """Characters of prompt a request asking for ``completion_tokens`` may hold."""
        usable = int(self.context_tokens * CONTEXT_MARGIN) - completion_tokens
        return max(0, int(usable * self.characters_per_token))


@dataclass(frozen=True)
class PlannedRequest:
    """One request of a plan: ``label`` says what it holds (to a person), ``characters``
    the prompt's (system and user messages), ``completion_tokens`` the bound asked for."""

    label: str
    characters: int
    completion_tokens: int


@dataclass(frozen=True)
class Plan:
    """What a command will send. ``notes``: what the plan did that a person should know (a
    group split along its spanning tree, evidence left for a later run)."""

    command: str
    requests: tuple[PlannedRequest, ...]
    limits: Limits
    notes: tuple[str, ...] = ()

    def prompt_tokens(self, request: PlannedRequest) -> int:
        return self.limits.tokens(request.characters)

    @property
    def characters(self) -> int:
        return sum(r.characters for r in self.requests)

    @property
    def estimated_prompt_tokens(self) -> int:
        return sum(self.prompt_tokens(r) for r in self.requests)

    @property
    def completion_tokens(self) -> int:
        return sum(r.completion_tokens for r in self.requests)

    @property
    def estimated_tokens(self) -> int:
        """Estimated prompt tokens plus the completion bounds: what the run may spend at most."""
        return self.estimated_prompt_tokens + self.completion_tokens

    def fits(self, request: PlannedRequest) -> bool:
        """Whether ``request`` fits the model's context, by the estimate."""
        return self.prompt_tokens(request) + request.completion_tokens <= self.limits.context_tokens

    def oversized(self) -> list[int]:
        """Numbers (1-based) of the requests that do not fit the model's context."""
        return [n for n, r in enumerate(self.requests, 1) if not self.fits(r)]

    @property
    def over_budget(self) -> bool:
        return self.estimated_tokens > self.limits.max_tokens

    def lines(self, shown: int = 12) -> list[str]:
        """The plan as a person reads it: totals, then the first ``shown`` requests."""
        limits = self.limits
        head = [f"plan of '{self.command}': {len(self.requests):,} request(s), {self.characters:,} characters of "
                f"prompt, about {self.estimated_prompt_tokens:,} prompt tokens (estimated at "
                f"{limits.characters_per_token:g} characters a token) and at most {self.completion_tokens:,} "
                f"completion tokens: {self.estimated_tokens:,} of the run's budget of {limits.max_tokens:,}; "
                f"context {limits.context_tokens:,} tokens a request"]
        rows = [f"  {n:>4}. {r.label}: {r.characters:,} characters, ~{self.prompt_tokens(r):,} + {r.completion_tokens:,} "
                f"tokens" + ("" if self.fits(r) else "  (does not fit the context)")
                for n, r in enumerate(self.requests[:shown], 1)]
        if len(self.requests) > shown:
            rows.append(f"  … and {len(self.requests) - shown:,} more request(s)")
        return head + rows + [f"  note: {note}" for note in self.notes]

    def check(self, hint: str = "") -> None:
        """Raise :class:`~generator.llm.errors.PlanRefused` (with this plan, to print) when
        the plan must not be sent; ``hint`` is added to the words of a request too large."""
        from generator.llm.errors import PlanRefused

        refusal = self.refusal()
        if refusal is not None:
            raise PlanRefused(refusal + (hint if self.oversized() else ""), self)

    def refusal(self) -> str | None:
        """Why the plan must not be sent (over the budget, or a request past the context),
        with what to do; None when it may be."""
        too_big = self.oversized()
        if too_big:
            return (f"{len(too_big)} request(s) of this plan do not fit the model's context of "
                    f"{self.limits.context_tokens:,} tokens (request {too_big[0]} first): nothing was sent; if the "
                    "model's context is larger, say so with llm.context_tokens in carnet.yaml")
        if self.over_budget:
            return (f"the plan needs about {self.estimated_tokens:,} tokens, more than the run's budget of "
                    f"{self.limits.max_tokens:,}: nothing was sent; raise it with --max-tokens "
                    f"{_round_up(self.estimated_tokens):,} (or llm.max_tokens_per_run in carnet.yaml), or send less")
        return None


def _round_up(tokens: int) -> int:
    """A budget a little above ``tokens``, in round figures."""
    step: int = 10 ** max(3, len(str(tokens)) - 2)
    return (tokens // step + 1) * step


def limits_from(extra: Mapping[str, object], max_tokens: int | None = None) -> Limits:
    """The limits of ``llm:`` in carnet.yaml (``context_tokens``, ``max_tokens_per_run``,
    ``characters_per_token``), the run's budget overridden by ``--max-tokens``."""
    from generator.llm.errors import LLMConfigError

    raw = extra.get("llm")
    settings: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}

    def number(key: str, default: float, whole: bool) -> float:
        value = settings.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or \
                (whole and not float(value).is_integer()):
            kind = "a whole number" if whole else "a number"
            raise LLMConfigError(f"llm.{key} in carnet.yaml must be {kind} above 0, not {value!r}")
        return float(value)

    budget = max_tokens if max_tokens is not None else int(number("max_tokens_per_run", MAX_TOKENS_PER_RUN, True))
    return Limits(int(number("context_tokens", CONTEXT_TOKENS, True)), budget,
                  number("characters_per_token", CHARACTERS_PER_TOKEN, False))


@dataclass
class Ledger:
    """What a run spent, request by request (thread-safe: ``--jobs`` sends from several).

    Attributes:
        requests: requests answered with a usage the server reported.
        usage: the sum of those usages (each request counted once).
        unanswered: attempts that got no usable response (timeouts, refusals, errors), and
            ``unanswered_characters`` their prompts' characters: the server may have read
            them without saying, so their tokens are estimated, never reported.
        sent_characters: characters of the prompts whose prompt tokens were reported (the
            measured ratio).
        in_flight, in_flight_characters: requests sent and not yet answered (a run
            interrupted says them: the server may have read them).
    """

    requests: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    unanswered: int = 0
    unanswered_characters: int = 0
    sent_characters: int = 0
    in_flight: int = 0
    in_flight_characters: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def started(self, characters: int) -> None:
        with self._lock:
            self.in_flight += 1
            self.in_flight_characters += characters

    def ended(self, characters: int) -> None:
        with self._lock:
            self.in_flight -= 1
            self.in_flight_characters -= characters

    def answered(self, characters: int, usage: Mapping[str, int]) -> None:
        with self._lock:
            self.requests += 1
            for key, value in usage.items():
                self.usage[key] = self.usage.get(key, 0) + value
            if "prompt_tokens" in usage:
                self.sent_characters += characters

    def failed(self, characters: int) -> None:
        with self._lock:
            self.unanswered += 1
            self.unanswered_characters += characters

    def measured_ratio(self) -> float | None:
        """Characters per prompt token as the server counted them, once it has said."""
        prompt = self.usage.get("prompt_tokens", 0)
        return self.sent_characters / prompt if prompt and self.sent_characters else None

    @property
    def total_tokens(self) -> int:
        return self.usage.get("total_tokens", self.usage.get("prompt_tokens", 0) + self.usage.get("completion_tokens", 0))

    def summary(self) -> str:
        """One line: the tokens reported, and what went unreported (estimated by the ratio
        the server's counts measured, else the stated one)."""
        prompt, completion = self.usage.get("prompt_tokens", 0), self.usage.get("completion_tokens", 0)
        line = (f"tokens reported by the server: {prompt:,} prompt + {completion:,} completion = "
                f"{self.total_tokens:,} over {self.requests:,} answered request(s)")
        ratio = self.measured_ratio() or CHARACTERS_PER_TOKEN
        if self.unanswered:
            line += (f"; {self.unanswered:,} attempt(s) got no usable answer (about "
                     f"{math.ceil(self.unanswered_characters / ratio):,} prompt tokens the server may have read, "
                     "estimated: it reported none)")
        if self.in_flight:
            line += (f"; {self.in_flight:,} request(s) were still in flight, their connections closed (about "
                     f"{math.ceil(self.in_flight_characters / ratio):,} prompt tokens the server may have read, "
                     "estimated)")
        return line

    def remaining(self, limits: Limits) -> int:
        """Tokens left in the run's budget: reported ones spent, unreported ones estimated."""
        unreported = math.ceil(self.unanswered_characters / limits.characters_per_token)
        return limits.max_tokens - self.total_tokens - unreported

    def admits(self, limits: Limits, request: PlannedRequest) -> bool:
        """Whether the run's budget still covers ``request`` (by :meth:`estimate`). Requests
        in flight are not reserved: with ``--jobs N`` a run may pass its budget by at most
        the N − 1 requests sent beside the last one admitted."""
        return self.estimate(limits, request) <= self.remaining(limits)

    def estimate(self, limits: Limits, request: PlannedRequest) -> int:
        """What ``request`` may cost, by the ratio measured so far (or the stated one)."""
        ratio = self.measured_ratio() or limits.characters_per_token
        return math.ceil(request.characters / ratio) + request.completion_tokens
