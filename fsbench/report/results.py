"""A results directory as the reports read it: its rows, its config, what is complete."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from fsbench.storage.csvread import read_table
from fsbench.storage.folder import CONFIG_FILE
from fsbench.storage.runs import COLUMNS, ROW_KEY, RUNS_FILE, load_runs
from fsbench.storage.task_files import TASK_KEY, DamagedTaskFile, finished_tasks, read_task


def config_comment(config: Path) -> str:
    """The leading comment block of a YAML config, with the comment marks stripped."""
    lines = []
    for line in config.read_text().splitlines():
        if not line.startswith("#"):
            break
        text = line[1:]
        lines.append(text[1:] if text.startswith(" ") else text)
    return "\n".join(lines).strip("\n")


def variant_description(config: Path) -> str:
    """The first sentence of a variant config's leading comment (its name in the report)."""
    paragraph = []
    for line in config_comment(config).splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    text = " ".join(paragraph)
    match = re.search(r"\.(\s|$)", text)
    return text[: match.start() + 1] if match else text


def _selector_labels(selectors: Iterable[Any]) -> list[str]:
    labels = []
    for sel in selectors or []:
        labels.append(sel if isinstance(sel, str) else str(sel.get("label") or sel["name"]))
    return labels


@dataclass
class Results:
    """One results directory as the report sees it (a paper's main run or one variant)."""

    name: str
    results_dir: Path
    runs: pd.DataFrame | None = None  # every row found
    source: str = ""  # "runs.csv.gz", "tasks", or "" (nothing)
    config: dict[str, Any] = field(default_factory=dict)  # what ran (results config.yaml), else the config file
    _complete: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def ran(self) -> bool:
        return self.runs is not None and len(self.runs) > 0

    @property
    def protocol(self) -> dict[str, Any]:
        return self.config.get("protocol") or {}

    @property
    def n_repeats(self) -> int | None:
        p = self.protocol
        if not p:
            return None
        return int(p.get("n_trials", 10)) if p.get("kind", "holdout") == "holdout" else int(p.get("n_repeats", 1))

    @property
    def n_folds(self) -> int:
        p = self.protocol
        if p:
            return 1 if p.get("kind", "holdout") == "holdout" else int(p.get("n_splits", 5))
        if self.ran:
            return int(self.runs.groupby(["dataset", "repeat"])["fold"].nunique().max())
        return 1

    @property
    def selectors(self) -> list[str]:
        labels = _selector_labels(self.config.get("selectors"))
        if not labels and self.ran:
            labels = sorted(self.runs["selector"].unique())
        return labels

    @property
    def skipped(self) -> list[str]:
        return list(self.config.get("skipped_datasets") or [])

    @property
    def planned_datasets(self) -> list[str]:
        """The config's datasets that are available here (not skipped as missing)."""
        return [d for d in self.config.get("datasets") or [] if d not in self.skipped]

    def complete(self) -> pd.DataFrame | None:
        """Rows of the complete repetitions only (every fold of every selector present)."""
        if not self.ran:
            return None
        if self._complete is None:
            self._complete = complete_repetitions(self.runs, self.n_folds, self.selectors)
        return self._complete

    def progress(self) -> pd.DataFrame:
        """Per planned dataset: tasks present and planned, complete repetitions and planned."""
        per_rep = self.n_folds * len(self.selectors)
        runs = self.runs if self.ran else pd.DataFrame(columns=TASK_KEY)
        tasks = runs.drop_duplicates(TASK_KEY)
        complete = self.complete()
        rows = []
        datasets = self.planned_datasets or sorted(tasks["dataset"].unique())
        for dataset in datasets:
            mine = tasks[tasks["dataset"] == dataset]
            done = complete[complete["dataset"] == dataset]["repeat"].nunique() if complete is not None else 0
            rows.append({"dataset": dataset, "tasks": len(mine),
                         "tasks_planned": per_rep * self.n_repeats if self.n_repeats else None,
                         "repeats": int(done), "repeats_planned": self.n_repeats})
        return pd.DataFrame(rows, columns=["dataset", "tasks", "tasks_planned", "repeats", "repeats_planned"])

    @property
    def partial(self) -> bool:
        if not self.ran:
            return True
        progress = self.progress()
        if progress.empty or self.n_repeats is None:
            return False
        return bool((progress["tasks"] < progress["tasks_planned"]).any())


def read_task_files(results_dir: Path) -> pd.DataFrame | None:
    """The rows of every finished task file, typed as runs.csv.gz would type them (None if none)."""
    rows: list[dict[str, Any]] = []
    for task_id in sorted(finished_tasks(results_dir)):
        try:
            rows.extend(read_task(results_dir, task_id))
        except (OSError, DamagedTaskFile):
            continue  # a task file being replaced right now; the next report picks it up
    if not rows:
        return None
    df = pd.DataFrame(rows)
    df = df[[c for c in COLUMNS if c in df.columns] + sorted(c for c in df.columns if c not in COLUMNS)]
    return read_table(StringIO(df.to_csv(index=False, float_format="%.17g")))  # labels stay strings


def complete_runs(results_dir: Path, runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``runs`` from complete repetitions only, as REPORT.md uses them; the folds and
    selectors of a repetition come from ``results_dir``'s config.yaml. All of ``runs`` for a
    finished run."""
    result = Results(results_dir.name, results_dir, runs=runs, config=_read_config(results_dir))
    return result.complete() if result.ran else runs


def _read_config(results_dir: Path, config: Path | None = None) -> dict[str, Any]:
    """The resolved config.yaml of a results directory, else the config file ``config``, else {}."""
    for path in (results_dir / CONFIG_FILE, config):
        if path is not None and path.is_file():
            try:
                return yaml.safe_load(path.read_text()) or {}
            except yaml.YAMLError:
                continue
    return {}


def load_results(name: str, results_dir: Path, config: Path | None = None) -> Results:
    """A results directory: its runs (runs.csv.gz, else the task files of a run in progress) and config."""
    result = Results(name, results_dir, config=_read_config(results_dir, config))
    runs = None
    if (results_dir / RUNS_FILE).is_file():
        runs, result.source = load_runs(results_dir), RUNS_FILE
    elif results_dir.is_dir():
        runs = read_task_files(results_dir)
        result.source = "tasks" if runs is not None else ""
    if runs is not None:
        runs = runs.sort_values(ROW_KEY, kind="stable").reset_index(drop=True)
    result.runs = runs
    return result


def complete_repetitions(runs: pd.DataFrame, n_folds: int, selectors: Sequence[str]) -> pd.DataFrame:
    """Rows of the (dataset, repeat) pairs for which every fold of every selector is present."""
    tasks = runs[runs["selector"].isin(selectors)].drop_duplicates(TASK_KEY)
    counts = tasks.groupby(["dataset", "repeat"]).size()
    full = counts[counts >= n_folds * len(selectors)].index
    keep = pd.MultiIndex.from_frame(runs[["dataset", "repeat"]]).isin(full)
    return runs[keep].reset_index(drop=True)
