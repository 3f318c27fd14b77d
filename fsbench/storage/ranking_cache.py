"""The ranking cache of a results folder (``cache/rankings/``): the fitted selectors' rankings,
kept so that a rerun does not refit them.

A selector's ranking is its permutation of the features, best first; an entry
(``<key>.npz``) holds the whole of it with the selector's scores and the fit's metadata
(iterations, the chosen parameters, ...), under a key that hashes everything the fit depends on,
the selector's code included (:func:`fsbench.engine.fitting.ranking_key`). Not to be confused
with rankings.csv.gz (:mod:`fsbench.storage.rankings`), which keeps only each task's top
features. A damaged entry reads as absent and is recomputed.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from fsbench.storage.atomic import atomic_write_bytes
from fsbench.storage.task_files import json_default

#: the ranking cache's folder in a results folder
RANKINGS_DIR = Path("cache") / "rankings"


def load_ranking(cache_dir: Path, key: str) -> dict[str, Any] | None:
    """The cached fit under ``key``: ``{"ranking": ..., "scores": ..., **meta}``; None when absent
    or damaged."""
    path = cache_dir / f"{key}.npz"
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            return {"ranking": data["ranking"], "scores": data["scores"],
                    **json.loads(str(data["meta"]))}
    except (OSError, ValueError, KeyError):
        return None  # a damaged cache entry is recomputed


def save_ranking(cache_dir: Path, key: str, ranking: np.ndarray, scores: np.ndarray, meta: dict[str, Any]) -> None:
    """Cache a fit under ``key``: its ranking, its scores and ``meta`` (JSON values)."""
    buffer = io.BytesIO()
    np.savez(buffer, ranking=ranking, scores=scores, meta=np.array(json.dumps(meta, default=json_default)))
    atomic_write_bytes(cache_dir / f"{key}.npz", buffer.getvalue())
