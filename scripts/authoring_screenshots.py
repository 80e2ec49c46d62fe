"""Take the screenshots of docs/authoring.md: ``carnet serve --edit`` on a copy of the
example, driven in Chromium as a person would use it (a selection and its form, a category
checked in it, a comment form, a citation's verification form, a pending proposal).

    python scripts/authoring_screenshots.py            # writes docs/authoring/*.png

Needs Playwright and Debian's Chromium, as the browser tests do (CONTRIBUTING.md)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.authoring.api import edit_layer  # noqa: E402
from generator.commands.proposal_files import file_hash  # noqa: E402
from generator.commands.serve import Server  # noqa: E402

OUT = ROOT / "docs" / "authoring"
CHROMIUM = os.environ.get("CARNET_CHROMIUM", "/usr/bin/chromium")
PROPOSAL = """id: 2026-12-01-relecture
kind: sections
target: cvl-wiki-foyer
article_sha256: {digest}
perimeter: []
provenance: {{method: human, author: Secrétariat du CVL, date: '2026-12-01'}}
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
SELECT = """() => {
  const find = (root, words) => {
    const walker = document.createTreeWalker(document.getElementById(root), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.data.includes(words)) return node;
  };
  const start = find('e-5b19373da2', 'pause méridienne'), end = find('e-2967cab823', 'Remplacer les');
  const range = document.createRange();
  range.setStart(start, start.data.indexOf('pause méridienne'));
  range.setEnd(end, end.data.indexOf('Remplacer les') + 'Remplacer les'.length);
  window.getSelection().removeAllRanges();
  window.getSelection().addRange(range);
}"""


def main() -> int:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        content = Path(scratch) / "content"
        shutil.copytree(ROOT / "content", content)
        article = content / "notes" / "cvl-wiki-foyer.md"
        (content / "proposals/sections/cvl-wiki-foyer/2026-12-01-relecture.yaml").write_text(
            PROPOSAL.format(digest=file_hash(article)), encoding="utf-8")
        server = Server(content, Path(scratch) / "site", port=0, search=False,
                        edit=edit_layer(content, "Camille Durand", lambda line: None),
                        stdout=open(os.devnull, "w"))  # noqa: SIM115 (closed with the process)
        server.start()
        assert server.editing is not None
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(base_url=server.url, viewport={"width": 1000, "height": 900},
                                        color_scheme="light")
                page.goto(server.editing.address(server.url))
                page.goto("notes/cvl-2024-09-19.html")
                page.evaluate(SELECT)
                page.get_by_role("button", name="Extraire").click()
                page.get_by_role("group", name="Conseil de vie lycéenne : Thème").get_by_label("Budget").check()
                page.get_by_label("Premier commentaire (facultatif)").fill("À inscrire à l'ordre du jour.")
                page.locator("section.carnet-edit-toolbar").screenshot(path=str(OUT / "extract.png"))
                page.evaluate("() => { document.getElementById('evidence').open = true; }")
                entry = page.locator("#entry-cvl-0919-adulte")
                entry.locator("summary", has_text="Commenter ou répondre").click()
                entry.get_by_label("Commentaire").fill("Qui serait cet adulte le mercredi ?")
                entry.screenshot(path=str(OUT / "comment.png"))
                page.goto("notes/cvl-wiki-foyer.html")
                page.locator('a.citation[href$="#ext-cvl-0919-foyer-ouverture"]').focus()
                page.keyboard.press("ArrowDown")
                page.locator("#citation-preview .carnet-edit-verify-link").click()
                page.locator("section.carnet-edit-verify").screenshot(path=str(OUT / "verify.png"))
                page.reload()
                page.locator("section.carnet-edit-proposals").wait_for()
                page.locator("section.carnet-edit-proposals").screenshot(path=str(OUT / "proposals.png"))
                browser.close()
        finally:
            server.close()
    for path in sorted(OUT.glob("*.png")):
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
