"""How ``carnet propose --provider llm`` spreads a wiki's uncited evidence over requests
(pure: data in, data out).

The unit is a group of the selection (INV-10): a group is sent whole, in one request,
with its cited members by their first line so the model sees what the article already
says. A group too large for one request is cut along its spanning tree: its tree edges are
taken shortest first and a join is kept only while the part it makes still fits, so each
part is a connected piece of the group (its closest members stay together), and the cut
is said. Units are packed into requests in the order of their most debated uncited member,
never reordered, so the first request holds the evidence a person would read first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from generator.selection.groups import Group


@dataclass(frozen=True)
class Unit:
    """What one request holds of one group.

    Attributes:
        group: the group's number in the selection (1-based).
        members: the members sent, in the group's order (cited ones included).
        part, parts: which piece of the group this is, when it was cut (else 1 of 1).
        characters: the estimated characters the members take in the prompt.
    """

    group: int
    members: tuple[str, ...]
    part: int
    parts: int
    characters: int

    @property
    def name(self) -> str:
        """How a request names it: the group's number, and which part ("12 (2/3)")."""
        return str(self.group) if self.parts == 1 else f"{self.group} ({self.part}/{self.parts})"


def _pieces(group: Group, size: Callable[[str], int], room: int) -> list[list[str]]:
    """The group cut along its spanning tree into connected pieces of at most ``room``
    characters (a single member larger than ``room`` is a piece alone)."""
    parent = {m: m for m in group.members}
    weight = {m: size(m) for m in group.members}

    def root(member: str) -> str:
        while parent[member] != member:
            parent[member] = parent[parent[member]]
            member = parent[member]
        return member

    for edge in sorted(group.edges, key=lambda e: (e.distance, e.member, e.via)):
        a, b = root(edge.member), root(edge.via)
        if a != b and weight[a] + weight[b] <= room:
            a, b = min(a, b), max(a, b)
            parent[b] = a
            weight[a] += weight[b]
    pieces: dict[str, list[str]] = {}
    for member in group.members:
        pieces.setdefault(root(member), []).append(member)
    return sorted(pieces.values(), key=lambda piece: group.members.index(piece[0]))


def units(groups: Sequence[Group], uncited: Sequence[str], size: Callable[[str], int],
          room: int) -> tuple[list[Unit], list[str]]:
    """The units to send, in the order of their first uncited member in ``uncited`` (the
    debate order), and a note for each group that was cut. Groups holding no uncited
    member, and pieces of a cut group holding none, are not sent (nothing to propose)."""
    rank = {member: position for position, member in enumerate(uncited)}
    made: list[tuple[int, Unit]] = []
    notes: list[str] = []
    for number, group in enumerate(groups, start=1):
        if not any(m in rank for m in group.members):
            continue
        total = sum(size(m) for m in group.members)
        pieces = [list(group.members)] if total <= room else _pieces(group, size, room)
        if len(pieces) > 1:
            notes.append(f"group {number} ({len(group.members)} extractions, about {total:,} characters) is larger "
                         f"than one request: cut along its spanning tree into {len(pieces)} parts")
        for part, piece in enumerate(pieces, start=1):
            ranks = [rank[m] for m in piece if m in rank]
            if ranks:
                made.append((min(ranks), Unit(number, tuple(piece), part, len(pieces), sum(size(m) for m in piece))))
    made.sort(key=lambda pair: (pair[0], pair[1].group, pair[1].part))
    return [unit for _rank, unit in made], notes


def pack(sent: Sequence[Unit], room: int) -> list[list[Unit]]:
    """The units in requests of at most ``room`` characters each, in order (a unit larger
    than ``room`` goes alone)."""
    requests: list[list[Unit]] = []
    used = 0
    for unit in sent:
        if requests and used + unit.characters <= room:
            requests[-1].append(unit)
            used += unit.characters
        else:
            requests.append([unit])
            used = unit.characters
    return requests
