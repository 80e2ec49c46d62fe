"""A model's answer is untrusted input (issue 18): its size and model name are bounded,
the endpoint is recorded without its secrets, every item is checked against the
request that asked for it (refused one by one, reported with its reason), the tokens
of failed calls are counted, what a model wrote never drives the terminal, and the
LLM commands share their exit codes (0 done, 2 settings, 3 the model failed)."""

from __future__ import annotations

import datetime as dt
import io
import json
import socket
import sys
from pathlib import Path

import pytest
import yaml

from generator.cli import EXIT_MODEL, EXIT_OK, EXIT_USAGE, main
from generator.llm import LLMAnswerError, LLMClient, LLMSettings, LLMTransportError, redacted_endpoint
from generator.llm.prompts import Prompt, load_prompt
from generator.llm.schema import placeholder, prompt_examples
from generator.pipeline import check_content
from generator.selection.oppositions import OppositionFault, find_oppositions, requests
from generator.terminal import visible
from generator.verification.judge import PairFault, judge
from support.llm_server import reply, status

TODAY = dt.date(2025, 4, 2)
SPENT = {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160}
MANY = """Le budget est de quatre mille euros [[ext:a-budget]].

Il a été voté à l'unanimité [[ext:a-two-paragraphs]].

Le budget est reconduit pour l'année [[ext:a-budget]] [[ext:a-two-paragraphs]].
"""
HOSTILE = "\x1b[2J\x1b]0;pwned\x07\r\u202egnp.exe\x9b"


def _main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = main(argv)
    finally:
        sys.stdout, sys.stderr = old
    return code, out.getvalue(), err.getvalue()


def _configure(content: Path, url: str, model: str = "modele-test", retries: int = 0) -> None:
    with (content / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write(f"llm:\n  base_url: {url}\n  model: {json.dumps(model)}\n  timeout: 5\n  max_retries: {retries}\n")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _no_control(text: str) -> None:
    raw = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0
           or 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069]
    assert raw == [], f"control characters reached the terminal: {raw!r}"


# -- the terminal ----------------------------------------------------------------------------

def test_visible_shows_control_and_bidi_characters() -> None:
    assert visible("a\x1b[31mb\rc\x08d\x7f\x9b\u202e\u2066e") == "a\\x1b[31mb\\x0dc\\x08d\\x7f\\x9b\\u202e\\u2066e"
    assert visible("line 1\nline\t2") == "line 1\\x0aline\\x092"
    assert visible("line 1\nline\t2\r", keep_newlines=True) == "line 1\nline\t2\\x0d"
    assert visible("Élève « cité » — ok ⟷ 日本") == "Élève « cité » — ok ⟷ 日本", "other characters unchanged"
    _no_control(visible(HOSTILE))


# -- the client: size, model name, endpoint --------------------------------------------------

PROMPT = Prompt("test", "Question : {{ question }}\n")
SCHEMA = {"type": "object", "required": ["reason"], "properties": {"reason": {"type": "string"}}}


def test_a_huge_answer_is_refused_unread_with_its_tokens(llm_server) -> None:
    llm_server.script(reply(json.dumps({"reason": "x" * 5_000_000})))
    client = LLMClient(LLMSettings(llm_server.url, "m", max_retries=0))
    with pytest.raises(LLMAnswerError, match=r"5,000,014 characters, more than the 1,000,000") as caught:
        client.chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")
    assert caught.value.usage == SPENT


def test_a_response_body_past_its_bound_is_not_even_read(llm_server) -> None:
    """The transport stops reading at 8,000,000 bytes: a bigger body never sits in memory."""
    from generator.llm.transport import MAX_RESPONSE_BYTES

    llm_server.script(reply("x" * (MAX_RESPONSE_BYTES + 1_000_000)))
    client = LLMClient(LLMSettings(llm_server.url, "m", max_retries=0))
    with pytest.raises(LLMAnswerError, match=r"larger than 8,000,000 bytes: refused unread"):
        client.chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")
    llm_server.script(reply(json.dumps({"reason": "r"})))
    assert client.chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")[0] == {"reason": "r"}, "the next answer is read again"


def test_a_model_name_past_its_bound_is_refused_and_a_short_one_is_data(llm_server) -> None:
    llm_server.script(reply(json.dumps({"reason": "r"})))
    with pytest.raises(LLMAnswerError, match="300 characters") as caught:
        LLMClient(LLMSettings(llm_server.url, "m" * 300, max_retries=0)).chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")
    assert caught.value.usage == SPENT
    llm_server.script(reply(json.dumps({"reason": "r"})))
    _data, provenance = LLMClient(LLMSettings(llm_server.url, "m\x1b[31m", max_retries=0)).chat_json(
        PROMPT, SCHEMA, max_tokens=200, question="?")
    assert provenance.model == "m\x1b[31m"
    assert "\x1b" not in yaml.safe_dump(provenance.as_record()), "written quoted and escaped"


def test_the_endpoint_is_recorded_and_shown_without_its_secrets(llm_server) -> None:
    assert redacted_endpoint("https://user:s3cret@api.example.org:8443/v1?key=s3cret#s3cret") == \
        "api.example.org:8443/v1"
    assert redacted_endpoint("http://[::1]:11434/v1") == "[::1]:11434/v1"
    assert redacted_endpoint("http://localhost:notaport/v1") == "(an unparsable address)"
    secret = llm_server.url.replace("http://", "http://carnet:s3cret@")
    llm_server.script(reply(json.dumps({"reason": "r"})))
    _data, provenance = LLMClient(LLMSettings(secret, "m", max_retries=0)).chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")
    assert provenance.endpoint == llm_server.url.split("/", 2)[2] and "s3cret" not in str(provenance.as_record())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = LLMClient(LLMSettings(f"http://carnet:s3cret@127.0.0.1:{port}/v1", "m", max_retries=0, timeout=2))
    with pytest.raises(LLMTransportError) as caught:
        down.chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")
    assert f"127.0.0.1:{port}/v1" in str(caught.value) and "s3cret" not in str(caught.value)


def test_placeholders_and_the_prompts_own_examples() -> None:
    for text in ("", "  ", "…", "...", "-", "?", "— …"):
        assert placeholder(text)
    assert not placeholder("Le passage le dit.") and not placeholder("1")
    examples = prompt_examples(load_prompt("verify_pairs", "fr").text)
    assert examples["rationale"] == {"…"} and examples["pair"] == {"p1"}
    question = prompt_examples(load_prompt("find_oppositions", "fr").text)["question"]
    assert placeholder("La question sur laquelle  elles s'opposent", question)


# -- verify: each pair once, with a rationale ------------------------------------------------

def _four_pairs(small: Path) -> dict:
    text = (small / "notes" / "wiki-budget.md").read_text(encoding="utf-8")
    head, front, _body = text.split("---\n", 2)
    (small / "notes" / "wiki-budget.md").write_text(f"{head}---\n{front}---\n{MANY}", encoding="utf-8")
    pending = {"wiki-budget": [a for a in check_content(small).assessments["wiki-budget"] if a.judgeable]}
    assert len(pending["wiki-budget"]) == 4
    return pending


def _verdicts(*items: tuple[str, str]) -> str:
    return json.dumps({"verdicts": [{"pair": p, "verdict": "supported", "rationale": r} for p, r in items]})


def test_verify_refuses_items_one_by_one_and_keeps_the_good_ones(small: Path, llm_server) -> None:
    pending = _four_pairs(small)
    llm_server.script(reply(_verdicts(("p1", "Le passage le dit."), ("p2", "Oui."), ("P2", "Oui."),
                                      ("p9", "Inventée."), ("p3", "…"))))
    client = LLMClient(LLMSettings(llm_server.url, "juge", max_retries=0))
    report = judge(small, pending, client, batch_size=4)
    assert report.judged == 1 and len(report.unjudged) == 3 and report.usage == SPENT
    faults = sorted((r.pair, r.fault) for r in report.refused)
    assert faults == [(0, PairFault.UNKNOWN_PAIR), (2, PairFault.ANSWERED_TWICE), (3, PairFault.PLACEHOLDER),
                      (4, PairFault.MISSING)], "twice is refused even when both agree"
    assert all(r.article == "wiki-budget" for r in report.refused)
    records = yaml.safe_load((small / "verdicts" / "wiki-budget.yaml").read_text(encoding="utf-8"))["verdicts"]
    assert [r["rationale"] for r in records] == ["Le passage le dit."]
    assert report.failed_batches == [] and not report.complete


def test_verify_says_a_batch_was_refused_when_no_item_is_usable(small: Path, llm_server) -> None:
    pending = _four_pairs(small)
    llm_server.script(reply(_verdicts(("p1", "…"), ("p2", ""), ("p3", "-"), ("p4", "x" * 2001))))
    report = judge(small, pending, LLMClient(LLMSettings(llm_server.url, "juge", max_retries=0)), batch_size=4)
    assert report.judged == 0 and len(report.unjudged) == 4 and not (small / "verdicts").exists()
    assert len(report.failed_batches) == 1 and "refused" in report.failed_batches[0]
    assert [r.fault for r in report.refused] == [PairFault.PLACEHOLDER] * 3 + [PairFault.TOO_LONG]


def test_verify_counts_the_tokens_of_a_failed_batch_and_exits_3(small: Path, llm_server) -> None:
    _four_pairs(small)
    _configure(small, llm_server.url)
    llm_server.script(reply(json.dumps({"verdicts": [{"pair": "p1"}]})),
                      reply(_verdicts(("p1", "Le passage le dit."), (f"p1{HOSTILE}", "Le passage le dit."), ("p2", "Le passage le dit."))))
    code, out, err = _main(["verify", "wiki-budget", "--content", str(small), "--batch", "2"])
    assert code == EXIT_MODEL, err
    assert "tokens reported by the server: 240 prompt + 80 completion = 320 over 2 answered request(s)" in err, \
        "the off-schema answer's tokens too"
    assert "failed batch: wiki-budget pairs 1–2" in err and "refused: wiki-budget an answer for pair" in err
    assert "run 'carnet verify --batch 1'" in err, "a batch refused whole: the way to send it differently"
    _no_control(out + err)
    llm_server.script(reply(_verdicts(("p1", "Le passage le dit."), ("p2", "Le passage le dit."))))
    code, _out, err = _main(["verify", "wiki-budget", "--content", str(small), "--batch", "2"])
    assert code == EXIT_OK, err


# -- oppositions -----------------------------------------------------------------------------

def _oppositions(*items: tuple[str, str, str]) -> str:
    return json.dumps({"oppositions": [{"a": a, "b": b, "question": q} for a, b, q in items]})


def test_oppositions_are_checked_against_their_own_request(llm_server) -> None:
    items = [(f"x{i:02d}", "mot " * 30) for i in range(12)]
    batches = requests(items, budget=1200)
    first = [i for i, _q in batches[0]]
    elsewhere = next(i for i, _q in items if i not in first)
    llm_server.script(reply(_oppositions(
        (first[0], first[1], "Faut-il ouvrir le foyer ?"),
        (first[1], first[0], "Une autre question ?"),          # the same pair again: the first is kept
        (first[0], elsewhere, "Hors de la requête ?"),          # in the perimeter, not in this request
        (first[2], first[2], "Elle-même ?"),
        (first[2], first[3], "…"),
        (first[3], first[4], "la question sur laquelle elles s'opposent"),
        (first[4], first[5], "?" * 501))))
    llm_server.script(*[reply(_oppositions()) for _ in batches[1:]])
    result = find_oppositions(LLMClient(LLMSettings(llm_server.url, "juge")), load_prompt("find_oppositions", "fr"),
                              items, 1200)
    assert len(batches) == 3 and len(first) == 8
    assert [(o.a, o.b, o.question) for o in result.found] == [(first[0], first[1], "Faut-il ouvrir le foyer ?")]
    assert [(r.request, r.fault) for r in result.refused] == [
        (1, OppositionFault.CONFLICT), (1, OppositionFault.UNKNOWN_ID), (1, OppositionFault.SAME_ID),
        (1, OppositionFault.PLACEHOLDER), (1, OppositionFault.PLACEHOLDER), (1, OppositionFault.TOO_LONG)]
    assert result.requests == len(batches) and result.provenance["usage"]["total_tokens"] == 160 * len(batches)


def test_a_failed_oppositions_request_loses_only_itself(llm_server) -> None:
    """Each request stands alone: the one refused is reported, the others' pairs are kept
    (handed on as they come), and the usage is that of every request answered, once."""
    items = [(f"x{i:02d}", "mot " * 30) for i in range(12)]
    batches = requests(items, 600)
    first = [i for i, _q in batches[0]]
    last = [i for i, _q in batches[2]]
    llm_server.script(reply(_oppositions((first[0], first[1], "Faut-il ouvrir le foyer ?"))),
                      reply(json.dumps({"oppositions": "aucune"})),
                      reply(_oppositions((last[0], last[-1], "Faut-il fermer le foyer ?"))))
    llm_server.respond(lambda body: reply(_oppositions()))
    answered = []
    client = LLMClient(LLMSettings(llm_server.url, "juge"))
    result = find_oppositions(client, load_prompt("find_oppositions", "fr"), items, 600, on_answer=answered.append)
    assert len(result.failed) == 1 and result.failed[0].startswith("request 2 "), result.failed
    assert [a.number for a in answered] == [n for n in range(1, len(batches) + 1) if n != 2]
    assert sorted(o.question for o in result.found) == ["Faut-il fermer le foyer ?", "Faut-il ouvrir le foyer ?"]
    assert client.ledger.requests == len(batches) and result.provenance["usage"]["total_tokens"] == 160 * len(batches)


# -- propose ---------------------------------------------------------------------------------

GOOD = {"op": "AppendToSection", "heading": "", "after_heading": "",
        "content": "Il a été voté à l'unanimité [[ext:a-two-paragraphs]]."}


@pytest.mark.parametrize("operations,message", [
    ([GOOD] * 3, "3 operations, more than the 2 asked for"),
    ([dict(GOOD, content="…")], "content is a placeholder"),
    ([dict(GOOD, op="InsertSection", heading="...")], "heading is a placeholder"),
    ([dict(GOOD, content="x" * 20_001)], "20,001 characters"),
])
def test_propose_refuses_operations_outside_the_request(small: Path, llm_server, operations, message) -> None:
    from generator.commands.proposals import propose

    _configure(small, llm_server.url)
    llm_server.script(reply(json.dumps({"operations": operations})))
    before = _tree(small)
    done = propose(small, "wiki-budget", provider="llm", max_operations=2, today=TODAY)
    (failed,) = done.failed
    assert done.path is None and message in failed and "its operations are refused" in failed
    assert _tree(small) == before, "a refused answer writes nothing"


def test_propose_exits_3_with_the_tokens_spent_and_2_without_settings(small: Path, llm_server) -> None:
    code, _out, err = _main(["propose", "wiki-budget", "--provider", "llm", "--content", str(small)])
    assert code == EXIT_USAGE and "llm:" in err, "settings are usage"
    _configure(small, llm_server.url)
    llm_server.script(reply(json.dumps({"operations": [dict(GOOD, content="")]})))
    code, _out, err = _main(["propose", "wiki-budget", "--provider", "llm", "--content", str(small)])
    assert code == EXIT_MODEL and "placeholder" in err and "Traceback" not in err
    assert "tokens reported by the server: 120 prompt + 40 completion = 160 over 1 answered request(s)" in err, err
    assert "attempt(s) got no usable answer" not in err, "a refused answer was still answered"
    llm_server.script(status(500))
    code, _out, err = _main(["propose", "wiki-budget", "--provider", "llm", "--content", str(small)])
    assert code == EXIT_MODEL and "HTTP 500" in err


def test_review_and_apply_show_what_the_model_wrote_without_obeying_it(small: Path, llm_server) -> None:
    _configure(small, llm_server.url, model=f"modele{HOSTILE}")
    outside = {"op": "AppendToSection", "heading": f"Pièces{HOSTILE}", "after_heading": "",
               "content": f"Un mécène {HOSTILE} finance [[ext:secret-ext]]."}
    llm_server.script(reply(json.dumps({"operations": [dict(GOOD, content=f"Voté {HOSTILE} [[ext:a-two-paragraphs]]."),
                                                       outside]})))
    code, out, err = _main(["propose", "wiki-budget", "--provider", "llm", "--content", str(small)])
    assert code == EXIT_OK, err
    (path,) = sorted((small / "proposals" / "sections" / "wiki-budget").glob("*.yaml"))
    code, out, err = _main(["review", str(path)])
    assert code == EXIT_OK and "modele\\x1b[2J" in out and "\\u202egnp.exe" in out
    _no_control(out + err)
    code, out, err = _main(["apply", str(path), "--only", "2"])  # the rejected one: the article is unchanged
    assert code == EXIT_OK and "AppendToSection 'Pièces\\x1b[2J" in out and "rejected" in out, out + err
    _no_control(out + err)


# -- analyse ---------------------------------------------------------------------------------

def _passages(*items: tuple[str, str]) -> str:
    return json.dumps({"passages": [{"quote": q, "kind": k, "categories": []} for q, k in items]})


def test_analyse_refuses_placeholders_unasked_kinds_and_huge_quotes(small: Path, llm_server) -> None:
    from generator.commands.analyse import run_analyse

    _configure(small, llm_server.url)
    llm_server.script(reply(_passages(("la réserve est de 800 euros", "Fait"), ("...", "fait"), ("", "fait"),
                                      ("la réserve est de 800 euros", "..."), ("la réserve", f"genre{HOSTILE}"),
                                      ("x" * 200_000, "fait"))))
    (item,) = run_analyse(small, ["conseil-a"], notebook="conseil", today=TODAY).notes
    assert item.error == "" and [(p.quote, p.kind) for p in item.proposed] == [("la réserve est de 800 euros", "fait")]
    assert [left.refused for left in item.left_out] == [True] * 5
    reasons = [left.reason for left in item.left_out]
    assert reasons[0].startswith("refused: a placeholder") and reasons[1].startswith("refused: a placeholder")
    assert "was not asked for" in reasons[2] and "was not asked for" in reasons[3]
    assert "200,000 characters" in reasons[4] and len(item.left_out[4].quote) <= 200


def test_analyse_refuses_an_answer_with_too_many_passages_and_exits_3(small: Path, llm_server) -> None:
    _configure(small, llm_server.url)
    llm_server.script(reply(_passages(*[("la réserve est de 800 euros", "fait")] * 51)))
    before = _tree(small)
    code, out, err = _main(["analyse", "conseil-a", "--notebook", "conseil", "--content", str(small)])
    assert code == EXIT_MODEL and "51 passages, more than the 50" in out and "tokens spent before the failure: " \
        "prompt 120" in out, out + err
    assert _tree(small) == before
    llm_server.script(reply(_passages(("la réserve est de 800 euros", "fait"), (f"la réserve{HOSTILE}", "inconnu"))))
    code, out, err = _main(["analyse", "conseil-a", "--notebook", "conseil", "--content", str(small)])
    assert code == EXIT_MODEL and "proposed 1 passage(s); left out 1" in out, "a refused passage: the model failed"
    assert "are not marked as read (their answer had refused items)" in out
    _no_control(out + err)
    # the elements of an answer with refused items are not recorded as read: sent again next time
    record = (small / "proposals" / "extractions" / "conseil-a" / "analysed.yaml").read_text(encoding="utf-8")
    assert "elements: []" in record, record
    (proposal,) = sorted((small / "proposals" / "extractions" / "conseil-a").glob("20*.yaml"))
    code, out, err = _main(["review", str(proposal)])
    assert code == EXIT_OK and "\\x1b[2J" in out
    _no_control(out + err)


def test_select_reports_refused_oppositions_and_exits_3(small: Path, llm_server) -> None:
    _configure(small, llm_server.url)
    ids = sorted(check_content(small).articles["wiki-budget"].perimeter_extractions or [])
    assert len(ids) >= 2
    llm_server.script(reply(_oppositions((ids[0], ids[1], f"Combien ?{HOSTILE}"), (ids[0], f"x{HOSTILE}", "Q ?"))))
    code, out, err = _main(["select", "wiki-budget", "--oppositions", "--content", str(small)])
    assert code == EXIT_MODEL, out + err
    assert "refused: request 1: the pair" in out and "names an extraction that was not in the request" in out
    assert "Combien ?\\x1b[2J" in out, "the recorded question is shown, escaped"
    _no_control(out + err)


def test_analyse_bounds_the_categories_of_a_passage(small: Path, llm_server) -> None:
    from generator.commands.analyse import run_analyse

    _configure(small, llm_server.url)
    categories = [{"axis": "theme", "category": "Budget"}, {"axis": "theme", "category": "B" * 5000}]
    categories += [{"axis": "theme", "category": f"C{i}"} for i in range(25)]
    llm_server.script(reply(json.dumps({"passages": [{"quote": "la réserve est de 800 euros", "kind": "fait",
                                                      "categories": categories}]})))
    (item,) = run_analyse(small, ["conseil-a"], notebook="conseil", today=TODAY).notes
    (passage,) = item.proposed
    assert passage.categories == {"theme": ("Budget",)}
    reasons = [r.reason for r in passage.refused]
    assert "over 200 characters" in reasons and sum("more than 20 categories" in r for r in reasons) == 6
    assert max(len(r.category) for r in passage.refused) <= 60


def test_text_that_is_not_unicode_is_refused_where_the_answer_arrives(small: Path, llm_server) -> None:
    """JSON's "\\ud800" parses into a lone surrogate, which no file and no terminal can
    hold: the answer is refused (exit 3, its tokens counted), nothing is written."""
    _configure(small, llm_server.url)
    before = _tree(small)
    llm_server.script(reply('{"verdicts": [{"pair": "p1", "verdict": "supported", "rationale": "Oui \\ud800."}]}'))
    code, out, err = _main(["verify", "--content", str(small)])
    assert code == EXIT_MODEL and "not valid Unicode" in out + err and "160" in out + err, out + err
    assert _tree(small) == before
