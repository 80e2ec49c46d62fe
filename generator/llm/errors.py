"""Errors of the LLM seam. All are :class:`~generator.problems.CarnetError`: the CLI
prints them without a traceback, and the command writes nothing."""

from generator.problems import CarnetError


class LLMError(CarnetError):
    """Base of every failure of a model call.

    ``usage``: the token counts the server reported for the calls this failure cost
    (an unusable answer was still spent; a command that made several calls before
    failing adds theirs), as in :class:`~generator.llm.client.Provenance`.
    """

    def __init__(self, message: str, usage: dict[str, int] | None = None) -> None:
        super().__init__(message)
        self.usage: dict[str, int] = dict(usage or {})


class LLMConfigError(LLMError):
    """``llm:`` in carnet.yaml is missing or unusable, or the key's variable is unset."""


class LLMTransportError(LLMError):
    """The endpoint could not be reached, did not finish answering within ``llm.timeout`` (a
    deadline for the whole request, however slowly it sends), or kept failing after retries
    (all of which end within (``llm.max_retries`` + 1) × ``llm.timeout``)."""


class LLMAnswerError(LLMError):
    """The answer is truncated, not JSON, too large, does not follow the requested
    schema, or breaks the request's rules (an item it was not asked about, a
    placeholder where text was asked for)."""


class ToolsRefused(LLMError):
    """The endpoint does not take tool calls (function calling): a caller that can do
    without them (``carnet ask`` retrieves itself) does."""


class PlanRefused(LLMConfigError):
    """A command's plan does not fit (a request past the model's context, or the whole run
    past its budget): nothing was sent. ``plan``: the plan, to print (None when there is
    none to show). An :class:`LLMConfigError`, so the command exits 2 (usage), not 3."""

    def __init__(self, message: str, plan: object | None) -> None:
        super().__init__(message)
        self.plan = plan


class BudgetSpent(LLMError):
    """A request not sent: the run's budget (``--max-tokens``) would not cover it."""
