"""carnet analyse → review → apply, end to end over real HTTP to the scripted endpoint:
quotes resolved to the note's own text, paraphrases and ambiguous quotes reported and
never placed, categories outside the axes refused, truncated answers writing nothing,
re-analysis sending only what changed, and applied extractions landing exactly on
their passage in the built site. Then the pure core on its own."""

from __future__ import annotations

import datetime as dt
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from generator.anchoring.normalise import normalise_quote
from generator.cli import main
from generator.commands.analyse import AnalyseError, run_analyse
from generator.commands.proposals import ProposalError, apply, review
from generator.corpus.analysed import parse_record
from generator.pipeline import build, check_content
from generator.writes import WriteRefused
from support.corpus import replace, write
from support.llm_server import reply, status
from support.site_checks import highlight_mismatches

ROOT = Path(__file__).resolve().parents[2]
TODAY = dt.date(2025, 4, 2)
LATER = dt.date(2025, 4, 3)
NOTE = "notes/seance-analyse.md"
SLUG = "seance-analyse"

PARAGRAPHS = [
    "Le conseil vote un budget de 1 200 euros pour le foyer.",
    "Les élus demandent l'ouverture du foyer le mercredi midi.",
    "La proviseure répond que la surveillance manque ce jour-là. Le point est reporté.",
    "Le point est reporté.",
]
HEAD = """---
title: Séance analysée
date: 2025-02-10
authors: [Zoé Realname]
notebooks:
  conseil:
    theme: [Budget]
    annee: ["2025"]
---
## Ordre du jour

"""


def note_text(paragraphs: list[str]) -> str:
    return HEAD + "\n\n".join(paragraphs) + "\n"


@pytest.fixture
def content(small: Path) -> Path:
    write(small, NOTE, note_text(PARAGRAPHS))
    return small


def configure_llm(root: Path, url: str, retries: int = 0, extra: str = "") -> None:
    with (root / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write(f"llm:\n  base_url: {url}\n  model: modele-test\n  timeout: 5\n  max_retries: {retries}\n{extra}")


def answer(*passages: tuple[str, str, list[tuple[str, str]]]) -> str:
    return json.dumps({"passages": [{"quote": q, "kind": k, "categories": [{"axis": a, "category": c} for a, c in cats]}
                                    for q, k, cats in passages]})


def sent_text(server, request: int = -1) -> str:
    return server.requests[request]["body"]["messages"][1]["content"]


def proposal_files(root: Path) -> list[Path]:
    folder = root / "proposals" / "extractions"
    return sorted(folder.rglob("*.yaml")) if folder.exists() else []


# the model's strings differ from the note's text in typography and spacing only
SAID_BUDGET = "Le conseil vote  un budget\nde 1 200 euros"
SAID_SPANNING = "pour le foyer. Les élus demandent l’ouverture du foyer"
SAID_PARAPHRASE = "Les élèves veulent que le foyer soit ouvert le mercredi."
SAID_AMBIGUOUS = "Le point est reporté."
SAID_FAR = "La proviseure répond que la survelance manque ce jour-là."  # one typo: near, not verbatim


def test_analyse_resolves_quotes_and_reports_what_it_cannot_place(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    llm_server.script(reply(answer(
        (SAID_BUDGET, "décision", [("theme", "Budget"), ("theme", "Sport"), ("lieu", "Foyer")]),
        (SAID_SPANNING, "proposition", [("Année", "2025")]),
        (SAID_PARAPHRASE, "proposition", []),
        (SAID_AMBIGUOUS, "décision", []),
        (SAID_FAR, "objection", []),
    ), usage={"prompt_tokens": 300, "completion_tokens": 90, "total_tokens": 390}))
    report = run_analyse(content, [SLUG], today=TODAY)
    (item,) = report.notes
    assert item.error == "" and item.notebook == "conseil"
    prompt = sent_text(llm_server)
    assert "Citer exactement." in prompt, "the notebook's writing guide is in the prompt"
    assert "axe « theme » (Thème) : Budget, Vie scolaire" in prompt and "2024, 2025" in prompt
    for paragraph in PARAGRAPHS:
        assert paragraph in prompt

    (path,) = [p for p in proposal_files(content) if p.name != "analysed.yaml"]
    assert path == content / "proposals" / "extractions" / SLUG / "2025-04-02-llm.yaml"
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert record["kind"] == "extractions" and record["target"] == SLUG and record["notebook"] == "conseil"
    provenance = record["provenance"]
    assert provenance["method"] == "llm" and provenance["model"] == "modele-test"
    assert provenance["prompt"] == "analyse_passages" and provenance["date"] == "2025-04-02"
    assert provenance["usage"] == {"prompt_tokens": 300, "completion_tokens": 90, "total_tokens": 390}

    # the stored quotes are the note's own text, never the model's strings
    quotes = [p["quote"] for p in record["passages"]]
    assert quotes == ["Le conseil vote un budget de 1 200 euros",
                      "pour le foyer.\n\nLes élus demandent l'ouverture du foyer"]
    first, second = record["passages"]
    assert first["categories"] == {"theme": ["Budget"]}
    assert {(r["axis"], r["category"]) for r in first["refused_categories"]} == {("theme", "Sport"), ("lieu", "Foyer")}
    assert second["categories"] == {"annee": ["2025"]}, "an axis named by its title, recorded by its key"

    reasons = {left["quote"]: left["reason"] for left in record["left_out"]}
    assert set(reasons) == {SAID_PARAPHRASE, SAID_AMBIGUOUS, SAID_FAR}
    assert reasons[SAID_PARAPHRASE].startswith("not found")
    assert reasons[SAID_AMBIGUOUS].startswith("ambiguous: the quote occurs 2 times")
    assert reasons[SAID_FAR].startswith("not verbatim") and "{+surveillance+}" in reasons[SAID_FAR]

    # review changes nothing and shows every passage, what was left out and the refusals
    before = {p: p.read_bytes() for p in sorted(content.rglob("*")) if p.is_file()}
    out = io.StringIO()
    review(path, out)
    shown = out.getvalue()
    assert f"[1] décision ({NOTE}:" in shown and "would be added as seance-analyse-analyse-1" in shown
    assert "refused category theme: Sport" in shown and "not found" in shown and "ambiguous" in shown
    assert {p: p.read_bytes() for p in sorted(content.rglob("*")) if p.is_file()} == before


def test_apply_adds_extractions_that_land_exactly_in_the_build(content: Path, llm_server, tmp_path: Path) -> None:
    configure_llm(content, llm_server.url)
    llm_server.script(reply(answer((SAID_BUDGET, "décision", [("theme", "Budget")]),
                                   (SAID_SPANNING, "proposition", []),
                                   (SAID_AMBIGUOUS, "décision", []))))
    (item,) = run_analyse(content, [SLUG], today=TODAY).notes
    decisions = apply(item.path, today=LATER)
    assert [(d.decision, d.id) for d in decisions] == [("accepted", "seance-analyse-analyse-1"),
                                                       ("accepted", "seance-analyse-analyse-2")]
    sidecar = content / "notes" / "seance-analyse.extractions.yaml"
    entries = yaml.safe_load(sidecar.read_text(encoding="utf-8"))["extractions"]
    assert [(e["id"], e["author"], e["kind"], e["date"]) for e in entries] == [
        ("seance-analyse-analyse-1", "analysis", "décision", LATER),
        ("seance-analyse-analyse-2", "analysis", "proposition", LATER)]
    assert "# added by 'carnet apply' on 2025-04-03 from proposals/extractions/seance-analyse/2025-04-02-llm.yaml " \
           "(method llm, model modele-test" in sidecar.read_text(encoding="utf-8")
    applied = yaml.safe_load(item.path.read_text(encoding="utf-8"))["applied"]
    assert applied == {"date": "2025-04-03", "results": [
        {"index": 0, "decision": "accepted", "id": "seance-analyse-analyse-1"},
        {"index": 1, "decision": "accepted", "id": "seance-analyse-analyse-2"}]}
    with pytest.raises(ProposalError, match="already applied"):
        apply(item.path, today=LATER)

    analysis = check_content(content)
    assert analysis.errors == [] and not [p for p in analysis.problems if SLUG in p.file]
    build(content, tmp_path / "site")
    assert highlight_mismatches(content, tmp_path / "site") == []
    # recomputed here from the paragraphs written above: which paragraph holds which words
    page = BeautifulSoup((tmp_path / "site" / "notes" / f"{SLUG}.html").read_bytes(), "html.parser")
    expected = {"seance-analyse-analyse-1": [(PARAGRAPHS[0], "Le conseil vote un budget de 1 200 euros")],
                "seance-analyse-analyse-2": [(PARAGRAPHS[0], "pour le foyer."),
                                             (PARAGRAPHS[1], "Les élus demandent l'ouverture du foyer")]}
    for ext_id, pieces in expected.items():
        marks = page.select(f'mark[data-ext~="{ext_id}"]')
        holders: dict[str, str] = {}
        for mark in marks:
            element = mark.find_parent(class_="element")
            holders[element.get_text()] = holders.get(element.get_text(), "") + mark.get_text()
        assert [(normalise_quote(k), v) for k, v in holders.items()] == [(normalise_quote(p), w) for p, w in pieces]
        for paragraph, words in pieces:
            assert paragraph.count(words) == 1
    assert "analysis" in page.get_text() and "Élève" not in page.select_one(
        '[id="entry-seance-analyse-analyse-1"]').get_text(), "a machine is never given a person's pseudonym"


def test_apply_keeps_an_existing_file_byte_for_byte_and_refuses_duplicates(small: Path, llm_server) -> None:
    configure_llm(small, llm_server.url)
    sidecar = small / "notes" / "conseil-a.extractions.yaml"
    original = sidecar.read_bytes()
    llm_server.script(reply(answer(("la réserve est de 800 euros", "fait", [("theme", "Budget")]),
                                   ("Le budget s'élève à quatre mille euros", "fait", []),
                                   ("Ce passage MASKEDPASSAGE reste dans le texte", "fait", []))))
    (item,) = run_analyse(small, ["conseil-a"], notebook="conseil", today=TODAY).notes
    record = yaml.safe_load(item.path.read_text(encoding="utf-8"))
    assert [p["quote"] for p in record["passages"]] == ["la réserve est de 800 euros",
                                                        "Ce passage MASKEDPASSAGE reste dans le texte"]
    assert {"quote": "Le budget s'élève à quatre mille euros", "reason": "already an extraction: a-budget"} \
        in record["left_out"]
    decisions = apply(item.path, only=[1], today=LATER)
    assert [d.decision for d in decisions] == ["accepted", "skipped"]
    text = sidecar.read_bytes()
    assert text.startswith(original), "the file as written (comments, layout) is kept; entries are appended"
    assert text[len(original):].decode("utf-8").splitlines()[1:] == [
        "  - id: conseil-a-analyse-1",
        '    quote: "la réserve est de 800 euros"',
        '    kind: "fait"',
        "    author: analysis",
        "    date: 2025-04-03",
    ]
    assert check_content(small).errors == []


def test_a_passage_the_note_no_longer_holds_is_rejected_at_apply(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    llm_server.script(reply(answer((SAID_BUDGET, "décision", []), (SAID_SPANNING, "proposition", []))))
    (item,) = run_analyse(content, [SLUG], today=TODAY).notes
    replace(content, NOTE, "1 200 euros", "1 500 euros")
    out = io.StringIO()
    review(item.path, out)
    assert "the note changed since the analysis" in out.getvalue()
    decisions = apply(item.path, today=LATER)
    assert [d.decision for d in decisions] == ["rejected", "accepted"]
    assert "no longer holds this passage" in decisions[0].reason
    entries = yaml.safe_load((content / "notes" / "seance-analyse.extractions.yaml").read_text(encoding="utf-8"))
    assert [e["quote"] for e in entries["extractions"]] == [
        "pour le foyer.\n\nLes élus demandent l'ouverture du foyer"]


def test_a_truncated_answer_writes_nothing_and_other_notes_go_on(content: Path, llm_server) -> None:
    # a small budget: the note takes several requests; the last one is cut off
    configure_llm(content, llm_server.url, extra="  analysis:\n    chunk_characters: 200\n")
    write(content, "notes/autre.md", HEAD.replace("Séance analysée", "Autre") + "Le foyer ferme à 17 heures.\n")
    llm_server.script(reply(answer((SAID_BUDGET, "décision", []))),
                      reply(answer(), finish="length"),
                      reply(answer(("Le foyer ferme à 17 heures.", "fait", []))))
    report = run_analyse(content, [SLUG, "autre"], today=TODAY)
    failed, done = report.notes
    assert "cut off" in failed.error and failed.path is None
    assert not (content / "proposals" / "extractions" / SLUG).exists(), "no proposal, no fingerprints"
    assert done.error == "" and done.path is not None and len(done.proposed) == 1
    # three answers were paid for: the first, the cut-off one (unusable, still spent), the other note's
    assert failed.usage["total_tokens"] == 2 * 160 and done.usage["total_tokens"] == 160
    assert report.usage["total_tokens"] == 3 * 160

    # the same through the command line: a non-zero exit, the reason, no traceback
    llm_server.script(reply(answer()), reply(answer(), finish="length"))
    out, err = io.StringIO(), io.StringIO()
    code = _main(["analyse", SLUG, "--content", str(content)], out, err)
    assert code == 3 and "FAILED, nothing written" in out.getvalue() and "Traceback" not in err.getvalue()
    assert not (content / "proposals" / "extractions" / SLUG).exists()


def test_server_errors_are_reported_per_note(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url, retries=1)
    llm_server.script(status(500), status(500))
    (item,) = run_analyse(content, [SLUG], today=TODAY).notes
    assert "HTTP 500" in item.error and proposal_files(content) == []


def test_reanalysis_sends_only_new_or_changed_elements(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    llm_server.script(reply(answer((SAID_BUDGET, "décision", []))))
    first = run_analyse(content, [SLUG], today=TODAY).notes[0]
    assert first.sent.elements == 5 and first.sent.context_elements == 0
    record = (content / "proposals" / "extractions" / SLUG / "analysed.yaml").read_text(encoding="utf-8")
    assert f"  # {PARAGRAPHS[0][:47]}…\n" in record, "reviewable: each element's start"

    added = ["Le foyer ouvrira le mercredi à partir de janvier.", "Un surveillant supplémentaire sera recruté."]
    write(content, NOTE, note_text(PARAGRAPHS + added))
    llm_server.script(reply(answer(("Un surveillant supplémentaire sera recruté.", "décision", []),
                                   ("Le point est reporté.", "fait", []))))
    calls = len(llm_server.requests)
    second = run_analyse(content, [SLUG], today=TODAY).notes[0]
    assert len(llm_server.requests) == calls + 1
    prompt = sent_text(llm_server)
    for paragraph in added:
        assert paragraph in prompt
    assert "<<< contexte, déjà analysé >>>\nLe point est reporté." in prompt, "one neighbour before, as context"
    for paragraph in PARAGRAPHS[:3]:
        assert paragraph not in prompt, "what the last analysis read is not sent again"
    total = sum(len(p) for p in PARAGRAPHS + added) + len("Ordre du jour")
    sent = sum(len(p) for p in added)
    assert (second.sent.elements, second.sent.characters, second.sent.note_elements) == (2, sent, 7)
    assert (second.sent.context_elements, second.sent.context_characters) == (1, len(PARAGRAPHS[3]))
    assert second.sent.note_characters == total and second.sent.share == round(100 * sent / total, 1)
    record = yaml.safe_load(second.path.read_text(encoding="utf-8"))
    assert [p["quote"] for p in record["passages"]] == [added[1]]
    assert record["left_out"] == [{"quote": "Le point est reporté.",
                                   "reason": "lies only in context elements, read at an earlier analysis"}]
    assert second.path.name == "2025-04-02-llm-2.yaml"

    # an edit in the middle sends that paragraph alone (its neighbours as context)
    edited = PARAGRAPHS[:1] + ["Les élus demandent l'ouverture du foyer le mercredi et le vendredi."] + \
        PARAGRAPHS[2:] + added
    write(content, NOTE, note_text(edited))
    llm_server.script(reply(answer()))
    third = run_analyse(content, [SLUG], today=TODAY).notes[0]
    assert (third.sent.elements, third.sent.context_elements) == (1, 2)
    assert edited[1] in sent_text(llm_server) and added[0] not in sent_text(llm_server)

    # nothing changed: nothing is sent, nothing is written
    calls, files = len(llm_server.requests), proposal_files(content)
    out, err = io.StringIO(), io.StringIO()
    assert _main(["analyse", SLUG, "--content", str(content)], out, err) == 0
    assert len(llm_server.requests) == calls and proposal_files(content) == files
    assert "nothing new since the last analysis (7 element(s) already read)" in out.getvalue()
    # --all reads the whole note again
    llm_server.script(reply(answer()))
    assert run_analyse(content, [SLUG], whole=True, today=TODAY).notes[0].sent.elements == 7


def test_the_command_line_prints_what_was_sent_and_the_tokens(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    write(content, "notes/autre.md", HEAD.replace("Séance analysée", "Autre") + "Le foyer ferme à 17 heures.\n")
    llm_server.script(reply(answer((SAID_BUDGET, "décision", [("theme", "Sport")]), (SAID_PARAPHRASE, "fait", []))),
                      reply(answer(("Le foyer ferme à 17 heures.", "fait", []))))
    out, err = io.StringIO(), io.StringIO()
    assert _main(["analyse", SLUG, "autre", "--content", str(content)], out, err) == 0, err.getvalue()
    text = out.getvalue()
    characters = sum(len(p) for p in PARAGRAPHS) + len("Ordre du jour")
    assert f"sent 5 of 5 element(s), {characters} of {characters} characters (100 % of the note)" in text
    assert "proposed 1 passage(s); left out 1" in text and "refused category theme: Sport" in text
    assert text.count("tokens: prompt 120, completion 40, total 160") == 2
    assert "total tokens: prompt 240, completion 80, total 320" in text
    proposal = content / "proposals" / "extractions" / SLUG / "2025-04-02-llm.yaml"
    out = io.StringIO()
    assert _main(["apply", str(proposal.parent / sorted(p.name for p in proposal.parent.glob("20*"))[0])],
                 out, io.StringIO()) == 0
    assert "[1] décision: accepted as seance-analyse-analyse-1" in out.getvalue()


def _main(argv: list[str], out: io.StringIO, err: io.StringIO) -> int:
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        return main(argv)
    finally:
        sys.stdout, sys.stderr = old


def test_offline_the_command_says_what_it_needs(content: Path) -> None:
    before = {p: p.read_bytes() for p in sorted(content.rglob("*")) if p.is_file()}
    result = subprocess.run([sys.executable, "-m", "generator", "analyse", SLUG, "--content", str(content)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    for needed in ("llm:", "base_url", "model", "api_key_env", "carnet.yaml", "nothing was written"):
        assert needed in result.stderr
    assert {p: p.read_bytes() for p in sorted(content.rglob("*")) if p.is_file()} == before
    # a key named but not exported: the same, naming the variable
    with (content / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write("llm:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  api_key_env: CARNET_TEST_UNSET_KEY\n")
    result = subprocess.run([sys.executable, "-m", "generator", "analyse", SLUG, "--content", str(content)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in __import__("os").environ.items() if k != "CARNET_TEST_UNSET_KEY"})
    assert result.returncode != 0 and "CARNET_TEST_UNSET_KEY" in result.stderr and "Traceback" not in result.stderr


def test_notes_and_notebooks_are_checked_before_anything_is_sent(small: Path, llm_server) -> None:
    configure_llm(small, llm_server.url)
    with pytest.raises(AnalyseError, match=r"several notebooks .*--notebook"):
        run_analyse(small, ["conseil-a"], today=TODAY)
    with pytest.raises(AnalyseError, match="not in notebook 'club'"):
        run_analyse(small, ["conseil-a"], notebook="club", today=TODAY)
    with pytest.raises(AnalyseError, match="no note 'absente'"):
        run_analyse(small, ["conseil-b", "absente"], today=TODAY)
    with pytest.raises(AnalyseError, match="is a wiki"):
        run_analyse(small, ["notes/wiki-budget.md"], today=TODAY)
    assert llm_server.requests == [] and proposal_files(small) == []


def test_review_refuses_a_file_that_is_not_a_proposal(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    llm_server.script(reply(answer()))
    run_analyse(content, [SLUG], today=TODAY)
    with pytest.raises(ProposalError, match="not a proposal"):
        review(content / "proposals" / "extractions" / SLUG / "analysed.yaml")


# --- the pure core ---------------------------------------------------------------------------


# --- review findings: each was a failure before its fix ------------------------------------


def _analyse_once(root: Path, server, *passages) -> Path:
    server.script(reply(answer(*passages)))
    (item,) = run_analyse(root, [SLUG], today=TODAY).notes
    assert item.error == "" and item.path is not None, item.error
    return item.path


def test_fresh_ids_never_reuse_an_id_cited_frozen_or_applied_before(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    # ids no longer held by any extraction, but still pointed at: a citation (dangling),
    # a comment marker, a synthesis's frozen perimeter, and an earlier applied proposal
    replace(content, "notes/wiki-budget.md", "[[ext:a-budget]].",
            "[[ext:a-budget]]. Plus tard [[ext:seance-analyse-analyse-1]].")
    replace(content, "notes/synthese-2025.md", "[[ext:a-budget]].",
            "[[ext:a-budget]] et [[com:seance-analyse-analyse-2]].")
    replace(content, "notes/synthese-2025.md", "perimeter:\n",
            "proposed:\n  notes: [seance-analyse]\n  extractions:\n    - id: seance-analyse-analyse-3\n"
            "      note: seance-analyse\n      quote: Le point est reporté.\n      sha256: 'x'\nperimeter:\n")
    write(content, f"proposals/extractions/{SLUG}/2025-01-01-llm.yaml",
          "id: 2025-01-01-llm\nkind: extractions\ntarget: seance-analyse\nprovenance: {method: human}\n"
          "passages: []\napplied:\n  date: '2025-01-02'\n  results:\n"
          "    - {index: 0, decision: accepted, id: seance-analyse-analyse-4}\n")
    path = _analyse_once(content, llm_server, (SAID_BUDGET, "décision", []), (SAID_SPANNING, "proposition", []))
    decisions = apply(path, today=LATER)
    assert [d.id for d in decisions] == ["seance-analyse-analyse-5", "seance-analyse-analyse-6"]


def test_an_unreadable_record_fails_its_note_only_and_all_skips_it(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    write(content, "notes/autre.md", HEAD.replace("Séance analysée", "Autre") + "Le foyer ferme à 17 heures.\n")
    write(content, f"proposals/extractions/{SLUG}/analysed.yaml", "elements: [unclosed\n")
    llm_server.script(reply(answer(("Le foyer ferme à 17 heures.", "fait", []))))
    out, err = io.StringIO(), io.StringIO()
    # not the model's failure: the content's (exit 2, as for a refused write)
    assert _main(["analyse", SLUG, "autre", "--content", str(content)], out, err) == 2
    text = out.getvalue()
    assert f"proposals/extractions/{SLUG}/analysed.yaml: line" in text and "delete the file" in text
    assert "autre (notebook conseil):" in text and "proposed 1 passage(s)" in text, "the other note goes on"
    assert "Traceback" not in err.getvalue()
    # --all reads the whole note again: the record is not read, and is replaced
    llm_server.script(reply(answer((SAID_BUDGET, "décision", []))))
    (item,) = run_analyse(content, [SLUG], whole=True, today=TODAY).notes
    assert item.error == "" and item.sent.elements == 5
    assert parse_record((content / "proposals" / "extractions" / SLUG / "analysed.yaml").read_text("utf-8"))


MALFORMED = [
    ("left_out: 5\n", "left_out", "'left_out' of the proposal must be a list"),
    ("left_out: [just a string]\n", "left_out", "must be a mapping"),
    ("passages:\n  - quote: x\n    refused_categories: 3\n", "refused_categories", "must be a list"),
    ("passages:\n  - quote: x\n    refused_categories: [Sport]\n", "refused_categories", "must be a mapping"),
    ("applied: {results: 5}\n", "applied", "has no 'date'"),
    ("applied: {date: '2025-01-02', results: 5}\n", "applied", "'results' of the 'applied' record must be a list"),
    ("applied:\n  date: '2025-01-02'\n  results:\n    - {index: x, decision: accepted}\n", "index: x",
     "'index'"),
    ("applied:\n  date: '2025-01-02'\n  results:\n    - 7\n", "- 7", "must be a mapping"),
    ("sent: 5\n", "sent", "must be a mapping"),
]


@pytest.mark.parametrize(("extra", "where", "message"), MALFORMED)
def test_a_malformed_extraction_proposal_is_reported_at_its_line(content: Path, extra: str, where: str,
                                                                message: str) -> None:
    rel = f"proposals/extractions/{SLUG}/2025-01-01-human.yaml"
    text = "id: 2025-01-01-human\nkind: extractions\ntarget: seance-analyse\nprovenance: {method: human}\n" + extra
    write(content, rel, text)
    for command in (review, apply):
        with pytest.raises(ProposalError) as caught:
            command(content / rel)
        line = next(n for n, text_line in enumerate(text.split("\n"), start=1) if where in text_line)
        assert f"{rel}:{line}" in str(caught.value) and message in str(caught.value), str(caught.value)
    assert (content / rel).read_text(encoding="utf-8") == text, "nothing written"


def test_an_applied_record_without_date_is_not_pending(content: Path) -> None:
    """It used to count as pending, and apply appended a second 'applied:' key."""
    from generator.commands.proposals import file_hash

    rel = "proposals/sections/wiki-budget/2025-01-01-scripted.yaml"
    sha = file_hash(content / "notes" / "wiki-budget.md")
    write(content, rel, f"id: 2025-01-01-scripted\nkind: sections\ntarget: wiki-budget\narticle_sha256: '{sha}'\n"
          "provenance: {method: scripted}\noperations: [{op: NoChange, heading: '', after_heading: '', "
          "content: ''}]\napplied: {results: []}\n")
    before = (content / rel).read_bytes()
    with pytest.raises(ProposalError, match=rf"{rel}:7.*has no 'date'"):
        apply(content / rel)
    assert (content / rel).read_bytes() == before


def test_apply_refuses_an_extractions_file_that_is_not_utf8(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    path = _analyse_once(content, llm_server, (SAID_BUDGET, "décision", []))
    sidecar = content / "notes" / "seance-analyse.extractions.yaml"
    sidecar.write_bytes(b"# notes\nextractions:\n  - id: x\n    quote: caf\xe9\n")
    before = {p: p.read_bytes() for p in sorted(content.rglob("*")) if p.is_file()}
    with pytest.raises(WriteRefused, match=r"notes/seance-analyse\.extractions\.yaml:4: .*not valid UTF-8"):
        apply(path, today=LATER)
    assert {p: p.read_bytes() for p in sorted(content.rglob("*")) if p.is_file()} == before


def test_apply_keeps_a_bom_and_crlf_line_ends(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    path = _analyse_once(content, llm_server, (SAID_BUDGET, "décision", []))
    sidecar = content / "notes" / "seance-analyse.extractions.yaml"
    original = b"\xef\xbb\xbf# notes\r\nextractions: []\r\n"
    sidecar.write_bytes(original)
    apply(path, today=LATER)
    data = sidecar.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# notes\r\nextractions:\r\n") and b"\n" not in data.replace(b"\r\n", b"")
    assert yaml.safe_load(data.decode("utf-8-sig"))["extractions"][0]["id"] == "seance-analyse-analyse-1"


def test_an_empty_note_says_it_has_no_text(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    write(content, "notes/vide.md", HEAD.split("## Ordre")[0])
    out, err = io.StringIO(), io.StringIO()
    assert _main(["analyse", "vide", "--content", str(content)], out, err) == 0, err.getvalue()
    assert "has no text to analyse" in out.getvalue() and "since the last analysis" not in out.getvalue()
    assert llm_server.requests == []


def test_the_proposal_path_is_shown_from_the_current_directory(content: Path, llm_server, monkeypatch) -> None:
    configure_llm(content, llm_server.url)
    llm_server.script(reply(answer((SAID_BUDGET, "décision", []))))
    monkeypatch.chdir(content)
    out, err = io.StringIO(), io.StringIO()
    assert _main(["analyse", SLUG, "--content", str(content)], out, err) == 0, err.getvalue()
    shown = f"proposals/extractions/{SLUG}/{dt.date.today().isoformat()}-llm.yaml"
    assert f"wrote {shown}; review it with 'carnet review {shown}'" in out.getvalue(), out.getvalue()


def test_apply_stores_the_notes_text_even_when_the_proposal_quote_was_edited(content: Path, llm_server) -> None:
    configure_llm(content, llm_server.url)
    path = _analyse_once(content, llm_server, (SAID_BUDGET, "décision", []))
    replace(content, path.relative_to(content).as_posix(), "quote: Le conseil vote un budget de 1 200 euros",
            "quote: \"Le conseil  vote un budget\\nde 1 200 euros\"")
    (decision,) = apply(path, today=LATER)
    assert decision.decision == "accepted"
    entries = yaml.safe_load((content / "notes" / "seance-analyse.extractions.yaml").read_text("utf-8"))
    assert entries["extractions"][0]["quote"] == "Le conseil vote un budget de 1 200 euros"
    assert check_content(content).anchored[SLUG].anchors[decision.id].portions == decision.portions


