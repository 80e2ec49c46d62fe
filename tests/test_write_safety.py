"""Writes into the user's files are proven safe, and a model's answer is untrusted input
(issue 18; DESIGN.md INV-15, INV-19).

Every command that writes into ``content/`` — ``verify``, ``analyse`` + ``apply``,
``propose`` + ``apply``, ``adopt``, ``check --fix-anchors --write``, ``select
--oppositions`` — must leave every record a person wrote byte for byte where it was,
add exactly its own records, and leave files the build still reads; when it cannot, it
writes nothing, says which file and why, and exits 2. Nothing the endpoint says (a model
name, an answer) and nothing in its address (credentials) may end up as markup in a
content file, on the site or raw on the terminal.

One test per bug found (1 verify appends in any layout, 2 select --oppositions keeps a
person's pairs, 3 a model name is never markup, 4 no credentials from the endpoint's
address, 5 full and read-only disks, 6 a half-applied change is never published),
one for hostile text in every free-text field of an answer, and a hypothesis property
over random sequences of the writing commands on files in random layouts.

The commands run as a user runs them (``python -m generator`` in a subprocess, or
``generator.cli.main`` in this process where many runs are needed), against the
scripted OpenAI-compatible server of tests/support/llm_server.py whose answers
tests/support/answers.py builds from each request. Content files are laid out the
ways people write YAML by tests/support/layouts.py, which also finds each record's
exact source text.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, Phase, event, example, given, settings
from hypothesis import strategies as st

from support.answers import Answers, oppositions_answer
from support.cli import REPOSITORY, Run, carnet, carnet_here, configure_llm, qualify, tree
from support.corpus import FIXTURES, copy_fixture, replace
from support.layouts import LAYOUTS, Layout, load, missing_records, records, relayout

pytestmark = pytest.mark.slow  # fault injection of writes: full and read-only disks, kills, a property over command sequences

EXAMPLE = REPOSITORY / "content"
VERDICTS = "verdicts/cvl-wiki-budget.yaml"
OPPOSITIONS = "oppositions/cvl-wiki-budget.yaml"
SIDECAR = "notes/conseil-a.extractions.yaml"


def example_copy(tmp_path: Path) -> Path:
    """A copy of the example corpus (never written in place)."""
    target = tmp_path / "content"
    shutil.copytree(EXAMPLE, target)
    return target


def no_traceback(run: Run) -> None:
    assert "Traceback" not in run.err and "Traceback" not in run.out, str(run)


def yaml_files(content: Path) -> dict[str, bytes]:
    return {rel: data for rel, data in tree(content).items() if rel.endswith(".yaml")}


def assert_every_yaml_file_parses(content: Path) -> None:
    for rel, data in yaml_files(content).items():
        try:
            load(data)
        except yaml.YAMLError as exc:
            raise AssertionError(f"{rel} no longer parses: {exc}\n{data.decode('utf-8', 'replace')}") from None


def parsed(path: Path):
    """What a content file says; a clear failure when it no longer parses."""
    data = path.read_bytes()
    try:
        return load(data)
    except yaml.YAMLError as exc:
        raise AssertionError(f"{path.name} no longer parses: {exc}\n{data.decode('utf-8', 'replace')}") from None


def built(content: Path, out: Path, *flags: str) -> Run:
    run = carnet_here("build", content, "--out", out, "--no-search", *flags)
    no_traceback(run)
    return run


def pending_proposal(content: Path, kind: str, target: str, before: dict[str, bytes]) -> Path:
    """The proposal file a command just wrote under proposals/KIND/TARGET/."""
    new = [rel for rel in tree(content) if rel.startswith(f"proposals/{kind}/{target}/") and rel not in before
           and not rel.endswith("/analysed.yaml")]
    assert len(new) == 1, f"expected one new proposal, found {new}"
    return content / new[0]


# -- 1. verify appends verdicts to a file in any layout --------------------------------------

VERDICT_CASES = [pytest.param(how, id=how.name) for how in LAYOUTS] + [
    pytest.param("empty-list", id="empty-list"), pytest.param("absent", id="absent")]


@pytest.mark.parametrize("how", VERDICT_CASES)
def test_verify_appends_its_verdicts_to_a_file_in_any_layout(tmp_path: Path, llm_server, how) -> None:
    """A person's verdicts file, however it is laid out (items at column 0, 2 or 4,
    comments between records, flow style, quoted keys, CRLF, a BOM, no final newline,
    empty, absent): after ``carnet verify`` it still parses, every verdict the person
    wrote is there byte for byte, the model's verdicts are added, and a strict build
    passes. (It used to append ``  - claim:`` under items written at column 0: the file
    stopped parsing and the next build failed with yaml-syntax.)"""
    content = example_copy(tmp_path)
    path = content / VERDICTS
    if how == "empty-list":
        path.write_bytes(b"verdicts: []\n")
    elif how == "absent":
        path.unlink()
    else:
        path.write_bytes(relayout(path.read_bytes(), how))
    before = path.read_bytes() if path.exists() else None
    old = load(before)["verdicts"] if before is not None else []
    configure_llm(content, llm_server.url)
    qualify(content)  # the scripted judge calibrated: its verdicts give states, and --strict has no warning
    llm_server.respond(Answers().respond)

    run = carnet_here("verify", "cvl-wiki-budget", "--content", content)
    no_traceback(run)
    assert run.code == 0, str(run)
    assert llm_server.requests, "pairs were sent to the model"
    now = path.read_bytes()
    value = parsed(path)
    assert isinstance(value, dict) and isinstance(value.get("verdicts"), list), now.decode()
    if before is not None:
        assert missing_records(before, now) == [], "a verdict the person wrote moved or changed"
    verdicts = value["verdicts"]
    assert verdicts[: len(old)] == old, "the person's verdicts read back as they were, first"
    added = verdicts[len(old):]
    assert all(v["provenance"]["method"] == "llm" for v in added), added
    # the 5 unjudged pairs of the wiki; without the person's verdicts, theirs are unjudged too
    assert len(added) == 5 if old else len(added) >= 5, added
    assert carnet_here("verify", "cvl-wiki-budget", "--content", content).out.startswith("nothing to judge"), \
        "the verdicts written are the ones the build reads"
    strict = built(content, tmp_path / "site", "--strict")
    assert strict.code == 0, str(strict)


# -- 2. select --oppositions never replaces a person's oppositions ----------------------------

def _oppositions_found(content: Path, pair: set[str]) -> list[tuple[str, dict, dict]]:
    """Every record of an opposition between the two ids, anywhere under content/: (file,
    record, the file's whole value)."""
    found = []
    for rel, data in yaml_files(content).items():
        value = load(data)
        items = value.get("oppositions") if isinstance(value, dict) else None
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and {item.get("a"), item.get("b")} == pair:
                found.append((rel, item, value))
    return found


@pytest.mark.parametrize("answer", ["empty", "pair"])
def test_select_oppositions_keeps_the_oppositions_a_person_wrote(tmp_path: Path, llm_server, answer: str) -> None:
    """The example's oppositions of cvl-wiki-budget were read by a person (method: human).
    ``carnet select --oppositions`` used to replace them with whatever the model said
    (an empty list included) and exit 0. Now every human pair stays byte for byte and
    still says method human; a pair the model finds is recorded marked ``method: llm``
    (beside them with its own provenance, or in a file of its own); the build passes."""
    content = example_copy(tmp_path)
    path = content / OPPOSITIONS
    before = path.read_bytes()
    human = load(before)
    assert human["provenance"]["method"] == "human" and len(human["oppositions"]) >= 4
    configure_llm(content, llm_server.url)
    answers = Answers(oppositions=answer)
    llm_server.respond(answers.respond)

    run = carnet_here("select", "cvl-wiki-budget", "--oppositions", "--content", content)
    no_traceback(run)
    assert "oppositions" in answers.seen, "the oppositions pass was sent"
    assert path.exists(), "the person's oppositions file is still there"
    now = path.read_bytes()
    assert missing_records(before, now) == [], "a pair the person wrote moved or changed"
    assert load(now)["provenance"]["method"] == "human", "the person's pairs are never attributed to a model"
    assert [o for o in load(now)["oppositions"] if "provenance" not in o][: len(human["oppositions"])] == \
        human["oppositions"]
    if answer == "pair":
        assert run.code == 0, str(run)
        prompt = llm_server.requests[-1]["body"]["messages"][-1]["content"]
        (new,) = oppositions_answer(prompt)["oppositions"]
        pair = {new["a"], new["b"]}
        assert all({o["a"], o["b"]} != pair for o in human["oppositions"])
        found = _oppositions_found(content, pair)
        assert found, "the model's pair is recorded somewhere under content/"
        for rel, record, value in found:
            method = (record.get("provenance") or value.get("provenance") or {}).get("method")
            assert method == "llm", f"{rel}: the model's pair says method {method!r}"
    else:
        assert run.code in (0, 2), str(run)
    strict = built(content, tmp_path / "site", "--strict")
    assert strict.code == 0, str(strict)


# -- 3. a model name is data, never markup ---------------------------------------------------

def _breaking_out(newline: str, indent: str) -> str:
    """A model name that, written raw after ``# … model``, would end the comment and
    start an extraction of its own at the file's indentation."""
    lines = [f"{indent}- id: injected", f"{indent}  quote: Deuxième paragraphe", f"{indent}  kind: fait",
             f"{indent}  author: Mallory", f"{indent}  #"]
    return "m" + newline + newline.join(lines)


INJECTIONS = {
    "indent-2": _breaking_out("\n", "  "),
    "indent-0": _breaking_out("\n", ""),
    "carriage-return": _breaking_out("\r", "  "),
    # line breaks to YAML 1.1 (PyYAML, libyaml) beyond \n and \r
    "line-separator": _breaking_out("\u2028", "  "),
    "next-line": _breaking_out("\x85", "  "),
    "terminal-escapes": "\x1b[31mrouge\x1b[0m\x00\x07",
}


# how the site names an extraction: its anchor, its annotation, its highlights
SITE_ID = re.compile(rb'ext-injected\b|extraction:injected\b|data-ext="[^"]*\binjected\b')


def _ids(path: Path) -> list[str]:
    return [e["id"] for e in parsed(path)["extractions"]]


@pytest.mark.parametrize("model", list(INJECTIONS.values()), ids=list(INJECTIONS))
def test_a_model_name_never_adds_an_extraction(small: Path, tmp_path: Path, llm_server, model: str) -> None:
    """The server names the model it answered with; that name is the endpoint's word,
    not ours. A name holding a line break used to break out of the ``# added by 'carnet
    apply' … model X`` comment written into notes/<note>.extractions.yaml, and an
    extraction nobody reviewed landed in the file and on the site. Now ``apply`` adds
    exactly the accepted passages: the file parses, its ids are the old ones plus the
    accepted ones, and "injected" is nowhere in the notes nor on the site."""
    configure_llm(small, llm_server.url)
    llm_server.respond(Answers(model=model).respond)
    sidecar = small / SIDECAR
    old_ids = _ids(sidecar)
    before = tree(small)
    run = carnet_here("analyse", "conseil-a", "--notebook", "conseil", "--content", small)
    no_traceback(run)
    assert run.code == 0, str(run)
    proposal = pending_proposal(small, "extractions", "conseil-a", before)

    applied = carnet_here("apply", proposal)
    no_traceback(applied)
    assert applied.code == 0, str(applied)
    results = load(proposal.read_bytes())["applied"]["results"]
    accepted = [r["id"] for r in results if r["decision"] == "accepted"]
    assert accepted, f"the passage the model quoted from the note is accepted: {results}"
    assert _ids(sidecar) == old_ids + accepted
    assert missing_records(before[SIDECAR], sidecar.read_bytes()) == []
    for path in sorted((small / "notes").glob("*.extractions.yaml")):
        assert "injected" not in _ids(path), f"{path.name}: an extraction nobody reviewed"
    site = tmp_path / "site"
    assert built(small, site).code == 0
    published = [p for p in site.rglob("*") if p.is_file() and SITE_ID.search(p.read_bytes())]
    assert published == [], "an extraction 'injected' is on the site"


ESCAPES = "\x1b[31mrouge\x1b[0m\x1b]0;titre\x07\x1b[2J"


@pytest.mark.parametrize("kind", ["extractions", "sections"])
def test_a_model_name_with_terminal_escapes_is_never_printed_raw(small: Path, llm_server, kind: str) -> None:
    """A model name holding ANSI escapes (colours, a window title, clear screen) is shown
    by ``carnet review`` (and every other command) as visible text, never sent raw to
    the terminal."""
    configure_llm(small, llm_server.url)
    llm_server.respond(Answers(model=ESCAPES).respond)
    before = tree(small)
    if kind == "extractions":
        made = carnet("analyse", "conseil-a", "--notebook", "conseil", "--content", small)
    else:
        made = carnet("propose", "wiki-budget", "--provider", "llm", "--content", small)
    no_traceback(made)
    assert made.code == 0, str(made)
    proposal = pending_proposal(small, kind, "conseil-a" if kind == "extractions" else "wiki-budget", before)
    shown = carnet("review", proposal)
    no_traceback(shown)
    assert shown.code == 0, str(shown)
    assert "rouge" in shown.out, "the model is still named"
    for run in (made, shown):
        assert "\x1b" not in run.out and "\x1b" not in run.err and "\x07" not in run.out, repr(run.out)


GARNISHES = {
    "lone-surrogate": "\ud800",
    "nul": "\x00",
    "line-separator": "\u2028- id: injected\u2028  quote: x",
    "crlf-record": "\r\n- claim: injected\r\n  verdict: supported",
    "terminal": "\x1b[2J\x1b]0;titre\x07",
    "front-matter": "\n---\ntitle: injected\n---\n",
}


@pytest.mark.parametrize("garnish", list(GARNISHES.values()), ids=list(GARNISHES))
@pytest.mark.parametrize("command", ["verify", "propose-apply", "select", "analyse-apply"])
def test_a_hostile_answer_never_makes_content_unreadable(small: Path, tmp_path: Path, llm_server, command: str,
                                                         garnish: str) -> None:
    """Every free-text field of an answer (a verdict's rationale, a section's content, an
    opposition's question, a passage's category) may hold anything JSON can carry: a
    lone surrogate, a NUL, YAML line breaks, terminal escapes, a front-matter fence. The
    command either records it as inert text or refuses it (exit 2 or 3, nothing
    written); either way every content file still loads, the build passes, and nothing
    raw reaches the terminal. (Helpers shared with the property test are further down.)"""
    with (small / "notes" / "wiki-budget.md").open("a", encoding="utf-8") as wiki:
        wiki.write(SECOND_CLAIM)
    configure_llm(small, llm_server.url)
    llm_server.respond(Answers(garnish=garnish).respond)
    checked, start_errors = _errors(small)
    assert start_errors == set(), str(checked)
    start = _protected(yaml_files(small))
    runs = []
    before = tree(small)
    if command == "verify":
        runs.append(carnet_here("verify", "--content", small))
    elif command == "select":
        runs.append(carnet_here("select", "wiki-budget", "--oppositions", "--content", small))
    else:
        replace(small, "notes/wiki-budget.md", SECOND_CLAIM, "\n")  # a-two-paragraphs uncited: something to propose
        before = tree(small)
        if command == "propose-apply":
            runs.append(carnet_here("propose", "wiki-budget", "--provider", "llm", "--content", small))
            kind, target = "sections", "wiki-budget"
        else:
            runs.append(carnet_here("analyse", "conseil-a", "--notebook", "conseil", "--content", small))
            kind, target = "extractions", "conseil-a"
        if runs[-1].code == 0:
            proposal = pending_proposal(small, kind, target, before)
            runs.append(carnet("review", proposal))
            before = tree(small)
            runs.append(carnet_here("apply", proposal))
    for run in runs:
        no_traceback(run)
        assert run.code in (0, 1, 2, 3), str(run)
        assert "\x1b" not in run.text and "\x07" not in run.text, repr(run.text)
    if runs[-1].code != 0:
        now = tree(small)
        assert sorted(rel for rel in set(now) | set(before) if now.get(rel) != before.get(rel)) == [], \
            f"refused, yet wrote:\n{runs[-1]}"
    assert_every_yaml_file_parses(small)
    checked, errors = _errors(small)
    assert errors == set(), str(checked)
    _check_records_kept(start, small, command)
    site = built(small, tmp_path / "site")
    assert site.code == 0, str(site)
    published = [p for p in (tmp_path / "site").rglob("*") if p.is_file() and SITE_ID.search(p.read_bytes())]
    assert published == []


# -- 4. credentials in the endpoint's address ------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("address", ["userinfo", "userinfo-and-query", "down"])
def test_credentials_in_the_endpoint_address_are_never_written_or_printed(small: Path, llm_server,
                                                                          address: str) -> None:
    """``llm.base_url`` may carry a user and password (``http://user:s3cret@host/v1``) or
    a token in its query string. Provenance records the endpoint, and messages name it:
    neither may ever hold the secret — not in a file under content/, not on stdout or
    stderr — whether the endpoint answers or is down."""
    port = llm_server.url.split(":")[2].split("/")[0] if address != "down" else str(_closed_port())
    url = f"http://user:s3cret@127.0.0.1:{port}/v1" + ("" if address == "userinfo" else "?token=abc")
    configure_llm(small, url)
    llm_server.respond(Answers().respond)
    commands = [("propose", "wiki-budget", "--provider", "llm"), ("analyse", "conseil-a", "--notebook", "conseil"),
                ("verify",)]
    for command in commands:
        sent = len(llm_server.requests)
        run = carnet(*command, "--content", small)
        no_traceback(run)
        if address == "userinfo":
            assert run.code == 0 and len(llm_server.requests) > sent, f"the endpoint answered {command}:\n{run}"
        elif address == "down":
            assert run.code != 0, str(run)
        assert "s3cret" not in run.text and "token=abc" not in run.text, str(run)
    for rel, data in tree(small).items():
        if rel != "carnet.yaml":
            assert b"s3cret" not in data and b"token=abc" not in data, f"{rel} holds the endpoint's secret"


# -- 5. a full or read-only disk -------------------------------------------------------------

@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A directory on a small file system of its own (a 4 MB tmpfs), so that it can be
    filled or made read-only like a real disk (permissions do not bind root)."""
    path = tmp_path / "disk"
    path.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(path)], capture_output=True).returncode == 0
    if not mounted:
        reason = "cannot mount a tmpfs here (needs root and the right to mount): no real full or read-only disk"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _fill(where: Path, left: int) -> None:
    """Fill the file system of ``where`` until ``left`` bytes are free."""
    stats = os.statvfs(where)
    size = max(0, stats.f_bavail * stats.f_frsize - left)
    with (where / "filler.bin").open("wb") as filler:
        chunk = b"\0" * 65536
        try:
            while size > 0:
                filler.write(chunk[: min(size, len(chunk))])
                size -= len(chunk)
            filler.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


@pytest.mark.parametrize("fault", ["full", "almost-full", "read-only"])
@pytest.mark.parametrize("command", ["apply", "verify"])
def test_a_full_or_read_only_disk_refuses_the_write_and_changes_nothing(disk: Path, llm_server, fault: str,
                                                                      command: str) -> None:
    """``carnet apply`` (of an extractions proposal) and ``carnet verify`` on a full or
    read-only disk: exit status 2, a message naming the file and the reason, no
    traceback, and every content file (journal and temporary files included) exactly as
    before — except, for ``verify`` on a disk with a little room left, the verdicts
    files of the batches judged before the disk filled, each whole. Once there is room
    again, running the command again finishes the job."""
    content = copy_fixture("small", disk)
    configure_llm(content, llm_server.url)
    llm_server.respond(Answers().respond)
    if command == "apply":
        before = tree(content)
        assert carnet("analyse", "conseil-a", "--notebook", "conseil", "--content", content).code == 0
        args: tuple[object, ...] = ("apply", pending_proposal(content, "extractions", "conseil-a", before))
        names = ("notes/conseil-a.extractions.yaml", "proposals/extractions/conseil-a/", ".carnet-change.json")
    else:
        (content / "verdicts").mkdir()
        (content / "verdicts" / "wiki-budget.yaml").write_text(
            "verdicts:\n- claim: Un ancien énoncé\n  claim_sha256: sha256:" + "0" * 64 + "\n  source: ext:a-budget\n"
            "  source_sha256: sha256:" + "1" * 64 + "\n  verdict: partial\n  rationale: Écrit à la main.\n"
            "  provenance:\n    method: human\n    date: '2025-01-05'\n", encoding="utf-8")
        args = ("verify", "--content", content)
        names = ("verdicts/wiki-budget.yaml", "verdicts/synthese-2025.yaml", ".carnet-change.json")
    before = tree(content)
    if fault == "read-only":
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    else:
        _fill(disk, 0 if fault == "full" else 6 * 1024)
    run = carnet(*args)
    no_traceback(run)
    assert run.code == 2, str(run)
    assert any(name in run.err for name in names), f"the message names the file it could not write:\n{run}"
    reason = "Read-only file system" if fault == "read-only" else "No space left on device"
    assert reason in run.err, str(run)
    if not (disk / "content" / ".carnet-change.json").exists():  # no journal could be kept: none is claimed
        assert "journal" not in run.err and "fails until then" not in run.err, str(run)
    if fault == "read-only":
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
    else:
        (disk / "filler.bin").unlink()
    now = tree(content)
    changed = sorted(rel for rel in set(now) | set(before) if now.get(rel) != before.get(rel))
    if command == "verify" and fault == "almost-full":
        assert all(rel.startswith("verdicts/") and rel.endswith(".yaml") for rel in changed), changed
        for rel in changed:
            assert isinstance(parsed(content / rel)["verdicts"], list)
            assert missing_records(before.get(rel, b"verdicts: []\n"), now[rel]) == []
    else:
        assert changed == [], "nothing was written, nothing was left behind"
    again = carnet(*args)
    no_traceback(again)
    assert again.code == 0, str(again)


def test_analyse_on_a_read_only_disk_says_nothing_was_written(disk: Path, llm_server) -> None:
    """``carnet analyse`` on a read-only content folder: exit 2, the file and the reason,
    and no word of a journal (none could be written, nothing was changed)."""
    content = copy_fixture("small", disk)
    configure_llm(content, llm_server.url)
    llm_server.respond(Answers().respond)
    before = tree(content)
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    try:
        run = carnet("analyse", "conseil-a", "--notebook", "conseil", "--content", content)
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
    no_traceback(run)
    said = run.out + run.err
    assert run.code == 2 and "Read-only file system" in said, str(run)
    assert "journal" not in said and "fails until then" not in said, str(run)
    assert tree(content) == before
    assert carnet("check", "--strict", content).code == 0


# -- 6. a half-applied change is never published ---------------------------------------------

@pytest.mark.parametrize("kind", ["sections", "extractions"])
def test_strict_check_and_build_refuse_a_half_applied_change(small: Path, tmp_path: Path, llm_server,
                                                             kind: str) -> None:
    """``carnet apply`` killed between its two writes (the article or the extractions
    file written, the proposal not yet) leaves a change half made. Until the next
    writing command puts it right, ``carnet check --strict`` and ``carnet build --strict``
    fail (exit 1) and say a change was interrupted — they used to exit 0 and publish the
    half-applied extractions. Running ``carnet apply`` again recovers and finishes, and
    ``check --strict`` passes again."""
    configure_llm(small, llm_server.url)
    llm_server.respond(Answers().respond)
    before = tree(small)
    if kind == "sections":
        made = carnet("propose", "wiki-budget", "--content", small)
        target = "wiki-budget"
    else:
        made = carnet("analyse", "conseil-a", "--notebook", "conseil", "--content", small)
        target = "conseil-a"
    assert made.code == 0, str(made)
    proposal = pending_proposal(small, kind, target, before)
    before_kill = carnet("check", "--strict", small)
    if kind == "sections":  # a proposal waiting for review is the one thing --strict says (issue 56)
        assert before_kill.code == 1 and "[pending-proposal]" in before_kill.err, str(before_kill)
        assert "interrupted" not in before_kill.err
    else:  # build never reads the proposals analyse writes
        assert before_kill.code == 0, "the content is clean before"

    killed = carnet("apply", proposal, moment=("generator.journal:Change.write", "after", 1))
    assert killed.code == -signal.SIGKILL, f"apply was killed after its first write:\n{killed}"
    check = carnet("check", "--strict", small)
    no_traceback(check)
    assert check.code == 1 and "interrupted" in check.err, str(check)
    out = tmp_path / "site"
    build = carnet("build", small, "--out", out, "--strict", "--no-search")
    no_traceback(build)
    assert build.code == 1 and "interrupted" in build.text, str(build)
    assert not (out / "manifest.json").exists(), "nothing was published"
    assert carnet("check", small).code in (0, 1), "a plain check still reads the content"

    again = carnet("apply", proposal)
    no_traceback(again)
    assert again.code == 0 and "interrupted" in again.err, str(again)
    assert not (small / ".carnet-change.json").exists()
    recovered = carnet("check", "--strict", small)
    assert recovered.code == 0, str(recovered)
    assert carnet("build", small, "--out", out, "--strict", "--no-search").code == 0


# -- the property: any sequence of writing commands, any layout --------------------------------

LAID_OUT = ["verdicts/wiki-budget.yaml", "notes/conseil-a.extractions.yaml", "notes/secret-a.extractions.yaml",
            "oppositions/wiki-budget.yaml", "contestations/wiki-budget.yaml"]
RELOCATED = "a-two-paragraphs"  # its note is edited at the start: check --fix-anchors --write may rewrite its quote
HUMAN_FILES = {
    "verdicts/wiki-budget.yaml": """# Verdicts recorded by hand, for claims written before the current text.
verdicts:
  - claim: Le budget est de trois mille euros
    claim_sha256: sha256:{zeros}
    source: ext:a-budget
    source_sha256: sha256:{ones}
    verdict: unsupported
    rationale: Le passage donne un autre montant.
    provenance:
      method: human
      author: Anne Enseignante
      date: '2025-01-05'
  - claim: Le budget a été voté
    claim_sha256: sha256:{twos}
    source: ext:a-two-paragraphs
    source_sha256: sha256:{ones}
    verdict: supported
    rationale: "Voté à l'unanimité : le passage le dit."
    provenance: {{method: human, author: Yann Realname, date: '2025-01-06'}}
""",
    "oppositions/wiki-budget.yaml": """# Read by a person over the whole perimeter.
wiki: wiki-budget
provenance:
  method: human
  author: Anne Enseignante
  date: '2025-01-06'
oppositions:
  - a: a-budget
    b: a-two-paragraphs
    question: Le budget est-il arrêté ?
""",
    "contestations/wiki-budget.yaml": """contestations:
  - claim: claim-5e909097
    author: Yann Realname
    date: 2025-01-07
    reason: Il manque la part de la maison des lycéens.
  - claim: claim-00000000
    author: Anne Enseignante
    date: 2025-01-08
    reason: "Un ancien énoncé, contesté : gardé pour mémoire."
""",
}
SECOND_CLAIM = "\nIl a été voté à l'unanimité [[ext:a-two-paragraphs]].\n"
STEPS = ["verify", "verify-twice", "analyse-apply", "propose-extractive-apply", "propose-llm-apply", "adopt",
         "fix-anchors", "select-oppositions"]

MUST_RUN = ("verify", "verify-twice", "analyse-apply", "propose-extractive-apply", "select-oppositions")
"""Steps whose first command must succeed whatever the layout: the files they extend
can always be extended in place."""
layouts = st.builds(Layout, indent=st.sampled_from([0, 2, 4]), flow=st.sampled_from([False, False, False, True]),
                    comments=st.booleans(), quoted_keys=st.booleans(), crlf=st.booleans(), bom=st.booleans(),
                    final_newline=st.booleans())
examples = itertools.count()


def _prepare(root: Path, url: str, chosen: dict[str, Layout]) -> Path:
    """The small fixture with a person's verdicts, oppositions and contestations, a
    second claim in its wiki, a note edit that relocates one extraction, and its YAML
    files laid out as ``chosen``."""
    content = copy_fixture("small", root)
    for rel, text in HUMAN_FILES.items():
        path = content / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(zeros="0" * 64, ones="1" * 64, twos="2" * 64), encoding="utf-8")
    with (content / "notes" / "wiki-budget.md").open("a", encoding="utf-8") as wiki:
        wiki.write(SECOND_CLAIM)
    replace(content, "notes/conseil-a.md", "Deuxième paragraphe :", "Deuxième paragraph :")
    configure_llm(content, url)
    qualify(content)  # the scripted judge calibrated: --strict has no suggestion to warn of
    for rel, how in chosen.items():
        path = content / rel
        data = path.read_bytes()
        path.write_bytes(relayout(data, how))
        assert load(path.read_bytes()) == load(data), f"{rel}: laying it out as {how.name} changed what it says"
    return content


def _errors(content: Path) -> tuple[Run, set[tuple[str, str]]]:
    run = carnet_here("check", content)
    no_traceback(run)
    found = set()
    for line in run.err.splitlines():
        if ": error [" in line:
            location, _, rest = line.partition(": error [")
            found.add((location.rsplit(":", 1)[0] if location.rsplit(":", 1)[-1].isdigit() else location,
                       rest.partition("]")[0]))
    return run, found


def _record_value(text: str):
    value = yaml.safe_load(text)
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def _protected(files: dict[str, bytes]) -> dict[str, bytes]:
    """The YAML files whose records the property protects (all of them, at the start)."""
    return {rel: data for rel, data in files.items() if records(data)}


def _check_records_kept(start: dict[str, bytes], content: Path, step: str) -> None:
    for rel, data in start.items():
        path = content / rel
        assert path.exists(), f"after {step}: {rel}, which a person wrote, is gone"
        lost = missing_records(data, path.read_bytes())
        moved = []
        for text in lost:
            record = _record_value(text)
            if isinstance(record, dict) and record.get("id") == RELOCATED:
                now = [e for e in load(path.read_bytes())["extractions"] if e.get("id") == RELOCATED]
                assert len(now) == 1, f"after {step}: {RELOCATED} lost"
                assert {k: v for k, v in now[0].items() if k != "quote"} == \
                    {k: v for k, v in record.items() if k != "quote"}, f"after {step}: only its quote may change"
                continue
            moved.append(text)
        assert moved == [], f"after {step}: records of {rel} changed or moved:\n" + "\n---\n".join(moved) + \
            "\n=== file now:\n" + path.read_bytes().decode("utf-8", "replace")


def _human_edit(step: str, content: Path, state: dict) -> None:
    """What a person does before a step: adopted acts are immutable, so to adopt again
    they draft a new synthesis (a copy of the fixture's draft)."""
    if step == "adopt" and state.get("adopted"):
        state["synthesis"] = content / "notes" / f"synthese-2025-{state['adopted']}.md"
        state["synthesis"].write_bytes((FIXTURES / "small" / "notes" / "synthese-2025.md").read_bytes())
    elif step == "adopt":
        state["synthesis"] = content / "notes" / "synthese-2025.md"


def _step(step: str, content: Path, state: dict) -> list[tuple[Run, dict[str, bytes]]]:
    """Run one step (one or two commands), stopping at a refusal; each run with the
    content as it was just before it."""
    runs: list[tuple[Run, dict[str, bytes]]] = []

    def run(*args: object) -> bool:
        before = tree(content)
        runs.append((carnet_here(*args), before))
        return runs[-1][0].code == 0

    def new_proposal(folder: str) -> Path | None:
        new = [rel for rel in tree(content) if rel.startswith(folder) and rel not in runs[-1][1]
               and not rel.endswith("/analysed.yaml")]
        return content / new[0] if len(new) == 1 else None

    if step in ("verify", "verify-twice"):
        if run("verify", "--content", content) and step == "verify-twice":
            run("verify", "--content", content)
    elif step == "analyse-apply":
        if run("analyse", "conseil-a", "--notebook", "conseil", "--all", "--content", content):
            proposal = new_proposal("proposals/extractions/conseil-a/")
            if proposal is not None:
                run("apply", proposal)
    elif step.startswith("propose-"):
        provider = "llm" if step.endswith("llm-apply") else "extractive"
        if run("propose", "wiki-budget", "--provider", provider, "--content", content):
            proposal = new_proposal("proposals/sections/wiki-budget/")
            if proposal is None:  # the model is asked about uncited evidence only: with none, nothing is sent
                assert provider == "llm" and "nothing to propose" in runs[-1][0].out, str(runs[-1][0])
            else:
                run("apply", proposal)
    elif step == "adopt":
        if run("adopt", state["synthesis"], "--by", "Conseil des élèves", "--date", "2025-04-10"):
            state["adopted"] = state.get("adopted", 0) + 1
    elif step == "fix-anchors":
        run("check", content, "--fix-anchors", "--write")
    elif step == "select-oppositions":
        run("select", "wiki-budget", "--oppositions", "--content", content)
    return runs


# each example runs a dozen commands: no shrinking (the failure names its step, file and layout)
@settings(max_examples=int(os.environ.get("CARNET_WRITE_EXAMPLES", "20")), deadline=None,
          phases=(Phase.explicit, Phase.reuse, Phase.generate),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(chosen=st.fixed_dictionaries(dict.fromkeys(LAID_OUT, layouts)),
       steps=st.lists(st.sampled_from(STEPS), min_size=2, max_size=5),
       oppositions=st.sampled_from(["pair", "empty"]), propose=st.sampled_from(["append", "nochange"]),
       seed=st.integers(0, 2**16))
@example(chosen={rel: Layout(indent=0, comments=True, crlf=True) for rel in LAID_OUT},
         steps=["verify", "analyse-apply", "select-oppositions", "fix-anchors"], oppositions="empty",
         propose="append", seed=1)
@example(chosen={rel: Layout(flow=True, bom=True, final_newline=False) for rel in LAID_OUT},
         steps=["propose-llm-apply", "adopt", "verify-twice", "adopt"], oppositions="pair", propose="append", seed=2)
@example(chosen={rel: Layout(indent=4, quoted_keys=True) for rel in LAID_OUT},
         steps=["analyse-apply", "propose-extractive-apply", "fix-anchors", "select-oppositions"], oppositions="pair",
         propose="nochange", seed=3)
def test_any_sequence_of_writing_commands_keeps_every_record_and_the_build(tmp_path: Path, llm_server, chosen,
                                                                           steps, oppositions, propose,
                                                                           seed) -> None:
    """Content files in any layout (verdicts, extractions, oppositions, contestations:
    items at column 0/2/4 or flow style, comments between records, quoted keys, CRLF, a
    BOM, no final newline — each layout says exactly what the file said), then any
    sequence of the writing commands against the scripted endpoint. After every step:
    every YAML file parses and ``carnet check`` finds no error that was not there at the
    start; every record a person wrote is still in its file byte for byte (the relocated
    extraction may only get its quote recorded again); ``carnet build`` succeeds. A
    command may refuse (non-zero exit): then it wrote nothing, and said so without a
    traceback."""
    root = tmp_path / f"example-{next(examples)}"
    root.mkdir()
    content = _prepare(root, llm_server.url, chosen)
    llm_server.respond(Answers(oppositions=oppositions, propose=propose, seed=seed).respond)
    checked, start_errors = _errors(content)
    assert start_errors == set(), f"the prepared content is clean:\n{checked}"
    start = _protected(yaml_files(content))
    state: dict = {}
    for number, step in enumerate(steps):
        name = f"step {number + 1} {step} (of {steps})"
        _human_edit(step, content, state)
        runs = _step(step, content, state)
        for run, _before in runs:
            no_traceback(run)
            assert run.code in (0, 1, 2, 3), f"{name}:\n{run}"
        event(f"{step}: exit {[run.code for run, _before in runs]}")
        if step in MUST_RUN:  # a seam that refused everything would keep every record too
            assert runs[0][0].code == 0, f"{name}: every layout can be extended, yet it refused\n{runs[0][0]}"
        refused, before = runs[-1]
        if refused.code != 0:
            assert refused.err.strip(), f"{name}: a refusal says why\n{refused}"
            now = tree(content)
            wrote = sorted(rel for rel in set(now) | set(before) if now.get(rel) != before.get(rel))
            assert wrote == [], f"{name}: refused, yet wrote {wrote}\n{refused}"
        assert not (content / ".carnet-change.json").exists(), f"{name}: a change was left half made"
        assert_every_yaml_file_parses(content)
        checked, errors = _errors(content)
        assert errors <= start_errors, f"{name}: new errors {sorted(errors - start_errors)}\n{checked}"
        _check_records_kept(start, content, name)
        site = built(content, root / "site")
        assert site.code == 0, f"{name}: the build fails\n{site}"
