"""The embedded default: TF-IDF over words (1–2 grams) and characters (3–5 grams inside
words), for French and English alike. Deterministic (sorted vocabulary, no seed),
sparse (scipy), L2-normalised rows; needs only numpy and scipy."""

from __future__ import annotations

import math
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


def tfidf(texts: list[str]) -> sparse.csr_matrix:
    """Rows: texts, in the order given. Sublinear term frequency, smoothed idf."""
    counts = []
    document_frequency: dict[str, int] = {}
    for text in texts:
        bag: dict[str, int] = {}
        for feature in _features(text):
            bag[feature] = bag.get(feature, 0) + 1
        counts.append(bag)
        for feature in bag:
            document_frequency[feature] = document_frequency.get(feature, 0) + 1
    n = len(texts)
    limit = max(2, int(MAX_DOCUMENT_SHARE * n)) if n >= 10 else n
    vocabulary = sorted(f for f, df in document_frequency.items() if df <= limit)
    index = {feature: i for i, feature in enumerate(vocabulary)}
    idf = np.array([math.log((1 + n) / (1 + document_frequency[f])) + 1 for f in vocabulary])
    rows, cols, values = [], [], []
    for row, bag in enumerate(counts):
        for feature, count in bag.items():
            column = index.get(feature)
            if column is not None:
                rows.append(row)
                cols.append(column)
                values.append((1 + math.log(count)) * idf[column])
    matrix = sparse.csr_matrix((values, (rows, cols)), shape=(n, len(vocabulary)), dtype=np.float64)
    norms = np.sqrt(matrix.multiply(matrix).sum(axis=1)).A1
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1 / norms) @ matrix)
