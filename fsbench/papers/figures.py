"""The papers' figures regenerated from our results (matplotlib, Agg backend).

- :func:`accuracy_curves`: accuracy vs number of selected features, one panel per dataset, one
  line per selector with a light (optional) +-1 sd band over the outer repetitions, and the
  paper's printed table values as markers at their k (RFS Fig. 1, DSO-FS Fig. 2, SL2P Fig. 1).
  Lines, bands, legend and caption are styled by :mod:`fsbench.report.plots`, as the curves
  of ``fsbench plot`` are.
- :func:`accuracy_per_p`: DSO-FS with p fixed, accuracy vs k, one line per p (DSO-FS Fig. 1).
- :func:`objective_curves`: objective per iteration of the iterative selectors (SL2P Figs. 2
  and 3, and the same for RFS, DSO-FS and the l2,1 SVM), from :mod:`fsbench.engine.traces`.
- :func:`paper_figures`: all of them for one paper's results directory.

Accuracy statistics follow :mod:`fsbench.report.tables`: one accuracy per repetition (pooled
over the folds of a k-fold repetition, i.e. the cross-validated accuracy), then the mean and
the standard deviation (ddof = 1) over repetitions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from fsbench.errors import FsbenchError
from fsbench.papers import PAPERS, TABLES
from fsbench.report.plots import (
    accuracy_axis,
    curves,
    draw_curve,
    figure_legend,
    legend_entries,
    line_styles,
    panel_grid,
    pyplot,
    save_figure,
    shared_caption,
    spread_captions,
)
from fsbench.storage.csvread import read_table
from fsbench.storage.folder import TRACES_FILE
from fsbench.storage.runs import load_runs

#: the figure of each paper that :func:`accuracy_curves` redraws
FIGURE_TITLES = {
    "rfs": "RFS (Nie et al., NIPS 2010), Fig. 1",
    "dso-fs": "DSO-FS (Peng & Fan, IJCAI 2016), Fig. 2",
    "sl2p": "SL2P (Xu, Nie & Han, IJCAI 2017), Fig. 1",
}
#: the objective each iterative selector records per iteration (panel titles)
OBJECTIVES = {
    "rfs": r"RFS: $\|XW-Y\|_{2,1}+\gamma\|W\|_{2,1}$",
    "dso": r"DSO-FS: $\|W\|_{2,p}$ s.t. $Y\odot XW\geq 1$",
    "l21svm": r"L21-SVM: $\frac{1}{2}\|W\|_{2,1}+\frac{1}{2}\|b\|^2+C\,$hinge",
    "sl21": r"SL21: $\frac{1}{2}\|W\|_{2,1}^2+C\,$hinge",
    "sl2p": r"SL2P: $\frac{1}{2}\|W\|_{2,2/(1+p)}^2+C\,$hinge",
}
FIGURE_FILES = {"curves": "curves", "per_p": "accuracy_per_p", "objective": "objective"}

def _check_paper(paper: str) -> None:
    if paper not in PAPERS:
        raise FsbenchError(f"Unknown paper {paper!r}; use one of {', '.join(PAPERS)}.")


# ----------------------------------------------------------------------------- fixed-p DSO-FS
def _param(params: Any, key: str) -> Any:
    try:
        return json.loads(params).get(key) if isinstance(params, str) else None
    except (ValueError, AttributeError):
        return None


def fixed_p_selectors(runs: pd.DataFrame, tuned_label: str = "dso") -> dict[str, float]:
    """Labels of DSO-FS selectors with p fixed, and their p.

    A label counts when its method is ``dso``, it is not ``tuned_label`` and every one of its
    rows used the same p (from the ``params`` column), e.g. ``dso-p0.1`` with ``{"p": 0.1}``.
    """
    if "method" not in runs.columns or "params" not in runs.columns:
        return {}
    out = {}
    dso = runs[(runs["method"] == "dso") & (runs["selector"] != tuned_label)]
    for label, rows in dso.groupby("selector", sort=False):
        ps = {_param(p, "p") for p in rows["params"].unique()}
        if len(ps) == 1 and None not in ps:
            out[str(label)] = float(ps.pop())
    return dict(sorted(out.items(), key=lambda item: (item[1], item[0])))


# ----------------------------------------------------------------------------- printed values
def printed_points(paper: str) -> pd.DataFrame:
    """Every printed cell of a paper's tables: table, dataset, method (our label), k, value, std (%)."""
    _check_paper(paper)
    rows = [{"table": t.name, "dataset": c.dataset, "method": c.method, "k": c.k, "value": c.value,
             "std": c.std} for t in TABLES[paper] for c in t.cells]
    return pd.DataFrame(rows, columns=["table", "dataset", "method", "k", "value", "std"])


def paper_datasets(runs: pd.DataFrame, paper: str) -> tuple[list[str], list[str]]:
    """(datasets with results, in the paper's order then any others; the paper's datasets without)."""
    _check_paper(paper)
    ordered = list(dict.fromkeys(d for t in TABLES[paper] for d, _ in t.row_titles))
    have = set(runs["dataset"])
    present = [d for d in ordered if d in have] + [d for d in dict.fromkeys(runs["dataset"]) if d not in ordered]
    return present, [d for d in ordered if d not in have]


# ----------------------------------------------------------------------------- accuracy vs k
def accuracy_curves(runs: pd.DataFrame, paper: str, path: str | Path, bands: bool = True) -> list[Path]:
    """Accuracy (%) vs number of selected features for a paper's datasets, printed values beside.

    One panel per dataset with results; one line per selector label (fixed-p DSO-FS selectors
    are left to :func:`accuracy_per_p`) styled by :func:`fsbench.report.plots.line_styles`,
    with a light +-1 sd band over the repetitions unless ``bands`` is False; the paper's
    printed cells of that dataset as star markers (with the printed std as an error bar where
    printed) at their k, in the colour of the method. The caption names the number of
    repetitions (per panel when the datasets differ); the paper's datasets without results
    are named in the title. Writes ``<path>.png`` and ``<path>.pdf``; returns both.
    """
    _check_paper(paper)
    fixed = fixed_p_selectors(runs)
    runs = runs[~runs["selector"].isin(list(fixed))]
    if runs.empty:
        raise FsbenchError(f"No results to plot for paper {paper!r}; run its config first.")
    present, missing = paper_datasets(runs, paper)
    printed = printed_points(paper)
    stats = curves(runs)
    columns = list(dict.fromkeys(m for t in TABLES[paper] for m, _ in t.column_titles))
    ours = list(dict.fromkeys(runs["selector"]))
    order = [m for m in columns if m in ours] + [s for s in ours if s not in columns]
    palette = order + [m for m in columns if m not in order]  # printed-only methods keep a colour too
    styles = line_styles(palette)
    captions = spread_captions(runs, bands)
    shared = shared_caption(captions)
    plt = pyplot()

    fig, axes = panel_grid(len(present))
    for ax, dataset in zip(axes.flat, present, strict=False):
        for i, sel in enumerate(order):
            d = stats[(stats["dataset"] == dataset) & (stats["selector"] == sel)]
            if not d.empty:
                draw_curve(ax, d, styles[sel], sel, bands, i, len(order))
        cells = printed[printed["dataset"] == dataset]
        span = float(stats["k"].max() - stats["k"].min()) or 1.0
        for _, cell in cells.iterrows():
            c = styles[cell["method"]]["color"]
            # a small sideways dodge per method keeps printed values at one k apart
            dodge = (palette.index(cell["method"]) - (len(palette) - 1) / 2) * 0.006 * span
            ax.errorbar(cell["k"] + dodge, cell["value"], yerr=None if pd.isna(cell["std"]) else cell["std"],
                        marker="*", markersize=11, color=c, markeredgecolor="black", markeredgewidth=0.6,
                        ecolor=c, capsize=3, linestyle="none", zorder=5)
        accuracy_axis(ax, dataset if shared else f"{dataset}\n{captions[dataset]}")
    handles, labels = legend_entries(list(axes.flat)[: len(present)])
    star = plt.Line2D([], [], marker="*", markersize=11, color="grey", markeredgecolor="black",
                      linestyle="none")
    tables = " and ".join(t.name for t in TABLES[paper])
    handles.append(star)
    labels.append(f"printed ({tables})")
    figure_legend(fig, handles, labels)
    heading = f"{FIGURE_TITLES[paper]}: accuracy vs number of features"
    if shared:
        heading += f"\n{shared}"
    if missing:
        heading += f"\nno results (not run): {', '.join(missing)}"
    fig.suptitle(heading, fontsize=11)
    return save_figure(fig, path)


def per_p_curves(runs: pd.DataFrame, tuned_label: str = "dso") -> pd.DataFrame:
    """Mean and sd of accuracy (%) per dataset, fixed p and k (see :func:`fixed_p_selectors`)."""
    fixed = fixed_p_selectors(runs, tuned_label)
    if not fixed:
        return pd.DataFrame(columns=["dataset", "selector", "k", "mean", "std", "p"])
    stats = curves(runs[runs["selector"].isin(list(fixed))])
    stats["p"] = stats["selector"].map(fixed)
    return stats.sort_values(["dataset", "p", "selector", "k"], kind="stable").reset_index(drop=True)


def accuracy_per_p(runs: pd.DataFrame, path: str | Path, tuned_label: str = "dso",
                   bands: bool = True) -> list[Path] | None:
    """DSO-FS Fig. 1: accuracy (%) vs number of features for each fixed p, one panel per dataset.

    Uses the fixed-p DSO-FS selectors (:func:`fixed_p_selectors`), coloured along viridis in
    the order of p (p is ordered, so its colours are too) with the markers and line styles of
    :func:`fsbench.report.plots.line_styles` and a light +-1 sd band unless ``bands`` is
    False; the tuned selector ``tuned_label``, when present, is drawn as a black dashed
    reference. Returns None (and writes nothing) when the runs hold no fixed-p selector.
    """
    stats = per_p_curves(runs, tuned_label)
    if stats.empty:
        return None
    tuned = curves(runs[runs["selector"] == tuned_label]) if (runs["selector"] == tuned_label).any() else None
    datasets = list(dict.fromkeys(stats["dataset"]))
    ps = sorted(set(stats["p"]))
    viridis = pyplot().get_cmap("viridis")
    lines = list(dict.fromkeys(stats["selector"]))  # in the order of p
    p_of = dict(zip(stats["selector"], stats["p"], strict=True))
    styles = line_styles(lines, [viridis(ps.index(p_of[s]) / max(len(ps) - 1, 1) * 0.9) for s in lines])
    labels_of_p = stats.groupby("p")["selector"].nunique()
    captions = spread_captions(runs[runs["selector"].isin(lines)], bands)
    shared = shared_caption(captions)
    fig, axes = panel_grid(len(datasets))
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        d = stats[stats["dataset"] == dataset]
        for i, label in enumerate(lines):
            line = d[d["selector"] == label]
            if line.empty:
                continue
            p = float(p_of[label])
            text = f"p = {p:g}" if labels_of_p[p] == 1 else f"{label} (p = {p:g})"
            draw_curve(ax, line, styles[label], text, bands, i, len(lines))
        if tuned is not None:
            t = tuned[tuned["dataset"] == dataset]
            if not t.empty:
                ax.plot(t["k"], t["mean"], color="black", linestyle="--", linewidth=1.4, zorder=3,
                        label=f"{tuned_label} (p tuned by CV)")
        accuracy_axis(ax, dataset if shared else f"{dataset}\n{captions[dataset]}")
    handles, labels = legend_entries(list(axes.flat)[: len(datasets)])
    figure_legend(fig, handles, labels)
    heading = "DSO-FS Fig. 1: accuracy vs number of features for each p"
    fig.suptitle(f"{heading}\n{shared}" if shared else heading, fontsize=11)
    return save_figure(fig, path)


# ----------------------------------------------------------------------------- objective traces
def _short_params(params: str, method: str) -> str:
    try:
        d = json.loads(params)
    except (TypeError, ValueError):
        return ""
    keys = {"rfs": ("gamma",), "dso": ("p",), "l21svm": ("C",), "sl21": ("C",), "sl2p": ("C", "p")}
    return ", ".join(f"{k}={d[k]:g}" for k in keys.get(method, ()) if isinstance(d.get(k), int | float))


def objective_curves(traces: pd.DataFrame, path: str | Path) -> list[Path]:
    """Objective vs iteration (SL2P Figs. 2-3, and RFS, DSO-FS, L21-SVM alike).

    One panel per method with one line per dataset (and params); DSO-FS gets one panel per
    dataset with one line per p, its ||W||_{2,p} divided by the first iteration's value, since
    the norms of different p differ by tens of orders of magnitude. The y axis is logarithmic
    when every value of the panel is positive. Each panel's title counts the traces that never
    rose by more than their ``monotone`` tolerance (:mod:`fsbench.engine.traces`). Writes
    ``<path>.png`` and ``<path>.pdf``.
    """
    if traces.empty:
        raise FsbenchError("No objective traces to plot; compute them with fsbench.engine.traces.write_traces first.")
    plt = pyplot()
    methods = [m for m in OBJECTIVES if m in set(traces["method"])]
    methods += [m for m in dict.fromkeys(traces["method"]) if m not in methods]
    datasets = list(dict.fromkeys(traces["dataset"]))
    panels = [(m, d) for m in methods for d in (datasets if m == "dso" else [None])
              if d is None or ((traces["method"] == m) & (traces["dataset"] == d)).any()]
    cmap = plt.get_cmap("tab10" if len(datasets) <= 10 else "tab20")
    color = {d: cmap(i % cmap.N) for i, d in enumerate(datasets)}
    fig, axes = panel_grid(len(panels), width=5.0, height=3.9, header=0.9)
    keys = ["dataset", "selector", "params"]
    for ax, (method, dataset) in zip(axes.flat, panels, strict=False):
        panel = traces[(traces["method"] == method) & ((traces["dataset"] == dataset) if dataset else True)]
        groups = list(panel.groupby(keys, sort=False))
        n_mono = 0
        values = []
        for i, ((name, _sel, params), t) in enumerate(groups):
            t = t.sort_values("iteration")
            y = t["objective"].to_numpy(dtype=float)
            variant = _short_params(params, method)
            if dataset:  # DSO-FS: lines per p, relative to the first value
                y = y / y[0] if y[0] > 0 else y
                c = plt.get_cmap("viridis")(0.9 * i / max(len(groups) - 1, 1))
                label = variant or name
            else:
                c, label = color[name], f"{name} ({variant})" if variant else name
            values.append(y)
            ax.plot(t["iteration"], y, color=c, linewidth=1.2, marker="o" if len(t) <= 30 else None,
                    markersize=2.5, label=label)
            if "monotone" in t.columns:
                n_mono += bool(t["monotone"].iloc[0])
        if all((v > 0).all() for v in values):
            ax.set_yscale("log")
        where = f" ({dataset})" if dataset else ""
        ax.set_title(f"{OBJECTIVES.get(method, method)}{where}\nnon-increasing: {n_mono} of {len(groups)} traces",
                     fontsize=9)
        ax.set_xlabel("iteration")
        ax.set_ylabel("objective / first value" if dataset else "objective")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6, ncol=2 if len(groups) > 8 else 1, frameon=False)
    fig.suptitle("Objective per iteration (SL2P Figs. 2-3; RFS, DSO-FS, L21-SVM)\n"
                 "first split's training part", fontsize=10)
    return save_figure(fig, path)


# ----------------------------------------------------------------------------- one paper
def paper_figures(
    paper: str,
    results_dir: str | Path,
    out_dir: str | Path | None = None,
    data: dict[str, Any] | None = None,
) -> list[Path]:
    """Every figure of a paper from its results directory; returns the paths written.

    Writes ``curves.{png,pdf}`` (:func:`accuracy_curves`), ``accuracy_per_p.{png,pdf}`` when
    the runs hold fixed-p DSO-FS selectors (:func:`accuracy_per_p`), and ``objective.{png,pdf}``
    when ``results_dir/objective.csv`` exists. Given ``data`` (dataset name -> object with X
    and y) and no objective.csv, the traces are computed first with the experiment of
    ``results_dir/config.yaml`` (:func:`fsbench.engine.traces.write_traces`).
    """
    _check_paper(paper)
    results_dir = Path(results_dir)
    out = Path(out_dir) if out_dir is not None else results_dir
    runs = load_runs(results_dir)
    written = accuracy_curves(runs, paper, out / FIGURE_FILES["curves"])
    per_p = accuracy_per_p(runs, out / FIGURE_FILES["per_p"])
    if per_p:
        written += per_p
    if not (results_dir / TRACES_FILE).is_file() and data is not None:
        from fsbench.engine.traces import experiment_from_results, write_traces

        write_traces(experiment_from_results(results_dir), data, runs, results_dir)
    return written + objective_figure(results_dir, out)


def objective_figure(results_dir: str | Path, out_dir: str | Path | None = None) -> list[Path]:
    """``objective.{png,pdf}`` (:func:`objective_curves`) from ``results_dir/objective.csv``;
    nothing when that file is missing or holds no trace."""
    results_dir = Path(results_dir)
    path = results_dir / TRACES_FILE
    traces = read_traces(path) if path.is_file() else pd.DataFrame()
    if traces.empty:
        return []
    return objective_curves(traces, Path(out_dir or results_dir) / FIGURE_FILES["objective"])


def read_traces(path: str | Path) -> pd.DataFrame:
    """Read an ``objective.csv`` written by :func:`fsbench.engine.traces.write_traces` (labels as strings)."""
    try:
        traces = read_table(path, labels=("dataset", "selector", "method"))
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise FsbenchError(f"{str(path)!r} is not a readable objective.csv ({exc}); recompute it.") from None
    missing = {"dataset", "method", "params", "iteration", "objective"} - set(traces.columns)
    if missing:
        raise FsbenchError(f"{str(path)!r} lacks the columns {sorted(missing)}; recompute it.")
    return traces


__all__: Sequence[str] = ["accuracy_curves", "accuracy_per_p", "fixed_p_selectors", "objective_curves",
                          "objective_figure", "paper_figures", "paper_datasets", "per_p_curves", "printed_points",
                          "read_traces"]
