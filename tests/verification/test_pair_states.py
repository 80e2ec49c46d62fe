"""Per-pair verification states (INV-7) without a build: the state table, its precedence,
the verifier each state names, the verbatim check, the panel's tally, and ``assess`` over
a tiny corpus with verdict and contestation records written in memory."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pytest

from generator.corpus.verdicts import Calibration, Contestation, Verdict, VerificationRecords, text_hash
from generator.kinds import WikiKind
from generator.problems import Problem, Severity
from generator.synthesis.audit import SourceState
from generator.synthesis.claims import Claim, Marker
from generator.verification.assess import STRICT_OPTIONS, Assessment, assess, verification_strict
from generator.verification.states import Method, PairState, Reason, State, Verifier, pair_state, verbatim
from generator.verification.tally import WEAK_REASONS, Tally, tally
from support.tiny import Analysed, analysed, com, ext, note_md


def verdict(value: str, method: str = "llm", **provenance: Any) -> Verdict:
    return Verdict("sha256:c", "sha256:s", value, "r", {"method": method, **provenance}, "verdicts/w.yaml", 3)


SUPPORTED, PARTIAL, UNSUPPORTED = verdict("supported"), verdict("partial"), verdict("unsupported")
CONTEST = Contestation("claim-x", "", "Léa", "2025-06-02", "faux", "contestations/w.yaml", 2)
PRESENT, DETACHED, DELETED = SourceState.PRESENT, SourceState.DETACHED, SourceState.DELETED

# kind, source state, broken, verbatim ok, verdict, contestation → state, reason, records kept
TABLE = [
    ("supported", "ext", PRESENT, False, True, SUPPORTED, None, State.VERIFIED, Reason.SUPPORTED, "verdict"),
    ("partial", "ext", PRESENT, False, True, PARTIAL, None, State.WEAK, Reason.PARTIAL, "verdict"),
    ("not judged", "ext", PRESENT, False, True, None, None, State.WEAK, Reason.NOT_JUDGED, ""),
    ("unsupported", "ext", PRESENT, False, True, UNSUPPORTED, None, State.UNSOURCED, Reason.UNSUPPORTED, "verdict"),
    # the build's own checks come before any verdict: a supported verdict does not rescue them
    ("verbatim failed", "ext", PRESENT, False, False, SUPPORTED, None, State.WEAK, Reason.VERBATIM_FAILED, ""),
    ("detached", "ext", DETACHED, False, True, SUPPORTED, None, State.WEAK, Reason.DETACHED, ""),
    ("detached before verbatim", "ext", DETACHED, False, False, None, None, State.WEAK, Reason.DETACHED, ""),
    ("deleted", "ext", DELETED, False, True, SUPPORTED, None, State.UNSOURCED, Reason.DELETED, ""),
    ("broken", "ext", PRESENT, True, True, SUPPORTED, None, State.UNSOURCED, Reason.BROKEN, ""),
    ("broken before deleted", "ext", DELETED, True, True, None, None, State.UNSOURCED, Reason.BROKEN, ""),
    # a person is shown over any automatic state, and the verdict stays visible under it
    ("contested over verified", "ext", PRESENT, False, True, SUPPORTED, CONTEST, State.CONTESTED, Reason.CONTESTED,
     "verdict contestation"),
    ("contested over broken", "ext", DELETED, True, False, None, CONTEST, State.CONTESTED, Reason.CONTESTED,
     "contestation"),
    ("comment", "com", PRESENT, False, True, None, None, State.DEBATE_SOURCED, Reason.COMMENT, ""),
    ("comment with a verdict", "com", PRESENT, False, True, PARTIAL, None, State.DEBATE_SOURCED, Reason.COMMENT,
     "verdict"),
    ("contested comment", "com", PRESENT, False, True, None, CONTEST, State.CONTESTED, Reason.CONTESTED, "contestation"),
]


@pytest.mark.parametrize("kind,source,broken,ok,judged,contest,state,reason,kept", [t[1:] for t in TABLE],
                         ids=[t[0] for t in TABLE])
def test_state_table(kind: str, source: SourceState, broken: bool, ok: bool, judged: Verdict | None,
                     contest: Contestation | None, state: State, reason: Reason, kept: str) -> None:
    result = pair_state(WikiKind(kind), source, broken, ok, judged, contest)
    assert (result.state, result.reason) == (state, reason)
    # the records that decided it travel with it, and only those
    assert result.verdict is (judged if "verdict" in kept else None)
    assert result.contestation is (contest if "contestation" in kept else None)


def test_every_state_and_reason_is_reachable() -> None:
    assert {t[7] for t in TABLE} == set(State)
    assert {t[8] for t in TABLE} == set(Reason)


@pytest.mark.parametrize("source", [DELETED, PRESENT], ids=["unknown comment", "comment outside the perimeter"])
def test_a_broken_comment_citation_is_unsourced(source: SourceState) -> None:
    result = pair_state(WikiKind.COM, source, True, False, None, None)
    assert (result.state, result.reason) == (State.UNSOURCED, Reason.BROKEN)


def test_an_unknown_comment_marker_is_unsourced_through_assess() -> None:
    notes = dict(NOTES, w=note_md("Le conseil en a débattu [[com:nope]].\n", type="wiki", date=None, notebooks=NB))
    result = analysed(notes, EXTRACTIONS)
    (link,) = result.audits["w"].links
    assert (link.broken, link.state) == ("unknown", SourceState.DELETED)  # the audit knows it is broken
    assessments, _problems = assess(result.corpus, result.anchored, result.audits, result.corpus.verification)
    assert states(assessments["w"]) == [("nope", State.UNSOURCED, Reason.BROKEN)]


VERIFIERS = [
    ("no record: the build's checks", PairState(State.WEAK, Reason.NOT_JUDGED), Verifier(Method.BUILD)),
    ("a model's verdict", PairState(State.VERIFIED, Reason.SUPPORTED, verdict("supported", model="m-7b", date="2025-06-01")),
     Verifier(Method.LLM, model="m-7b", date="2025-06-01")),
    ("a scripted verdict", PairState(State.WEAK, Reason.PARTIAL, verdict("partial", "scripted")),
     Verifier(Method.SCRIPTED)),
    ("a verdict by hand", PairState(State.VERIFIED, Reason.SUPPORTED, verdict("supported", "human", date="2025-01-02")),
     Verifier(Method.HUMAN, date="2025-01-02")),
    ("a contestation over a verdict", PairState(State.CONTESTED, Reason.CONTESTED, SUPPORTED, CONTEST),
     Verifier(Method.HUMAN, author="Léa", date="2025-06-02")),
]


@pytest.mark.parametrize("pair,expected", [v[1:] for v in VERIFIERS], ids=[v[0] for v in VERIFIERS])
def test_verifier(pair: PairState, expected: Verifier) -> None:
    assert pair.verifier == expected


PASSAGE = "Le conseil vote la répartition à l'unanimité."
VERBATIM = [
    ("no quotation: nothing to check", "Le conseil a voté.", PASSAGE, [], True),
    ("quotation found, apostrophes folded", "Il a voté « à l’unanimité ».", PASSAGE, [], True),
    ("quotation nobody said", "Il a voté « à la majorité ».", PASSAGE, [], False),
    ("found in another source of the claim", "Il a voté « à la majorité ».", PASSAGE, ["Adopté à la majorité."], True),
    ("every fragment must be found", "« la répartition » puis « à la majorité »", PASSAGE, [], False),
    ("no passage at all", "Il a voté « à l'unanimité ».", "", [], False),
]


@pytest.mark.parametrize("claim,passage,others,expected", [v[1:] for v in VERBATIM], ids=[v[0] for v in VERBATIM])
def test_verbatim(claim: str, passage: str, others: list[str], expected: bool) -> None:
    assert verbatim(claim, passage, others) is expected


# ---------------------------------------------------------------- tally

@dataclass(frozen=True)
class Fake:
    """What tally reads of an assessment."""

    state: PairState
    judgeable: bool = False


def _claim(rank: int, sourced: bool) -> Claim:
    markers = (Marker(WikiKind.EXT, "x", 0, 0, rank),) if sourced else ()
    return Claim(f"claim-{rank}", "", 0, rank, f"claim {rank}", markers, rank)


def test_tally_counts_marks_by_state_and_weak_by_reason() -> None:
    pairs = [Fake(PairState(State.VERIFIED, Reason.SUPPORTED)),
             Fake(PairState(State.WEAK, Reason.NOT_JUDGED), judgeable=True),
             Fake(PairState(State.WEAK, Reason.NOT_JUDGED), judgeable=True),
             Fake(PairState(State.WEAK, Reason.DETACHED)),
             Fake(PairState(State.UNSOURCED, Reason.BROKEN)),
             Fake(PairState(State.DEBATE_SOURCED, Reason.COMMENT))]
    claims = [_claim(1, True), _claim(2, False), _claim(3, False)]
    result = tally(pairs, claims)
    # one mark per citation plus one per unsourced claim, in State order
    assert list(result.states.items()) == [(State.VERIFIED, 1), (State.WEAK, 3), (State.UNSOURCED, 3),
                                           (State.CONTESTED, 0), (State.DEBATE_SOURCED, 1)]
    assert sum(result.states.values()) == len(pairs) + 2
    # weak reasons in WEAK_REASONS order, only those present
    assert list(result.weak.items()) == [(Reason.NOT_JUDGED, 2), (Reason.DETACHED, 1)]
    assert (result.unsourced_claims, result.unjudged) == (2, 2)
    assert WEAK_REASONS == (Reason.NOT_JUDGED, Reason.VERBATIM_FAILED, Reason.PARTIAL, Reason.DETACHED)


def test_tally_of_nothing() -> None:
    assert tally([], []) == Tally(dict.fromkeys(State, 0), {}, 0, 0)


# ---------------------------------------------------------------- assess over a tiny corpus

NB = {"conseil": {"theme": ["Budget"]}}
NOTES = {
    "n1": note_md("Le budget s'élève à quatre mille euros.\n\nLa réserve est de 800 euros.\n", notebooks=NB),
    "n2": note_md("Le foyer ouvre le mercredi.\n", notebooks={"conseil": {"theme": ["Foyer"]}}),
}
EXTRACTIONS = {
    "n1": [ext("b1", "Le budget s'élève à quatre mille euros", comments=[com("c1", "disagree", "Il manque la MDL.")]),
           ext("b2", "La réserve est de 800 euros"),
           ext("d1", "une phrase qui n'est nulle part")],
    "n2": [ext("f1", "Le foyer ouvre le mercredi")],
}
BODY = ("Le budget est de quatre mille euros [[ext:b1]].\n\n"
        "La réserve est « de 800 euros » [[ext:b2]].\n\n"
        "La réserve est « de 900 euros » [[ext:b2]].\n\n"
        "Un passage perdu [[ext:d1]].\n\n"
        "Une source inconnue [[ext:nope]].\n\n"
        "Le foyer ouvre [[ext:f1]].\n\n"
        "Il manque la part de la MDL [[com:c1]].\n\n"
        "Cette phrase ne cite rien du tout.\n")


def sha(text: str) -> str:
    """The cache key of a text, recomputed here: white space folded, sha256."""
    return "sha256:" + hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def judged(claim: str, passage: str, value: str, date: str, model: str = "m") -> dict[str, Any]:
    return {"claim_sha256": sha(claim), "source_sha256": sha(passage), "verdict": value, "rationale": "r",
            "provenance": {"method": "llm", "model": model, "date": date}}


def run(verdicts: dict[str, list[dict[str, Any]]] | None = None,
        contestations: dict[str, list[dict[str, Any]]] | None = None,
        strict: tuple[str, ...] = (), calibrated: dict[str, float] | None = None
        ) -> tuple[dict[str, list[Assessment]], list[Problem], Analysed]:
    """``calibrated``: model → the balanced accuracy a calibration (with no prompt version, as
    :func:`judged` records none) gives it."""
    notes = dict(NOTES, w=note_md(BODY, type="wiki", date=None, notebooks=NB))
    result = analysed(notes, EXTRACTIONS, verdicts=verdicts, contestations=contestations)
    result.corpus.verification.calibrations.extend(
        Calibration(model, "", "2025-01-01", accuracy, {}, "verdicts/calibrations.yaml", n + 1)
        for n, (model, accuracy) in enumerate((calibrated or {}).items()))
    assessments, problems = assess(result.corpus, result.anchored, result.audits, result.corpus.verification, strict)
    return assessments, problems, result


def states(assessments: list[Assessment]) -> list[tuple[str, State, Reason]]:
    return [(a.link.marker.key, a.state.state, a.state.reason) for a in assessments]


def test_assess_without_records() -> None:
    assessments, problems, _result = run()
    assert states(assessments["w"]) == [
        ("b1", State.WEAK, Reason.NOT_JUDGED),
        ("b2", State.WEAK, Reason.NOT_JUDGED),  # its quotation is in the passage
        ("b2", State.WEAK, Reason.VERBATIM_FAILED),  # «de 900 euros» is said nowhere
        ("d1", State.WEAK, Reason.DETACHED),
        ("nope", State.UNSOURCED, Reason.BROKEN),
        ("f1", State.UNSOURCED, Reason.BROKEN),  # outside the perimeter
        ("c1", State.DEBATE_SOURCED, Reason.COMMENT)]
    pairs = {a.link.marker.key + str(n): a for n, a in enumerate(assessments["w"])}
    # the verdict cache's key is recomputed here from the texts
    assert pairs["b10"].claim_sha256 == sha("Le budget est de quatre mille euros") == text_hash(pairs["b10"].claim.text)
    assert pairs["b10"].source_sha256 == sha("Le budget s'élève à quatre mille euros")
    assert pairs["c16"].passage == "Il manque la MDL."
    assert pairs["nope4"].passage == "" and not pairs["nope4"].verbatim_ok
    # only extraction pairs that passed the build's checks go to the judge
    assert [a.link.marker.key for a in assessments["w"] if a.judgeable] == ["b1", "b2"]
    codes = sorted((p.code, p.severity) for p in problems)
    assert codes == [("unjudged-pairs", Severity.NOTICE), ("unsourced-claim", Severity.NOTICE)]
    assert "2 (claim, source) pair(s)" in next(p.message for p in problems if p.code == "unjudged-pairs")


def test_latest_verdict_wins_whatever_the_model() -> None:
    claim, passage = "Le budget est de quatre mille euros", "Le budget s'élève à quatre mille euros"
    records = {"w": [judged(claim, passage, "supported", "2025-06-01", "big"),
                     judged(claim, passage, "unsupported", "2025-05-01", "small"),  # older, written later
                     judged("La réserve est « de 800 euros »", "La réserve est de 800 euros", "partial", "2025-06-01")]}
    assessments, problems, _result = run(verdicts=records, calibrated={"big": 0.9, "small": 0.9, "m": 0.8})
    assert states(assessments["w"])[:2] == [("b1", State.VERIFIED, Reason.SUPPORTED), ("b2", State.WEAK, Reason.PARTIAL)]
    first = assessments["w"][0].state
    assert first.verifier == Verifier(Method.LLM, model="big", date="2025-06-01", accuracy=0.9)
    assert not any(a.judgeable for a in assessments["w"])
    assert "unjudged-pairs" not in {p.code for p in problems}


def test_a_verdict_in_another_articles_file_applies_to_nothing() -> None:
    claim, passage = "Le budget est de quatre mille euros", "Le budget s'élève à quatre mille euros"
    assessments, problems, _result = run(verdicts={"autre": [judged(claim, passage, "supported", "2025-06-01")]})
    assert states(assessments["w"])[0] == ("b1", State.WEAK, Reason.NOT_JUDGED)
    (stray,) = [p for p in problems if p.code == "stray-verdict"]
    assert (stray.file, stray.severity) == ("verdicts/autre.yaml", Severity.WARNING)
    assert "named after no wiki or synthesis" in stray.message


def test_contestations_whole_claim_or_one_source() -> None:
    _a, _p, result = run()
    claims = {c.text: c.id for c in result.audits["w"].claims}
    records = {"w": [
        {"claim": claims["Le budget est de quatre mille euros"], "author": "Léa", "date": "2025-06-02", "reason": "non"},
        {"claim": claims["Le foyer ouvre"], "source": "autre", "author": "Léa", "date": "2025-06-02", "reason": "non"},
        {"claim": claims["Il manque la part de la MDL"], "source": "c1", "author": "Max", "date": "2025-06-03",
         "reason": "non"}]}
    assessments, problems, _result = run(contestations=records)
    assert states(assessments["w"]) == [
        ("b1", State.CONTESTED, Reason.CONTESTED),
        ("b2", State.WEAK, Reason.NOT_JUDGED), ("b2", State.WEAK, Reason.VERBATIM_FAILED),
        ("d1", State.WEAK, Reason.DETACHED), ("nope", State.UNSOURCED, Reason.BROKEN),
        ("f1", State.UNSOURCED, Reason.BROKEN),  # contested on another source only
        ("c1", State.CONTESTED, Reason.CONTESTED)]
    assert assessments["w"][-1].state.verifier == Verifier(Method.HUMAN, author="Max", date="2025-06-03")
    assert not assessments["w"][0].judgeable, "a contested pair is not sent to the judge"
    assert "stray-contestation" not in {p.code for p in problems}


@pytest.mark.parametrize("extra,expected", [
    ({}, ()),
    ({"verification": {"strict": ["unjudged-pairs", "bogus", "unsourced-claims"]}}, ("unjudged-pairs", "unsourced-claims")),
    ({"verification": {"strict": "unjudged-pairs"}}, ()),  # not a list: nothing
    ({"verification": ["unjudged-pairs"]}, ()),
])
def test_verification_strict_options(extra: dict[str, Any], expected: tuple[str, ...]) -> None:
    assert verification_strict(extra) == expected
    assert set(expected) <= set(STRICT_OPTIONS)


def test_strict_options_raise_notices_to_warnings() -> None:
    _a, problems, _result = run(strict=("unsourced-claims", "unjudged-pairs"))
    assert sorted((p.code, p.severity) for p in problems) == [("unjudged-pairs", Severity.WARNING),
                                                             ("unsourced-claim", Severity.WARNING)]


def test_verification_records_lookup_is_per_article() -> None:
    records = VerificationRecords()
    found = Verdict("sha256:c", "sha256:s", "supported", "", {"method": "human"}, "verdicts/w.yaml", 1)
    records.verdicts[("w", "sha256:c", "sha256:s")] = found
    assert records.verdict("w", "sha256:c", "sha256:s") is found
    assert records.verdict("autre", "sha256:c", "sha256:s") is None
    assert found.article == "w"
