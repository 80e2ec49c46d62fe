"""What an article's audit panel counts, decided once in the core (issue 20): every pair
by its state, weak ones also by their reason, and every unsourced claim as one more
"unsourced" — so the panel's counts equal the marks a reader sees in the body (one per
citation, one per unsourced claim). Pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from generator.synthesis.claims import Claim
from generator.verification.states import PairState, Reason, State

WEAK_REASONS = (Reason.NOT_JUDGED, Reason.VERBATIM_FAILED, Reason.PARTIAL, Reason.DETACHED)
"""The kinds of "weak", told apart wherever a weak pair is shown."""


class _Assessed(Protocol):
    @property
    def state(self) -> PairState: ...

    @property
    def judgeable(self) -> bool: ...


@dataclass(frozen=True)
class Tally:
    """Attributes:
        states: marks per state, in :class:`State` order (unsourced claims included).
        weak: weak pairs per reason, in :data:`WEAK_REASONS` order (those present).
        unsourced_claims: claims that cite nothing.
        unjudged: pairs that passed the build's checks and await a verdict.
    """

    states: dict[State, int] = field(default_factory=dict)
    weak: dict[Reason, int] = field(default_factory=dict)
    unsourced_claims: int = 0
    unjudged: int = 0


def tally(assessments: Iterable[_Assessed], claims: Iterable[Claim]) -> Tally:
    states = dict.fromkeys(State, 0)
    weak = dict.fromkeys(WEAK_REASONS, 0)
    unjudged = 0
    for assessment in assessments:
        states[assessment.state.state] += 1
        if assessment.state.state is State.WEAK:
            weak[assessment.state.reason] = weak.get(assessment.state.reason, 0) + 1
        unjudged += assessment.judgeable
    unsourced = sum(not claim.sourced for claim in claims)
    states[State.UNSOURCED] += unsourced
    return Tally(states, {reason: n for reason, n in weak.items() if n}, unsourced, unjudged)
