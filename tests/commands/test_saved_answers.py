"""``carnet ask --save``: an answer kept under ``content/`` and published by ``build`` like a
synthesis — citations that land on the note's own words, each pair's state, the passages
retrieved but not cited, the listing on its notebook and in llms.txt — and flagged when a
cited passage changes. Over real HTTP to the scripted endpoint."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from bs4 import BeautifulSoup

from generator.anchoring import anchor_note
from generator.cli import main
from generator.commands.save_answer import markdown_text
from generator.corpus.load import load_corpus
from generator.corpus.model import NoteType
from generator.markup import make_parser
from generator.pipeline import build, check_content
from generator.synthesis.audit import passage_hash
from generator.synthesis.claims import read_claims
from generator.verification.states import State
from support.asking import answer, configure, passage_with, verdicts
from support.cli import qualify
from support.llm_server import reply

QUESTION = "Comment le budget a-t-il été voté, et quelle réserve ?"


def ask_and_save(small: Path, llm_server, slug: str = "budget-vote", configured: bool = False) -> int:
    if not configured:
        configure(small, llm_server.url)
    budget, reserve = passage_with(small, "quatre mille"), passage_with(small, "réserve")
    llm_server.script(reply(answer(("Le budget a été voté à l'unanimité.", [(budget, "voté à l'unanimité")]),
                                   ("La réserve est de 800 euros.", [(reserve, "la réserve est de 800 euros")]),
                                   ("Le *conseil* [[ext:inventee]] <b>a</b> tout prévu depuis longtemps.", []),
                                   ("Le maire a signé.", [(budget, "le maire a signé")]))),
                      verdicts(("p1", "supported")))
    return main(["ask", QUESTION, "--content", str(small), "--no-tools", "--save", slug])


def page(site: Path, slug: str) -> BeautifulSoup:
    return BeautifulSoup((site / "notes" / f"{slug}.html").read_text(encoding="utf-8"), "html.parser")


def test_a_saved_answer_is_a_reviewable_note_the_build_publishes_like_a_synthesis(small: Path, llm_server,
                                                                                   tmp_path: Path) -> None:
    assert ask_and_save(small, llm_server) == 0
    saved = small / "notes" / "answers" / "budget-vote.md"
    text = saved.read_text(encoding="utf-8")
    assert "type: answer" in text and "question: " in text and "[[quote:q1]]" in text
    assert "method: llm" in text and "model: modele-test" in text, "who answered, as the server named it"
    assert "refused:" in text and "refusal: not-found" in text, "a refused quote is kept apart, with why"
    corpus, problems = load_corpus(small)
    note = corpus.notes["budget-vote"]
    assert note.type is NoteType.ANSWER and not [p for p in problems if p.file == "notes/answers/budget-vote.md"]
    record = note.article.answer
    assert [q.id for q in record.quotes] == ["q1", "q2"] and record.mode == "retrieval"
    # each quote's hash is the elements it lands in, recomputed here from the note itself
    anchored = anchor_note(corpus.notes["conseil-a"])[0]
    by_id = {e.id: i for i, e in enumerate(anchored.document.elements)}
    q1 = record.quotes[0]
    assert q1.sha256 == passage_hash(anchored.document.elements, [by_id[q1.passage.split("#")[1]]])
    verdict_file = small / "verdicts" / "budget-vote.yaml"
    assert "source: quote:q1" in verdict_file.read_text(encoding="utf-8")

    out = tmp_path / "site"
    qualify(small)  # the scripted judge, measured at the bar: its verdicts give states
    build(small, out)
    doc = page(out, "budget-vote")
    assert doc.select_one("h1").get_text() == QUESTION and doc.select_one(".answer-asked .provenance")
    links = doc.select(".note-body a.citation")
    assert [a.get_text() for a in links] == ["[1]", "[2]"]
    first = urlsplit(links[0]["href"])
    assert first.path == "conseil-a.html" and parse_qs(first.query)["quote"] == ["voté à l'unanimité"]
    target = page(out, "conseil-a").find(id=first.fragment)
    assert target is not None and "voté à l'unanimité" in target.get_text(), "it lands on the quoted element"
    # the same verifier as articles: verbatim, then the judge's recorded verdict
    assert "state-verified" in links[0]["class"] and "state-weak" in links[1]["class"]
    # the model's markup is the model's words, never the page's markup nor a citation
    body = doc.select_one(".note-body")
    assert body.find("b") is None and body.find("em") is None
    assert "Le *conseil* [[ext:inventee]] <b>a</b> tout prévu depuis longtemps." in body.get_text()
    assert doc.select_one(".unsourced-claim") is not None, "a statement with no anchored quote is unsourced"
    refused = doc.select(".refused-quotes li")
    assert [r.select_one("q").get_text() for r in refused] == ["le maire a signé"], "listed as refused"
    assert all("le maire a signé" not in (a.get("data-preview-quote") or "") for a in links), "never a citation"
    # retrieved but not cited = perimeter − cited, recomputed here from the file and the page
    retrieved = {r.passage for r in record.retrieved}
    cited = {f"conseil-a#{first.fragment}", f"conseil-a#{urlsplit(links[1]['href']).fragment}"}
    shown = {f"{urlsplit(a['href']).path[:-5]}#{urlsplit(a['href']).fragment}"
             for a in doc.select("#discarded .discarded-item a")}
    assert shown == retrieved - cited and shown
    # listed on its notebook and in llms.txt, and its JSON sibling carries the same states
    notebook = BeautifulSoup((out / "notebooks" / "conseil.html").read_text(encoding="utf-8"), "html.parser")
    assert [a.get_text() for a in notebook.select("#tab-answers .note-link")] == [QUESTION]
    assert "notes/budget-vote" in (out / "llms.txt").read_text(encoding="utf-8")
    data = json.loads((out / "notes" / "budget-vote.json").read_text(encoding="utf-8"))
    states = [pair["state"] for claim in data["claims"] for pair in claim["pairs"]]
    assert states == [State.VERIFIED, State.WEAK]
    assert data["claims"][0]["pairs"][0]["source_url"].endswith("/notes/" + links[0]["href"])


def test_a_changed_passage_flags_the_answer_and_a_vanished_quote_is_never_guessed(small: Path, llm_server,
                                                                                tmp_path: Path) -> None:
    assert ask_and_save(small, llm_server) == 0
    note = small / "notes" / "conseil-a.md"
    text = note.read_text(encoding="utf-8")
    assert "la réserve est de 800 euros" in text.lower()
    # the budget's paragraph changes around its quote; the reserve's words go
    note.write_text(text.replace("quatre mille", "quatre mille deux cents").replace("800", "900"), encoding="utf-8")
    checked = check_content(small)
    changed = [p for p in checked.problems if p.code == "changed-evidence"]
    detached = [p for p in checked.problems if p.code == "detached-quote"]
    assert changed and changed[0].file == "notes/answers/budget-vote.md" and changed[0].line
    assert detached and "q2" in detached[0].message
    out = tmp_path / "site"
    build(small, out)
    doc = page(out, "budget-vote")
    assert "q1" in doc.select_one(".act-status .changed").get_text()
    links = doc.select(".note-body a.citation")
    assert "detached" in links[1]["class"] and "quote" not in urlsplit(links[1]["href"]).query
    # a cited passage that changed is flagged, not counted as read but not cited
    record = load_corpus(small)[0].notes["budget-vote"].article.answer
    assert len(doc.select("#discarded .discarded-item")) == len(record.retrieved) - len(record.quotes)


def test_not_in_the_corpus_is_saved_and_published_as_such(small: Path, llm_server, tmp_path: Path) -> None:
    configure(small, llm_server.url)
    llm_server.script(reply(answer(("Le conseil a acheté un piano.", []), not_in_corpus=True)))
    assert main(["ask", "Quel piano le conseil a-t-il acheté ?", "--content", str(small), "--no-tools",
                 "--no-judge", "--save", "piano"]) == 0
    saved = (small / "notes" / "answers" / "piano.md").read_text(encoding="utf-8")
    assert "not_in_corpus: true" in saved and "piano." not in saved.split("---")[-1], "no statement as the corpus's"
    out = tmp_path / "site"
    build(small, out)
    doc = page(out, "piano")
    assert doc.select_one(".not-in-corpus") is not None and doc.select(".note-body a.citation") == []
    # said as what it is: the model's reading of the passages searched, which are listed; never a fact
    # about the notebooks
    retrieved = load_corpus(small)[0].notes["piano"].article.answer.retrieved
    said = " ".join(doc.select_one(".not-in-corpus").get_text().split())
    assert len(retrieved) == 1 and "Aucune réponse trouvée dans l'unique passage cherché" in said
    assert "pas la preuve" in said and doc.select_one(".not-in-corpus a[href='#discarded']") is not None
    shown = {f"{urlsplit(a['href']).path[:-5]}#{urlsplit(a['href']).fragment}"
             for a in doc.select("#discarded .discarded-item a")}
    assert shown == {r.passage for r in retrieved}, "the passages searched are listed"
    for view in ("piano.html", "piano.html.md"):
        assert "Pas dans le corpus" not in (out / "notes" / view).read_text(encoding="utf-8"), view


def test_a_saved_answer_with_no_statement_that_does_not_say_not_in_corpus_is_an_error(small: Path, llm_server,
                                                                                      tmp_path: Path) -> None:
    """An empty page is neither an answer nor "no answer found": the build stops at the file's line."""
    assert ask_and_save(small, llm_server) == 0
    saved = small / "notes" / "answers" / "budget-vote.md"
    front = saved.read_text(encoding="utf-8").split("\n---\n")[0]
    saved.write_text(front + "\n---\n\n", encoding="utf-8")
    line = front.split("\n").index("  not_in_corpus: false") + 1
    (problem,) = [p for p in check_content(small).errors if p.code == "empty-answer"]
    assert (problem.file, problem.line) == ("notes/answers/budget-vote.md", line)
    assert "not_in_corpus" in problem.message and problem.hint
    assert main(["build", str(small), "--out", str(tmp_path / "site")]) == 1
    saved.write_text(front.replace("not_in_corpus: false", "not_in_corpus: true") + "\n---\n", encoding="utf-8")
    assert not [p for p in check_content(small).errors if p.code == "empty-answer"], "said as no answer found: fine"


def test_an_empty_answer_is_never_written(small: Path) -> None:
    from generator.answering import Answer, Mode
    from generator.commands.save_answer import save_answer
    from generator.writes import WriteRefused

    empty = Answer("Le budget ?", Mode.RETRIEVAL, False, ("conseil",), provenance={"method": "llm"})
    with pytest.raises(WriteRefused, match="no statement"):
        save_answer(small, empty, "vide", dt.date(2025, 1, 1), {}, {}, ["conseil"])
    assert not (small / "notes" / "answers").exists()


def test_save_never_overwrites_and_refuses_a_bad_slug_before_asking(small: Path, llm_server,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    configure(small, llm_server.url)
    assert main(["ask", QUESTION, "--content", str(small), "--save", "conseil-a"]) == 2
    assert "already has this slug" in capsys.readouterr().err and llm_server.requests == [], "nothing asked"
    assert main(["ask", QUESTION, "--content", str(small), "--save", "Pas Un Slug"]) == 2
    assert ask_and_save(small, llm_server, configured=True) == 0
    before = (small / "notes" / "answers" / "budget-vote.md").read_bytes()
    assert main(["ask", QUESTION, "--content", str(small), "--save", "budget-vote"]) == 2
    assert (small / "notes" / "answers" / "budget-vote.md").read_bytes() == before


@pytest.mark.parametrize("text", [
    "# un titre de cinq mots ici", "> une citation de cinq mots", "- un élément de liste ici", "1. un numéro de liste ici",
    "12) deux numéros de liste ici", "un `code` dans la phrase là", "du **gras** et _souligné_ ici", "un [lien](http://x.org) ici",
    "<script>alert(1)</script> cinq mots ici", "une entité &amp; et &#65; ici", "un marqueur [[quote:q1]] inventé ici",
    "du ~~barré~~ dans la phrase", "a | b | c | d | e", "une barre \\ oblique inverse ici", "un ![image](x.png) et quatre mots",
    "+ plus au début de phrase", "= égal au début de phrase", "2024. L'année où tout changea",
])
def test_a_statement_reads_back_as_exactly_its_words(text: str) -> None:
    tokens = make_parser().parse(markdown_text(text) + " [[quote:q1]]\n")
    (claim,) = read_claims("answer", tokens, 1)
    assert claim.text == text and [m.key for m in claim.markers] == ["q1"]
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]


def test_a_passage_masked_or_a_note_made_private_since_is_never_shown(small: Path, llm_server,
                                                                      tmp_path: Path) -> None:
    assert ask_and_save(small, llm_server) == 0
    sidecar = small / "notes" / "conseil-a.extractions.yaml"
    sidecar.write_text(sidecar.read_text(encoding="utf-8") + (
        "  - id: a-masque-reserve\n    quote: la réserve est de 800 euros\n    kind: fait\n"
        "    author: Zoé Realname\n    masked: true\n"), encoding="utf-8")
    checked = check_content(small)
    assert [p.message for p in checked.problems if p.code == "masked-quote"] and \
        "q2" in next(p.message for p in checked.problems if p.code == "masked-quote")
    out = tmp_path / "site"
    build(small, out)
    html = (out / "notes" / "budget-vote.html").read_text(encoding="utf-8")
    assert "réserve est de 800" not in html.split('class="note-body"')[1].split("</article>")[0].replace(
        "La réserve est de 800 euros.", ""), "the masked words are neither quoted nor previewed"
    for sibling in ("budget-vote.json", "budget-vote.html.md", "budget-vote.annotations.jsonld"):
        text = (out / "notes" / sibling).read_text(encoding="utf-8")
        assert "la%20r%C3%A9serve" not in text and "« la réserve est de 800 euros »" not in text, sibling
    # the cited note leaves every public notebook: the build stops, naming the answer (INV-12)
    note = small / "notes" / "conseil-a.md"
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("  conseil:\n    theme: [Budget]\n    annee: [\"2024\"]\n  veille:\n    theme: [Subvention]\n",
                                 "  secret: {}\n"), encoding="utf-8")
    checked = check_content(small)
    assert [p for p in checked.errors if p.code == "private-link" and p.file == "notes/answers/budget-vote.md"]


def test_carnet_verify_judges_a_saved_answers_pairs_like_an_articles(small: Path, llm_server, tmp_path: Path) -> None:
    from support.answers import Answers

    configure(small, llm_server.url)
    reserve = passage_with(small, "réserve")
    llm_server.script(reply(answer(("La réserve du budget est de 800 euros.", [(reserve, "la réserve est de 800 euros")]))))
    assert main(["ask", "Quelle réserve ?", "--content", str(small), "--no-tools", "--no-judge", "--save", "reserve"]) == 0
    assert not (small / "verdicts" / "reserve.yaml").exists()
    llm_server.respond(Answers().respond)
    assert main(["verify", "reserve", "--content", str(small)]) == 0
    recorded = (small / "verdicts" / "reserve.yaml").read_text(encoding="utf-8")
    assert "source: quote:q1" in recorded and "method: llm" in recorded
    out = tmp_path / "site"
    qualify(small)
    build(small, out)
    (link,) = page(out, "reserve").select(".note-body a.citation")
    assert "reason-not-judged" not in link["class"], "the verdict recorded gives the pair its state"


def test_controls_and_bidi_a_model_wrote_reach_no_output_raw(small: Path, llm_server, tmp_path: Path) -> None:
    """ESC (which drives a terminal) and bidi overrides (which reorder what a reader sees)
    in a model's answer and in its judge's rationale are shown as escapes in every output
    — page, text, Markdown, JSON, llms-full.txt — as in the terminal (issue 56)."""
    configure(small, llm_server.url)
    budget = passage_with(small, "quatre mille")
    llm_server.script(reply(answer(("Le budget \x1b[2J a été voté \u202eà l'unanimité.",
                                    [(budget, "voté à l'unanimité")]))),
                      reply(json.dumps({"verdicts": [{"pair": "p1", "verdict": "supported",
                                                      "rationale": "Le passage \u202e le dit \x1b]0;x\x07."}]})))
    assert main(["ask", QUESTION, "--content", str(small), "--no-tools", "--save", "budget-vote"]) == 0
    qualify(small)
    out = tmp_path / "site"
    build(small, out, search=False)
    raw = {rel.relative_to(out).as_posix(): rel.read_bytes().decode("utf-8") for rel in out.rglob("*")
           if rel.is_file() and rel.suffix in (".html", ".txt", ".md", ".json", ".xml", ".jsonld")}
    for rel, text in raw.items():
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text, rel
    assert "\\u202e" in raw["llms-full.txt"] and "\\x1b[2J" in raw["notes/budget-vote.txt"]
    assert "\\u202e le dit" in raw["notes/budget-vote.html"], "the judge's rationale, escaped"
