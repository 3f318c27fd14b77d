"""Summary tables from ``runs.csv.gz``: mean ± std accuracy per dataset x selector at one k.

Accuracy of one repetition is pooled over its folds (correct / tested): for a hold-out
protocol that is the trial's test accuracy, for k-fold the cross-validated accuracy. The
table gives the mean and the standard deviation (ddof = 1) over repetitions, in percent.
"""

from __future__ import annotations

import pandas as pd

from fsbench.errors import FsbenchError

FORMATS = ("markdown", "csv", "latex")


def per_repeat(runs: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per (dataset, selector, k, repeat), pooled over folds."""
    grouped = runs.groupby(["dataset", "selector", "k", "repeat"], sort=False)[["n_correct", "n_test"]].sum()
    grouped["accuracy"] = grouped["n_correct"] / grouped["n_test"]
    return grouped.reset_index()


def summarize(runs: pd.DataFrame, k: int | None = None) -> pd.DataFrame:
    """Mean, std and count of accuracy (%) per dataset x selector at k (default: the largest k)."""
    available = sorted(runs["k"].unique())
    if k is None:
        k = int(available[-1])
    if k not in available:
        raise FsbenchError(
            f"The results have no rows for k = {k}; choose one of {', '.join(map(str, available))}."
        )
    reps = per_repeat(runs[runs["k"] == k])
    stats = reps.groupby(["dataset", "selector"], sort=False)["accuracy"].agg(["mean", "std", "count"])
    stats[["mean", "std"]] *= 100
    stats.attrs["k"] = k
    return stats.reset_index()


def _cell(mean: float, std: float, count: int, fmt: str) -> str:
    if pd.isna(mean):
        return ""
    if count < 2 or pd.isna(std):
        return f"{mean:.2f}"
    sep = {"markdown": " ± ", "latex": r" $\pm$ ", "csv": " ± "}[fmt]
    return f"{mean:.2f}{sep}{std:.2f}"


def accuracy_table(runs: pd.DataFrame, k: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Wide tables (dataset rows, selector columns) of the mean and of the std at k."""
    stats = summarize(runs, k)
    datasets = list(dict.fromkeys(runs["dataset"]))
    selectors = list(dict.fromkeys(runs["selector"]))
    means = stats.pivot(index="dataset", columns="selector", values="mean").reindex(index=datasets, columns=selectors)
    stds = stats.pivot(index="dataset", columns="selector", values="std").reindex(index=datasets, columns=selectors)
    counts = stats.pivot(index="dataset", columns="selector", values="count").reindex(index=datasets, columns=selectors)
    means.attrs.update(k=stats.attrs["k"], counts=counts)
    return means, stds


def format_table(runs: pd.DataFrame, k: int | None = None, fmt: str = "markdown") -> str:
    """The mean ± std table at k as markdown (best per row in bold), csv, or latex."""
    if fmt not in FORMATS:
        raise FsbenchError(f"Unknown table format {fmt!r}; use one of {', '.join(FORMATS)}.")
    means, stds = accuracy_table(runs, k)
    counts = means.attrs["counts"]
    k = means.attrs["k"]
    if fmt == "csv":
        long = summarize(runs, k).rename(columns={"mean": "accuracy_mean", "std": "accuracy_std", "count": "n_repeats"})
        long.insert(2, "k", k)
        return long.to_csv(index=False, float_format="%.4f")
    best = means.max(axis=1)
    header = ["dataset", *means.columns]
    lines = []
    for dataset in means.index:
        cells = [str(dataset)]
        for sel in means.columns:
            text = _cell(means.at[dataset, sel], stds.at[dataset, sel], counts.at[dataset, sel], fmt)
            if text and means.at[dataset, sel] == best[dataset]:
                text = f"**{text}**" if fmt == "markdown" else rf"\textbf{{{text}}}"
            cells.append(text)
        lines.append(cells)
    caption = f"Test accuracy (%) with the top {k} features, mean ± std over repetitions; best per row in bold."
    if fmt == "markdown":
        out = [f"| {' | '.join(header)} |", "|" + "---|" * len(header)]
        out += [f"| {' | '.join(cells)} |" for cells in lines]
        return caption + "\n\n" + "\n".join(out) + "\n"
    def tex(s: str) -> str:
        return s.replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")

    latex_caption = tex(caption).replace("±", r"$\pm$")
    out = [r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_caption}}}",
           r"\begin{tabular}{l" + "c" * (len(header) - 1) + "}", r"\toprule",
           " & ".join(tex(h) for h in header) + r" \\", r"\midrule"]
    out += [" & ".join([tex(cells[0]), *cells[1:]]) + r" \\" for cells in lines]
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(out) + "\n"
