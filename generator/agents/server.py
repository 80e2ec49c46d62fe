"""``carnet mcp``: the stdio server of the official ``mcp`` SDK around :mod:`generator.agents.tools`.

The content is read, checked and published once, at start, as ``carnet build`` does (a
content error refuses to start, with its file:line); stderr gets a one-line summary and
stdout is the protocol's alone. Four read-only tools (``search``, ``passage``,
``article``, ``context``) and one resource per page of the site — its Markdown mirror, at
the mirror's own URL, made as the build makes it (a note's when it is read; the others',
home, notebooks, categories, selections…, at start). A refused
query is a tool error with what to do; nothing here writes anything.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TextIO, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FunctionResource
from mcp.types import ToolAnnotations
from pydantic import Field

from generator.agents import tools
from generator.agents.tools import AgentError, Catalogue, HitKind
from generator.commands.context import bundle_of
from generator.engine.emitters import EMITTERS, PerNote, note_outputs
from generator.engine.memo import NO_MEMO
from generator.pipeline import blocking, check_content, site_model
from generator.problems import ContentError
from generator.site.graph import TypedGraph, build_graph
from generator.site.machine import site_pages, strings_of
from generator.site.mirrors import mirror_path, page_mirror_text
from generator.site.model import note_path
from generator.site.theme import Theme
from generator.synthesis.coverage import masked_elements

R = TypeVar("R")

NAME = "carnet"
INSTRUCTIONS = (
    "The published corpus of a Carnet site: notes, extractions (exact passages) and their debates, wiki articles "
    "and directed syntheses whose every (claim, source) pair carries a verification state. Search first (search), "
    "then read a passage (passage) or an article's audit (article), or ask for a cited bundle (context). Every "
    "result carries the site's URLs: cite those. Only what the site publishes is here.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

Query = Annotated[str, Field(description="a few words (the first 500 characters are read)",
                             max_length=tools.MAX_INPUT_CHARS)]
Offset = Annotated[int, Field(description="where the page starts: 0, then a result's next_offset",
                              ge=0, le=tools.MAX_OFFSET)]
Limit = Annotated[int, Field(description=f"items per page (at most {tools.MAX_LIMIT})", ge=1, le=tools.MAX_LIMIT)]
Identifier = Annotated[str, Field(max_length=tools.MAX_ID_CHARS)]


@dataclass
class Loaded:
    """The published model and what the tools read, made once; the typed graph when first asked."""

    catalogue: Catalogue
    theme: Theme
    graph: list[TypedGraph] = field(default_factory=list)

    def typed(self) -> TypedGraph:
        if not self.graph:
            self.graph.append(build_graph(self.catalogue.site))
        return self.graph[0]


def load(content: Path) -> Loaded:
    """The content checked and published as ``carnet build`` publishes it (its errors refuse it)."""
    analysis = check_content(content)
    if blocking(analysis.problems, False):
        raise ContentError(analysis.problems)
    site = site_model(analysis, content)
    catalogue = Catalogue.of(site, masked_elements(analysis.corpus.notes, analysis.anchored))
    return Loaded(catalogue, Theme.load(None, site.publication.settings.language))


def summary(loaded: Loaded) -> str:
    site = loaded.catalogue.site
    return (f"carnet mcp: {len(site.publication.notes)} published notes, {len(site.extractions)} extractions, "
            f"{len(site.articles)} articles from {site.base_url} — serving on stdio")


def _answered(query: Callable[[], R]) -> R:
    """A query's answer, or its refusal as the tool's error (its message, no traceback)."""
    try:
        return query()
    except AgentError as exc:
        raise ToolError(str(exc)) from None


def mirror_text(loaded: Loaded, slug: str) -> str:
    """A note's Markdown mirror, made as the build makes it (its page rendered, then mirrored)."""
    emitters = [e for e in EMITTERS if isinstance(e, PerNote)]
    outputs = note_outputs(loaded.catalogue.site, loaded.theme, NO_MEMO, emitters, slug)
    return outputs.derived[mirror_path(note_path(slug))].decode("utf-8")


def site_mirrors(loaded: Loaded) -> dict[str, str]:
    """Every page that is not a note's (home, notebooks, categories, bases, graph views, the
    articles' selections…) → its Markdown mirror, made as the build makes it: the site-wide
    emitters' pages, each mirrored (made once, at start: the resources are listed by URL)."""
    site, theme = loaded.catalogue.site, loaded.theme
    redirects = {note_path(alias) for note in site.publication.notes.values() for alias in note.aliases}
    pages: dict[str, bytes] = {}
    for emitter in EMITTERS:
        if isinstance(emitter, PerNote):
            continue
        for path, data in emitter.emit(site, theme, NO_MEMO):
            if path.endswith(".html") and path not in redirects:
                pages[path] = data
    per_note = [e for e in EMITTERS if isinstance(e, PerNote)]
    for slug in sorted(site.articles):  # an article's pages besides its own: its selection's, its discarded list
        for _name, path, data in note_outputs(site, theme, NO_MEMO, per_note, slug).emitted:
            if path.endswith(".html") and path != note_path(slug) and path not in redirects:
                pages[path] = data
    strings = strings_of(site, theme)
    return {page: page_mirror_text(site, strings, page, pages[page]) for page in site_pages(pages)}


def _same(text: str) -> str:
    return text


def make_server(loaded: Loaded) -> MCPServer[Any]:
    catalogue = loaded.catalogue
    server: MCPServer[Any] = MCPServer(NAME, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(description=(
        "Search the published corpus by words (BM25, as 'carnet ask'): passages of notes (their elements), "
        "extractions (exact passages marked in notes) and claims of wikis, syntheses and saved answers. Best "
        "first, paged. Each hit has its id (for the passage or article tool), its note and its URL on the site."),
        annotations=READ_ONLY)
    def search(query: Query,
               kind: Annotated[HitKind | None, Field(description="only hits of this kind")] = None,
               notebook: Annotated[str, Field(description="a public notebook's slug", max_length=tools.MAX_ID_CHARS)]
               = "",
               categories: Annotated[list[Identifier], Field(
                   description="AXIS=VALUE filters a note must all hold", max_length=tools.MAX_CATEGORIES)] | None
               = None,
               date_from: Annotated[str, Field(description="notes dated on or after (YYYY-MM-DD)", max_length=40)]
               = "",
               date_to: Annotated[str, Field(description="notes dated on or before (YYYY-MM-DD)", max_length=40)]
               = "",
               offset: Offset = 0, limit: Limit = tools.DEFAULT_LIMIT) -> dict[str, Any]:
        return _answered(partial(tools.search, catalogue, query, kind, notebook, categories or (), date_from,
                                 date_to, offset, limit))

    @server.tool(description=(
        "One passage by id: an extraction's id, a comment's id (its extraction, the comment named) or a note's "
        "passage (NOTE#ELEMENT, from search). Its quote as the note holds it (the note's own text over the "
        "passage's portions), note, date, author as published, URL, anchoring state, its comments with their "
        "stances (a withdrawn comment as a tombstone, never its text), and every (claim, source) pair citing it "
        "with its state, reason and verifier. Comments and citing pairs are paged."), annotations=READ_ONLY)
    def passage(id: Annotated[str, Field(description="an extraction, comment or passage id",
                                         max_length=tools.MAX_ID_CHARS)],
                offset: Offset = 0, limit: Limit = tools.DEFAULT_LIMIT) -> dict[str, Any]:
        return _answered(partial(tools.passage, catalogue, id, offset, limit))

    @server.tool(description=(
        "The audit of a wiki article, directed synthesis or saved answer, by slug, as its page shows it: each "
        "claim with its (claim, source) pairs' states, reasons and verifiers (unsourced claims too), the tally, "
        "the discarded evidence (or the refusal when the perimeter is unknown), the coverage of the perimeter's "
        "notes, the act's status and adoption. Lists are paged."), annotations=READ_ONLY)
    def article(slug: Annotated[str, Field(description="the article's slug", max_length=tools.MAX_ID_CHARS)],
                offset: Offset = 0, limit: Limit = tools.DEFAULT_LIMIT) -> dict[str, Any]:
        return _answered(partial(tools.article, catalogue, slug, offset, limit))

    @server.tool(description=(
        "The cited Markdown bundle of 'carnet context' for a query, within a character budget: what the wikis "
        "and syntheses say, the evidence passages with their states and links, the open debates."),
        annotations=READ_ONLY, structured_output=False)
    def context(query: Query,
                budget: Annotated[int, Field(description="characters", ge=tools.MIN_BUDGET, le=tools.MAX_BUDGET)]
                = 8000) -> str:
        asked, allowance = _answered(partial(tools.context_request, query, budget))
        return bundle_of(catalogue.site, loaded.theme, asked, allowance, sys.stderr, loaded.typed())

    for page in tools.mirror_pages(catalogue.site):
        slug = page[len("notes/"): -len(".html")]
        note = catalogue.site.publication.notes[slug]
        server.add_resource(FunctionResource.from_function(
            partial(mirror_text, loaded, slug), uri=catalogue.url(mirror_path(page)), name=slug, title=note.title,
            description=f"the Markdown mirror of {catalogue.url(page)}", mime_type="text/markdown"))
    for page, text in site_mirrors(loaded).items():
        server.add_resource(FunctionResource.from_function(
            partial(_same, text), uri=catalogue.url(mirror_path(page)), name=page[: -len(".html")],
            title=text.partition("\n")[0].lstrip("# ").strip() or page, description=f"the Markdown mirror of {catalogue.url(page)}",
            mime_type="text/markdown"))
    return server


def serve(content: Path, errors: TextIO = sys.stderr) -> None:
    """Load the content once, say so on ``errors``, then serve on stdio until stdin closes."""
    with contextlib.redirect_stdout(errors):  # stdout is the protocol's: nothing else may reach it
        loaded = load(content)
        server = make_server(loaded)
    print(summary(loaded), file=errors, flush=True)
    server.run("stdio")
