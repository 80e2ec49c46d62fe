"""Every (claim, source) pair of every article, with its verbatim check, cached
verdict, contestation and state. Pure: audits, corpus and records in."""

from __future__ import annotations

from dataclasses import dataclass

from generator.anchoring import AnchoredNote
from generator.corpus.model import Corpus, NoteType
from generator.problems import Problem, Severity
from generator.synthesis.audit import ArticleAudit, CitationLink
from generator.synthesis.claims import Claim
from generator.verification.records import VerificationRecords, text_hash
from generator.verification.states import PairState, pair_state, verbatim

STRICT_OPTIONS = ("unsourced-claims", "unsourced-in-adopted", "unjudged-pairs")


def verification_strict(extra: dict) -> tuple[str, ...]:
    """``verification: {strict: [...]}`` in carnet.yaml: which of :data:`STRICT_OPTIONS`
    become warnings (and so fail ``--strict``) instead of notices."""
    raw = extra.get("verification") or {}
    values = raw.get("strict", []) if isinstance(raw, dict) else []
    return tuple(v for v in values if v in STRICT_OPTIONS) if isinstance(values, list) else ()


@dataclass(frozen=True)
class Assessment:
    """One (claim, source) pair and what is known of it.

    Attributes:
        passage: the cited text (the extraction's passage, or the comment).
        claim_sha256, source_sha256: the verdict cache's key.
        verbatim_ok: quoted fragments found in the sources.
    """

    article: str
    claim: Claim
    link: CitationLink
    passage: str
    claim_sha256: str
    source_sha256: str
    verbatim_ok: bool
    state: PairState

    @property
    def judgeable(self) -> bool:
        """Sent to the judge: an extraction pair that passed verbatim and has no verdict yet."""
        return (self.link.marker.kind == "ext" and not self.link.broken and self.link.state == "present"
                and self.verbatim_ok and self.state.verdict is None and self.state.state != "contested")


def _passage(corpus: Corpus, anchored: dict[str, AnchoredNote], link: CitationLink) -> str:
    note = corpus.notes.get(link.note)
    if note is None:
        return ""
    extraction = next((e for e in note.extractions if e.id == link.extraction), None)
    if extraction is None:
        return ""
    if link.marker.kind == "com":
        comment = next((c for c in extraction.comments if c.id == link.marker.key), None)
        return (comment.text or "") if comment else ""
    return extraction.quote


def assess(corpus: Corpus, anchored: dict[str, AnchoredNote], audits: dict[str, ArticleAudit],
           records: VerificationRecords, strict: tuple[str, ...] = ()) -> tuple[dict[str, list[Assessment]], list[Problem]]:
    problems: list[Problem] = []
    result: dict[str, list[Assessment]] = {}
    for slug, audit in audits.items():
        note = corpus.notes[slug]
        adopted = note.type is NoteType.SYNTHESIS and note.article is not None and note.article.adopted
        by_claim: dict[str, list[CitationLink]] = {}
        for link in audit.links:
            by_claim.setdefault(link.claim, []).append(link)
        assessments = []
        for claim in audit.claims:
            if not claim.sourced:
                fatal = "unsourced-claims" in strict or ("unsourced-in-adopted" in strict and adopted)
                problems.append(Problem(note.source.file, claim.line, "unsourced-claim",
                                        f"unsourced claim: «{claim.text[:80]}{'…' if len(claim.text) > 80 else ''}»",
                                        "Cite the passage it rests on with [[ext:ID]], or rephrase it as context.",
                                        Severity.WARNING if fatal else Severity.NOTICE))
                continue
            links = by_claim.get(claim.id, [])
            passages = {id(link): _passage(corpus, anchored, link) for link in links}
            for link in links:
                passage = passages[id(link)]
                others = [p for key, p in passages.items() if key != id(link)]
                claim_hash, source_hash = text_hash(claim.text), text_hash(passage)
                verdict = records.verdict(claim_hash, source_hash)
                contestation = next((c for c in records.contestations if c.claim == claim.id
                                     and c.source in ("", link.marker.key)), None)
                ok = bool(passage) and verbatim(claim.text, passage, others)
                state = pair_state(link.marker.kind, link.state, bool(link.broken), ok, verdict, contestation)
                assessments.append(Assessment(slug, claim, link, passage, claim_hash, source_hash, ok, state))
        unjudged = [a for a in assessments if a.judgeable]
        if unjudged:
            problems.append(Problem(note.source.file, None, "unjudged-pairs",
                                    f"{len(unjudged)} (claim, source) pair(s) have no verdict yet",
                                    "Run 'carnet verify' with an endpoint, or record verdicts by hand "
                                    "(method: human) under content/verdicts/.",
                                    Severity.WARNING if "unjudged-pairs" in strict else Severity.NOTICE))
        result[slug] = assessments
    return result, problems
