"""Per-pair verification states (INV-7), by a table-driven mapping. Pure.

verified       verbatim passed and a judge found the claim supported by the passage
weak           partially supported, or not judged yet (the reason says which)
unsourced      the judge found it unsupported, or its source is gone or broken
contested      a person contests it: shown over any automatic state
debate-sourced the claim cites a comment, not a passage of the minutes
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.anchoring.normalise import normalise_quote
from generator.synthesis.claims import quoted_fragments
from generator.verification.records import Contestation, Verdict

STATES = ("verified", "weak", "unsourced", "contested", "debate-sourced")


@dataclass(frozen=True)
class PairState:
    """Attributes:
        state: one of :data:`STATES`.
        reason: a code saying why (``supported``, ``partial``, ``not-judged``, ``verbatim-failed``,
            ``detached``, ``unsupported``, ``deleted``, ``broken``, ``contested``, ``comment``).
    """

    state: str
    reason: str
    verdict: Verdict | None = None
    contestation: Contestation | None = None


def verbatim(claim: str, passage: str, other_passages: list[str]) -> bool:
    """Every fragment the claim quotes («…», "…") is found literally (normalised) in this
    passage or in another source of the same claim: a quotation nobody said fails."""
    fragments = [normalise_quote(f) for f in quoted_fragments(claim)]
    sources = [normalise_quote(p) for p in [passage, *other_passages]]
    return all(any(fragment in source for source in sources) for fragment in fragments)


def pair_state(kind: str, source_state: str, broken: bool, verbatim_ok: bool, verdict: Verdict | None,
               contestation: Contestation | None) -> PairState:
    if contestation is not None:
        return PairState("contested", "contested", verdict, contestation)
    if kind == "com":
        return PairState("debate-sourced", "comment", verdict)
    if broken:
        return PairState("unsourced", "broken")
    if source_state == "deleted":
        return PairState("unsourced", "deleted")
    if source_state == "detached":
        return PairState("weak", "detached")
    if not verbatim_ok:
        return PairState("weak", "verbatim-failed")
    if verdict is None:
        return PairState("weak", "not-judged")
    if verdict.verdict == "supported":
        return PairState("verified", "supported", verdict)
    if verdict.verdict == "partial":
        return PairState("weak", "partial", verdict)
    return PairState("unsourced", "unsupported", verdict)
