"""Directed syntheses' lifecycle and integrity (INV-14). Pure.

draft → adopted is written in the act's history; "superseded" is derived from a newer
act's ``supersedes:``. An adopted act is immutable: its body and adoption block are
covered by a hash recorded at adoption.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any


def _plain(value: Any) -> Any:
    """YAML values → JSON-ready values (dates as ISO strings), for a canonical hash."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def adoption_hash(body: str, perimeter: Any, proposed: Any, by: str, date: dt.date) -> str:
    """sha256 over the body and the adoption block (perimeter, recorded perimeter, who, when)."""
    block = {"perimeter": _plain(perimeter), "proposed": _plain(proposed), "by": by, "date": date.isoformat()}
    canonical = json.dumps({"body": body, "adoption": block}, ensure_ascii=False, sort_keys=True,
                           separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def quote_hash(quote: str) -> str:
    return "sha256:" + hashlib.sha256(quote.encode("utf-8")).hexdigest()


def superseded_by(supersedes: dict[str, str | None]) -> dict[str, list[str]]:
    """act slug → the acts that supersede it (from each act's ``supersedes:``)."""
    result: dict[str, list[str]] = {}
    for slug, target in sorted(supersedes.items()):
        if target:
            result.setdefault(target, []).append(slug)
    return result
