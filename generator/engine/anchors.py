"""The notes anchored as a build does it: each note's parsed body and anchors, and what every
build reads of them (problems, coverage, links), recalled from the build's memo by the digest
of the note's files; the others made in worker processes when there are enough, which also
render each plain note's body while its tokens are at hand (links left as holes)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from generator.anchoring import AnchoredNote, AnchorFacts, anchor_note
from generator.corpus.links import LinkUse, collect_links
from generator.corpus.model import Corpus, Note, NoteType
from generator.digest import digest_of
from generator.engine.jobs import fork_map, workers_for
from generator.engine.memo import Kind, Memo, same
from generator.engine.recalled import Recalled
from generator.problems import Problem
from generator.site.markdown_html import BodyTemplate, body_template, note_marks, raw_html_on
from generator.synthesis.coverage import coverage_of


@dataclass
class AnchoredNotes:
    """Every note anchored (:func:`anchor_notes`).

    Attributes:
        anchored: note slug → parsed body and anchors (read from the build cache when asked for).
        facts: note slug → what every build reads of its anchoring (problems, coverage).
        uses: note slug → the links its body makes, in reading order.
        problems: what anchoring found, note by note.
        templates: note slug → its body rendered by the worker process that parsed it, links
            left as holes (notes anchored in worker processes; not articles).
        keys: note slug → the key of its anchoring in the memo (:func:`source_key`).
    """

    anchored: Recalled
    facts: dict[str, AnchorFacts]
    uses: dict[str, list[LinkUse]]
    problems: list[Problem]
    templates: dict[str, BodyTemplate]
    keys: dict[str, str]


def anchor_notes(corpus: Corpus, memo: Memo, jobs: int = 1, templates: bool = False) -> AnchoredNotes:
    """Every note of ``corpus`` anchored, and the links it makes (``templates``: render the plain
    notes' bodies in the worker processes, for a build)."""
    problems: list[Problem] = []
    anchored = Recalled()
    facts: dict[str, AnchorFacts] = {}
    uses: dict[str, list[LinkUse]] = {}
    # each key made once: asked whether the memo holds it, then to recall or store
    keys = {slug: source_key("anchors", corpus.source_of(slug)) for slug in corpus.notes}

    def held(slug: str) -> bool:
        key = partial(same, keys[slug])
        return memo.holds(Kind.ANCHORS, key) and memo.holds(Kind.NOTE_FACTS, key)

    afresh = [slug for slug in corpus.notes if not held(slug)] if jobs > 1 else []  # every note, without a memo
    done = (dict(zip(afresh, fork_map(partial(_anchor_and_collect, corpus, templates), afresh, jobs), strict=True))
            if workers_for(len(afresh), jobs) > 1 else {})  # else anchored below, keeping the tokens to render
    for slug, note in corpus.notes.items():
        facts[slug], uses[slug] = _anchored_one(memo, keys[slug], slug, note, anchored, done.get(slug))
        problems += facts[slug].problems
    made_templates = {slug: made.template for slug, made in done.items() if made.template is not None}
    return AnchoredNotes(anchored, facts, uses, problems, made_templates, keys)


def anchors_patched(last: AnchoredNotes, before: Corpus, corpus: Corpus, memo: Memo) -> AnchoredNotes | None:
    """:func:`anchor_notes` of ``corpus`` from ``last``, the anchoring of ``before``: the notes
    ``corpus`` carried from ``before`` (the same note, from the same files) taken as they
    were, their entries kept in ``memo``; the others anchored (one, for a body edited, where
    the whole walk recalls 5,000 at ~12 µs each). ``None`` when notes were added, removed or
    moved: anchored in full. The bodies rendered by worker processes are not carried."""
    if list(before.notes) != list(corpus.notes):
        return None
    befores = before.notes
    changed = [slug for slug, note in corpus.notes.items()
               if note is not befores[slug] or corpus.source_of(slug) != before.source_of(slug)]
    keys = dict(last.keys)
    for slug in changed:
        keys[slug] = source_key("anchors", corpus.source_of(slug))
    # every note's entries used, as a walk would (those of the notes changed, if held)
    memo.keep_all(Kind.ANCHORS, keys.values())
    memo.keep_all(Kind.NOTE_FACTS, keys.values())
    anchored, facts, uses = last.anchored.copy(), dict(last.facts), dict(last.uses)
    for slug in anchored.at_hand():  # read by the last build: read again if asked, not held from build to build
        note, key = corpus.notes[slug], partial(same, keys[slug])
        anchored.later(slug, partial(_parsed, memo, key, note, partial(anchor_note, note)))
    for slug in changed:
        facts[slug], uses[slug] = _anchored_one(memo, keys[slug], slug, corpus.notes[slug], anchored, None)
    problems = [problem for note_facts in facts.values() for problem in note_facts.problems]
    return AnchoredNotes(anchored, facts, uses, problems, {}, keys)


def _anchored_one(memo: Memo, digest: str, slug: str, note: Note, anchored: Recalled,
                  made: Anchoring | None) -> tuple[AnchorFacts, list[LinkUse]]:
    """One note's anchoring put in ``anchored`` (``made`` by a worker process, recalled from
    ``memo``, or made here), and what every build reads of it."""
    key = partial(same, digest)
    if made is None and memo.keep(Kind.ANCHORS, key) and memo.holds(Kind.NOTE_FACTS, key):
        # held (most notes of a rebuild): its parsed body is read only if a later step asks for it
        parse = partial(_parsed, memo, key, note, partial(anchor_note, note))
        anchored.later(slug, parse)
        facts_and_uses = partial(_facts_and_uses, partial(_facts_of, parse), partial(_collect, anchored, slug, note))
    else:
        parsed, anchor_problems = _parsed(memo, key, note, partial(same, (made.anchored, made.problems)) if made
                                          else partial(anchor_note, note))
        anchored.now(slug, parsed)
        facts_and_uses = partial(same, (made.facts, made.uses)) if made else partial(
            _facts_and_uses, partial(AnchorFacts.of, parsed, anchor_problems), partial(_collect, anchored, slug, note))
    # what every build reads of a note's anchoring and links: one entry (one read from the cache's pack)
    return memo.memo(Kind.NOTE_FACTS, key, facts_and_uses)


def source_key(step: str, source: object) -> str:
    """The key of a step that reads one note's files: from their digest, hashed as text
    (pickling it cost 10,000 × 8 µs a rebuild); a note made in memory is pickled whole."""
    if isinstance(source, str):
        return hashlib.sha256(f"{step}\0{source}".encode()).hexdigest()
    return digest_of((step, source))


def source_digests(corpus: Corpus) -> dict[str, str]:
    """Every note's files' digest (a note made in memory, without files, digested whole)."""
    digests = {}
    for slug in corpus.notes:
        source = corpus.source_of(slug)
        digests[slug] = source if isinstance(source, str) else digest_of(source)
    return digests


def _parsed(memo: Memo, key: Callable[[], str], note: Note,
            compute: Callable[[], tuple[AnchoredNote, list[Problem]]]) -> tuple[AnchoredNote, list[Problem]]:
    anchored, problems = memo.memo(Kind.ANCHORS, key, compute)
    document = anchored.document
    if document.body is not note.body and document.body == note.body:
        document.body = note.body  # one copy, not a second one from a worker or the cache
    return anchored, problems


def _collect(anchored: Recalled, slug: str, note: Note) -> list[LinkUse]:
    """The links of a note's body, in reading order (its tokens parsed again if they were dropped)."""
    return collect_links(anchored[slug].document.tokens, note.body_line)


def _facts_of(parse: Callable[[], tuple[AnchoredNote, list[Problem]]]) -> AnchorFacts:
    return AnchorFacts.of(*parse())


def _facts_and_uses(facts: Callable[[], AnchorFacts],
                    uses: Callable[[], list[LinkUse]]) -> tuple[AnchorFacts, list[LinkUse]]:
    return facts(), uses()


class Anchoring(NamedTuple):
    """A note's anchoring as a worker process returns it (:func:`_anchor_and_collect`)."""

    anchored: AnchoredNote
    problems: list[Problem]
    uses: list[LinkUse]
    template: BodyTemplate | None
    facts: AnchorFacts


def _anchor_and_collect(corpus: Corpus, templates: bool, slug: str) -> Anchoring:
    """A note's anchoring and links, as a worker process returns them: without its tokens,
    which would cost more to send than to parse again; but with its body rendered while
    they are at hand, links left as holes (not an article's: its citations are the site's)."""
    note = corpus.notes[slug]
    anchored, problems = anchor_note(note)
    uses = collect_links(anchored.document.tokens, note.body_line)
    facts = AnchorFacts.of(anchored, problems)  # made here, once: the build's own process takes it as it is
    template = None
    if templates and note.type is NoteType.NOTE:  # the others are articles, audited
        published = [e for e in note.extractions if not e.masked]  # as the publication has them
        covered = coverage_of(facts, [e.id for e in published]).covered
        template = body_template(anchored, note_marks(published, anchored.anchors), covered,
                                 raw_html_on(corpus.settings))
    anchored.document.drop_tokens()
    return Anchoring(anchored, problems, uses, template, facts)
