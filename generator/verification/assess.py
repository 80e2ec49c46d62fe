"""Every (claim, source) pair of every article, with its verbatim check, cached
verdict, contestation and state. Pure: audits, corpus and records in."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from generator.anchoring import AnchoredNote
from generator.corpus.load import SETTINGS_FILE
from generator.corpus.model import Corpus, NoteType
from generator.corpus.source import YamlMap
from generator.corpus.verdicts import Contestation, Verdict, VerificationRecords, text_hash
from generator.digest import digest_of
from generator.kinds import WikiKind
from generator.problems import Problem, Severity
from generator.synthesis.audit import ArticleAudit, CitationLink, SourceState
from generator.synthesis.claims import Claim
from generator.verification.states import Method, PairState, Qualification, State, pair_state, verbatim

STRICT_OPTIONS = ("unsourced-claims", "unsourced-in-adopted", "unjudged-pairs")
MIN_BALANCED_ACCURACY = 0.7
"""The default bar a judge's balanced accuracy must reach for its verdicts to change a state
(chance on three balanced labels is 1/3)."""


def verification_strict(extra: Mapping[str, object]) -> tuple[str, ...]:
    """``verification: {strict: [...]}`` in carnet.yaml: which of :data:`STRICT_OPTIONS`
    become warnings (and so fail ``--strict``) instead of notices."""
    raw = extra.get("verification") or {}
    values = raw.get("strict", []) if isinstance(raw, dict) else []
    return tuple(v for v in values if v in STRICT_OPTIONS) if isinstance(values, list) else ()


def min_balanced_accuracy(extra: Mapping[str, object]) -> tuple[float, Problem | None]:
    """``verification: {min_balanced_accuracy: …}`` in carnet.yaml: the bar, and the problem
    with it (the default bar stands in for a value that is not a number from 0 to 1)."""
    raw = extra.get("verification")
    if not isinstance(raw, dict) or "min_balanced_accuracy" not in raw:
        return MIN_BALANCED_ACCURACY, None
    value = raw["min_balanced_accuracy"]
    if not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value <= 1:
        return float(value), None
    line = raw.line_of("min_balanced_accuracy") if isinstance(raw, YamlMap) else None
    return MIN_BALANCED_ACCURACY, Problem(
        SETTINGS_FILE, line, "invalid-value",
        f"verification.min_balanced_accuracy must be a number from 0 to 1, not {value!r}",
        f"Write e.g. 'min_balanced_accuracy: {MIN_BALANCED_ACCURACY}' under 'verification:' (the balanced accuracy "
        "a judge must reach on the labelled pairs for its verdicts to change a state; chance is 0.33), or remove it.")


def qualification(records: VerificationRecords, verdict: Verdict | None, bar: float) -> Qualification | None:
    """The qualification of the model whose verdict this is (None for a person's or a
    script's): by the latest calibration of that model with that prompt version."""
    if verdict is None or verdict.provenance.get("method") != Method.LLM:
        return None
    model = str(verdict.provenance.get("model", "") or "")
    version = str(verdict.provenance.get("prompt_version", "") or "")
    calibration = records.calibration(model, version)
    if calibration is None:
        return Qualification(model, version, None, bar)
    return Qualification(model, version, calibration.balanced_accuracy, bar, calibration.date)


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
    def claim_text(self) -> str:
        return self.claim.text

    @property
    def source(self) -> str:
        """The cited source as a verdict names it (``ext:ID``, ``com:ID``, ``quote:ID``)."""
        return f"{self.link.marker.kind}:{self.link.marker.key}"

    @property
    def judgeable(self) -> bool:
        """Sent to the judge: an extraction (or answer quote) pair that passed verbatim and has
        no verdict yet."""
        return (self.link.marker.kind in (WikiKind.EXT, WikiKind.QUOTE) and not self.link.broken and self.link.state is SourceState.PRESENT
                and self.verbatim_ok and self.state.verdict is None and self.state.suggestion is None
                and self.state.state is not State.CONTESTED)


def _passage(corpus: Corpus, anchored: Mapping[str, AnchoredNote], link: CitationLink) -> str:
    if link.marker.kind is WikiKind.QUOTE:  # an answer's quote: the note's own text where it lands now
        return link.text
    note = corpus.notes.get(link.note)
    if note is None:
        return ""
    extraction = next((e for e in note.extractions if e.id == link.extraction), None)
    if extraction is None:
        return ""
    if link.marker.kind is WikiKind.COM:
        comment = next((c for c in extraction.comments if c.id == link.marker.key), None)
        return (comment.text or "") if comment else ""
    return extraction.quote


ArticlePairs = tuple[list["Assessment"], list[Problem]]

PairsMaker = Callable[[str, Callable[[], ArticlePairs]], ArticlePairs]
"""``pairs_of(article, compute)`` is ``compute()``, made however the caller likes (a build recalls
an article's pairs by their key: :func:`pairs_key`)."""


def pairs_made_here(article: str, compute: Callable[[], ArticlePairs]) -> ArticlePairs:
    return compute()


def assess(corpus: Corpus, anchored: Mapping[str, AnchoredNote], audits: dict[str, ArticleAudit],
           records: VerificationRecords, strict: tuple[str, ...] = (),
           pairs_of: PairsMaker = pairs_made_here) -> tuple[dict[str, list[Assessment]], list[Problem]]:
    """Every article's pairs with their states (each article's made by ``pairs_of``), and the
    problems they raise."""
    bar, bar_problem = min_balanced_accuracy(corpus.settings.extra)
    problems: list[Problem] = [bar_problem] if bar_problem else []
    result: dict[str, list[Assessment]] = {}
    # each claim's contestations, in the files' order: looked up, not searched for each claim
    # (a wiki of thousands of claims and a file of thousands of contestations: their product)
    contestations: dict[tuple[str, str], list[Contestation]] = {}
    for record in records.contestations:
        contestations.setdefault((record.article, record.claim), []).append(record)
    for slug, audit in audits.items():
        compute = functools.partial(_article_pairs, corpus, anchored, slug, audit, records, contestations, strict,
                                    bar)
        result[slug], found = pairs_of(slug, compute)
        problems += found
    problems += stray_problems(audits, result, records)
    return result, problems


def pairs_key(audit_key: str, strict: tuple[str, ...], records: VerificationRecords, article: str,
              bar: float = MIN_BALANCED_ACCURACY) -> str:
    """What an article's pairs read: its audit (whose key digests the notes of the passages
    it cites, and the article's own files), the strict options, the verdicts and
    contestations of its own files (:attr:`VerificationRecords.by_article`), and the
    qualification of each model that judged them (the calibrations and the bar, ``bar``:
    :func:`min_balanced_accuracy`); nothing else governs them."""
    own = records.by_article.get(article)
    judges = sorted({(q.model, q.prompt_version, q.accuracy, q.date) for v in (own[0] if own else [])
                     if (q := qualification(records, v, bar)) is not None}, key=repr)
    return digest_of(("pairs", audit_key, strict, own, bar, judges))


def _article_pairs(corpus: Corpus, anchored: Mapping[str, AnchoredNote], slug: str, audit: ArticleAudit,
                   records: VerificationRecords, contestations: Mapping[tuple[str, str], list[Contestation]],
                   strict: tuple[str, ...], bar: float = MIN_BALANCED_ACCURACY
                   ) -> tuple[list[Assessment], list[Problem]]:
    """One article's pairs and the problems they raise: its own records alone govern them
    (``contestations``: by article and claim)."""
    problems: list[Problem] = []
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
        # a quoted fragment may be found in any source of the claim: one answer per claim,
        # not one per pair (10,000 markers on one claim were 10,000² normalisations)
        quoted_ok = verbatim(claim.text, "", list(passages.values()))
        claim_hash = text_hash(claim.text)
        contested = contestations.get((slug, claim.id), [])
        for link in links:
            passage = passages[id(link)]
            source_hash = text_hash(passage)
            # only this article's own files govern its pairs; no passage, nothing to judge
            verdict = records.verdict(slug, claim_hash, source_hash) if passage else None
            contestation = next((c for c in contested if c.source in ("", link.marker.key)), None)
            ok = bool(passage) and quoted_ok
            state = pair_state(link.marker.kind, link.state, bool(link.broken), ok, verdict, contestation,
                               qualification(records, verdict, bar))
            assessments.append(Assessment(slug, claim, link, passage, claim_hash, source_hash, ok, state))
    problems += suggestion_problems(assessments)
    unjudged = [a for a in assessments if a.judgeable]
    if unjudged:
        problems.append(Problem(note.source.file, None, "unjudged-pairs",
                                f"{len(unjudged)} (claim, source) pair(s) have no verdict yet",
                                "Run 'carnet verify' with an endpoint, or record verdicts by hand "
                                "(method: human) under content/verdicts/.",
                                Severity.WARNING if "unjudged-pairs" in strict else Severity.NOTICE))
    return assessments, problems


def suggestion_problems(assessments: list[Assessment]) -> list[Problem]:
    """A warning (``--strict`` fails) at each verdict of a judge that does not qualify: it is
    published as a suggestion and changes no state, which a CI maintainer should hear of."""
    problems: dict[tuple[str, int], Problem] = {}
    for assessment in assessments:
        suggestion, judge = assessment.state.suggestion, assessment.state.judge
        if suggestion is None or judge is None or (suggestion.file, suggestion.line) in problems:
            continue
        measured = (f"measured at {judge.accuracy:.2f} balanced accuracy ({judge.date}), under the bar of {judge.bar:.2f}"
                    if judge.accuracy is not None else "never calibrated with this prompt")
        problems[(suggestion.file, suggestion.line)] = Problem(
            suggestion.file, suggestion.line, "unqualified-judge",
            f"the verdict {suggestion.verdict!r} of {judge.model or 'an unnamed model'}, a judge {measured}, "
            "is published as a suggestion: the pair keeps its state",
            "Run 'carnet verify --calibrate' to measure the judge (the bar is verification.min_balanced_accuracy "
            "in carnet.yaml), or judge again with a model that qualifies, or delete the verdict.",
            Severity.WARNING)
    return list(problems.values())


def _stray(directory: str, article: str, owners: list[str], articles: dict[str, ArticleAudit]
           ) -> tuple[str, str] | None:
    """(message, hint) for a record of ``directory/article.yaml`` that applies to nothing;
    None when it applies, or is only stale (its own article's text changed since)."""
    if article in articles and (article in owners or not owners):
        return None
    where = " or ".join(f"{directory}/{owner}.yaml" for owner in owners)
    record = directory.removesuffix("s")  # verdict, contestation
    if article not in articles:
        message = f"{directory}/{article}.yaml is named after no wiki or synthesis: this {record} applies to nothing"
    else:
        shown = " or ".join(repr(owner) for owner in owners)
        message = (f"this {record} is about a claim of {shown}, not of {article!r} whose file this is: "
                   "it applies to nothing")
    hint = (f"Move it into {where}, the file of the article it is about, or delete it." if owners else
            f"Move it into {directory}/<article>.yaml, named after the article it is about, or delete it.")
    return message, hint


def stray_problems(audits: dict[str, ArticleAudit], assessments: dict[str, list[Assessment]],
                   records: VerificationRecords) -> list[Problem]:
    """A verdict or contestation applies only to the article its file is named after, so
    a reader can tell which record governs a pair; one in another file is reported where
    it is written (it changes nothing)."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for slug, items in assessments.items():
        for a in items:
            owners = pairs.setdefault((a.claim_sha256, a.source_sha256), [])
            if slug not in owners:
                owners.append(slug)
    claims: dict[str, list[str]] = {}
    for slug, audit in audits.items():
        for claim in audit.claims:
            if slug not in claims.setdefault(claim.id, []):
                claims[claim.id].append(slug)
    problems = []
    for verdict in records.records:
        stray = _stray("verdicts", verdict.article, pairs.get((verdict.claim_sha256, verdict.source_sha256), []), audits)
        if stray is not None:
            problems.append(Problem(verdict.file, verdict.line, "stray-verdict", *stray, Severity.WARNING))
    for contestation in records.contestations:
        stray = _stray("contestations", contestation.article, claims.get(contestation.claim, []), audits)
        if stray is not None:
            problems.append(Problem(contestation.file, contestation.line, "stray-contestation", *stray,
                                    Severity.WARNING))
    return problems
