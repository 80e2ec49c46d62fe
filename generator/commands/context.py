"""``carnet context QUERY [--budget N]``: a deterministic, cited markdown bundle for agents.

Seeds come from a lexical search over the published corpus; a personalised PageRank
over the typed graph ranks what lies around them; three sections are filled within
the character budget — what the wikis say, the evidence passages with their states and
links, the open debates. Each section degrades on its own: a failing one is left empty
with a message on stderr, the others come. Same inputs, same bytes.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import networkx as nx

from generator.corpus.model import Extraction, Note, Stance
from generator.kinds import WikiKind
from generator.pipeline import check_content, site_model
from generator.site.graph import TypedGraph, build_graph
from generator.site.model import SiteModel, extraction_fragment, note_path
from generator.site.theme import Theme

SHARES = (0.4, 0.4, 0.2)
_WORD = re.compile(r"\w{3,}", re.UNICODE)


def _terms(text: str) -> set[str]:
    folded = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
    return set(_WORD.findall(folded))


def rank(site: SiteModel, query: str, typed: TypedGraph | None = None) -> dict[str, float]:
    """Personalised PageRank from the nodes whose text shares the most terms with the query
    (``typed``: the site's typed graph, when made already)."""
    graph = (typed or build_graph(site)).graph
    wanted = _terms(query)
    seeds: dict[str, float] = {}
    for key, data in graph.nodes(data=True):
        text = " ".join(str(data.get(k, "")) for k in ("title", "quote", "text", "question"))
        score = len(wanted & _terms(text))
        if score:
            seeds[key] = float(score)
    if not seeds:
        return {}
    simple: nx.Graph[str] = nx.Graph()
    simple.add_nodes_from(sorted(graph.nodes))
    simple.add_edges_from(sorted((u, v) for u, v in graph.edges()))
    scores = nx.pagerank(simple, alpha=0.85, personalization=seeds, max_iter=200, tol=1e-12)
    return {key: round(value, 10) for key, value in scores.items()}


def _ordered(scores: dict[str, float], prefix: str) -> list[str]:
    return [k for k, _v in sorted(((k, v) for k, v in scores.items() if k.startswith(prefix)),
                                  key=lambda item: (-item[1], item[0]))]


def _ranked_extractions(site: SiteModel, scores: dict[str, float]) -> Iterator[tuple[str, Note, Extraction]]:
    """Published extractions by rank: (id, note, extraction)."""
    extraction = {e.id: (n, e) for n in site.publication.notes.values() for e in n.extractions}
    for key in _ordered(scores, "extraction:"):
        ext_id = key.split(":", 1)[1]
        if ext_id in extraction:
            yield ext_id, *extraction[ext_id]


def _fill(lines: list[str], budget: int) -> str:
    out, size = [], 0
    for line in lines:
        if size + len(line) + 1 > budget:
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def wiki_section(site: SiteModel, theme: Theme, scores: dict[str, float], budget: int) -> str:
    lines = []
    by_claim = {f"claim:{a.article}/{a.claim.id}": a for items in site.assessments.values() for a in items}
    claims = {f"claim:{slug}/{c.id}": (slug, c) for slug, audit in site.articles.items() for c in audit.claims}
    for key in _ordered(scores, "claim:"):
        slug, claim = claims[key]
        title = site.publication.notes[slug].title
        state = by_claim[key].state.state if key in by_claim else "unsourced"
        anchor = f"#{claim.id}" if claim.sourced else ""  # only a sourced claim has an anchor on its page
        lines.append(f"- {claim.text} — [{title}]({site.base_url}{note_path(slug)}{anchor}) ({theme.tr('state_' + state)})")
    return _fill(lines, budget)


def evidence_section(site: SiteModel, theme: Theme, scores: dict[str, float], budget: int) -> str:
    states: dict[str, str] = {}
    for items in site.assessments.values():
        for a in items:
            if a.link.marker.kind is WikiKind.EXT:
                states.setdefault(a.link.extraction, a.state.state)
    lines = []
    for ext_id, note, item in _ranked_extractions(site, scores):
        date = note.date.isoformat() if note.date else ""
        state = theme.tr("context_cited", state=theme.tr("state_" + states[ext_id])) if ext_id in states else ""
        quote = theme.tr("quoted", text=" ".join(item.quote.split()))
        where = extraction_fragment(site.statuses, ext_id)  # a detached one: its entry in the note's list
        lines.append(f"- {quote} — [{note.title}]({site.base_url}{note_path(note.slug)}#{where}) ({date}{state})")
    return _fill(lines, budget)


def debate_section(site: SiteModel, theme: Theme, scores: dict[str, float], budget: int) -> str:
    lines = []
    for ext_id, note, item in _ranked_extractions(site, scores):
        against = [c for c in item.live_comments if c.stance is Stance.DISAGREE]
        if against:
            # a live comment's text is None only where the content has a missing-field
            # error; then this raises and the section is reported failed, as it always was
            said = against[0].text.split()  # type: ignore[union-attr]
            where = extraction_fragment(site.statuses, ext_id)
            lines.append(f"- [{ext_id}]({site.base_url}{note_path(note.slug)}#{where}){theme.tr('colon')}"
                         f"{theme.tr('disagreements', n=len(against))} — {theme.tr('quoted', text=' '.join(said))}")
    for _slug, record in sorted(site.oppositions.items()):
        for pair in record.oppositions:
            if f"extraction:{pair.a}" in scores or f"extraction:{pair.b}" in scores:
                opposition = theme.tr("context_opposition", method=record.provenance.get("method", "?"))
                lines.append(f"- {opposition}{theme.tr('colon')}{pair.question} — {pair.a} ⟷ {pair.b}")
    return _fill(lines, budget)


SECTIONS: tuple[tuple[str, Callable[[SiteModel, Theme, dict[str, float], int], str]], ...] = (
    ("context_wikis", wiki_section),
    ("context_evidence", evidence_section),
    ("context_debates", debate_section),
)
"""Each section: the key of its title in the theme's strings, and what fills it."""


def context_bundle(content: Path, query: str, budget: int = 8000, errors: TextIO = sys.stderr) -> str:
    """The bundle, in the site's language (its theme's strings, as the pages)."""
    analysis = check_content(content)
    site = site_model(analysis, content)
    return bundle_of(site, Theme.load(None, site.publication.settings.language), query, budget, errors)


def bundle_of(site: SiteModel, theme: Theme, query: str, budget: int = 8000, errors: TextIO = sys.stderr,
              typed: TypedGraph | None = None) -> str:
    """The bundle of an already loaded model (``carnet mcp`` loads it once for many queries)."""
    scores = rank(site, query, typed)
    parts = [f"# {theme.tr('context_title', query=query)}", "",
             theme.tr("context_source", title=site.publication.settings.title, url=site.base_url), ""]
    heading = sum(len(p) + 1 for p in parts)
    remaining = max(0, budget - heading)
    for (key, section), share in zip(SECTIONS, SHARES, strict=True):
        title = theme.tr(key)
        allowance = max(0, int(remaining * share) - len(title) - 6)
        try:
            body = section(site, theme, scores, allowance) if scores else ""
        except Exception as exc:  # one failing source never blocks the others
            print(f"carnet context: section «{title}» failed: {exc}", file=errors)
            body = ""
        parts += [f"## {title}", "", body or theme.tr("context_nothing"), ""]
    return "\n".join(parts).rstrip("\n") + "\n"
