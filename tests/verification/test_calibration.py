"""A judge qualifies before it changes a state (issue 55, DESIGN §9): the labelled pair sets
shipped with Carnet, ``carnet verify --calibrate`` against the scripted server (a judge
answering at random, one answering the labels), what an unqualified judge's verdicts do to
the published site (nothing but a suggestion, said), and the calibration records and the bar
as the loader reads them."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup

from generator.corpus.verdicts import CALIBRATIONS_FILE, VERDICTS, Calibration, Verdict, VerificationRecords
from generator.kinds import WikiKind
from generator.pipeline import check_content
from generator.problems import Severity
from generator.verification.assess import MIN_BALANCED_ACCURACY, qualification
from generator.verification.calibration import (
    PAIR_SETS,
    LabelledPair,
    PairSetError,
    load_pair_set,
    score,
    sending_order,
)
from generator.verification.states import Method, Reason, State, pair_state
from support.cli import Run, carnet_here, configure_llm
from support.corpus import write
from support.llm_server import Scripted, ScriptedLLMServer

LANGUAGES = ("fr", "en")
ARTICLE_FILE = "verdicts/wiki-budget.yaml"


# -- the pair sets ------------------------------------------------------------------------------

@pytest.mark.parametrize("language", LANGUAGES)
def test_each_pair_set_is_large_balanced_labelled_by_people_and_without_duplicates(language: str) -> None:
    raw = yaml.safe_load((PAIR_SETS / f"{language}.yaml").read_text(encoding="utf-8"))
    assert raw["method"] == "human" and raw["language"] == language
    assert set(raw["labels"]) == set(VERDICTS), "the file says what each label means"
    pairs = raw["pairs"]
    assert len(pairs) >= 60
    labels = Counter(p["label"] for p in pairs)
    assert set(labels) == set(VERDICTS), "every label in the enum, none other"
    assert len(set(labels.values())) == 1, f"balanced: {labels}"
    assert len({p["id"] for p in pairs}) == len(pairs)
    folded = {(" ".join(p["claim"].split()).casefold(), " ".join(p["passage"].split()).casefold()) for p in pairs}
    assert len(folded) == len(pairs), "no pair twice"
    assert len({p["claim"] for p in pairs}) == len(pairs), "a claim is not reused (the test judge finds pairs by it)"
    loaded = load_pair_set(language)
    assert loaded.language == language and len(loaded.pairs) == len(pairs)
    assert loaded.version.startswith("sha256:")


def test_the_pairs_go_out_mixed_and_a_regional_language_takes_its_own_set() -> None:
    pair_set = load_pair_set("fr-CA")
    assert pair_set.language == "fr"
    order = sending_order(pair_set)
    assert sorted(p.id for p in order) == sorted(p.id for p in pair_set.pairs)
    first_batch = order[:8]
    assert len({p.passage for p in first_batch}) > 4, "a batch is not one passage's claims side by side"


def test_a_pair_left_out_counts_as_wrong() -> None:
    pairs = [LabelledPair(f"x-{n}", f"c{n}", f"p{n}", label) for n, label in
             enumerate(["supported", "supported", "partial", "partial", "unsupported", "unsupported"])]
    everything = score(pairs, {p.id: p.label for p in pairs})
    assert everything.balanced_accuracy == 1.0 and everything.answered == 6
    half = score(pairs, {"x-0": "supported", "x-2": "partial", "x-4": "unsupported"})
    assert half.answered == 3 and half.recall == {"supported": 0.5, "partial": 0.5, "unsupported": 0.5}
    assert half.balanced_accuracy == pytest.approx(0.5)
    always = score(pairs, {p.id: "supported" for p in pairs})
    assert always.balanced_accuracy == pytest.approx(1 / 3), "one label for everything is chance"


# -- the judges against the scripted server -------------------------------------------------------

def _labels() -> dict[str, str]:
    return {p.claim: p.label for language in LANGUAGES for p in load_pair_set(language).pairs}


def _keys(body: dict[str, Any]) -> list[str]:
    """The pairs a request asks verdicts for: the schema's enum of pair keys, else the keys
    its prompt names."""
    found: list[list[str]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            pair = value.get("pair")
            if isinstance(pair, dict) and isinstance(pair.get("enum"), list):
                found.append(pair["enum"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body.get("response_format", {}))
    if found:
        return found[0]
    return list(dict.fromkeys(re.findall(r"\b(p\d+)\b", body["messages"][-1]["content"])))


def _answer(body: dict[str, Any], verdict_of: Any) -> Scripted:
    """One verdict per pair of the request, ``verdict_of(claim or None)`` for each: the claims
    of the pair sets are found in the prompt, in the order it lists its pairs."""
    text = body["messages"][-1]["content"]
    claims = [claim for _at, claim in sorted((text.find(c), c) for c in LABELS if c in text)]
    keys = _keys(body)
    verdicts = [{"pair": key, "verdict": verdict_of(claims[n] if len(claims) == len(keys) else None),
                 "rationale": "Le passage le dit en ces termes."} for n, key in enumerate(keys)]
    return Scripted(200, json.dumps({"verdicts": verdicts}, ensure_ascii=False))


LABELS = _labels()


def random_judge(seed: int):
    chance = random.Random(seed)
    return lambda body: _answer(body, lambda _claim: chance.choice(VERDICTS))


def label_judge(body: dict[str, Any]) -> Scripted:
    """Answers the label a person gave each pair of the sets, and "supported" for the rest."""
    return _answer(body, lambda claim: LABELS.get(claim, "supported") if claim else "supported")


def _citations(run: Run) -> str:
    """The build summary's line of citation counts."""
    (line,) = re.findall(r"^\s*citations\s+.*$", run.out, flags=re.M)
    return line.strip()


def _previews(site: Path, slug: str) -> list[dict[str, str]]:
    page = BeautifulSoup((site / f"notes/{slug}.html").read_text(encoding="utf-8"), "html.parser")
    return [{key.removeprefix("data-preview-"): value for key, value in link.attrs.items()
             if key.startswith("data-preview-")} for link in page.select(".note-body a.citation")]


def _calibrations(content: Path) -> list[dict[str, Any]]:
    return yaml.safe_load((content / CALIBRATIONS_FILE).read_text(encoding="utf-8"))["calibrations"]


@pytest.fixture
def judged(small: Path, llm_server: ScriptedLLMServer, tmp_path: Path):
    """``small`` with an endpoint; ``judged(responder)`` runs 'carnet verify' with that judge
    and returns the build summary's citation line from before it."""
    configure_llm(small, llm_server.url, model="juge")
    llm_server.model_name = "juge-servi"  # the server names another model than the one asked for

    def run(responder) -> str:
        before = carnet_here("build", small, "--out", tmp_path / "site", "--no-search")
        assert before.code == 0, before
        llm_server.respond(responder)
        verify = carnet_here("verify", "--content", small)
        assert verify.code == 0, verify
        assert all((small / f"verdicts/{article}.yaml").exists() for article in ("synthese-2025", "wiki-budget"))
        return _citations(before)

    return run


def test_a_random_judge_calibrates_below_the_bar_and_its_verdicts_change_no_published_state(
        small: Path, tmp_path: Path, judged) -> None:
    before = judged(random_judge(seed=3))
    said = [r["verdict"] for article in ("synthese-2025", "wiki-budget")
            for r in yaml.safe_load((small / f"verdicts/{article}.yaml").read_text(encoding="utf-8"))["verdicts"]]
    assert set(said) - {"partial"}, f"a verdict that would change a state if it counted: {said}"
    assert before == "citations    2 (2 weak)"
    calibrated = carnet_here("verify", "--calibrate", "--content", small)
    assert calibrated.code == 0, calibrated
    (record,) = _calibrations(small)
    assert record["model"] == "juge-servi", "the model as the server named it"
    assert record["pairs"] == 66 and record["answered"] == 66 and record["language"] == "fr"
    assert record["balanced_accuracy"] < MIN_BALANCED_ACCURACY
    assert record["prompt"] == "verify_pairs" and record["prompt_version"].startswith("sha256:")
    assert record["pair_set"] == load_pair_set("fr").version and record["usage"]["total_tokens"] > 0
    assert "does NOT qualify" in calibrated.out and f"{record['balanced_accuracy']:.3f}" in calibrated.out
    print(f"random judge (seed 3): balanced accuracy {record['balanced_accuracy']}, recall {record['recall']}")

    after = carnet_here("build", small, "--out", tmp_path / "site", "--no-search")
    assert after.code == 0, after
    assert _citations(after) == before, "the build summary's counts are unchanged"
    accuracy = f"{record['balanced_accuracy']:.2f}".replace(".", ",")
    (preview,) = _previews(tmp_path / "site", "wiki-budget")
    assert preview["state"] == "faible" and "juge-servi" in preview["suggestion"]
    assert "n'est pas qualifié" in preview["suggestion"] and accuracy in preview["suggestion"]
    sibling = json.loads((tmp_path / "site/notes/wiki-budget.json").read_text(encoding="utf-8"))
    (pair,) = [p for claim in sibling["claims"] for p in claim["pairs"]]
    assert pair["state"] == "weak" and pair["verifier"]["method"] == "build"
    assert pair["suggestion"]["qualified"] is False and pair["suggestion"]["model"] == "juge-servi"
    assert pair["suggestion"]["balanced_accuracy"] == record["balanced_accuracy"]

    strict = carnet_here("check", small, "--strict")
    assert strict.code == 1, strict
    assert f"{ARTICLE_FILE}:2: warning [unqualified-judge]" in strict.text
    assert "carnet verify --calibrate" in strict.text
    assert carnet_here("build", small, "--out", tmp_path / "strict", "--no-search", "--strict").code == 1


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_judge_answering_the_labels_qualifies_and_its_verdicts_are_published_with_its_accuracy(
        small: Path, tmp_path: Path, judged, llm_server: ScriptedLLMServer, language: str) -> None:
    if language != "fr":
        write(small, "carnet.yaml", (small / "carnet.yaml").read_text(encoding="utf-8").replace(
            "language: fr", f"language: {language}"))
    before = judged(label_judge)
    unqualified = carnet_here("build", small, "--out", tmp_path / "site", "--no-search")
    assert _citations(unqualified) == before == "citations    2 (2 weak)", "never calibrated: suggestions"
    calibrated = carnet_here("verify", "--calibrate", "--content", small)
    assert calibrated.code == 0, calibrated
    (record,) = _calibrations(small)
    assert record["balanced_accuracy"] == 1.0 and record["language"] == language
    assert record["recall"] == dict.fromkeys(VERDICTS, 1.0) and "the judge qualifies" in calibrated.out
    pair_set = load_pair_set(language)
    sent = "".join(r["body"]["messages"][-1]["content"] for r in llm_server.requests if "messages" in r["body"])
    assert all(p.claim in sent for p in pair_set.pairs), "every pair of the site's language was sent"
    print(f"label judge ({language}): balanced accuracy {record['balanced_accuracy']}")

    after = carnet_here("build", small, "--out", tmp_path / "site", "--no-search")
    assert after.code == 0, after
    assert _citations(after) == "citations    2 (2 verified)", "a qualified judge's verdicts change the states"
    (preview,) = _previews(tmp_path / "site", "wiki-budget")
    assert "suggestion" not in preview
    shown = "1,00" if language == "fr" else "1.00"
    assert shown in preview["provenance"] and "juge-servi" in preview["provenance"]
    sibling = json.loads((tmp_path / "site/notes/wiki-budget.json").read_text(encoding="utf-8"))
    (pair,) = [p for claim in sibling["claims"] for p in claim["pairs"]]
    assert pair["verifier"] == {"method": "llm", "model": "juge-servi", "date": pair["verifier"]["date"],
                                "balanced_accuracy": 1.0}
    assert carnet_here("check", small, "--strict").code == 0


def test_an_endpoint_failing_during_calibration_records_nothing(small: Path, llm_server: ScriptedLLMServer) -> None:
    configure_llm(small, llm_server.url, model="juge")
    answered = 0

    def failing(body: dict[str, Any]) -> Scripted:
        nonlocal answered
        answered += 1
        return label_judge(body) if answered <= 2 else Scripted(500, "down")

    llm_server.respond(failing)
    run = carnet_here("verify", "--calibrate", "--content", small)
    assert run.code == 3, run
    assert "nothing recorded" in run.err and not (small / CALIBRATIONS_FILE).exists()


def test_calibrate_takes_no_article_and_a_language_without_pairs_is_a_clear_error(
        small: Path, tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    configure_llm(small, llm_server.url)
    run = carnet_here("verify", "--calibrate", "--content", small, "wiki-budget")
    assert run.code == 2 and "name none" in run.err
    (tmp_path / "pairs").mkdir()
    (tmp_path / "pairs" / "fr.yaml").write_text("pairs: []\n", encoding="utf-8")
    with pytest.raises(PairSetError, match="no labelled pairs in 'en'"):
        load_pair_set("en", tmp_path / "pairs")
    with pytest.raises(PairSetError, match=r"no labelled pairs$"):
        load_pair_set("fr", tmp_path / "pairs")


# -- the bar and the records, as the loader reads them -------------------------------------------

@pytest.mark.parametrize("value", ["1.5", "-0.1", "beaucoup", "true"])
def test_the_bar_must_be_a_number_from_0_to_1(small: Path, value: str) -> None:
    with (small / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write(f"verification:\n  strict: [unjudged-pairs]\n  min_balanced_accuracy: {value}\n")
    line = (small / "carnet.yaml").read_text(encoding="utf-8").splitlines().index(
        f"  min_balanced_accuracy: {value}") + 1
    (problem,) = [p for p in check_content(small).problems if p.code == "invalid-value"]
    assert (problem.file, problem.line, problem.severity) == ("carnet.yaml", line, Severity.ERROR)
    assert "min_balanced_accuracy" in problem.message and "0 to 1" in problem.message
    run = carnet_here("verify", "--calibrate", "--content", small)
    assert run.code == 2 and f"carnet.yaml:{line}" in run.err, run


def test_the_bar_is_the_sites(small: Path) -> None:
    with (small / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write("verification:\n  min_balanced_accuracy: 0.5\n")
    _verdict(small)
    _calibration(small, 0.55)
    (pair,) = check_content(small).assessments["wiki-budget"]
    assert pair.state.state is State.VERIFIED and pair.state.verifier.accuracy == 0.55


def _verdict(content: Path, model: str = "juge", version: str = "sha256:v1") -> None:
    (pair,) = check_content(content).assessments["wiki-budget"]
    write(content, ARTICLE_FILE, yaml.safe_dump({"verdicts": [{
        "claim_sha256": pair.claim_sha256, "source_sha256": pair.source_sha256, "verdict": "supported",
        "rationale": "Le passage le dit.", "provenance": {"method": "llm", "model": model, "prompt_version": version,
                                                          "date": "2025-06-01"}}]}, allow_unicode=True))


def _calibration(content: Path, accuracy: object, model: str = "juge", version: str = "sha256:v1",
                 date: str = "2025-05-01", **more: object) -> None:
    path = content / CALIBRATIONS_FILE
    records = yaml.safe_load(path.read_text(encoding="utf-8"))["calibrations"] if path.exists() else []
    records.append({"method": "scripted", "model": model, "prompt_version": version, "date": date, "pairs": 66,
                    "answered": 66, "balanced_accuracy": accuracy,
                    "recall": {"supported": 0.5, "partial": 0.5, "unsupported": 0.5}, **more})
    write(content, CALIBRATIONS_FILE, yaml.safe_dump({"calibrations": records}, allow_unicode=True, sort_keys=False))


def _state(content: Path) -> tuple[State, float | None, bool]:
    (pair,) = check_content(content).assessments["wiki-budget"]
    return pair.state.state, pair.state.judge.accuracy if pair.state.judge else None, pair.state.suggestion is not None


def test_a_judge_qualifies_by_the_latest_calibration_of_that_model_and_prompt(small: Path) -> None:
    _verdict(small)
    assert _state(small) == (State.WEAK, None, True), "never calibrated: a suggestion"
    _calibration(small, 0.95, model="autre-juge")
    _calibration(small, 0.95, version="sha256:autre-prompt")
    assert _state(small) == (State.WEAK, None, True), "another model's or another prompt's figures count for nothing"
    _calibration(small, 0.7)
    assert _state(small) == (State.VERIFIED, 0.7, False), "at the bar: qualified"
    _calibration(small, 0.41, date="2025-05-20")
    assert _state(small) == (State.WEAK, 0.41, True), "measured again, lower: the latest figures govern"
    _calibration(small, 0.9, date="2025-05-02")
    assert _state(small) == (State.WEAK, 0.41, True), "an older calibration written later does not"


def test_human_and_scripted_verdicts_and_contestations_need_no_calibration() -> None:
    for method in ("human", "scripted"):
        verdict = Verdict("c", "s", "unsupported", "r", {"method": method}, "verdicts/w.yaml", 3)
        assert qualification(VerificationRecords(), verdict, 0.7) is None
        state = pair_state(WikiKind.EXT, "present", False, True, verdict, None, None)
        assert (state.state, state.verifier.method) == (State.UNSOURCED, Method(method))
    model = Verdict("c", "s", "unsupported", "r", {"method": "llm", "model": "m"}, "verdicts/w.yaml", 3)
    judge = qualification(VerificationRecords(), model, 0.7)
    assert judge is not None and not judge.qualified
    suggested = pair_state(WikiKind.EXT, "present", False, True, model, None, judge)
    assert (suggested.state, suggested.reason, suggested.verdict, suggested.suggestion) == \
        (State.WEAK, Reason.NOT_JUDGED, None, model)
    records = VerificationRecords(calibrations=[Calibration("m", "", "2025-01-01", 0.8, {}, CALIBRATIONS_FILE, 2)])
    qualified = pair_state(WikiKind.EXT, "present", False, True, model, None, qualification(records, model, 0.7))
    assert qualified.state is State.UNSOURCED and qualified.verifier.accuracy == 0.8


@pytest.mark.parametrize("field,value,said", [
    ("balanced_accuracy", "2", "from 0 to 1"),
    ("balanced_accuracy", "haute", "from 0 to 1"),
    ("answered", "70", "answered of 66 sent"),
    ("recall", "{supported: 1.0}", "each label its recall"),
])
def test_a_malformed_calibration_is_an_error_at_its_line_and_qualifies_nobody(small: Path, field: str, value: str,
                                                                              said: str) -> None:
    _verdict(small)
    _calibration(small, 0.95)
    text = (small / CALIBRATIONS_FILE).read_text(encoding="utf-8")
    text = re.sub(rf"^(\s*){field}:.*(\n\1  .*)*$", rf"\1{field}: {value}", text, count=1, flags=re.M)
    write(small, CALIBRATIONS_FILE, text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.strip().startswith(f"{field}:"))
    analysis = check_content(small)
    (problem,) = [p for p in analysis.problems if p.file == CALIBRATIONS_FILE]
    assert problem.severity is Severity.ERROR and problem.line == line and said in problem.message, problem
    assert _state(small) == (State.WEAK, None, True)
