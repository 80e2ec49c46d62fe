"""Lexical ranking of passages for a query: BM25 over folded words. Pure and deterministic.

Words are case- and accent-folded (``Économie`` finds ``economie``), three letters or
more; a passage sharing no word with the query is never a hit, so a question the corpus
does not speak of finds nothing (and is answered "not in the corpus"). Ties go to the
passages' own order. A query is cut at :data:`MAX_QUERY_CHARS`: it may come from a model.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from generator.answering.passages import Passage

K1, B = 1.2, 0.75
MAX_QUERY_CHARS = 500
"""Characters of a query read (the rest is ignored: a query is a few words)."""
_WORD = re.compile(r"\w{3,}", re.UNICODE)
STOPWORDS = frozenset(
    ["les", "des", "une", "que", "qui", "quoi", "dans", "pour", "par", "sur", "avec", "sans", "est", "sont", "ont", "été", "être", "aux", "ces", "ses", "son", "sa", "leur", "leurs", "nous", "vous", "ils", "elles", "pas", "plus", "mais", "comme", "tout", "tous", "cette", "cet", "entre", "fait", "faire", "quel", "quelle", "quels", "quelles", "lors", "dont", "donc", "ainsi", "aussi", "très", "peu", "bien", "the", "and", "for", "with", "that", "this", "what", "which", "who", "are", "was", "were", "from"])
"""Words too common to rank by (French first: the corpora are; a few English ones)."""


def words(text: str) -> list[str]:
    """The folded words of ``text``, stopwords out."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
    return [w for w in _WORD.findall(folded) if w not in STOPWORDS]


@dataclass
class Index:
    """BM25 statistics of a list of passages (made once per question)."""

    passages: Sequence[Passage]
    frequencies: list[Counter[str]] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    documents: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, passages: Sequence[Passage]) -> Index:
        index = cls(passages)
        for passage in passages:
            counts = Counter(words(f"{passage.title} {passage.text}"))
            index.frequencies.append(counts)
            index.lengths.append(sum(counts.values()))
            index.documents.update(counts.keys())
        return index

    def search(self, query: str, limit: int, allowed: frozenset[str] | None = None) -> list[tuple[Passage, float]]:
        """The ``limit`` best passages for ``query`` (score > 0), best first; ``allowed``:
        passage ids to keep (``None``: all)."""
        terms = sorted(set(words(query[:MAX_QUERY_CHARS])))
        if not terms or not self.passages:
            return []
        count = len(self.passages)
        average = sum(self.lengths) / count or 1.0
        weights = {t: math.log(1 + (count - self.documents[t] + 0.5) / (self.documents[t] + 0.5))
                   for t in terms if self.documents[t]}
        scored = []
        for position, (passage, counts) in enumerate(zip(self.passages, self.frequencies, strict=True)):
            if allowed is not None and passage.id not in allowed:
                continue
            score = 0.0
            for term, weight in weights.items():
                tf = counts.get(term, 0)
                if tf:
                    score += weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * self.lengths[position] / average))
            if score > 0:
                scored.append((-round(score, 9), position, passage))
        scored.sort(key=lambda item: (item[0], item[1]))
        return [(passage, -score) for score, _position, passage in scored[:max(0, limit)]]
