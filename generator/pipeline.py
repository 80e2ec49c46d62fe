"""The build, top to bottom: load → validate → anchor → link → publish → emit → write.

``check_content`` is everything up to the publication (what ``carnet check`` runs);
``build`` adds the emitters and the atomic write. Nothing here calls a model or
reads the clock: the same content gives the same bytes.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Final, TypeVar

from generator.anchoring import AnchorFacts
from generator.corpus.links import CorpusIndex, LinkTarget, LinkUse, image_hosts, resolve_link
from generator.corpus.load import KnownFiles, load_corpus
from generator.corpus.model import Corpus
from generator.corpus.publication import (
    Publication,
    private_link_problems,
    private_perimeter_problems,
    publish,
)
from generator.corpus.validate import validate_corpus
from generator.digest import digest_of
from generator.engine import reads
from generator.engine.anchors import anchor_notes, source_digests
from generator.engine.cache import BuildCache, build_options, unchanged_build
from generator.engine.content import ContentKept
from generator.engine.emitters import (
    EMITTERS,
    Emitter,
)
from generator.engine.evidence import NoteEvidence, note_evidence
from generator.engine.memo import NO_MEMO, Kind, Memo
from generator.engine.notes import notes_parser
from generator.engine.output import (
    check_output_dir,
    go_live,
    is_carnet_tree,
    staging_tree,
    written_state,
)
from generator.engine.recall import pairs_recalled, recalled_by_key
from generator.engine.recalled import Recalled
from generator.engine.render import render_site
from generator.engine.search import index_site
from generator.engine.selections import wiki_selections
from generator.engine.summary import summarise
from generator.engine.tracking import Tracking
from generator.kinds import LinkKind, WikiKind
from generator.markup import site_address_problem
from generator.problems import ContentError, Problem, SettingsError, sorted_problems
from generator.result import BuildResult, BuildSummary
from generator.selection.oppositions import private_opposition_problems, published_pairs
from generator.site.addresses import address_problems
from generator.site.graph_view import GraphInputs, NoteGraph
from generator.site.headers import meta_content_security_policy
from generator.site.markdown_html import BodyTemplate
from generator.site.model import ListedBefore, SiteModel
from generator.site.theme import Theme, check_theme
from generator.synthesis.audit import ArticleAudit, audit_articles
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
                  known: KnownFiles | None = None, templates: bool = False,
                  kept: ContentKept | None = None) -> CheckedContent:
    """Everything up to the publication (what ``carnet check`` runs); ``memo`` remembers the
    notes parsed and anchored, for an incremental build (``known``: the files the build
    cache digested, not read again when unchanged). With ``jobs`` > 1 the notes are
    parsed and anchored in that many worker processes (the result is the same), which render
    the notes' bodies while their tokens are at hand when ``templates`` (a build: ``carnet
    check`` renders no HTML). ``kept``: what the last build of the process made of the content
    (``carnet serve``: its read, parse and publication are patched, not made again)."""
    if not content_dir.is_dir():
        raise SettingsError(f"content directory not found: {content_dir}")
    # 1. load and validate every file, collecting all problems
    parser = notes_parser(memo, jobs)
    corpus, problems = kept.load(content_dir, parser, known, memo) if kept is not None else load_corpus(
        content_dir, parser, known)
    problems += validate_corpus(corpus)
    problems += address_problems(corpus)  # content taking a name the site writes for itself
    # 2. anchor: elements of each note, each extraction's quote → portions; and the links it makes
    notes = kept.anchor(corpus, memo, jobs, templates) if kept is not None else anchor_notes(corpus, memo, jobs,
                                                                                              templates)
    anchored, facts, uses = notes.anchored, notes.facts, notes.uses
    problems += notes.problems
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
    publication = kept.publish(corpus) if kept is not None else publish(corpus)
    problems += private_link_problems(publication, corpus, links)
    problems += private_perimeter_problems(publication, {slug: a.perimeter_notes for slug, a in articles.items()})
    public = publication.extraction_ids
    for wiki, record in corpus.oppositions.items():
        if wiki in publication.notes:
            problems += private_opposition_problems(record, public, corpus.extractions)
    return CheckedContent(corpus, anchored, facts, links, articles, assessments, publication,
                          sorted_problems(problems), audit_keys, notes.templates, perimeter_keys, pairs_keys)


def blocking(problems: list[Problem], strict: bool) -> list[Problem]:
    return [p for p in problems if p.stops(strict)]


def site_model(analysis: CheckedContent, content_dir: Path, base_url: str | None = None,
               memo: Memo = NO_MEMO, jobs: int = 1,
               graph_before: tuple[GraphInputs, NoteGraph] | None = None,
               evidence: NoteEvidence | None = None, listed_before: ListedBefore | None = None) -> SiteModel:
    """The public site as emitters see it; ``jobs``: worker processes for the wikis'
    selections (grouping and map, one perimeter per worker at a time); ``graph_before``: a
    note graph of a build before and its inputs, to patch this one's from; ``evidence``:
    the notes' evidence, made already (:func:`note_evidence`); ``listed_before``: the indices
    that list notes of a build before, to patch this one's from."""
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
    selections, settings = wiki_selections(analysis.corpus, articles, analysis.perimeter_keys, content_dir, memo, jobs)
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
    evidence = evidence or note_evidence(publication, analysis.facts)
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
        coverage=evidence.coverage,
        statuses=evidence.merged,
        tallies={slug: tally(analysis.assessments.get(slug, []), audit.claims) for slug, audit in articles.items()},
        evidence_keys=evidence_keys,
        body_templates={slug: t for slug, t in analysis.body_templates.items() if slug in published},
        graph_before=graph_before,
        listed_before=listed_before,
    )


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
          progress: Callable[[str], None] | None = None, jobs: int = 1, linger: bool = False,
          edited: Collection[Path] | None = None) -> BuildResult:
    """A full build, or with ``cache`` an incremental one: only what changed is redone and
    rewritten, and the result is byte for byte what a full build gives. ``progress`` is
    told each stage as it starts (the CLI shows it on a terminal). ``jobs``: worker
    processes for the per-note work (parse, anchor, render), used when there are enough
    notes to redo; the bytes are the same whatever ``jobs``. With ``linger`` (``carnet
    serve``), the old tree swapped out is removed while the caller goes on (the next
    build waits for it, if it must). ``edited``: the paths (files or folders) of the content
    and theme that changed since the last build with this ``cache`` in this process, all of
    them (``carnet serve``'s watcher knows them): the inputs are then not walked to find out."""
    with few_collections():
        try:
            return _build(content_dir, out_dir, strict=strict, base_url=base_url, theme_dir=theme_dir,
                          emitters=emitters, search=search, cache=cache, progress=progress, jobs=jobs, linger=linger,
                          edited=edited)
        except ContentError:
            raise  # the memos made are good ones: the next build, once the content is fixed, uses them
        except BaseException:
            if cache is not None:  # a full disk, a failed write: what the cache appended is given back
                cache.discard()
            raise


def _build(content_dir: Path, out_dir: Path, *, strict: bool, base_url: str | None, theme_dir: Path | None,
           emitters: tuple[Emitter, ...], search: bool, cache: BuildCache | None,
           progress: Callable[[str], None] | None, jobs: int, linger: bool,
           edited: Collection[Path] | None) -> BuildResult:
    step = progress or (lambda stage: None)
    if base_url is not None and site_address_problem(base_url) is not None:
        raise SettingsError(f"--base-url {base_url!r} cannot be the site's address: {site_address_problem(base_url)} "
                            "(e.g. https://example.org/)")
    check_output_dir(out_dir, content_dir)  # refuse early, before any work
    theme_root = check_theme(theme_dir)
    if cache is not None:
        cache.content.changed(edited, cache.resident)  # unchanged or not, the next build's read is patched with these
        step("checking what changed")
        options = build_options(strict, base_url, search, theme_root,
                                None if emitters is EMITTERS else [e.name for e in emitters])
        unchanged = unchanged_build(cache, content_dir, out_dir, theme_root, options, edited)
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
        analysis = check_content(content_dir, memo, jobs, cache.known if cache is not None else None, templates=True,
                                 kept=cache.content if cache is not None else None)
        stopping = blocking(analysis.problems, strict)
        if stopping:
            raise ContentError(analysis.problems, strict=strict)
        step("grouping the evidence of wikis")
        evidence = note_evidence(analysis.publication, analysis.facts, cache.evidence_kept if cache is not None else None)
        site = site_model(analysis, content_dir, base_url, memo, jobs, cache.graph_kept if cache is not None else None,
                          evidence, cache.listed_kept if cache is not None else None)
        if cache is not None:
            cache.evidence_kept = evidence if cache.resident else None
        language = analysis.publication.settings.language
        load = partial(Theme.load, theme_root, language, cache.templates_path if cache is not None else None)
        theme = cache.theme(theme_root, language, load) if cache is not None else load()
        hosts = image_hosts(analysis.publication.settings)
        theme.env.globals["content_security_policy"] = meta_content_security_policy(hosts)  # csp: img_hosts
        incremental = early is not None and cache is not None and cache.listed_as_left(early.live_listing())
        if early is not None and not incremental:  # touched since: a full build, into a tree of its own
            linked.close()
            early = None
        previous = cache.written if cache is not None and incremental else None
        step("rendering pages")
        staging = early or stack.enter_context(staging_tree(out_dir, content_dir, linger=linger))
        files = staging.files(previous)  # each file written as it is rendered
        tracking = None if cache is None else Tracking(source_digests(analysis.corpus), sorted(analysis.corpus.assets),
                                                       cache.keys)
        summary: list[BuildSummary] = []  # made while the graph's child works: it compresses the heavy pages

        def summarised() -> None:
            summary.append(summarise(analysis.problems, site, files, memo))

        render_site(site, theme, emitters, memo, jobs, files, tracking, summarised)  # workers only for many notes
        if cache is not None:
            cache.keep_graph(site)
            cache.keep_listed(site)
        step("writing the site" + (" and its search index" if search else ""))
        # a child process removes the old tree while the cache is saved
        rewritten = go_live(files, out_dir, (lambda tree: index_site(tree, language)) if search else None, staging)
        changed = len(rewritten) if incremental else len(files) + 1
        result = BuildResult(out_dir, len(files) + 1, analysis.publication.reports, analysis.problems, language,
                             changed=changed, summary=summary[0], image_hosts=hosts)
        if cache is not None:
            # over the last tree, its state patched with the paths written or removed alone
            patched = rewritten if incremental else None
            cache.record_output(written_state(files, files.digests, out_dir, previous, patched), patched)
            cache.inputs, cache.result = cache.pending, result
            cache.keys = tracking.book if tracking is not None else None
            cache.save()
    return result
