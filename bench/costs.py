"""Costs that grew without bound (issue 56, item 2): each hostile input of the review, built
at growing sizes, with the exponent of its wall time and peak memory in the size.

    python -m bench.costs                              # every case at 1/8, 1/4, 1/2 and 1 of its full size
    python -m bench.costs --case headings --case list  # some cases
    python -m bench.costs --scale 0.25                 # stop lower: 1/32 … 1/4 of each full size

The cases, at the sizes the review measured them (``carnet build --no-search --jobs 1``):

- ``categories``: one note in K categories of one axis (K = 5,000: 247 s, 3.4 GB, 3.55 GB of
  output: each category page listed every category);
- ``extractions``: N overlapping extractions (each quote two sentences, sharing one with the
  next) of notes in one wiki's perimeter (N = 20,000: 107 s, 7.6 GB);
- ``headings``: N identical ``## Titre`` in one note (N = 50,000: 164 s);
- ``list``: an N-item tight list (N = 100,000: 103 s);
- ``table``: a 600-column table of R rows, every cell empty (R = 5,000: 5.0 GB).

Each size is a content folder written afresh and built once per run in its own process
(``python -m generator build DIR --no-search --jobs 1``, its build cache cold); the wall
and CPU times are the least of ``--runs``, the peak the largest resident set of the process. The
exponent is the slope of a least-squares line through (log size, log cost), the cost (CPU
time: the machine's other processes change it less than the wall time; peak memory) taken
above that of the same case at size 1 (the interpreter, the imports, the site's fixed
pages): 1 is linear, 2 quadratic. Not a test: no thresholds, figures to read.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.builds import CHILD_ENV

CATEGORY = "Budget"
TABLE_COLUMNS = 600
EXTRACTIONS_PER_NOTE = 1_000
"""Extractions of one note in the ``extractions`` case: the perimeter grows by notes, as
minutes accumulate, rather than one note of 20,000 highlights."""


def write_site(content: Path, categories: Sequence[str] = (CATEGORY,)) -> None:
    """Settings and one public notebook whose axis holds ``categories``."""
    (content / "notes").mkdir(parents=True, exist_ok=True)
    (content / "notebooks").mkdir(exist_ok=True)
    (content / "carnet.yaml").write_text(
        "title: Banc des coûts\nbase_url: https://bench.example.org/\nlanguage: fr\nlicence: CC BY 4.0\n",
        encoding="utf-8")
    listed = ", ".join(f'"{category}"' for category in categories)
    (content / "notebooks" / "conseil.yaml").write_text(
        "title: Conseil\nvisibility: public\nauthors: full\n"
        f"axes:\n  theme:\n    title: Thème\n    categories: [{listed}]\n", encoding="utf-8")


def write_note(content: Path, slug: str, body: str, categories: Sequence[str] = (CATEGORY,),
               front: str = "date: 2024-03-01\nauthors: [Camille Martin]\n") -> None:
    listed = ", ".join(f'"{category}"' for category in categories)
    (content / "notes" / f"{slug}.md").write_text(
        f"---\ntitle: Note {slug}\n{front}notebooks:\n  conseil:\n    theme: [{listed}]\n---\n{body}",
        encoding="utf-8")


def write_categories(content: Path, count: int) -> None:
    """One note in ``count`` categories of the notebook's one axis."""
    categories = [f"Catégorie {number:05d}" for number in range(1, count + 1)]
    write_site(content, categories)
    write_note(content, "seance", "## Ordre du jour\n\nLe conseil se réunit.\n", categories)


def sentence(number: int) -> str:
    """Sentences of one vocabulary, told apart by their number (``point 1 du`` is not in
    ``point 10 du``): near-identical to a similarity measure, each quote found once."""
    return f"Le conseil examine le point {number} du budget du foyer."


def write_extractions(content: Path, count: int) -> None:
    """``count`` extractions over notes of :data:`EXTRACTIONS_PER_NOTE`, all in the
    perimeter of one wiki (the notebook's one category): each quotes two sentences of a
    paragraph, the second of which the next one quotes too."""
    write_site(content)
    for first in range(0, count, EXTRACTIONS_PER_NOTE):
        numbers = range(first, min(count, first + EXTRACTIONS_PER_NOTE))
        paragraphs = [list(numbers[i:i + 20]) for i in range(0, len(numbers), 20)]
        slug = f"seance-{first // EXTRACTIONS_PER_NOTE:04d}"
        write_note(content, slug, "\n\n".join(" ".join(sentence(n) for n in paragraph) for paragraph in paragraphs)
                   + "\n")
        lines = ["extractions:"]
        for paragraph in paragraphs:
            for index, number in enumerate(paragraph):
                quote = sentence(number) + (f" {sentence(paragraph[index + 1])}" if index + 1 < len(paragraph) else "")
                lines += [f"  - id: x{number}", f'    quote: "{quote}"', "    kind: fait", "    author: Camille Martin"]
        (content / "notes" / f"{slug}.extractions.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cited = " ".join(f"Le conseil examine le budget [[ext:x{number}]]." for number in range(0, min(count, 50), 10))
    write_note(content, "wiki-budget", f"## État des lieux\n\n{cited}\n", front="type: wiki\n")


def write_headings(content: Path, count: int) -> None:
    write_site(content)
    write_note(content, "seance", "## Titre\n\n" * count)


def write_list(content: Path, count: int) -> None:
    write_site(content)
    write_note(content, "seance", "".join(f"- point {number}\n" for number in range(count)))


def write_table(content: Path, rows: int) -> None:
    """A :data:`TABLE_COLUMNS`-column table of ``rows`` rows, every cell empty."""
    write_site(content)
    row = "|" + " |" * TABLE_COLUMNS + "\n"
    write_note(content, "seance", row + "|" + "-|" * TABLE_COLUMNS + "\n" + row * rows)


@dataclass(frozen=True)
class Case:
    """One hostile input.

    Attributes:
        label: how the table names it (the review's words).
        full: the size the review measured.
        write: (content folder, size) → the content.
    """

    label: str
    full: int
    write: Callable[[Path, int], None]


CASES: dict[str, Case] = {
    "categories": Case("(a) one note in K categories", 5_000, write_categories),
    "extractions": Case("(b) N overlapping extractions in one wiki perimeter", 20_000, write_extractions),
    "headings": Case("(c) N identical `## Titre`", 50_000, write_headings),
    "list": Case("(d) an N-item tight list", 100_000, write_list),
    "table": Case(f"(e) a {TABLE_COLUMNS} × R empty table", 5_000, write_table),
}


@dataclass(frozen=True)
class Sample:
    """One build: ``wall`` and ``cpu`` (user + system) in seconds, ``peak`` in MiB; ``failed``
    says why it gave no figure."""

    size: int
    wall: float
    cpu: float
    peak: float
    failed: str = ""


def build_command(content: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "generator", "build", str(content), "--out", str(out),
            "--no-search", "--jobs", "1", "--quiet"]


def measure(content: Path, out: Path, size: int, timeout: float) -> Sample:
    """One build in its own process: wall and CPU time, and its peak resident set (``wait4``)."""
    log = out.with_name(out.name + ".log")  # a file, not a pipe: thousands of notices would fill a pipe
    with log.open("wb") as errors:
        started = time.perf_counter()
        process = subprocess.Popen(build_command(content, out), stdout=subprocess.DEVNULL, stderr=errors,
                                   env=CHILD_ENV)
        killer = threading.Timer(timeout, process.kill)
        killer.start()
        try:
            _pid, status, usage = os.wait4(process.pid, 0)
        finally:
            killer.cancel()
        wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    error = log.read_text(encoding="utf-8", errors="replace")
    failed = ""
    if wall >= timeout and process.returncode < 0:
        failed = f"> {timeout:.0f} s"
    elif process.returncode != 0:
        lines = error.strip().splitlines() or [""]
        failed = f"exit {process.returncode}: " + next((line for line in lines if "error" in line.lower()), lines[-1])
    return Sample(size, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, failed)


def exponent(sizes: Sequence[float], costs: Sequence[float], baseline: float = 0.0) -> float | None:
    """The slope of the least-squares line through (log size, log (cost − baseline)): the
    ``k`` of cost ≈ baseline + c·sizeᵏ. Points at or under the baseline carry no slope and
    are left out; ``None`` with fewer than two sizes left."""
    points = [(math.log(size), math.log(cost - baseline)) for size, cost in zip(sizes, costs, strict=True)
              if size > 0 and cost > baseline]
    if len({x for x, _ in points}) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)


def sizes_of(case: Case, scale: float, steps: int) -> list[int]:
    """``steps`` sizes halving down from ``scale`` × the full size (1/8, 1/4, 1/2, 1 by default)."""
    top = case.full * scale
    return sorted({max(1, round(top / 2 ** step)) for step in range(steps)})


def run_sizes(write: Callable[[Path, int], None], sizes: Sequence[int], work: Path, name: str,
              runs: int, timeout: float) -> list[Sample]:
    """Each size written into ``work`` and built ``runs`` times (the least time kept); past a size
    that failed or timed out, the larger ones are not tried."""
    samples: list[Sample] = []
    for size in sizes:
        content = work / f"{name}-{size}" / "content"
        shutil.rmtree(content.parent, ignore_errors=True)
        write(content, size)
        tries = [measure(content, content.parent / f"site-{run}", size, timeout) for run in range(runs)]
        shutil.rmtree(content.parent, ignore_errors=True)
        failed = next((t for t in tries if t.failed), None)
        samples.append(failed or Sample(size, min(t.wall for t in tries), min(t.cpu for t in tries),
                                        max(t.peak for t in tries)))
        if failed:
            break
    return samples


def _figure(value: float | None, places: int = 2) -> str:
    return "—" if value is None else f"{value:.{places}f}"


def table(results: dict[str, tuple[Sample, list[Sample]]]) -> str:
    """The markdown table: each case at size 1 (its fixed cost), then its sizes, times and
    peaks, and the two exponents (time: of the CPU time, which other processes on the
    machine change less than the wall time) of the cost above that at size 1."""
    lines = ["| case | at size 1: CPU (s), peak (MiB) | sizes | wall (s) | CPU (s) | peak (MiB) "
             "| exponent, time | exponent, memory |",
             "|---|---|---|---|---|---|---|---|"]
    for name, (baseline, samples) in results.items():
        good = [s for s in samples if not s.failed]
        failed = [s for s in samples if s.failed]
        sizes = " / ".join(f"{s.size:,}" for s in samples)
        walls = " / ".join(f"{s.wall:.1f}" for s in good) + (f" / {failed[0].failed}" if failed else "")
        cpus = " / ".join(f"{s.cpu:.1f}" for s in good)
        peaks = " / ".join(f"{s.peak:.0f}" for s in good)
        time_k = exponent([s.size for s in good], [s.cpu for s in good], baseline.cpu)
        memory_k = exponent([s.size for s in good], [s.peak for s in good], baseline.peak)
        lines.append(f"| {CASES[name].label} | {baseline.cpu:.2f}, {baseline.peak:.0f} | {sizes} | {walls} | {cpus} "
                     f"| {peaks} | {_figure(time_k)} | {_figure(memory_k)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="a case (repeatable; default: all)")
    parser.add_argument("--scale", type=float, default=1.0, help="the largest size, as a fraction of the full one")
    parser.add_argument("--steps", type=int, default=4, help="sizes, each half the next (default 4: 1/8 to 1)")
    parser.add_argument("--runs", type=int, default=1, help="builds of each size (the fastest is kept)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a build may take before it is stopped")
    parser.add_argument("--work", type=Path, help="where the content folders are written (default: a temporary one)")
    args = parser.parse_args(argv)
    if not 0 < args.scale <= 1 or args.steps < 2 or args.runs < 1:
        parser.error("--scale is in (0, 1], --steps at least 2, --runs at least 1")
    names = args.case or list(CASES)
    with tempfile.TemporaryDirectory(prefix="carnet-costs-") as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        results: dict[str, tuple[Sample, list[Sample]]] = {}
        for name in names:
            case = CASES[name]
            (baseline,) = run_sizes(case.write, [1], work, name, args.runs, args.timeout)
            if baseline.failed:
                print(f"{name}: the build at size 1 failed: {baseline.failed}", file=sys.stderr)
                return 1
            samples = run_sizes(case.write, sizes_of(case, args.scale, args.steps), work, name, args.runs, args.timeout)
            results[name] = (baseline, samples)
            print(f"{name}: " + ", ".join(
                f"{s.size:,} → {s.failed or f'{s.wall:.1f} s ({s.cpu:.1f} s CPU), {s.peak:.0f} MiB'}"
                for s in [baseline, *samples]), file=sys.stderr, flush=True)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
