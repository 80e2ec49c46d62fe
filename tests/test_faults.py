"""Faults (issue 12, part 3): a command killed with SIGKILL at any moment, a read-only or
full disk, an LLM endpoint that is down, failing or cut off. After each, the previous
site is there whole (or the new one, never a mix of the two), every content file is
as it was (or as the command would leave it), everything parses, and running the
command again finishes the job. Commands run as subprocesses, as a user runs them.

The chosen moments (``tests/support/interrupt.py``) kill a command exactly between
two of its writes, which random timing would almost never hit; a few random-time kills
(seeded) cover the rest, the search indexer's process included."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from generator.pipeline import build, check_content
from support.corpus import copy_fixture, replace, site_files
from support.llm_server import reply, status

pytestmark = pytest.mark.slow  # kills and interrupts real builds and commands, over and over

INTERRUPT = Path(__file__).resolve().parent / "support" / "interrupt.py"
REPOSITORY = Path(__file__).resolve().parents[1]
NOTE = "notes/conseil-c.md"


def _carnet(*args: object, moment: tuple[str, str, int] | None = None, limits=None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "generator", *map(str, args)]
    if moment is not None:
        spec, when, nth = moment
        command = [sys.executable, str(INTERRUPT), spec, when, str(nth), "--", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPOSITORY,
                          preexec_fn=limits, env=dict(os.environ, CI="true"))


def _killed_after(delay: float, *args: object) -> int:
    """Start the command, SIGKILL its whole process group (Pagefind included) after
    ``delay`` seconds; the exit status (negative when it was killed)."""
    process = subprocess.Popen([sys.executable, "-m", "generator", *map(str, args)], cwd=REPOSITORY,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    return process.wait()


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def _expected_site(content: Path, where: Path) -> dict[str, bytes]:
    build(content, where, search=False)
    return site_files(where)


# -- build -----------------------------------------------------------------------------------

def test_a_killed_tree_linker_is_a_clear_error_and_the_site_stays(small: Path, tmp_path: Path) -> None:
    """The live tree is hard-linked into the new one by a child process (while the build
    reads the content): killed, the build stops with a clear error, the old site stays, and
    the next build puts it right."""
    out = tmp_path / "site"
    assert _carnet("build", small, "--out", out, "--no-search").returncode == 0
    previous = site_files(out)
    with (small / NOTE).open("a", encoding="utf-8") as note:
        note.write("\nUn paragraphe de plus.\n")
    run = _carnet("build", small, "--out", out, "--no-search", moment=("generator.engine.output:_link_tree", "after", 1))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert "killed by signal 9" in run.stderr and "left as it was" in run.stderr, run.stderr
    assert site_files(out) == previous and _leftovers(out) == []
    assert _carnet("build", small, "--out", out, "--no-search").returncode == 0
    assert site_files(out) == _expected_site(small, tmp_path / "expected")


BUILD_MOMENTS = [
    ("generator.engine.output:_write_file", "after", 3),   # a few files into the new tree
    ("generator.engine.output:_write_file", "after", 40),
    ("generator.engine.output:Staging.files", "before", 1),  # incremental: the linked tree is ready
    ("generator.engine.output:_swap_in", "before", 1),   # the new tree is complete, not yet live
    ("generator.engine.output:_swap_in", "after", 1),    # live; the old tree not yet removed
    ("generator.engine.cache:BuildCache.save", "before", 1),  # live; the cache still describes the old site
    ("generator.files:write_atomic", "after", 1),      # one of the cache's two files saved
]


@pytest.mark.parametrize("cached", [True, False], ids=["incremental", "full"])
def test_a_build_killed_between_any_two_writes_leaves_the_old_site_or_the_new(small: Path, tmp_path: Path,
                                                                                cached: bool) -> None:
    out = tmp_path / "site"
    cache_flags = [] if cached else ["--no-cache"]
    assert _carnet("build", small, "--out", out, "--no-search", *cache_flags).returncode == 0
    killed = 0
    for number, moment in enumerate(BUILD_MOMENTS):
        previous = site_files(out)
        with (small / NOTE).open("a", encoding="utf-8") as note:
            note.write(f"\nUn paragraphe ajouté, numéro {number}.\n")
        content = _tree(small)
        expected = _expected_site(small, tmp_path / f"expected-{number}")
        run = _carnet("build", small, "--out", out, "--no-search", *cache_flags, moment=moment)
        assert run.returncode in (0, -signal.SIGKILL), run.stderr
        killed += run.returncode == -signal.SIGKILL
        now = site_files(out)
        assert now in (previous, expected), f"{moment}: a mix of two sites"
        assert _tree(small) == content, "a build never writes into the content"
        again = _carnet("build", small, "--out", out, "--no-search", *cache_flags)
        assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
        assert site_files(out) == expected, f"{moment}: the next build did not put the site right"
        assert _leftovers(out) == [], "the killed build's staging tree was cleared"
    # --no-cache builds never save a cache, and never link a tree
    assert killed >= (6 if cached else 4), "the chosen moments do happen"


def test_a_build_killed_at_random_moments_with_its_search_indexer(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    started = time.perf_counter()
    assert _carnet("build", small, "--out", out).returncode == 0
    duration = time.perf_counter() - started
    chance = random.Random(12)
    for number in range(6):
        previous = site_files(out, search=False)
        with (small / NOTE).open("a", encoding="utf-8") as note:
            note.write(f"\nLe budget change encore, fois {number}.\n")
        expected = _expected_site(small, tmp_path / f"expected-{number}")
        _killed_after(chance.uniform(0.05, duration * 1.2), "build", small, "--out", out,
                      *(["--no-cache"] if number % 2 else []))
        now = site_files(out, search=False)
        assert now in (previous, expected), f"kill {number}: a mix of two sites"
        index = out / "pagefind" / "pagefind-entry.json"
        assert json.loads(index.read_text(encoding="utf-8"))["languages"], "the live search index is whole"
        assert _carnet("build", small, "--out", out).returncode == 0
        assert site_files(out, search=False) == expected
        assert _leftovers(out) == []


# -- read-only and full disks ----------------------------------------------------------------

@pytest.fixture
def disk(tmp_path: Path) -> Iterator[tuple[Path, bool]]:
    """A directory on its own small file system (a tmpfs, when this runs as root), so it
    can be made read-only or filled like a real disk; ``(path, mounted)``."""
    path = tmp_path / "disk"
    path.mkdir()
    mounted = False
    if os.geteuid() == 0:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(path)],
                                 capture_output=True).returncode == 0
        if not mounted and os.environ.get("CI") == "true":
            pytest.fail("running as root without the right to mount a tmpfs: cannot make a real read-only or full "
                        "disk, and permissions do not bind root")
        if not mounted:
            pytest.skip("running as root without the right to mount a tmpfs (permissions do not bind root)")
    try:
        yield path, mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)
        else:
            path.chmod(0o755)


def test_a_read_only_output_disk_is_a_clear_error_and_the_site_stays(small: Path, disk) -> None:
    where, mounted = disk
    out = where / "site"
    assert _carnet("build", small, "--out", out, "--no-search", "--cache", small.parent / "cache.pickle").returncode == 0
    previous = site_files(out)
    if mounted:
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
    else:
        where.chmod(0o555)
    replace(small, NOTE, "Le budget est reconduit", "Le budget est encore reconduit")
    for flags in (["--cache", small.parent / "cache.pickle"], ["--no-cache"]):
        run = _carnet("build", small, "--out", out, "--no-search", *flags)
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
        assert f"could not write the site into {out}" in run.stderr
        assert ("Read-only file system" if mounted else "Permission denied") in run.stderr
        assert "previous site" in run.stderr and site_files(out) == previous


def test_a_full_output_disk_is_a_clear_error_and_the_site_stays(small: Path, disk) -> None:
    where, mounted = disk
    out = where / "site"
    assert _carnet("build", small, "--out", out, "--no-search", "--no-cache").returncode == 0
    previous = site_files(out)
    # 3 MB of new text: the note's page, text, JSON and llms-full.txt each hold it
    words = " ".join(f"mot{n}" for n in range(400_000))
    with (small / NOTE).open("a", encoding="utf-8") as note:
        note.write(f"\n{words}\n")

    def limit_file_size() -> None:  # without a tmpfs: a file-size limit gives the same kind of failure
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))

    run = _carnet("build", small, "--out", out, "--no-search", "--no-cache",
                  limits=None if mounted else limit_file_size)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"could not write the site into {out}" in run.stderr
    assert ("No space left on device" if mounted else "File too large") in run.stderr
    assert site_files(out) == previous and _leftovers(out) == []


def test_a_build_failing_on_a_full_disk_gives_back_what_its_cache_appended(small: Path, disk) -> None:
    """The build cache appends each value it makes to its pack on the same disk as the
    site; a build that fails because that disk is full takes those bytes back, so the
    disk is left with the room it had, not kept full by the failed build's cache."""
    where, mounted = disk
    if not mounted:
        pytest.skip("needs a tmpfs of its own to fill (running as root)")
    out, cache = where / "site", where / "cache.pickle"
    assert _carnet("build", small, "--out", out, "--no-search", "--cache", cache).returncode == 0
    words = " ".join(f"mot{n}" for n in range(400_000))  # 3 MB of text: more than the disk has left
    with (small / NOTE).open("a", encoding="utf-8") as note:
        note.write(f"\n{words}\n")
    packs = {p.name: p.stat().st_size for p in where.glob("cache.memos.*.pack")}
    free = os.statvfs(where).f_bavail
    run = _carnet("build", small, "--out", out, "--no-search", "--cache", cache)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert "No space left on device" in run.stderr
    assert {p.name: p.stat().st_size for p in where.glob("cache.memos.*.pack")} == packs
    assert os.statvfs(where).f_bavail >= free - 2, "the failed build left nothing on the disk"


# -- the LLM endpoint: down, failing, cut off ------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _configure_llm(content: Path, url: str) -> None:
    with (content / "carnet.yaml").open("a", encoding="utf-8") as settings:
        settings.write(f"llm:\n  base_url: {url}\n  model: modele-test\n  timeout: 2\n  max_retries: 1\n")


@pytest.mark.parametrize("fault", ["down", "500", "cut-off", "not-json"])
@pytest.mark.parametrize("command", ["propose", "verify"])
def test_an_unusable_endpoint_is_a_clear_message_and_nothing_is_written(small: Path, llm_server, fault: str,
                                                                      command: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1" if fault == "down" else llm_server.url
    _configure_llm(small, url)
    answer = json.dumps({"operations": [], "verdicts": []})
    llm_server.script(*{"down": [], "500": [status(500), status(500)], "cut-off": [reply(answer[:9], finish="length")],
                        "not-json": [reply("Voici ma réponse : tout est vérifié.")]}[fault])
    before = _tree(small)
    args = ("propose", "wiki-budget", "--provider", "llm") if command == "propose" else ("verify",)
    run = _carnet(*args, "--content", small)
    assert run.returncode != 0 and "Traceback" not in run.stderr, run.stderr
    message = run.stderr.lower()
    assert {"down": "connect", "500": "500", "cut-off": "cut off", "not-json": "json"}[fault] in message, run.stderr
    assert _tree(small) == before, "nothing written"
    if command == "verify" and fault in ("down", "500"):
        assert "stopped sending once the endpoint failed" in run.stderr
        assert len(llm_server.requests) == (0 if fault == "down" else 2), "one batch tried (and retried once), no more"


# -- commands that write content: adopt, verify, apply ---------------------------------------

def _parses(content: Path) -> None:
    analysis = check_content(content)
    assert [p for p in analysis.problems if p.code.startswith(("yaml", "front-matter", "encoding"))] == []


@pytest.mark.parametrize("moment", [("generator.files:write_atomic", "before", 1),
                                    ("pathlib:Path.write_bytes", "after", 1),
                                    ("os:replace", "after", 1)])
def test_adopt_killed_at_any_write_leaves_the_synthesis_whole(small: Path, tmp_path: Path, moment) -> None:
    synthesis = small / "notes" / "synthese-2025.md"
    before = synthesis.read_bytes()
    reference = copy_fixture("small", tmp_path / "reference")
    adopt_args = ("--by", "Conseil des élèves", "--date", "2025-04-10")
    assert _carnet("adopt", reference / "notes" / "synthese-2025.md", *adopt_args).returncode == 0
    adopted = (reference / "notes" / "synthese-2025.md").read_bytes()
    run = _carnet("adopt", synthesis, *adopt_args, moment=moment)
    assert run.returncode == -signal.SIGKILL
    assert synthesis.read_bytes() in (before, adopted)
    assert sorted(p.name for p in synthesis.parent.iterdir() if p.name.startswith(".")) == [] or \
        moment[0] == "pathlib:Path.write_bytes", "no temporary file left, except when killed mid-write"
    _parses(small)
    if synthesis.read_bytes() == before:
        assert _carnet("adopt", synthesis, *adopt_args).returncode == 0
    assert synthesis.read_bytes() == adopted
    _parses(small)


def test_verify_killed_between_batches_keeps_what_was_judged_and_resumes(small: Path, llm_server) -> None:
    _configure_llm(small, llm_server.url)
    verdict = json.dumps({"verdicts": [{"pair": "p1", "verdict": "supported", "rationale": "Le passage le dit."}]})
    llm_server.script(reply(verdict), reply(verdict))
    run = _carnet("verify", "--content", small, "--batch", "1", moment=("generator.files:write_atomic", "after", 1))
    assert run.returncode == -signal.SIGKILL
    _parses(small)
    files = sorted((small / "verdicts").glob("*.yaml"))
    assert len(files) == 1, "the first batch's verdicts are recorded, whole"
    assert len(yaml.safe_load(files[0].read_text(encoding="utf-8"))["verdicts"]) == 1
    run = _carnet("verify", "--content", small, "--batch", "1")
    assert run.returncode == 0, run.stderr
    assert len(llm_server.requests) == 2, "only the pair still unjudged was sent again"
    judged = [a for assessments in check_content(small).assessments.values() for a in assessments if a.judgeable]
    assert judged == [], "every pair has exactly its verdict"
    records = [r for f in (small / "verdicts").glob("*.yaml")
               for r in yaml.safe_load(f.read_text(encoding="utf-8"))["verdicts"]]
    pairs = [(r["claim_sha256"], r["source_sha256"]) for r in records]
    assert len(pairs) == len(set(pairs)) == 2, "no pair judged twice"



def _restore(root: Path, tree: dict[str, bytes]) -> None:
    for path in sorted(root.rglob("*"), reverse=True):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and rel not in tree:
            path.unlink()
    for rel, data in tree.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def _kill_apply_at_every_write(content: Path, proposal: Path, reference: dict[str, bytes]) -> int:
    """Kill ``carnet apply`` after its 1st, 2nd… atomic write until it runs through; after
    each kill, everything parses, ``check`` warns, and applying again gives ``reference``."""
    before = _tree(content)
    for nth in range(1, 20):
        run = _carnet("apply", proposal, moment=("generator.files:write_atomic", "after", nth))
        if run.returncode == 0:
            assert _tree(content) == reference
            return nth - 1
        assert run.returncode == -signal.SIGKILL, run.stderr
        _parses(content)
        left = (content / ".carnet-change.json").exists()
        check = _carnet("check", content)
        assert ("was interrupted and left a change half made" in check.stderr) == left, check.stderr
        again = _carnet("apply", proposal)
        assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
        assert ("was interrupted: its files are back as they were before it" in again.stderr) == left
        assert _tree(content) == reference, f"killed after write {nth}: applying again gives another result"
        _restore(content, before)
    raise AssertionError("apply never ran through")


def test_apply_of_section_operations_killed_after_any_write_is_undone_then_redone(small: Path,
                                                                                  tmp_path: Path) -> None:
    from generator.commands.proposals import propose

    proposal = propose(small, "wiki-budget").path
    reference_root = tmp_path / "reference"
    reference_root.mkdir()
    reference = copy_fixture("small", reference_root)
    _restore(reference, _tree(small))
    assert _carnet("apply", reference / proposal.relative_to(small)).returncode == 0
    kills = _kill_apply_at_every_write(small, proposal, _tree(reference))
    assert kills >= 3, "journal, article, journal again, record: each write was a moment to die"


def test_apply_of_extractions_killed_after_any_write_is_undone_then_redone(small: Path, tmp_path: Path,
                                                                           llm_server) -> None:
    from generator.commands.analyse import run_analyse

    _configure_llm(small, llm_server.url)
    llm_server.script(reply(json.dumps({"passages": [
        {"quote": "la réserve est de 800 euros", "kind": "fait", "categories": [{"axis": "theme", "category": "Budget"}]}]})))
    (item,) = run_analyse(small, ["conseil-a"], notebook="conseil").notes
    reference_root = tmp_path / "reference"
    reference_root.mkdir()
    reference = copy_fixture("small", reference_root)
    _restore(reference, _tree(small))
    assert _carnet("apply", reference / item.path.relative_to(small)).returncode == 0
    assert "la réserve est de 800 euros" in (reference / "notes" / "conseil-a.extractions.yaml").read_text("utf-8")
    kills = _kill_apply_at_every_write(small, item.path, _tree(reference))
    assert kills >= 3


def test_apply_killed_inside_an_atomic_write_leaves_no_temporary_file(small: Path) -> None:
    """A kill between an atomic write's temporary file and its rename leaves that hidden
    file in content/; the next writing command removes it and says so."""
    from generator.commands.proposals import propose

    proposal = propose(small, "wiki-budget").path
    before = _tree(small)
    for nth in (1, 2):
        run = _carnet("apply", proposal, moment=("os:replace", "before", nth))
        assert run.returncode == -signal.SIGKILL, run.stderr
        left = [rel for rel in _tree(small) if ".tmp-" in rel]
        assert left, "the kill left the temporary file of the write it interrupted"
        again = _carnet("apply", proposal)
        assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
        assert f"removed {left[0]}, a temporary file a killed command left" in again.stderr, again.stderr
        assert not [rel for rel in _tree(small) if ".tmp-" in rel]
        _restore(small, before)


def test_an_interrupted_change_never_undoes_a_file_edited_by_hand_since(small: Path) -> None:
    from generator.commands.proposals import propose

    proposal = propose(small, "wiki-budget").path
    wiki = small / "notes" / "wiki-budget.md"
    run = _carnet("apply", proposal, moment=("generator.files:write_atomic", "after", 2))  # journal, then article
    assert run.returncode == -signal.SIGKILL
    edited = wiki.read_bytes() + "\nUne ligne ajoutée à la main après la panne.\n".encode()
    wiki.write_bytes(edited)
    again = _carnet("apply", proposal)
    assert "notes/wiki-budget.md was changed since, and is left as it is" in again.stderr, again.stderr
    assert wiki.read_bytes().startswith(edited.rstrip(b"\n")) or wiki.read_bytes() == edited


def test_a_change_that_fails_puts_every_file_back(tmp_path: Path) -> None:
    from generator.journal import JOURNAL, Change

    (tmp_path / "a.txt").write_bytes(b"A")
    with pytest.raises(RuntimeError), Change(tmp_path, "test") as change:
        change.write("a.txt", b"A2")
        change.write("new/b.txt", b"B")
        raise RuntimeError("the second half failed")
    assert (tmp_path / "a.txt").read_bytes() == b"A" and not (tmp_path / "new" / "b.txt").exists()
    assert not (tmp_path / JOURNAL).exists()
    with Change(tmp_path, "test") as change:
        change.write("a.txt", b"A3")
    assert (tmp_path / "a.txt").read_bytes() == b"A3" and not (tmp_path / JOURNAL).exists()
