"""One evidence model (issue 20): who verified a pair is decided once, in the core
(:attr:`PairState.verifier`), and every output says the same."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from generator.corpus.verdicts import Contestation, Verdict
from generator.kinds import WikiKind
from generator.pipeline import build
from generator.verification.states import Method, PairState, Reason, State, pair_state

CONTENT = Path(__file__).resolve().parents[1] / "content"
SYNTHESIS = "cvl-synthese-budget-2024-2025"
CONTESTED = "Le mobilier du foyer a coûté moins que prévu"
CONTESTED_ID = "claim-0dbee6d2"  # contestations/cvl-synthese-budget-2024-2025.yaml


def _verifiers(site: Path, claim_text: str, claim_id: str) -> dict[str, set[str]]:
    """The verifier of each pair of the claim, as each output of the article says it."""
    page = (site / f"notes/{SYNTHESIS}.html").read_text(encoding="utf-8")
    (block,) = re.findall(r'<script type="application/ld\+json">(.*?)</script>', page, flags=re.S)
    claims = [c for c in json.loads(block)["hasPart"] if c["text"] == claim_text]
    in_jsonld = {p["carnet:verifier"] for c in claims for p in c.get("carnet:verification", [])}
    sibling = json.loads((site / f"notes/{SYNTHESIS}.json").read_text(encoding="utf-8"))
    in_json = {c["verifier"] for c in sibling["citations"] if c["claim"] == claim_text}
    annotations = json.loads((site / f"notes/{SYNTHESIS}.annotations.jsonld").read_text(encoding="utf-8"))
    in_annotations = {re.search(r"\((\w+)\)$", i["body"]["value"]).group(1) for i in annotations["first"]["items"]
                      if i["motivation"] == "assessing" and i["target"][0]["selector"]["value"] == claim_id}
    return {"json-ld": in_jsonld, "json": in_json, "annotations": in_annotations}


def test_a_contested_pair_judged_by_a_model_reads_human_in_every_output(tmp_path: Path) -> None:
    """Reproduced by switching the contested claim's verdict to a model: the note's
    .json said "llm" (it ignored contestations), the JSON-LD "human"."""
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    verdicts = content / f"verdicts/{SYNTHESIS}.yaml"
    head, _, tail = verdicts.read_text(encoding="utf-8").partition(f"- claim: {CONTESTED}")
    verdicts.write_text(head + f"- claim: {CONTESTED}" + tail.replace("method: human", "method: llm\n    model: petit-modele", 1),
                        encoding="utf-8")
    site = tmp_path / "site"
    build(content, site, search=False)
    said = _verifiers(site, CONTESTED, CONTESTED_ID)
    assert said == {"json-ld": {"human"}, "json": {"human"}, "annotations": {"human"}}


def test_the_verifier_is_decided_by_the_state_not_by_each_view() -> None:
    verdict = Verdict("c", "s", "supported", "r", {"method": "llm", "model": "m", "date": "2025-01-01"}, "verdicts/a.yaml", 3)
    contestation = Contestation("claim-1", "", "Hélène Garnier", "2025-02-01", "pas fini", "contestations/a.yaml", 2)
    judged = pair_state(WikiKind.EXT, "present", False, True, verdict, None)
    assert (judged.state, judged.reason) == (State.VERIFIED, Reason.SUPPORTED)
    assert judged.verifier.method is Method.LLM and judged.verifier.model == "m"
    unjudged = pair_state(WikiKind.EXT, "present", False, True, None, None)
    assert unjudged.verifier.method is Method.BUILD and unjudged.reason is Reason.NOT_JUDGED
    assert PairState(State.WEAK, Reason.VERBATIM_FAILED).verifier.method is Method.BUILD
    assert json.dumps({"state": judged.state, "reason": judged.reason}) == '{"state": "verified", "reason": "supported"}'
    contested = pair_state(WikiKind.EXT, "present", False, True, verdict, contestation)
    assert contested.state is State.CONTESTED and contested.verdict is verdict
    assert (contested.verifier.method, contested.verifier.author) == (Method.HUMAN, "Hélène Garnier")


def _counts_of(page: str) -> tuple[dict[str, int], dict[str, int], dict[str, int], dict[str, int]]:
    """What the reader sees: marks in the body by state and weak reason; counts in the panel."""
    body = page.split('class="note-body', 1)[1].split('id="audit"', 1)[0]
    marks: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for classes in re.findall(r'<(?:a|span) class="(citation[^"]*)"', body):
        state = re.search(r"state-([a-z-]+)", classes)
        if state:
            marks[state.group(1)] = marks.get(state.group(1), 0) + 1
        reason = re.search(r"reason-([a-z-]+)", classes)
        if state and state.group(1) == "weak" and reason:
            reasons[reason.group(1)] = reasons.get(reason.group(1), 0) + 1
    marks["unsourced"] = marks.get("unsourced", 0) + body.count('<sup class="unsourced-claim"')
    panel_html = page.split('class="state-counts">', 1)[1].split("</ul>", 1)[0]
    panel = {state: int(n) for state, n in re.findall(r'<li class="state-([a-z-]+)">.*? : (\d+)', panel_html)}
    panel_reasons = {r: int(n) for r, n in re.findall(r'<span class="reason-([a-z-]+)">[^<]* : (\d+)</span>', panel_html)}
    return ({k: v for k, v in marks.items() if v}, reasons, {k: v for k, v in panel.items() if v}, panel_reasons)


def test_the_panel_counts_what_the_body_marks(tmp_path: Path) -> None:
    """"non sourcé : 0" stood beside "2 affirmations non sourcées", and "weak" meant three
    things: now every claim is marked where it is read, unsourced ones included, each weak
    reason apart, and the panel counts exactly those marks."""
    site = tmp_path / "site"
    build(CONTENT, site, search=False)
    checked = 0
    for path in sorted((site / "notes").glob("*.html")):
        page = path.read_text(encoding="utf-8")
        if 'class="state-counts"' not in page:
            continue
        marks, reasons, panel, panel_reasons = _counts_of(page)
        assert marks == panel, path.name
        assert reasons == panel_reasons, path.name
        unsourced_claims = page.count('<sup class="unsourced-claim"')
        said = re.search(r"(\d+) affirmations? non sourcées?</p>", page)
        assert said and int(said.group(1)) == unsourced_claims, path.name
        checked += 1
    assert checked >= 3


def test_the_json_sibling_tells_the_same_audit_as_the_page(tmp_path: Path) -> None:
    """An article's .json had no unsourced claims, no reasons, and page chrome ("[1]
    contester") in its body; a note's had no extractions or comments."""
    site = tmp_path / "site"
    build(CONTENT, site, search=False)
    articles = notes = 0
    for path in sorted((site / "notes").glob("*.html")):
        page = path.read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in page:
            continue
        record = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        if "claims" not in record and "extractions" not in record:
            continue  # a selection page: no note of its own
        assert "contester" not in record["body"] and "Accueil" not in record["body"].split("\n")[0]
        if "claims" in record:
            articles += 1
            in_page = set(re.findall(r'<span class="claim-end" id="([^"]+)"', page)) | \
                set(re.findall(r'<sup class="unsourced-claim" id="([^"]+)"', page))
            assert {c["id"] for c in record["claims"]} == in_page, path.name
            marks, _reasons, _, _ = _counts_of(page)
            said: dict[str, int] = {}
            for claim in record["claims"]:
                for pair in claim["pairs"]:
                    said[pair["state"]] = said.get(pair["state"], 0) + 1
                    assert pair["reason"] and pair["verifier"]["method"], path.name
                if claim["state"] == "unsourced":
                    said["unsourced"] = said.get("unsourced", 0) + 1
            assert said == marks, path.name
        else:
            notes += 1
            listed = set(re.findall(r'id="entry-([^"]+)"', page))
            assert {e["id"] for e in record["extractions"]} == listed, path.name
            for extraction in record["extractions"]:
                for comment in extraction["comments"]:
                    assert comment["withdrawn"] or comment["text"], path.name
    assert articles >= 3 and notes >= 10


def test_the_markdown_mirror_tells_the_same_audit(tmp_path: Path) -> None:
    """Each note and article has its mirror at its URL + .md (llmstxt.org), which
    llms.txt links to; an article's mirror has every pair with the .json's state and
    verifier, its unsourced claims, and the page's discarded evidence."""
    site = tmp_path / "site"
    build(CONTENT, site, search=False)
    llms = (site / "llms.txt").read_text(encoding="utf-8")
    mirrors = 0
    for path in sorted((site / "notes").glob("*.html")):
        page = path.read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in page:
            continue  # a former address: it only forwards
        record = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        if "claims" not in record and "extractions" not in record:
            continue
        mirror = (site / "notes" / (path.name + ".md")).read_text(encoding="utf-8")
        mirrors += 1
        assert mirror.startswith(f"# {record['title']}\n") and f"notes/{path.name}.md)" in llms, path.name
        body_numbers = re.findall(r"\[(\d+)\]", record["body"])
        # the body (its own ## headings kept, issue 57) ends where the sources block begins
        body = re.split(r"\n## (?:Sources citées|Pièces écartées|Couverture du périmètre)\n", mirror, maxsplit=1)[0]
        if "claims" in record:
            assert body_numbers == re.findall(r"\[(\d+)\]", body), path.name
        else:  # a note's own citations are numbered in its mirror (issue 57), each listed under its sources
            cited = re.findall(r"\[(\d+)\]", body)
            assert all(re.search(rf"^\[{n}\]: ", mirror, flags=re.M) for n in cited), path.name
        if "claims" in record:
            listed = {int(n) for n in re.findall(r"^\[(\d+)\]: ", mirror, flags=re.M)}
            assert listed == {int(n) for n in body_numbers}, path.name
            pairs = sum(len(c["pairs"]) for c in record["claims"])
            assert len(re.findall(r"^  - « ", mirror, flags=re.M)) == pairs, path.name
            unsourced = [c["text"] for c in record["claims"] if c["state"] == "unsourced"]
            assert all(f"- « {text} »" in mirror for text in unsourced), path.name
            discarded_in_page = len(re.findall(r'<li[^>]*class="[^"]*discarded-item', page)) or \
                page.split('id="discarded"', 1)[1].split("</section>", 1)[0].count("<li")
            assert mirror.split("## Pièces écartées", 1)[1].split("\n## ", 1)[0].count("\n- ") == discarded_in_page, \
                path.name
        else:
            assert len(re.findall(r"#(?:ext|entry)-", mirror.split("## Extractions", 1)[-1])) >= \
                len(record["extractions"]), path.name
    assert mirrors >= 13


def test_disagreements_are_counted_once_on_the_model() -> None:
    """Seven views counted disagreements each their own way (some kept withdrawn ones)."""
    import datetime as dt

    from generator.corpus.model import Comment, Extraction, SourceRef, Stance, Withdrawal
    where = SourceRef("notes/a.extractions.yaml", 3)

    def comment(number: int, stance: Stance, withdrawn: bool = False) -> Comment:
        return Comment(f"c{number}", "x", "A", dt.date(2025, 1, number), stance, None if withdrawn else "t", "",
                       Withdrawal(dt.date(2025, 2, 1), "erreur") if withdrawn else None, where)

    extraction = Extraction("x", "a", "q", "", "", None, "fait", "A", None, False,
                            (comment(1, Stance.DISAGREE), comment(2, Stance.DISAGREE, withdrawn=True),
                             comment(3, Stance.AGREE)), where)
    assert extraction.disagreements == 1 and len(extraction.live_comments) == 2
    assert Stance("disagree") is Stance.DISAGREE and json.dumps(Stance.NUANCE) == '"nuance"'


EVIDENCE_FUNCTIONS = {
    "generator.synthesis.coverage": {"coverage"},
    "generator.verification.tally": {"tally"},
    "generator.verification.states": {"pair_state", "verbatim"},
    "generator.verification.assess": {"assess"},
    "generator.anchoring.resolve": {"resolve_quote", "word_diff", "project"},
    "generator.anchoring.normalise": {"normalise_quote", "normalise"},
    "generator.anchoring": {"anchor_note"},
    "generator.synthesis.audit": {"audit_articles"},
}


def test_site_renders_the_model_and_computes_no_evidence() -> None:
    """The core decides, the site renders: no module of generator/site imports a function
    that computes an evidence fact (coverage, tallies, states, anchors, relocation diffs)."""
    import ast

    offenders = []
    for path in sorted((Path(__file__).resolve().parents[1] / "generator" / "site").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in EVIDENCE_FUNCTIONS:
                offenders += [f"{path.name}: {node.module}.{alias.name}" for alias in node.names
                              if alias.name in EVIDENCE_FUNCTIONS[node.module]]
            elif isinstance(node, ast.Import):
                offenders += [f"{path.name}: import {alias.name}" for alias in node.names
                              if alias.name in EVIDENCE_FUNCTIONS]
    assert not offenders, offenders
