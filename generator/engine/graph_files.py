"""The site's graph files (``graph.json``, ``graph.jsonld`` and the addresses' records), as a
build assembles them from the graph's parts (:mod:`generator.site.graph`): each part packed
(:class:`PackedPart`, what the build cache keeps), recalled by what it reads, assembled in
order, and — over the last build's files — spliced: only the parts that changed are written
again, the rest copied from the last build's bytes. The parts are made in worker processes
when there are many.
"""

from __future__ import annotations

import functools
import hashlib
import json
import mmap
import os
import pickle
from array import array
from bisect import bisect_left
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    pass  # imported where used (by `carnet context`): a build never loads it

from generator.digest import digest_of
from generator.engine.jobs import fork_map, workers_for
from generator.engine.memo import NO_MEMO, Kind, Memo
from generator.site.graph import (
    EncodedPart,
    article_part,
    encode_part,
    jsonld_context,
    jsonld_fields,
    node_iri,
    node_records,
    note_part,
    record_line,
    shared_part,
)
from generator.site.jsonout import ENCODER as _ENCODER
from generator.site.model import SiteModel


class Lines:
    """Many short encoded lines in one UTF-8 buffer, each read back by its index: a part's
    lines wait for every other part's, and a str each costs some 50 bytes more than its text.
    The buffer holds them joined by :data:`ITEM_JOIN`, as graph.json and graph.jsonld lay out
    their lists' items: a run of consecutive lines is published as one slice (:meth:`span`)."""

    __slots__ = ("data", "ends")

    def __init__(self, lines: Iterable[str]) -> None:
        encoded = [line.encode("utf-8") for line in lines]
        self.data = ITEM_JOIN.join(encoded)
        self.ends = array("Q", accumulate((len(line) + (len(ITEM_JOIN) if n else 0) for n, line in enumerate(encoded))))

    def __len__(self) -> int:
        return len(self.ends)

    def _start(self, index: int) -> int:
        return self.ends[index - 1] + len(ITEM_JOIN) if index else 0

    def __getitem__(self, index: int) -> bytes:
        return self.data[self._start(index):self.ends[index]]

    def span(self, start: int, stop: int) -> bytes:
        """Lines ``start`` to ``stop`` (excluded, ``stop`` > ``start``) joined by :data:`ITEM_JOIN`."""
        return self.data[self._start(start):self.ends[stop - 1]]

    def __eq__(self, other: object) -> bool:  # a recalled part is checked against one made again
        return isinstance(other, Lines) and (self.data, self.ends) == (other.data, other.ends)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking and compared by value, as a list is

    def __getstate__(self) -> tuple[bytes, bytes]:
        return self.data, self.ends.tobytes()  # plain bytes: an array unpickles through a slower path

    def __setstate__(self, state: tuple[bytes, bytes]) -> None:
        self.data = state[0]
        self.ends = array("Q")
        self.ends.frombytes(state[1])


ITEM_JOIN = b",\n  "
"""Between two items of a list in graph.json and graph.jsonld (one item a line, as
:func:`dumps_encoded` lays lists out)."""

RECORD_JOIN = ITEM_JOIN
"""Between two records of graph.jsonld's ``@graph``: a node's own lines are kept joined by it."""


@dataclass
class PackedPart:
    """A part of the graph as it waits for the others (:class:`_Assembly`): its published
    lines in :class:`Lines`, its defined nodes' keys sorted, and no per-node or per-edge
    object. What the assembly seldom needs (a node's fields, an edge's data) is read back
    from its line.

    Attributes:
        node_keys: the nodes the part defines, sorted.
        node_lines: their graph.json lines, in that order.
        edge_lines: the graph.json lines of the edges from those nodes, sorted by source,
            target and type; ``edge_starts[i]``: the first of node ``i``'s.
        foreign: the edges from nodes the part does not define, as ``(source, target,
            type, line, carries)`` (the site's part: a group's member is a note's
            extraction); ``carries``: the edge has data (a statement of its own).
        bare: the nodes its edges end at without its defining them.
        urls: the defined nodes' page addresses (their graph.jsonld ``@id``).
        records: a note's part: each defined node's graph.jsonld lines (joined by
            :data:`RECORD_JOIN`), in ``node_keys`` order; ``assumed``: the ``@id`` they
            took for each bare node (see :class:`EncodedPart`).
    """

    node_keys: list[str]
    node_lines: Lines
    edge_lines: Lines
    edge_starts: array[int]
    foreign: list[tuple[str, str, str, str, bool]]
    bare: list[str]
    urls: dict[str, str]
    records: Lines | None  # no defaults: a class attribute would hide a field not unpickled yet
    assumed: dict[str, str]

    def __reduce__(self) -> tuple[Callable[..., PackedPart], tuple[object, ...]]:
        # what the build reads of a recalled part (its nodes' keys and addresses, and what the
        # assembly's order reads: its bare ends and edges from other parts' nodes) apart from
        # its lines, pickled within: a CLI rebuild recalls every note's part and only graph.json's
        # child process reads the lines of the few an edit changed
        later = self.__dict__.get("_later") or pickle.dumps(tuple(getattr(self, name) for name in _LATER),
                                                            protocol=pickle.HIGHEST_PROTOCOL)
        return _unpickled_later, (self.node_keys, self.urls, later, self.foreign, self.bare)

    def __getattr__(self, name: str) -> Any:  # only for a field not in __dict__: one unpickled later
        if name not in _LATER or "_later" not in self.__dict__:  # any other name probed leaves them packed
            raise AttributeError(name)
        self.__dict__.update(zip(_LATER, pickle.loads(self.__dict__.pop("_later")), strict=True))
        return self.__dict__[name]

    def edges_of(self, index: int) -> range:
        """The indexes in ``edge_lines`` of node ``index``'s edges."""
        end = self.edge_starts[index + 1] if index + 1 < len(self.edge_starts) else len(self.edge_lines)
        return range(self.edge_starts[index], end)


_LATER = ("node_lines", "edge_lines", "edge_starts", "records", "assumed")
"""A :class:`PackedPart`'s fields unpickled when first read."""


def _unpickled_later(node_keys: list[str], urls: dict[str, str], later: bytes,
                     foreign: list[tuple[str, str, str, str, bool]], bare: list[str]) -> PackedPart:
    part = PackedPart.__new__(PackedPart)
    part.__dict__.update(node_keys=node_keys, urls=urls, _later=later, foreign=foreign, bare=bare)
    return part


def pack(encoded: EncodedPart) -> PackedPart:
    keys = sorted(encoded.nodes)
    defined = set(keys)
    own = sorted(edge for edge in encoded.edges if edge[0] in defined)
    starts, position = array("Q"), 0
    for key in keys:  # both sorted by the source: each node's edges are one run
        starts.append(position)
        while position < len(own) and own[position][0] == key:
            position += 1
    return PackedPart(
        node_keys=keys, node_lines=Lines(encoded.nodes[key] for key in keys),
        edge_lines=Lines(encoded.edges[edge] for edge in own), edge_starts=starts,
        foreign=[(*edge, encoded.edges[edge], bool(encoded.links[edge])) for edge in sorted(encoded.edges)
                 if edge[0] not in defined],
        bare=sorted(encoded.bare), urls={key: f["url"] for key, f in encoded.jsonld.items() if "url" in f},
        records=Lines(RECORD_JOIN.decode().join(encoded.records[key]) for key in keys) if encoded.records else None,
        assumed=encoded.assumed)


NotePart = PackedPart
"""A note's part of the graph, packed."""


def part_digest(part: PackedPart) -> str:
    """sha256 of what a part publishes, whatever order its mappings were filled in (a part
    made in another process, with another string hash seed, fills them in another order)."""
    def lines(value: Lines | None) -> tuple[bytes, bytes] | None:
        return None if value is None else (value.data, value.ends.tobytes())

    return digest_of((part.node_keys, lines(part.node_lines), lines(part.edge_lines), part.edge_starts.tobytes(),
                      sorted(part.foreign), part.bare, sorted(part.urls.items()), lines(part.records),
                      sorted(part.assumed.items())))


def encoded_note_part(site: SiteModel, slug: str) -> NotePart:
    return pack(encode_part(site, note_part(site, slug), records=True))


def _encoded_article_part(site: SiteModel, slug: str, known: Container[str], urls: Mapping[str, str]) -> PackedPart:
    """An article's part, each node outside it taking the address the last part defining
    it gives it (``urls``), as the assembly will."""
    return pack(encode_part(site, article_part(site, slug, known), records=True, pages=urls.get))


def _article_part_key(base_url: str, article_key: Callable[[str], str], slug: str) -> str:
    # what the part reads beyond the article's reads: the site's address (its nodes' @id)
    return digest_of(("graph-article", base_url, slug, article_key(slug)))


def _named(part: PackedPart) -> list[str]:
    """The nodes a part defines but its elements (most of the graph), found once per part: a
    rebuild in the process of the last build takes most notes' parts from it, the same objects
    (kept beside the fields, never pickled: :meth:`PackedPart.__reduce__` names what is)."""
    named: list[str] | None = part.__dict__.get("_named")
    if named is None:
        named = part.__dict__["_named"] = [key for key in part.node_keys if not key.startswith("element:")]
    return named


def _made(taken: list[tuple[PackedPart, str]], make: Callable[[], PackedPart]) -> tuple[PackedPart, str]:
    """A part made (not recalled), with its digest, noted in ``taken``."""
    part = make()
    taken.append((part, part_digest(part)))
    return taken[0]


_DECODE = json.JSONDecoder().decode
"""A line read back as JSON (``json.loads`` would first guess the encoding of its bytes: a
third of the time on the 300,000 edges an evidence-heavy site reads back)."""


def _edge_fields(line: bytes | str) -> tuple[str, str, dict[str, Any]]:
    """An edge's target, type and data, read back from its graph.json line."""
    data = _DECODE(line if isinstance(line, str) else line.decode("utf-8"))
    return data.pop("target"), data.pop("type"), {k: v for k, v in data.items() if k != "source"}


class _Assembly:
    """Every part's nodes and edges in the published order, found once for both files:
    each defined node's key sorted, with the part whose definition wins (the last, as a
    dict updated part by part would keep) and, for the odd node defined twice, every part
    that defines it; the bare ends no part defines; the edges from other parts' nodes."""

    def __init__(self, base_url: str, parts: list[PackedPart]) -> None:
        self.base_url, self.parts = base_url, parts
        keys: list[str] = []
        where = array("Q")
        for number, part in enumerate(parts):
            keys += part.node_keys
            where.extend(range(number << 32, (number << 32) + len(part.node_keys)))
        order = sorted(range(len(keys)), key=keys.__getitem__)  # stable: the later part last among equals
        self.keys: list[str] = []
        self.winner = array("Q")
        self.every: dict[int, list[int]] = {}  # position → each (part, index) defining it, when more than one
        if len(set(keys)) == len(keys):  # each node defined once (most sites): no loop over 300,000 keys
            self.keys = [keys[n] for n in order]
            self.winner = array("Q", [where[n] for n in order])
        else:
            for n in order:
                key = keys[n]
                if self.keys and self.keys[-1] == key:
                    self.every.setdefault(len(self.keys) - 1, [self.winner[-1]]).append(where[n])
                    self.winner[-1] = where[n]
                else:
                    self.keys.append(key)
                    self.winner.append(where[n])
        del keys, where, order
        self.foreign: dict[str, list[tuple[str, str, int, str]]] = {}  # source → (target, type, part, line)
        self.carrying: set[str] = set()  # the sources of those with data
        bare: set[str] = set()
        for number, part in enumerate(parts):
            bare.update(part.bare)
            for source, target, kind, line, carries in part.foreign:
                self.foreign.setdefault(source, []).append((target, kind, number, line))
                if carries:
                    self.carrying.add(source)
        self.ends = bare  # every part's bare ends, some defined by another part
        self.bare = sorted(key for key in bare if self.position(key) is None)
        self._iris: dict[str, str] = {}

    @classmethod
    def patched(cls, last: _Assembly | None, base_url: str, parts: list[PackedPart]) -> _Assembly:
        """The assembly of ``parts``, patched from ``last`` (the last build's, in ``carnet
        serve``; made whole, 0.7 s at 5,000 notes with wikis): a part that is not the one it had
        in its place must add the same edges to other parts' nodes and end at the same bare
        nodes; the nodes it defines may differ (a paragraph added or rewritten is a node), each
        node being defined by one part alone. Else made whole."""
        if last is None or last.base_url != base_url or len(last.parts) != len(parts) or last.every:
            return cls(base_url, parts)
        moved: list[int] = []  # the parts that define other nodes than they did
        for number, (new, old) in enumerate(zip(parts, last.parts, strict=True)):
            if new is old:
                continue
            if new.foreign != old.foreign or new.bare != old.bare:
                return cls(base_url, parts)
            if new.node_keys != old.node_keys:
                moved.append(number)
        keys, winner = last.keys, last.winner
        gone: list[str] = []  # nodes no part defines now: bare ends where an edge ends at one
        came: list[str] = []  # nodes a part defines now: bare ends no longer
        if moved:
            keys, winner = list(keys), array("Q", winner)
            for number in moved:
                before, after = set(last.parts[number].node_keys), parts[number].node_keys
                for key in before.difference(after):
                    at = bisect_left(keys, key)
                    del keys[at], winner[at]
                    gone.append(key)
                for index, key in enumerate(after):
                    at = bisect_left(keys, key)
                    if key not in before:
                        if at < len(keys) and keys[at] == key:  # defined by another part too
                            return cls(base_url, parts)
                        keys.insert(at, key)
                        winner.insert(at, 0)
                        came.append(key)
                    winner[at] = (number << 32) | index
        made = cls.__new__(cls)
        made.base_url, made.parts = base_url, parts
        made.keys, made.winner, made.every = keys, winner, {}
        made.foreign, made.carrying, made.ends = last.foreign, last.carrying, last.ends
        made.bare = last.bare
        ended = {key for key in gone if key in made.ends} - set(came)  # (a node may move from part to part)
        if ended or any(key in made.ends for key in came):
            made.bare = sorted((set(last.bare) - set(came)) | ended)
        made._iris = {}  # an address is its winning part's: made again
        if "laid" in last.__dict__ and not moved:  # made of the order alone
            made.__dict__["laid"] = last.__dict__["laid"]
        return made

    def order(self) -> tuple[object, ...]:
        """What :meth:`patched` carries, to compare a patched assembly with one made whole."""
        return self.keys, self.winner, self.every, self.foreign, self.carrying, self.ends, self.bare, self.laid

    def position(self, key: str) -> int | None:
        at = bisect_left(self.keys, key)
        return at if at < len(self.keys) and self.keys[at] == key else None

    def part(self, where: int) -> tuple[PackedPart, int]:
        return self.parts[where >> 32], where & 0xFFFFFFFF

    def url(self, key: str) -> str | None:
        at = self.position(key)
        if at is None:
            return None
        part, _ = self.part(self.winner[at])
        return part.urls.get(key)

    def iri(self, key: str) -> str:
        try:  # most asked again and again (a group's members, a note's elements)
            return self._iris[key]
        except KeyError:
            url = self.url(key)
            self._iris[key] = node_iri(self.base_url, key, {"url": url} if url else None)
            return self._iris[key]

    def node_line(self, key: str, at: int | None) -> bytes:
        if at is None:
            return _ENCODER.encode({"id": key}).encode("utf-8")
        part, index = self.part(self.winner[at])
        return part.node_lines[index]

    def fields(self, key: str, at: int | None) -> dict[str, str]:
        """A defined node's graph.jsonld fields, read back from its graph.json line."""
        if at is None:
            return {}
        data = _DECODE(self.node_line(key, at).decode("utf-8"))
        data.pop("id")
        return jsonld_fields(key, data)

    def _runs(self, key: str, at: int | None) -> tuple[list[tuple[int, range]], list[tuple[str, str, int, str]]]:
        """Where the node's edges are: each defining part's run (in part order), and the
        other parts' edges from it."""
        runs = []
        for where in (self.every.get(at, [self.winner[at]]) if at is not None else []):
            part, index = self.part(where)
            run = part.edges_of(index)
            if run:
                runs.append((where >> 32, run))
        return runs, self.foreign.get(key, [])

    def edge_lines(self, key: str, at: int | None) -> list[bytes]:
        """The node's edges' graph.json lines, sorted by target and type: one run as it is."""
        runs, foreign = self._runs(key, at)
        if not foreign and len(runs) <= 1:
            return [self.parts[runs[0][0]].edge_lines[i] for i in runs[0][1]] if runs else []
        return [line for _target, _kind, line in self._merged(runs, foreign)]

    def edge_triples(self, key: str, at: int | None) -> list[tuple[str, str, dict[str, Any], bytes]]:
        """The node's edges as ``(target, type, data, line)``, sorted by target and type."""
        return [(target, kind, _edge_fields(line)[2], line) for target, kind, line in self._merged(*self._runs(key, at))]

    def _merged(self, runs: list[tuple[int, range]], foreign: list[tuple[str, str, int, str]]
                ) -> list[tuple[str, str, bytes]]:
        # as a dict updated part by part: an edge two parts make is the later one's; only the
        # defining parts' lines are read back (another part's say their target and type)
        made: list[tuple[int, str, str, bytes]] = []
        for number, run in runs:
            for i in run:
                line = self.parts[number].edge_lines[i]
                target, kind, _data = _edge_fields(line)
                made.append((number, target, kind, line))
        made += [(number, target, kind, line.encode("utf-8")) for target, kind, number, line in foreign]
        merged: dict[tuple[str, str], bytes] = {}
        for _number, target, kind, line in sorted(made, key=lambda item: item[0]):
            merged[(target, kind)] = line
        return [(target, kind, line) for (target, kind), line in sorted(merged.items())]

    def segments(self) -> Iterator[tuple[str, int | None, int]]:
        """Every node in order, as ``(key, position, count)``: a run of ``count`` defined nodes
        from ``position`` on that one part alone defines, one after the other in it, with no
        edge from another part (a note's elements: their lines are published as slices of
        the part's); or, with ``count`` 0, one node to publish on its own (a bare end, a
        node defined twice, one with edges from another part)."""
        keys, winner, every, foreign, bare = self.keys, self.winner, self.every, self.foreign, self.bare
        b, at = 0, 0
        limit = bisect_left(keys, bare[0]) if bare else len(keys)  # a run stops before the next bare end
        while at < len(keys):
            while at == limit:
                yield bare[b], None, 0
                b += 1
                limit = bisect_left(keys, bare[b]) if b < len(bare) else len(keys)
            key = keys[at]
            if at in every or key in foreign:
                yield key, at, 0
                at += 1
                continue
            stop = at + 1
            while stop < limit and winner[stop] == winner[stop - 1] + 1 and stop not in every \
                    and keys[stop] not in foreign:
                stop += 1
            yield key, at, stop - at
            at = stop
        for key in bare[b:]:
            yield key, None, 0

    @functools.cached_property
    def laid(self) -> list[tuple[str, int | None, int]]:
        """:meth:`segments`, listed once: each file reads them, and a splice signs them."""
        return list(self.segments())

    @functools.cached_property
    def holds(self) -> list[bool]:
        """Per part: its records hold as they are (every ``@id`` it assumed is the node's)."""
        return [self.part_holds(part) for part in self.parts]

    def part_holds(self, part: PackedPart) -> bool:
        return part.records is not None and all(self.iri(key) == iri for key, iri in part.assumed.items())

    def node_item(self, segment: int) -> bytes:
        """The segment's graph.json node lines (joined by :data:`ITEM_JOIN`)."""
        key, at, count = self.laid[segment]
        if count:
            assert at is not None
            part, index = self.part(self.winner[at])
            return part.node_lines.span(index, index + count)
        return self.node_line(key, at)

    def edge_item(self, segment: int) -> bytes:
        """The segment's nodes' graph.json edge lines (joined; empty: none)."""
        key, at, count = self.laid[segment]
        if count:
            assert at is not None
            part, index = self.part(self.winner[at])
            start, stop = part.edges_of(index).start, part.edges_of(index + count - 1).stop
            return part.edge_lines.span(start, stop) if stop > start else b""
        return ITEM_JOIN.join(self.edge_lines(key, at))

    def record_item(self, segment: int) -> bytes:
        """The segment's graph.jsonld records (see :meth:`records`)."""
        key, at, count = self.laid[segment]
        if not count:
            return self._record(key, at, self.holds)
        assert at is not None
        number, index = self.winner[at] >> 32, self.winner[at] & 0xFFFFFFFF
        records = self.parts[number].records
        if self.holds[number] and records is not None:
            return records.span(index, index + count)
        return RECORD_JOIN.join(self._record(self.keys[position], position, self.holds)
                                for position in range(at, at + count))

    def node_link(self, splice: _Splice | None = None) -> Iterator[bytes]:
        """graph.json, as :func:`dumps_encoded` lays it out, in chunks (``splice``: what is
        as the last build wrote it copied from its file)."""
        writer = _Writer(splice, "graph.json")
        yield writer.raw(b'{\n "directed": true,\n "links": ')
        yield from writer.items("links", len(self.laid), self.edge_item)
        yield writer.raw(b',\n "multigraph": true,\n "nodes": ')
        yield from writer.items("nodes", len(self.laid), self.node_item)
        yield writer.raw(b"\n}\n")
        writer.finish()

    def jsonld(self, splice: _Splice | None = None) -> Iterator[bytes]:
        """graph.jsonld, in chunks (``splice`` as for :meth:`node_link`)."""
        writer = _Writer(splice, "graph.jsonld")
        yield writer.raw(b'{\n "@context": ' + _ENCODER.encode(jsonld_context(self.base_url)).encode("utf-8")
                         + b',\n "@graph": ')
        yield from writer.items("records", len(self.laid), self.record_item)
        yield writer.raw(b"\n}\n")
        writer.finish()

    def records(self) -> Iterator[bytes]:
        """graph.jsonld's ``@graph`` items: every node by id (the defined ones and the bare
        edge ends), each followed by its statements. A note part's own records are taken as
        they are where they hold: the node is defined in that part only and every ``@id``
        the part assumed is the node's. A node another part adds edges from (a group
        membership, say) has its record made again with every edge; its statements are the
        part's own unless an added edge carries data too (then all its lines are made again)."""
        for segment in range(len(self.laid)):
            yield self.record_item(segment)

    def signatures(self, digests: list[str]) -> list[tuple[object, ...]]:
        """Per segment, what its lines in the three lists are made from (``digests``: each
        part's :func:`part_digest`): a segment of two builds with the same signature, over
        the same :meth:`addresses`, has the same bytes in each file."""
        signed: list[tuple[object, ...]] = []
        every, carrying, holds, winner, foreigners = self.every, self.carrying, self.holds, self.winner, self.foreign
        for key, at, count in self.laid:
            entries = foreigners.get(key)
            foreign = tuple([digests[entry[2]] for entry in entries]) if entries else ()
            if at is None:
                signed.append(("bare", key, foreign))
                continue
            number, index = winner[at] >> 32, winner[at] & 0xFFFFFFFF
            if count:
                signed.append(("run", key, count, digests[number], index, holds[number]))
                continue
            definers = ((digests[number], index),) if at not in every else \
                tuple((digests[where >> 32], where & 0xFFFFFFFF) for where in every[at])
            signed.append(("one", key, definers, foreign, key in carrying, holds[number]))
        return signed

    def addresses(self) -> str:
        """Digest of every ``@id`` the files can take: the site's address and each defined
        node's page (the winning definition's), from which :meth:`iri` derives them all."""
        urls: dict[str, str] = {}
        for part in self.parts:
            urls.update(part.urls)
        for at in self.every:  # the last definition wins, with or without a page
            key = self.keys[at]
            part, _ = self.part(self.winner[at])
            if key in part.urls:
                urls[key] = part.urls[key]
            else:
                urls.pop(key, None)
        return digest_of((self.base_url, sorted(urls.items())))

    def _record(self, key: str, at: int | None, holds: list[bool]) -> bytes:
        """One node's graph.jsonld lines (see :meth:`records`)."""
        if at is not None and at not in self.every and holds[self.winner[at] >> 32]:
            part, index = self.part(self.winner[at])
            assert part.records is not None
            entry = part.records[index]
            foreign = self.foreign.get(key)
            if not foreign:
                return entry
            if key not in self.carrying:  # edges from it in other parts, none with data: its statements kept
                record = self._with_foreign(entry, foreign)
                if record is not None:
                    return record
                # a type its own edges have too: its record made again with them all
                own = {(target, kind) for target, kind, _data in map(_edge_fields, map(part.edge_lines.__getitem__,
                                                                                      part.edges_of(index)))}
                added = {(target, kind) for target, kind, _number, _line in foreign}
                every = [(key, target, kind) for target, kind in sorted(own | added)]
                made = record_line(key, self.fields(key, at), every, self.iri).encode("utf-8")
                return RECORD_JOIN.join([made, *entry.split(RECORD_JOIN)[1:]])
        # a statement to place among the node's own, a node defined twice, a bare end,
        # the site's part: every line made from the whole graph
        links = {(key, target, kind): data for target, kind, data, _line in self.edge_triples(key, at)}
        lines = node_records(self.base_url, [key], {key: self.fields(key, at)}, links, self.iri)[key]
        return RECORD_JOIN.join(line.encode("utf-8") for line in lines)

    def _with_foreign(self, entry: bytes, foreign: list[tuple[str, str, int, str]]) -> bytes | None:
        """A note part's record with other parts' edges from its node, none with data, added
        as properties of types its own edges do not have (an extraction's groups and the
        articles that discarded it: 50,000 records at 5,000 notes with evidence), its own
        lines kept; ``None`` when a type is in both (the targets' order interleaves them)."""
        head, join, statements = entry.partition(RECORD_JOIN)
        record = _DECODE(head.decode("utf-8"))
        targets: dict[str, set[str]] = {}
        for target, kind, _number, _line in foreign:
            targets.setdefault(kind, set()).add(target)
        if not targets.keys().isdisjoint(record):
            return None
        for kind, ends in targets.items():
            record[kind] = [self.iri(target) for target in sorted(ends)]
        return _ENCODER.encode(record).encode("utf-8") + join + statements


def _items(lines: Iterable[bytes]) -> Iterator[bytes]:
    """A list of encoded items as :func:`dumps_encoded` lays it out (:meth:`_Writer.items`)."""
    listed = list(lines)
    yield from _Writer(None, "").items("", len(listed), listed.__getitem__)


@dataclass
class ListLayout:
    """Where one list's items lie in its file: each segment's bytes from ``base + starts[i]``
    to ``base + ends[i]`` (equal: the segment has none in this list)."""

    base: int
    starts: array[int]
    ends: array[int]


@dataclass
class GraphLayout:
    """How one build laid graph.json and graph.jsonld out, for the next to splice them:
    copy every segment whose :meth:`_Assembly.signatures` is as it was from the file this
    build wrote, and make only the others (an edit changes a few of 200,000 segments).

    Attributes:
        addresses: :meth:`_Assembly.addresses` (another: nothing is spliced).
        signatures: each segment's signature, in order.
        lists: ``links`` and ``nodes`` (graph.json), ``records`` (graph.jsonld).
        holds: part digest → :attr:`_Assembly.holds` of that part (the same over the same
            addresses: not asked again of the parts an edit left as they were).
    """

    addresses: str
    signatures: list[tuple[object, ...]]
    lists: dict[str, ListLayout]
    holds: dict[str, bool]


@dataclass
class Splicing:
    """A build's graph files made by splicing: ``last``, the last build's layout, with
    ``files`` (path → where its file is, as it wrote it); ``laid_out`` (path → where to
    write what this build lays out of that file, for :func:`read_layout`); ``check``: a
    spliced file is made whole again and compared (:class:`StaleSplice`)."""

    last: GraphLayout | None
    files: dict[str, str]
    laid_out: dict[str, str]
    check: bool = False


@dataclass
class _Splice:
    """One file's splice, as its writer sees it: ``index[i]``, the last build's number of
    segment ``i`` (-1: made anew); ``old``, that build's file; ``signed``, this build's
    layout but its lists, for the writer that writes it with its own."""

    index: array[int] | None
    lists: dict[str, ListLayout]
    old: str | None
    laid_out: str | None
    signed: GraphLayout | None


class _Writer:
    """Writes one graph file's lists item by item, copying runs of segments that are as
    the last build wrote them (one slice of its file each) and noting where each segment
    lands, for the next build."""

    def __init__(self, splice: _Splice | None, path: str) -> None:
        self.splice, self.path = splice, path
        self.position = 0
        self.lists: dict[str, ListLayout] = {}
        self._old: mmap.mmap | None = None  # the last build's file, read where a run is copied
        if splice is not None and splice.index is not None and splice.old is not None:
            with open(splice.old, "rb") as stream:
                if os.fstat(stream.fileno()).st_size:
                    self._old = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)

    def raw(self, data: bytes) -> bytes:
        self.position += len(data)
        return data

    def items(self, name: str, count: int, make: Callable[[int], bytes]) -> Iterator[bytes]:
        """A list as :func:`dumps_encoded` lays it out, segment by segment (``make``: one's
        bytes, several items already joined by :data:`ITEM_JOIN`; empty: none), in chunks of
        ~64 KB or a run copied whole."""
        splice, old = self.splice, self._old
        last = splice.lists.get(name) if splice is not None and old is not None else None
        index = splice.index if splice is not None and last is not None else None
        starts, ends = array("Q", bytes(8 * count)), array("Q", bytes(8 * count))
        base = self.position + len(b"[\n  ")
        join = len(ITEM_JOIN)
        out: list[bytes] = []
        first, at, waiting = True, 0, 0  # no item yet; where the last one ends, from base; bytes in out

        def put(piece: bytes) -> int:
            """An item (or a run of them) added; where it begins, from ``base``."""
            nonlocal first, at, waiting
            begin = at + (0 if first else join)
            out.append(b"[\n  " if first else ITEM_JOIN)
            out.append(piece)  # not joined to its separator: a run copied may weigh 100 MB
            first, at, waiting = False, begin + len(piece), waiting + len(piece)
            return begin

        span_start = span_end = -1  # a run of the last build's items, from its list's base
        shift = 0
        for segment in range(count):
            if waiting > 1 << 16:
                yield from self._joined(out)
                out.clear()
                waiting = 0
            was = index[segment] if index is not None else -1
            if was >= 0:
                assert last is not None and old is not None
                start, end = last.starts[was], last.ends[was]
                if start == end:
                    continue
                if span_start < 0 or start != span_end + join:  # not the next item of the run
                    if span_start >= 0:
                        put(old[last.base + span_start:last.base + span_end])
                    span_start = start
                    shift = at + (0 if first else join) - start
                span_end = end
                starts[segment], ends[segment] = start + shift, end + shift
                continue
            data = make(segment)
            if not data:
                continue
            if span_start >= 0:
                assert last is not None and old is not None
                put(old[last.base + span_start:last.base + span_end])
                span_start = -1
            begin = put(data)
            starts[segment], ends[segment] = begin, begin + len(data)
        if span_start >= 0:
            assert last is not None and old is not None
            put(old[last.base + span_start:last.base + span_end])
        self.lists[name] = ListLayout(base, starts, ends)
        if first:
            yield self.raw(b"[]")
            return
        out.append(b"\n ]")
        yield from self._joined(out)

    def _joined(self, pieces: list[bytes]) -> Iterator[bytes]:
        """The pieces as chunks: the small ones joined, a large one (a run copied) as it is."""
        small: list[bytes] = []
        for piece in pieces:
            if len(piece) <= 1 << 16:
                small.append(piece)
                continue
            if small:
                yield self.raw(b"".join(small))
                small = []
            yield self.raw(piece)
        if small:
            yield self.raw(b"".join(small))

    def finish(self) -> None:
        """The file written: the last one closed, what this one laid out written for the next
        build (see :class:`Splicing`)."""
        if self._old is not None:
            self._old.close()
            self._old = None
        splice = self.splice
        if splice is None or splice.laid_out is None:
            return
        laid = splice.signed or GraphLayout("", [], {}, {})
        laid.lists.update(self.lists)
        with open(splice.laid_out, "wb") as stream:
            pickle.dump(laid, stream, protocol=pickle.HIGHEST_PROTOCOL)


@runtime_checkable
class AssemblyKeeper(Protocol):
    """What keeps the graph's assembly from one build to the next (a resident
    :class:`~generator.engine.cache.BuildCache`)."""

    resident: bool
    assembly_kept: _Assembly | None


@dataclass
class GraphFiles:
    """graph.json and graph.jsonld as a build adds them.

    Attributes:
        key: digest of every part they are made from, in order (equal keys, equal files).
        streams: path → its chunks, assembled only when read (a rebuild that keeps the
            last build's files never sorts the graph).
        prepare: makes what both streams read (the assembly), once.
        ahead: what to make in this process before the streams' child is forked (the
            assembly, that a keeper keeps), when they are to be written; ``None``: nothing.
    """

    key: str
    streams: dict[str, Iterator[bytes]]
    prepare: Callable[[], object]
    ahead: Callable[[], object] | None = None


def graph_outputs(site: SiteModel, memo: Memo = NO_MEMO, made: Mapping[str, NotePart] | None = None,
                  digests: Mapping[str, str] | None = None, article_key: Callable[[str], str] | None = None,
                  check: Callable[[str, object, object], None] | None = None, jobs: int = 1,
                  splicing: Splicing | None = None, keeper: AssemblyKeeper | None = None) -> GraphFiles:
    """graph.json and graph.jsonld, in chunks (the graph of a large site weighs hundreds of
    MB: never one string), from each note's packed part (``made``: note → its part, made
    already by a worker process; ``digests``: note → its part's :func:`digest_of`, when
    known), the shared part and each article's. With ``article_key`` (article → digest of
    what its part reads, :func:`generator.engine.reads.article_digest`), an article's part is
    recalled from ``memo`` by it; ``check`` (article, recalled, made) is given each
    recalled part with the part made again, to refuse a stale one. ``jobs``: worker processes
    for the articles' parts to make (a wiki's part is heavy: its groups). With ``splicing``,
    what is as the last build wrote it is copied from its files (:class:`GraphLayout`). With
    ``keeper`` (``carnet serve``'s resident cache), the parts' assembly is made here, before the
    child process that writes the files is forked, from the last build's when it can
    (:meth:`_Assembly.patched`), and kept for the next."""
    parts: list[PackedPart] = []
    keys: list[str] = []
    known: set[str] = set()  # what the site's part asks about: notes, extractions, comments
    made, digests = made or {}, digests or {}
    for slug in site.publication.notes:
        def make(slug: str = slug) -> NotePart:
            return made[slug] if slug in made else encoded_note_part(site, slug)

        def key(slug: str = slug) -> str:  # a note's part depends on that note, its anchors and the site's address
            anchored = site.anchored[slug]
            return digest_of((slug, site.publication.notes[slug], site.base_url,
                              [(e.id, e.kind) for e in anchored.document.elements], sorted(anchored.anchors.items())))

        part = made[slug] if slug in made else memo.memo(Kind.GRAPH, key, make)
        parts.append(part)
        keys.append(digests[slug] if slug in digests else part_digest(part))
        known.update(_named(part))
    # the shared and the articles' parts encoded with their records too (a wiki's groups: most nodes of
    # a site with wikis), each node they point to taking the address the last part defining it gives it,
    # as the assembly will
    urls: dict[str, str] = {}
    for part in parts:
        urls.update(part.urls)
    parts.append(pack(encode_part(site, shared_part(site), records=True, pages=urls.get)))
    keys.append(part_digest(parts[-1]))
    article_made = functools.partial(_encoded_article_part, site, known=known, urls=urls)

    # each key made once: asked whether the memo holds it, then to recall or store
    keyed = {slug: functools.cache(functools.partial(_article_part_key, site.base_url, article_key, slug))
             for slug in site.articles} if article_key is not None else {}
    todo = [slug for slug in site.articles  # in workers when there are enough
            if slug not in keyed or not memo.holds(Kind.GRAPH_ARTICLE, keyed[slug])]
    ahead = dict(zip(todo, fork_map(article_made, todo, jobs, worth=1), strict=True)) \
        if workers_for(len(todo), jobs, worth=1) > 1 else {}
    for slug in site.articles:  # most of the nodes of a site with wikis: their groups
        make = functools.partial(ahead.__getitem__ if slug in ahead else article_made, slug)
        if article_key is None:
            parts.append(make())
            keys.append(part_digest(parts[-1]))
            continue
        key = keyed[slug]
        taken: list[tuple[PackedPart, str]] = []
        # with its digest: the files are kept when every part is as it was, though what it read changed
        part, digest = memo.memo(Kind.GRAPH_ARTICLE, key, functools.partial(_made, taken, make))
        parts.append(part)
        keys.append(digest)
        if check is not None and not taken:
            check(slug, part, make())
    del known

    @functools.cache
    def assembly() -> _Assembly:
        if keeper is None:
            return _Assembly(site.base_url, parts)
        last = keeper.assembly_kept
        made = _Assembly.patched(last, site.base_url, parts)
        if check is not None and last is not None and made.order() != _Assembly(site.base_url, parts).order():
            raise StaleSplice("the graph's assembly patched from the last build's differs from the one made whole: "
                              "generator/engine/graph_files.py:_Assembly.patched carried what an edit changed")
        keeper.assembly_kept = made
        return made

    @functools.cache
    def signed() -> tuple[array[int] | None, str, list[tuple[object, ...]], dict[str, bool]]:
        # each segment's signature, and its number in the last build's files (-1: made anew)
        made = assembly()
        addresses = made.addresses()
        last = splicing.last if splicing is not None else None
        if last is not None and last.addresses == addresses:  # a part as it was holds as it did
            made.holds = [last.holds[digest] if digest in last.holds else made.part_holds(part)
                          for part, digest in zip(parts, keys, strict=True)]
        signatures = made.signatures(keys)
        holds = dict(zip(keys, made.holds, strict=True))
        if last is None or last.addresses != addresses:
            return None, addresses, signatures, holds
        where = {signature: number for number, signature in enumerate(last.signatures)}
        return array("q", [where.get(signature, -1) for signature in signatures]), addresses, signatures, holds

    def prepare() -> object:
        return signed() if splicing is not None else assembly()

    def splice(path: str, signs: bool) -> _Splice | None:
        if splicing is None:
            return None
        index, addresses, signatures, holds = signed()
        return _Splice(index, splicing.last.lists if splicing.last is not None else {}, splicing.files.get(path),
                       splicing.laid_out.get(path), GraphLayout(addresses, signatures, {}, holds) if signs else None)

    def checked(path: str, chunks: Iterator[bytes], whole: Callable[[], Iterator[bytes]]) -> Iterator[bytes]:
        # with the engine's read check on, a spliced file is made whole again and compared
        if splicing is None or not splicing.check or signed()[0] is None:
            yield from chunks
            return
        spliced = hashlib.sha256()
        for chunk in chunks:
            spliced.update(chunk)
            yield chunk
        again = hashlib.sha256()
        for chunk in whole():
            again.update(chunk)
        if spliced.digest() != again.digest():
            raise StaleSplice(f"{path} spliced from the last build's differs from the one made whole: a segment's "
                              "signature misses what it is made from (generator/site/graph.py:_Assembly.signatures)")

    def node_link() -> Iterator[bytes]:
        yield from checked("graph.json", assembly().node_link(splice("graph.json", True)), assembly().node_link)

    def jsonld() -> Iterator[bytes]:
        yield from checked("graph.jsonld", assembly().jsonld(splice("graph.jsonld", False)), assembly().jsonld)

    def assembled() -> object:  # made here (or carried): the child forked next has it, and the next build
        return assembly().laid

    return GraphFiles(digest_of((site.base_url, keys)), {"graph.json": node_link(), "graph.jsonld": jsonld()}, prepare,
                      assembled if keeper is not None else None)


class StaleSplice(AssertionError):
    """A graph file spliced from the last build's differs from the one made whole (a bug of
    Carnet's, found by a test with the engine's read check on)."""


def read_layout(splicing: Splicing) -> GraphLayout | None:
    """What the writers of this build's graph files laid out (:class:`Splicing`), read back
    once they are written; ``None`` when one is missing."""
    layouts: list[GraphLayout] = []
    for path in sorted(splicing.laid_out.values()):
        try:
            with open(path, "rb") as stream:
                layouts.append(pickle.load(stream))
        except FileNotFoundError:
            return None
    signed = [layout for layout in layouts if layout.signatures]
    if len(signed) != 1:
        return None
    for layout in layouts:
        signed[0].lists.update(layout.lists)
    return signed[0]
