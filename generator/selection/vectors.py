"""Which vectors a selection uses: the embedded TF-IDF (default), or an endpoint's
embeddings read from a cache kept per model, ``content/cache/embeddings/<model>.json``,
keyed by the text's hash. ``build`` only reads the cache; ``carnet select --reindex``
fills it (announced, per model: vectors of two models are never mixed)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scipy import sparse  # type: ignore[import-untyped]  # scipy ships no type hints and scipy-stubs is no dependency
# numpy and scipy are imported where used: a build without wikis never pays for loading them

from generator.corpus.verdicts import text_hash
from generator.selection.embeddings import tfidf


def embeddings_settings(extra: Mapping[str, object]) -> tuple[str, str]:
    """(provider, model) from carnet.yaml's ``embeddings:`` (default: tfidf)."""
    raw = extra.get("embeddings") or {}
    if not isinstance(raw, dict) or raw.get("provider", "tfidf") != "endpoint":
        return "tfidf", ""
    return "endpoint", str(raw.get("model", "") or "")


def cache_path(content: Path, model: str) -> Path:
    return content / "cache" / "embeddings" / (re.sub(r"[^A-Za-z0-9_.-]+", "_", model) + ".json")


def load_cache(content: Path, model: str) -> dict[str, list[float]]:
    path = cache_path(content, model)
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get("vectors", {}) if data.get("model") == model else {}


def save_cache(content: Path, model: str, vectors: dict[str, list[float]]) -> Path:
    """Write the cache of ``model`` through the write seam (it owns the file whole)."""
    from generator.writes import ALL, PlannedWrite, write_content

    path = cache_path(content, model)
    record = {"model": model, "vectors": dict(sorted(vectors.items()))}
    data = json.dumps(record, separators=(",", ":")).encode("utf-8")
    write_content(content, "carnet select --reindex", PlannedWrite(path.relative_to(content).as_posix(), data,
                                                                   record, ALL))
    return path


def vectors_for(texts: list[str], provider: str, cache: dict[str, list[float]]) -> tuple[sparse.csr_matrix, str]:
    """Rows for ``texts`` and what produced them. The endpoint's vectors are used only when
    the cache holds every text; otherwise the embedded TF-IDF, and the caller says so."""
    import numpy as np
    if provider == "endpoint":
        keys = [text_hash(t) for t in texts]
        if keys and all(k in cache for k in keys):
            dense = np.array([cache[k] for k in keys], dtype=np.float64)
            norms = np.linalg.norm(dense, axis=1)
            norms[norms == 0] = 1.0
            from scipy import sparse

            return sparse.csr_matrix(dense / norms[:, None]), "endpoint"
        return tfidf(texts), "tfidf-fallback"
    return tfidf(texts), "tfidf"
