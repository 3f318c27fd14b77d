"""The tables of ``fsbench stats``, from results already read: DataFrames in, DataFrames out.

No I/O and no printing here (``fsbench report`` reuses these builders); the statistics
themselves are the pure functions of :mod:`fsbench.stats`. Accuracies are fractions, as in
``runs.csv.gz``. ``runs`` is always the rows of one classifier
(:func:`fsbench.report.tables.one_classifier`), without a ``classifier`` column or with one value.

Choices, stated once:

- **Default k** (:func:`default_k`): the largest k that every dataset of the results ran
  (for one folder, the largest k run, as ``fsbench table``).
- **Splits compared** (:func:`common_splits`): within each (dataset, k), the splits (repeat,
  fold) that every selector of that dataset has; a split a selector lacks (a failed or missing
  task) is left out for all of them, with a note, so that every comparison is paired.
- **Friedman blocks** (:func:`ranks_and_friedman`): datasets, each selector's accuracy averaged
  over its repetitions first (a k-fold repetition pools its folds: correct / tested); with
  ``k=None`` (``--k all``) one block per (dataset, k), whose p-values are then descriptive
  (blocks of one dataset are not independent). Only selectors present in every block enter,
  the others are named in a note. Friedman's statistic is Demšar's (no tie correction).
- **Pairwise** (:func:`pairwise_table`): ``scope = "dataset"`` rows compare two selectors on
  one dataset and k over its J splits: mean difference a - b, the corrected resampled t-test
  t = mean / sqrt((1/J + n_test/n_train) var) (Nadeau-Bengio for repeated hold-out, rho the
  mean n_test / (n_test + n_train) of the rows; Bouckaert-Frank for r x k-fold CV, J = r k
  folds, rho = 1/k), the Wilcoxon signed-rank p-value, and the Bayesian correlated t-test's
  P(a better), P(|diff| <= rope), P(b better) with the same rho. ``scope = "across"`` rows
  (dataset empty) compare two selectors over the datasets at one k: Wilcoxon signed-rank on
  the per-dataset means, Holm-adjusted over the pairs of that k (``p_holm``). ``significant``
  is t_p_value < alpha on dataset rows and p_holm < alpha on across rows. With a baseline,
  only (baseline, other) pairs, the baseline as selector a (and Holm over those K - 1 pairs).
- **Stability** (:func:`stability_table`): per dataset, selector and k, the top-k sets of the
  outer splits' rankings: Nogueira's estimate with its 95% interval, and Kuncheva's index.
- **Cost** (:func:`cost_table`): one value per task (dataset, repeat, fold, selector), not per
  k row: median and total of ``fit_seconds`` (the selector's final fit with the chosen
  parameters; a tuned selector's grid search is not in it) and ``task_seconds`` (the whole
  task: grid search, final fit and evaluation).
- **Metric** (``metric``, :data:`fsbench.evaluation.metrics.ALL_METRICS`, default accuracy): the score compared.
  Where a repetition pools its folds (Friedman blocks, the Pareto points) the metric is computed
  from the per-class counts summed over the folds; the per-dataset pairwise tests compare each
  split's (fold's) own metric, as they compare each fold's accuracy. The selection metrics
  (relevant recall and precision, probe rate) compare the datasets that have them only (the
  caller leaves out the others' rows).
- **Direction** (:func:`fsbench.evaluation.metrics.higher_is_better`): rank 1 is the highest
  value, or the lowest for a metric where lower is better (probe rate); ``p_a_better`` and
  ``p_b_better`` say which selector is better in that sense, while ``mean_diff`` stays the
  plain difference a - b of the values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fsbench.errors import FsbenchError
from fsbench.evaluation.metrics import higher_is_better, row_metric
from fsbench.report.tables import per_repeat
from fsbench.stats import (
    RECORD_FIELDS,
    ROPE,
    block_matrix,
    friedman_test,
    holm,
    kuncheva_index,
    nogueira_stability,
    pairwise_splits,
    top_k_matrix,
    wilcoxon_test,
)

RANKS_COLUMNS = ("selector", "average_rank", "n_blocks")
FRIEDMAN_COLUMNS = RECORD_FIELDS
PAIRWISE_COLUMNS = ("scope", "dataset", "k", "selector_a", "selector_b", "n", "correction", "test_fraction",
                    "mean_diff", "t", "t_p_value", "wilcoxon_p", "p_a_better", "p_equivalent", "p_b_better",
                    "p_holm", "significant")
STABILITY_COLUMNS = ("dataset", "selector", "k", "nogueira", "ci_low", "ci_high", "kuncheva")
COST_COLUMNS = ("dataset", "selector", "n_tasks", "fit_seconds_median", "fit_seconds_total",
                "task_seconds_median", "task_seconds_total")
PARETO_COLUMNS = ("dataset", "selector", "k", "accuracy", "fit_seconds_median")
RANKING_COLUMNS = ("dataset", "repeat", "fold", "selector", "position", "feature")
#: the corrected t-test of each protocol kind (``correction`` column of pairwise.csv)
CORRECTIONS = {"holdout": "nadeau-bengio", "kfold": "bouckaert-frank"}
SPLIT = ["repeat", "fold"]


def _order(values: pd.Series) -> list[str]:
    return [str(v) for v in dict.fromkeys(values)]


def _splits(runs: pd.DataFrame) -> pd.DataFrame:
    return runs if "fold" in runs.columns else runs.assign(fold=0)


# ----------------------------------------------------------------------------- k and splits
def ks_by_dataset(runs: pd.DataFrame) -> dict[str, list[int]]:
    """The ks each dataset ran, ascending."""
    return {str(d): sorted(int(k) for k in rows["k"].unique()) for d, rows in runs.groupby("dataset", sort=False)}


def default_k(runs: pd.DataFrame) -> int:
    """The largest k every dataset ran; FsbenchError when the datasets share none."""
    ks = ks_by_dataset(runs)
    shared = set.intersection(*(set(v) for v in ks.values()))
    if not shared:
        which = "; ".join(f"{d}: {', '.join(map(str, v))}" for d, v in ks.items())
        raise FsbenchError(f"The datasets share no k ({which}); choose one with --k, or use --k all.")
    return max(shared)


def check_k(runs: pd.DataFrame, k: int) -> list[str]:
    """The datasets that ran ``k`` (FsbenchError naming the ks run when none did)."""
    have = [d for d, ks in ks_by_dataset(runs).items() if k in ks]
    if not have:
        run = sorted({int(v) for v in runs["k"].unique()})
        raise FsbenchError(f"The results have no rows for k = {k}; choose one of {', '.join(map(str, run))} "
                           "(or --k all).")
    return have


def common_splits(runs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The rows of the splits (repeat, fold) that every selector of their (dataset, k) has, and
    a note per (dataset, k) that lost some."""
    runs = _splits(runs)
    kept, notes = [], []
    for (dataset, k), rows in runs.groupby(["dataset", "k"], sort=False):
        have = rows.groupby("selector", sort=False)[SPLIT].apply(lambda r: set(map(tuple, r.to_numpy())))
        shared = set.intersection(*have)
        every = set.union(*have)
        if len(shared) < len(every):
            notes.append(f"{dataset}, k = {k}: {len(every) - len(shared)} of {len(every)} splits lack a selector's "
                         f"result and are left out of the comparisons")
        mask = [tuple(s) in shared for s in rows[SPLIT].to_numpy()]
        kept.append(rows[mask])
    return (pd.concat(kept) if kept else runs.iloc[:0]), notes


def selectors_in_every_block(runs: pd.DataFrame, blocks: Sequence[str]) -> tuple[list[str], list[str]]:
    """(selectors present in every block, the others), each in order of appearance."""
    selectors = _order(runs["selector"])
    per_block = runs.groupby(list(blocks), sort=False)["selector"].apply(lambda s: set(map(str, s)))
    everywhere = set.intersection(*per_block) if len(per_block) else set()
    return [s for s in selectors if s in everywhere], [s for s in selectors if s not in everywhere]


# ----------------------------------------------------------------------------- Friedman
@dataclass(frozen=True)
class FriedmanTables:
    """``ranks`` (columns :data:`RANKS_COLUMNS`) and ``friedman`` (one row, :data:`FRIEDMAN_COLUMNS`),
    None with ``note`` saying why when there are fewer than two blocks or selectors; ``scores``
    (blocks x selectors mean accuracy, the diagram's input), ``block_name``, ``dropped``
    (selectors absent from some block) and ``higher_is_better`` (the direction of the scores:
    False when the lowest ranks first)."""

    ranks: pd.DataFrame | None
    friedman: pd.DataFrame | None
    scores: pd.DataFrame
    block_name: str
    dropped: list[str] = field(default_factory=list)
    note: str | None = None
    higher_is_better: bool = True


def block_scores(runs: pd.DataFrame, k: int | None, *, metric: str = "accuracy") -> tuple[pd.DataFrame, str, list[str]]:
    """(blocks x selectors mean accuracy (or ``metric``) at ``k`` (None: one block per (dataset,
    k)), the blocks' name, the selectors left out because some block lacks them). ``runs`` holds
    common splits (:func:`common_splits`)."""
    blocks = ["dataset"] if k is not None else ["dataset", "k"]
    rows = runs[runs["k"] == k] if k is not None else runs
    kept, dropped = selectors_in_every_block(rows, blocks)
    reps = per_repeat(rows[rows["selector"].isin(kept)].drop(columns="classifier", errors="ignore"), metric=metric)
    try:
        scores = block_matrix(reps, blocks, value=metric) if len(reps) else pd.DataFrame()
    except ValueError as exc:
        raise FsbenchError(f"The results cannot be compared: {exc}") from None
    return scores, "datasets" if k is not None else "(dataset, k) pairs", dropped


def ranks_and_friedman(runs: pd.DataFrame, k: int | None, alpha: float = 0.05, *,
                       metric: str = "accuracy") -> FriedmanTables:
    """Average ranks and the Friedman test (Iman-Davenport's F, Nemenyi's CD at ``alpha``) of the
    selectors over the blocks at ``k`` (None: (dataset, k) blocks); see the module docstring.
    Two datasets at least (the ks of one dataset are no independent blocks), two selectors.
    Rank 1 is the best in ``metric``'s direction (the lowest probe rate)."""
    scores, name, dropped = block_scores(runs, k, metric=metric)
    better_high = higher_is_better(metric)
    n_blocks, n_selectors = scores.shape if scores.size else (0, 0)
    n_datasets = len({b[0] if isinstance(b, tuple) else b for b in scores.index})
    if n_datasets < 2 or n_selectors < 2:
        need, have = ("datasets", n_datasets) if n_datasets < 2 else (f"selectors present in every {name[:-1]}",
                                                                       n_selectors)
        note = (f"Friedman's test, the ranks and the critical-difference diagram need two or more {need}; these "
                f"results have {have}, so only the per-dataset parts (pairwise, stability, cost) are written")
        return FriedmanTables(None, None, scores, name, dropped, note, better_high)
    result = friedman_test(scores, alpha=alpha, higher_is_better=better_high)
    friedman = pd.DataFrame([result.record()], columns=list(FRIEDMAN_COLUMNS))
    return FriedmanTables(result.ranks[list(RANKS_COLUMNS)], friedman, scores, name, dropped,
                          higher_is_better=better_high)


# ----------------------------------------------------------------------------- pairwise
def split_fractions(runs: pd.DataFrame, protocols: Mapping[str, Mapping[str, object]]) -> dict[str, tuple[str, float]]:
    """Per dataset: (correction, rho = n_test / n_total). ``protocols`` maps a dataset to its
    results' config ``protocol`` (kind, n_splits); k-fold CV gives Bouckaert-Frank with rho =
    1/n_splits, hold-out (or an unknown protocol with one fold per repeat) Nadeau-Bengio with
    the rows' mean n_test / (n_test + n_train)."""
    out = {}
    for dataset, rows in _splits(runs).groupby("dataset", sort=False):
        protocol = protocols.get(str(dataset)) or {}
        kind = protocol.get("kind") or ("kfold" if rows["fold"].nunique() > 1 else "holdout")
        if kind == "kfold":
            n_splits = protocol.get("n_splits") or rows["fold"].nunique()
            out[str(dataset)] = (CORRECTIONS["kfold"], 1.0 / float(n_splits))  # type: ignore[arg-type]
        else:
            rho = float((rows["n_test"] / (rows["n_test"] + rows["n_train"])).mean())
            out[str(dataset)] = (CORRECTIONS["holdout"], rho)
    return out


def _baseline_first(runs: pd.DataFrame, baseline: str | None) -> pd.DataFrame:
    if baseline is None:
        return runs
    first = runs["selector"] == baseline
    return pd.concat([runs[first], runs[~first]])


def pairwise_table(runs: pd.DataFrame, fractions: Mapping[str, tuple[str, float]], *, baseline: str | None = None,
                   rope: float = ROPE, alpha: float = 0.05, metric: str = "accuracy") -> pd.DataFrame:
    """Every pair of selectors on every dataset and k of ``runs`` (common splits), then across
    datasets per k; columns :data:`PAIRWISE_COLUMNS` (module docstring). ``fractions`` is
    :func:`split_fractions`; ``rope`` is in accuracy (0.01 = 1 point), or in ``metric``'s units."""
    runs = _baseline_first(_splits(runs).drop(columns="classifier", errors="ignore"), baseline)
    if metric != "accuracy" and len(runs):
        runs = runs.assign(**{metric: row_metric(runs, metric)})  # each split's own metric
    rho = {d: f for d, (_, f) in fractions.items()}
    per_dataset = pairwise_splits(runs, rho, rope=rope, value=metric) if len(runs) else pd.DataFrame()
    if baseline is not None and len(per_dataset):
        per_dataset = per_dataset[per_dataset["selector_a"] == baseline]
    per_dataset = per_dataset.rename(columns={"n_splits": "n"}).assign(scope="dataset")
    if len(per_dataset):
        per_dataset["correction"] = [fractions[str(d)][0] for d in per_dataset["dataset"]]
        per_dataset["significant"] = per_dataset["t_p_value"] < alpha
        if not higher_is_better(metric):  # a better: a's values below b's by more than the rope
            per_dataset[["p_a_better", "p_b_better"]] = per_dataset[["p_b_better", "p_a_better"]].to_numpy()
    across = [_across(runs, int(k), baseline, alpha, metric) for k in sorted(runs["k"].unique())]
    table = pd.concat([per_dataset, *across], ignore_index=True)
    return table.reindex(columns=list(PAIRWISE_COLUMNS))


def _across(runs: pd.DataFrame, k: int, baseline: str | None, alpha: float, metric: str = "accuracy") -> pd.DataFrame:
    """Wilcoxon signed-rank over the datasets at k, Holm over the pairs (empty below two datasets)."""
    scores, _, _ = block_scores(runs, k, metric=metric)
    if scores.shape[0] < 2 or scores.shape[1] < 2:
        return pd.DataFrame()
    names = [str(c) for c in scores.columns]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    if baseline is not None:
        pairs = [(baseline, b) for b in names if b != baseline] if baseline in names else []
    if not pairs:
        return pd.DataFrame()
    rows = []
    for a, b in pairs:
        xa, xb = scores[a].to_numpy(), scores[b].to_numpy()
        rows.append({"scope": "across", "dataset": np.nan, "k": k, "selector_a": a, "selector_b": b,
                     "n": len(xa), "mean_diff": float(np.mean(xa - xb)), "wilcoxon_p": wilcoxon_test(xa, xb).p_value})
    table = pd.DataFrame(rows)
    table["p_holm"] = holm(table["wilcoxon_p"].to_numpy())
    table["significant"] = table["p_holm"] < alpha
    return table


# ----------------------------------------------------------------------------- stability
def ranking_matrix(rankings: pd.DataFrame) -> np.ndarray:
    """The splits x positions array of feature indices of one (dataset, selector)'s rankings,
    splits in (repeat, fold) order; FsbenchError when a split's positions are not 1..P."""
    wide = rankings.pivot_table(index=SPLIT, columns="position", values="feature", aggfunc="first")
    wide = wide.sort_index()
    positions = list(wide.columns)
    if positions != list(range(1, len(positions) + 1)) or wide.isna().to_numpy().any():
        raise FsbenchError("A ranking in rankings.csv.gz lacks some positions (they must run 1, 2, ... in every "
                           "split); the file is damaged: regenerate it by rerunning the experiment.")
    return wide.to_numpy(dtype=int)


def stability_table(rankings: pd.DataFrame, ks: Mapping[str, Sequence[int]], n_features: Mapping[str, int],
                    alpha: float = 0.05) -> pd.DataFrame:
    """Stability of each selector's top-k over the outer splits, per dataset and k in ``ks``
    (k up to the positions stored and below the dataset's ``n_features``; datasets missing
    from ``ks`` or ``n_features``, and selectors with fewer than two splits, give no row).
    Columns :data:`STABILITY_COLUMNS`: Nogueira's estimate and its (1 - alpha) interval,
    Kuncheva's index."""
    rows = []
    for (dataset, selector), group in rankings.groupby(["dataset", "selector"], sort=False):
        dataset, selector = str(dataset), str(selector)
        if dataset not in ks or dataset not in n_features:
            continue
        matrix = ranking_matrix(group)
        d = int(n_features[dataset])
        if matrix.shape[0] < 2 or matrix.max() >= d or matrix.min() < 0:
            if matrix.shape[0] >= 2:
                raise FsbenchError(f"rankings.csv.gz names a feature outside 0..{d - 1} of dataset {dataset!r}; "
                                   "the file does not belong to these results.")
            continue
        for k in ks[dataset]:
            if not 1 <= k <= matrix.shape[1] or k >= d:
                continue
            z = top_k_matrix(matrix, int(k), d)
            result = nogueira_stability(z, alpha=alpha)
            rows.append({"dataset": dataset, "selector": selector, "k": int(k), "nogueira": result.stability,
                         "ci_low": result.lower, "ci_high": result.upper, "kuncheva": kuncheva_index(z)})
    return pd.DataFrame(rows, columns=list(STABILITY_COLUMNS))


# ----------------------------------------------------------------------------- cost
def task_rows(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per task (dataset, repeat, fold, selector): its first row (fit and task seconds
    are the task's, repeated on each of its k rows)."""
    return _splits(runs).drop_duplicates(["dataset", *SPLIT, "selector"])


def cost_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and selector: the number of tasks, median and total fit and task seconds
    (columns :data:`COST_COLUMNS`)."""
    tasks = task_rows(runs)
    grouped = tasks.groupby(["dataset", "selector"], sort=False)
    table = pd.DataFrame({
        "n_tasks": grouped.size(),
        "fit_seconds_median": grouped["fit_seconds"].median(), "fit_seconds_total": grouped["fit_seconds"].sum(),
        "task_seconds_median": grouped["task_seconds"].median(),
        "task_seconds_total": grouped["task_seconds"].sum()}).reset_index()
    return table[list(COST_COLUMNS)]


def pareto_points(runs: pd.DataFrame, k: int, *, metric: str = "accuracy") -> pd.DataFrame:
    """Per dataset and selector: mean accuracy at ``k`` over repetitions (a fraction) and the
    median fit seconds over its tasks (columns :data:`PARETO_COLUMNS`); with ``metric``, its
    mean (pooled over folds by counts) in the ``accuracy`` column."""
    at_k = runs[runs["k"] == k].drop(columns="classifier", errors="ignore")
    accuracy = per_repeat(at_k, metric=metric).groupby(["dataset", "selector"], sort=False)[metric].mean()
    cost = cost_table(at_k).set_index(["dataset", "selector"])["fit_seconds_median"]
    table = pd.DataFrame({"accuracy": accuracy, "fit_seconds_median": cost}).reset_index()
    table.insert(2, "k", k)
    return table[list(PARETO_COLUMNS)]
