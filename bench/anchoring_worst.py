"""Worst cases of anchoring and highlighting (issue 19), each in its own process so that
its peak memory is its own: the hostile inputs of the review, with what each costs now
(CPU time, peak memory, relocation steps spent against the note's budget) and what it
gives. Not a test: no thresholds, figures to read.

    python -m bench.anchoring_worst            # every case
    python -m bench.anchoring_worst --case a20000
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import resource
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable

from generator.anchoring import AnchoredNote, anchor_note
from generator.anchoring.elements import segment
from generator.anchoring.resolve import project, relocation_budget, resolve_quote
from generator.corpus.model import Extraction, Note, NoteType, SourceRef
from generator.markup import parse

WORDS = ["le", "conseil", "la", "séance", "budget", "foyer", "élèves", "vote", "région", "subvention"]


def _resolve(body: str, quotes: list[str]) -> dict:
    doc = segment(parse(body), 1)
    projection = project(doc.elements)
    budget = relocation_budget(projection)
    limit = budget.left
    anchors = [resolve_quote(projection, doc.elements, quote, budget=budget) for quote in quotes]
    outcome = Counter(a.status.value for a in anchors)
    reasons = Counter(a.reason.split(":")[0][:70] for a in anchors if a.status.value == "detached")
    return {"note": len(body), "quotes": len(quotes), "budget": limit, "spent": budget.spent,
            "outcome": dict(outcome), "reasons": dict(reasons)}


def _edited_quotes(body: str, count: int, rng: random.Random) -> list[str]:
    quotes = []
    for _ in range(count):
        start = rng.randrange(len(body) - 300)
        passage = body[start:start + 200]
        quotes.append(passage[:50] + "ZZ" + passage[52:])
    return quotes


def _prose(rng: random.Random, paragraphs: int) -> str:
    return "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(60)) for _ in range(paragraphs))


def _many_extractions(count: int, low: int = 40) -> dict:
    """One note of ``count / 10`` paragraphs, ``count`` quotes of ``low`` to 200
    characters taken from it: anchoring (with their outcome: a quote that occurs
    twice is detached), then rendering the highlights."""
    from bench.anchoring import _paragraph
    from generator.site.markdown_html import Href, Mark, RenderState, render_body
    rng = random.Random(5)
    paragraphs = [_paragraph(rng) for _ in range(count // 10)]  # the bench corpus's prose (~50 words)
    quotes = []
    for _ in range(count):
        text = paragraphs[rng.randrange(len(paragraphs))]
        start = rng.randrange(max(1, len(text) - 40))
        quotes.append(text[start:start + rng.randint(low, 200)].strip())
    extractions = tuple(Extraction(f"x{i}", "n", quote, "", "", None, "fait", "B", None, False, (),
                                   SourceRef("notes/n.extractions.yaml", i + 2)) for i, quote in enumerate(quotes))
    note = Note("n", "N", NoteType.NOTE, dt.date(2025, 1, 1), (), "", (), None, None, "\n\n".join(paragraphs), 1,
                extractions, SourceRef("notes/n.md", 1))
    anchored, _ = anchor_note(note)
    marks: dict[int, list[Mark]] = {}  # as the note page makes them
    for extraction in note.extractions:
        anchor = anchored.anchors[extraction.id]
        for portion in anchor.portions if anchor.status.is_live else ():
            marks.setdefault(portion.element, []).append(Mark(portion.start, portion.end, extraction.id))
    html = render_body(RenderState(anchored, marks, lambda raw, wiki: Href(raw)))
    reasons = Counter(a.reason.split(";")[0][:60] for a in anchored.anchors.values() if a.status.value == "detached")
    return {"extractions": count, "note": len(note.body),
            "outcome": dict(Counter(a.status.value for a in anchored.anchors.values())),
            "reasons": dict(reasons), "html": len(html)}


def _example_prose(count: int) -> dict:
    """The example corpus's notes as one note (real French minutes), ``count`` quotes of
    40-200 characters taken from it: how the index does on prose, not on ten words."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / "content" / "notes"
    body = "\n\n".join(path.read_text(encoding="utf-8").split("---", 2)[-1] for path in sorted(root.glob("*.md")))
    text = project(segment(parse(body), 1).elements).text  # quotes as a reader copies them
    rng = random.Random(6)
    quotes = []
    for _ in range(count):
        start = rng.randrange(len(text) - 250)
        quotes.append(text[start:start + rng.randint(40, 200)].strip())
    extractions = tuple(Extraction(f"x{i}", "n", quote, "", "", None, "fait", "B", None, False, (),
                                   SourceRef("notes/n.extractions.yaml", i + 2)) for i, quote in enumerate(quotes))
    note = Note("n", "N", NoteType.NOTE, dt.date(2025, 1, 1), (), "", (), None, None, body, 1, extractions,
                SourceRef("notes/n.md", 1))
    anchored, _ = anchor_note(note)
    reasons = Counter(a.reason.split(";")[0][:40] for a in anchored.anchors.values() if a.status.value == "detached")
    return {"extractions": count, "note": len(body),
            "outcome": dict(Counter(a.status.value for a in anchored.anchors.values())), "reasons": dict(reasons)}


def _marks_on_one_line(count: int) -> dict:
    from generator.site.markdown_html import Href, Mark, RenderState, render_body
    words = [f"mot{i}" for i in range(count)]
    doc = segment(parse(" ".join(words) + "\n"), 1)
    text, position, marks = doc.elements[0].text, 0, []
    for number, word in enumerate(words):
        start = text.index(word, position)
        marks.append(Mark(start, start + len(word), f"x{number}"))
        position = start + len(word)
    html = render_body(RenderState(AnchoredNote(doc, {}), {0: marks}, lambda raw, wiki: Href(raw)))
    return {"marks": count, "html": len(html)}


CASES: dict[str, tuple[str, Callable[[], dict]]] = {
    "a20000": ('note "a"×20,000, quote "a"×10,000 + "b" (was 26 s, 2.6 GB)',
               lambda: _resolve("a" * 20_000, ["a" * 10_000 + "b"])),
    "ab50000": ('note "ab"×50,000, quote "ab"×20,000 + "c" (was a MemoryError)',
                lambda: _resolve("ab" * 50_000, ["ab" * 20_000 + "c"])),
    "a20000-1900": ('note "a"×20,000, quote "a"×1,900 + "b" (the longest relocatable)',
                    lambda: _resolve("a" * 20_000, ["a" * 1_900 + "b"])),
    "ab50000-950": ('note "ab"×50,000, quote "ab"×950 + "c"',
                    lambda: _resolve("ab" * 50_000, ["ab" * 950 + "c"])),
    "200-edited": ("200 edited quotes in a 200 KB note of ten words (was over 300 s)",
                   lambda: _resolve(body := _prose(random.Random(3), 530), _edited_quotes(body, 200, random.Random(4)))),
    "200-repetitive": ('200 quotes "x"×500 + "y" in a note "x"×200,000',
                       lambda: _resolve("x" * 200_000, ["x" * 500 + "y"] * 200)),
    "extractions-example": ("20,000 quotes of 40-200 characters in the example corpus's notes as one note",
                            lambda: _example_prose(20_000)),
    "extractions-100k": ("100,000 quotes of 40-200 characters in a note of fifty words' prose, anchored and "
                         "highlighted (was > 15 min)",
                         lambda: _many_extractions(100_000)),
    "extractions-100k-short": ("100,000 quotes of 10-200 characters (short ones are scanned for, out of an allowance)",
                               lambda: _many_extractions(100_000, low=10)),
    "marks-10k": ("10,000 highlights on one line, rendered (was ≈ 50 s)", lambda: _marks_on_one_line(10_000)),
}


def run_case(name: str) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    result = CASES[name][1]()
    result.update(cpu_s=round(time.process_time() - cpu, 2), wall_s=round(time.perf_counter() - wall, 2),
                  peak_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=sorted(CASES))
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(args.case), ensure_ascii=False))
        return 0
    for name, (title, _) in CASES.items():
        done = subprocess.run([sys.executable, "-m", "bench.anchoring_worst", "--case", name],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"{name}: failed\n{done.stderr}")
            continue
        figures = json.loads(done.stdout)
        print(f"{name}: {title}")
        print(f"  {figures.pop('cpu_s')} s CPU, {figures.pop('wall_s')} s wall, peak {figures.pop('peak_mib')} MiB "
              f"(whole process) — {json.dumps(figures, ensure_ascii=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
