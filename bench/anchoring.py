"""Benchmark of the anchoring engine (not a test: no thresholds, figures to read).

Generates M notes (deterministic; median ~2 KB, a long tail) and N extractions over
them — most exact, some spanning two paragraphs, some with an edited quote (fuzzy
relocation) or a vanished one (detached) — then anchors every note as the build
does (parse → elements → resolve) and reports time per extraction and peak memory.

    python -m bench.anchoring --notes 10000 --extractions 100000
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import resource
import sys
import time
from collections import Counter

from generator.anchoring import anchor_note
from generator.corpus.model import Extraction, Note, NoteType, SourceRef

VOCABULARY = ["le", "conseil", "la", "séance", "budget", "foyer", "élèves", "vote", "région", "subvention", "dépense", "statuts", "proviseur", "délégués", "cantine", "casiers", "sortie", "réserve", "dossier", "projet", "accord", "association", "tiers-lieu", "réseau", "commune", "département", "financement", "appel", "critère", "cofinancement", "bénévoles", "salle", "ouverture", "mercredi", "soir", "internat", "assemblée", "décision", "proposition", "objection", "question"]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(VOCABULARY) for _ in range(rng.randint(6, 22))]
    return " ".join(words).capitalize() + rng.choice([".", ".", ".", " ?", " !"])


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(1, 5)))


def generate_note(rng: random.Random, index: int) -> tuple[str, list[tuple[bool, str]]]:
    """A note body (headings, paragraphs, lists, tables) and its paragraphs, each with
    whether it directly follows the previous one."""
    target = int(min(100_000, rng.lognormvariate(7.6, 0.8)))  # median ≈ 2 KB, long tail
    blocks, paragraphs, size = [f"## Séance {index}"], [], 0
    while size < target:
        kind = rng.random()
        if kind < 0.1:
            blocks.append(f"## {_sentence(rng)[:-1]}")
        elif kind < 0.2:
            blocks.append("\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5))))
        elif kind < 0.25:
            rows = [f"| {rng.choice(VOCABULARY)} | {rng.randint(1, 5000)} € |" for _ in range(rng.randint(2, 6))]
            blocks.append("| Poste | Montant |\n| --- | --- |\n" + "\n".join(rows))
        else:
            paragraph = _paragraph(rng)
            # a paragraph right after another one continues it (a quote may span both)
            follows = bool(paragraphs) and blocks[-1] == paragraphs[-1][-1]
            paragraphs.append((follows, paragraph))
            blocks.append(paragraph)
        size += len(blocks[-1])
    return "\n\n".join(blocks) + "\n", paragraphs


def _quote(rng: random.Random, paragraphs: list[tuple[bool, str]]) -> str:
    index = rng.randrange(len(paragraphs))
    text = paragraphs[index][1]
    if rng.random() < 0.2 and index + 1 < len(paragraphs) and paragraphs[index + 1][0]:  # over two paragraphs
        tail = paragraphs[index + 1][1]
        return text[-rng.randint(20, min(120, len(text))):].strip() + "\n\n" + tail[:rng.randint(20, min(120, len(tail)))].strip()
    start = rng.randrange(max(1, len(text) - 40))
    return text[start:start + rng.randint(40, 200)].strip()


def generate(notes: int, extractions: int, seed: int = 7) -> list[Note]:
    rng = random.Random(seed)
    per_note = [extractions // notes + (1 if i < extractions % notes else 0) for i in range(notes)]
    result = []
    for index in range(notes):
        body, paragraphs = generate_note(rng, index)
        if not paragraphs:
            paragraphs = [(False, _paragraph(rng))]
            body += "\n" + paragraphs[0][1] + "\n"
        items = []
        for number in range(per_note[index]):
            quote = _quote(rng, paragraphs)
            roll = rng.random()
            if roll < 0.03 and len(quote) > 30:  # an edit since the quote was taken
                at = rng.randrange(len(quote))
                quote = quote[:at] + "x" + quote[at + 1:]
            elif roll < 0.04:
                quote = "Une phrase qui n'est dans aucune note du corpus généré."
            items.append(Extraction(f"n{index}-x{number}", f"n{index}", quote, "", "", None, "fait", "Bench",
                                    None, False, (), SourceRef(f"notes/n{index}.extractions.yaml", 1)))
        result.append(Note(f"n{index}", f"Note {index}", NoteType.NOTE, dt.date(2025, 1, 1), (), "", (), None, None,
                           body, 1, tuple(items), SourceRef(f"notes/n{index}.md", 1)))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--extractions", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    notes = generate(args.notes, args.extractions, args.seed)
    generated = time.perf_counter() - started
    size = sum(len(n.body.encode("utf-8")) for n in notes)
    statuses: Counter[str] = Counter()
    portions = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for note in notes:
        anchored, _problems = anchor_note(note)
        for anchor in anchored.anchors.values():
            statuses[anchor.status.value] += 1
            portions += len(anchor.portions)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    total = sum(statuses.values())
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"corpus: {args.notes} notes, {size / 1e6:.1f} MB of markdown, {total} extractions "
          f"(generated in {generated:.1f} s)")
    print(f"anchoring: {wall:.2f} s wall, {cpu:.2f} s CPU, {wall / max(total, 1) * 1e6:.0f} µs per extraction "
          f"(parse + elements + resolve, per note included), {wall / args.notes * 1e3:.2f} ms per note")
    print(f"results: {dict(sorted(statuses.items()))}, {portions} portions")
    print(f"peak memory: {peak_mib:.0f} MiB (whole process, corpus held in memory)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
