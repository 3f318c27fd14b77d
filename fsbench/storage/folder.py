"""A results folder as a whole: its ``config.yaml`` (the resolved experiment that ran, with its
fingerprint), what that file says (the fingerprint, the planned datasets and selectors), and the
removal of the temporary files a killed writer left in it.

``objective.csv`` (:data:`TRACES_FILE`) is named here too: fsbench.engine.traces writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fsbench.storage.atomic import TEMPORARY_FILES, atomic_write_text
from fsbench.storage.ranking_cache import RANKINGS_DIR
from fsbench.storage.rankings import REGENERATION_DIR
from fsbench.storage.task_files import TASKS_DIR

CONFIG_FILE = "config.yaml"
TRACES_FILE = "objective.csv"  # objective per iteration of the iterative selectors (fsbench.engine.traces)


def write_config(out_dir: Path, config: dict[str, Any], fingerprint: str) -> None:
    """Write config.yaml: the fingerprint first, then the resolved experiment ``config``."""
    doc = {"fingerprint": fingerprint, **config}
    atomic_write_text(out_dir / CONFIG_FILE, yaml.safe_dump(doc, sort_keys=False))


def read_config_doc(out_dir: Path) -> dict[str, Any]:
    """A results folder's config.yaml as a dict ({} when absent or unreadable)."""
    path = out_dir / CONFIG_FILE
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (yaml.YAMLError, UnicodeDecodeError, OSError):
        doc = None
    return doc if isinstance(doc, dict) else {}


def planned_datasets(out_dir: Path) -> tuple[list[str], list[str]]:
    """A results folder's datasets from its config.yaml: (planned and available, skipped as missing)."""
    doc = read_config_doc(out_dir)
    skipped = list(doc.get("skipped_datasets") or [])
    return [d for d in doc.get("datasets") or [] if d not in skipped], skipped


def planned_selectors(out_dir: Path) -> list[str]:
    """The labels of a results folder's selectors, from its config.yaml."""
    return [s["label"] for s in read_config_doc(out_dir).get("selectors") or []
            if isinstance(s, dict) and "label" in s]


def read_fingerprint(out_dir: Path) -> str | None:
    """The fingerprint config.yaml records (None when it records none or is absent)."""
    return read_config_doc(out_dir).get("fingerprint")


def remove_temporary_files(out_dir: Path) -> int:
    """Delete the temporary files a killed writer left in a results folder; returns how many.

    Call only while holding the folder's lock (:func:`fsbench.storage.lock.locked`): then no live
    writer owns one.
    """
    removed = 0
    for folder in (out_dir, out_dir / TASKS_DIR, out_dir / RANKINGS_DIR, out_dir / REGENERATION_DIR):
        if folder.is_dir():
            for path in folder.glob(TEMPORARY_FILES):
                path.unlink(missing_ok=True)
                removed += 1
    return removed
