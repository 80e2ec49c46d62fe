"""The benchmark's machine probes (bench/machine.py): they measure, and the report says
what they measured. No figure is asserted beyond being one."""

from __future__ import annotations

import math
from pathlib import Path

from bench.builds import Measures, Run, report
from bench.machine import file_creation_us, parallel_ceiling


def test_creating_files_is_measured_and_leaves_nothing_behind(tmp_path: Path) -> None:
    cost = file_creation_us(tmp_path, files=50, batches=5)
    assert cost > 0
    assert list(tmp_path.iterdir()) == []


def test_the_parallel_ceiling_is_a_measured_ratio() -> None:
    """A ratio of two timings, whatever the machine's load (no bound asserted on it: a
    loaded machine can make the serial half slow and the ratio large)."""
    ceiling = parallel_ceiling(rounds=1)
    assert math.isfinite(ceiling) and ceiling > 0


def test_the_report_gives_the_machines_bounds_beside_the_tables() -> None:
    measures = Measures()
    measures.add("carnet --no-search", Run(2.0, 3.0, 100))
    measures.add("carnet --no-search --jobs 1", Run(3.0, 3.0, 90))
    text = report([(measures, {"notes": 10, "megabytes": 0.1})], {"file_creation_us": 123.4, "parallel_ceiling": 1.71})
    assert "123 µs" in text and "1.71×" in text
    assert "| --jobs 1 / --jobs 2 (speed-up) | 1.50 | ≥ 1.6 |" in text
    assert "µs" not in report([(measures, {"notes": 10, "megabytes": 0.1})])


def test_the_harness_probe_deletes_nothing_while_measuring(tmp_path: Path) -> None:
    """The harness removes nothing until every measure is taken (bench.builds.fresh): the
    probe's files are moved aside with its trees."""
    from bench import builds

    bounds = builds.machine_bounds(tmp_path)
    try:
        assert set(bounds) == {"file_creation_us", "parallel_ceiling"}
        assert not (tmp_path / "machine-probe").exists()
        assert builds.TRASH and any(next(trash.iterdir(), None) for trash in builds.TRASH)
    finally:
        builds.empty_trash()
    assert list(tmp_path.iterdir()) == []
