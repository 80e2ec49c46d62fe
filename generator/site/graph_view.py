"""The graph, seen: what the graph pages and each page's local graph draw, and where.
Pure: the site model in; nodes, edges and rounded coordinates out.

It is drawn at the level a reader navigates, a page per node: the published notes (of
each kind) and the notebooks. Extractions are folded into their note and comments into
their extraction — counted on the note, not drawn — so a citation of an extraction is an
edge from the article to the note, and a reply edge folds away. Edges: ``cites`` (an
article or answer to a note it cites, weighted by its citations), ``links`` (a note's
body links to another note, or to its extractions), ``member-of`` (a note to a notebook).

Legible at scale: notes are laid out by notebook, each notebook a disc of its own (its
notes in a force layout from fixed starting points, so the same content gives the same
coordinates), the notebooks on a ring. Past :data:`MAX_DRAWN` nodes the least connected
notes of each notebook are drawn as one aggregate node ("+ 1,204 notes"), which links to
the notebook. Every node has a label that tells it apart (:func:`short_labels`: the words a
notebook's titles share dropped, dates kept); it is shown beside its node, where it fits, for
the notebooks, the articles and the best connected notes (:data:`MAX_LABELS`), and on hover,
focus or a find for the others. A local graph is a note's neighbourhood at depth 1, at most
:data:`LOCAL_NEIGHBOURS` neighbours, on a ring round it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import numpy as np
# numpy is imported where used: a rebuild that lays no graph out never loads it

from generator.corpus.model import Note, NoteType
from generator.digest import digest_of

MAX_DRAWN = 600
"""Nodes a graph page draws; past it, each notebook's least connected notes are aggregated."""
MAX_LABELS = 100
"""Labels a graph page shows beside its nodes, where they fit (the others show theirs on hover,
focus and find)."""
LOCAL_NEIGHBOURS = 16
"""Neighbours a local graph draws (the rest are counted)."""
ITERATIONS = 80
"""Steps of the force layout inside each notebook's disc."""
FORCE_LIMIT = 120
"""Nodes one force layout places (its cost grows as their square): a larger disc is cut in parts."""
LABEL_CHARS = 28
"""Characters of a label written beside its node (the whole title is its tooltip)."""
SHARED_BY = 3
"""Titles of a notebook that must begin with the same words for a label to drop them."""
_DATE: Final = re.compile(r"\b(?:\d{4}-\d{2}-\d{2}|\d{4}-\d{2}|\d{4}[-–/]\d{4}|\d{1,2}(?:er)?\s+[^\W\d_]+\s+\d{4}|\d{4})\b")
"""A date in a title (2019-07-24, 2019-07, 2024-2025, 14 novembre 2024, 2024): what a cut label keeps."""


def _fit(text: str, limit: int) -> str:
    """``text`` in ``limit`` characters: cut at its end (at a word's end where one is near),
    but a date the cut would lose is kept, the cut made before it ("Séance budgétaire…14
    novembre 2024"), with what follows it when that is short."""
    if len(text) <= limit:
        return text
    dates = list(_DATE.finditer(text))
    if not dates or dates[-1].end() <= limit - 1:
        return _head(text, limit - 1) + "…"
    date = dates[-1]
    tail = text[date.start():] if len(text) - date.end() <= 6 else date.group() + "…"
    head = _head(text, limit - 1 - len(tail))
    return (head + "…" if head.strip("…") else "…") + tail


def _ends(text: str, limit: int) -> str:
    """``text`` in ``limit`` characters, its start and its end kept ("Préparation du…mars
    (interne)"): for two titles that :func:`_fit` makes alike."""
    room = limit - 1
    start = len(text) - room // 2
    word = text.rfind(" ", 0, start + 1)  # the end from a word's start, where that leaves a third for the start
    if word >= 0 and len(text) - word - 1 <= room * 2 // 3:
        start = word + 1
    end = text[start:].lstrip()
    return _head(text, room - len(end)) + "…" + end


def _head(text: str, room: int) -> str:
    """The start of ``text`` in ``room`` characters, cut after a word where that keeps at
    least half of them, without the punctuation left hanging."""
    if room <= 0:
        return ""
    head = text[:room]
    if room < len(text) and not text[room].isspace() and head.rfind(" ") >= room // 2:
        head = head[:head.rfind(" ")]
    return head.rstrip(" :;,.–—-(«\"'")


def short_labels(titles: Mapping[str, tuple[str, str]], limit: int = LABEL_CHARS) -> dict[str, str]:
    """Each node's label, from ``titles`` (key → (notebook, title)): a title that fits is kept
    whole; a longer one drops the first words it shares with at least :data:`SHARED_BY`
    titles of its notebook ("Node.js Foundation TSC Meeting 2019-07-24" → "…2019-07-24"),
    then is fitted keeping its date (:func:`_fit`). Where two labels come out the same, each
    drops fewer words, until they differ, then keeps both ends of its title (:func:`_ends`).
    Pure, and independent of the order of ``titles``."""
    words = {k: t.split() for k, (_notebook, t) in titles.items()}
    shared: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for key, (notebook, _title) in titles.items():
        for n in range(1, len(words[key])):  # a prefix that leaves a word
            shared[(notebook, tuple(words[key][:n]))] += 1
    # each title's cuts, the most words dropped first; 0 drops none; -1 keeps both its ends
    cuts = {k: [n for n in range(len(words[k]) - 1, 0, -1) if shared[(nb, tuple(words[k][:n]))] >= SHARED_BY] + [0, -1]
            if len(t) > limit else [0] for k, (nb, t) in titles.items()}
    tried = dict.fromkeys(titles, 0)

    def label(key: str) -> str:
        n = cuts[key][tried[key]]
        if n < 0:
            return _ends(titles[key][1], limit)
        return _fit("…" + " ".join(words[key][n:]) if n else titles[key][1], limit)

    labels = {k: label(k) for k in titles}
    while True:
        same: dict[str, list[str]] = defaultdict(list)
        for key, text in labels.items():
            same[text].append(key)
        moved = [k for keys in same.values() if len(keys) > 1 for k in keys if tried[k] + 1 < len(cuts[k])]
        if not moved:
            return {k: labels[k] for k in sorted(labels)}
        for key in moved:
            tried[key] += 1
            labels[key] = label(key)


class NodeKind(StrEnum):
    NOTE = "note"
    WIKI = "wiki"
    SYNTHESIS = "synthesis"
    ANSWER = "answer"
    NOTEBOOK = "notebook"
    MORE = "more"  # an aggregate of a notebook's least connected notes


class EdgeKind(StrEnum):
    CITES = "cites"
    LINKS = "links"
    MEMBER = "member-of"


KIND_OF_NOTE = {NoteType.NOTE: NodeKind.NOTE, NoteType.WIKI: NodeKind.WIKI, NoteType.SYNTHESIS: NodeKind.SYNTHESIS,
                NoteType.ANSWER: NodeKind.ANSWER}


@dataclass(frozen=True)
class Node:
    """Attributes:
        key: ``note:<slug>``, ``notebook:<slug>`` or ``more:<notebook>``.
        path: the site path of its page (an aggregate's: its notebook's).
        notebook: the notebook it is drawn in.
        extractions, comments: folded into it (a note's).
        count: how many notes an aggregate stands for (1 otherwise).
    """

    key: str
    kind: NodeKind
    title: str
    path: str
    notebook: str
    extractions: int = 0
    comments: int = 0
    count: int = 1


@dataclass(frozen=True, order=True)
class Edge:
    source: str
    target: str
    kind: EdgeKind
    weight: int = 1


@dataclass(frozen=True)
class Drawing:
    """A graph with its layout: coordinates (rounded, in a ``width`` × ``height`` box), each
    node's radius, the nodes whose label is written, and per node its neighbours."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    positions: dict[str, tuple[float, float]]
    radius: dict[str, float]
    labelled: frozenset[str]
    width: int
    height: int
    hidden: int = 0  # neighbours a local graph leaves out
    neighbours: dict[str, tuple[str, ...]] = field(default_factory=dict)
    sides: dict[str, str] = field(default_factory=dict)  # a label's side when not right of its node: left, above, below
    labels: dict[str, str] = field(default_factory=dict)  # every node's label (:func:`short_labels`), shown or not


@dataclass(frozen=True)
class NoteGraph:
    """Every note-level edge of the published site, and each note's neighbours: made once
    per build (:func:`note_graph`), read by every graph."""

    nodes: dict[str, Node]
    edges: tuple[Edge, ...]
    around: dict[str, tuple[Edge, ...]]  # node key → the edges touching it
    # each note's local drawing once made: its page and its outputs' key both read it
    locals: dict[str, Drawing | None] = field(default_factory=dict, compare=False, repr=False)
    # :func:`layout_digest`, once made (or carried by :func:`graph_patched`)
    layout: str | None = field(default=None, compare=False, repr=False)

    def degree(self, key: str) -> int:
        return sum(e.weight for e in self.around.get(key, ()))

    def local(self, slug: str) -> Drawing | None:
        """:func:`local_drawing` of ``slug``, made once."""
        if slug not in self.locals:
            self.locals[slug] = local_drawing(self, slug)
        return self.locals[slug]


@dataclass(frozen=True)
class GraphInputs:
    """What :func:`note_graph` is made of (its arguments, kept together): a graph made of
    other inputs is patched from them (:func:`graph_patched`)."""

    notes: Mapping[str, Note]
    notebooks: Mapping[str, str]
    paths: Mapping[str, str]
    cites: list[tuple[str, str]]
    links: list[tuple[str, str]]

    def graph(self) -> NoteGraph:
        return note_graph(self.notes, self.notebooks, self.paths, self.cites, self.links)


def note_graph(notes: Mapping[str, Note], notebooks: Mapping[str, str], paths: Mapping[str, str],
               cites: Iterable[tuple[str, str]], links: Iterable[tuple[str, str]]) -> NoteGraph:
    """The graph of the published ``notes`` and ``notebooks`` (slug → title): ``paths``,
    each node's page; ``cites``, (article, cited note) once per citation; ``links``,
    (note, linked note) once per link."""
    nodes: dict[str, Node] = {}
    for slug, title in notebooks.items():
        nodes[f"notebook:{slug}"] = Node(f"notebook:{slug}", NodeKind.NOTEBOOK, title, paths[f"notebook:{slug}"], slug)
    for slug, note in notes.items():
        nodes[f"note:{slug}"] = _note_node(slug, note, notebooks, paths)
    weights: dict[tuple[str, str, EdgeKind], int] = defaultdict(int)
    for kind, pairs in ((EdgeKind.CITES, cites), (EdgeKind.LINKS, links)):
        for source, target in pairs:
            if source != target and f"note:{source}" in nodes and f"note:{target}" in nodes:
                weights[(f"note:{source}", f"note:{target}", kind)] += 1
    for slug, note in notes.items():
        for membership in note.memberships:
            if membership.notebook in notebooks:
                weights[(f"note:{slug}", f"notebook:{membership.notebook}", EdgeKind.MEMBER)] += 1
    edges = tuple(Edge(s, t, k, w) for (s, t, k), w in sorted(weights.items()))  # Edge's order: its fields'
    around: dict[str, list[Edge]] = defaultdict(list)
    for edge in edges:
        around[edge.source].append(edge)
        around[edge.target].append(edge)
    return NoteGraph(nodes, edges, {k: tuple(v) for k, v in around.items()})


def _note_node(slug: str, note: Note, notebooks: Mapping[str, str], paths: Mapping[str, str]) -> Node:
    home = next((m.notebook for m in note.memberships if m.notebook in notebooks), "")
    return Node(f"note:{slug}", KIND_OF_NOTE[note.type], note.title, paths[f"note:{slug}"], home,
                len(note.extractions), sum(len(e.comments) for e in note.extractions))


def graph_patched(last: NoteGraph, was: GraphInputs, now: GraphInputs) -> NoteGraph | None:
    """:func:`note_graph` of ``now`` from ``last``, the graph of ``was``, when they differ only
    by notes whose edges are as they were (the same citations, links and notebooks; each
    note changed a member of the same notebooks, as many times): those notes' nodes made
    again, the rest taken as it was (a body or a title edited; 40 ms at 5,000 notes made
    whole). ``None`` otherwise."""
    if (list(was.notes) != list(now.notes) or was.notebooks != now.notebooks or was.paths != now.paths
            or was.cites != now.cites or was.links != now.links):
        return None
    notebooks, before = now.notebooks, was.notes
    changed = [(slug, note) for slug, note in now.notes.items() if note is not before[slug]]
    if any(_member_of(note, notebooks) != _member_of(before[slug], notebooks) for slug, note in changed):
        return None
    nodes = dict(last.nodes)
    for slug, note in changed:
        nodes[f"note:{slug}"] = _note_node(slug, note, notebooks, now.paths)
    # laid out as it was when each node changed is (its title aside): the drawings' reads are the last ones
    laid = all(_laid(nodes[f"note:{slug}"]) == _laid(last.nodes[f"note:{slug}"]) for slug, _note in changed)
    return NoteGraph(nodes, last.edges, last.around, layout=last.layout if laid else None)


def _member_of(note: Note, notebooks: Mapping[str, str]) -> list[str]:
    """The notebooks of the graph ``note`` is a member of, once per membership, in order (its
    home is the first; each is an edge weighing as many)."""
    return [m.notebook for m in note.memberships if m.notebook in notebooks]


def _seed(key: str) -> tuple[float, float]:
    """A fixed starting point in the unit disc for ``key`` (a hash, never a random draw)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    angle = int.from_bytes(digest[:4], "big") / 2**32 * 2 * math.pi
    distance = math.sqrt(int.from_bytes(digest[4:8], "big") / 2**32)
    return distance * math.cos(angle), distance * math.sin(angle)


def force_layout(keys: list[str], edges: list[tuple[int, int, float]], iterations: int = ITERATIONS) -> np.ndarray:
    """Fruchterman–Reingold in the unit disc from fixed starting points: the same keys and
    edges give the same coordinates (numpy's float arithmetic, in a fixed order)."""
    import numpy as np
    count = len(keys)
    positions = np.array([_seed(k) for k in keys], dtype=float).reshape(count, 2)
    if count <= 1:
        return np.zeros((count, 2))
    k = math.sqrt(math.pi / count)  # the ideal distance for count points in the unit disc
    temperature = 0.1
    sources = np.array([e[0] for e in edges], dtype=int)
    targets = np.array([e[1] for e in edges], dtype=int)
    weights = np.array([e[2] for e in edges], dtype=float)
    for _ in range(iterations):
        # repulsion k²/d along each pair's direction: delta · k² / d², one (n, n) array per axis
        dx = positions[:, 0, None] - positions[None, :, 0]
        dy = positions[:, 1, None] - positions[None, :, 1]
        factor = (k * k) / (dx * dx + dy * dy + 1e-9)
        force = np.stack(((dx * factor).sum(axis=1), (dy * factor).sum(axis=1)), axis=1)
        # a pull to the centre that balances the push of a uniform disc (k²·count·r = π·r, as
        # Gauss's law gives for a 1/d force): without it the notes piled up on the rim, a ring
        force -= (k * k * count) * positions
        if len(edges):
            pull = positions[sources] - positions[targets]
            length = np.sqrt((pull ** 2).sum(axis=1)) + 1e-9
            step = pull / length[:, None] * (length * length / k * np.minimum(weights, 4.0))[:, None]
            np.add.at(force, sources, -step)
            np.add.at(force, targets, step)
        size = np.sqrt((force ** 2).sum(axis=1)) + 1e-9
        positions += force / size[:, None] * np.minimum(size, temperature)[:, None]
        outside = np.sqrt((positions ** 2).sum(axis=1))
        positions /= np.maximum(outside, 1.0)[:, None]  # kept in the disc
        temperature *= 0.96
    return positions


def disc_layout(graph: NoteGraph, centre: str, members: list[str]) -> dict[str, tuple[float, float]]:
    """``centre`` at the middle of the unit disc and ``members`` round it. Up to
    :data:`FORCE_LIMIT` members, one force layout; past it (its cost grows as the square of
    the count), the members taken in breadth-first order along their edges, so that linked
    notes stay together, are cut into parts of at most that many, each part a smaller disc
    with a layout of its own, the parts on a ring."""
    if len(members) <= FORCE_LIMIT:
        return _forced([centre, *members], graph, pin_first=True)
    inside = set(members)
    order: list[str] = []
    seen: set[str] = set()
    for start in sorted(members, key=lambda m: (-graph.degree(m), m)):
        queue = [start]
        while queue:
            key = queue.pop(0)
            if key in seen:
                continue
            seen.add(key)
            order.append(key)
            queue += sorted(o for e in graph.around.get(key, ()) for o in (e.source, e.target) if o in inside and o not in seen)
    parts = [order[i:i + FORCE_LIMIT] for i in range(0, len(order), FORCE_LIMIT)]
    sizes = [math.sqrt(len(part)) for part in parts]
    ring = 1 - max(sizes) / sum(sizes) if len(parts) > 1 else 0.0
    placed = {centre: (0.0, 0.0)}
    angle = 0.0
    for part, size in zip(parts, sizes, strict=True):
        share = size / sum(sizes) * 2 * math.pi
        cx, cy = ring * math.cos(angle + share / 2), ring * math.sin(angle + share / 2)
        angle += share
        scale = min(size / sum(sizes) * 2.2, 1 - ring)
        for key, (x, y) in _forced(part, graph).items():
            placed[key] = (cx + x * scale, cy + y * scale)
    return placed


def disc_key(graph: NoteGraph, centre: str, members: list[str]) -> str:
    """What :func:`disc_layout` reads: the members in order, each one's degree and edges."""
    return digest_of(("disc-centred", centre, [(m, graph.degree(m), [(e.source, e.target, e.kind, e.weight)
                                                               for e in graph.around.get(m, ())]) for m in members]))


def _forced(keys: list[str], graph: NoteGraph, pin_first: bool = False) -> dict[str, tuple[float, float]]:
    index = {k: i for i, k in enumerate(keys)}
    internal = [(index[e.source], index[e.target], float(e.weight)) for k in keys for e in graph.around.get(k, ())
                if e.source == k and e.target in index]
    laid = force_layout(keys, internal)
    if pin_first:
        laid[0] = 0.0  # the notebook at its disc's centre
    return {k: (float(x), float(y)) for k, (x, y) in zip(keys, laid, strict=True)}


def _kept(graph: NoteGraph, members: list[str], room: int) -> tuple[list[str], list[str]]:
    """The ``room`` members drawn (articles first, then the best connected) and the rest."""
    if len(members) <= room:
        return members, []
    ranked = sorted(members, key=lambda m: (graph.nodes[m].kind is NodeKind.NOTE, -graph.degree(m), m))
    kept = set(ranked[:room])
    return [m for m in members if m in kept], [m for m in members if m not in kept]


def _radius(node: Node) -> float:
    if node.kind is NodeKind.NOTEBOOK:
        return 9.0
    if node.kind is NodeKind.MORE:
        return round(6 + 2 * math.log10(node.count + 1), 1)
    return round(3.5 + min(4.0, math.sqrt(node.extractions) / 2), 1)


def _laid(node: Node) -> tuple[object, ...]:
    """What a drawing reads of a node but its title."""
    return node.key, node.kind.value, node.path, node.notebook, node.extractions, node.comments, node.count


def layout_reads(graph: NoteGraph) -> tuple[object, ...]:
    """What :func:`page_drawing` reads of the graph but the nodes' titles: which nodes a page
    draws and where. Its labels read the titles of the nodes it draws, and no other."""
    return [_laid(n) for n in graph.nodes.values()], [(e.source, e.target, e.kind.value, e.weight) for e in graph.edges]


def layout_digest(graph: NoteGraph) -> str:
    """The digest of :func:`layout_reads`, made once a graph (20 ms at 5,000 notes); a graph
    patched with each node laid out as it was carries the last one's."""
    if graph.layout is None:
        object.__setattr__(graph, "layout", digest_of(layout_reads(graph)))  # a cache of the frozen graph's
    assert graph.layout is not None
    return graph.layout


def drawing_digest(drawing: Drawing) -> str:
    """sha256 of a drawing, the same in every process (its labelled nodes sorted: a set's
    order follows the process's string hashes)."""
    return digest_of((drawing.nodes, drawing.edges, drawing.positions, drawing.radius, sorted(drawing.labelled),
                      drawing.width, drawing.height, drawing.hidden, drawing.neighbours, drawing.sides, drawing.labels))


def shared_over(total: int) -> int:
    """The count a graph page shares its room out over, for ``total`` notes: rounded up to a
    multiple of a power of two near a 32nd of it (5,000 → 5,120, as 5,001). Each notebook
    draws its share of that room; shared over the exact total, a note added to one notebook
    takes a node from every other one whose share sat on a whole number (the bench corpus's
    four notebooks of 1,250 notes: 149 each, then 148), and each such disc is laid out again.
    A page draws at most 1/32 fewer nodes for it."""
    step = 1 << max(0, total.bit_length() - 6)
    return -(-total // step) * step


DiscLayout = Callable[[NoteGraph, str, list[str]], dict[str, tuple[float, float]]]
"""``lay_out(graph, centre, members)`` is :func:`disc_layout`'s, made however the caller likes
(a build recalls each disc's layout by what it is made from, :func:`disc_key`: its members and
their edges, not their titles, so a note retitled or added elsewhere lays no disc out again)."""


def page_drawing(graph: NoteGraph, notebook: str = "", width: int = 960, lay_out: DiscLayout | None = None) -> Drawing:
    """The graph of the site (every public notebook) or of one ``notebook``, laid out, each
    notebook a disc (laid out by ``lay_out``, :func:`disc_layout` by default)."""
    lay_out = disc_layout if lay_out is None else lay_out
    books = [k for k, n in graph.nodes.items() if n.kind is NodeKind.NOTEBOOK
             and (not notebook or n.notebook == notebook)]
    clusters: dict[str, list[str]] = {b: [] for b in books}
    for key, node in graph.nodes.items():
        if node.kind is NodeKind.NOTEBOOK:
            continue
        if notebook:
            if any(e.kind is EdgeKind.MEMBER and e.target == f"notebook:{notebook}" for e in graph.around.get(key, ())):
                clusters[f"notebook:{notebook}"].append(key)
        elif f"notebook:{node.notebook}" in clusters:
            clusters[f"notebook:{node.notebook}"].append(key)
    total = sum(len(v) for v in clusters.values())
    share = 1.0 if total <= MAX_DRAWN - len(books) else (MAX_DRAWN - len(books)) / shared_over(total)
    room = {b: max(1, math.floor(len(v) * share)) for b, v in clusters.items()}
    nodes: list[Node] = []
    positions: dict[str, tuple[float, float]] = {}
    drawn: set[str] = set()
    # the notebooks on a ring, each a disc with an area in proportion to its notes, the ring
    # wide enough that each disc's arc holds it and a gap
    sizes = {b: math.sqrt(max(1, len(v))) for b, v in clusters.items()}
    total_size = sum(sizes.values())
    gap = 1.0
    ring = max(((2 * sizes[b] + gap) * total_size / (2 * math.pi * sizes[b]) for b in books), default=0.0) \
        if len(books) > 1 else 0.0
    # the first notebook's disc centred on the left, the others clockwise (two side by side)
    angle = math.pi - (sizes[books[0]] / total_size * math.pi if len(books) > 1 else 0.0)
    unit = (width / 2 - 40) / (ring + max(sizes.values(), default=1.0)) if books else 1.0
    for book in books:
        share = sizes[book] / total_size * 2 * math.pi if len(books) > 1 else 0.0
        centre = (ring * math.cos(angle + share / 2), ring * math.sin(angle + share / 2))
        angle += share
        members, rest = _kept(graph, clusters[book], room[book])
        keys = [book, *members]
        for key, (x, y) in lay_out(graph, book, members).items():
            positions[key] = (centre[0] + x * sizes[book] * 0.92, centre[1] + y * sizes[book] * 0.92)
        nodes.append(graph.nodes[book])
        nodes += [graph.nodes[m] for m in members]
        drawn.update(keys)
        if rest:
            more = Node(f"more:{graph.nodes[book].notebook}", NodeKind.MORE, "", graph.nodes[book].path,
                        graph.nodes[book].notebook, count=len(rest))
            nodes.append(more)
            positions[more.key] = (centre[0], centre[1] + sizes[book] * 1.02)
            drawn.add(more.key)
    edges = sorted({e for key in drawn for e in graph.around.get(key, ())
                    if e.source in drawn and e.target in drawn and (not notebook or e.kind is not EdgeKind.MEMBER)})
    if notebook:  # every note is a member: its edge to the notebook says nothing here
        nodes = [n for n in nodes if n.kind is not NodeKind.NOTEBOOK]
        edges = [e for e in edges if e.kind is not EdgeKind.MEMBER]
    for node in nodes:
        if node.kind is NodeKind.MORE:
            edges.append(Edge(node.key, f"notebook:{node.notebook}", EdgeKind.MEMBER, node.count))
    shown = {n.key for n in nodes}
    edges = [e for e in edges if e.source in shown and e.target in shown]
    return _framed(nodes, edges, positions, graph, width, unit)


def _framed(nodes: list[Node], edges: list[Edge], positions: dict[str, tuple[float, float]], graph: NoteGraph,
            width: int, unit: float) -> Drawing:
    keys = {n.key for n in nodes}
    xs = [positions[k][0] for k in keys] or [0.0]
    ys = [positions[k][1] for k in keys] or [0.0]
    margin = 24.0
    scale = unit
    left, top = min(xs), min(ys)
    height = round((max(ys) - top) * scale + 2 * margin)
    width = round((max(xs) - left) * scale + 2 * margin)
    placed = {k: (round((positions[k][0] - left) * scale + margin, 1), round((positions[k][1] - top) * scale + margin, 1))
              for k in sorted(keys)}
    ranked = sorted((n for n in nodes if n.kind is not NodeKind.MORE),
                    key=lambda n: (n.kind is not NodeKind.NOTEBOOK, n.kind is NodeKind.NOTE, -graph.degree(n.key), n.key))
    radius = {n.key: _radius(n) for n in nodes}
    labels = short_labels({n.key: (n.notebook, n.title) for n in nodes if n.kind is not NodeKind.MORE})
    sides = _fitting(ranked, placed, radius, labels, MAX_LABELS)
    neighbours: dict[str, set[str]] = defaultdict(set)
    for edge in edges:
        neighbours[edge.source].add(edge.target)
        neighbours[edge.target].add(edge.source)
    for key, side in sides.items():  # a label past the right or bottom edge widens the drawing
        box = label_box(*placed[key], radius[key], labels[key], side)
        width, height = max(width, math.ceil(box[2] + 8)), max(height, math.ceil(box[3] + 8))
    return Drawing(tuple(nodes), tuple(sorted(edges)), placed, radius, frozenset(sides), max(width, 200),
                   max(height, 120), neighbours={k: tuple(sorted(v)) for k, v in sorted(neighbours.items())},
                   sides={k: v for k, v in sorted(sides.items()) if v}, labels=labels)


CHAR_WIDTH = 6.2
"""The width of a label's character at the graph's 11 px, in the drawing's units (an estimate)."""


SIDES = ("", "left", "above", "below")
"""Where a label may go, in the order tried: right of its node, left, above, below."""


def label_box(x: float, y: float, r: float, text: str, side: str = "") -> tuple[float, float, float, float]:
    """The box a node's label takes on ``side`` of it (as the SVG writes it): left, top, right, bottom."""
    w = CHAR_WIDTH * min(len(text), LABEL_CHARS)
    if side == "left":
        return x - r - 4 - w, y - 8, x - r - 2, y + 5
    if side == "above":
        return x - w / 2, y - r - 16, x + w / 2, y - r - 3
    if side == "below":
        return x - w / 2, y + r + 3, x + w / 2, y + r + 16
    return x + r + 2, y - 8, x + r + 4 + w, y + 5


_CELL: Final = 64.0
"""The side of a cell of :func:`_fitting`'s grid, in the drawing's units (px)."""


def _fitting(ranked: list[Node], placed: dict[str, tuple[float, float]], radius: dict[str, float],
             labels: Mapping[str, str], most: int) -> dict[str, str]:
    """The nodes whose label is written, and on which side: in rank order, each on the first
    side where it covers neither a label written before nor another node (labels only where
    they fit; a notebook's, a landmark, may cover nodes)."""
    boxes: list[tuple[float, float, float, float]] = []
    chosen: dict[str, str] = {}
    # the nodes by cell of a grid: a label is checked against the nodes of the cells it may
    # touch, not against every node (the same test on fewer: the same labels, at 1,000 nodes
    # 4 sides × 1,000² comparisons otherwise)
    reach = max(radius.values(), default=0.0)
    cells: dict[tuple[int, int], list[tuple[str, float, float]]] = defaultdict(list)
    for k, (px, py) in placed.items():
        cells[(math.floor(px / _CELL), math.floor(py / _CELL))].append((k, px, py))

    def covers_a_node(box: tuple[float, float, float, float], own: str) -> bool:
        for cx in range(math.floor((box[0] - reach) / _CELL), math.floor((box[2] + reach) / _CELL) + 1):
            for cy in range(math.floor((box[1] - reach) / _CELL), math.floor((box[3] + reach) / _CELL) + 1):
                for k, px, py in cells.get((cx, cy), ()):
                    if k != own and box[0] - radius[k] < px < box[2] + radius[k] \
                            and box[1] - radius[k] < py < box[3] + radius[k]:
                        return True
        return False

    for node in ranked:
        if len(chosen) == most:
            break
        x, y = placed[node.key]
        for side in SIDES:
            box = label_box(x, y, radius[node.key], labels[node.key], side)
            if box[0] < 0 or box[1] < 0:
                continue
            if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in boxes):
                continue
            if node.kind is not NodeKind.NOTEBOOK and covers_a_node(box, node.key):
                continue
            boxes.append(box)
            chosen[node.key] = side
            break
    return chosen


def local_neighbours(graph: NoteGraph, slug: str) -> tuple[tuple[Node, ...], tuple[Edge, ...], int] | None:
    """What a note's local graph shows: its node, then the neighbours it draws (ranked: cited,
    linked, fellow members; heavier first), the edges to them (sorted) and how many it leaves
    out (``None``: it has no neighbour but its notebooks, nothing worth drawing)."""
    key = f"note:{slug}"
    around = graph.around.get(key, ())
    others: dict[str, list[Edge]] = defaultdict(list)
    for edge in around:
        other = edge.target if edge.source == key else edge.source
        others[other].append(edge)
    if not any(graph.nodes[o].kind is not NodeKind.NOTEBOOK for o in others):
        return None
    order = {EdgeKind.CITES: 0, EdgeKind.LINKS: 1, EdgeKind.MEMBER: 2}
    ranked = sorted(others, key=lambda o: (min(order[e.kind] for e in others[o]), -sum(e.weight for e in others[o]),
                                           graph.nodes[o].title, o))
    shown = ranked[:LOCAL_NEIGHBOURS]
    return ((graph.nodes[key], *(graph.nodes[o] for o in shown)), tuple(sorted(e for o in shown for e in others[o])),
            max(len(ranked) - LOCAL_NEIGHBOURS, 0))


def local_drawing(graph: NoteGraph, slug: str, width: int = 560, height: int = 340) -> Drawing | None:
    """A note's neighbourhood at depth 1 (:func:`local_neighbours`) on a ring round it
    (``None``: nothing worth drawing)."""
    found = local_neighbours(graph, slug)
    if found is None:
        return None
    nodes, edges, hidden = found
    key, shown = nodes[0].key, [n.key for n in nodes[1:]]
    # on an ellipse round the note, the labels outward: right of the nodes on the right, left of
    # those on the left, the note's own below it
    cx, cy, rx, ry = width / 2, height / 2, width / 2 - 190, height / 2 - 30
    positions = {key: (round(cx, 1), round(cy, 1))}
    sides = {key: "below"}
    for index, other in enumerate(shown):
        angle = -math.pi / 2 + 2 * math.pi * index / len(shown)
        positions[other] = (round(cx + rx * math.cos(angle), 1), round(cy + ry * math.sin(angle), 1))
        if math.cos(angle) < -1e-9:
            sides[other] = "left"
    return Drawing(nodes, edges, positions, {n.key: _radius(n) for n in nodes}, frozenset(positions), width, height,
                   hidden, neighbours={key: tuple(sorted(shown)), **dict.fromkeys(sorted(shown), (key,))},
                   sides=sides, labels=short_labels({n.key: (n.notebook, n.title) for n in nodes}))
