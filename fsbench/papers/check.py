"""`fsbench check`: rerun a faithful subset of each paper's experiment and hold it to the commit.

The subset is the paper's own configuration restricted to a few small datasets and the first
repetitions. Splits, task seeds and inner folds derive from the config seed and each task's
identity only (fsbench/evaluation/protocol.py), so these tasks are exactly tasks of the full run: their
rows must equal the committed rows, number for number. The check fails when

- a committed row is missing, or a rerun row differs from it (accuracy, chosen C and
  parameters, iterations exactly; a selector's numeric diagnostics within round-off, see
  :data:`DIAG_RTOL`; fit times are not compared);
- a printed cell that reproduces with the committed results no longer does once the rerun
  rows replace the committed ones;

except for a row whose top k was decided by rounding: the rerun records how far its k-th
feature's score stands above the next one's (``ranking_margin``,
:func:`fsbench.engine.tasks.ranking_margins`); where that is below :data:`ROUNDING_MARGIN` a different
count, C or inner accuracy is reported as "decided by rounding" and does not fail the check
(the last bits of two scores, which another machine's BLAS may set otherwise, chose the
features). Every other difference still fails;
- a committed paper table differs from the one regenerated from the committed runs.csv.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from fsbench.configuration.parse import Experiment
from fsbench.storage.runs import ROW_KEY

#: (datasets, repetitions) rerun by the check: small datasets of each paper, first repetitions.
CHECK_SUBSETS: dict[str, tuple[tuple[str, ...], int]] = {
    "rfs": (("glioma", "prostate-ge"), 2),
    "dso-fs": (("ar",), 2),
    "sl2p": (("srbct",), 2),
}

EXACT = ["n_correct", "n_test", "class_support", "class_predicted", "class_correct", "n_train", "C", "params",
         "n_iter", "seed", "split_seed", "select_on", "standardize"]
CLOSE = ["accuracy", "inner_accuracy"]  # floats through CSV: equal to the last printed digit
#: Diagnostics (``diag_*``: a solver's duality gap, a margin near 1, a count) carry the round-off of
#: the machine that computed them: the same code and libraries on another machine were measured
#: to move a duality gap of 5.0e-9 in its 8th digit, and gaps at the noise floor from 4.4e-11 to
#: 3.2e-11 and from 3e-15 to 2e-15. They are compared within a relative 1e-6, or an absolute 1e-9
#: (a gap that small is round-off, far below every solver's tolerance); results stay exact.
DIAG_RTOL, DIAG_ATOL = 1e-6, 1e-9


#: A relative score margin below this decides a top k by rounding: a score computed in a few
#: operations carries a relative error of about 1e-15, an iterative selector's (RFS, DSO-FS, the SVM
#: selectors: BLAS inside every iteration) more; 1e-9 leaves six decades for that.
ROUNDING_MARGIN = 1e-9
#: the columns a top k decided by rounding may change
OUTCOME = ["n_correct", "class_predicted", "class_correct", "accuracy", "C", "inner_accuracy"]


@dataclass
class CheckResult:
    paper: str
    n_rows: int = 0
    problems: list[str] = field(default_factory=list)
    reproducing: int = 0
    rounding: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def subset_experiment(experiment: Experiment, datasets: tuple[str, ...], repeats: int) -> Experiment:
    """The experiment restricted to ``datasets`` and its first ``repeats`` repetitions."""
    protocol = experiment.protocol
    if protocol.kind == "holdout":
        protocol = replace(protocol, n_trials=min(repeats, protocol.n_trials))
    else:
        protocol = replace(protocol, n_repeats=min(repeats, protocol.n_repeats))
    kept = tuple(d for d in experiment.datasets if d in datasets)
    return replace(experiment, datasets=kept, protocol=protocol)


def compare_rows(rerun: pd.DataFrame, committed: pd.DataFrame, rounding: list[str] | None = None) -> list[str]:
    """Differences between rerun rows and the committed rows of the same tasks, as sentences.

    Rows whose rerun ``ranking_margin`` is below :data:`ROUNDING_MARGIN` may differ in
    :data:`OUTCOME`; each such difference is described in ``rounding`` (when given) instead.
    """
    problems = []
    merged = rerun.merge(committed, on=ROW_KEY, how="left", suffixes=("", "_committed"), indicator=True)
    missing = merged[merged["_merge"] == "left_only"]
    if len(missing):
        first = missing.iloc[0]
        problems.append(f"{len(missing)} rerun rows have no committed counterpart (first: "
                        f"{first['dataset']} repeat {first['repeat']} fold {first['fold']} "
                        f"{first['selector']} k={first['k']}); rerun 'make reproduce' and commit it.")
        merged = merged[merged["_merge"] == "both"]
    margin = merged["ranking_margin"].to_numpy(float) if "ranking_margin" in merged else np.full(len(merged), np.nan)
    by_rounding = np.abs(margin) < ROUNDING_MARGIN
    excused = np.zeros(len(merged), dtype=bool)
    diag = [c for c in rerun.columns if c.startswith("diag_")]
    for column in EXACT + diag + CLOSE:
        if column not in rerun.columns:
            continue
        ours = merged[column]
        theirs = merged.get(f"{column}_committed")
        if theirs is None:
            problems.append(f"the committed results lack the column {column!r}; rerun 'make reproduce'.")
            continue
        numeric = pd.api.types.is_numeric_dtype(ours) and pd.api.types.is_numeric_dtype(theirs) \
            and not pd.api.types.is_bool_dtype(ours)
        if column in CLOSE or (column in diag and numeric):
            a, b = ours.to_numpy(float), theirs.to_numpy(float)
            rtol, atol = (1e-12, 0.0) if column in CLOSE else (DIAG_RTOL, DIAG_ATOL)
            same = np.isclose(a, b, rtol=rtol, atol=atol) | (np.isnan(a) & np.isnan(b))
        else:
            both_missing = (ours.isna() & theirs.isna()).to_numpy()
            equal = (ours.astype(object).map(str) == theirs.astype(object).map(str)).to_numpy()
            same = both_missing | equal
        if column in OUTCOME and rounding is not None:
            excused |= ~same & by_rounding
            same = same | by_rounding
        if not same.all():
            bad = merged[~same].iloc[0]
            problems.append(f"{int((~same).sum())} rows differ in {column!r} (first: {bad['dataset']} repeat "
                            f"{bad['repeat']} fold {bad['fold']} {bad['selector']} k={bad['k']}: rerun "
                            f"{bad[column]!r}, committed {bad[f'{column}_committed']!r}).")
    if rounding is not None:
        for _, row in merged[excused].iterrows():
            rounding.append(f"{row['dataset']} repeat {row['repeat']} fold {row['fold']} {row['selector']} "
                            f"k={row['k']}: {int(row['n_correct'])} correct, committed "
                            f"{int(row['n_correct_committed'])} (score margin {row['ranking_margin']:.1e}).")
    return problems


def as_read_back(runs: pd.DataFrame) -> pd.DataFrame:
    """runs.csv.gz as read back from disk, so rerun and committed values share their types."""
    from io import StringIO

    from fsbench.storage.csvread import read_table

    return read_table(StringIO(runs.to_csv(index=False)))


def check_paper(paper: str, experiment: Experiment, results_dir: Path, work_dir: Path, *,
                data_dir: Path | None = None, n_jobs: int | None = None, scheduler: str | None = None
                ) -> CheckResult:
    """Rerun the paper's check subset into ``work_dir`` and compare it with ``results_dir``."""
    from fsbench.engine.runner import run_experiment
    from fsbench.papers import TABLES
    from fsbench.papers.tables import compare_table, format_paper_table
    from fsbench.report.results import complete_runs
    from fsbench.storage.folder import planned_datasets
    from fsbench.storage.runs import load_runs

    result = CheckResult(paper)
    committed = load_runs(results_dir)
    planned, skipped = planned_datasets(results_dir)
    datasets, repeats = CHECK_SUBSETS[paper]
    subset = subset_experiment(experiment, datasets, repeats)
    if not subset.datasets:
        result.problems.append(f"none of the check datasets {', '.join(datasets)} is in the {paper} config.")
        return result
    rerun = as_read_back(run_experiment(subset, work_dir, data_dir=data_dir, n_jobs=n_jobs, scheduler=scheduler).runs)
    result.n_rows = len(rerun)
    result.problems += compare_rows(rerun, committed, result.rounding)

    key_rerun = pd.MultiIndex.from_frame(rerun[ROW_KEY])
    kept = committed[~pd.MultiIndex.from_frame(committed[ROW_KEY]).isin(key_rerun)]
    merged = pd.concat([kept, rerun[committed.columns.intersection(rerun.columns)]], ignore_index=True)
    before_runs, after_runs = complete_runs(results_dir, committed), complete_runs(results_dir, merged)
    for table in TABLES[paper]:
        before = compare_table(table, before_runs, planned, skipped)
        after = compare_table(table, after_runs, planned, skipped)
        was = before["reproduces"].fillna(False).astype(bool).to_numpy()
        now = after["reproduces"].fillna(False).astype(bool).to_numpy()
        result.reproducing += int(was.sum())
        for i in np.flatnonzero(was & ~now):
            cell = after.iloc[i]
            result.problems.append(f"{table.name} cell {cell['dataset']} / {cell['method']} k={cell['k']} "
                                   f"reproduced (z = {before.iloc[i]['z']:.2f}) and no longer does "
                                   f"(z = {cell['z']:.2f}).")
        committed_table = results_dir / table_file(table.name)
        if committed_table.is_file():
            if committed_table.read_text() != format_paper_table(table, before, "markdown"):
                result.problems.append(f"{committed_table} differs from the table regenerated from its "
                                       "runs.csv.gz; rerun 'make reproduce' (or 'fsbench table --paper').")
        else:
            result.problems.append(f"{committed_table} is missing; rerun 'make reproduce'.")
    return result


def table_file(table_name: str) -> str:
    """File name of a committed paper table: 'Table 1' -> 'table1.md'."""
    return table_name.lower().replace(" ", "") + ".md"
