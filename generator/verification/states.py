"""Per-pair verification states (INV-7), by a table-driven mapping. Pure.

verified       verbatim passed and a judge found the claim supported by the passage
weak           partially supported, or not judged yet (the reason says which)
unsourced      the judge found it unsupported, or its source is gone or broken
contested      a person contests it: shown over any automatic state
debate-sourced the claim cites a comment, not a passage of the minutes

A model's verdict changes a state only when its judge qualifies (DESIGN §9): a calibration
of that model and prompt at or above the site's bar. Otherwise it is a *suggestion*: the
pair keeps the state the build's own checks give it, and the suggestion is kept beside it,
with the judge's measured accuracy, for every view to show as what it is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from generator.anchoring.normalise import normalise_quote
from generator.corpus.verdicts import Contestation, Verdict
from generator.kinds import WikiKind
from generator.synthesis.audit import SourceState
from generator.synthesis.claims import quoted_fragments


class State(StrEnum):
    """A (claim, source) pair's state (a ``str``: it reads as its value in every output)."""

    VERIFIED = "verified"
    WEAK = "weak"
    UNSOURCED = "unsourced"
    CONTESTED = "contested"
    DEBATE_SOURCED = "debate-sourced"


class Reason(StrEnum):
    """Why a pair has its state: the three kinds of "weak" (not judged, quote not found
    verbatim, judged partial) and the source detached are told apart."""

    SUPPORTED = "supported"
    PARTIAL = "partial"
    NOT_JUDGED = "not-judged"
    VERBATIM_FAILED = "verbatim-failed"
    DETACHED = "detached"
    UNSUPPORTED = "unsupported"
    DELETED = "deleted"
    BROKEN = "broken"
    CONTESTED = "contested"
    COMMENT = "comment"


class Method(StrEnum):
    """What established a pair's state."""

    HUMAN = "human"  # a person: a contestation, or a verdict recorded by hand
    LLM = "llm"  # a model's verdict
    SCRIPTED = "scripted"  # a verdict written by a script
    BUILD = "build"  # no verdict: the build's own checks (verbatim, source present)


STATES = tuple(State)


@dataclass(frozen=True)
class Qualification:
    """Whether a model's verdicts may change a state: its judge measured on labelled pairs.

    Attributes:
        model, prompt_version: the judge, as its verdicts' provenance names it.
        accuracy: its balanced accuracy by its latest calibration (0 to 1); None: never
            calibrated.
        bar: the site's ``verification.min_balanced_accuracy``.
        date: when that calibration was made.
    """

    model: str
    prompt_version: str
    accuracy: float | None
    bar: float
    date: str = ""

    @property
    def qualified(self) -> bool:
        return self.accuracy is not None and self.accuracy >= self.bar


@dataclass(frozen=True)
class Verifier:
    """Who or what established a pair's state — decided here once, for every output.

    Attributes:
        method: :class:`Method`.
        model: the model that judged, when a model did.
        author: the person who contests, for a contestation (shown by the notebook's rule).
        date: when.
        accuracy: a qualified model judge's balanced accuracy (None for anything else).
    """

    method: Method
    model: str = ""
    author: str = ""
    date: str = ""
    accuracy: float | None = None


@dataclass(frozen=True)
class PairState:
    """Attributes:
        state: :class:`State`.
        reason: :class:`Reason`.
        verdict, contestation: the records that decided it, if any.
        suggestion: a model's verdict that decided nothing: its judge does not qualify.
        judge: the qualification of the model whose verdict (or suggestion) this pair has.
    """

    state: State
    reason: Reason
    verdict: Verdict | None = None
    contestation: Contestation | None = None
    suggestion: Verdict | None = None
    judge: Qualification | None = None

    @property
    def verifier(self) -> Verifier:
        """A contestation (a person) is shown over any verdict; else the verdict's
        provenance; else the build's own checks."""
        if self.contestation is not None:
            return Verifier(Method.HUMAN, author=self.contestation.author, date=self.contestation.date)
        if self.verdict is not None:  # the loader admits only known methods
            origin = self.verdict.provenance
            method = Method(origin["method"])
            accuracy = self.judge.accuracy if method is Method.LLM and self.judge is not None else None
            return Verifier(method, model=str(origin.get("model", "") or ""),
                            date=str(origin.get("date", "") or ""), accuracy=accuracy)
        return Verifier(Method.BUILD)


def verbatim(claim: str, passage: str, other_passages: list[str]) -> bool:
    """Every fragment the claim quotes («…», "…") is found literally (normalised) in this
    passage or in another source of the same claim: a quotation nobody said fails."""
    fragments = [normalise_quote(f) for f in quoted_fragments(claim)]
    sources = [normalise_quote(p) for p in [passage, *other_passages]]
    return all(any(fragment in source for source in sources) for fragment in fragments)


def pair_state(kind: WikiKind, source_state: str, broken: bool, verbatim_ok: bool, verdict: Verdict | None,
               contestation: Contestation | None, judge: Qualification | None = None) -> PairState:
    """The pair's state. ``judge``: the qualification of the model whose verdict ``verdict``
    is (None for a person's or a script's); when it does not qualify, the verdict is only a
    suggestion and the state is the one the pair would have without it."""
    state = _state(kind, source_state, broken, verbatim_ok, verdict, contestation)
    if state.verdict is None or judge is None:  # no verdict counts here (a source gone, a quote not found…)
        return state
    if judge.qualified:
        return replace(state, judge=judge)
    return replace(_state(kind, source_state, broken, verbatim_ok, None, contestation),
                   suggestion=state.verdict, judge=judge)


def _state(kind: WikiKind, source_state: str, broken: bool, verbatim_ok: bool, verdict: Verdict | None,
           contestation: Contestation | None) -> PairState:
    if contestation is not None:
        return PairState(State.CONTESTED, Reason.CONTESTED, verdict, contestation)
    if broken:  # before the kind: a [[com:…]] naming no comment (or one outside the perimeter) sources nothing
        return PairState(State.UNSOURCED, Reason.BROKEN)
    if kind is WikiKind.COM:
        return PairState(State.DEBATE_SOURCED, Reason.COMMENT, verdict)
    if source_state == SourceState.DELETED:
        return PairState(State.UNSOURCED, Reason.DELETED)
    if source_state == SourceState.DETACHED:
        return PairState(State.WEAK, Reason.DETACHED)
    if not verbatim_ok:
        return PairState(State.WEAK, Reason.VERBATIM_FAILED)
    if verdict is None:
        return PairState(State.WEAK, Reason.NOT_JUDGED)
    if verdict.verdict == "supported":
        return PairState(State.VERIFIED, Reason.SUPPORTED, verdict)
    if verdict.verdict == "partial":
        return PairState(State.WEAK, Reason.PARTIAL, verdict)
    return PairState(State.UNSOURCED, Reason.UNSUPPORTED, verdict)
