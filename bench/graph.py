"""The graph pages at the scale of the 399-meeting TSC corpus: layout time and bytes.

    python -m bench.graph                          # 400 notes, 2,000 extractions, 8 wikis
    python -m bench.graph --notes 5000 --extractions 10000

``bench.corpus`` writes a corpus (its notes link to one another; the wikis cite their
extractions); the site is analysed once, then timed: the note graph made from the site
model, each graph page's layout (the site's and every notebook's) and markup, and every
note's local graph. The pages are then built and weighed, raw and gzipped (level 6, as
servers send them), against the page budget. A measurement, read by people: no timing is
asserted anywhere.
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.corpus import Densities, plain_notes, write_carnet


@dataclass
class GraphFigures:
    notes: int
    extractions: int
    nodes: int  # drawn on the site's graph page
    aggregated: int  # notes grouped in "more" nodes there
    edges: int
    graph_seconds: float  # the note graph from the site model
    layout_seconds: float  # every graph page's layout and markup
    local_seconds: float  # every note's local graph
    pages: dict[str, tuple[int, int]]  # graph page → (bytes, gzipped bytes)


def measure(root: Path, notes: int = 400, extractions: int = 2000, wikis: int = 8, seed: int = 7) -> GraphFigures:
    from generator.pipeline import build, check_content, site_model
    from generator.site.graph_pages import SITE_GRAPH, notebook_graph_path
    from generator.site.graph_svg import svg
    from generator.site.graph_view import NodeKind, local_drawing, page_drawing

    content = root / "content"
    write_carnet(content, plain_notes(notes, seed=seed),
                 Densities(extractions=extractions, comments=1, wikis=wikis, citations=notes // 2), seed=seed)
    site = site_model(check_content(content), content)
    start = time.perf_counter()
    graph = site.note_graph
    made = time.perf_counter()
    drawing = page_drawing(graph)
    svg(drawing, SITE_GRAPH, lambda key, **values: key, "graph")
    for slug in site.publication.notebooks:
        svg(page_drawing(graph, slug), notebook_graph_path(slug), lambda key, **values: key, "graph")
    laid = time.perf_counter()
    for slug in site.publication.notes:
        local_drawing(graph, slug)
    local = time.perf_counter()
    out = root / "site"
    build(content, out, search=False)
    paths = [SITE_GRAPH, *(notebook_graph_path(s) for s in site.publication.notebooks)]
    pages = {}
    for path in paths:
        data = (out / path).read_bytes()
        pages[path] = (len(data), len(gzip.compress(data, compresslevel=6, mtime=0)))
    return GraphFigures(notes, sum(len(n.extractions) for n in site.publication.notes.values()), len(drawing.nodes),
                        sum(n.count for n in drawing.nodes if n.kind is NodeKind.MORE), len(drawing.edges),
                        made - start, laid - made, local - laid, pages)


def report(figures: GraphFigures) -> str:
    lines = [f"{figures.notes:,} notes, {figures.extractions:,} extractions: the site's graph page draws "
             f"{figures.nodes:,} nodes ({figures.aggregated:,} notes grouped) and {figures.edges:,} edges", "",
             "| step | seconds |", "|---|---:|",
             f"| note graph from the site model | {figures.graph_seconds:.3f} |",
             f"| every graph page's layout and markup ({len(figures.pages)} pages) | {figures.layout_seconds:.3f} |",
             f"| every note's local graph | {figures.local_seconds:.3f} |", "",
             "| page | bytes | gzipped |", "|---|---:|---:|"]
    lines += [f"| {path} | {size:,} | {packed:,} |" for path, (size, packed) in figures.pages.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=400)
    parser.add_argument("--extractions", type=int, default=2000)
    parser.add_argument("--wikis", type=int, default=8)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        print(report(measure(Path(work), args.notes, args.extractions, args.wikis)), end="")


if __name__ == "__main__":
    main()
