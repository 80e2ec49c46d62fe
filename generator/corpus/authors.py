"""How people's names are published: full name, initials or a stable pseudonym (INV-12).

Pure. A notebook's rule applies to every person named on its notes: note authors,
extraction authors, comment authors. Text written *inside* a comment is not rewritten.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass

from generator.corpus.model import AuthorRule, Comment, Note, Notebook

_NAME_PART = re.compile(r"[\w']+", re.UNICODE)

ANALYSIS_AUTHOR = "analysis"
"""The author of extractions added by 'carnet apply' from a 'carnet analyse' proposal."""

MACHINE_AUTHORS = frozenset({ANALYSIS_AUTHOR})
"""Authors that are not people: shown as written under every rule, never given a
person's pseudonym or initials."""


PARTICLES: frozenset[str] = frozenset({
    "al", "af", "av", "bin", "da", "das", "de", "degli", "dei", "del", "della", "den", "der", "des", "di", "do",
    "dos", "du", "el", "ibn", "la", "le", "les", "ten", "ter", "van", "vom", "von", "y", "zu", "zum", "zur",
})
"""Name particles kept as written by the initials rule when lower case and not first
(``Antoine du Hamel`` → ``A. du H.``): an initial of ``du`` would read as a name."""

_ELIDED = re.compile(r"^([dl])['’](\w)", re.UNICODE)  # d'Estaing, l'Hermite


def initials(name: str) -> str:
    """``Jonas Martin`` → ``J. M.``; ``Marie-Claire Dubois`` → ``M.-C. D.``; particles kept:
    ``Antoine du Hamel`` → ``A. du H.``, ``Valéry Giscard d'Estaing`` → ``V. G. d'E.``."""
    words = []
    for position, word in enumerate(name.split()):
        if position and word in PARTICLES:
            words.append(word)
            continue
        elided = _ELIDED.match(word) if position else None
        if elided:
            words.append(f"{word[:2]}{elided.group(2).upper()}.")
            continue
        pieces = [p for p in word.split("-") if p]
        parts = [f"{p[0].upper()}." for p in pieces if _NAME_PART.match(p)]
        if parts:
            words.append("-".join(parts))
    if all(word in PARTICLES for word in words):  # nothing but particles: no initial to show
        return "?"
    return " ".join(words)


def laxer_notebooks(notebooks: list[Notebook]) -> list[Notebook]:
    """Of a note's public notebooks, those whose rule protects less than the governing
    one's: their readers see the note's names under a stricter rule than their own."""
    governing = governing_notebook(notebooks)
    return sorted((nb for nb in notebooks if nb.author_rule.protection < governing.author_rule.protection),
                  key=lambda nb: nb.slug)


@dataclass(frozen=True)
class NotePeople:
    """One note's part of the names and reports of the notebooks holding it: made once a
    build, whatever the number of those notebooks (each walked every passage and comment).

    Attributes:
        names: everyone named on the note, in order of first appearance: its authors, then
            each extraction's author and its comments by date (empty names and machine
            authors included: a notebook's report names them as its rule shows them).
        comments: its comments not withdrawn.
        withdrawn: its withdrawn comments.
    """

    names: tuple[str, ...]
    comments: int
    withdrawn: int

    @classmethod
    def of(cls, note: Note) -> NotePeople:
        order: dict[str, None] = dict.fromkeys(note.authors)
        comments = withdrawn = 0
        for extraction in note.extractions:
            order.setdefault(extraction.author, None)
            given = extraction.comments
            # most passages have one comment or none: nothing to sort (50,000 sorts a build with evidence)
            for comment in sorted(given, key=_date_of) if len(given) > 1 else given:
                order.setdefault(comment.author, None)
                if comment.withdrawn:
                    withdrawn += 1
                else:
                    comments += 1
        return cls(tuple(order), comments, withdrawn)


def people_in_order(notes: list[Note], people: Mapping[str, NotePeople] | None = None) -> list[str]:
    """Everyone named on these notes, in order of first appearance: notes by date then
    slug; in a note, its authors, then each extraction's author and its comments by date.
    Adding a later contribution never renumbers earlier people. ``people``: each note's
    part, by slug, when made already (:class:`NotePeople`)."""
    order: dict[str, None] = {}
    for note in sorted(notes, key=lambda n: (n.date.isoformat() if n.date else "", n.slug)):
        # a name already in keeps its place: the first appearance decides
        order.update(dict.fromkeys(people[note.slug].names if people is not None else NotePeople.of(note).names))
    return [name for name in order if name and name not in MACHINE_AUTHORS]


def _date_of(comment: Comment) -> dt.date:
    return comment.date


def display_names(notebook: Notebook, notes: list[Note],
                  parts: Mapping[str, NotePeople] | None = None) -> dict[str, str]:
    """Real name → name as this notebook publishes it, for everyone on these notes
    (``parts``: as :func:`people_in_order`'s ``people``)."""
    people = people_in_order(notes, parts)
    shown: dict[str, str] = {name: name for name in MACHINE_AUTHORS}
    if notebook.author_rule is AuthorRule.PSEUDONYM:
        taken = set(notebook.pseudonyms.values())
        number = 0
        for name in people:
            if name in notebook.pseudonyms:
                continue
            while True:
                number += 1
                label = f"{notebook.pseudonym_prefix} {number}"
                if label not in taken:
                    break
            shown[name] = label
    for name in people:
        if name in notebook.pseudonyms:
            shown[name] = notebook.pseudonyms[name]
        elif notebook.author_rule is AuthorRule.INITIALS:
            shown[name] = initials(name)
        elif notebook.author_rule is AuthorRule.FULL_NAME:
            shown[name] = name
    return shown


def governing_notebook(notebooks: list[Notebook]) -> Notebook:
    """Of the public notebooks holding a note, the one whose rule protects most
    (ties: first slug). Its rule shows names on the note's page."""
    return sorted(notebooks, key=lambda nb: (-nb.author_rule.protection, nb.slug))[0]
