"""The embedded default: TF-IDF over words (1–2 grams) and characters (3–5 grams inside
words), for French and English alike. Deterministic (sorted vocabulary, no seed),
sparse (scipy), L2-normalised rows; needs only numpy and scipy."""

from __future__ import annotations

import functools
import math
from collections import Counter
import re
import unicodedata

import numpy as np
from scipy import sparse

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_DOCUMENT_SHARE = 0.5
"""Features found in more than this share of texts carry no topic: dropped (keeps the
neighbour search sparse)."""


def _features(text: str) -> list[str]:
    folded = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
    words = _WORD.findall(folded)
    features = [f"w:{w}" for w in words]
    features += [f"b:{a} {b}" for a, b in zip(words, words[1:])]
    for word in words:
        padded = f"<{word}>"
        for size in (3, 4, 5):
            features += [f"c:{padded[i:i + size]}" for i in range(max(0, len(padded) - size + 1))]
    return features


@functools.lru_cache(maxsize=1 << 17)
def _bag(text: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A text's features and their counts (cached: a quote sits in many perimeters)."""
    counts = Counter(_features(text))
    return tuple(counts), tuple(counts.values())


def tfidf(texts: list[str]) -> sparse.csr_matrix:
    """Rows: texts, in the order given. Sublinear term frequency, smoothed idf."""
    bags = [_bag(text) for text in texts]
    document_frequency: Counter[str] = Counter()
    for features, _counts in bags:
        document_frequency.update(features)  # each feature once per text
    n = len(texts)
    limit = max(2, int(MAX_DOCUMENT_SHARE * n)) if n >= 10 else n
    vocabulary = sorted(f for f, df in document_frequency.items() if df <= limit)
    index = {feature: i for i, feature in enumerate(vocabulary)}
    idf = np.array([math.log((1 + n) / (1 + document_frequency[f])) + 1 for f in vocabulary])
    rows, cols, counts = [], [], []
    for row, (features, tallies) in enumerate(bags):
        for feature, count in zip(features, tallies):
            column = index.get(feature)
            if column is not None:
                rows.append(row)
                cols.append(column)
                counts.append(count)
    columns = np.array(cols, dtype=np.int64)
    values = (1 + np.log(np.array(counts, dtype=np.float64))) * idf[columns] if cols else np.array([])
    matrix = sparse.csr_matrix((values, (rows, columns)), shape=(n, len(vocabulary)), dtype=np.float64)
    norms = np.sqrt(matrix.multiply(matrix).sum(axis=1)).A1
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1 / norms) @ matrix)
