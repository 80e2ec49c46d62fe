"""Benchmark of evidence grouping (not a test): TF-IDF embedding + single linkage over a
sparse neighbour graph, at several sizes. Prints time and peak memory.

    python -m bench.selection --sizes 1000 10000 50000
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time

from generator.selection.embeddings import tfidf
from generator.selection.groups import group
from generator.selection.select import DEFAULT_THRESHOLD

COMMON = ["le", "la", "les", "de", "des", "du", "un", "une", "et", "est", "sont", "pour", "dans", "par", "sur", "au", "aux", "que", "qui"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghilmnoprstuv") for _ in range(rng.randint(4, 9)))


def _topics(rng: random.Random, count: int = 200) -> list[list[str]]:
    """Topics of their own words: texts on one topic share vocabulary, as minutes do."""
    return [[_word(rng) for _ in range(25)] for _ in range(count)]


def _sentence(rng: random.Random, topics: list[list[str]]) -> str:
    topic = rng.choice(topics)
    words = [rng.choice(topic) if rng.random() < 0.6 else rng.choice(COMMON) for _ in range(rng.randint(8, 24))]
    return " ".join(words).capitalize() + "."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    args = parser.parse_args(argv)
    topics = _topics(random.Random(1))
    for size in args.sizes:
        rng = random.Random(size)
        texts = [_sentence(rng, topics) for _ in range(size)]
        ids = [f"x{i}" for i in range(size)]
        started = time.perf_counter()
        vectors = tfidf(texts)
        embedded = time.perf_counter() - started
        groups = group(ids, vectors, args.threshold)
        total = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        sizes = sorted((len(g.members) for g in groups), reverse=True)
        print(f"{size:>6} extractions: {total:6.1f} s (embedding {embedded:.1f} s), {len(groups)} groups "
              f"(largest {sizes[0]}, {sum(s == 1 for s in sizes)} singletons), "
              f"{sum(g.chaining for g in groups)} chaining warnings; peak memory so far {peak:.0f} MiB")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
