"""Opposition files, ``content/oppositions/<wiki>.yaml``: the pairs of extractions that
take opposite positions on one question, with how they were found (written by
``carnet select --oppositions`` or by people; see :mod:`generator.selection.oppositions`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.corpus.fields import Fields
from generator.corpus.source import YamlList
from generator.problems import Problem
from generator.text import model_words, provenance_shown


@dataclass(frozen=True)
class Opposition:
    """Two extractions taking opposite positions on ``question``.

    ``provenance``: how this pair was found when it differs from its file's (a pair a
    later pass added beside pairs a person wrote carries its own); None: the file's.
    ``line``: where the pair is written in its file (0 for a pair just found)."""

    a: str
    b: str
    question: str
    provenance: dict[str, Any] | None = None
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class OppositionRecord:
    """The recorded pass of one wiki: its oppositions and how they were found.

    ``examined``: the requests of a model's pass already answered, by their key (the
    chunks they held and the prompt), with how many the pass had (``of``): a pass that
    stopped resumes from them, and a page can say how much of the perimeter was examined.
    """

    wiki: str
    oppositions: tuple[Opposition, ...]
    provenance: dict[str, Any]
    file: str
    examined: tuple[Examined, ...] = ()


@dataclass(frozen=True)
class Examined:
    """One request of an oppositions pass, answered: its ``key``, the pair of chunks it held
    (``chunks``, 1-based, one number when the perimeter fitted one request), how many
    requests its pass had (``of``), and its provenance (model, date, usage)."""

    key: str
    chunks: tuple[int, ...]
    of: int
    provenance: dict[str, Any]


def parse_oppositions(rel: str, value: Any, problems: list[Problem]) -> OppositionRecord | None:
    f = Fields(value, rel, "the oppositions file", problems)
    f.check_known(("wiki", "provenance", "oppositions", "examined"))
    provenance = f.data.get("provenance")
    if not isinstance(provenance, dict) or provenance.get("method") not in ("llm", "scripted", "human"):
        f.error("provenance", "missing-field", "the oppositions do not say how they were found",
                "Add 'provenance: {method: …}' (llm, scripted or human).")
        return None
    items = f.data.get("oppositions")
    found = []
    if isinstance(items, YamlList):
        for index, item in enumerate(items):
            o = Fields(item, rel, f"opposition {index + 1}", problems, line=items.line_of(index))
            o.check_known(("a", "b", "question", "provenance"))
            own = o.data.get("provenance")
            if own is not None and (not isinstance(own, dict) or own.get("method") not in ("llm", "scripted", "human")):
                o.error("provenance", "missing-field", "the opposition's own provenance does not say how it was found",
                        "Write 'provenance: {method: …}' (llm, scripted or human), or remove it.")
                own = None
            found.append(Opposition(o.text("a"), o.text("b"), model_words(o.text("question", "")),
                                    provenance_shown(own) if isinstance(own, dict) else None, o.line))
    examined = []
    listed = f.items("examined", "Leave the list 'carnet select --oppositions' writes, or remove it (the pass "
                               "then starts again).")
    for index, item in enumerate(listed):
        e = Fields(item, rel, f"examined request {index + 1}", problems, line=listed.line_of(index))
        e.check_known(("request", "chunks", "of", "provenance"))
        chunks, of, own = e.data.get("chunks"), e.data.get("of"), e.data.get("provenance")
        whole = isinstance(chunks, list) and all(isinstance(c, int) and not isinstance(c, bool) and c > 0
                                                 for c in chunks)
        if not e.text("request") or not whole or not isinstance(chunks, list) or isinstance(of, bool) or \
                not isinstance(of, int) or of < 1 or not isinstance(own, dict):
            e.error(None, "invalid-value", "an examined request needs its key, its chunks, the number of requests "
                    "of its pass and its provenance", "Leave what 'carnet select --oppositions' wrote, or remove "
                    "the item (its request is then sent again).")
            continue
        examined.append(Examined(e.text("request"), tuple(chunks), of, provenance_shown(own)))
    return OppositionRecord(f.text("wiki"), tuple(found), provenance_shown(provenance), rel, tuple(examined))
