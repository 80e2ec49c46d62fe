"""INV-13 for incremental builds: after any sequence of edits, additions, renames and
deletions, a build that reuses the cache leaves exactly the bytes a full build leaves,
and a rebuild with nothing changed writes nothing."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import generator.anchoring.elements as elements
import generator.engine.emitters as emitters
import generator.engine.graph_files as graph
import generator.engine.jobs as carnet_jobs
import generator.site.graph_view as graph_view
import generator.site.machine as machine
import generator.synthesis.audit as audit
from generator.engine import reads
from generator.engine.cache import BuildCache, default_cache_path
from generator.markup import parse
from generator.pipeline import build, check_content
from generator.problems import ContentError
from generator.verification.assess import Assessment
from support.corpus import copy_fixture, replace, served, site_files

pytestmark = pytest.mark.slow  # the incremental property: random edits, each followed by two builds


def _notes(content: Path) -> list[Path]:
    return sorted((content / "notes").glob("*.md"))


def _pick(paths: list[Path], n: int) -> Path | None:
    return paths[n % len(paths)] if paths else None


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _replace_line(path: Path, pattern: str, replacement: str) -> None:
    """The first line matching ``pattern`` (multiline regex), rewritten."""
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(pattern, replacement, text, count=1, flags=re.M), encoding="utf-8")


def edit_body(content: Path, n: int) -> None:
    note = _pick(_notes(content), n)
    if note:
        # a link added: the note's links and backlinks change (and it shows whether the passage is detached)
        link = " Voir [[conseil-a]] et [[ext:a-budget]]." if n % 2 else ""
        _append(note, f"\nUn paragraphe ajouté numéro {n}.{link}\n")


def edit_title(content: Path, n: int) -> None:
    note = _pick(_notes(content), n)
    if note:
        _replace_line(note, r"^title: (.*)$", rf"title: \1 ({n})")


def add_note(content: Path, n: int) -> None:
    category = ("Budget", "Vie scolaire")[n % 2]
    (content / "notes" / f"ajout-{n}.md").write_text(
        f"---\ntitle: Ajout {n}\ndate: 2025-02-{n % 28 + 1:02d}\nauthors: [Nouvel Auteur {n % 3}]\nnotebooks:\n"
        f"  conseil:\n    theme: [{category}]\n---\n## Point\n\nLe budget de {n} euros, voir [[conseil-a]].\n",
        encoding="utf-8")


def delete_note(content: Path, n: int) -> None:
    note = _pick(_notes(content), n)
    if note:
        note.unlink()
        sidecar = note.with_name(note.stem + ".extractions.yaml")
        if sidecar.exists():
            sidecar.unlink()


def rename_note(content: Path, n: int) -> None:
    note = _pick(_notes(content), n)
    if note:
        new = note.with_name(f"{note.stem}-r{n}.md")
        note.rename(new)
        sidecar = note.with_name(note.stem + ".extractions.yaml")
        if sidecar.exists():
            sidecar.rename(new.with_name(new.stem + ".extractions.yaml"))


def edit_quote(content: Path, n: int) -> None:
    sidecars = sorted((content / "notes").glob("*.extractions.yaml"))
    sidecar = _pick(sidecars, n)
    if sidecar:
        text = sidecar.read_text(encoding="utf-8")
        quotes = list(re.finditer(r"^(\s+quote: )(\S.*)$", text, flags=re.M))
        if quotes:
            match = quotes[n % len(quotes)]
            quote = match.group(2)
            changed = quote[:-1] if n % 2 and len(quote) > 10 else quote + " x"
            sidecar.write_text(text[:match.start(2)] + changed + text[match.end(2):], encoding="utf-8")


def detach_quote(content: Path, n: int) -> None:
    """An extraction whose quote is no longer in its note: the pages linking to it land on its entry."""
    sidecar = content / "notes" / "conseil-a.extractions.yaml"
    if not sidecar.exists():  # deleted or renamed by an earlier step
        return
    text = sidecar.read_text(encoding="utf-8")
    quotes = list(re.finditer(r"^(\s+quote: )([^|\s].*)$", text, flags=re.M))  # one-line quotes
    if quotes:
        match = quotes[n % len(quotes)]
        sidecar.write_text(text[:match.start(2)] + f"une phrase introuvable {n}" + text[match.end(2):], encoding="utf-8")


def edit_authors(content: Path, n: int) -> None:
    """A person added to a note: a notebook's pseudonyms or initials may change on its other notes."""
    note = _pick(_notes(content), n)
    if note:
        _replace_line(note, r"^authors: \[", f"authors: [Auteur Ajouté {n % 3}, ")


def cite_extraction(content: Path, n: int) -> None:
    """A wiki cites an extraction once more: the extraction's note shows who cites it, how often."""
    wiki = content / "notes" / "wiki-budget.md"
    if wiki.exists():
        cited = ("a-budget", "a-two-paragraphs")[n % 2]
        _append(wiki, f"\nUn ajout numéro {n} [[ext:{cited}]].\n")


def edit_category(content: Path, n: int) -> None:
    """A note moved to another category: the listings of both show it moved."""
    note = _pick(_notes(content), n)
    if note:
        category = ("Budget", "Vie scolaire")[n % 2]
        _replace_line(note, r"^(    theme: )\[.*\]$", rf"\1[{category}]")


def edit_notebook(content: Path, n: int) -> None:
    path = _pick(sorted((content / "notebooks").glob("*.yaml")), n)
    if path:
        _replace_line(path, r"^title: (.*)$", rf"title: \1 {n}")


def edit_visibility(content: Path, n: int) -> None:
    """A notebook made private, or public: its notes leave the site, or come onto it (a public page
    linking to one made private is an error, in both builds)."""
    path = _pick(sorted((content / "notebooks").glob("*.yaml")), n)
    if path:
        text = path.read_text(encoding="utf-8")
        flipped = "private" if "visibility: public" in text else "public"
        _replace_line(path, r"^visibility: .*$", f"visibility: {flipped}")


def _judgeable(content: Path, n: int) -> Assessment | None:
    """One of the content's judgeable (claim, source) pairs, picked by ``n``."""
    pairs = [a for _slug, items in sorted(check_content(content).assessments.items()) for a in items if a.judgeable]
    return pairs[n % len(pairs)] if pairs else None


def _add_record(content: Path, directory: str, article: str, key: str, record: dict[str, object]) -> None:
    """``record`` added to ``directory/article.yaml`` (written as JSON, which is YAML)."""
    import json

    path = content / directory / f"{article}.yaml"
    path.parent.mkdir(exist_ok=True)
    records = json.loads(path.read_text(encoding="utf-8"))[key] if path.exists() else []
    path.write_text(json.dumps({key: [*records, record]}, ensure_ascii=False), encoding="utf-8")


def record_verdict(content: Path, n: int) -> None:
    """A verdict recorded by hand for a pair: its state, the article's tally and pages change."""
    pair = _judgeable(content, n)
    if pair is not None:
        _add_record(content, "verdicts", pair.article, "verdicts", {
            "claim_sha256": pair.claim_sha256, "source_sha256": pair.source_sha256,
            "verdict": ("supported", "partial", "unsupported")[n % 3], "rationale": f"Relu ({n}).",
            "provenance": {"method": "human", "date": f"2025-06-{n % 28 + 1:02d}"}})


def contest_claim(content: Path, n: int) -> None:
    """A claim contested by a person: shown over whatever state its pairs had."""
    pair = _judgeable(content, n)
    if pair is not None:
        _add_record(content, "contestations", pair.article, "contestations", {
            "claim": pair.claim.id, "author": "Camille Martin", "date": "2025-06-02",
            "reason": f"Le passage dit autre chose ({n})."})


def edit_date(content: Path, n: int) -> None:
    """A note redated (the newest now): where it comes in the listings, the feeds and llms-full.txt, and the sitemap's lastmod."""
    note = _pick(_notes(content), n)
    if note:
        _replace_line(note, r"^date: .*$", f"date: 20{26 + n % 9}-{n % 12 + 1:02d}-{n % 28 + 1:02d}")


def edit_settings(content: Path, n: int) -> None:
    _replace_line(content / "carnet.yaml", r"^description: .*$", f"description: Corpus de test, version {n}.")


OPERATIONS = (edit_body, edit_title, add_note, delete_note, rename_note, edit_quote, edit_notebook, edit_settings,
              detach_quote, edit_authors, cite_extraction, edit_category, edit_date, edit_visibility, record_verdict,
              contest_claim)


def _full(content: Path, out: Path) -> dict[str, bytes] | None:
    if out.exists():
        shutil.rmtree(out)
    try:
        build(content, out, search=False)
    except ContentError:
        return None
    return site_files(out, search=False)


def _files(content: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in content.rglob("*") if path.is_file()}


def _changed(before: dict[Path, bytes], after: dict[Path, bytes]) -> set[Path]:
    """The paths a watcher would name: each file written, added or removed."""
    return {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}


def _every_operation(test):  # type: ignore[no-untyped-def]
    """Each operation once for sure, through the workers and from disk (random draws may
    miss one: an edit a memo key forgets must fail here every time)."""
    for number, operation in enumerate(OPERATIONS):
        test = example([(operation, number)], True, 2)(test)
    # a note linking to a passage, then the passage detached: the note's link now lands on the entry
    test = example([(edit_body, 3), (detach_quote, 0)], False, 1)(test)
    # a person added to the notebook's first note: every later pseudonym of the notebook moves up one
    test = example([(edit_authors, 1)], True, 1)(test)
    # a note moved from one category to another (the first one's listing loses it)
    test = example([(edit_category, 1)], False, 1)(test)
    # a verdict recorded, then a claim contested (the first pair still unjudged: another one)
    test = example([(record_verdict, 0), (contest_claim, 0)], True, 1)(test)
    # the private notebook made public (its notes come onto the site), then one made private again
    test = example([(edit_visibility, 2), (edit_body, 1), (edit_visibility, 6)], True, 1)(test)
    return test


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@_every_operation
@given(st.lists(st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 10_000)), min_size=1, max_size=4),
       st.booleans(), st.sampled_from([1, 2]))
def test_incremental_equals_full(steps, reopen: bool, jobs: int) -> None:
    with tempfile.TemporaryDirectory() as folder, mock.patch.object(carnet_jobs, "WORTH_A_WORKER", 1):
        # one note is worth a worker here: with jobs=2 even this small corpus goes through them
        root = Path(folder)
        content = copy_fixture("small", root)
        out = root / "site"
        cache = BuildCache.open(default_cache_path(out))
        cache.resident = not reopen  # as carnet serve keeps it: what a rebuild recalls stays in memory
        build(content, out, search=False, cache=cache, jobs=jobs)
        for operation, n in steps:
            files = _files(content)
            operation(content, n)
            if reopen:  # alternately the on-disk cache (carnet build) and the live one (carnet serve)
                cache = BuildCache.open(default_cache_path(out))
            before = site_files(out, search=False)
            expected = _full(content, root / "full")
            try:
                # carnet serve's rebuilds: its resident cache, the old tree left to readers (linger), the
                # paths its watcher saw change (those the operation wrote, added or removed) looked at alone
                build(content, out, search=False, cache=cache, jobs=jobs, linger=not reopen,
                      edited=None if reopen else _changed(files, _files(content)))
            except ContentError:
                assert expected is None, f"{operation.__name__}({n}): only the incremental build failed"
                assert site_files(out, search=False) == before  # the previous site stays
                continue
            assert expected is not None, f"{operation.__name__}({n}): only the full build failed"
            actual = site_files(out, search=False)
            assert sorted(actual) == sorted(expected), f"{operation.__name__}({n}): different files"
            different = [path for path in expected if actual[path] != expected[path]]
            assert not different, f"{operation.__name__}({n}): {different[:5]} differ from a full build"


def _context_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A note's key forgets what its page reads of the rest of the site (its page's context):
    the names its people are shown by among them."""
    note_reads = reads.note_reads
    monkeypatch.setattr(reads, "note_reads", lambda *args: note_reads(*args)[:1])


def _article_reads_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """An article's part of the graph keyed by its slug alone, not by what the article reads."""
    monkeypatch.setattr(graph, "_article_part_key", lambda base_url, article_key, slug: slug)


def _perimeter_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """An audit keyed by its article's files alone: not its perimeter, nor what it cites."""
    monkeypatch.setattr(audit._Lookup, "key", lambda self, note, anchored: str(self.corpus.source_of(note.slug)))


def _dates_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sitemap keyed by the pages alone, not the dates it gives them."""
    monkeypatch.setattr(emitters, "sitemap_reads", lambda site, pages: (site.base_url, pages))


def _order_dates_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """llms-full.txt's order keyed without the notes' dates (it puts the newest first)."""
    monkeypatch.setattr(emitters, "full_order_reads", lambda site, pages: machine.full_order_reads(site, pages)[::2])


def _llms_titles_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """llms.txt keyed without the titles it shows: the notes' entries, and the other pages'
    bytes (a category's page names its notes: a note retitled changes it too)."""
    monkeypatch.setattr(emitters, "llms_txt_reads", lambda *args: machine.llms_txt_reads(*args)[:5]
                        + machine.llms_txt_reads(*args)[7:])


def _feed_entries_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The feeds keyed without their entries of the notes."""
    monkeypatch.setattr(emitters, "feeds_reads", lambda *args: machine.feeds_reads(*args)[:4]
                        + machine.feeds_reads(*args)[5:])


def _run_part_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of nodes signed without its part's digest: a run whose lines changed in place
    (a title in its node's line) is copied from the last build's file."""
    signatures = graph._Assembly.signatures
    monkeypatch.setattr(graph._Assembly, "signatures", lambda self, digests: [
        signature[:3] + signature[4:] if signature[0] == "run" else signature for signature in signatures(self, digests)])


def _foreign_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node signed without the parts that add edges from it: an extraction an article's
    part now cites rather than discards keeps its last record."""
    signatures = graph._Assembly.signatures
    monkeypatch.setattr(graph._Assembly, "signatures", lambda self, digests: [
        (signature[0], signature[1], signature[2], (), *signature[4:]) if signature[0] == "one"
        else (signature[0], signature[1], ()) if signature[0] == "bare" else signature
        for signature in signatures(self, digests)])


@pytest.mark.parametrize(("mutation", "edit", "n"), [
    (_context_left_out, edit_authors, 1),  # a person added to a note: the notebook's later pseudonyms move up one
    (_article_reads_left_out, cite_extraction, 0),  # the wiki's new claim is a node of its part of the graph
    (_perimeter_left_out, add_note, 0),  # a note added under the wiki's perimeter (conseil, theme Budget)
    (_dates_left_out, edit_date, 1),  # the sitemap's lastmod of the redated note
    (_order_dates_left_out, edit_date, 1),  # the redated note moves in llms-full.txt
    (_llms_titles_left_out, edit_title, 1),  # the retitled note's entry in llms.txt
    (_feed_entries_left_out, edit_title, 1),  # the retitled note's entry in the feeds
    (_run_part_left_out, edit_title, 1),  # the retitled note's node line, copied as it was from graph.json
    (_foreign_left_out, cite_extraction, 1),  # a-two-paragraphs, discarded from the wiki, now cited
])
def test_a_read_left_out_fails_the_rebuild_that_depends_on_it(small: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              mutation: Callable[[pytest.MonkeyPatch], None],
                                                              edit: Callable[[Path, int], None], n: int) -> None:
    """The dependency tracking is checked, not trusted: with one read left out on purpose (a
    mutation of Carnet's code), the edit it would miss fails the rebuild (the suite's
    The engine's read check (on in the suite) makes every recalled note, graph part and audit again and compares, and
    a graph file spliced from the last build's whole again: its refusal comes from the child
    process writing it), where it would have published a stale page; without the mutation the
    same edit passes."""
    for mutated in (False, True):
        content = copy_fixture("small", tmp_path / str(mutated))
        out = tmp_path / f"site-{mutated}"
        with monkeypatch.context() as patch:
            if mutated:
                mutation(patch)
            build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)))
            edit(content, n)
            if not mutated:
                build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)))
                assert site_files(out, search=False) == _full(content, tmp_path / "full")
                continue
            with pytest.raises((reads.StaleOutputs, graph.StaleSplice, RuntimeError), match=r"generator/"):
                build(content, out, search=False, cache=BuildCache.open(default_cache_path(out)))


def test_noop_rebuild_writes_nothing_and_an_edit_rewrites_only_what_shows_it(small: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reads, "_checking", False)  # this test counts the work done: no second making to check it
    out = tmp_path / "site"
    result = build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    assert result.changed == result.files
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    cache = BuildCache.open(default_cache_path(out))
    assert build(small, out, search=False, cache=cache).changed == 0
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == stamps
    # one note edited: its page and siblings, the pages listing it, the site-wide lists; not the others
    note = small / "notes" / "conseil-c.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nUne phrase de plus.\n", encoding="utf-8")
    cache = BuildCache.open(default_cache_path(out))
    reparsed: list[str] = []  # bodies parsed again from a note read back from the cache without tokens
    monkeypatch.setattr(elements, "parse", lambda body: reparsed.append(body) or parse(body))
    result = build(small, out, search=False, cache=cache)
    rewritten = {p.relative_to(out).as_posix() for p, stamp in stamps.items() if p.stat().st_mtime_ns != stamp}
    assert {"notes/conseil-c.html", "notes/conseil-c.txt", "notes/conseil-c.json", "manifest.json",
            "llms-full.txt"} <= rewritten
    assert "notes/veille-a.html" not in rewritten and "notes/club-a.html" not in rewritten
    assert result.changed == len(rewritten)
    assert cache.counts.reused["notes"] == len(_notes(small)) - 1  # every note but the edited one is not re-read
    assert cache.counts.redone["bodies"] == 1  # and only its body is rendered again
    # the other notes' outputs are recalled whole, by what they read (generator/engine/reads.py): all but
    # the edited note's and those of the articles whose perimeter holds it (their coverage panel counts it)
    checked = check_content(small)
    around = [slug for slug, audit in checked.articles.items() if "conseil-c" in (audit.perimeter_notes or [])]
    assert around and cache.counts.redone["note-outputs"] == 1 + len(around)
    assert cache.counts.reused["note-outputs"] == len(checked.publication.notes) - 1 - len(around)
    # every other note's anchoring facts come from disk; their parsed bodies and anchors (without their
    # tokens) only where a step asks for them (the articles' audits, the notes they cite): not all of them
    assert cache.counts.reused["note-facts"] == len(_notes(small)) - 1 and cache.counts.redone["anchors"] == 1
    assert 0 < cache.counts.reused["anchors"] < len(_notes(small)) - 1
    # no body parsed again: the audits of the articles around it are made again from their claims,
    # recalled by their files (generator/synthesis/audit.py), not read from their tokens
    assert around and cache.counts.redone["audit"] == len(around) and cache.counts.reused["claims"] >= len(around)
    assert reparsed == []
    # llms-full.txt made again from each page's text, recalled for the pages that are not notes' and
    # did not change (the listings, the articles' selections)
    assert cache.counts.reused["full-chunk"] > cache.counts.redone.get("full-chunk", 0)


def test_the_graph_is_kept_when_an_edit_leaves_every_part_as_it_was(small: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A private note edited leaves every node and edge of the public graph as they were:
    graph.json and graph.jsonld stay the last build's files (never assembled again). A
    word changed in a public paragraph changes its element's id: they are written again.
    Either way the site is a full build's."""
    out = tmp_path / "site"
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    graphs = ("graph.json", "graph.jsonld")
    stamps = {name: (out / name).stat().st_mtime_ns for name in graphs}
    told = tmp_path / "assembled"  # a file: the graph is assembled by a child process of the build

    def assembled() -> bool:
        return told.exists()

    monkeypatch.setattr(graph._Assembly, "__init__", lambda self, *a, __init__=graph._Assembly.__init__:
                        told.touch() or __init__(self, *a))
    replace(small, "notes/secret-a.md", "le contrat de quelqu'un", "le contrat signé de quelqu'un")
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    assert {name: (out / name).stat().st_mtime_ns for name in graphs} == stamps and not assembled()
    assert site_files(out, search=False) == _full(small, tmp_path / "full")
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est prolongé.")
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    assert all((out / name).stat().st_mtime_ns != stamps[name] for name in graphs) and assembled()
    assert site_files(out, search=False) == _full(small, tmp_path / "full")


def test_a_note_retitled_that_no_graph_page_draws_leaves_them_as_they_were(small: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the nodes a graph page draws, a note retitled that no page draws changes none:
    the graph pages are recalled, not laid out and rendered again (a title is in the graph's
    nodes, so they were all made again on every retitling). One a page draws is drawn anew.
    Either way the site is a full build's."""
    monkeypatch.setattr(reads, "_checking", False)  # this test counts the work done: no second making to check it
    monkeypatch.setattr(graph_view, "MAX_DRAWN", 6)  # the small corpus past the limit: some notes not drawn
    out = tmp_path / "site"
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    pages = sorted(out.rglob("*graph.html"))
    assert len(pages) >= 3, "the site's graph page and each notebook's"
    drawn = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    public = [n for n in _notes(small) if (out / "notes" / f"{n.stem}.html").exists()]
    undrawn = [n for n in public if f'notes/{n.stem}.html"' not in drawn]
    shown = [n for n in public if f'notes/{n.stem}.html"' in (out / "site-graph.html").read_text(encoding="utf-8")]
    assert undrawn and shown
    stamps = {page: page.stat().st_mtime_ns for page in pages}
    _replace_line(undrawn[0], r"^title: (.*)$", r"title: \1 (retitled)")
    cache = BuildCache.open(default_cache_path(out))
    build(small, out, search=False, cache=cache)
    assert {page: page.stat().st_mtime_ns for page in pages} == stamps
    assert cache.counts.redone.get("graph-pages", 0) == 0 and cache.counts.reused["graph-pages"] == len(pages)
    assert cache.counts.redone.get("disc-layout", 0) == 0
    assert site_files(out, search=False) == _full(small, tmp_path / "full")
    _replace_line(shown[0], r"^title: (.*)$", r"title: \1 (renamed)")
    cache = BuildCache.open(default_cache_path(out))
    build(small, out, search=False, cache=cache)
    assert "(renamed)" in (out / "site-graph.html").read_text(encoding="utf-8")
    assert (out / "site-graph.html").stat().st_mtime_ns != stamps[out / "site-graph.html"]
    assert 0 < cache.counts.redone["graph-pages"] < len(pages), "only the pages that draw it"
    assert site_files(out, search=False) == _full(small, tmp_path / "full")
    # a note added: the graph changed, so each page is laid out again; the pages of the other
    # notebooks draw what they drew and are not rendered again (the site's and its notebook's
    # count it among the notes they aggregate)
    drawn_before = {page: page.read_bytes() for page in pages}
    add_note(small, 7)
    cache = BuildCache.open(default_cache_path(out))
    build(small, out, search=False, cache=cache)
    assert (out / "notes" / "ajout-7.html").is_file()
    changed = {page for page in pages if page.read_bytes() != drawn_before[page]}
    assert {out / "site-graph.html", out / "notebooks" / "conseil.graph.html"} <= changed and len(changed) < len(pages)
    # (a page whose drawing was last digested before the renaming above is rendered again too, the same)
    assert cache.counts.redone["graph-drawing"] == len(pages)
    assert len(changed) <= cache.counts.redone["graph-pages"] < len(pages)
    assert site_files(out, search=False) == _full(small, tmp_path / "full")


def test_an_output_directory_touched_by_hand_gets_a_full_build(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    expected = site_files(out, search=False)
    (out / "stray.html").write_bytes(b"<p>dropped here by hand</p>")
    (out / "notes" / "conseil-c.html").write_bytes(b"edited by hand")
    (out / "notes" / "conseil-a.txt").unlink()
    result = build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    assert result.changed == result.files  # not trusted: rebuilt whole
    assert site_files(out, search=False) == expected


def test_a_damaged_or_foreign_cache_is_only_a_slower_build(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    path = default_cache_path(out)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a pickle at all")
    path.with_name(path.stem + ".memos.index").write_bytes(b"\x80\x05garbage")
    build(small, out, search=False, cache=BuildCache.open(path))
    assert site_files(out, search=False) == _full(small, tmp_path / "full")
    shutil.rmtree(path.parent)  # deleting the cache is always safe
    assert build(small, out, search=False, cache=BuildCache.open(path)).changed > 0
    assert site_files(out, search=False) == _full(small, tmp_path / "full")


def test_an_edit_splices_the_graph_files_from_the_last_builds(small: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A paragraph edited changes a few of the graph's segments: only those are made, the
    rest copied from the last build's graph.json and graph.jsonld, and the files are a full
    build's. A graph file touched in the live tree since is not spliced from (made whole)."""
    monkeypatch.setattr(reads, "_checking", False)  # this test counts the work done: no second making to check it
    told = tmp_path / "made"  # per list, made / segments: the graph is written by child processes

    items = graph._Writer.items

    def counted(self: graph._Writer, name: str, count: int, make: Callable[[int], bytes]) -> object:
        made = [0]

        def making(segment: int) -> bytes:
            made[0] += 1
            return make(segment)

        yield from items(self, name, count, making)
        with told.open("a", encoding="utf-8") as stream:
            stream.write(f"{name} {made[0]} {count}\n")

    monkeypatch.setattr(graph._Writer, "items", counted)
    out = tmp_path / "site"

    def rebuilt() -> dict[str, tuple[int, int]]:
        told.unlink(missing_ok=True)
        build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
        counts = {name: (int(made), int(count)) for name, made, count in
                  (line.split() for line in told.read_text(encoding="utf-8").splitlines())}
        assert site_files(out, search=False) == _full(small, tmp_path / "full")
        return counts

    first = rebuilt()
    assert sorted(first) == ["links", "nodes", "records"] and all(made == count for made, count in first.values())
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est prolongé.")
    spliced = rebuilt()
    assert all(0 < made < count / 2 for made, count in spliced.values()), spliced
    replace(small, "notes/conseil-c.md", "Le budget est prolongé.", "Le budget est reconduit.")
    (out / "graph.json").touch()  # as the last build wrote it no longer: no splice from it
    assert all(made == count for made, count in rebuilt().values())


def test_serve_patches_the_graphs_assembly_from_the_last_builds(small: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``carnet serve`` keeps the graph files' assembly from build to build: a paragraph
    rewritten, one added, a note retitled patch it (never made whole again), and the files
    are a full build's; with the engine's read check on, a patch that misses a change stops
    the build."""
    monkeypatch.setattr(reads, "_checking", False)  # counted: no assembly made again to check the patched one
    out = tmp_path / "site"
    cache = served(small, out)
    assert cache.assembly_kept is not None
    whole: list[bool] = []
    init = graph._Assembly.__init__
    monkeypatch.setattr(graph._Assembly, "__init__", lambda self, *args: whole.append(True) or init(self, *args))
    note = small / "notes" / "conseil-c.md"
    edits = [lambda: replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est prolongé."),
             lambda: note.write_text(note.read_text(encoding="utf-8") + "\nUn paragraphe de plus.\n", encoding="utf-8"),
             lambda: _replace_line(note, r"^title: (.*)$", r"title: \1 (retitled)")]
    for n, edit in enumerate(edits):
        edit()
        whole.clear()
        build(small, out, search=False, cache=cache)
        assert whole == [], f"edit {n}: the assembly was made whole"
        assert site_files(out, search=False) == _full(small, tmp_path / f"full-{n}")
    monkeypatch.setattr(reads, "_checking", True)
    patched = graph._Assembly.patched.__func__

    def forgetful(cls: type[graph._Assembly], last: graph._Assembly | None, base_url: str,
                  parts: list[graph.PackedPart]) -> graph._Assembly:
        made = patched(cls, last, base_url, parts)
        made.winner = made.winner[1:] + made.winner[:1]  # the nodes taken from the wrong places
        return made

    monkeypatch.setattr(graph._Assembly, "patched", classmethod(forgetful))
    note.write_text(note.read_text(encoding="utf-8") + "\nEncore un paragraphe.\n", encoding="utf-8")
    with pytest.raises(graph.StaleSplice, match="patched"):
        build(small, out, search=False, cache=cache)


def test_serve_patches_the_models_listings_from_the_last_builds(small: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``carnet serve`` keeps the indices of its model that list notes (each notebook's notes,
    listings, categories' members, dates): a body, a title or a category edited patches them
    (the changed note put in its places, its notebook's categories listed again), a date or a
    notebook changed makes them whole; with the
    engine's read check on, each patched index is compared with the one made whole, and the
    site is a full build's."""
    import generator.pipeline as pipeline

    out = tmp_path / "site"
    cache = served(small, out)
    assert cache.listed_kept is not None and {"listings", "category_members"} <= set(cache.listed_kept.indices)
    models: list[object] = []
    made = pipeline.site_model
    monkeypatch.setattr(pipeline, "site_model", lambda *args, **kw: models.append(made(*args, **kw)) or models[-1])
    note = small / "notes" / "conseil-c.md"
    edits = {"a body": (lambda: replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget change."), True),
             "a title": (lambda: _replace_line(note, r"^title: (.*)$", r"title: \1 (retitled)"), True),
             "a date": (lambda: _replace_line(note, r"^date: .*$", "date: 2025-03-02"), False),
             "a category": (lambda: replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [Vie scolaire]"), True),
             "a notebook left": (lambda: replace(small, "notes/conseil-c.md", "  conseil:\n    theme: [Vie scolaire]\n"
                                                 "    annee: [\"2025\"]\n", "  veille: {}\n"), False)}
    sidecar = "notes/conseil-a.extractions.yaml"
    # the indices by id (extractions, public ids, the selections' notes): patched while the ids stay
    by_ids = {"an extraction's kind": (lambda: replace(small, sidecar, "kind: fait\n    author: Zoé Realname\n"
                                                       "    date: 2024-10-02", "kind: question\n    author: Zoé "
                                                       "Realname\n    date: 2024-10-02"), True),
              "a comment's text": (lambda: replace(small, sidecar, "Exact, c'est voté.", "Exact, voté."), True),
              "a comment's id": (lambda: replace(small, sidecar, "id: ca-1\n", "id: ca-1b\n"), False)}
    for n, (what, (edit, patched)) in enumerate([*edits.items(), *by_ids.items()]):
        edit()
        build(small, out, search=False, cache=cache)
        site: Any = models[-1]
        assert (site.__dict__.get("listed_changes") is not None) == patched or what in by_ids, what
        if what in by_ids:
            assert site.__dict__.get("_ids_kept") is patched and "public_ids" in site.__dict__, what
            assert "selection_notes" in site.__dict__ and site.selections, what
        assert site_files(out, search=False) == _full(small, tmp_path / f"full-{n}"), what
    swapped = type(site)._swapped
    monkeypatch.setattr(type(site), "_swapped", lambda self, notes: tuple(notes))  # the changed note left out
    replace(small, "notes/conseil-c.md", "Le budget change.", "Le budget change encore.")
    with pytest.raises(reads.StaleOutputs, match="listed_changes"):
        build(small, out, search=False, cache=cache)
    monkeypatch.setattr(type(site), "_swapped", swapped)
    build(small, out, search=False, cache=cache)
    import generator.site.model as model
    monkeypatch.setattr(model, "note_ids", lambda note: [])  # the ids' condition dropped: an id changed is missed
    replace(small, sidecar, "id: a-two-paragraphs\n", "id: a-two-paragraphs-b\n")
    # the stale index stops the build: where a page looks the new id up, or at the read check
    with pytest.raises((reads.StaleOutputs, KeyError), match=r"listed_changes|a-two-paragraphs-b"):
        build(small, out, search=False, cache=cache)


def test_serve_keeps_its_theme_while_no_file_of_it_changes(small: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``carnet serve`` loads its theme once (every file read and digested, the strings parsed,
    the templates compiled) and takes it again while none of its files changed; a template
    edited is loaded again, and the site is a full build's with that theme each time."""
    from generator.site import DEFAULT_THEME
    from generator.site.theme import Theme

    theme = tmp_path / "theme"
    shutil.copytree(DEFAULT_THEME, theme)
    out = tmp_path / "site"
    cache = BuildCache.open(default_cache_path(out))
    cache.resident = True
    loaded: list[object] = []
    real = Theme.load
    monkeypatch.setattr(Theme, "load", classmethod(lambda cls, root=None, *rest, **kw: (
        loaded.append(root) if root == theme else None) or real(root, *rest, **kw)))
    build(small, out, search=False, cache=cache, theme_dir=theme)
    assert loaded == [theme]
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget change.")
    build(small, out, search=False, cache=cache, theme_dir=theme)
    assert loaded == [theme], "the theme taken again"
    assert site_files(out, search=False) == site_files(build(small, tmp_path / "full-0", search=False,
                                                             theme_dir=theme).out_dir, search=False)
    layout = theme / "templates" / "layout.html"
    layout.write_text(layout.read_text(encoding="utf-8").replace("</footer>", "<p>Pied modifié</p></footer>"),
                      encoding="utf-8")
    build(small, out, search=False, cache=cache, theme_dir=theme)
    assert len(loaded) == 2 + 1, "loaded again (and once by the full build above)"
    assert "Pied modifié" in (out / "index.html").read_text(encoding="utf-8")
    assert site_files(out, search=False) == site_files(build(small, tmp_path / "full-1", search=False,
                                                             theme_dir=theme).out_dir, search=False)


def test_a_note_retitled_outside_every_feeds_latest_entries_leaves_the_feeds_as_they_were(
        small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A feed lists its latest notes only (``outputs.feed_entries``): a note retitled that
    none lists is not a read of any, so the feeds are recalled; one a feed lists makes them
    again. Either way the site is a full build's."""
    monkeypatch.setattr(reads, "_checking", False)  # this test counts the work done: no second making to check it
    with (small / "carnet.yaml").open("a", encoding="utf-8") as stream:
        stream.write("outputs:\n  feed_entries: 1\n")
    out = tmp_path / "site"
    build(small, out, search=False, cache=BuildCache.open(default_cache_path(out)))
    listed = "\n".join(path.read_text(encoding="utf-8") for path in sorted((out / "feeds").glob("*.xml")))
    public = [n for n in _notes(small) if (out / "notes" / f"{n.stem}.html").exists()]
    unlisted = [n for n in public if f"/notes/{n.stem}.html<" not in listed]
    shown = [n for n in public if f"/notes/{n.stem}.html<" in listed]
    assert unlisted and shown
    _replace_line(unlisted[0], r"^title: (.*)$", r"title: \1 (retitled)")
    cache = BuildCache.open(default_cache_path(out))
    build(small, out, search=False, cache=cache)
    assert cache.counts.redone.get("feeds", 0) == 0 and cache.counts.reused["feeds"] == 1
    assert site_files(out, search=False) == _full(small, tmp_path / "full")
    _replace_line(shown[0], r"^title: (.*)$", r"title: \1 (renamed)")
    cache = BuildCache.open(default_cache_path(out))
    build(small, out, search=False, cache=cache)
    assert cache.counts.redone.get("feeds", 0) == 1
    assert "(renamed)" in "".join(path.read_text(encoding="utf-8") for path in (out / "feeds").glob("*.xml"))
    assert site_files(out, search=False) == _full(small, tmp_path / "full")


def _theme_showing(tmp_path: Path, template_name: str, shown: str, added: str) -> Path:
    """A copy of the default theme whose ``template_name`` shows ``added`` after ``shown``."""
    from generator.site import DEFAULT_THEME

    theme = tmp_path / "theme"
    shutil.copytree(DEFAULT_THEME, theme)
    template = theme / "templates" / template_name
    assert shown in template.read_text(encoding="utf-8")
    template.write_text(template.read_text(encoding="utf-8").replace(shown, shown + added), encoding="utf-8")
    return theme


def _edited_with_theme(tmp_path: Path, theme: Path, edit: Callable[[Path], None],
                       first: Callable[[Path], None] = lambda out: None) -> tuple[Path, Path, Path]:
    """The small corpus built with ``theme`` and its cache (``first`` checks that site), ``edit``ed,
    built again incrementally; and built in full: (the content, the incremental site, the full one)."""
    content = copy_fixture("small", tmp_path / "content")
    out, full = tmp_path / "site", tmp_path / "full"
    build(content, out, search=False, theme_dir=theme, cache=BuildCache.open(default_cache_path(out)))
    first(out)
    edit(content)
    build(content, out, search=False, theme_dir=theme, cache=BuildCache.open(default_cache_path(out)))
    build(content, full, search=False, theme_dir=theme)
    return content, out, full


def test_a_field_a_theme_shows_is_read_with_no_word_to_the_engine(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 58's mutation test. A theme shows a field of a note's page that no page showed
    before (each backlink's date: in the page's context, shown by no template of the default
    theme); an edit of only that field's source (the linking note's date), rebuilt
    incrementally, gives the full build's bytes. Nothing in the engine names that field: a
    note's page is keyed by its context, the record of what it reads. The read check is off:
    the published bytes themselves are compared."""
    monkeypatch.setattr(reads, "_checking", False)
    theme = _theme_showing(tmp_path, "note.html", '<a href="{{ b.url }}">{{ b.title }}</a>',
                           ' <time class="backlink-date">{{ b.date }}</time>')
    def shown_first(out: Path) -> None:  # conseil-b links to conseil-a
        page = (out / "notes" / "conseil-a.html").read_text(encoding="utf-8")
        assert '<time class="backlink-date">2025-01-10</time>' in page

    _content, out, full = _edited_with_theme(tmp_path, theme, lambda content: _replace_line(
        content / "notes" / "conseil-b.md", r"^date: .*$", "date: 2025-01-17"), shown_first)
    assert '<time class="backlink-date">2025-01-17</time>' in (out / "notes" / "conseil-a.html").read_text(
        encoding="utf-8")
    assert site_files(out, search=False) == site_files(full, search=False)


def test_a_field_a_theme_shows_in_a_listing_is_read_with_no_word_to_the_engine(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for the listings: a theme shows each entry's authors (in the entry, shown by no
    default template); a note's authors edited, the notebook's and categories' listings rebuilt
    incrementally are the full build's bytes. A listing is keyed by its entries themselves."""
    monkeypatch.setattr(reads, "_checking", False)
    theme = _theme_showing(tmp_path, "_note_list.html", '<a class="note-link" href="{{ n.url }}">{{ n.title }}</a>',
                           ' <span class="entry-authors">{{ n.authors | join(", ") }}</span>')
    _content, out, full = _edited_with_theme(tmp_path, theme, lambda content: _replace_line(
        content / "notes" / "conseil-b.md", r"^authors: \[", "authors: [Auteur Ajouté, "))
    listing = (full / "notebooks" / "conseil.html").read_text(encoding="utf-8")
    assert re.search(r'Séance B</a> <span class="entry-authors">[^<,]+, [^<,]+</span>', listing), "two people now"
    assert site_files(out, search=False) == site_files(full, search=False)
