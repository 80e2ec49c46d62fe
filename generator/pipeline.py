"""The build, top to bottom: load → validate → anchor → link → publish → emit → write.

``check_content`` is everything up to the publication (what ``carnet check`` runs);
``build`` adds the emitters and the atomic write. Nothing here calls a model or
reads the clock: the same content gives the same bytes.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Final, NamedTuple, TypeVar

from generator.anchoring import AnchoredNote, AnchorFacts, anchor_note
from generator.corpus.links import CorpusIndex, LinkTarget, LinkUse, collect_links, image_hosts, resolve_link
from generator.corpus.load import KnownFiles, load_corpus
from generator.corpus.model import Corpus, Note, NoteType
from generator.corpus.publication import (
    Publication,
    private_link_problems,
    private_perimeter_problems,
    publish,
)
from generator.corpus.validate import validate_corpus
from generator.digest import digest_of
from generator.engine import reads
from generator.engine.cache import BuildCache, build_options, unchanged_build
from generator.engine.emitters import (
    EMITTERS,
    Emitter,
    FiledOutputs,
    NoteOutputs,
    PerNote,
    derived_outputs,
    graph_started,
    note_outputs,
)
from generator.engine.jobs import RecordingMemo, fork_iter, fork_map, replay, workers_for
from generator.engine.memo import NO_MEMO, Kind, KindsOnly, Memo, same
from generator.engine.notes import notes_parser
from generator.engine.output import (
    SiteFiles,
    Staged,
    check_output_dir,
    go_live,
    is_carnet_tree,
    staging_tree,
    written_state,
)
from generator.engine.recall import pairs_recalled, recalled_by_key
from generator.engine.recalled import Recalled
from generator.engine.search import index_site
from generator.engine.summary import summarise, weighed
from generator.engine.tracking import Tracking, tracked_keys, world_digest
from generator.kinds import LinkKind, WikiKind
from generator.markup import site_address_problem
from generator.problems import ContentError, Problem, SettingsError, sorted_problems
from generator.result import BuildResult, BuildSummary
from generator.selection.oppositions import private_opposition_problems, published_pairs
from generator.selection.select import Likeness, Selection, arrange, likeness, perimeter_quotes, selection_threshold
from generator.selection.vectors import embeddings_settings, load_cache
from generator.site.addresses import address_problems, content_behind
from generator.site.headers import meta_content_security_policy
from generator.site.markdown_html import BodyTemplate, body_template, note_marks, raw_html_on
from generator.site.model import SiteModel
from generator.site.paging import page_budget
from generator.site.theme import Theme, check_theme
from generator.synthesis.audit import ArticleAudit, audit_articles
from generator.synthesis.coverage import coverage_of
from generator.verification.assess import Assessment, assess, min_balanced_accuracy, pairs_key, verification_strict
from generator.verification.tally import tally

T = TypeVar("T")


@dataclass
class CheckedContent:
    """Everything known about the content before anything is rendered.

    Attributes:
        corpus: the whole content (private parts included).
        anchored: note slug → parsed body and anchors (read from the build cache when asked for).
        facts: note slug → what every build reads of its anchoring (problems, coverage).
        links: note slug → each link with its target.
        articles: wiki or synthesis slug → its audit (claims, citations, perimeter…).
        assessments: article slug → its (claim, source) pairs with their verification states.
        publication: the public part: the only thing emitters see.
        problems: every problem found, sorted.
        audit_keys: article slug → the key its audit was recalled or stored by (with a
            build cache; its audit is a function of it).
        body_templates: note slug → its body rendered by the worker process that parsed it,
            links left as holes (notes anchored in worker processes; not articles).
        perimeter_keys: article slug → the key of its live perimeter's extractions (with a
            build cache; what reads them by id is a function of it: a wiki's selection).
        pairs_keys: article slug → the key its pairs are a function of (with a build cache;
            :func:`~generator.verification.assess.pairs_key`).
    """

    corpus: Corpus
    anchored: Recalled
    facts: dict[str, AnchorFacts]
    links: dict[str, list[tuple[LinkUse, LinkTarget]]]
    articles: dict[str, ArticleAudit]
    assessments: dict[str, list[Assessment]]
    publication: Publication
    problems: list[Problem]
    audit_keys: dict[str, str] = field(default_factory=dict)
    body_templates: dict[str, BodyTemplate] = field(default_factory=dict)
    perimeter_keys: dict[str, str] = field(default_factory=dict)
    pairs_keys: dict[str, str] = field(default_factory=dict)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.is_error]



def check_content(content_dir: Path, memo: Memo = NO_MEMO, jobs: int = 1,
                  known: KnownFiles | None = None) -> CheckedContent:
    """Everything up to the publication (what ``carnet check`` runs); ``memo`` remembers the
    notes parsed and anchored, for an incremental build (``known``: the files the build
    cache digested, not read again when unchanged). With ``jobs`` > 1 the notes are
    parsed and anchored in that many worker processes (the result is the same)."""
    if not content_dir.is_dir():
        raise SettingsError(f"content directory not found: {content_dir}")
    # 1. load and validate every file, collecting all problems
    corpus, problems = load_corpus(content_dir, notes_parser(memo, jobs), known)
    problems += validate_corpus(corpus)
    problems += address_problems(corpus)  # content taking a name the site writes for itself
    # 2. anchor: elements of each note, each extraction's quote → portions; and the links it makes
    anchored = Recalled()
    facts: dict[str, AnchorFacts] = {}
    uses: dict[str, list[LinkUse]] = {}
    # each key taken once: asked whether the memo holds it, then to recall or store
    anchors_key = functools.cache(lambda slug: source_key("anchors", corpus.source_of(slug)))
    def held(slug: str) -> bool:
        return memo.holds(Kind.ANCHORS, partial(anchors_key, slug)) and memo.holds(Kind.NOTE_FACTS, partial(anchors_key, slug))

    afresh = [slug for slug in corpus.notes if not held(slug)] if jobs > 1 else []  # every note, without a memo
    done = (dict(zip(afresh, fork_map(partial(_anchor_and_collect, corpus), afresh, jobs), strict=True))
            if workers_for(len(afresh), jobs) > 1 else {})  # else anchored below, keeping the tokens to render
    for slug, note in corpus.notes.items():
        made = done.get(slug)
        key = partial(anchors_key, slug)
        parse = partial(_parsed, memo, key, note, partial(same, (made.anchored, made.problems)) if made else partial(anchor_note, note))

        def collect(slug: str = slug, line: int = note.body_line) -> list[LinkUse]:
            return collect_links(anchored[slug].document.tokens, line)  # the tokens: parsed again if dropped

        facts_of: Callable[[], AnchorFacts]
        if made is None and memo.keep(Kind.ANCHORS, key) and memo.holds(Kind.NOTE_FACTS, key):
            anchored.later(slug, parse)  # held: its parsed body is read only if a later step asks for it
            facts_of = partial(_facts_of, parse)
        else:
            parsed, anchor_problems = parse()
            anchored.now(slug, parsed)
            facts_of = partial(same, made.facts) if made else partial(AnchorFacts.of, parsed, anchor_problems)
        # what every build reads of a note's anchoring and links: one entry (one read from the cache's pack)
        facts[slug], uses[slug] = memo.memo(Kind.NOTE_FACTS, key,
                                            partial(_facts_and_uses, facts_of, partial(same, made.uses) if made else collect))
        problems += facts[slug].problems
    # 3. links between notes, to extractions and to assets
    index = CorpusIndex.of(corpus)

    def fragments(slug: str) -> set[str]:
        return anchored[slug].document.fragments()

    links: dict[str, list[tuple[LinkUse, LinkTarget]]] = {}
    for slug, note in corpus.notes.items():
        resolved = []
        for use in uses[slug]:
            target, problem = resolve_link(use, note, corpus, index, fragments)
            resolved.append((use, target))
            if problem:
                problems.append(problem)
        links[slug] = resolved
    # 4. wikis and syntheses: claims, citation index, perimeters, discarded, lifecycle
    audit_keys: dict[str, str] = {}
    perimeter_keys: dict[str, str] = {}
    articles, article_problems = audit_articles(corpus, anchored, recalled_by_key(memo, Kind.AUDIT, audit_keys),
                                                recalled_by_key(memo, Kind.CLAIMS), perimeter_keys)
    if reads.checking() and audit_keys and (articles, article_problems) != audit_articles(corpus, anchored):
        raise reads.StaleOutputs("an audit recalled differs from the one made again: a read is missing from "
                                 "generator/synthesis/audit.py:_Lookup.key")
    problems += article_problems
    # 5. verification: every (claim, source) pair's state, from cached verdicts only
    strict = verification_strict(corpus.settings.extra)
    # an article's pairs are a function of this key, and so are its pages' evidence (with the selection settings)
    bar, _problem = min_balanced_accuracy(corpus.settings.extra)  # (assess reports the problem)
    pairs_keys = {slug: pairs_key(key, strict, corpus.verification, slug, bar) for slug, key in audit_keys.items()}
    assessments, verification_problems = assess(corpus, anchored, articles, corpus.verification, strict,
                                                pairs_recalled(memo, pairs_keys))
    if reads.checking() and audit_keys and (assessments, verification_problems) != assess(
            corpus, anchored, articles, corpus.verification, strict):
        raise reads.StaleOutputs("pairs recalled differ from the ones made again: a read is missing from "
                                 "generator/verification/assess.py:pairs_key")
    problems += verification_problems
    # 6. the public part (INV-12); a public page may not point into private content
    publication = publish(corpus)
    problems += private_link_problems(publication, corpus, links)
    problems += private_perimeter_problems(publication, {slug: a.perimeter_notes for slug, a in articles.items()})
    public = publication.extraction_ids
    for wiki, record in corpus.oppositions.items():
        if wiki in publication.notes:
            problems += private_opposition_problems(record, public, corpus.extractions)
    templates = {slug: made.template for slug, made in done.items() if made.template is not None}
    return CheckedContent(corpus, anchored, facts, links, articles, assessments, publication,
                          sorted_problems(problems), audit_keys, templates, perimeter_keys, pairs_keys)


def source_key(step: str, source: object) -> str:
    """The key of a step that reads one note's files: from their digest, hashed as text
    (pickling it cost 10,000 × 8 µs a rebuild); a note made in memory is pickled whole."""
    if isinstance(source, str):
        return hashlib.sha256(f"{step}\0{source}".encode()).hexdigest()
    return digest_of((step, source))


def _source_digests(corpus: Corpus) -> dict[str, str]:
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


def _anchor_and_collect(corpus: Corpus, slug: str) -> Anchoring:
    """A note's anchoring and links, as a worker process returns them: without its tokens,
    which would cost more to send than to parse again; but with its body rendered while
    they are at hand, links left as holes (not an article's: its citations are the site's)."""
    note = corpus.notes[slug]
    anchored, problems = anchor_note(note)
    uses = collect_links(anchored.document.tokens, note.body_line)
    facts = AnchorFacts.of(anchored, problems)  # made here, once: the build's own process takes it as it is
    template = None
    if note.type is NoteType.NOTE:  # the others are articles, audited
        published = [e for e in note.extractions if not e.masked]  # as the publication has them
        covered = coverage_of(facts, [e.id for e in published]).covered
        template = body_template(anchored, note_marks(published, anchored.anchors), covered,
                                 raw_html_on(corpus.settings))
    anchored.document.drop_tokens()
    return Anchoring(anchored, problems, uses, template, facts)


def blocking(problems: list[Problem], strict: bool) -> list[Problem]:
    return [p for p in problems if p.stops(strict)]


def site_model(analysis: CheckedContent, content_dir: Path, base_url: str | None = None,
               memo: Memo = NO_MEMO, jobs: int = 1) -> SiteModel:
    """The public site as emitters see it; ``jobs``: worker processes for the wikis'
    selections (grouping and map, one perimeter per worker at a time)."""
    publication = analysis.publication
    published = set(publication.notes)
    backlinks: dict[str, set[str]] = {}
    assets: set[str] = set()
    links = {slug: analysis.links[slug] for slug in sorted(published)}
    for slug, uses in links.items():
        note = publication.notes[slug]
        if note.media:
            assets.add(note.media)
        for _use, target in uses:
            if target.kind is LinkKind.NOTE and target.key in published and target.key != slug:
                backlinks.setdefault(target.key, set()).add(slug)
            elif target.kind in (LinkKind.EXTRACTION, LinkKind.COMMENT) and target.note in published and \
                    target.note != slug:
                backlinks.setdefault(target.note, set()).add(slug)
            elif target.kind is LinkKind.ASSET:
                assets.add(target.key)
    url = base_url or publication.settings.base_url
    if not url.endswith("/"):
        url += "/"
    articles = {slug: audit for slug, audit in analysis.articles.items() if slug in published}
    threshold = selection_threshold(publication.settings.extra)
    provider, model = embeddings_settings(publication.settings.extra)
    vectors = load_cache(content_dir, model) if provider == "endpoint" else {}

    same_perimeter: dict[tuple[str, ...], Selection] = {}  # wikis that share a perimeter share its selection
    corpus = analysis.corpus
    settings = digest_of((threshold, provider, vectors))  # once a build: an endpoint's vectors weigh megabytes

    @functools.cache  # once a perimeter: for its key and its likeness
    def quotes(ids: tuple[str, ...]) -> list[tuple[str, str]]:
        return perimeter_quotes(corpus, list(ids))

    @functools.cache  # taken once: asked whether the memo holds it, then to recall or store
    def key(ids: tuple[str, ...]) -> str:
        # the grouping and map read the quotes alone: an edit to a body, a kind or comments keeps them
        return digest_of((quotes(ids), settings))

    def compute(ids: tuple[str, ...]) -> Likeness:
        return likeness(quotes(ids), threshold, provider, vectors)

    def selection_key(slug: str) -> str | None:
        # a selection reads its perimeter's extractions by id and the settings: recalled by its
        # perimeter's key, no quote read nor digested (a wiki without a live perimeter has none)
        perimeter = analysis.perimeter_keys.get(slug)
        return None if perimeter is None else digest_of(("selection", perimeter, settings))

    wikis = {slug: tuple(audit.perimeter_extractions or []) for slug, audit in articles.items()
             if audit.kind is NoteType.WIKI}
    selection_keys = {slug: chosen for slug in wikis if (chosen := selection_key(slug)) is not None}
    held = {wikis[slug] for slug, chosen in selection_keys.items() if memo.holds(Kind.SELECTION, partial(same, chosen))}
    perimeters = sorted(set(wikis.values()) - held)
    # each perimeter's grouping and map is heavy: one is worth a worker
    todo = [ids for ids in perimeters if not memo.holds(Kind.LIKENESS, partial(key, ids))] if jobs > 1 else []
    made = dict(zip(todo, fork_map(compute, todo, jobs, worth=1), strict=True)) if len(todo) > 1 else {}

    def arranged(perimeter: tuple[str, ...], memo: Memo = memo) -> Selection:
        like = memo.memo(Kind.LIKENESS, partial(key, perimeter),
                         partial(made.__getitem__, perimeter) if perimeter in made else partial(compute, perimeter))
        return arrange(corpus, list(perimeter), like)

    def selection(slug: str, perimeter: tuple[str, ...]) -> Selection:
        if perimeter not in same_perimeter:
            recalled_by = selection_keys.get(slug)
            if recalled_by is None:
                same_perimeter[perimeter] = arranged(perimeter)
            else:
                same_perimeter[perimeter] = memo.memo(Kind.SELECTION, partial(same, recalled_by),
                                                      partial(arranged, perimeter))
                if reads.checking() and same_perimeter[perimeter] != arranged(perimeter, NO_MEMO):
                    raise reads.StaleOutputs(f"the selection of {slug!r} was recalled but differs from the one made "
                                             "again: a read is missing from generator/synthesis/audit.py:"
                                             "_Lookup._perimeter_holders")
        return same_perimeter[perimeter]

    selections = {slug: selection(slug, ids) for slug, ids in wikis.items()}
    # an article's audit, selection and pairs' states, keyed by what they read (with a build cache): its
    # pages' keys take these digests in their place (generator/engine/reads.py); its pairs read its audit
    # (the notes of the passages it cites included), the records of its own files and the strict options;
    # its selection, the audit's perimeter (its key digests the perimeter's) and the settings
    evidence_keys = {slug: digest_of((analysis.pairs_keys[slug], settings))
                     for slug in articles if slug in analysis.pairs_keys}
    reuse: dict[str, list[str]] = {}
    for slug, audit in articles.items():
        for link in audit.links:
            if link.marker.kind is WikiKind.EXT and not link.broken and link.extraction \
                    and slug not in reuse.setdefault(link.extraction, []):
                reuse[link.extraction].append(slug)
    public = publication.extraction_ids  # a pair touching anything unpublished reaches no emitter
    return SiteModel(
        publication=publication,
        anchored=analysis.anchored.only(sorted(published)),
        articles=articles,
        reuse={key: sorted(value) for key, value in sorted(reuse.items())},
        assessments={slug: analysis.assessments.get(slug, []) for slug in articles},
        selections=selections,
        oppositions={slug: published_pairs(analysis.corpus.oppositions[slug], public)
                     for slug in selections if slug in analysis.corpus.oppositions},
        proposals=sorted((p for p in analysis.corpus.proposals if p.target in articles),
                         key=lambda p: (p.target, p.id)),
        links=links,
        backlinks={slug: sorted(sources) for slug, sources in sorted(backlinks.items())},
        base_url=url,
        content_dir=content_dir,
        published_assets={a: analysis.corpus.asset_paths.get(a, a) for a in sorted(assets) if a in analysis.corpus.assets},
        # the evidence facts the pages show, decided once here (site/ computes none)
        coverage={slug: coverage_of(analysis.facts[slug], [e.id for e in note.extractions])
                  for slug, note in sorted(publication.notes.items()) if slug in analysis.facts},
        statuses={e.id: analysis.facts[slug].landed[e.id][0] for slug, note in sorted(publication.notes.items())
                  if slug in analysis.facts for e in note.extractions},
        tallies={slug: tally(analysis.assessments.get(slug, []), audit.claims) for slug, audit in articles.items()},
        evidence_keys=evidence_keys,
        body_templates={slug: t for slug, t in analysis.body_templates.items() if slug in published},
    )


def render_site(site: SiteModel, theme: Theme, emitters: tuple[Emitter, ...] = EMITTERS,
                memo: Memo = NO_MEMO, jobs: int = 1, files: SiteFiles | None = None,
                tracking: Tracking | None = None, meanwhile: Callable[[], None] | None = None) -> SiteFiles:
    """Every output of the site, by path, added to ``files`` (a staging tree's, from
    :func:`generator.engine.output.staged_site`: each written as it comes; by default held
    in memory). With a build cache as ``memo``, what is unchanged is not rendered again:
    a note's outputs are recalled whole by what they read (:mod:`generator.engine.reads`).
    With ``jobs`` > 1, the notes' own outputs (page, text, annotations, siblings, mirror)
    still to make are made in that many worker processes. ``meanwhile`` is called once every
    page is made, while graph.json and graph.jsonld are (:func:`derived_outputs`)."""
    files = SiteFiles() if files is None else files
    owner: dict[str, str] = {}

    def add(path: str, data: bytes | Staged, name: str) -> None:
        if path in files:
            if isinstance(data, Staged):
                files.discard(data)  # as settle does with a file it refuses
            raise SettingsError(_clash(site, path, name, owner[path]))
        if isinstance(data, Staged):
            files.settle(path, data)
        else:
            files.add(path, data)
        owner[path] = name

    def take(outputs: NoteOutputs) -> FiledOutputs:
        """A note's files go into ``files`` at once (or were written there by a worker
        process: taken as they are); they are kept by their digests."""
        for name, path, data in outputs.emitted:
            add(path, data, name)
        for path, data in outputs.derived.items():
            add(path, data, "a derived output")
        for name, path, staged in outputs.staged:
            add(path, staged, name or "a derived output")
        files.gzipped.update((files.digests[path], size) for path, size in outputs.gzipped.items())
        return FiledOutputs.of(outputs, files.digests)

    def keep(filed: FiledOutputs) -> bool:
        """A recalled note's files, each the last build's in the live tree: kept as they are
        (else made again: one taken already clashes there, as :func:`add` then says)."""
        if not files.keep_all((path, digest) for _name, path, digest in filed.files):
            return False
        for name, path, _digest in filed.files:
            owner[path] = name or "a derived output"
        return True

    per_note = [e for e in emitters if isinstance(e, PerNote)]
    made = every_note_outputs(site, theme, memo, per_note, jobs, take, keep if files.previous else None,
                              tracking, files if files.tree is not None else None) if per_note else {}
    keys = tracking.book.keys if tracking is not None and tracking.book is not None else None
    graph = graph_started(site, files, memo, made, jobs, keys)  # made by a child process while the rest is rendered
    try:
        for emitter, emitted in site_wide_outputs(site, theme, memo, [e for e in emitters if e not in per_note],
                                                  jobs, files if files.tree is not None else None):
            for path, data in emitted:
                add(path, data, emitter.name)
        derived = derived_outputs(site, files, graph, memo, theme, made, meanwhile)
    except BaseException:
        graph.stop()
        raise
    for path, data in derived.items():
        add(path, data, "a derived output")
    return files


def site_wide_outputs(site: SiteModel, theme: Theme, memo: Memo, emitters: list[Emitter], jobs: int = 1,
                      staging: SiteFiles | None = None) -> Iterator[tuple[Emitter, Iterable[tuple[str, bytes | Staged]]]]:
    """Each emitter with its outputs, in order. With ``jobs`` > 1 and ``staging``, the
    emitters are run in that many worker processes, which write their files into the
    staging tree (the listings and graph pages: a second of a 5,000-note build, one core
    idle otherwise, the graph's child process being light); else each here, as its files come.
    Over the last build's tree (an edit) always here: most are recalled, and forking cost more
    than it saved (0.3 s of a 5,000-note rebuild)."""
    if jobs <= 1 or staging is None or staging.previous or workers_for(len(emitters), jobs, worth=1) <= 1:
        yield from ((emitter, emitter.emit(site, theme, memo)) for emitter in emitters)
        return
    # the heaviest handed out first, so that no worker takes one last while the other is idle
    order = sorted(range(len(emitters)), key=lambda index: (_HEAVY.index(emitters[index].name)
                                                            if emitters[index].name in _HEAVY else len(_HEAVY), index))
    made = fork_iter(partial(_site_wide_work, site, theme, memo, emitters, staging), order, jobs, worth=1)
    with contextlib.closing(made):  # the workers stop before the staging tree they write into is removed
        results = dict(zip(order, made, strict=True))
    for index, emitter in enumerate(emitters):
        staged, records = results[index]
        replay(memo, records)
        yield emitter, staged


_HEAVY: Final = ("graph-pages", "notebook-pages", "category-pages")
"""The site-wide emitters that take the longest, heaviest first (at 5,000 notes: 0.9, 0.65
and 0.6 s; the others a few milliseconds)."""


def _site_wide_work(site: SiteModel, theme: Theme, memo: Memo, emitters: list[Emitter], staging: SiteFiles,
                    index: int) -> tuple[list[tuple[str, bytes | Staged]], list[tuple[Kind, str, object]]]:
    """One emitter's outputs, as a worker process makes them: written into ``staging``, with
    the memo entries it used (the emitter is named by its index: a test's own class is not
    pickled)."""
    recording = RecordingMemo(memo)
    staged: list[tuple[str, bytes | Staged]] = [(path, staging.stage(path, data))
                                                for path, data in emitters[index].emit(site, theme, recording)]
    return staged, recording.records


BODIES: Final = frozenset({Kind.BODIES})
"""What a recalled note keeps apart from its outputs: its body's HTML (another note's edit
can change the page around it, seldom the body itself)."""


def every_note_outputs(site: SiteModel, theme: Theme, memo: Memo, emitters: list[PerNote], jobs: int = 1,
                       take: Callable[[NoteOutputs], FiledOutputs] = FiledOutputs.of,
                       keep: Callable[[FiledOutputs], bool] | None = None,
                       tracking: Tracking | None = None, staging: SiteFiles | None = None) -> dict[str, FiledOutputs]:
    """Each published note's own outputs, passed to ``take`` as they are made (it files
    them: digests, not bytes). With ``keep`` (given the last build's files of a note, it
    keeps them, or says it cannot), a note whose reads are unchanged is recalled by its
    files' digests and its files kept, never made again (with the engine's read check on,
    made again and compared); the others are made (in ``jobs`` worker processes when
    there are enough, while this one takes what they made: with ``staging``, the files a
    worker makes are written into that staging tree by the worker). With ``tracking``, only the keys
    of the notes an edit since the last build can reach are made (:mod:`generator.engine.tracking`)."""
    notes = list(site.publication.notes)
    shell = reads.shell_digest(site, theme, [e.name for e in emitters])
    # each key asked twice (held?, then recalled or stored): made once, here; a functools.cache
    # per note cost more than the keys
    keyed = [slug for slug in notes if reads.keyed(site, slug)]
    if memo is NO_MEMO:  # a full build asks for no key: none is made (0.4 s at 5,000 notes)
        keys = {slug: partial(reads.note_key, shell, site, theme, slug) for slug in keyed}
    else:
        make = partial(reads.note_key, shell, site, theme)
        if tracking is None:
            digests = {slug: make(slug) for slug in keyed}
        else:  # made for the notes an edit can reach, the last build's for the others
            world = world_digest(site, shell, tracking.assets)
            digests, tracking.book = tracked_keys(site, keyed, tracking.sources, world, tracking.last, make)
        keys = {slug: partial(digests.__getitem__, slug) for slug in digests}
    held = {slug for slug, key in keys.items() if memo.holds(Kind.NOTE_OUTPUTS, key)} if keep is not None else set()
    todo = [slug for slug in notes if slug not in held]
    fresh: Generator[tuple[NoteOutputs, list[tuple[Kind, str, object]]], None, None] | None = None
    if workers_for(len(todo), jobs) > 1:
        fresh = fork_iter(partial(_note_work, site, theme, memo, emitters, frozenset(keys), staging), todo, jobs)
    made: dict[str, FiledOutputs] = {}
    checking = reads.checking()
    # closed however this ends: the workers stop before the staging tree they write into is removed
    with contextlib.closing(fresh) if fresh is not None else contextlib.nullcontext():
        for slug in notes:
            inner = KindsOnly(memo, BODIES) if slug in keys else memo
            compute = partial(note_outputs, site, theme, inner, emitters, slug)
            if fresh is not None and slug not in held:  # the workers' results come in the order of ``todo``
                outputs, records = next(fresh)
                replay(memo, records)
                compute = partial(same, outputs)
            if slug not in keys:
                made[slug] = take(compute())
            elif slug in held:
                assert keep is not None
                taken: list[FiledOutputs] = []
                filed = memo.memo(Kind.NOTE_OUTPUTS, keys[slug], partial(_taken, taken, take, compute))
                if taken:
                    filed = _chunk_filed(memo, taken[0])
                elif not keep(filed):  # a file of the live tree is not the one filed: made again
                    filed = _chunk_filed(memo, take(compute()))
                elif checking:
                    reads.check_recalled(slug, filed, FiledOutputs.of(
                        note_outputs(site, theme, NO_MEMO, emitters, slug)).stored())
                made[slug] = filed
            else:
                made[slug] = filed = _chunk_filed(memo, take(compute()))
                memo.memo(Kind.NOTE_OUTPUTS, keys[slug], partial(same, filed.stored()))
    return made


def _taken(taken: list[FiledOutputs], take: Callable[[NoteOutputs], FiledOutputs],
           compute: Callable[[], NoteOutputs]) -> FiledOutputs:
    """A held note's outputs that the memo could not give after all: made, taken, noted in
    ``taken``; filed as the memo keeps them."""
    taken.append(take(compute()))
    return taken[0].stored()


def _chunk_filed(memo: Memo, filed: FiledOutputs) -> FiledOutputs:
    """``filed``, its page's text put in the memo apart from it (see :meth:`FiledOutputs.stored`)."""
    if filed.full_chunk is not None:
        memo.memo(Kind.NOTE_CHUNK, partial(same, filed.chunk_digest), partial(same, filed.full_chunk))
    return filed


def _note_work(site: SiteModel, theme: Theme, memo: Memo, emitters: list[PerNote], keyed: frozenset[str],
               staging: SiteFiles | None, slug: str) -> tuple[NoteOutputs, list[tuple[Kind, str, object]]]:
    """One note's outputs, as a worker process makes them, with the memo entries it used
    (with ``staging``, its files written there, sent back as digests)."""
    recording = RecordingMemo(memo)
    inner: Memo = KindsOnly(recording, BODIES) if slug in keyed else recording
    outputs = note_outputs(site, theme, inner, emitters, slug)
    # its heavy pages gzipped here, the bytes at hand, for the summary (not by the build's own process)
    outputs.gzipped = weighed(((path, data) for _name, path, data in outputs.emitted), page_budget(site), memo)
    if staging is not None:
        outputs.stage(staging)
    return outputs, recording.records


def _clash(site: SiteModel, path: str, one: str, other: str) -> str:
    """Two outputs at one path: the analysis refuses every clash content can cause, so this
    is a last resort; it names the content files behind the path to look at."""
    publication = site.publication
    behind = content_behind(path, publication.notes, publication.notebooks, publication.bases,
                            site.published_assets)
    look = f"; look at {', '.join(behind)} (rename it)" if behind else ""
    return (f"{one} and {other} both write {path}{look}. 'carnet check' should have refused this: "
            "please report it with the files named")


COLLECT_EVERY: Final = 50_000
"""Allocations (net of frees) between two young-generation collections during a build (Python's default: 700)."""

OLDER_EVERY: Final = 1_000
"""Collections of the generation below between two of the middle and of the oldest one
during a build (Python's defaults: 10 and 10): in effect, none of those during a build."""


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """Python's cyclic garbage collector, run less often for the time of a build. A build
    makes millions of small objects that live to its end (notes, anchors, the graph's
    parts, records read back from the cache): at the default thresholds the collector
    walks them again and again (0.55 s of a 3.3 s one-edit rebuild at 5,000 notes, ~10 %
    of a cold build). The older generations are left alone until the build ends: a full
    collection walks everything read back from the cache (0.6 s of a 5.4 s rebuild from
    the command line at 5,000 notes with evidence). A build makes few reference cycles:
    its peak memory is the same (measured cold at 5,000 notes, and with evidence)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(COLLECT_EVERY, OLDER_EVERY, OLDER_EVERY)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)



def build(content_dir: Path, out_dir: Path, *, strict: bool = False, base_url: str | None = None,
          theme_dir: Path | None = None, emitters: tuple[Emitter, ...] = EMITTERS,
          search: bool = True, cache: BuildCache | None = None,
          progress: Callable[[str], None] | None = None, jobs: int = 1, linger: bool = False) -> BuildResult:
    """A full build, or with ``cache`` an incremental one: only what changed is redone and
    rewritten, and the result is byte for byte what a full build gives. ``progress`` is
    told each stage as it starts (the CLI shows it on a terminal). ``jobs``: worker
    processes for the per-note work (parse, anchor, render), used when there are enough
    notes to redo; the bytes are the same whatever ``jobs``. With ``linger`` (``carnet
    serve``), the old tree swapped out is removed while the caller goes on (the next
    build waits for it, if it must)."""
    with few_collections():
        try:
            return _build(content_dir, out_dir, strict=strict, base_url=base_url, theme_dir=theme_dir,
                          emitters=emitters, search=search, cache=cache, progress=progress, jobs=jobs, linger=linger)
        except ContentError:
            raise  # the memos made are good ones: the next build, once the content is fixed, uses them
        except BaseException:
            if cache is not None:  # a full disk, a failed write: what the cache appended is given back
                cache.discard()
            raise


def _build(content_dir: Path, out_dir: Path, *, strict: bool, base_url: str | None, theme_dir: Path | None,
           emitters: tuple[Emitter, ...], search: bool, cache: BuildCache | None,
           progress: Callable[[str], None] | None, jobs: int, linger: bool) -> BuildResult:
    step = progress or (lambda stage: None)
    if base_url is not None and site_address_problem(base_url) is not None:
        raise SettingsError(f"--base-url {base_url!r} cannot be the site's address: {site_address_problem(base_url)} "
                            "(e.g. https://example.org/)")
    check_output_dir(out_dir, content_dir)  # refuse early, before any work
    theme_root = check_theme(theme_dir)
    if cache is not None:
        step("checking what changed")
        options = build_options(strict, base_url, search, theme_root,
                                None if emitters is EMITTERS else [e.name for e in emitters])
        unchanged = unchanged_build(cache, content_dir, out_dir, theme_root, options)
        cache.asked = None  # the next build asks afresh
        if unchanged is not None:
            return unchanged
    memo: Memo = NO_MEMO if cache is None else cache
    with contextlib.ExitStack() as stack:
        # over the last build's tree, a child process links it into the new one while the content is
        # read, and lists it: the build goes on from it only if it is the tree the last build left
        linked = stack.enter_context(contextlib.ExitStack())
        early = linked.enter_context(staging_tree(out_dir, content_dir, link=True, linger=linger)) \
            if cache is not None and cache.listing and is_carnet_tree(out_dir) else None
        step("reading and anchoring the content")
        analysis = check_content(content_dir, memo, jobs, cache.known if cache is not None else None)
        stopping = blocking(analysis.problems, strict)
        if stopping:
            raise ContentError(analysis.problems, strict=strict)
        step("grouping the evidence of wikis")
        site = site_model(analysis, content_dir, base_url, memo, jobs)
        theme = Theme.load(theme_dir, analysis.publication.settings.language,
                           cache.templates_path if cache is not None else None)
        hosts = image_hosts(analysis.publication.settings)
        theme.env.globals["content_security_policy"] = meta_content_security_policy(hosts)  # csp: img_hosts
        language = analysis.publication.settings.language
        incremental = early is not None and cache is not None and cache.listed_as_left(early.live_listing())
        if early is not None and not incremental:  # touched since: a full build, into a tree of its own
            linked.close()
            early = None
        previous = cache.written if cache is not None and incremental else None
        step("rendering pages")
        staging = early or stack.enter_context(staging_tree(out_dir, content_dir, linger=linger))
        files = staging.files(previous)  # each file written as it is rendered
        tracking = None if cache is None else Tracking(_source_digests(analysis.corpus), sorted(analysis.corpus.assets),
                                                       cache.keys)
        summary: list[BuildSummary] = []  # made while the graph's child works: it compresses the heavy pages

        def summarised() -> None:
            summary.append(summarise(analysis.problems, site, files, memo))

        render_site(site, theme, emitters, memo, jobs, files, tracking, summarised)  # workers only for many notes
        step("writing the site" + (" and its search index" if search else ""))
        # a child process removes the old tree while the cache is saved
        rewritten = go_live(files, out_dir, (lambda tree: index_site(tree, language)) if search else None, staging)
        changed = len(rewritten) if incremental else len(files) + 1
        result = BuildResult(out_dir, len(files) + 1, analysis.publication.reports, analysis.problems, language,
                             changed=changed, summary=summary[0], image_hosts=hosts)
        if cache is not None:
            cache.record_output(written_state(files, files.digests, out_dir, previous,
                                              rewritten if incremental else None))
            cache.inputs, cache.result = cache.pending, result
            cache.keys = tracking.book if tracking is not None else None
            cache.save()
    return result
