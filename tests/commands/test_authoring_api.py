"""``carnet serve --edit`` over HTTP, on a copy of the example: the secret exchanged for
a cookie, the edit layer linked only for that browser, and every write refused unless
it comes from this server's own page (Host, Origin, cookie, token, size, JSON) — each
refusal writing nothing; then the writes themselves, through the write seam, and undo."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from generator.authoring.api import API, KEY, MAX_BODY, PREFIX, TOKEN_HEADER, edit_layer
from generator.commands.serve import Server
from generator.site.headers import SECURITY_HEADERS
from generator.yamledit import records

CONTENT = Path(__file__).resolve().parents[2] / "content"
NOTE = "cvl-2024-09-19"
SIDECAR = f"notes/{NOTE}.extractions.yaml"
PARAGRAPH, ITEM = "e-5b19373da2", "e-2967cab823"  # the foyer paragraph (with emphasis) and the list item after it


class Browser:
    """A client of the server: its cookie once it opened the printed address."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.host, self.port = server.httpd.server_address[:2]
        self.cookie = ""

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        sent = {"Cookie": self.cookie} if self.cookie else {}
        sent.update(headers or {})
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()

    def open_key(self) -> None:
        assert self.server.editing is not None
        status, headers, _ = self.request("GET", f"/notes/{NOTE}.html?{KEY}={quote(self.server.editing.editor.secret)}")
        assert status == 303
        self.cookie = headers["Set-Cookie"].split(";")[0]

    def state(self, slug: str = NOTE) -> dict[str, str]:
        page = self.request("GET", f"/notes/{slug}.html")[2].decode()
        found = re.search(r'<meta name="carnet-edit" content="([^"]*)">', page)
        assert found, "the edit layer is linked"
        import html

        return dict(json.loads(html.unescape(found.group(1))))

    def post(self, operation: str, body: dict[str, object] | bytes, headers: dict[str, str] | None = None,
             ) -> tuple[int, dict[str, object]]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        assert self.server.editing is not None
        sent = {"Content-Type": "application/json", TOKEN_HEADER: self.server.editing.editor.token,
                "Origin": f"http://127.0.0.1:{self.port}"}
        sent.update(headers or {})
        status, _, answer = self.request("POST", API + operation, data, {k: v for k, v in sent.items() if v})
        return status, json.loads(answer)


def snapshot(content: Path) -> dict[str, bytes]:
    return {p.relative_to(content).as_posix(): p.read_bytes() for p in sorted(content.rglob("*")) if p.is_file()}


def serve(content: Path, out: Path, author: str | None = None) -> Server:
    running = Server(content, out, port=0, search=False, edit=edit_layer(content, author))
    running.start()
    return running


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    """One server over a copy of the example, for the refusals (which write nothing)."""
    root = tmp_path_factory.mktemp("edit")
    content = root / "content"
    shutil.copytree(CONTENT, content)
    running = serve(content, root / "site", author="Zoé Martin")
    yield running, content
    running.close()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    """A server over its own copy of the example, for the writes."""
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    running = serve(content, tmp_path / "site", author="Zoé Martin")
    yield running, content
    running.close()


def selection(state: dict[str, str], **extra: object) -> dict[str, object]:
    return {"note": state["note"], "digest": state["digest"],
            "start": {"element": PARAGRAPH, "context": "Les élus demandent que le foyer reste ouvert pendant la "},
            "end": {"element": ITEM, "context": " canapés abîmés."}, "kind": "proposition", **extra}


def test_the_secret_is_exchanged_for_a_strict_cookie_and_only_then_is_the_edit_layer_linked(
        shared: tuple[Server, Path]) -> None:
    server, _content = shared
    browser = Browser(server)
    status, headers, page = browser.request("GET", f"/notes/{NOTE}.html")
    assert status == 200 and PREFIX.encode() not in page, "no cookie: the page as without --edit"
    status, headers, _ = browser.request("GET", f"/notes/{NOTE}.html?{KEY}=not-the-secret")
    assert status == 403 and "Set-Cookie" not in headers
    status, headers, _ = browser.request("GET", f"/?{KEY}={quote(server.editing.editor.secret)}",  # type: ignore[union-attr]
                                         headers={"Host": "evil.example"})
    assert status == 403 and "Set-Cookie" not in headers, "DNS rebinding: the key is not exchanged on a foreign host"
    browser.open_key()
    cookie = browser.cookie.split("=", 1)
    assert cookie[0] == f"carnet_edit_{browser.port}"
    status, headers, _ = Browser(server).request(
        "GET", f"/notes/{NOTE}.html?{KEY}={quote(server.editing.editor.secret)}")  # type: ignore[union-attr]
    assert "HttpOnly" in headers["Set-Cookie"] and "SameSite=Strict" in headers["Set-Cookie"]
    assert headers["Location"] == f"/notes/{NOTE}.html", "the secret leaves the address bar"
    status, headers, page = browser.request("GET", f"/notes/{NOTE}.html")
    assert status == 200
    assert f'<script src="{PREFIX}edit.js" defer></script>'.encode() in page
    assert b"<script>" not in page.split(b"<body", 1)[1], "no inline script: the page's policy stays"
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value
    state = browser.state()
    assert state["note"] == NOTE and state["digest"] and state["token"] == server.editing.editor.token  # type: ignore[union-attr]
    status, headers, script = browser.request("GET", PREFIX + "edit.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript") and script
    assert browser.request("GET", PREFIX + "../carnet.yaml")[0] == 400
    assert browser.request("GET", PREFIX + "secret.txt")[0] == 404


def test_reading_is_unchanged_without_edit(small: Path, tmp_path: Path) -> None:
    plain = Server(small, tmp_path / "site", port=0, search=False)
    plain.start()
    try:
        browser = Browser(plain)
        assert browser.request("POST", API + "extract", b"{}", {"Content-Type": "application/json"})[0] == 405
        assert browser.request("GET", PREFIX + "edit.js")[0] == 404
        assert browser.request("GET", f"/?{KEY}=x")[0] == 200
    finally:
        plain.close()


REFUSALS = [
    ("no cookie", {}, "drop-cookie", 403, "key"),
    ("no token", {TOKEN_HEADER: ""}, "", 403, "token"),
    ("a wrong token", {TOKEN_HEADER: "0" * 64}, "", 403, "token"),
    ("a foreign Origin", {"Origin": "https://evil.example"}, "", 403, "origin"),
    ("an Origin of another port", {"Origin": "http://127.0.0.1:1"}, "", 403, "origin"),
    ("the null Origin", {"Origin": "null"}, "", 403, "origin"),
    ("a cross-site fetch", {"Sec-Fetch-Site": "cross-site"}, "", 403, "origin"),
    ("another Host", {"Host": "evil.example"}, "", 403, "host"),
    ("another Host's port", {"Host": "127.0.0.1:1"}, "", 403, "host"),
    ("a form's body", {"Content-Type": "application/x-www-form-urlencoded"}, "", 415, "type"),
    ("a body that is not JSON", {}, "not-json", 400, "json"),
    ("a body that is a JSON list", {}, "list", 400, "json"),
    ("a body over the bound", {}, "huge", 413, "too-large"),
    ("a page loaded before the file changed", {}, "stale", 409, "stale"),
    ("a note named by a path", {}, "path", 404, "refused"),
]


@pytest.mark.parametrize(("why", "headers", "body", "status", "code"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_each_refused_write_writes_nothing(shared: tuple[Server, Path], why: str, headers: dict[str, str],
                                           body: str, status: int, code: str) -> None:
    server, content = shared
    browser = Browser(server)
    browser.open_key()
    state = browser.state()
    before = snapshot(content)
    sent: dict[str, object] | bytes = selection(state)
    if body == "drop-cookie":
        browser.cookie = ""
    elif body == "not-json":
        sent = b"{'note': "
    elif body == "list":
        sent = b"[]"
    elif body == "huge":
        sent = json.dumps(selection(state, comment={"text": "x" * MAX_BODY})).encode()
    elif body == "stale":
        sent = selection({**state, "digest": "0" * 64})
    elif body == "path":
        sent = selection({**state, "note": "../carnet"})
    answer_status, answer = browser.post("extract", sent, headers)
    assert (answer_status, answer["code"]) == (status, code), answer
    assert answer["ok"] is False and answer["error"]
    assert snapshot(content) == before, f"{why}: nothing written"


def test_a_file_changed_on_disk_after_the_page_was_loaded_is_not_overwritten(fresh: tuple[Server, Path]) -> None:
    server, content = fresh
    browser = Browser(server)
    browser.open_key()
    state = browser.state()
    edited = (content / SIDECAR).read_bytes() + b"# edited by hand meanwhile\n"
    (content / SIDECAR).write_bytes(edited)
    status, answer = browser.post("comment", {"note": NOTE, "digest": state["digest"], "extraction": "cvl-0919-adulte",
                                              "stance": "agree", "text": "Oui."})
    assert (status, answer["code"]) == (409, "stale")
    assert "reload" in str(answer["error"])
    assert (content / SIDECAR).read_bytes() == edited


def check_content_builds(content: Path, tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "generator", "build", str(content), "--out", str(tmp_path / "strict"),
                          "--strict", "--no-search"], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr


def unchanged_records(old: bytes, new: bytes, changed: set[tuple[str, int]]) -> None:
    before, after = records(old.decode()), records(new.decode())
    for key, text in before.items():
        if key not in changed and key != ("extractions",):
            assert after[key] == text, key


@pytest.mark.slow
def test_extract_comment_reply_withdraw_mask_and_undo_through_the_write_seam(
        fresh: tuple[Server, Path], tmp_path: Path) -> None:
    server, content = fresh
    browser = Browser(server)
    browser.open_key()
    original = (content / SIDECAR).read_bytes()

    status, answer = browser.post("extract", selection(browser.state(), comment={"text": "À voter.",
                                                                                  "stance": "agree"}))
    assert status == 200, answer
    new_id = str(answer["record"])
    written = yaml.safe_load((content / SIDECAR).read_text())["extractions"]
    assert written[-1]["id"] == new_id and written[-1]["author"] == "Zoé Martin"
    # the note's own text over the selection (the emphasis and the soft line break as read), never the browser's
    assert written[-1]["quote"].startswith("pause méridienne, y compris le mercredi. M. Delorme rappelle")
    assert written[-1]["quote"].endswith("séance budgétaire.\n\nRemplacer les")
    assert written[-1]["comments"][0]["text"] == "À voter."
    unchanged_records(original, (content / SIDECAR).read_bytes(), set())

    # a selection the engine cannot place: refused with its reason, nothing written
    before = snapshot(content)
    server.changed()
    status, answer = browser.post("extract", {**selection(browser.state()),
                                              "start": {"element": PARAGRAPH, "context": "Pas le texte de la note "}})
    assert (status, answer["code"]) == (422, "unplaced") and "reload" in str(answer["error"])
    assert snapshot(content) == before

    def post(operation: str, **body: object) -> dict[str, object]:
        status, answer = browser.post(operation, {"note": NOTE, "digest": browser.state()["digest"], **body})
        assert status == 200, answer
        return answer

    comment = post("comment", extraction="cvl-0919-adulte", stance="question", text="Lequel ?")
    reply = post("comment", extraction="cvl-0919-adulte", stance="nuance", text="Celui du foyer.")
    status, answer = browser.post("withdraw", {"note": NOTE, "digest": browser.state()["digest"], "comment": "c-0919-1",
                                               "reason": "pas à moi"})
    assert (status, answer["code"]) == (403, "not-yours"), "only one's own comment is withdrawn"
    post("withdraw", comment=comment["record"], reason="posée ailleurs")
    post("mask", extraction="cvl-0919-prises")
    said = yaml.safe_load((content / SIDECAR).read_text())["extractions"]
    adulte = next(e for e in said if e["id"] == "cvl-0919-adulte")
    assert [c["id"] for c in adulte["comments"]] == [comment["record"], reply["record"]]
    assert "text" not in adulte["comments"][0] and adulte["comments"][0]["withdrawn"]["reason"] == "posée ailleurs"
    assert adulte["comments"][0]["text_sha256"]
    assert next(e for e in said if e["id"] == "cvl-0919-prises")["masked"] is True
    check_content_builds(content, tmp_path)

    # undo takes back the last write (the mask), byte for byte
    masked = (content / SIDECAR).read_bytes()
    post("undo")
    assert "masked" not in next(e for e in yaml.safe_load((content / SIDECAR).read_text())["extractions"]
                                if e["id"] == "cvl-0919-prises")
    assert (content / SIDECAR).read_bytes() != masked
    # a file edited by hand since the write it would undo: refused, the edit kept
    hand = (content / SIDECAR).read_bytes() + b"# by hand\n"
    (content / SIDECAR).write_bytes(hand)
    status, answer = browser.post("undo", {})
    assert (status, answer["code"]) == (409, "stale")
    assert (content / SIDECAR).read_bytes() == hand
    check_content_builds(content, tmp_path)


def test_without_as_the_first_write_asks_who_is_writing(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    server = serve(content, tmp_path / "site")
    try:
        browser = Browser(server)
        browser.open_key()
        body = {"note": NOTE, "digest": browser.state()["digest"], "extraction": "cvl-0919-adulte", "text": "Oui."}
        before = snapshot(content)
        status, answer = browser.post("comment", body)
        assert (status, answer["code"]) == (400, "author-needed")
        assert snapshot(content) == before
        status, answer = browser.post("comment", {**body, "author": "Léa Petit"})
        assert status == 200
        said = yaml.safe_load((content / SIDECAR).read_text())["extractions"]
        assert next(e for e in said if e["id"] == "cvl-0919-adulte")["comments"][-1]["author"] == "Léa Petit"
    finally:
        server.close()


def test_edit_listens_on_127_0_0_1_only(small: Path, tmp_path: Path) -> None:
    from generator.problems import CarnetError

    with pytest.raises(CarnetError, match=r"127\.0\.0\.1 only"):
        Server(small, tmp_path / "site", host="0.0.0.0", port=0, edit=edit_layer(small))


VERDICT = {"note": "cvl-wiki-foyer", "claim": "claim-322b9f90", "source": "ext:cvl-0919-foyer-ouverture",
           "verdict": "supported", "rationale": "Le passage le dit."}


@pytest.mark.parametrize(("change", "status"), [
    ({"source": "ext:cvl-0919-prises"}, 404),  # a source this claim does not cite
    ({"claim": "claim-00000000"}, 404),
    ({"verdict": "true"}, 400),
    ({"note": NOTE}, 404),  # a note that is no article: nothing to judge
], ids=["uncited source", "unknown claim", "unknown verdict", "not an article"])
def test_a_verdict_on_a_pair_the_build_does_not_have_is_refused(shared: tuple[Server, Path],
                                                                change: dict[str, str], status: int) -> None:
    server, content = shared
    browser = Browser(server)
    browser.open_key()
    body = {**VERDICT, **change}
    body["digest"] = browser.state(str(body["note"]))["digest"]
    before = snapshot(content)
    answer_status, answer = browser.post("verdict", body)
    assert answer_status == status, answer
    assert snapshot(content) == before


def test_a_verdict_and_a_contestation_carry_the_builds_keys_and_method_human(fresh: tuple[Server, Path]) -> None:
    server, content = fresh
    browser = Browser(server)
    browser.open_key()
    status, answer = browser.post("verdict", {**VERDICT, "digest": browser.state("cvl-wiki-foyer")["digest"]})
    assert status == 200, answer
    written = yaml.safe_load((content / "verdicts/cvl-wiki-foyer.yaml").read_text())["verdicts"][-1]
    assert written["claim_sha256"].startswith("sha256:") and written["source_sha256"].startswith("sha256:")
    assert written["provenance"]["method"] == "human" and written["provenance"]["author"] == "Zoé Martin"
    status, answer = browser.post("contest", {"note": "cvl-wiki-foyer", "claim": "claim-322b9f90",
                                              "source": "ext:cvl-0919-foyer-ouverture", "reason": "Non.",
                                              "digest": browser.state("cvl-wiki-foyer")["digest"]})
    assert status == 200, answer
    contested = yaml.safe_load((content / "contestations/cvl-wiki-foyer.yaml").read_text())["contestations"][-1]
    assert contested["source"] == "ext:cvl-0919-foyer-ouverture" and contested["author"] == "Zoé Martin"


def test_adopting_a_synthesis_as_carnet_adopt_does_and_undoing_it(small: Path, tmp_path: Path) -> None:
    server = serve(small, tmp_path / "site", author="Conseil des élèves")
    try:
        browser = Browser(server)
        browser.open_key()
        state = browser.state("synthese-2025")
        assert state["type"] == "synthesis" and state["adoptable"] is True
        original = (small / "notes/synthese-2025.md").read_bytes()
        status, answer = browser.post("adopt", {"note": "synthese-2025", "digest": state["digest"]})
        assert status == 200, answer
        adopted = (small / "notes/synthese-2025.md").read_text(encoding="utf-8")
        assert 'by: "Conseil des élèves"' in adopted and "hash: sha256:" in adopted
        status, answer = browser.post("adopt", {"note": "synthese-2025",
                                                "digest": browser.state("synthese-2025")["digest"]})
        assert (status, answer["code"]) == (409, "refused") and "already adopted" in str(answer["error"])
        status, answer = browser.post("undo", {})
        assert status == 200, answer
        assert (small / "notes/synthese-2025.md").read_bytes() == original
    finally:
        server.close()


def test_apply_refuses_an_unknown_proposal_and_an_empty_choice(shared: tuple[Server, Path]) -> None:
    server, content = shared
    browser = Browser(server)
    browser.open_key()
    digest = browser.state("cvl-wiki-foyer")["digest"]
    before = snapshot(content)
    status, answer = browser.post("apply", {"note": "cvl-wiki-foyer", "digest": digest, "proposal": "../../carnet",
                                            "accept": [1]})
    assert status == 404, answer
    status, answer = browser.post("apply", {"note": "cvl-wiki-foyer", "digest": digest,
                                            "proposal": "2026-11-29-extractive", "accept": []})
    assert (status, answer["code"]) == (400, "nothing")
    status, answer = browser.post("apply", {"note": "cvl-wiki-foyer", "digest": digest,
                                            "proposal": "2026-11-29-extractive", "accept": [1]})
    assert status == 409 and "already applied" in str(answer["error"]), "carnet apply's own refusal"
    assert snapshot(content) == before
    status, _headers, data = browser.request("GET", API + "proposals?note=cvl-wiki-foyer")
    assert status == 200 and json.loads(data)["proposals"] == [], "applied proposals are not pending"
    assert Browser(server).request("GET", API + "proposals?note=cvl-wiki-foyer")[0] == 403, "not without the cookie"


def test_the_layer_speaks_the_sites_language_and_only_to_this_runs_browser(tmp_path: Path) -> None:
    from generator.authoring.api import EditApi, edit_strings
    from generator.authoring.operations import Editor

    editing = EditApi(Editor(tmp_path))
    page = b'<!DOCTYPE html>\n<html lang="en">\n<head>\n</head>\n<body></body>\n</html>\n'
    cookie = f"{editing.cookie_name(8000)}={editing.editor.secret}"
    assert editing.inject(page, "/index.html", {"host": "127.0.0.1:8000"}, 8000) == page, "no cookie: as it was"
    assert editing.inject(page, "/index.html", {"host": "evil.example", "cookie": cookie}, 8000) == page
    assert editing.inject(page, "/index.html", {"host": "127.0.0.1:8000", "cookie": cookie}, 9000) == page, \
        "another run's port: another cookie"
    injected = editing.inject(page, "/index.html", {"host": "localhost:8000", "cookie": cookie}, 8000).decode()
    assert "Undo the last write" in injected and "Annuler" not in injected
    assert edit_strings("fr-CA")["edit_extract"] == "Extraire" and edit_strings("en")["edit_extract"] == "Extract"


def test_as_goes_with_edit(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from generator.cli import main

    assert main(["serve", str(small), "--as", "Zoé"]) != 0
    assert "--as NAME goes with --edit" in capsys.readouterr().err


def test_a_change_another_command_left_half_made_is_never_overwritten(fresh: tuple[Server, Path]) -> None:
    server, content = fresh
    browser = Browser(server)
    browser.open_key()
    journal = content / ".carnet-change.json"
    journal.write_text(json.dumps({"command": "carnet apply proposals/sections/x/1.yaml", "files": {}}))
    kept = journal.read_bytes()
    before = snapshot(content)
    status, answer = browser.post("comment", {"note": NOTE, "digest": browser.state()["digest"],
                                              "extraction": "cvl-0919-adulte", "text": "Oui."})
    assert (status, answer["code"]) == (409, "busy") and "carnet apply" in str(answer["error"])
    assert browser.post("undo", {})[1]["code"] == "busy"
    assert snapshot(content) == before and journal.read_bytes() == kept


def test_a_method_refused_names_post_among_those_allowed_only_with_the_edit_layer(
        shared: tuple[Server, Path], tmp_path: Path) -> None:
    server, _content = shared
    status, headers, _ = Browser(server).request("PUT", "/index.html", b"{}")
    assert status == 405 and headers["Allow"] == "GET, HEAD, POST"
    plain = Server(CONTENT, tmp_path / "site", port=0, search=False)
    plain.start()
    try:
        status, headers, _ = Browser(plain).request("POST", API + "comment", b"{}",
                                                    {"Content-Type": "application/json"})
        assert status == 405 and headers["Allow"] == "GET, HEAD"
    finally:
        plain.close()


# --- the extract form's categories: the note's membership, in the same write ----------------------

NOTE_FILE = f"notes/{NOTE}.md"
CATEGORIES = {"cvl": {"theme": ["Vie scolaire", "Locaux", "Budget"], "annee": ["2024-2025"]}}


def notebooks_block(text: str) -> tuple[list[str], list[str]]:
    """A note's lines split: those of its front matter's ``notebooks:`` block, and all the others."""
    lines = text.split("\n")
    start = lines.index("notebooks:")
    end = start + 1
    while lines[end].startswith(" "):
        end += 1
    return lines[start:end], lines[:start] + lines[end:]


@pytest.mark.slow
def test_categories_checked_in_the_extract_form_go_to_the_notes_membership_in_the_same_write(
        fresh: tuple[Server, Path], tmp_path: Path) -> None:
    server, content = fresh
    browser = Browser(server)
    browser.open_key()
    state = browser.state()
    shown = {nb["slug"]: nb for nb in state["notebooks"]}  # type: ignore[attr-defined]
    theme = next(a for a in shown["cvl"]["axes"] if a["key"] == "theme")
    assert "Budget" in theme["categories"] and theme["checked"] == ["Vie scolaire", "Locaux"], \
        "the page is given the notebook's axes and the note's categories there"
    note, sidecar = (content / NOTE_FILE).read_bytes(), (content / SIDECAR).read_bytes()
    status, answer = browser.post("extract", selection(state, categories=CATEGORIES))
    assert status == 200, answer
    assert set(answer["files"]) == {SIDECAR, NOTE_FILE}  # type: ignore[arg-type]
    written = (content / NOTE_FILE).read_text(encoding="utf-8")
    block, others = notebooks_block(written)
    assert block == ["notebooks:", "  cvl:", "    theme: [Vie scolaire, Locaux, Budget]", "    annee: [2024-2025]"]
    assert others == notebooks_block(note.decode())[1], "every other line of the note byte for byte"
    unchanged_records(sidecar, (content / SIDECAR).read_bytes(), set())
    assert yaml.safe_load((content / SIDECAR).read_text())["extractions"][-1]["id"] == answer["record"]
    check_content_builds(content, tmp_path)
    budget = (tmp_path / "strict/notebooks/cvl/theme/budget.html").read_text(encoding="utf-8")
    assert f"{NOTE}.html" in budget, "the build lists the note on the category's page"

    status, answer = browser.post("undo", {})
    assert status == 200, answer
    assert (content / NOTE_FILE).read_bytes() == note and (content / SIDECAR).read_bytes() == sidecar, \
        "undo puts both files back"


@pytest.mark.parametrize("categories", [
    {"cvl": {"theme": ["Budget", "Cantine"]}},  # not a category of the axis
    {"cvl": {"saison": ["Hiver"]}},  # not an axis of the notebook
    {"veille-financement": {"theme": ["Subvention"]}},  # a notebook the note is not in
    {"cvl": {"theme": "Budget"}},  # not a list
], ids=["unknown category", "unknown axis", "another notebook", "not a list"])
def test_a_category_the_notebook_does_not_have_is_refused_and_nothing_written(
        shared: tuple[Server, Path], categories: dict[str, object]) -> None:
    server, content = shared
    browser = Browser(server)
    browser.open_key()
    before = snapshot(content)
    status, answer = browser.post("extract", selection(browser.state(), categories=categories))
    assert (status, answer["code"]) == (400, "category"), answer
    assert snapshot(content) == before


def test_a_comment_in_the_notebooks_block_is_refused_and_nothing_written(fresh: tuple[Server, Path]) -> None:
    server, content = fresh
    note = content / NOTE_FILE
    note.write_text(note.read_text(encoding="utf-8").replace("    annee: [2024-2025]\n",
                                                             "    annee: [2024-2025]  # l'année du compte rendu\n"),
                    encoding="utf-8")
    server.changed()
    browser = Browser(server)
    browser.open_key()
    before = snapshot(content)
    status, answer = browser.post("extract", selection(browser.state(), categories=CATEGORIES))
    assert (status, answer["code"]) == (409, "layout"), answer
    assert "by hand" in str(answer["error"])
    assert snapshot(content) == before


def test_categories_as_they_are_write_the_extraction_alone(fresh: tuple[Server, Path]) -> None:
    server, content = fresh
    browser = Browser(server)
    browser.open_key()
    note = (content / NOTE_FILE).read_bytes()
    status, answer = browser.post("extract", selection(
        browser.state(), categories={"cvl": {"theme": ["Locaux", "Vie scolaire"], "annee": ["2024-2025"]}}))
    assert status == 200, answer
    assert answer["files"] == [SIDECAR] and (content / NOTE_FILE).read_bytes() == note
