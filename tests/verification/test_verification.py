"""Citation verification: the state table, the verbatim check, the verdict cache and its
invalidation, batched judging over real HTTP with a failing batch, and the example site."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from generator.corpus.verdicts import Contestation, Verdict
from generator.kinds import WikiKind
from generator.llm import LLMClient, LLMSettings
from generator.pipeline import build, check_content
from generator.problems import Severity
from generator.verification.judge import judge
from generator.verification.states import pair_state, verbatim
from support.corpus import line_of, replace, site_files, write
from support.llm_server import reply, status

SUPPORTED = Verdict("c", "s", "supported", "oui", {"method": "human"}, "f", 1)
PARTIAL = Verdict("c", "s", "partial", "en partie", {"method": "llm"}, "f", 1)
UNSUPPORTED = Verdict("c", "s", "unsupported", "non", {"method": "llm"}, "f", 1)
CONTEST = Contestation("claim-x", "", "Quelqu'un", "2025-01-01", "faux", "f", 1)

TABLE = [
    # kind, source state, broken, verbatim, verdict, contestation → state, reason
    ("ext", "present", False, True, SUPPORTED, None, "verified", "supported"),
    ("ext", "present", False, True, PARTIAL, None, "weak", "partial"),
    ("ext", "present", False, True, None, None, "weak", "not-judged"),
    ("ext", "present", False, False, SUPPORTED, None, "weak", "verbatim-failed"),
    ("ext", "detached", False, True, SUPPORTED, None, "weak", "detached"),
    ("ext", "present", False, True, UNSUPPORTED, None, "unsourced", "unsupported"),
    ("ext", "deleted", False, True, None, None, "unsourced", "deleted"),
    ("ext", "present", True, True, None, None, "unsourced", "broken"),
    ("ext", "present", False, True, SUPPORTED, CONTEST, "contested", "contested"),
    ("com", "present", False, True, None, None, "debate-sourced", "comment"),
    ("com", "present", False, True, None, CONTEST, "contested", "contested"),
]


@pytest.mark.parametrize("kind,source,broken,ok,verdict,contest,state,reason", TABLE)
def test_state_mapping(kind, source, broken, ok, verdict, contest, state, reason) -> None:
    result = pair_state(WikiKind(kind), source, broken, ok, verdict, contest)
    assert (result.state, result.reason) == (state, reason)


def test_verbatim_checks_quoted_fragments_in_the_sources() -> None:
    passage = "Le conseil vote la répartition à l'unanimité."
    assert verbatim("Le conseil a voté.", passage, [])
    assert verbatim("Il a voté « à l’unanimité »", passage, [])
    assert not verbatim("Il a voté « à la majorité »", passage, [])
    assert verbatim("Il a voté « à la majorité »", passage, ["Adopté à la majorité des voix."])


def _pair(analysis, article: str):
    (pair,) = [a for a in analysis.assessments[article] if a.link.marker.kind == "ext"]
    return pair


def _write_verdict(small: Path, pair, verdict: str, date: str) -> None:
    path = small / "verdicts" / "synthese-2025.yaml"
    records = yaml.safe_load(path.read_text(encoding="utf-8"))["verdicts"] if path.exists() else []
    records.append({"claim_sha256": pair.claim_sha256, "source_sha256": pair.source_sha256, "verdict": verdict,
                    "rationale": "r", "provenance": {"method": "human", "date": date}})
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump({"verdicts": records}, allow_unicode=True), encoding="utf-8")


def test_cache_lookup_latest_wins_and_invalidation(small: Path) -> None:
    pair = _pair(check_content(small), "synthese-2025")
    assert pair.state.reason == "not-judged" and pair.judgeable
    _write_verdict(small, pair, "partial", "2025-05-01")
    _write_verdict(small, pair, "supported", "2025-06-01")
    assert _pair(check_content(small), "synthese-2025").state.state == "verified", "the latest verdict wins"
    replace(small, "notes/synthese-2025.md", "a été reconduit", "a bien été reconduit")
    assert _pair(check_content(small), "synthese-2025").state.reason == "not-judged", "a changed claim is unjudged"
    replace(small, "notes/synthese-2025.md", "a bien été reconduit", "a été reconduit")
    assert _pair(check_content(small), "synthese-2025").state.state == "verified"
    replace(small, "notes/conseil-a.md", "*quatre mille* euros", "*quatre mille* euros environ")
    replace(small, "notes/conseil-a.extractions.yaml", "quatre mille euros", "quatre mille euros environ")
    assert _pair(check_content(small), "synthese-2025").state.reason == "not-judged", "a changed source is unjudged"


def test_contestation_shows_over_the_verdict(small: Path) -> None:
    pair = _pair(check_content(small), "synthese-2025")
    _write_verdict(small, pair, "supported", "2025-06-01")
    (small / "contestations").mkdir()
    (small / "contestations" / "synthese-2025.yaml").write_text(
        f"contestations:\n  - claim: {pair.claim.id}\n    author: Anne Enseignante\n    date: 2025-06-02\n"
        "    reason: Le budget a été augmenté.\n", encoding="utf-8")
    assert _pair(check_content(small), "synthese-2025").state.state == "contested"


def test_a_claims_contestation_is_found_among_many_and_only_in_its_articles_file(small: Path) -> None:
    """Each claim's contestations are looked up by (article, claim): one written after a
    thousand others on other claims still applies; the same claim id in another article's
    file contests nothing here."""
    pair = _pair(check_content(small), "synthese-2025")
    others = "".join(f"  - claim: autre-{n}\n    author: Quelqu'un\n    date: 2025-06-02\n    reason: Non.\n"
                     for n in range(1000))
    write(small, "contestations/wiki-budget.yaml",
          f"contestations:\n  - claim: {pair.claim.id}\n    author: Anne Enseignante\n    date: 2025-06-02\n"
          "    reason: Pas cet article.\n")
    assert _pair(check_content(small), "synthese-2025").state.state != "contested"
    write(small, "contestations/synthese-2025.yaml",
          f"contestations:\n{others}  - claim: {pair.claim.id}\n    author: Anne Enseignante\n"
          "    date: 2025-06-02\n    reason: Le budget a été augmenté.\n")
    analysis = check_content(small)
    assert _pair(analysis, "synthese-2025").state.state == "contested"
    assert [a for a in analysis.assessments["synthese-2025"] if a.state.state == "contested"] == \
        [a for a in analysis.assessments["synthese-2025"] if a.claim.id == pair.claim.id]



def _qualify(content: Path, article: str, accuracy: float = 0.9) -> None:
    """A calibration of the judge that wrote ``article``'s verdicts (its model and prompt), at
    ``accuracy``: written by hand, as a test may (method: scripted)."""
    (record, *_) = yaml.safe_load((content / "verdicts" / f"{article}.yaml").read_text(encoding="utf-8"))["verdicts"]
    origin = record["provenance"]
    write(content, "verdicts/calibrations.yaml", yaml.safe_dump({"calibrations": [{
        "method": "scripted", "model": origin["model"], "prompt_version": origin["prompt_version"],
        "date": "2025-01-01", "pairs": 66, "answered": 66, "balanced_accuracy": accuracy,
        "recall": {"supported": accuracy, "partial": accuracy, "unsupported": accuracy}}]}))


def _verdict_text(pair, rationale: str) -> str:
    return (f"verdicts:\n  - claim: {pair.claim.text}\n    claim_sha256: {pair.claim_sha256}\n"
            f"    source: ext:{pair.link.marker.key}\n    source_sha256: {pair.source_sha256}\n"
            f"    verdict: supported\n    rationale: {rationale}\n"
            "    provenance: {method: human, date: '2025-06-01'}\n")


def _leaks(small: Path, out: Path, secret: str) -> list[str]:
    build(small, out)
    return [path for path, data in site_files(out).items() if secret.encode("utf-8") in data]


@pytest.mark.parametrize("rel", ["verdicts/wiki-budget.yaml",  # another article's file
                                 "verdicts/conseil-a.yaml",    # an ordinary note's name: no article
                                 "verdicts/nulle-part.yaml"])  # a name that is nothing
def test_a_verdict_outside_its_articles_file_is_stray_and_changes_nothing(small: Path, tmp_path: Path,
                                                                         rel: str) -> None:
    pair = _pair(check_content(small), "synthese-2025")
    write(small, rel, _verdict_text(pair, "STRAYRATIONALE le passage le dit."))
    analysis = check_content(small)
    assert _pair(analysis, "synthese-2025").state.reason == "not-judged", "a verdict applies to its file's article only"
    assert _pair(analysis, "synthese-2025").judgeable, "'carnet verify' judges it again, into its own file"
    strays = [p for p in analysis.problems if p.code == "stray-verdict"]
    assert [(p.file, p.line, p.severity) for p in strays] == [(rel, line_of(small, rel, "- claim:"), Severity.WARNING)]
    assert "verdicts/synthese-2025.yaml" in strays[0].hint, "the hint says where the verdict belongs"
    assert [a.state.reason for a in analysis.assessments["wiki-budget"]] == ["not-judged"]
    assert _leaks(small, tmp_path / "site", "STRAYRATIONALE") == [], "its rationale is published nowhere"


def test_the_same_verdict_in_its_own_articles_file_applies(small: Path, tmp_path: Path) -> None:
    pair = _pair(check_content(small), "synthese-2025")
    write(small, "verdicts/synthese-2025.yaml", _verdict_text(pair, "OWNRATIONALE le passage le dit."))
    analysis = check_content(small)
    assert _pair(analysis, "synthese-2025").state.state == "verified"
    assert not [p for p in analysis.problems if p.code.startswith("stray-")]
    assert "notes/synthese-2025.html" in _leaks(small, tmp_path / "site", "OWNRATIONALE")


def test_a_contestation_outside_its_articles_file_is_stray_and_changes_nothing(small: Path, tmp_path: Path) -> None:
    pair = _pair(check_content(small), "synthese-2025")
    text = (f"contestations:\n  - claim: {pair.claim.id}\n    author: Anne Enseignante\n    date: 2025-06-02\n"
            "    reason: STRAYREASON le budget a changé.\n")
    write(small, "contestations/wiki-budget.yaml", text)
    analysis = check_content(small)
    assert _pair(analysis, "synthese-2025").state.state != "contested"
    (stray,) = [p for p in analysis.problems if p.code == "stray-contestation"]
    assert (stray.file, stray.line, stray.severity) == (
        "contestations/wiki-budget.yaml", line_of(small, "contestations/wiki-budget.yaml", "- claim:"), Severity.WARNING)
    assert "contestations/synthese-2025.yaml" in stray.hint
    assert _leaks(small, tmp_path / "site", "STRAYREASON") == []
    (small / "contestations" / "wiki-budget.yaml").rename(small / "contestations" / "synthese-2025.yaml")
    analysis = check_content(small)
    assert _pair(analysis, "synthese-2025").state.state == "contested"
    assert not [p for p in analysis.problems if p.code.startswith("stray-")]

MANY = """Le budget est de quatre mille euros [[ext:a-budget]].

Il a été voté à l'unanimité [[ext:a-two-paragraphs]].

Le budget est reconduit pour l'année [[ext:a-budget]] [[ext:a-two-paragraphs]].
"""


def test_batches_and_a_failing_batch_keep_what_was_judged(small: Path, llm_server) -> None:
    text = (small / "notes" / "wiki-budget.md").read_text(encoding="utf-8")
    (small / "notes" / "wiki-budget.md").write_text(text.split("---\n", 2)[0] + "---\n" + text.split("---\n", 2)[1]
                                                    + "---\n" + MANY, encoding="utf-8")
    pending = {"wiki-budget": [a for a in check_content(small).assessments["wiki-budget"] if a.judgeable]}
    assert len(pending["wiki-budget"]) == 4
    good = reply(json.dumps({"verdicts": [{"pair": "p1", "verdict": "supported", "rationale": "Le passage le dit."},
                                          {"pair": "p2", "verdict": "partial", "rationale": "Le passage le dit en partie."}]}))
    llm_server.script(good, status(500), status(500))
    client = LLMClient(LLMSettings(llm_server.url, "juge", max_retries=1, timeout=5))
    report = judge(small, pending, client, batch_size=2)
    assert report.judged == 2 and len(report.failed_batches) == 1 and len(report.unjudged) == 2
    assert len(llm_server.requests[0]["body"]["messages"][1]["content"].split("Paire p")) == 3, "two pairs per request"
    records = yaml.safe_load((small / "verdicts" / "wiki-budget.yaml").read_text(encoding="utf-8"))["verdicts"]
    assert [r["verdict"] for r in records] == ["supported", "partial"]
    assert records[0]["provenance"]["method"] == "llm" and records[0]["provenance"]["model"] == "juge"
    states = [a.state.state for a in check_content(small).assessments["wiki-budget"]]
    assert states.count("weak") == 4, "a judge never calibrated changes no state"
    _qualify(small, "wiki-budget")
    states = [a.state.state for a in check_content(small).assessments["wiki-budget"]]
    assert states.count("verified") == 1 and states.count("weak") == 3
    llm_server.script(reply(json.dumps({"verdicts": [{"pair": "p1", "verdict": "unsupported", "rationale": "Le passage ne le dit pas."},
                                                     {"pair": "p2", "verdict": "supported", "rationale": "Le passage le dit."}]})))
    rest = {"wiki-budget": [a for a in check_content(small).assessments["wiki-budget"] if a.judgeable]}
    assert len(rest["wiki-budget"]) == 2, "only what is still unjudged is sent again"
    judge(small, rest, client, batch_size=2)
    assert not [a for a in check_content(small).assessments["wiki-budget"] if a.judgeable]



def test_verify_writes_each_verdict_into_its_own_articles_file(small: Path, llm_server) -> None:
    analysis = check_content(small)
    pending = {slug: [a for a in analysis.assessments[slug] if a.judgeable] for slug in ("synthese-2025", "wiki-budget")}
    one = reply(json.dumps({"verdicts": [{"pair": "p1", "verdict": "supported", "rationale": "Le passage le dit."}]}))
    llm_server.script(one, one)
    report = judge(small, pending, LLMClient(LLMSettings(llm_server.url, "juge", max_retries=1, timeout=5)))
    assert report.judged == 2
    for slug, (pair,) in pending.items():
        (record,) = yaml.safe_load((small / "verdicts" / f"{slug}.yaml").read_text(encoding="utf-8"))["verdicts"]
        assert (record["claim_sha256"], record["source_sha256"]) == (pair.claim_sha256, pair.source_sha256)
    _qualify(small, "wiki-budget")
    analysis = check_content(small)
    assert [a.state.state for slug in pending for a in analysis.assessments[slug]] == ["verified", "verified"]
    assert not [p for p in analysis.problems if p.code.startswith("stray-")]

def test_strict_settings_make_unsourced_claims_fatal(small: Path) -> None:
    replace(small, "notes/wiki-budget.md", "[[ext:a-budget]].", "[[ext:a-budget]].\n\nUne phrase sans aucune source ici.")
    (_, problem), = [(p.code, p) for p in check_content(small).problems if p.code == "unsourced-claim"]
    assert problem.severity is Severity.NOTICE
    with (small / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write("verification:\n  strict: [unsourced-claims]\n")
    (problem,) = [p for p in check_content(small).problems if p.code == "unsourced-claim"]
    assert problem.severity is Severity.WARNING and problem.stops(strict=True)


def test_the_example_site_shows_all_five_states_honestly(example_site: Path) -> None:
    classes: set[str] = set()
    provenance: set[str] = set()
    for path, data in site_files(example_site).items():
        if path.startswith("notes/") and path.endswith(".html"):
            page = BeautifulSoup(data, "html.parser")
            for link in page.select(".note-body .citation"):
                classes.update(c for c in link["class"] if c.startswith("state-"))
                provenance.add(link.get("data-preview-provenance", ""))
    assert {"state-verified", "state-weak", "state-unsourced", "state-contested", "state-debate-sourced"} <= classes
    assert not any("un modèle" in p for p in provenance), "no example verdict claims a model ran"
    assert any("une personne" in p for p in provenance)
    pages = b"".join(d for p, d in site_files(example_site).items() if p.endswith((".html", ".jsonld")))
    assert "Hélène Garnier".encode() not in pages, "who contests is named by the notebook's rule"
    assert b"ClaimReview" not in pages


def test_evaluation_harness(tmp_path: Path, llm_server) -> None:
    from bench.nli_eval import evaluate, load_pairs
    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in [
        {"claim": "A", "evidence": "A", "label": "supported"},
        {"claim": "B", "evidence": "b?", "label": "partially_supported"},
        {"claim": "C", "evidence": "D", "label": "not_supported"},
    ]) + "\n", encoding="utf-8")
    llm_server.script(reply(json.dumps({"verdicts": [
        {"pair": "p1", "verdict": "supported", "rationale": "."}, {"pair": "p2", "verdict": "supported", "rationale": "."},
        {"pair": "p3", "verdict": "unsupported", "rationale": "."}]})))
    scores = evaluate(load_pairs(data), LLMClient(LLMSettings(llm_server.url, "juge")), batch_size=8)
    assert scores.judged == 3 and scores.accuracy == pytest.approx(2 / 3)
    assert scores.recall == {"supported": 1.0, "partial": 0.0, "unsupported": 1.0}
    assert scores.balanced_accuracy == pytest.approx(2 / 3) and scores.tokens_per_pair == pytest.approx(160 / 3)
