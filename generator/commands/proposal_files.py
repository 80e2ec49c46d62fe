"""Proposal files, shared by the commands that write, review and apply them (``propose``,
``analyse``, ``review``, ``apply``): finding a free name, writing one as reviewable YAML,
recording ``apply``'s decisions in it, and reading one back."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

import yaml

from generator.corpus.analysed import RECORD_NAME
from generator.corpus.proposal import ExtractionProposal, Proposal, parse_extraction_proposal, parse_proposal
from generator.corpus.source import parse_yaml
from generator.files import decode_text, read_text_file
from generator.problems import CarnetError
from generator.writes import PlannedWrite, read_back


class ProposalError(CarnetError):
    """The proposal cannot be made, reviewed or applied as asked."""


def file_hash(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def free_proposal_path(folder: Path, base: str) -> tuple[str, Path]:
    """The first unused proposal id ``base``, ``base-2``, ``base-3``… in ``folder``, and its file."""
    number, name = 1, base
    while (folder / f"{name}.yaml").exists():
        number += 1
        name = f"{base}-{number}"
    return name, folder / f"{name}.yaml"


class _Dumper(yaml.SafeDumper):
    """Multi-line text as literal blocks, so a proposal reads like the article it changes."""


_Dumper.add_representer(str, lambda dumper, value: dumper.represent_scalar(
    "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None))


def applied_record(content: Path, path: Path, date: dt.date, results: list[dict[str, Any]]) -> PlannedWrite:
    """The write of ``apply``'s decisions into the proposal at ``path``: appended as its
    ``applied:`` field, the proposal as written (comments included) kept as it was."""
    rel = path.resolve().relative_to(content.resolve()).as_posix()
    existing = path.read_bytes()
    value, _problems = read_back(rel, existing)
    read, _problems = read_text_file(existing, rel)
    if read is None or not isinstance(value, dict):
        raise ProposalError(f"{rel} is not a proposal any more (it does not read as a mapping); nothing was written")
    applied = {"date": date.isoformat(), "results": results}
    head = read.text if read.text.endswith("\n") or not read.text else read.text + "\n"
    # written with the proposal's own BOM and line ends
    return PlannedWrite(rel, read.encode(head + dump_yaml({"applied": applied}).decode("utf-8")),
                        dict(value, applied=applied))


def dump_yaml(record: dict[str, Any]) -> bytes:
    """A proposal as YAML: fields in the order given, multi-line text as literal blocks."""
    return yaml.dump(record, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100).encode("utf-8")


def load_proposal(path: Path) -> tuple[Path, Proposal | ExtractionProposal]:
    """The content directory holding ``path`` and the proposal it holds: section
    operations under ``proposals/sections/``, extractions under ``proposals/extractions/``."""
    content = next((p for p in path.resolve().parents if (p / "carnet.yaml").is_file()), None)
    if content is None or not path.is_file():
        raise ProposalError(f"{path} is not a proposal inside a content directory")
    rel = path.resolve().relative_to(content).as_posix()
    parts = rel.split("/")
    if len(parts) != 4 or parts[0] != "proposals" or parts[1] not in ("sections", "extractions") \
            or not rel.endswith(".yaml") or parts[3] == RECORD_NAME:
        raise ProposalError(f"{rel} is not a proposal: proposals are proposals/sections/<wiki>/<id>.yaml "
                            "and proposals/extractions/<note>/<id>.yaml")
    text, problems = decode_text(path.read_bytes(), rel)
    value, yaml_problems = parse_yaml(text or "", rel)
    problems += yaml_problems
    parse = parse_extraction_proposal if parts[1] == "extractions" else parse_proposal
    proposal = parse(rel, value, problems) if value is not None else None
    errors = [p for p in problems if p.is_error]
    if proposal is None or errors:
        raise ProposalError("the proposal is unreadable:\n" + "\n".join(p.format_text() for p in errors))
    return content, proposal
