"""The synthesis audit's pure core, without a build: claims, citation index, perimeter,
discarded = perimeter − cited (INV-4), coverage as a join (INV-5), source states and the
lifecycle of directed syntheses (INV-14). Corpora are a few notes parsed in memory."""

from __future__ import annotations

import datetime as dt
import hashlib
import unicodedata
from typing import Any

import pytest

from generator.anchoring import Anchor, AnchorStatus, Element, Portion
from generator.corpus.article import PerimeterSpec
from generator.engine.memo import Kind
from generator.engine.recall import recalled_by_key
from generator.markup import parse
from generator.problems import Severity
from generator.synthesis.audit import SAID_HERE_SHARE, DiscardedItem, SourceState, audit_articles
from generator.synthesis.claims import MIN_WORDS, content_words, is_statement, quoted_fragments, read_claims
from generator.synthesis.coverage import Coverage, coverage
from generator.synthesis.lifecycle import adoption_hash, quote_hash, superseded_by
from generator.synthesis.perimeter import NotebookIndex, in_perimeter
from support.memos import CountingMemo
from support.tiny import Analysed, analysed, anchored_of, com, corpus_of, ext, note_md

# ---------------------------------------------------------------- a tiny corpus

BUDGET_2024 = {"conseil": {"theme": ["Budget"], "annee": ["2024"]}}
N1_BODY = ("## Séance\n\nLe budget s'élève à quatre mille euros.\n\nLa réserve est de 800 euros.\n\n"
           "Le foyer ouvre le mercredi.\n")

NOTES = {
    "n1": note_md(N1_BODY, date="2024-10-01", notebooks=BUDGET_2024),
    "n2": note_md("Le foyer ouvre le mercredi après-midi.\n", date="2025-01-10",
                  notebooks={"conseil": {"theme": ["Foyer"], "annee": ["2025"]}}),
    "n3": note_md("Le club de sport demande 300 euros.\n", date="2024-05-01",
                  notebooks={"conseil": {"theme": ["Budget", "Sport"], "annee": ["2025"]}}),
}
EXTRACTIONS = {
    "n1": [
        ext("b1", "Le budget s'élève à quatre mille euros", comments=[
            com("c1", "disagree"), com("c2", "agree"),
            # a withdrawn comment counts in neither comments nor disagreements
            com("c3", "disagree", withdrawn={"date": "2025-03-01", "reason": "retiré"})]),
        ext("b2", "La réserve est de 800 euros", comments=[com("c4", "agree")]),
        ext("m1", "Le foyer ouvre le mercredi", masked=True),
        ext("d1", "une phrase qui n'est nulle part"),  # detached: kept, never placed
    ],
    "n2": [ext("f1", "Le foyer ouvre le mercredi après-midi")],
    "n3": [ext("s1", "Le club de sport demande 300 euros", comments=[com("c5", "disagree")])],
}


def wiki(body: str, **fields: Any) -> Analysed:
    """The tiny corpus plus one wiki ``w`` in notebook conseil, theme Budget."""
    fields.setdefault("notebooks", {"conseil": {"theme": ["Budget"]}})
    notes = dict(NOTES, w=note_md(body, title="Wiki", type="wiki", date=None, **fields))
    return analysed(notes, EXTRACTIONS)


def line_in(text: str, needle: str) -> int:
    """1-based file line of ``needle``: computed, never typed."""
    return next(n for n, line in enumerate(text.split("\n"), start=1) if needle in line)


def test_the_tiny_corpus_loads_clean_but_for_its_detached_quote() -> None:
    result = wiki("Le budget [[ext:b1]].\n")
    assert result.codes() == ["detached-anchor"]
    assert result.anchored["n1"].anchors["d1"].status is AnchorStatus.DETACHED


# ---------------------------------------------------------------- claims

CLAIMS = [
    ("a marker group ends each claim", "Un [[ext:a]] deux [[ext:b]].", [("Un", ("a",)), ("deux", ("b",))]),
    ("adjacent markers form one group", "Texte cité [[ext:a]] [[com:c]].", [("Texte cité", ("a", "c"))]),
    ("a short tail is no claim", "Texte [[ext:a]], suite courte.", [("Texte", ("a",))]),
    ("a long tail is an unsourced claim", "Texte [[ext:a]]. Et voici une suite assez longue sans source.",
     [("Texte", ("a",)), ("Et voici une suite assez longue sans source.", ())]),
    ("a short block with no marker is no claim", "Voir plus bas.", []),
    ("each list item is a block", "- Un premier point sans la moindre source\n- Second [[com:c]]",
     [("Un premier point sans la moindre source", ()), ("Second", ("c",))]),
    ("tables hold no claims", "| a | b |\n|---|---|\n| x [[ext:a]] | y |", []),
    ("white space folded", "Le  budget\nest   voté [[ext:a]].", [("Le budget est voté", ("a",))]),
    ("a note link is no citation", "Voir [[n1]] et la suite de cette longue phrase.",
     [("Voir n1 et la suite de cette longue phrase.", ())]),
]


@pytest.mark.parametrize("body,expected", [c[1:] for c in CLAIMS], ids=[c[0] for c in CLAIMS])
def test_claims_are_read_from_marker_groups(body: str, expected: list[tuple[str, tuple[str, ...]]]) -> None:
    claims = read_claims("w", parse(body), 1)
    assert [(c.text, tuple(m.key for m in c.markers)) for c in claims] == expected
    assert [c.rank for c in claims] == list(range(1, len(claims) + 1))
    assert all(c.sourced == bool(c.markers) for c in claims)


def test_claim_ids_sections_and_lines() -> None:
    decomposed = unicodedata.normalize("NFD", "Le budget est voté")
    body = (f"{decomposed} [[ext:a]].\n\n## Budget\n\nLe budget est voté [[ext:b]].\n\n### Détail\n\n"
            "Encore [[ext:c]].\n\n## Foyer\n\nLe budget est voté [[ext:d]].\n")
    claims = read_claims("w", parse(body), 10)
    assert [(c.section, c.section_index) for c in claims] == [("", 0), ("Budget", 1), ("Budget", 1), ("Foyer", 2)]
    assert [c.line for c in claims] == [10 + line_in(body, m) - 1 for m in ("ext:a", "ext:b", "ext:c", "ext:d")]
    # NFC: the decomposed text is the same claim; its id is a hash of article and text,
    # and a repeated text takes -2, -3… in reading order
    digest = hashlib.sha1("w\x00Le budget est voté".encode()).hexdigest()[:8]
    assert claims[0].text == "Le budget est voté"
    assert [claims[i].id for i in (0, 1, 3)] == [f"claim-{digest}", f"claim-{digest}-2", f"claim-{digest}-3"]
    assert read_claims("autre", parse(body), 10)[0].id != claims[0].id, "the article is part of the id"


@pytest.mark.parametrize("text,expected", [
    ("Un deux trois quatre.", False),
    ("Un deux trois quatre cinq.", True),
    ("Court. Un deux trois quatre cinq", True),  # one sentence long enough is enough
    ("Un deux. Trois quatre cinq.", False),  # words are counted per sentence
    ("Aujourd'hui c'est la rentrée.", False),  # elided words are one word each
])
def test_a_statement_holds_a_sentence_of_min_words(text: str, expected: bool) -> None:
    assert MIN_WORDS == 5
    assert is_statement(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("Il a dit « à l'unanimité » hier.", ["à l'unanimité"]),
    ("Il a dit «oui».", []),  # one word is no quotation to check
    ("Il a dit “tout de suite” puis \"plus tard encore\".", ["tout de suite", "plus tard encore"]),
    ("Aucune citation ici.", []),
])
def test_quoted_fragments(text: str, expected: list[str]) -> None:
    assert quoted_fragments(text) == expected


def test_content_words_drop_short_and_function_words() -> None:
    assert content_words("Le Budget du foyer est de 800 euros, voté à l'unanimité.") == \
        {"budget", "foyer", "800", "euros", "voté", "l'unanimité"}


# ---------------------------------------------------------------- citation index

def test_citation_index_numbers_and_broken_links() -> None:
    body = "Premier [[ext:b1]] [[ext:s1]].\n\nSecond [[ext:b1]].\n\nTroisième [[ext:nope]] [[ext:f1]] [[ext:b2]].\n"
    result = wiki(body)
    audit = result.audits["w"]
    assert [(link.marker.key, link.note, link.broken, link.state) for link in audit.links] == [
        ("b1", "n1", "", SourceState.PRESENT), ("s1", "n3", "", SourceState.PRESENT),
        ("b1", "n1", "", SourceState.PRESENT),
        ("nope", "", "unknown", SourceState.DELETED),
        ("f1", "n2", "outside", SourceState.PRESENT),  # f1's note is Foyer, not Budget
        ("b2", "n1", "", SourceState.PRESENT)]
    # INV-1: by first appearance, one number per source; a broken link takes none
    assert audit.numbers == {("ext", "b1"): 1, ("ext", "s1"): 2, ("ext", "b2"): 3}
    # claims and links agree: each link names its claim
    by_id = {c.id: c for c in audit.claims}
    assert all(by_id[link.claim].text == link.claim_text for link in audit.links)
    outside = [p for p in result.problems if p.code == "broken-citation"]
    assert [(p.file, p.line, p.severity) for p in outside] == [
        ("notes/w.md", line_in(result.corpus.notes["w"].body, "Troisième") + result.corpus.notes["w"].body_line - 1,
         Severity.WARNING)]
    assert "'n2'" in outside[0].message


def test_an_id_given_twice_is_held_by_the_first_note_giving_it() -> None:
    """A duplicate id is an error for validation to report; meanwhile a citation of it lands
    on the first note (in content order) that gives it, extraction or comment alike."""
    duplicates = dict(EXTRACTIONS, n3=[*EXTRACTIONS["n3"],
                                       ext("b1", "Le club de sport demande 300 euros", comments=[com("c1")])])
    notes = dict(NOTES, w=note_md("Le budget [[ext:b1]] [[com:c1]].\n", title="Wiki", type="wiki", date=None,
                                  notebooks={"conseil": {"theme": ["Budget"]}}))
    result = analysed(notes, duplicates)
    assert [(link.marker.key, link.note, link.extraction) for link in result.audits["w"].links] == [
        ("b1", "n1", "b1"), ("c1", "n1", "b1")]
    # the corpus's map by id agrees (a wiki's selection reads quotes and comments through it)
    assert result.corpus.extractions["b1"] is result.corpus.notes["n1"].extractions[0]


def test_a_perimeters_key_digests_the_note_holding_each_id_not_a_later_one_giving_it_too() -> None:
    """A wiki's selection is recalled by its perimeter's key (what it reads of the corpus, it
    reads by id): the key digests the files of the notes holding the perimeter's ids, and the
    corpus's map by id gives the holder's extraction. Here ``b1`` is given three times: by
    ``a0`` outside the perimeter (first, so it holds it), by ``n1`` in it, then by ``n2``."""
    def key_and_quote(first: str, third: str) -> tuple[str, str]:
        notes = dict(NOTES, a0=note_md(f"{first}.\n", notebooks={"conseil": {"theme": ["Foyer"]}}),
                     w=note_md("Le budget.\n", title="Wiki", type="wiki", date=None,
                               notebooks={"conseil": {"theme": ["Budget"]}}))
        extractions = dict(EXTRACTIONS, a0=[ext("b1", first)], n2=[*EXTRACTIONS["n2"], ext("b1", third)])
        corpus, _problems = corpus_of(notes, extractions)
        perimeters: dict[str, str] = {}
        memo = CountingMemo()
        audit_articles(corpus, anchored_of(corpus)[0], recalled_by_key(memo, Kind.AUDIT, {}),
                       recalled_by_key(memo, Kind.CLAIMS), perimeters)
        return perimeters["w"], corpus.extractions["b1"].quote

    key, quote = key_and_quote("Une phrase de a0", "Le foyer ouvre")
    assert quote == "Une phrase de a0"  # the first note's, as the audits have it
    assert key_and_quote("Une phrase de a0", "Le foyer ouvre le mercredi") == (key, quote)  # reaches nothing read
    assert key_and_quote("Une autre phrase de a0", "Le foyer ouvre")[0] != key  # the holder's edit changes it


def test_a_marker_into_an_article_is_broken() -> None:
    # INV-3: an extraction held by a wiki is never a source
    notes = dict(NOTES, w=note_md("Le budget [[ext:wx]].\n", type="wiki", date=None,
                                  notebooks={"conseil": {"theme": ["Budget"]}}),
                 w2=note_md("Une phrase du second wiki.\n", type="wiki", date=None,
                            notebooks={"conseil": {"theme": ["Budget"]}}))
    result = analysed(notes, dict(EXTRACTIONS, w2=[ext("wx", "Une phrase du second wiki")]))
    (link,) = result.audits["w"].links
    assert (link.broken, link.note, link.state) == ("article", "w2", SourceState.PRESENT)
    assert result.audits["w"].numbers == {}
    assert any(p.code == "broken-citation" and "INV-3" in p.message for p in result.problems)


def test_source_states_present_detached_deleted() -> None:
    audit = wiki("Un [[ext:b1]].\n\nDeux [[ext:d1]].\n\nTrois [[ext:gone]].\n\nQuatre [[com:c1]].\n").audits["w"]
    states = {link.marker.key: (link.state, bool(link.portions), link.extraction) for link in audit.links}
    assert states == {
        "b1": (SourceState.PRESENT, True, "b1"),
        "d1": (SourceState.DETACHED, False, "d1"),  # the note is there, the passage no longer lands
        "gone": (SourceState.DELETED, False, ""),
        "c1": (SourceState.PRESENT, True, "b1"),  # a comment's link lands on its extraction
    }
    assert [str(s) for s in SourceState] == ["present", "detached", "deleted"]


# ---------------------------------------------------------------- perimeter and discarded

PERIMETERS = [
    ("one category", {"theme": ["Budget"]}, ["n3", "n1"]),
    ("OR within an axis", {"theme": ["Budget", "Foyer"]}, ["n3", "n1", "n2"]),
    ("AND across axes", {"theme": ["Budget"], "annee": ["2025"]}, ["n3"]),
    ("no category: the whole notebook", {}, ["n3", "n1", "n2"]),
    ("nothing matches", {"theme": ["Sport"], "annee": ["2024"]}, []),
]


@pytest.mark.parametrize("categories,notes", [p[1:] for p in PERIMETERS], ids=[p[0] for p in PERIMETERS])
def test_live_perimeter_by_facets(categories: dict[str, list[str]], notes: list[str]) -> None:
    result = wiki("Texte [[ext:b1]].\n", perimeter={"notebook": "conseil", "categories": categories})
    audit = result.audits["w"]
    # the wiki itself sits in conseil/Budget: an article is never in a perimeter (INV-3); by date, then slug
    assert (audit.perimeter_source, audit.perimeter_notes) == ("live", notes)
    # its extractions: note then file order, masked ones never (INV-12)
    expected = [e.id for slug in notes for e in result.corpus.notes[slug].extractions if not e.masked]
    assert audit.perimeter_extractions == expected
    assert "m1" not in (audit.perimeter_extractions or [])
    # the notebook's index finds what looking at each note finds
    spec = PerimeterSpec("conseil", {axis: tuple(values) for axis, values in categories.items()}, 1)
    one_by_one = [n.slug for n in result.corpus.notes_of("conseil") if in_perimeter(n, spec)]
    assert [n.slug for n in NotebookIndex.of(result.corpus, "conseil").holding(spec)] == one_by_one
    assert sorted(one_by_one) == sorted(notes)


def test_default_perimeter_is_the_first_membership() -> None:
    audit = wiki("Texte [[ext:b1]].\n", notebooks={"conseil": {"theme": ["Foyer"]}}).audits["w"]
    assert (audit.perimeter_notes, audit.perimeter_extractions) == (["n2"], ["f1"])


def test_unknown_perimeter_notebook_is_a_problem_and_no_perimeter() -> None:
    result = wiki("Texte [[ext:b1]].\n", perimeter={"notebook": "absent", "categories": {}})
    audit = result.audits["w"]
    assert (audit.perimeter_source, audit.perimeter_notes, audit.discarded) == ("unknown", None, None)
    assert "unknown-notebook" in result.codes()


CITED = [
    ("nothing cited", []),
    ("one cited", ["b1"]),
    ("cited twice counts once", ["b2", "b2"]),
    ("everything cited", ["s1", "b1", "b2", "d1"]),
    ("unknown, outside and masked change nothing", ["nope", "f1", "m1", "s1"]),
    ("a comment does not cite its extraction", ["com:c4"]),
]


@pytest.mark.parametrize("cited", [c[1] for c in CITED], ids=[c[0] for c in CITED])
def test_discarded_is_perimeter_minus_cited(cited: list[str]) -> None:
    markers = [c if ":" in c else f"ext:{c}" for c in cited]
    body = "".join(f"Affirmation {n} [[{m}]].\n\n" for n, m in enumerate(markers)) or "Rien.\n"
    result = wiki(body)
    audit = result.audits["w"]
    perimeter = set(audit.perimeter_extractions or [])
    good = {link.extraction for link in audit.links if link.marker.kind == "ext" and not link.broken}
    assert good & perimeter == perimeter & {m.removeprefix("ext:") for m in markers}
    assert audit.discarded is not None
    assert {d.extraction for d in audit.discarded} == perimeter - good  # INV-4, as set arithmetic
    # debated first: live disagreements, then live comments, then note and id
    extraction = result.corpus.extractions
    key = {i: (-extraction[i].disagreements, -len(extraction[i].live_comments), extraction[i].note, i)
           for i in perimeter}
    assert [d.extraction for d in audit.discarded] == sorted(perimeter - good, key=key.__getitem__)


def test_a_masked_citation_is_left_to_the_publication_check() -> None:
    # never in a perimeter, so never discarded; the audit does not call it "outside":
    # publication.private_link_problems refuses it as masked (an error, not a warning)
    audit = wiki("Le foyer [[ext:m1]].\n").audits["w"]
    (link,) = audit.links
    assert (link.broken, link.note) == ("", "n1")
    assert "m1" not in {d.extraction for d in audit.discarded or []}


def test_discarded_items_carry_the_live_debate() -> None:
    audit = wiki("Rien de cité ici.\n").audits["w"]
    assert audit.discarded == [
        DiscardedItem("b1", "n1", "Le budget s'élève à quatre mille euros", True, 2, 1),  # c3 is withdrawn
        DiscardedItem("s1", "n3", "Le club de sport demande 300 euros", True, 1, 1),
        DiscardedItem("b2", "n1", "La réserve est de 800 euros", True, 1, 0),
        DiscardedItem("d1", "n1", "une phrase qui n'est nulle part", True, 0, 0),
    ]


# ---------------------------------------------------------------- coverage (INV-5)

def _element(index: int) -> Element:
    return Element(f"e-{index}", "paragraph", f"texte {index}", index + 1)


def test_coverage_is_a_join_of_elements_and_live_portions() -> None:
    anchors = [
        Anchor(AnchorStatus.ANCHORED, (Portion(0, 0, 3), Portion(2, 1, 4))),
        Anchor(AnchorStatus.RELOCATED, (Portion(2, 0, 2),)),
        Anchor(AnchorStatus.DETACHED, (Portion(4, 0, 1),)),  # even with a portion, a detached anchor counts nothing
    ]
    result = coverage([_element(i) for i in range(5)], anchors)
    assert result == Coverage(frozenset({0, 2}), 5)
    assert result.count == 2
    assert coverage([], []) == Coverage(frozenset(), 0)


def test_audit_coverage_excludes_masked_and_detached() -> None:
    result = wiki("Texte [[ext:b1]].\n")
    audit = result.audits["w"]
    assert set(audit.coverage) == {"n1", "n3"}
    # n1: heading, b1's paragraph, b2's paragraph, the masked m1's paragraph (d1 lands nowhere)
    assert audit.coverage["n1"] == Coverage(frozenset({1, 2}), 4)
    for slug, cov in audit.coverage.items():  # recomputed here as the join, independently
        document, anchors = result.anchored[slug].document, result.anchored[slug].anchors
        live = {p.element for e in result.corpus.notes[slug].extractions if not e.masked
                for p in anchors[e.id].portions if anchors[e.id].status.is_live}
        assert (cov.covered, cov.total) == (frozenset(live), len(document.elements))


@pytest.mark.parametrize("claim,places", [
    ("Le conseil a dit « ouvre le mercredi » pendant la séance.", (("n1", 3),)),  # only the masked one is there
    ("Le conseil a dit « quatre mille euros » pendant la séance.", ()),  # b1 covers it
    ("Le foyer ouvre bien le mercredi matin.", (("n1", 3),)),  # 3 of 5 content words
    ("Le foyer ouvre bien le mercredi matin tôt.", ()),  # 3 of 6: under the share
])
def test_unsourced_claims_said_in_uncovered_places(claim: str, places: tuple[tuple[str, int], ...]) -> None:
    assert SAID_HERE_SHARE == 0.6
    audit = wiki(f"Le budget [[ext:b1]].\n\n{claim}\n").audits["w"]
    (said,) = audit.said_here
    assert said.claim.text == claim and not said.claim.sourced
    assert said.places == places


# ---------------------------------------------------------------- directed syntheses (INV-4, INV-14)

PERIMETER = {"notebook": "conseil", "categories": {"theme": ["Budget"]}}


def frozen(id: str, note: str, quote: str, hashed: str | None = None) -> dict[str, str]:
    return {"id": id, "note": note, "quote": quote, "sha256": quote_hash(hashed if hashed is not None else quote)}


def synthesis(body: str, *, proposed: dict[str, Any] | None = None, adopted: bool = False,
              hash_body: str | None = None, extra_notes: dict[str, str] | None = None,
              **fields: Any) -> Analysed:
    """The tiny corpus plus synthesis ``s``; ``adopted`` records an adoption whose hash is
    computed here from what is written (or from ``hash_body``, to model a later edit)."""
    fields.setdefault("notebooks", BUDGET_2024)
    fields.setdefault("perimeter", PERIMETER)
    if proposed is not None:
        fields["proposed"] = proposed
    if adopted:
        digest = adoption_hash(hash_body if hash_body is not None else body, fields["perimeter"], proposed,
                               "Bureau", dt.date(2025, 5, 1))
        fields["adoption"] = {"by": "Bureau", "date": "2025-05-01", "hash": digest}
        fields.setdefault("history", [{"status": "draft", "date": "2025-04-01"},
                                      {"status": "adopted", "date": "2025-05-01"}])
    notes = dict(NOTES, s=note_md(body, title="Synthèse", type="synthesis", date="2025-05-01", **fields),
                 **(extra_notes or {}))
    return analysed(notes, EXTRACTIONS)


def test_a_draft_synthesis_has_a_live_perimeter() -> None:
    audit = synthesis("Le budget [[ext:b1]].\n").audits["s"]
    assert (audit.kind, audit.status, audit.perimeter_source) == ("synthesis", "draft", "live")
    assert audit.perimeter_notes == ["n3", "n1"]


def test_an_adopted_synthesis_with_no_recorded_perimeter_is_refused_not_emptied() -> None:
    result = synthesis("Le budget [[ext:b1]].\n", adopted=True)
    audit = result.audits["s"]
    assert (audit.status, audit.perimeter_source) == ("adopted", "unknown")
    # "perimeter unknown", never "everything was discarded"
    assert (audit.perimeter_notes, audit.perimeter_extractions, audit.discarded) == (None, None, None)
    assert audit.links[0].broken == "", "with no perimeter nothing is outside it"
    assert "adopted-act-changed" not in result.codes(), "the hash recomputed here matches the loader's"


def test_an_empty_recorded_perimeter_discards_nothing() -> None:
    audit = synthesis("Le budget [[ext:b1]].\n", proposed={"notes": [], "extractions": []}).audits["s"]
    assert (audit.perimeter_source, audit.perimeter_notes, audit.discarded) == ("recorded", [], [])
    assert audit.links[0].broken == "outside"  # nothing was proposed, so nothing may be cited


def test_a_recorded_perimeter_keeps_deleted_and_changed_evidence() -> None:
    proposed = {"notes": ["n1"], "extractions": [
        frozen("b1", "n1", "Le budget s'élève à quatre mille euros"),
        frozen("gone", "n1", "Un passage effacé depuis"),
        frozen("gone2", "n1", "Un autre passage effacé"),
        frozen("b2", "n1", "La réserve est de 800 euros", hashed="La réserve était de 700 euros"),
    ]}
    result = synthesis("Le budget [[ext:b1]] [[ext:gone]].\n", proposed=proposed, adopted=True)
    audit = result.audits["s"]
    assert (audit.status, audit.perimeter_source) == ("adopted", "recorded")
    assert audit.perimeter_extractions == ["b1", "gone", "gone2", "b2"]
    assert [(link.extraction, link.note, link.state, link.broken) for link in audit.links] == [
        ("b1", "n1", SourceState.PRESENT, ""),
        ("gone", "n1", SourceState.DELETED, "")]  # deleted, not broken: the act keeps its quote
    # discarded = frozen perimeter − cited; a deleted one shows its frozen quote
    assert audit.discarded == [DiscardedItem("b2", "n1", "La réserve est de 800 euros", True, 1, 0),
                               DiscardedItem("gone2", "n1", "Un autre passage effacé", False, 0, 0)]
    assert audit.changed == ["b2"]
    found = sorted((p.code, p.severity, p.message.split("'")[1]) for p in result.problems
                   if p.code in ("deleted-evidence", "changed-evidence"))
    assert found == [("changed-evidence", Severity.WARNING, "b2"),
                     ("deleted-evidence", Severity.ERROR, "gone"),  # cited: an error
                     ("deleted-evidence", Severity.NOTICE, "gone2")]  # left out: its quote still shows


def test_superseded_is_derived_from_the_newer_act() -> None:
    newer = note_md("Le nouveau budget [[ext:b2]].\n", title="Nouvelle", type="synthesis", date="2025-09-01",
                    notebooks=BUDGET_2024, perimeter=PERIMETER, supersedes="s")
    result = synthesis("Le budget [[ext:b1]].\n", adopted=True, extra_notes={"s2": newer})
    assert (result.audits["s"].status, result.audits["s"].superseded_by) == ("superseded", ["s2"])
    assert (result.audits["s2"].status, result.audits["s2"].supersedes) == ("draft", "s")
    assert superseded_by({"a": None, "c": "x", "b": "x"}) == {"x": ["b", "c"]}


LIFECYCLE_PROBLEMS = [
    ("body edited after adoption", {"adopted": True, "hash_body": "Le budget [[ext:b2]].\n"}, "adopted-act-changed"),
    ("history goes back", {"adopted": True, "history": [{"status": "adopted", "date": "2025-05-01"},
                                                       {"status": "draft", "date": "2025-06-01"}]}, "lifecycle"),
    ("history repeats a step", {"history": [{"status": "draft", "date": "2025-04-01"},
                                            {"status": "draft", "date": "2025-04-02"}]}, "lifecycle"),
    ("history goes back in time", {"adopted": True, "history": [{"status": "draft", "date": "2025-06-01"},
                                                               {"status": "adopted", "date": "2025-05-01"}]},
     "lifecycle"),
    ("adopted with no adoption record", {"history": [{"status": "adopted", "date": "2025-05-01"}]}, "lifecycle"),
    ("supersedes an unknown act", {"supersedes": "absent"}, "unknown-synthesis"),
    ("supersedes itself", {"supersedes": "s"}, "lifecycle"),
]


@pytest.mark.parametrize("fields,code", [c[1:] for c in LIFECYCLE_PROBLEMS], ids=[c[0] for c in LIFECYCLE_PROBLEMS])
def test_lifecycle_problems(fields: dict[str, Any], code: str) -> None:
    result = synthesis("Le budget [[ext:b1]].\n", **fields)
    assert result.codes().count(code) == 1
    assert {p.file for p in result.problems if p.code == code} == {"notes/s.md"}


def test_a_clean_adopted_act_has_no_lifecycle_problem() -> None:
    result = synthesis("Le budget [[ext:b1]].\n", adopted=True,
                       proposed={"notes": ["n1"], "extractions": [frozen("b1", "n1", "Le budget s'élève à quatre mille euros")]})
    assert result.codes() == ["detached-anchor"]  # d1's, from the anchoring stage
    assert result.audits["s"].changed == []
