"""The NLI judge: the only part of verification that calls a model (``carnet verify``).

Pairs that passed the verbatim check and have no verdict are sent in batches of N
pairs per request; each batch's verdicts are appended to
``content/verdicts/<article>.yaml`` as soon as it succeeds, so a failing batch keeps
the batches before it. What could not be judged is reported; other work goes on, except
after a transport failure (endpoint down, or failing after its retries): the remaining
batches are then reported unjudged without being sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from generator.files import write_atomic
from generator.llm import LLMClient, LLMError, LLMTransportError
from generator.llm.prompts import Prompt, load_prompt
from generator.verification.assess import Assessment

BATCH_SIZE = 8
SCHEMA = {"type": "object", "required": ["verdicts"],
          "properties": {"verdicts": {"type": "array", "items": {
              "type": "object", "required": ["pair", "verdict", "rationale"],
              "properties": {"pair": {"type": "string"},
                             "verdict": {"type": "string", "enum": ["supported", "partial", "unsupported"]},
                             "rationale": {"type": "string"}}}}}}


@dataclass
class JudgeReport:
    judged: int = 0
    failed_batches: list[str] = field(default_factory=list)
    unjudged: list[Assessment] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    stopped: bool = False  # the endpoint failed to answer: later batches were not sent


def judge_batch(client: LLMClient, prompt: Prompt, batch: list[Assessment]) -> tuple[list[dict], dict]:
    """One request for ``batch``; returns the records to write and the provenance."""
    keys = {f"p{number + 1}": item for number, item in enumerate(batch)}
    data, provenance = client.chat_json(prompt, SCHEMA, pairs=[
        {"key": key, "claim": item.claim.text, "passage": item.passage} for key, item in keys.items()])
    answers = {answer["pair"]: answer for answer in data["verdicts"]}
    records = []
    for key, item in keys.items():
        answer = answers.get(key)
        if answer is None:
            continue  # left unjudged, and reported as such
        records.append({
            "claim": item.claim.text, "claim_sha256": item.claim_sha256,
            "source": f"{item.link.marker.kind}:{item.link.marker.key}", "source_sha256": item.source_sha256,
            "verdict": answer["verdict"], "rationale": answer["rationale"].strip(),
            "provenance": dict(provenance.as_record(), threshold="supported"),
        })
    return records, provenance.as_record()


def append_verdicts(path: Path, records: list[dict]) -> None:
    """Append records to a verdicts file (created when missing), atomically."""
    existing = path.read_text(encoding="utf-8") if path.exists() else "verdicts:\n"
    if not existing.endswith("\n"):
        existing += "\n"
    addition = yaml.safe_dump(records, allow_unicode=True, sort_keys=False, width=100)
    text = existing + "".join(f"  {line}\n" if line else "\n" for line in addition.rstrip("\n").split("\n"))
    write_atomic(path, text.encode("utf-8"))


def judge(content: Path, pending: dict[str, list[Assessment]], client: LLMClient,
          batch_size: int = BATCH_SIZE) -> JudgeReport:
    prompt = load_prompt("verify_pairs")
    report = JudgeReport()
    unreachable: LLMTransportError | None = None
    for article, items in sorted(pending.items()):
        path = content / "verdicts" / f"{article}.yaml"
        for start in range(0, len(items), batch_size):
            batch = items[start:start + batch_size]
            if unreachable is not None:  # the endpoint kept failing: don't wait out every batch's retries
                report.unjudged += batch
                continue
            try:
                records, provenance = judge_batch(client, prompt, batch)
            except LLMError as exc:
                report.failed_batches.append(f"{article} pairs {start + 1}–{start + len(batch)}: {exc}")
                report.unjudged += batch
                if isinstance(exc, LLMTransportError):
                    unreachable, report.stopped = exc, True
                continue
            append_verdicts(path, records)
            report.judged += len(records)
            judged = {r["claim_sha256"] + r["source_sha256"] for r in records}
            report.unjudged += [item for item in batch if item.claim_sha256 + item.source_sha256 not in judged]
            for key, value in provenance.get("usage", {}).items():
                report.usage[key] = report.usage.get(key, 0) + value
    return report

