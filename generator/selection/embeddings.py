"""The embedded default: TF-IDF over words (1–2 grams) and characters (3–5 grams inside
words), for French and English alike. Deterministic (sorted vocabulary, no seed),
sparse (scipy), L2-normalised rows; needs only numpy and scipy."""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scipy import sparse  # type: ignore[import-untyped]  # scipy ships no type hints and scipy-stubs is no dependency
# numpy and scipy are imported where used: a build without wikis never pays for loading them

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_DOCUMENT_SHARE = 0.5
"""Features found in more than this share of texts carry no topic: dropped (keeps the
neighbour search sparse)."""


def _features(text: str) -> list[str]:
    """A text's features, each as often as it occurs: its words, its pairs of words, the
    3–5 character grams of each word (padded with ``<`` and ``>``), casefolded, accents off."""
    words = _words(text)
    features = [feature for word in words for feature in _word_features(word)]
    features += [f"b:{a} {b}" for a, b in itertools.pairwise(words)]
    return features


class _WithoutMarks(dict[int, int | None]):
    """A :meth:`str.translate` table that drops combining marks (accents once decomposed),
    filled as characters are met: the scan stays in C, where a test per character in
    Python took a third of the perimeters' vectors."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.combining(chr(code)) else code
        self[code] = kept
        return kept


_UNMARK = _WithoutMarks()


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKD", text.casefold()).translate(_UNMARK))


@functools.lru_cache(maxsize=1 << 18)
def _word_features(word: str) -> tuple[str, ...]:
    """A word's own feature and its character grams: made once per word, not per occurrence
    (a corpus says the same few thousand words again and again)."""
    padded = f"<{word}>"
    return (f"w:{word}", *(f"c:{padded[i:i + size]}" for size in (3, 4, 5)
                           for i in range(max(0, len(padded) - size + 1))))


@functools.lru_cache(maxsize=1 << 18)
def _word_ids(word: str) -> tuple[int, ...]:
    return tuple(map(_FEATURE_IDS.__getitem__, _word_features(word)))


# feature → a process-wide integer id, given on first sight (in any order: columns are re-sorted)
_FEATURE_IDS: defaultdict[str, int] = defaultdict(itertools.count().__next__)
_FEATURE_NAMES: list[str] = []  # id → feature, caught up lazily


@functools.lru_cache(maxsize=1 << 17)
def _ids(text: str) -> tuple[int, ...]:
    """A text's features (those of :func:`_features`) as process-wide ids, each as often as
    it occurs; cached, since a quote sits in many perimeters."""
    words = _words(text)
    ids = [i for word in words for i in _word_ids(word)]
    ids += map(_FEATURE_IDS.__getitem__, (f"b:{a} {b}" for a, b in itertools.pairwise(words)))
    return tuple(ids)


def _names() -> list[str]:
    if len(_FEATURE_NAMES) < len(_FEATURE_IDS):
        _FEATURE_NAMES.extend(itertools.islice(_FEATURE_IDS, len(_FEATURE_NAMES), None))
    return _FEATURE_NAMES


def tfidf(texts: list[str]) -> sparse.csr_matrix:
    """Rows: texts, in the order given. Sublinear term frequency, smoothed idf. Columns
    follow the sorted vocabulary, so the matrix never depends on what was seen before."""
    import numpy as np
    n = len(texts)
    every = [_ids(text) for text in texts]
    names = _names()
    # each text's distinct features (ascending) and their counts, for all texts in one sort:
    # row × (ids + 1) + id orders them by text, then by feature
    width = len(names) + 1
    flat = np.fromiter(itertools.chain.from_iterable(every), dtype=np.int64, count=sum(map(len, every)))
    keyed = np.repeat(np.arange(n, dtype=np.int64) * width, [len(ids) for ids in every]) + flat
    distinct, counts = np.unique(keyed, return_counts=True)
    rows, features = np.divmod(distinct, width)
    counts = counts.astype(np.int64)
    document_frequency = np.bincount(features, minlength=len(names))  # ids are distinct per text
    limit = max(2, int(MAX_DOCUMENT_SHARE * n)) if n >= 10 else n
    kept = np.nonzero((document_frequency > 0) & (document_frequency <= limit))[0]
    vocabulary = sorted(kept.tolist(), key=names.__getitem__)
    column_of = np.full(len(names), -1, dtype=np.int64)
    column_of[vocabulary] = np.arange(len(vocabulary))
    # math.log, not numpy's: the same last bit on every platform
    # computed once per distinct frequency (a few dozen), not per column (10⁵ at 50,000 extractions)
    frequencies, which = np.unique(document_frequency[vocabulary], return_inverse=True)
    idf = np.array([math.log((1 + n) / (1 + int(f))) + 1 for f in frequencies])[which.reshape(-1)]
    columns = column_of[features]
    present = columns >= 0
    rows, columns, counts = rows[present], columns[present], counts[present]
    sublinear = np.array([0.0] + [1 + math.log(c) for c in range(1, int(counts.max(initial=0)) + 1)])
    values = sublinear[counts] * idf[columns] if len(columns) else np.empty(0)
    from scipy import sparse

    matrix = sparse.csr_matrix((values, (rows, columns)), shape=(n, len(vocabulary)), dtype=np.float64)
    norms = np.sqrt(matrix.multiply(matrix).sum(axis=1)).A1
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1 / norms) @ matrix)
