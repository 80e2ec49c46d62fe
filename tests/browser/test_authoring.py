"""``carnet serve --edit`` driven in Chromium on a copy of the example (issue 59): a
selection over emphasis and across two paragraphs becomes an extraction whose quote is the
note's own text, highlighted after the reload; a comment, a reply, a withdrawal and an undo
from the debate panel; keyboard only where a person types; axe finds nothing serious with
the edit layer open. After every flow the content loads without error, every earlier record
is unchanged, and ``build --strict`` passes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from generator.authoring.api import edit_layer
from generator.commands.serve import Server
from generator.yamledit import records
from tests.browser.test_accessibility import _axe, _report, axe_source  # noqa: F401 (its fixture, used by name)

pytestmark = pytest.mark.slow  # drives a real Chromium against a rebuilding server

CONTENT = Path(__file__).resolve().parents[2] / "content"
NOTE = "cvl-2024-09-19"
SIDECAR = f"notes/{NOTE}.extractions.yaml"
PARAGRAPH, ITEM = "e-5b19373da2", "e-2967cab823"
REBUILT = 60_000  # ms: the watcher's rebuild, then the live reload


@pytest.fixture
def editing(request, tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    """A server over a copy of the example; parametrised indirectly, a function that adds
    files to the copy before the server starts (so that no rebuild reloads the page meanwhile)."""
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    prepare = getattr(request, "param", None)
    if prepare is not None:
        prepare(content)
    server = Server(content, tmp_path / "site", port=0, search=False, edit=edit_layer(content, "Zoé Martin"))
    server.start()
    yield server, content
    server.close()


@pytest.fixture
def page(browser, editing):
    server, _content = editing
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    assert server.editing is not None
    page.goto(server.editing.address(server.url))  # the address the terminal prints: the secret becomes a cookie
    assert "carnet-key" not in page.url
    yield page
    context.close()


def settled(content: Path, before: dict[str, dict[tuple[object, ...], str]], changed: set[tuple[str, tuple[object, ...]]],
            tmp_path: Path) -> None:
    """Every content file loads, every earlier record not meant to change is byte for byte
    what it was, and ``build --strict`` passes."""
    for rel, kept in before.items():
        now = records((content / rel).read_text(encoding="utf-8"))
        for key, text in kept.items():
            if (rel, key) not in changed:
                assert now.get(key) == text, f"{rel}: {key} changed"
    run = subprocess.run([sys.executable, "-m", "generator", "build", str(content), "--out", str(tmp_path / "strict"),
                          "--strict", "--no-search"], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr + run.stdout


def yaml_records(content: Path) -> dict[str, dict[tuple[object, ...], str]]:
    return {p.relative_to(content).as_posix(): records(p.read_text(encoding="utf-8"))
            for p in sorted(content.rglob("*.yaml"))}


SELECT = """([first, last]) => {
  const textNode = (root, words) => {
    const walker = document.createTreeWalker(document.getElementById(root), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.data.includes(words)) { return node; }
    }
    throw new Error(words + ' not found in ' + root);
  };
  const start = textNode(first, 'pause méridienne'), end = textNode(last, 'Remplacer les');
  const range = document.createRange();
  range.setStart(start, start.data.indexOf('pause méridienne'));
  range.setEnd(end, end.data.indexOf('Remplacer les') + 'Remplacer les'.length);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}"""


def test_a_selection_becomes_an_extraction_highlighted_after_the_reload(page, editing, tmp_path,
                                                                       axe_source) -> None:  # noqa: F811
    _server, content = editing
    before = yaml_records(content)
    page.goto(f"notes/{NOTE}.html")
    extract = page.get_by_role("button", name="Extraire")
    assert extract.is_disabled(), "nothing selected yet"
    page.evaluate(SELECT, [PARAGRAPH, ITEM])  # over the emphasis of "y compris le mercredi", into the next item
    assert extract.is_enabled()
    extract.focus()
    page.keyboard.press("Enter")
    form = page.locator("form.carnet-edit-form")
    assert page.get_by_label("Nature du passage").evaluate("e => e === document.activeElement")
    problems = _axe(page, axe_source, "note with the extraction form open")
    assert not problems, _report(problems)
    page.keyboard.press("Control+A")
    page.keyboard.type("proposition")
    form.get_by_label("Premier commentaire (facultatif)").focus()  # past the categories' checkboxes
    page.keyboard.type("À voter en séance.")
    form.get_by_label("Position").select_option("agree")
    form.get_by_role("button", name="Enregistrer").focus()
    with page.expect_response(lambda r: r.url.endswith("/_carnet-edit/api/extract")) as answer:
        page.keyboard.press("Enter")
    assert answer.value.status == 200, answer.value.text()
    new = answer.value.json()["record"]
    page.wait_for_selector(f'#{PARAGRAPH} mark[data-ext="{new}"]', timeout=REBUILT)
    assert page.locator(f'#{ITEM} mark[data-ext="{new}"]').count() == 1, "the highlight runs into the next item"
    recorded = yaml.safe_load((content / SIDECAR).read_text(encoding="utf-8"))["extractions"][-1]
    assert recorded["id"] == new and recorded["kind"] == "proposition" and recorded["author"] == "Zoé Martin"
    assert recorded["quote"] == ("pause méridienne, y compris le mercredi. M. Delorme rappelle que l'ouverture "
                                 "suppose la présence d'un adulte et propose d'en reparler lors de la séance "
                                 "budgétaire.\n\nRemplacer les")
    assert recorded["comments"][0]["text"] == "À voter en séance."
    settled(content, before, set(), tmp_path)


def test_a_passage_the_engine_cannot_place_says_why_and_writes_nothing(page, editing) -> None:
    _server, content = editing
    before = (content / SIDECAR).read_bytes()
    page.goto(f"notes/{NOTE}.html")
    # a selection of a whole element that is nothing but the page's own text: none of the note's
    page.evaluate("""() => {
      const range = document.createRange();
      const item = document.getElementById('e-8447ec89c4');
      item.insertBefore(document.createTextNode('Texte ajouté par la page. '), item.firstChild);
      range.setStart(item.firstChild, 0);
      range.setEnd(item.firstChild, 5);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
    }""")
    page.get_by_role("button", name="Extraire").click()
    page.locator("form.carnet-edit-form").get_by_role("button", name="Enregistrer").click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert "Refusé" in alert.inner_text() and "reload" in alert.inner_text()
    assert (content / SIDECAR).read_bytes() == before


def test_comment_reply_withdraw_and_undo_from_the_debate(page, editing, tmp_path,
                                                         axe_source) -> None:  # noqa: F811
    _server, content = editing
    before = yaml_records(content)
    page.goto(f"notes/{NOTE}.html")
    page.evaluate("() => { document.querySelectorAll('details').forEach(d => { d.open = true; }); }")
    problems = _axe(page, axe_source, "note with every edit panel open")
    assert not problems, _report(problems)

    def unfold(where, label: str) -> None:
        """A panel of the edit layer opened as a person does (Enter on its summary), if it is
        closed; the debate's panel first, once the reloaded page has run its scripts."""
        page.wait_for_load_state("load")
        evidence = page.locator("#evidence > summary")
        if not evidence.evaluate("s => s.parentElement.open"):
            evidence.focus()
            page.keyboard.press("Enter")
        summary = where.locator("summary", has_text=label)
        if not summary.evaluate("s => s.parentElement.open"):
            summary.focus()
            page.keyboard.press("Enter")

    def comment(text: str, stance: str) -> str:
        entry = page.locator("#entry-cvl-0919-adulte")
        unfold(entry, "Commenter ou répondre")
        entry.get_by_label("Commentaire").fill(text)
        entry.get_by_label("Position").select_option(stance)
        with page.expect_response(lambda r: r.url.endswith("/_carnet-edit/api/comment")) as answer:
            entry.locator("form.carnet-edit-comment").get_by_role("button", name="Enregistrer").click()
        said = str(answer.value.json()["record"])
        page.wait_for_selector(f"#com-{said}", state="attached", timeout=REBUILT)
        return said

    first = comment("Lequel ?", "question")
    reply = comment("Celui du foyer, le mercredi.", "nuance")
    assert page.locator(f"#com-{reply}").inner_text().count("Celui du foyer") == 1

    said = page.locator(f"#com-{first}")
    unfold(said, "Retirer mon commentaire")
    said.get_by_label("Raison du retrait").fill("posée ailleurs")
    said.get_by_role("button", name="Retirer mon commentaire").click()
    page.wait_for_selector(f"#com-{first}.withdrawn", state="attached", timeout=REBUILT)
    assert "Lequel ?" not in page.locator(f"#com-{first}").inner_text()
    adulte = next(e for e in yaml.safe_load((content / SIDECAR).read_text(encoding="utf-8"))["extractions"]
                  if e["id"] == "cvl-0919-adulte")
    assert [c["id"] for c in adulte["comments"]] == [first, reply]
    assert adulte["comments"][0]["withdrawn"]["reason"] == "posée ailleurs" and "text" not in adulte["comments"][0]
    index = next(i for i, e in enumerate(yaml.safe_load((CONTENT / SIDECAR).read_text(encoding="utf-8"))["extractions"])
                 if e["id"] == "cvl-0919-adulte")
    settled(content, before, {(SIDECAR, ("extractions", index))}, tmp_path)

    page.get_by_role("button", name="Annuler la dernière écriture").click()  # the withdrawal, taken back
    page.wait_for_selector(f"#com-{first}:not(.withdrawn)", state="attached", timeout=REBUILT)
    assert "Lequel ?" in page.locator(f"#com-{first}").inner_text()
    settled(content, before, {(SIDECAR, ("extractions", index))}, tmp_path)


def test_a_category_checked_in_the_extract_form_is_the_notes_after_the_reload(page, editing, tmp_path,
                                                                             axe_source) -> None:  # noqa: F811
    _server, content = editing
    before = yaml_records(content)
    note = (content / f"notes/{NOTE}.md").read_text(encoding="utf-8")
    page.goto(f"notes/{NOTE}.html")
    named = page.locator(".memberships dd a", has_text="Budget")
    assert named.count() == 0, "the note is not in Budget yet"
    page.evaluate(SELECT, [PARAGRAPH, ITEM])
    page.get_by_role("button", name="Extraire").focus()
    page.keyboard.press("Enter")
    form = page.locator("form.carnet-edit-form")
    theme = form.get_by_role("group", name="Conseil de vie lycéenne : Thème")
    assert theme.get_by_label("Locaux").is_checked() and not theme.get_by_label("Budget").is_checked(), \
        "checked as the note has them now"
    problems = _axe(page, axe_source, "note with the extraction form and its categories")
    assert not problems, _report(problems)
    theme.get_by_label("Budget").focus()
    page.keyboard.press("Space")
    assert theme.get_by_label("Budget").is_checked()
    form.get_by_role("button", name="Enregistrer").focus()
    with page.expect_response(lambda r: r.url.endswith("/_carnet-edit/api/extract")) as answer:
        page.keyboard.press("Enter")
    assert answer.value.status == 200, answer.value.text()
    named.wait_for(timeout=REBUILT)  # the reloaded page names the category in the note's memberships
    written = (content / f"notes/{NOTE}.md").read_text(encoding="utf-8")
    assert "    theme: [Vie scolaire, Locaux, Budget]\n" in written
    assert written.replace("Locaux, Budget]", "Locaux]") == note, "every other line as it was"
    settled(content, before, set(), tmp_path)


WIKI = "cvl-wiki-foyer"
CITATION = 'a.citation[href="cvl-2024-09-19.html#ext-cvl-0919-foyer-ouverture"]'


def test_a_verdict_and_a_contestation_from_a_citations_preview_change_its_state(page, editing, tmp_path,
                                                                               axe_source) -> None:  # noqa: F811
    _server, content = editing
    before = yaml_records(content)
    page.goto(f"notes/{WIKI}.html")
    citation = page.locator(CITATION)
    assert "state-weak" in (citation.get_attribute("class") or ""), "not judged yet"

    def open_form() -> None:
        page.wait_for_load_state("load")  # the theme's script makes the preview
        page.locator(CITATION).focus()  # the preview opens on focus; the down arrow goes into its links
        page.keyboard.press("ArrowDown")
        page.locator("#citation-preview .carnet-edit-verify-link").wait_for()
        for _step in range(6):  # past the preview's own links (the passage, its debate)
            if page.evaluate("() => document.activeElement.classList.contains('carnet-edit-verify-link')"):
                break
            page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
        page.locator("section.carnet-edit-verify").wait_for()

    open_form()
    problems = _axe(page, axe_source, "article with the verification form open")
    assert not problems, _report(problems)
    page.get_by_label("Verdict").select_option("supported")
    page.get_by_label("Justification (une phrase)").fill("Le passage dit la même demande.")
    page.get_by_role("button", name="Enregistrer le verdict").click()
    page.wait_for_selector(f"{CITATION}.state-verified", state="attached", timeout=REBUILT)
    recorded = yaml.safe_load((content / f"verdicts/{WIKI}.yaml").read_text(encoding="utf-8"))["verdicts"][-1]
    assert recorded["source"] == "ext:cvl-0919-foyer-ouverture" and recorded["verdict"] == "supported"
    assert recorded["provenance"]["method"] == "human" and recorded["provenance"]["author"] == "Zoé Martin"
    assert recorded["claim"].startswith("Les élus ont demandé que le foyer reste ouvert"), "the build's claim text"
    settled(content, before, set(), tmp_path)

    open_form()
    page.get_by_label("Raison de la contestation").fill("La demande était pour le mardi aussi.")
    page.get_by_role("button", name="Contester l'affirmation").click()
    page.wait_for_selector(f"{CITATION}.state-contested", state="attached", timeout=REBUILT)
    contested = yaml.safe_load((content / f"contestations/{WIKI}.yaml").read_text(encoding="utf-8"))["contestations"]
    assert contested[-1]["claim"].startswith("claim-") and contested[-1]["author"] == "Zoé Martin"
    assert "source" not in contested[-1], "the whole claim, unless 'this source only' is ticked"
    settled(content, before, set(), tmp_path)


PROPOSAL = """id: 2026-12-01-relecture
kind: sections
target: cvl-wiki-foyer
article_sha256: {digest}
perimeter: []
provenance:
  method: human
  author: Secrétariat du CVL
  date: '2026-12-01'
operations:
- op: AppendToSection
  heading: Ouverture
  content: |
    Un assistant d'éducation de plus est prévu le mercredi [[ext:cvl-1010-aed-mercredi]].
- op: AppendToSection
  heading: Mobilier
  content: |
    La livraison a eu lieu au printemps [[ext:cvl-0515-livraison]].
"""


def add_proposal(content: Path) -> None:
    from generator.commands.proposal_files import file_hash

    proposal = content / "proposals/sections" / WIKI / "2026-12-01-relecture.yaml"
    proposal.write_text(PROPOSAL.format(digest=file_hash(content / f"notes/{WIKI}.md")), encoding="utf-8")


def sections(text: str) -> dict[str, str]:
    parts = text.split("\n## ")
    return {part.split("\n", 1)[0]: part for part in parts[1:]} | {"": parts[0]}


@pytest.mark.parametrize("editing", [add_proposal], indirect=True, ids=["a pending proposal"])
def test_proposal_operations_accepted_and_rejected_one_by_one(page, editing, tmp_path,
                                                              axe_source) -> None:  # noqa: F811
    _server, content = editing
    article = content / f"notes/{WIKI}.md"
    proposal = content / "proposals/sections" / WIKI / "2026-12-01-relecture.yaml"
    before, old = yaml_records(content), article.read_text(encoding="utf-8")
    page.goto(f"notes/{WIKI}.html")
    panel = page.locator("section.carnet-edit-proposals")
    panel.wait_for()
    assert panel.locator("fieldset").count() == 2
    assert "+Un assistant d'éducation de plus" in panel.locator("fieldset").nth(0).inner_text(), "its after, in place"
    problems = _axe(page, axe_source, "article with its pending proposal")
    assert not problems, _report(problems)
    panel.locator("fieldset").nth(0).get_by_label("Accepter").check()
    assert panel.locator("fieldset").nth(1).get_by_label("Rejeter").is_checked()
    panel.get_by_role("button", name="Appliquer les opérations acceptées").click()
    page.wait_for_selector(".note-body :text(\"Un assistant d'éducation de plus\")", timeout=REBUILT)
    new = article.read_text(encoding="utf-8")
    assert "La livraison a eu lieu au printemps" not in new, "the rejected operation is not applied"
    old_sections, new_sections = sections(old), sections(new)
    assert old_sections.keys() == new_sections.keys()
    for heading, text in old_sections.items():
        if heading != "Ouverture":
            assert new_sections[heading] == text, f"section {heading!r} untouched, byte for byte"
    assert new_sections["Ouverture"].startswith(old_sections["Ouverture"].rstrip("\n"))
    decisions = yaml.safe_load(proposal.read_text(encoding="utf-8"))["applied"]["results"]
    assert [d["decision"] for d in decisions] == ["accepted", "skipped"]
    rel = proposal.relative_to(content).as_posix()
    settled(content, before, {(rel, ("applied",))}, tmp_path)


def test_a_draft_synthesis_is_adopted_from_its_page(browser, small, tmp_path,
                                                   axe_source) -> None:  # noqa: F811
    server = Server(small, tmp_path / "site", port=0, search=False, edit=edit_layer(small, "Conseil des élèves"))
    server.start()
    context = browser.new_context(base_url=server.url)
    try:
        page = context.new_page()
        assert server.editing is not None
        page.goto(server.editing.address(server.url))
        page.goto("notes/synthese-2025.html")
        adopt = page.get_by_role("button", name="Adopter cette synthèse")
        problems = _axe(page, axe_source, "draft synthesis with its adoption form")
        assert not problems, _report(problems)
        adopt.click()
        page.wait_for_selector(".carnet-edit-toolbar", state="attached")
        page.wait_for_function("() => !document.querySelector('form.carnet-edit-adopt')", timeout=REBUILT)
        text = (small / "notes/synthese-2025.md").read_text(encoding="utf-8")
        assert 'by: "Conseil des élèves"' in text and "status: adopted" in text
        run = subprocess.run([sys.executable, "-m", "generator", "build", str(small), "--out", str(tmp_path / "strict"),
                              "--no-search"], capture_output=True, text=True, check=False)
        assert run.returncode == 0, run.stderr
    finally:
        context.close()
        server.close()


SELECT_WORDS = """([block, first, last]) => {
  const find = (words) => {
    const walker = document.createTreeWalker(document.getElementById(block), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.data.includes(words)) return node;
    throw new Error(words + ' not found');
  };
  const start = find(first), end = find(last);
  const range = document.createRange();
  range.setStart(start, start.data.indexOf(first));
  range.setEnd(end, end.data.indexOf(last) + last.length);
  window.getSelection().removeAllRanges();
  window.getSelection().addRange(range);
}"""


@pytest.mark.parametrize(("note", "block", "first", "last", "quote"), [
    ("cvl-2024-11-14", "e-4b672a8af5", "Sorties", "1 600 €", "Sorties et événements 1 600 €"),
    # a speaker turn, whose play button the page adds inside it
    ("cvl-2025-10-16-transcription", "e-8af2a773f6", "On est onze", "délibérer", "On est onze, donc on peut délibérer"),
    # over a citation number and a contest link, which are the page's and not the note's text
    ("cvl-wiki-foyer", "e-aad9997f6d", "y compris", "L'ouverture du", "y compris le mercredi. L'ouverture du"),
], ids=["table row", "speaker turn", "article over its citation"])
def test_a_selection_in_what_the_page_adds_to_is_placed_on_the_notes_text(page, editing, tmp_path, note: str,
                                                                         block: str, first: str, last: str,
                                                                         quote: str) -> None:
    _server, content = editing
    before = yaml_records(content)
    page.goto(f"notes/{note}.html")
    page.evaluate(SELECT_WORDS, [block, first, last])
    page.get_by_role("button", name="Extraire").click()
    with page.expect_response(lambda r: r.url.endswith("/_carnet-edit/api/extract")) as answer:
        page.locator("form.carnet-edit-form").get_by_role("button", name="Enregistrer").click()
    assert answer.value.status == 200, answer.value.text()
    recorded = yaml.safe_load((content / f"notes/{note}.extractions.yaml").read_text(encoding="utf-8"))
    assert recorded["extractions"][-1]["quote"] == quote
    settled(content, before, set(), tmp_path)


PASSAGES = """id: 2026-12-02-llm
kind: extractions
target: cvl-2024-09-19
notebook: cvl
note_sha256: {digest}
provenance: {{method: llm, model: essai, date: '2026-12-02'}}
passages:
- quote: Remplacer les canapés abîmés.
  kind: proposition
  categories: {{theme: [Locaux]}}
- quote: Afficher le règlement du foyer à l'entrée.
  kind: proposition
"""


def add_passages(content: Path) -> None:
    from generator.commands.proposal_files import file_hash

    folder = content / "proposals/extractions" / NOTE
    folder.mkdir(parents=True)
    (folder / "2026-12-02-llm.yaml").write_text(PASSAGES.format(digest=file_hash(content / f"notes/{NOTE}.md")),
                                                encoding="utf-8")


@pytest.mark.parametrize("editing", [add_passages], indirect=True, ids=["a pending extraction proposal"])
def test_proposed_extractions_are_highlighted_in_place_and_applied_one_by_one(page, editing, tmp_path,
                                                                              axe_source) -> None:  # noqa: F811
    _server, content = editing
    proposal = content / "proposals/extractions" / NOTE / "2026-12-02-llm.yaml"
    before = yaml_records(content)
    page.goto(f"notes/{NOTE}.html")
    panel = page.locator("section.carnet-edit-passages")
    panel.wait_for()
    assert page.locator(f"#{ITEM} mark.carnet-edit-proposed").inner_text() == "Remplacer les canapés abîmés."
    assert page.locator("#e-8447ec89c4 mark.carnet-edit-proposed").inner_text() == "Afficher le règlement du foyer à l'entrée."
    problems = _axe(page, axe_source, "note with proposed extractions")
    assert not problems, _report(problems)
    panel.locator("fieldset").nth(0).get_by_label("Accepter").check()
    with page.expect_response(lambda r: r.url.endswith("/_carnet-edit/api/apply")) as answer:
        panel.get_by_role("button", name="Ajouter les passages acceptés").click()
    assert answer.value.status == 200, answer.value.text()
    page.wait_for_selector(f"#{ITEM} mark.extraction", state="attached", timeout=REBUILT)
    added = yaml.safe_load((content / SIDECAR).read_text(encoding="utf-8"))["extractions"][-1]
    assert added["quote"] == "Remplacer les canapés abîmés." and added["author"] == "analysis"
    decisions = yaml.safe_load(proposal.read_text(encoding="utf-8"))["applied"]["results"]
    assert [d["decision"] for d in decisions] == ["accepted", "skipped"]
    settled(content, before, {(proposal.relative_to(content).as_posix(), ("applied",))}, tmp_path)


def test_the_edit_layer_is_axe_clean_in_the_dark_scheme(browser, editing, axe_source) -> None:  # noqa: F811
    server, _content = editing
    context = browser.new_context(base_url=server.url, color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(server.editing.address(server.url))
        page.goto(f"notes/{NOTE}.html")
        page.evaluate(SELECT, [PARAGRAPH, ITEM])
        page.get_by_role("button", name="Extraire").click()
        page.evaluate("() => { document.querySelectorAll('details').forEach(d => { d.open = true; }); }")
        problems = _axe(page, axe_source, "note in the dark scheme, every edit panel open")
        page.goto(f"notes/{WIKI}.html")
        page.locator(CITATION).focus()
        page.keyboard.press("ArrowDown")
        page.locator("#citation-preview .carnet-edit-verify-link").click()
        problems += _axe(page, axe_source, "article in the dark scheme, the verification form open")
        assert not problems, _report(problems)
    finally:
        context.close()
