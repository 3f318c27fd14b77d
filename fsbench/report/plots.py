"""Accuracy-vs-number-of-features curves: one panel per dataset, one line per selector."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from fsbench.report.tables import per_repeat


def curves(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and std (over repetitions) of accuracy (%) per dataset, selector and k."""
    reps = per_repeat(runs)
    stats = reps.groupby(["dataset", "selector", "k"], sort=False)["accuracy"].agg(["mean", "std"]) * 100
    return stats.reset_index().sort_values(["dataset", "selector", "k"], kind="stable")


def pyplot() -> Any:
    """matplotlib.pyplot on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def accuracy_axis(ax: Any, title: str, fontsize: float | None = 10) -> None:
    """Title, axis labels and grid of an accuracy-vs-number-of-features panel."""
    ax.set_title(title, **({} if fontsize is None else {"fontsize": fontsize}))
    ax.set_xlabel("number of selected features")
    ax.set_ylabel("accuracy (%)")
    ax.grid(alpha=0.3)


def save_figure(fig: Any, stem: str | Path) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.pdf``, close the figure, return the paths.

    The files carry no creation date, so regenerating a figure from the same results
    rewrites the same bytes (committed figures do not change without a reason).
    """
    stem = Path(stem)
    if stem.suffix in (".png", ".pdf"):
        stem = stem.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext, metadata in (("png", {"Software": None}), ("pdf", {"CreationDate": None, "Producer": None})):
        path = stem.parent / f"{stem.name}.{ext}"
        fig.savefig(path, dpi=130, metadata=metadata)
        paths.append(path)
    pyplot().close(fig)
    return paths


def plot_curves(runs: pd.DataFrame, out_stem: str | Path, title: str | None = None) -> list[Path]:
    """Write ``<out_stem>.png`` and ``<out_stem>.pdf``; return the paths."""
    plt = pyplot()

    data = curves(runs)
    datasets = list(dict.fromkeys(runs["dataset"]))
    selectors = list(dict.fromkeys(runs["selector"]))
    ncols = min(3, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    colors = plt.get_cmap("tab10" if len(selectors) <= 10 else "tab20")
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        for i, sel in enumerate(selectors):
            d = data[(data["dataset"] == dataset) & (data["selector"] == sel)]
            if d.empty:
                continue
            color = colors(i % colors.N)
            # distinct markers and dashes keep coinciding curves (e.g. fisher and fstat) visible
            ax.plot(d["k"], d["mean"], marker="osv^Dx*P<>"[i % 10], markersize=4, color=color,
                    linestyle=("-", "--", "-.", ":")[i % 4], label=sel)
            std = d["std"].fillna(0)
            ax.fill_between(d["k"], d["mean"] - std, d["mean"] + std, color=color, alpha=0.15, linewidth=0)
        accuracy_axis(ax, dataset, fontsize=None)
    for ax in list(axes.flat)[len(datasets):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), frameon=False)
    if title and datasets != [title]:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.04 + 0.03 * (len(labels) > 6), 1, 1))
    return save_figure(fig, out_stem)
