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
from generator.pipeline import check_content, site_model
from generator.site.graph import build_graph
from generator.site.model import SiteModel, note_path

SHARES = (0.4, 0.4, 0.2)
_WORD = re.compile(r"\w{3,}", re.UNICODE)


def _terms(text: str) -> set[str]:
    folded = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
    return set(_WORD.findall(folded))


def rank(site: SiteModel, query: str) -> dict[str, float]:
    """Personalised PageRank from the nodes whose text shares the most terms with the query."""
    graph = build_graph(site).graph
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


def wiki_section(site: SiteModel, scores: dict[str, float], budget: int) -> str:
    lines = []
    by_claim = {f"claim:{a.article}/{a.claim.id}": a for items in site.assessments.values() for a in items}
    claims = {f"claim:{slug}/{c.id}": (slug, c) for slug, audit in site.articles.items() for c in audit.claims}
    for key in _ordered(scores, "claim:"):
        slug, claim = claims[key]
        title = site.publication.notes[slug].title
        state = by_claim[key].state.state if key in by_claim else "unsourced"
        anchor = f"#{claim.id}" if claim.sourced else ""  # only a sourced claim has an anchor on its page
        lines.append(f"- {claim.text} — [{title}]({site.base_url}{note_path(slug)}{anchor}) ({state})")
    return _fill(lines, budget)


def evidence_section(site: SiteModel, scores: dict[str, float], budget: int) -> str:
    states: dict[str, str] = {}
    for items in site.assessments.values():
        for a in items:
            if a.link.marker.kind == "ext":
                states.setdefault(a.link.extraction, a.state.state)
    lines = []
    for ext_id, note, item in _ranked_extractions(site, scores):
        date = note.date.isoformat() if note.date else ""
        state = f"; cited, {states[ext_id]}" if ext_id in states else ""
        lines.append(f"- « {' '.join(item.quote.split())} » — [{note.title}]({site.base_url}{note_path(note.slug)}"
                     f"#ext-{ext_id}) ({date}{state})")
    return _fill(lines, budget)


def debate_section(site: SiteModel, scores: dict[str, float], budget: int) -> str:
    lines = []
    for ext_id, note, item in _ranked_extractions(site, scores):
        against = [c for c in item.live_comments if c.stance is Stance.DISAGREE]
        if against:
            # a live comment's text is None only where the content has a missing-field
            # error; then this raises and the section is reported failed, as it always was
            said = against[0].text.split()  # type: ignore[union-attr]
            lines.append(f"- [{ext_id}]({site.base_url}{note_path(note.slug)}#ext-{ext_id}): "
                         f"{len(against)} disagreement(s) — « {' '.join(said)} »")
    for _slug, record in sorted(site.oppositions.items()):
        for pair in record.oppositions:
            if f"extraction:{pair.a}" in scores or f"extraction:{pair.b}" in scores:
                lines.append(f"- opposition ({record.provenance.get('method')}): {pair.question} — {pair.a} ⟷ {pair.b}")
    return _fill(lines, budget)


SECTIONS: tuple[tuple[str, Callable[[SiteModel, dict[str, float], int], str]], ...] = (
    ("Ce que disent les wikis et synthèses", wiki_section),
    ("Passages cités, avec leur état", evidence_section),
    ("Débats ouverts", debate_section),
)


def context_bundle(content: Path, query: str, budget: int = 8000, errors: TextIO = sys.stderr) -> str:
    analysis = check_content(content)
    site = site_model(analysis, content)
    scores = rank(site, query)
    parts = [f"# Contexte : {query}", "",
             f"Source : {site.publication.settings.title} ({site.base_url}). Chaque ligne renvoie à son passage.", ""]
    heading = sum(len(p) + 1 for p in parts)
    remaining = max(0, budget - heading)
    for (title, section), share in zip(SECTIONS, SHARES, strict=True):
        allowance = max(0, int(remaining * share) - len(title) - 6)
        try:
            body = section(site, scores, allowance) if scores else ""
        except Exception as exc:  # one failing source never blocks the others
            print(f"carnet context: section «{title}» failed: {exc}", file=errors)
            body = ""
        parts += [f"## {title}", "", body or "(rien)", ""]
    return "\n".join(parts).rstrip("\n") + "\n"
