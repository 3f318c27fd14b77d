"""Summary tables from ``runs.csv.gz``: mean ± std accuracy per dataset x selector at one k.

Accuracy of one repetition is pooled over its folds (correct / tested): for a hold-out
protocol that is the trial's test accuracy, for k-fold the cross-validated accuracy. The
table gives the mean and the standard deviation (ddof = 1) over repetitions, in percent.

Other metrics (``metric``: :data:`fsbench.evaluation.metrics.ALL_METRICS`) are pooled the same way: the
per-class counts of a repetition's folds are summed first and the metric is computed from the
sums (:func:`fsbench.evaluation.metrics.pooled_metric`); kappa and MCC are shown x 100. The selection
metrics (relevant recall and precision, probe rate) pool their counts the same way; a dataset
without them (no known relevant features or probes) has empty cells. The best of a row is the
highest value, or the lowest for a metric where lower is better
(:func:`fsbench.evaluation.metrics.higher_is_better`: probe rate). A cell whose rows
include a classifier fit that did not converge (``diag_classifier_unconverged`` > 0) is marked
with a trailing ``†`` and a footnote (csv: an ``n_unconverged`` column); results without that
column mark nothing.

Classifiers: results of a config with several classifiers carry a ``classifier`` column, and
nothing here ever pools or averages over it: every grouping includes it. A table of such
results has one block per classifier (csv: one ``classifier`` column), unless ``classifier``
names one, which keeps its rows only. Results without the column (one classifier, written
before fsbench evaluated several, as every committed paper result) are tabulated as they
always were; a table of one classifier that results record in the column names it in its
caption.
"""

from __future__ import annotations

import pandas as pd

from fsbench.errors import FsbenchError
from fsbench.evaluation.metrics import (
    check_metric_name,
    higher_is_better,
    is_selection_metric,
    metric_label,
    pooled_metric,
    unconverged,
)

FORMATS = ("markdown", "csv", "latex")
#: the column naming each row's classifier (absent from results of one classifier written before)
CLASSIFIER = "classifier"


def has_classifier_column(runs: pd.DataFrame) -> bool:
    """Whether the results record their classifier (a ``classifier`` column with a value)."""
    return CLASSIFIER in runs.columns and bool(runs[CLASSIFIER].notna().any())


def classifiers_in(runs: pd.DataFrame) -> list[str]:
    """The classifiers the results record, in order of appearance; [] without the column."""
    if not has_classifier_column(runs):
        return []
    return [str(c) for c in dict.fromkeys(runs[CLASSIFIER].dropna())]


def select_classifier(runs: pd.DataFrame, classifier: str | None = None) -> pd.DataFrame:
    """The rows of ``classifier``; all rows when it is None.

    Raises FsbenchError when the results have no rows of that classifier, or record none.
    """
    if classifier is None:
        return runs
    known = classifiers_in(runs)
    if not known:
        raise FsbenchError(f"These results record no classifier (one classifier, written before fsbench "
                           f"evaluated several), so they cannot be filtered to {classifier!r}; leave out the "
                           "classifier option.")
    if classifier not in known:
        raise FsbenchError(f"The results have no rows of classifier {classifier!r}; choose one of "
                           f"{', '.join(known)}.")
    return runs[runs[CLASSIFIER].astype(str) == classifier]


def group_keys(runs: pd.DataFrame, *keys: str) -> list[str]:
    """``keys``, preceded by ``classifier`` when the results record it (never pooled over)."""
    return [CLASSIFIER, *keys] if CLASSIFIER in runs.columns else list(keys)


def per_repeat(runs: pd.DataFrame, *, metric: str = "accuracy") -> pd.DataFrame:
    """Accuracy per (dataset, selector, k, repeat), pooled over folds; per classifier too when
    the results record one (a ``classifier`` column first). Another ``metric`` adds its column
    (named after it), computed from the per-class counts summed over the folds."""
    keys = group_keys(runs, "dataset", "selector", "k", "repeat")
    options = {"dropna": False} if CLASSIFIER in keys else {}
    grouped = runs.groupby(keys, sort=False, **options)[["n_correct", "n_test"]].sum()
    grouped["accuracy"] = grouped["n_correct"] / grouped["n_test"]
    if metric != "accuracy":
        grouped[metric] = pooled_metric(runs, keys, metric=metric)
    return grouped.reset_index()


def summarize(runs: pd.DataFrame, k: int | None = None, classifier: str | None = None, *,
              metric: str = "accuracy") -> pd.DataFrame:
    """Mean, std and count of accuracy (%) per dataset x selector at k (default: the largest k),
    per classifier too when the results record one (of ``classifier`` alone when given); of
    ``metric`` (x 100) instead of accuracy when given. Column ``unconverged``: the classifier fits
    that did not converge behind the cell (absent when the results do not record them)."""
    check_metric_name(metric)
    runs = select_classifier(runs, classifier)
    available = sorted(runs["k"].unique())
    if k is None:
        k = int(available[-1])
    if k not in available:
        raise FsbenchError(
            f"The results have no rows for k = {k}; choose one of {', '.join(map(str, available))}."
        )
    at_k = runs[runs["k"] == k]
    reps = per_repeat(at_k, metric=metric)
    keys = group_keys(reps, "dataset", "selector")
    options = {"dropna": False} if CLASSIFIER in keys else {}
    stats = reps.groupby(keys, sort=False, **options)[metric].agg(["mean", "std", "count"])
    stats[["mean", "std"]] *= 100
    failed_fits = unconverged(at_k)
    if failed_fits is not None:
        stats["unconverged"] = failed_fits.groupby([at_k[key] for key in keys], sort=False, **options).sum()
    stats.attrs["k"] = k
    return stats.reset_index()


def _cell(mean: float, std: float, count: int, fmt: str) -> str:
    if pd.isna(mean):
        return ""
    if count < 2 or pd.isna(std):
        return f"{mean:.2f}"
    sep = {"markdown": " ± ", "latex": r" $\pm$ ", "csv": " ± "}[fmt]
    return f"{mean:.2f}{sep}{std:.2f}"


def one_classifier(runs: pd.DataFrame, classifier: str | None,
                   why: str = "a table of one number per dataset and selector shows one") -> pd.DataFrame:
    """The rows of ``classifier``, or all rows when the results record one classifier at most;
    FsbenchError (saying ``why`` one is needed) when they hold several and none is given."""
    runs = select_classifier(runs, classifier)
    known = classifiers_in(runs)
    if len(known) > 1:
        raise FsbenchError(f"The results hold several classifiers ({', '.join(known)}), and {why}; choose it "
                           "with the classifier option.")
    return runs


def accuracy_table(runs: pd.DataFrame, k: int | None = None, classifier: str | None = None, *,
                   metric: str = "accuracy") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Wide tables (dataset rows, selector columns) of the mean and of the std at k, of one
    classifier: ``classifier``, or the only one the results hold (FsbenchError when several).
    ``attrs``: k, counts, and unconverged (a wide table, or None without the column)."""
    runs = one_classifier(runs, classifier)
    stats = summarize(runs, k, metric=metric)
    datasets = list(dict.fromkeys(runs["dataset"]))
    selectors = list(dict.fromkeys(runs["selector"]))
    means = stats.pivot(index="dataset", columns="selector", values="mean").reindex(index=datasets, columns=selectors)
    stds = stats.pivot(index="dataset", columns="selector", values="std").reindex(index=datasets, columns=selectors)
    counts = stats.pivot(index="dataset", columns="selector", values="count").reindex(index=datasets, columns=selectors)
    failed_fits = None
    if "unconverged" in stats.columns:
        failed_fits = stats.pivot(index="dataset", columns="selector", values="unconverged").reindex(
            index=datasets, columns=selectors)
    means.attrs.update(k=stats.attrs["k"], counts=counts, unconverged=failed_fits)
    return means, stds


def failed_cells(failures: pd.DataFrame | None) -> dict[tuple[str, str], int]:
    """(dataset, selector) -> the number of its tasks that failed (fsbench.storage.task_files.load_failures)."""
    if failures is None or not len(failures):
        return {}
    counts = failures.groupby(["dataset", "selector"], sort=False).size()
    return {(str(d), str(s)): int(n) for (d, s), n in counts.items()}


#: the mark of a cell with a classifier fit that did not converge, and its footnote
UNCONVERGED_MARK = "†"
UNCONVERGED_NOTE = ("† some classifier fits behind this cell did not converge (diag_classifier_unconverged > 0 "
                    "in runs.csv.gz).")


def format_table(runs: pd.DataFrame, k: int | None = None, fmt: str = "markdown",
                 classifier: str | None = None, failures: pd.DataFrame | None = None, *,
                 metric: str = "accuracy") -> str:
    """The mean ± std table at k as markdown (best per row in bold), csv, or latex.

    With several classifiers in the results and ``classifier`` None: one table per classifier
    (each with its own best per row), or for csv one table with a ``classifier`` column; with
    ``classifier``: that classifier's rows only. A (dataset, selector) with tasks in ``failures``
    shows as failed, never as a mean over the splits that did not fail (csv: no mean, and the
    count in ``n_failed``). ``metric``: the metric shown (x 100), named in the caption (csv:
    columns ``<metric>_mean``, ``<metric>_std``). A cell with a classifier fit that did not
    converge gets a trailing ``†`` and the table a footnote (csv: an ``n_unconverged`` column).
    """
    if fmt not in FORMATS:
        raise FsbenchError(f"Unknown table format {fmt!r}; use one of {', '.join(FORMATS)}.")
    runs = select_classifier(runs, classifier)
    known = classifiers_in(runs)
    failed = failed_cells(failures)
    if fmt == "csv":
        stats = summarize(runs, k, metric=metric)
        long = stats.rename(columns={"mean": f"{metric}_mean", "std": f"{metric}_std", "count": "n_repeats",
                                     "unconverged": "n_unconverged"})
        long.insert(long.columns.get_loc("selector") + 1, "k", stats.attrs["k"])
        if not failed:
            return long.to_csv(index=False, float_format="%.4f")
        cells = list(zip(long["dataset"].astype(str), long["selector"].astype(str), strict=True))
        long["n_failed"] = [failed.get(cell, 0) for cell in cells]
        long.loc[long["n_failed"] > 0, [f"{metric}_mean", f"{metric}_std"]] = float("nan")
        missing = [cell for cell in failed if cell not in set(cells)]
        if missing:
            extra = pd.DataFrame({"dataset": [d for d, _ in missing], "selector": [s for _, s in missing],
                                  "k": stats.attrs["k"], "n_repeats": 0, "n_failed": [failed[c] for c in missing]})
            long = pd.concat([long, extra], ignore_index=True)
        return long.to_csv(index=False, float_format="%.4f")
    if len(known) <= 1:
        return _format_wide(runs, k, fmt, known[0] if known else None, several=False, failed=failed,
                            metric=metric)
    k = summarize(runs, k).attrs["k"]  # the same k for every block (an unknown k fails here)
    blocks = [_format_wide(select_classifier(runs, c), k, fmt, c, several=True, failed=failed, metric=metric)
              for c in known]
    if fmt == "markdown":
        caption = (f"{metric_subject(metric)} with the top {k} features, mean ± std over repetitions, one "
                   f"table per classifier; {best_in_bold(metric)}.")
        return caption + "\n\n" + "\n".join(blocks)
    return "\n".join(blocks)


def metric_subject(metric: str) -> str:
    """What a table shows, for its caption: ``"Test accuracy (%)"``, ``"Relevant recall (%)"`` (a
    selection metric is no test score)."""
    label = metric_label(metric)
    return label[0].upper() + label[1:] if is_selection_metric(metric) else f"Test {label}"


def best_in_bold(metric: str) -> str:
    """The caption's words for the marked cells: which value of ``metric`` is the best."""
    return "best per row in bold" if higher_is_better(metric) else "best (lowest) per row in bold"


def _format_wide(runs: pd.DataFrame, k: int | None, fmt: str, classifier: str | None, several: bool,
                 failed: dict[tuple[str, str], int] | None = None, metric: str = "accuracy") -> str:
    """One classifier's table (markdown or latex); ``classifier`` None: results without the column.
    Markdown blocks of several classifiers have a heading instead of the caption; a failed cell
    (``failed``) reads "failed (n tasks)" and is never the best."""
    failed = failed or {}
    means, stds = accuracy_table(runs, k, metric=metric)
    counts, failed_fits = means.attrs["counts"], means.attrs["unconverged"]
    k = means.attrs["k"]
    datasets = list(dict.fromkeys([*means.index, *(d for d, _ in failed)]))
    selectors = list(dict.fromkeys([*means.columns, *(s for _, s in failed)]))
    means, stds, counts = (t.reindex(index=datasets, columns=selectors) for t in (means, stds, counts))
    for dataset, selector in failed:
        means.at[dataset, selector] = float("nan")
    best = means.max(axis=1) if higher_is_better(metric) else means.min(axis=1)
    header = ["dataset", *means.columns]
    lines = []
    marked = False
    for dataset in means.index:
        cells = [str(dataset)]
        for sel in means.columns:
            text = _cell(means.at[dataset, sel], stds.at[dataset, sel], counts.at[dataset, sel], fmt)
            if (dataset, sel) in failed:
                n = failed[(dataset, sel)]
                text = f"failed ({n} task{'s' if n > 1 else ''})"
            elif text and means.at[dataset, sel] == best[dataset]:
                text = f"**{text}**" if fmt == "markdown" else rf"\textbf{{{text}}}"
            if text and (dataset, sel) not in failed and _unconverged_at(failed_fits, dataset, sel):
                text += UNCONVERGED_MARK if fmt == "markdown" else r"$^\dagger$"
                marked = True
            cells.append(text)
        lines.append(cells)
    of = f" of classifier {classifier}" if classifier is not None else ""
    caption = (f"{metric_subject(metric)}{of} with the top {k} features, mean ± std over repetitions; "
               f"{best_in_bold(metric)}.")
    if fmt == "markdown":
        out = [f"| {' | '.join(header)} |", "|" + "---|" * len(header)]
        out += [f"| {' | '.join(cells)} |" for cells in lines]
        head = f"Classifier {classifier}:" if several else caption
        return head + "\n\n" + "\n".join(out) + "\n" + (f"\n{UNCONVERGED_NOTE}\n" if marked else "")
    def tex(s: str) -> str:
        return s.replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")

    latex_caption = tex(caption).replace("±", r"$\pm$")
    out = [r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_caption}}}",
           r"\begin{tabular}{l" + "c" * (len(header) - 1) + "}", r"\toprule",
           " & ".join(tex(h) for h in header) + r" \\", r"\midrule"]
    out += [" & ".join([tex(cells[0]), *cells[1:]]) + r" \\" for cells in lines]
    out += [r"\bottomrule", r"\end{tabular}"]
    if marked:
        note = tex(UNCONVERGED_NOTE.removeprefix(UNCONVERGED_MARK).strip())
        out.append(r"\par\smallskip{\footnotesize $^\dagger$ " + note + "}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def _unconverged_at(failed_fits: pd.DataFrame | None, dataset: object, selector: object) -> bool:
    """Whether the cell's rows include a classifier fit that did not converge."""
    if failed_fits is None or dataset not in failed_fits.index or selector not in failed_fits.columns:
        return False
    value = failed_fits.at[dataset, selector]
    return bool(pd.notna(value) and value > 0)
