"""Each wiki's selection, as a build makes it: a perimeter's grouping and map (its likeness)
recalled by its quotes and the settings, a wiki's selection by its perimeter's key; the
heavy perimeters laid out in worker processes; wikis on one perimeter share its selection."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from generator.corpus.model import Corpus, NoteType
from generator.digest import digest_of
from generator.engine import reads
from generator.engine.jobs import fork_map
from generator.engine.memo import NO_MEMO, Kind, Memo, same
from generator.selection.select import Likeness, Selection, arrange, likeness, perimeter_quotes, selection_threshold
from generator.selection.vectors import embeddings_settings, load_cache
from generator.synthesis.audit import ArticleAudit


def wiki_selections(corpus: Corpus, articles: Mapping[str, ArticleAudit], perimeter_keys: Mapping[str, str],
                    content_dir: Path, memo: Memo = NO_MEMO, jobs: int = 1) -> tuple[dict[str, Selection], str]:
    """Each published wiki's selection (``articles``: the published ones), and the digest of the
    selection settings (threshold, embeddings provider and vectors: what every selection reads
    beside its perimeter); ``jobs``: worker processes for the perimeters' grouping and map."""
    threshold = selection_threshold(corpus.settings.extra)
    provider, model = embeddings_settings(corpus.settings.extra)
    vectors = load_cache(content_dir, model) if provider == "endpoint" else {}

    same_perimeter: dict[tuple[str, ...], Selection] = {}  # wikis that share a perimeter share its selection
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
        perimeter = perimeter_keys.get(slug)
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
    return selections, settings
