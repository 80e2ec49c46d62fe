"""Fuzzing the whole build (issue 12): hypothesis writes notes and extractions — valid,
half valid and broken: hostile text, markup, unicode edge cases, CRLF, wrong types,
unknown categories, quotes cut from the note or made up — into a copy of the small
corpus. Whatever it writes, the build either refuses with problems that name a file,
writes nothing, and never raises anything else; or it succeeds, and then the
invariants hold when recomputed from the pages: every highlight is its quote, every
internal link lands, nothing private or withdrawn is published, no markup from content
is live, and a second build is byte-identical.

``CARNET_FUZZ_EXAMPLES`` raises the number of examples for a longer run."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from generator.pipeline import build
from generator.problems import ContentError
from support.corpus import copy_fixture, site_files
from support.site_checks import broken_internal_links, highlight_mismatches

pytestmark = pytest.mark.slow  # builds many generated hostile corpora

EXAMPLES = int(os.environ.get("CARNET_FUZZ_EXAMPLES", "25"))
PRIVATE = ("SECRETNOTEBOOK", "WITHDRAWNTEXT", "secret-a")  # the small corpus's private markers

# letters, French accents, markdown and HTML specials, combining marks, bidi controls,
# zero-width joiners, emoji, and the odd control character
PIECES = st.sampled_from(list(
    "abcdefghijklmnopqrstuvwxyz ABCXYZ éèàçôœ .,;:!?'\"()[]{}<>*_`#|\\/&%$@~^=+-"
    "\u0301\u0327\u202e\u202c\u200d\u200b\ufeff🎉👩🇫🇷\t") + [
    "🗳️", "\r\n", "\n", "\x00", "[[conseil-a]]", "[[ext:a-budget]]", "[[nulle-part]]", "<script>",
    "javascript:", "{{ 7*7 }}", "---"])
TEXT = st.lists(PIECES, max_size=40).map("".join).map(lambda s: s.replace("\x00", "") if len(s) % 3 else s)
WORDS = st.lists(st.sampled_from(["Le", "budget", "du", "foyer", "est", "voté", "à", "l'unanimité", "élèves",
                                  "réserve", "euros", "800", "«", "»", "—", "🎉", "e\u0301te\u0301"]),
                 min_size=3, max_size=14).map(" ".join)
INLINE = st.one_of(WORDS, TEXT, WORDS.map(lambda w: f"*{w}*"), WORDS.map(lambda w: f"**{w}**"),
                   WORDS.map(lambda w: f"[{w}](conseil-b.md)"), WORDS.map(lambda w: f"[{w}](javascript:x)"),
                   WORDS.map(lambda w: f"`{w}`"), st.just("[[conseil-a]]"), st.just("[[ext:a-budget]]"))
PARAGRAPH = st.lists(INLINE, min_size=1, max_size=4).map(" ".join)
BLOCK = st.one_of(
    PARAGRAPH,
    WORDS.map(lambda w: f"## {w}"),
    st.lists(PARAGRAPH, min_size=1, max_size=3).map(lambda items: "\n".join(f"- {i}" for i in items)),
    st.lists(WORDS, min_size=2, max_size=4).map(lambda cells: "| " + " | ".join(cells) + " |\n|"
                                                + "---|" * len(cells) + "\n| " + " | ".join(cells) + " |"),
    WORDS.map(lambda w: f"```\n{w}\n```"),
    WORDS.map(lambda w: f"> {w}"),
)
# each field: what a careful writer puts there, and what a hurried one may put there
CATEGORY = (st.sampled_from(["Budget", "Vie scolaire"]), st.sampled_from(["Inconnue", "2024", "<b>x</b>"]))
NOTEBOOKS = (
    st.one_of(CATEGORY[0].map(lambda c: f"notebooks:\n  conseil:\n    theme: [{c}]\n"),
              st.just("notebooks:\n  secret:\n    theme: [Interne]\n"), st.just("notebooks:\n  club: {}\n"),
              st.just("notebooks:\n  conseil:\n    theme: [Budget]\n  veille:\n    theme: [Mécénat]\n")),
    st.sampled_from(["notebooks:\n  conseil:\n    theme: [Inconnue]\n", "notebooks: [conseil]\n", ""]),
)
DATE = (st.sampled_from(["2025-03-01", "2024-10-01", "2025-02-28"]),
        st.sampled_from(["2025-02-30", "hier", "2024-10-01T10:00:00", "[2025]"]))
AUTHORS = (st.sampled_from(["[Zoé Realname]", "[Quelqu'un, Autre]", '["<b>Élève</b> & co"]']),
           st.sampled_from(["Zoé Realname", "42", "[]"]))
SLUG = (st.from_regex(r"[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,4}){0,2}", fullmatch=True),
        st.sampled_from(["Mauvais Nom", "x.y", "-tiret"]))
KIND = (st.sampled_from(["fait", "proposition", "citation"]), st.sampled_from(["", "42"]))
EXTRACTION_AUTHOR = (st.sampled_from(["Zoé Realname", "<i>x</i>", "Anne Enseignante"]), st.sampled_from(["[liste]", ""]))
STANCE = (st.sampled_from(["agree", "disagree"]), st.just("peut-être"))


def _quote_field(quote: str) -> str:
    escaped = quote.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n")
    escaped = escaped.replace("\t", "\\t").replace("\x00", "\\0")
    return f'"{escaped}"'


@st.composite
def note_files(draw) -> dict[str, bytes]:
    """One note (and maybe its extractions file), as files to write under notes/. Seven
    notes in ten are tidy (every field valid, the text still hostile); the others draw
    each field from the valid and the broken values."""
    tidy = draw(st.integers(0, 9)) < 7

    def pick(choices: tuple[st.SearchStrategy, st.SearchStrategy]) -> str:
        return draw(choices[0] if tidy or draw(st.booleans()) else choices[1])

    slug = pick(SLUG)
    blocks = draw(st.lists(BLOCK, min_size=1, max_size=6))
    body = "\n\n".join(blocks) + "\n"
    if tidy:
        body = body.replace("\x00", "")
    title = draw(st.one_of(WORDS, TEXT.map(lambda t: _quote_field(t.replace("\x00", "")))))
    front = f"---\ntitle: {title}\ndate: {pick(DATE)}\nauthors: {pick(AUTHORS)}\n{pick(NOTEBOOKS)}---\n"
    text = front + body
    if draw(st.booleans()):
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    files = {f"notes/{slug}.md": text.encode("utf-8")}
    if draw(st.booleans()):
        entries = []
        for number in range(draw(st.integers(1, 4))):
            if draw(st.integers(0, 3)) and len(body) > 4:  # mostly a passage of the note itself
                start = draw(st.integers(0, len(body) - 2))
                end = draw(st.integers(start + 1, min(len(body), start + 80)))
                quote = body[start:end]
            else:
                quote = draw(st.one_of(WORDS, TEXT))
            ident = pick((st.just(f"{slug}-{number}"), st.sampled_from(["a-budget", "Pas un id", ""])))
            entry = (f"  - id: {ident}\n    quote: {_quote_field(quote)}\n    kind: {pick(KIND)}\n"
                     f"    author: {pick(EXTRACTION_AUTHOR)}\n")
            if draw(st.booleans()):
                entry += (f"    categories: [{pick(CATEGORY)}]\n    comments:\n      - id: {ident}-c\n"
                          f"        author: Yann Realname\n        date: {pick(DATE)}\n"
                          f"        stance: {pick(STANCE)}\n        text: {_quote_field(draw(TEXT))}\n")
            entries.append(entry)
        sidecar = "extractions:\n" + "".join(entries)
        if not tidy and draw(st.integers(0, 3)) == 0:
            sidecar = sidecar[: draw(st.integers(0, len(sidecar)))]  # cut anywhere: broken YAML
        files[f"notes/{slug}.extractions.yaml"] = sidecar.encode("utf-8")
    return files


def _live_markup(text: str) -> list[str]:
    main = text.split("<main", 1)[-1]
    tags = re.findall(r"<[a-zA-Z][^>]*>", main)
    found = [t for t in tags if re.match(r"<(script|iframe|style|object|embed)\b", t, flags=re.I)]
    found += [t for t in tags if re.search(r"\son[a-z]+\s*=", t, flags=re.I)]
    found += re.findall(r"""(?:href|src)\s*=\s*["']?\s*(?:javascript|vbscript|data):""", text, flags=re.I)
    return found


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(note_files(), min_size=1, max_size=3))
def test_any_content_builds_or_is_refused_cleanly_and_the_invariants_hold(notes: list[dict[str, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        content = copy_fixture("small", root)
        for files in notes:
            for rel, data in files.items():
                (content / rel).write_bytes(data)
        out = root / "site"
        try:
            build(content, out, search=False)
        except ContentError as refused:
            errors = [p for p in refused.problems if p.is_error]
            assert errors, "a refusal names at least one error"
            assert all(p.file and (content / p.file).exists() for p in errors), errors
            assert not out.exists(), "a refused build writes nothing"
            event("refused: " + ", ".join(sorted({p.code for p in errors})))
            return
        event("built")
        assert highlight_mismatches(content, out) == []
        assert broken_internal_links(out) == []
        files = site_files(out, search=False)
        for path, data in files.items():
            text = data.decode("utf-8", errors="replace")
            assert not [m for m in PRIVATE if m in text or m in path], f"private text published in {path}"
            if path.endswith(".html"):
                assert _live_markup(text) == [], path
        again = root / "again"
        build(content, again, search=False)
        assert site_files(again, search=False) == files, "the same content gives the same bytes"
        shutil.rmtree(again)
