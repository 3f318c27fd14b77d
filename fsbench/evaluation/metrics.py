"""The metrics the reports show: classification metrics from per-class counts, and how well the
top-k features match a dataset's known relevant features and probes.

Each result row of ``runs.csv.gz`` records, per class in the dataset's class order and
separated by ``;``, the test samples of the class (``class_support``), the test samples
predicted as it (``class_predicted``) and those of them predicted right (``class_correct``).
These three vectors determine every metric here, so a metric is computed from the counts
alone, for many rows at once (numpy, rows x classes), with the conventions of scikit-learn:

- ``accuracy``: sum(correct) / sum(support);
- ``balanced_accuracy``: the mean recall correct / support over the classes present in the
  test part (support > 0), as ``balanced_accuracy_score``;
- ``macro_f1``: the mean of 2 correct / (support + predicted) over the classes present in the
  truth or the predictions (support + predicted > 0), as ``f1_score(average="macro")``,
  whose default labels are those present (a class never predicted scores 0);
- ``kappa``: Cohen's (p_o - p_e) / (1 - p_e), p_e = sum_k support_k predicted_k / n^2; NaN
  when p_e = 1 (truth and prediction one and the same class), as ``cohen_kappa_score``;
- ``mcc``: Gorodkin's R_K, (c s - sum_k p_k t_k) / sqrt((s^2 - sum_k p_k^2)(s^2 - sum_k t_k^2))
  with c = sum(correct), s = n, p = predicted, t = support; 0 when the denominator is 0, as
  ``matthews_corrcoef``.

Pooled metrics over folds pool the counts first: the metric of a k-fold repetition is the
metric of its folds' summed per-class counts (:func:`pooled_metric`), which is the metric of
the concatenated predictions, not a mean over folds.

Selection metrics (:data:`SELECTION_METRICS`) need a dataset whose relevant features or probe
columns are known (generated data, or real data with declared ``relevant`` features or appended
``probes``); the rows of such a dataset record, at their ``k``, ``relevant_selected`` (top-k
features that are relevant) and ``n_relevant`` (the size of the relevant set), and/or
``probes_selected`` (top-k features that are probes) and ``n_probes`` (the probe columns):

- ``relevant_recall``: relevant_selected / min(k, n_relevant), the share of the relevant features
  the top k could hold that it holds (1 when k >= n_relevant and every relevant feature is in);
- ``relevant_precision``: relevant_selected / k;
- ``probe_rate``: probes_selected / k, the share of the top k taken by probes: LOWER is better
  (:func:`higher_is_better`, the one place that says which way each metric goes).

Pooled over a group of rows they are the ratio of the summed numerators to the summed
denominators. A row without its metric's two columns (another dataset, or rows written before)
has no value: NaN, and a group holding such a row is NaN; :func:`check_metric` refuses a
selection metric only when no row has it.

``diag_classifier_unconverged`` counts the classifier fits behind a row that did not converge
(:func:`unconverged`). Rows written before these columns existed support ``accuracy`` only
(from their ``accuracy`` column); :func:`check_metric` refuses any other metric for them in
one sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fsbench.errors import FsbenchError

#: metrics of the classifier's test predictions (from the per-class counts, or accuracy)
METRICS = ("accuracy", "balanced_accuracy", "macro_f1", "kappa", "mcc")
#: metrics of the top-k features against a dataset's known relevant features or probes
SELECTION_METRICS = ("relevant_recall", "relevant_precision", "probe_rate")
#: every metric the reports show (``--metric``)
ALL_METRICS = METRICS + SELECTION_METRICS
#: how each metric is named in titles, headers and axis labels
LABELS = {"accuracy": "accuracy", "balanced_accuracy": "balanced accuracy", "macro_f1": "macro F1",
          "kappa": "Cohen's kappa", "mcc": "MCC", "relevant_recall": "relevant recall",
          "relevant_precision": "relevant precision", "probe_rate": "probe rate"}
#: the metrics for which a lower value is better (every other one: higher is better)
LOWER_IS_BETTER = frozenset({"probe_rate"})
#: per-class count columns: test samples of the class, predicted as it, predicted right
SUPPORT, PREDICTED, CORRECT = "class_support", "class_predicted", "class_correct"
COUNT_COLUMNS = (SUPPORT, PREDICTED, CORRECT)
#: classifier fits behind a row that did not converge
UNCONVERGED = "diag_classifier_unconverged"
#: per row of a dataset with known relevant features: top-k features that are relevant, and how many are
RELEVANT_SELECTED, N_RELEVANT = "relevant_selected", "n_relevant"
#: per row of a dataset with probe columns: top-k features that are probes, and how many probes there are
PROBES_SELECTED, N_PROBES = "probes_selected", "n_probes"
#: each selection metric's columns: (features of the set in the top k, size of the set)
SELECTION_COLUMNS = {"relevant_recall": (RELEVANT_SELECTED, N_RELEVANT),
                     "relevant_precision": (RELEVANT_SELECTED, N_RELEVANT),
                     "probe_rate": (PROBES_SELECTED, N_PROBES)}


def metric_label(metric: str, *, percent: bool = True) -> str:
    """The metric's name for people (``"balanced accuracy"``, ``"probe rate"``), with its unit when
    ``percent`` (:func:`metric_unit`): ``(%)`` for the fractions, every selection metric among
    them, ``(x 100)`` for kappa and MCC, which range from -1 to 1."""
    if not percent:
        check_metric_name(metric)
        return LABELS[metric]
    return f"{LABELS[metric]} ({metric_unit(metric)})"


def metric_unit(metric: str) -> str:
    """The unit of the metric's values x 100: ``"x 100"`` for kappa and MCC (from -1 to 1), ``"%"``
    for the fractions."""
    check_metric_name(metric)
    return "x 100" if metric in ("kappa", "mcc") else "%"


def higher_is_better(metric: str) -> bool:
    """Whether a higher value of ``metric`` is better: False for ``probe_rate`` alone. Every mark
    of a best value, ranking and one-sided reading of a test goes by it."""
    check_metric_name(metric)
    return metric not in LOWER_IS_BETTER


def is_selection_metric(metric: str) -> bool:
    """Whether ``metric`` scores the top-k features against known relevant features or probes."""
    check_metric_name(metric)
    return metric in SELECTION_METRICS


def check_metric_name(metric: str) -> None:
    """FsbenchError naming the known metrics when ``metric`` is not one of :data:`ALL_METRICS`."""
    if metric not in ALL_METRICS:
        raise FsbenchError(f"Unknown metric {metric!r}; use one of {', '.join(ALL_METRICS)}.")


# ----------------------------------------------------------------------------- counts -> metric
def metric_from_counts(metric: str, *, support: np.ndarray, predicted: np.ndarray,
                       correct: np.ndarray) -> np.ndarray:
    """``metric`` of each row of the rows x classes count arrays (1-D: one row), as floats.

    The conventions are scikit-learn's (module docstring); a row without test samples is NaN.
    """
    check_metric_name(metric)
    t, p, c = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (support, predicted, correct))
    if not t.shape == p.shape == c.shape:
        raise ValueError(f"The count arrays differ in shape: {t.shape}, {p.shape}, {c.shape}.")
    n = t.sum(axis=1)
    hits = c.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric == "accuracy":
            out = hits / n
        elif metric == "balanced_accuracy":
            present = t > 0
            recall = np.where(present, c / np.where(present, t, 1.0), 0.0)
            out = recall.sum(axis=1) / present.sum(axis=1)
        elif metric == "macro_f1":
            denominator = t + p
            present = denominator > 0
            f1 = np.where(present, 2.0 * c / np.where(present, denominator, 1.0), 0.0)
            out = f1.sum(axis=1) / present.sum(axis=1)
        elif metric == "kappa":
            p_o = hits / n
            p_e = (t * p).sum(axis=1) / (n * n)
            out = (p_o - p_e) / (1.0 - p_e)
        else:  # mcc
            cov_tp = hits * n - (p * t).sum(axis=1)
            cov_pp = n * n - (p * p).sum(axis=1)
            cov_tt = n * n - (t * t).sum(axis=1)
            zero = (cov_pp * cov_tt) == 0
            out = np.where(zero, 0.0, cov_tp / np.sqrt(np.where(zero, 1.0, cov_pp * cov_tt)))
            out = np.where(n > 0, out, np.nan)
    return out


# ----------------------------------------------------------------------------- parsing
def has_counts(runs: pd.DataFrame) -> bool:
    """Whether ``runs`` has the three per-class count columns."""
    return all(c in runs.columns for c in COUNT_COLUMNS)


def rows_without_counts(runs: pd.DataFrame) -> np.ndarray:
    """A boolean mask of the rows lacking per-class counts (every row when the columns are absent)."""
    if not has_counts(runs):
        return np.ones(len(runs), dtype=bool)
    return runs[list(COUNT_COLUMNS)].isna().any(axis=1).to_numpy()


def parse_counts(values: pd.Series | Sequence[str], n_classes: int) -> np.ndarray:
    """The rows x ``n_classes`` integer array of ``;``-separated counts (every value has
    ``n_classes`` fields); ValueError naming the first value that is not such a list."""
    values = pd.Series(values, dtype=object).astype(str)
    if len(values) == 0:
        return np.zeros((0, n_classes), dtype=np.int64)
    fields = ";".join(values.tolist()).split(";")
    try:
        flat = np.asarray(fields, dtype=np.int64) if len(fields) == len(values) * n_classes else None
    except ValueError:
        flat = None
    if flat is None:
        bad = values[values.str.count(";") != n_classes - 1]
        first = bad.iloc[0] if len(bad) else next(v for v in values if not _is_count_list(v))
        raise ValueError(f"{first!r} is not a list of {n_classes} ';'-separated counts.")
    return flat.reshape(len(values), n_classes)


def _is_count_list(value: str) -> bool:
    return all(part.strip().isdigit() for part in value.split(";"))


def class_counts(runs: pd.DataFrame) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The count arrays of ``runs``, one entry per number of classes (a frame may mix datasets):
    (row positions, support, predicted, correct), each array rows x classes. FsbenchError when
    a row lacks its counts, a row's three counts disagree in length, or they are inconsistent
    (correct above support or predicted, or sums unequal to n_correct / n_test where recorded)."""
    missing = rows_without_counts(runs)
    if missing.any():
        raise FsbenchError(f"{int(missing.sum())} of {len(runs)} rows lack per-class counts; recompute them with "
                           "the current fsbench.")
    strings = [runs[c].astype(str).str.strip() for c in COUNT_COLUMNS]
    n_classes = strings[0].str.count(";").to_numpy() + 1
    for s in strings[1:]:
        if (s.str.count(";").to_numpy() + 1 != n_classes).any():
            raise FsbenchError("A row's per-class counts have different numbers of classes; the results file is "
                               "damaged: recompute it with the current fsbench.")
    out = []
    for c in np.unique(n_classes):
        rows = np.flatnonzero(n_classes == c)
        try:
            t, p, k = (parse_counts(s.iloc[rows], int(c)) for s in strings)
        except ValueError as exc:
            raise FsbenchError(f"Damaged per-class counts in the results: {exc} Recompute them with the current "
                               "fsbench.") from None
        if (k > t).any() or (k > p).any() or (t < 0).any() or (p < 0).any():
            raise FsbenchError("Damaged per-class counts in the results: a class has more correct predictions "
                               "than samples or predictions; recompute them with the current fsbench.")
        if "n_test" in runs.columns and (t.sum(axis=1) != runs["n_test"].to_numpy()[rows]).any():
            raise FsbenchError("Damaged per-class counts in the results: class_support does not sum to n_test; "
                               "recompute them with the current fsbench.")
        if "n_correct" in runs.columns and (k.sum(axis=1) != runs["n_correct"].to_numpy()[rows]).any():
            raise FsbenchError("Damaged per-class counts in the results: class_correct does not sum to n_correct; "
                               "recompute them with the current fsbench.")
        out.append((rows, t, p, k))
    return out


# ----------------------------------------------------------------------------- selection metrics
def selection_terms(metric: str, *, selected: np.ndarray, size: np.ndarray,
                    k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(numerator, denominator) of a selection metric for each row, as floats: ``selected``
    features of the set among the top ``k``, the set holding ``size``. relevant_recall:
    selected / min(k, size); relevant_precision and probe_rate: selected / k."""
    if metric not in SELECTION_METRICS:
        check_metric_name(metric)
        raise ValueError(f"{metric!r} is not a selection metric; use one of {', '.join(SELECTION_METRICS)}.")
    selected, size, k = (np.asarray(a, dtype=float) for a in (selected, size, k))
    return selected, (np.minimum(k, size) if metric == "relevant_recall" else k)


def rows_without_selection(runs: pd.DataFrame, metric: str) -> np.ndarray:
    """A boolean mask of the rows lacking ``metric``'s two columns (every row when the columns are
    absent: a dataset without known relevant features or probes, or rows written before)."""
    if metric not in SELECTION_COLUMNS:
        check_metric_name(metric)
        raise ValueError(f"{metric!r} is not a selection metric; use one of {', '.join(SELECTION_METRICS)}.")
    columns = SELECTION_COLUMNS[metric]
    if not all(c in runs.columns for c in columns):
        return np.ones(len(runs), dtype=bool)
    return runs[list(columns)].isna().any(axis=1).to_numpy()


def datasets_without_metric(runs: pd.DataFrame, metric: str) -> list[str]:
    """The datasets of ``runs`` none of whose rows has ``metric`` (a selection metric of a dataset
    without known relevant features or probes), in order of appearance; [] for the other metrics."""
    if not is_selection_metric(metric) or not len(runs):
        return []
    lacking = pd.Series(rows_without_selection(runs, metric), index=runs.index)
    every = lacking.groupby(runs["dataset"].astype(str), sort=False).all()
    return [str(d) for d, none in every.items() if none]


#: per count column of the selection metrics: what a dataset needs for them (what it has, what it
#: lacks, the config keys that give it)
_SOURCES = {RELEVANT_SELECTED: ("declares relevant features", "declares no relevant features",
                                "`generate:` or `relevant:`"),
            PROBES_SELECTED: ("has probe columns", "has no probe columns", "`probes:`")}


def missing_reason(metric: str) -> str:
    """Why a dataset has no value of the selection metric ``metric`` (``"declares no relevant
    features"``, ``"has no probe columns"``), for notes."""
    if not is_selection_metric(metric):
        raise ValueError(f"{metric!r} is not a selection metric; use one of {', '.join(SELECTION_METRICS)}.")
    return _SOURCES[SELECTION_COLUMNS[metric][0]][1]


def _selection_values(runs: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(numerator, denominator) per row of ``runs``, NaN where the row lacks the columns;
    FsbenchError when a recorded count is not a whole number in its range."""
    lacking = rows_without_selection(runs, metric)
    n = len(runs)
    if lacking.all():
        return np.full(n, np.nan), np.full(n, np.nan)
    chosen, total = SELECTION_COLUMNS[metric]
    values = [pd.to_numeric(runs[c], errors="coerce").to_numpy(dtype=float) for c in (chosen, total, "k")]
    have = ~lacking
    selected, size, k = (np.where(have, v, 0.0) for v in values)
    bad = have & ~(np.isfinite(selected) & np.isfinite(size) & np.isfinite(k)
                   & (selected == np.round(selected)) & (size == np.round(size)) & (selected >= 0) & (size >= 0)
                   & (selected <= np.minimum(k, size)))
    if bad.any():
        n_bad = int(bad.sum())
        raise FsbenchError(f"Damaged selection counts in the results: {n_bad} row{'s' * (n_bad > 1)} record a "
                           f"{chosen} or {total} that is not a whole number with 0 <= {chosen} <= min(k, {total}); "
                           "recompute them with the current fsbench.")
    numerator, denominator = selection_terms(metric, selected=selected, size=size, k=k)
    return np.where(have, numerator, np.nan), np.where(have, denominator, np.nan)


# ----------------------------------------------------------------------------- frames
def check_metric(runs: pd.DataFrame, metric: str, *, source: str = "the results") -> None:
    """FsbenchError (one sentence naming ``source`` and the fix) when ``metric`` is unknown, is a
    classification metric other than accuracy and some rows of ``runs`` lack the per-class counts
    it is computed from, or is a selection metric and no row of ``runs`` has its columns."""
    check_metric_name(metric)
    if metric == "accuracy" or not len(runs):
        return
    if is_selection_metric(metric):
        if rows_without_selection(runs, metric).all():
            has, _, keys = _SOURCES[SELECTION_COLUMNS[metric][0]]
            raise FsbenchError(f"No {metric} in {source}: no dataset of these results {has}; run a dataset with "
                               f"{keys} in its config, or use another --metric.")
        return
    missing = rows_without_counts(runs)
    if missing.any():
        some = "its rows were" if missing.all() else f"{int(missing.sum())} of its {len(runs)} rows were"
        raise FsbenchError(f"{source} has no per-class counts to compute {metric} from ({some} written before "
                           "fsbench recorded them); recompute it with the current fsbench (run its config again "
                           "with --force), or use --metric accuracy.")


def row_metric(runs: pd.DataFrame, metric: str, *, source: str = "the results") -> pd.Series:
    """``metric`` of each row of ``runs`` (a Series on its index). ``accuracy`` is the rows'
    ``accuracy`` column; the other classification metrics need the per-class counts
    (:func:`check_metric`); a selection metric is NaN on the rows lacking its columns."""
    check_metric(runs, metric, source=source)
    if metric == "accuracy":
        return runs["accuracy"].astype(float).rename("accuracy")
    if is_selection_metric(metric):
        numerator, denominator = _selection_values(runs, metric)
        with np.errstate(divide="ignore", invalid="ignore"):
            return pd.Series(numerator / denominator, index=runs.index, name=metric)
    values = np.full(len(runs), np.nan)
    for rows, t, p, c in class_counts(runs):
        values[rows] = metric_from_counts(metric, support=t, predicted=p, correct=c)
    return pd.Series(values, index=runs.index, name=metric)


def pooled_metric(runs: pd.DataFrame, keys: Sequence[str], *, metric: str,
                  source: str = "the results") -> np.ndarray:
    """``metric`` of each group of ``runs`` by ``keys`` (``groupby(keys, sort=False,
    dropna=False)`` order) from the group's summed per-class counts: pooled over folds, the
    metric of the concatenated predictions. The rows of a group must share their classes
    (group by dataset). ``accuracy`` without counts pools ``n_correct / n_test``. A selection
    metric is the group's summed numerators over its summed denominators (NaN for a group with a
    row lacking its columns)."""
    check_metric(runs, metric, source=source)
    groups = runs.groupby(list(keys), sort=False, dropna=False).ngroup().to_numpy()
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    if is_selection_metric(metric):
        numerator, denominator = _selection_values(runs, metric)
        lacking = np.isnan(numerator)
        sums = [np.bincount(groups, weights=np.where(lacking, 0.0, v), minlength=n_groups)
                for v in (numerator, denominator)]
        incomplete = np.bincount(groups, weights=lacking.astype(float), minlength=n_groups) > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(incomplete, np.nan, sums[0] / sums[1])
    if metric == "accuracy" and not has_counts(runs):
        correct = np.bincount(groups, weights=runs["n_correct"].to_numpy(dtype=float), minlength=n_groups)
        tested = np.bincount(groups, weights=runs["n_test"].to_numpy(dtype=float), minlength=n_groups)
        with np.errstate(divide="ignore", invalid="ignore"):
            return correct / tested
    out = np.full(n_groups, np.nan)
    seen = np.zeros(n_groups, dtype=bool)
    for rows, t, p, c in class_counts(runs):
        g = groups[rows]
        mine = np.unique(g)
        if seen[mine].any():
            raise FsbenchError("Rows with different numbers of classes fall in one group; pool the counts per "
                               "dataset.")
        seen[mine] = True
        index = np.searchsorted(mine, g)
        sums = [np.zeros((len(mine), a.shape[1]), dtype=np.int64) for a in (t, p, c)]
        for total, counts in zip(sums, (t, p, c), strict=True):
            np.add.at(total, index, counts)
        out[mine] = metric_from_counts(metric, support=sums[0], predicted=sums[1], correct=sums[2])
    return out


def unconverged(runs: pd.DataFrame) -> pd.Series | None:
    """The number of classifier fits that did not converge behind each row (missing values as
    0), or None when the results do not record it."""
    if UNCONVERGED not in runs.columns:
        return None
    return pd.to_numeric(runs[UNCONVERGED], errors="coerce").fillna(0).astype(np.int64)
