"""What the HTML page shows, computed from results folders: plain, JSON-ready data.

Everything here is the report layer's own computation, reused: the mean ± sd per dataset,
selector and k is :func:`fsbench.report.tables.per_repeat` aggregated as
:func:`fsbench.report.tables.summarize` aggregates it (a repetition pools its folds; sd with
ddof = 1; x 100), the best per k follows :func:`fsbench.evaluation.metrics.higher_is_better`,
the ranks, critical-difference diagram, Pareto points, stability and cost are those of
``fsbench stats`` (:mod:`fsbench.report.statistics`, :mod:`fsbench.report.cd_diagram`).

"Not significantly worse" (≈ in the tables, as in the papers' tables): at each (dataset, k),
a selector whose per-split values (each split's own metric) are not significantly below the
best selector's by the corrected resampled t-test over their shared outer splits
(:func:`fsbench.stats.corrected_ttest`, rho as ``fsbench stats`` takes it, two-sided
p >= :data:`ALPHA`); none is marked with fewer than two shared splits.

Numbers are rounded (:data:`DECIMALS`) so that the same results give the same page bytes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fsbench.errors import FsbenchError
from fsbench.evaluation.metrics import (
    ALL_METRICS,
    check_metric,
    higher_is_better,
    is_selection_metric,
    metric_label,
    row_metric,
    rows_without_selection,
    unconverged,
)
from fsbench.report import statistics as S
from fsbench.report.plots import spread_captions
from fsbench.report.tables import per_repeat
from fsbench.stats import corrected_ttest

ALPHA = 0.05
#: decimals kept of a value in % (or x 100), and of seconds
DECIMALS = 4
#: marks of a table cell: the best of its k, not significantly worse than it, neither
BEST, NOT_WORSE, PLAIN = 2, 1, 0


def rounded(value: Any, decimals: int = DECIMALS) -> float | None:
    """``value`` rounded, None for NaN or None (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    out = round(value, decimals)
    return 0.0 if out == 0 else out  # no "-0.0"


def available_metrics(runs: pd.DataFrame) -> list[str]:
    """The metrics of :data:`ALL_METRICS` the rows support: accuracy always, a classification metric
    when every row has its per-class counts, a selection metric when some dataset has it."""
    out = []
    for metric in ALL_METRICS:
        try:
            check_metric(runs, metric)
        except FsbenchError:
            continue
        out.append(metric)
    return out


def metric_rows(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows that carry ``metric`` (a selection metric: the datasets with known features)."""
    if is_selection_metric(metric):
        return runs[~rows_without_selection(runs, metric)]
    return runs


def describe_metrics(metrics: Sequence[str]) -> dict[str, dict[str, Any]]:
    return {m: {"label": metric_label(m), "name": metric_label(m, percent=False), "higher": higher_is_better(m)}
            for m in metrics}


# ----------------------------------------------------------------------------- per dataset
def _not_worse(rows: pd.DataFrame, metric: str, best: str, other: str, rho: float) -> bool:
    """Whether ``other``'s per-split values are not significantly below ``best``'s (module docstring)."""
    a, b = rows.get(best), rows.get(other)
    if a is None or b is None:
        return False
    shared = a.notna() & b.notna()
    if int(shared.sum()) < 2:
        return False
    return bool(corrected_ttest(a[shared].to_numpy(), b[shared].to_numpy(), rho).p_value >= ALPHA)


def panel_values(runs: pd.DataFrame, metric: str, fractions: dict[str, tuple[str, float]],
                 failed: dict[tuple[str, str], int]) -> dict[str, dict[str, list[list[Any]]]]:
    """Per dataset having ``metric``: selectors x ks lists of the mean, sd and count of repetitions
    (x 100), the mark (:data:`BEST`, :data:`NOT_WORSE`, :data:`PLAIN`) and the unconverged flag.
    A selector with failed tasks on the dataset (``failed``) is never marked."""
    rows = metric_rows(runs, metric)
    if not len(rows):
        return {}
    reps = per_repeat(rows, metric=metric)
    stats = reps.groupby(["dataset", "selector", "k"], sort=False)[metric].agg(["mean", "std", "count"])
    stats[["mean", "std"]] *= 100
    split_values = rows[["dataset", "k", "repeat", "fold", "selector"]].assign(
        value=row_metric(rows, metric).to_numpy())
    per_split = split_values.pivot_table(index=["dataset", "k", "repeat", "fold"], columns="selector",
                                         values="value", aggfunc="first")
    failed_fits = unconverged(rows)
    bad_fits = None
    if failed_fits is not None:
        bad_fits = failed_fits.groupby([rows["dataset"], rows["selector"], rows["k"]], sort=False).sum()
    better = higher_is_better(metric)
    out = {}
    for dataset, part in rows.groupby("dataset", sort=False):
        dataset = str(dataset)
        selectors = [str(s) for s in dict.fromkeys(part["selector"])]
        ks = sorted(int(k) for k in part["k"].unique())
        rho = fractions.get(dataset, ("", 0.0))[1]
        shape = (len(selectors), len(ks))
        mean, sd, n = (np.full(shape, np.nan) for _ in range(3))
        for i, sel in enumerate(selectors):
            for j, k in enumerate(ks):
                key = (dataset, sel, k)
                if key in stats.index:
                    mean[i, j], sd[i, j], n[i, j] = stats.loc[key, ["mean", "std", "count"]]
        marks = np.zeros(shape, dtype=int)
        counted = np.array([(dataset, s) not in failed for s in selectors])
        for j, k in enumerate(ks):
            column = np.where(counted & ~np.isnan(mean[:, j]), mean[:, j], np.nan)
            if np.isnan(column).all():
                continue
            top = np.nanmax(column) if better else np.nanmin(column)
            best_rows = [i for i in range(len(selectors)) if column[i] == top]
            block = per_split.loc[(dataset, k)] if (dataset, k) in per_split.index else pd.DataFrame()
            for i in range(len(selectors)):
                if np.isnan(column[i]):
                    continue
                if i in best_rows:
                    marks[i, j] = BEST
                elif _not_worse(block, metric, selectors[best_rows[0]], selectors[i], rho):
                    marks[i, j] = NOT_WORSE
        unconverged_cells = [[int(bad_fits.get((dataset, s, k), 0) > 0) if bad_fits is not None else 0 for k in ks]
                             for s in selectors]
        out[dataset] = {"selectors": selectors, "ks": ks,
                        "mean": [[rounded(v) for v in r] for r in mean], "sd": [[rounded(v) for v in r] for r in sd],
                        "n": [[None if np.isnan(v) else int(v) for v in r] for r in n],
                        "mark": marks.tolist(), "unconverged": unconverged_cells}
    return out


# ----------------------------------------------------------------------------- across datasets
def cd_svg(tables: S.FriedmanTables, alpha: float, title: str) -> str | None:
    """The critical-difference diagram of ``fsbench stats`` as SVG text (fixed ids, no date)."""
    import matplotlib

    from fsbench.report.cd_diagram import plot_cd_diagram
    from fsbench.report.plots import pyplot

    if tables.ranks is None:
        return None
    with matplotlib.rc_context({"svg.hashsalt": "fsbench", "svg.fonttype": "none"}):
        try:
            fig = plot_cd_diagram(tables.scores, alpha=alpha, higher_is_better=tables.higher_is_better,
                                  block_name=tables.block_name, title=title)
        except ValueError:
            return None
        buffer = io.StringIO()
        try:
            fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight", pad_inches=0.1)
        finally:
            pyplot().close(fig)
    return buffer.getvalue()


def across_values(runs: pd.DataFrame, metric: str, alpha: float = ALPHA) -> dict[str, Any]:
    """At the largest k every dataset ran: the Friedman ranks (with the CD diagram's SVG), and the
    Pareto points (mean x 100 against the median fit seconds); a ``note`` where they cannot be had."""
    rows = metric_rows(runs, metric)
    out: dict[str, Any] = {"k": None, "ranks": [], "friedman": None, "svg": None, "pareto": [], "note": None}
    if not len(rows):
        return out
    try:
        k = S.default_k(rows)
    except FsbenchError as exc:
        out["note"] = str(exc).split(";")[0]
        return out
    out["k"] = k
    compared = S.common_splits(rows[rows["k"] == k])[0]
    points = S.pareto_points(compared, k, metric=metric)
    out["pareto"] = [{"dataset": str(p.dataset), "selector": str(p.selector), "value": rounded(100 * p.accuracy),
                      "seconds": rounded(p.fit_seconds_median, 6)} for p in points.itertuples()]
    if rows["selector"].nunique() < 2:
        out["note"] = "one selector: nothing to rank"
        return out
    try:
        tables = S.ranks_and_friedman(compared, k, alpha, metric=metric)
    except FsbenchError as exc:
        out["note"] = str(exc)
        return out
    if tables.ranks is None:
        out["note"] = tables.note
        return out
    out["ranks"] = [[str(r.selector), rounded(r.average_rank)] for r in tables.ranks.itertuples()]
    record = tables.friedman.iloc[0]
    out["friedman"] = {key: (rounded(record[key], 8) if isinstance(record[key], float | np.floating) else
                             int(record[key]) if isinstance(record[key], int | np.integer) else str(record[key]))
                       for key in record.index}
    if tables.dropped:
        out["note"] = f"left out of the ranks (absent from some dataset): {', '.join(tables.dropped)}"
    by = "" if metric == "accuracy" else f" by {metric_label(metric, percent=False)}"
    out["svg"] = cd_svg(tables, alpha, f"Critical difference diagram{by} at k = {k}")
    return out


def stability_values(rankings: pd.DataFrame | None, runs: pd.DataFrame, n_features: dict[str, int]
                     ) -> list[dict[str, Any]]:
    """Nogueira's stability (and its 95% interval) of each selector's top k, per dataset, by k."""
    if rankings is None or not len(rankings):
        return []
    table = S.stability_table(rankings, S.ks_by_dataset(runs), n_features)
    out = []
    for (dataset, selector), part in table.groupby(["dataset", "selector"], sort=False):
        part = part.sort_values("k")
        out.append({"dataset": str(dataset), "selector": str(selector), "k": [int(k) for k in part["k"]],
                    "value": [rounded(v) for v in part["nogueira"]], "low": [rounded(v) for v in part["ci_low"]],
                    "high": [rounded(v) for v in part["ci_high"]]})
    return out


def cost_values(runs: pd.DataFrame) -> list[list[Any]]:
    """Per dataset and selector: tasks, median fit seconds, median and total task seconds."""
    table = S.cost_table(runs)
    return [[str(r.dataset), str(r.selector), int(r.n_tasks), rounded(r.fit_seconds_median, 6),
             rounded(r.task_seconds_median, 6), rounded(r.task_seconds_total, 3)] for r in table.itertuples()]


# ----------------------------------------------------------------------------- one group
def group_values(runs: pd.DataFrame, rankings: pd.DataFrame | None, protocols: dict[str, dict[str, Any]],
                 n_features: dict[str, int], failures: pd.DataFrame, metrics: Sequence[str]) -> dict[str, Any]:
    """Everything the page shows of the rows of one classifier: the per-dataset panels (a value
    table per metric), the comparisons across datasets per metric, stability, cost, failures."""
    failed = {}
    if len(failures):
        counts = failures.groupby(["dataset", "selector"], sort=False).size()
        failed = {(str(d), str(s)): int(n) for (d, s), n in counts.items()}
    fractions = S.split_fractions(runs, protocols)
    captions = spread_captions(runs)
    panels: dict[str, dict[str, Any]] = {}
    for metric in metrics:
        for dataset, values in panel_values(runs, metric, fractions, failed).items():
            panel = panels.setdefault(dataset, {"dataset": dataset, "caption": captions.get(dataset, ""),
                                                "failed": {s: n for (d, s), n in failed.items() if d == dataset},
                                                "metrics": {}})
            panel["metrics"][metric] = values
    return {"panels": list(panels.values()),
            "across": {metric: across_values(runs, metric) for metric in metrics},
            "stability": stability_values(rankings, runs, n_features),
            "cost": cost_values(runs),
            "failures": [[str(r.dataset), int(r.repeat), int(r.fold), str(r.selector), str(r.error)]
                         for r in failures.itertuples()] if len(failures) else []}
