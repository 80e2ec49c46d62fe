"""Evaluate the citation judge on labelled pairs (not a test: figures to read).

Input: a JSONL file, one object per line: {"claim": "...", "evidence": "...", "label": "supported" |
"partial" | "unsupported"} (WiCE's claim-level labels supported / partially_supported / not_supported
are accepted too). The judge runs through the LLM seam against the endpoint of ``--content``'s
carnet.yaml (or ``--base-url``/``--model``), in batches, exactly as ``carnet verify`` does.

    python -m bench.nli_eval pairs.jsonl --base-url http://localhost:11434/v1 --model qwen2.5:7b-instruct

``bench/pairs_example.jsonl`` holds 20 pairs from the example corpus: the 9 its verdicts record
(labels as a person wrote them) and 11 claims paired with a passage on another subject (labelled
unsupported by construction): a check of the plumbing, too small to rank judges.

Prints accuracy, recall per class, balanced accuracy, tokens per pair (as the server reported
them) and time per pair.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from generator.llm import LLMClient, LLMError, LLMSettings
from generator.llm.prompts import load_prompt
from generator.llm.schema import answer_tokens
from generator.verification.judge import SCHEMA, VERDICT_TOKENS, verdicts_constraint

LABELS = ("supported", "partial", "unsupported")
ALIASES = {"partially_supported": "partial", "not_supported": "unsupported"}


@dataclass
class Scores:
    accuracy: float
    recall: dict[str, float]
    balanced_accuracy: float
    judged: int
    failed: int
    tokens_per_pair: float
    seconds_per_pair: float


def load_pairs(path: Path) -> list[dict]:
    pairs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        item = json.loads(line)
        label = ALIASES.get(item["label"], item["label"])
        if label not in LABELS:
            raise SystemExit(f"{path}:{number}: unknown label {item['label']!r}")
        pairs.append({"claim": item["claim"], "evidence": item["evidence"], "label": label})
    return pairs


def evaluate(pairs: list[dict], client: LLMClient, batch_size: int = 8, language: str = "fr") -> Scores:
    prompt = load_prompt("verify_pairs", language)
    predictions: list[tuple[str, str]] = []
    failed, tokens = 0, 0
    started = time.perf_counter()
    for start in range(0, len(pairs), batch_size):
        batch = pairs[start:start + batch_size]
        keyed = {f"p{n + 1}": item for n, item in enumerate(batch)}
        try:
            data, provenance = client.chat_json(prompt, SCHEMA, constraint=verdicts_constraint(list(keyed)),  # as verify
                                                max_tokens=answer_tokens(len(batch), VERDICT_TOKENS),
                                                pairs=[
                {"key": key, "claim": item["claim"], "passage": item["evidence"]} for key, item in keyed.items()])
        except LLMError as exc:
            print(f"batch {start // batch_size + 1} failed: {exc}", file=sys.stderr)
            failed += len(batch)
            continue
        tokens += provenance.usage.get("total_tokens", 0)
        answers = {a["pair"]: a["verdict"] for a in data["verdicts"]}
        for key, item in keyed.items():
            if key in answers:
                predictions.append((item["label"], answers[key]))
            else:
                failed += 1
    elapsed = time.perf_counter() - started
    judged = len(predictions)
    correct = sum(gold == guess for gold, guess in predictions)
    totals = Counter(gold for gold, _ in predictions)
    recall = {label: (sum(g == label and p == label for g, p in predictions) / totals[label]) if totals[label] else 0.0
              for label in LABELS}
    present = [recall[label] for label in LABELS if totals[label]]
    return Scores(correct / judged if judged else 0.0, recall, sum(present) / len(present) if present else 0.0,
                  judged, failed, tokens / judged if judged else 0.0, elapsed / max(1, len(pairs)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", type=Path, help="JSONL of {claim, evidence, label}")
    parser.add_argument("--base-url", required=True, help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1")
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key-env", default="", help="environment variable holding the key, if any")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--language", default="fr", help="the language of the pairs, and of the judge's prompt (fr, en)")
    args = parser.parse_args(argv)
    client = LLMClient(LLMSettings(args.base_url, args.model, args.api_key_env))
    scores = evaluate(load_pairs(args.pairs), client, args.batch, args.language)
    print(f"pairs judged: {scores.judged} (failed: {scores.failed})")
    print(f"accuracy: {scores.accuracy:.3f}   balanced accuracy: {scores.balanced_accuracy:.3f}")
    print("recall: " + ", ".join(f"{label} {value:.3f}" for label, value in scores.recall.items()))
    print(f"tokens per pair (server usage): {scores.tokens_per_pair:.0f}   seconds per pair: {scores.seconds_per_pair:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
