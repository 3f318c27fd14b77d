"""Figures of ``fsbench stats``: the critical-difference diagram, stability vs k, and the
accuracy / cost Pareto plot, from the tables of :mod:`fsbench.report.statistics`.

Styling is that of the accuracy curves (:mod:`fsbench.report.plots`): one panel per dataset,
three a row; a selector keeps one colour, marker and line style (:func:`line_styles`, by its
position among the selectors) in every panel and figure; the legend sits right of the
panels; each file is written as .png and .pdf by :func:`save_figure`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fsbench.report.cd_diagram import write_cd_diagram
from fsbench.report.plots import BAND_ALPHA, figure_legend, legend_entries, line_styles, panel_grid, save_figure
from fsbench.report.statistics import FriedmanTables

#: fit times below this (seconds) are drawn at it: a log axis has no zero
MIN_SECONDS = 1e-4


def cd_figure(tables: FriedmanTables, out_stem: str | Path, alpha: float = 0.05,
              title: str | None = None) -> list[Path]:
    """``<out_stem>.png`` and ``.pdf``: the Nemenyi critical-difference diagram of
    ``tables.scores`` (:func:`fsbench.report.cd_diagram.plot_cd_diagram`), ranked in the scores'
    direction (``tables.higher_is_better``)."""
    return write_cd_diagram(tables.scores, out_stem, alpha=alpha, block_name=tables.block_name, title=title,
                            higher_is_better=tables.higher_is_better)


def stability_figure(stability: pd.DataFrame, out_stem: str | Path, selectors: Sequence[str] | None = None,
                     title: str | None = None) -> list[Path]:
    """Nogueira's stability of the top k against k: a panel per dataset, a line per selector
    with a light band for its 95% confidence interval (``stability``: columns of
    :data:`fsbench.report.statistics.STABILITY_COLUMNS`). ``selectors`` fixes the styles' order."""
    selectors = list(selectors) if selectors is not None else [str(s) for s in dict.fromkeys(stability["selector"])]
    styles = line_styles(selectors)
    datasets = [str(d) for d in dict.fromkeys(stability["dataset"])]
    fig, axes = panel_grid(len(datasets))
    low = min(0.0, float(stability["ci_low"].min()))
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        for selector in selectors:
            d = stability[(stability["dataset"] == dataset) & (stability["selector"] == selector)]
            if d.empty:
                continue
            d = d.sort_values("k")
            ax.plot(d["k"], d["nogueira"], label=selector, **styles[selector])
            ax.fill_between(d["k"], d["ci_low"], d["ci_high"], color=styles[selector]["color"], alpha=BAND_ALPHA,
                            linewidth=0, zorder=1)
        ax.set_title(dataset, fontsize=10)
        ax.set_xlabel("number of selected features k")
        ax.set_ylabel("stability (Nogueira)")
        ax.set_ylim(low - 0.02, 1.02)
        ax.axhline(0.0, color="0.6", linewidth=0.8, zorder=0)
        ax.grid(alpha=0.3)
    handles, labels = legend_entries(list(axes.flat)[: len(datasets)])
    figure_legend(fig, handles, labels)
    caption = ("Stability of the top-k features over the outer splits (Nogueira et al. 2018: 1 = the same "
               "features in every split, about 0 = chance); bands: 95% confidence intervals.")
    _heading(fig, title, caption)
    return save_figure(fig, out_stem)


def pareto_front(seconds: np.ndarray, accuracy: np.ndarray, *, higher_is_better: bool = True) -> np.ndarray:
    """Indices of the points no other point beats on both axes (faster or as fast, and at least
    as accurate, one of them strictly), by increasing time; with ``higher_is_better`` False a
    lower score is the better one (probe rate)."""
    if not higher_is_better:
        accuracy = -np.asarray(accuracy, dtype=float)
    order = np.lexsort((-accuracy, seconds))
    front, best = [], -np.inf
    for i in order:
        if accuracy[i] > best:
            front.append(i)
            best = accuracy[i]
    return np.asarray(front, dtype=int)


def pareto_figure(points: pd.DataFrame, out_stem: str | Path, selectors: Sequence[str] | None = None,
                  title: str | None = None, n_splits: str | None = None, *, metric: str = "accuracy") -> list[Path]:
    """Accuracy at k against median selector fit time (log scale): a panel per dataset, a point
    per selector, its label beside it, and the Pareto front (no selector both faster and more
    accurate) as a grey step line. ``points``: :func:`fsbench.report.statistics.pareto_points`;
    ``metric``: what its ``accuracy`` column holds, named on the y-axis (for a metric where lower
    is better, the front holds the selectors no other is both faster and lower than)."""
    from fsbench.evaluation.metrics import higher_is_better, is_selection_metric, metric_label, metric_unit

    name, unit = metric_label(metric, percent=False), metric_unit(metric)
    better_high = higher_is_better(metric)
    selectors = list(selectors) if selectors is not None else [str(s) for s in dict.fromkeys(points["selector"])]
    styles = line_styles(selectors)
    datasets = [str(d) for d in dict.fromkeys(points["dataset"])]
    fig, axes = panel_grid(len(datasets), height=3.9)
    labels: list[tuple[Any, list[Any]]] = []
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        d = points[points["dataset"] == dataset].reset_index(drop=True)
        seconds = np.maximum(d["fit_seconds_median"].to_numpy(dtype=float), MIN_SECONDS)
        accuracy = 100 * d["accuracy"].to_numpy(dtype=float)
        front = pareto_front(seconds, accuracy, higher_is_better=better_high)
        ax.step(seconds[front], accuracy[front], where="post", color="0.55", linewidth=1.0, zorder=1)
        texts = []
        for i, selector in enumerate(d["selector"].astype(str)):
            style = _marker_style(styles[selector])
            ax.plot([seconds[i]], [accuracy[i]], linestyle="none", label=selector, **style)
            texts.append(ax.annotate(selector, (seconds[i], accuracy[i]), xytext=(6, 0), textcoords="offset points",
                                     fontsize=7.5, color="0.15", va="center"))
        labels.append((ax, texts))
        ax.set_xscale("log")
        _pad_log_axis(ax, seconds)
        ax.margins(y=0.08)
        ax.set_title(dataset, fontsize=10)
        ax.set_xlabel("median selector fit time (s, log scale)")
        ax.set_ylabel(f"{name} at k = {int(d['k'].iloc[0])} ({unit})")
        ax.grid(alpha=0.3, which="both")
    figure_legend(fig, *legend_entries(list(axes.flat)[: len(datasets)]))
    over = f" over {n_splits}" if n_splits else ""
    what = name if is_selection_metric(metric) else f"test {name}"
    lower = "" if better_high else f" (lower {name} is better)"
    caption = (f"Mean {what}{over} against the median time of the selector's final fit (a tuned "
               f"selector's grid search is not included: see task_seconds in cost.csv); grey: the Pareto "
               f"front{lower}.")
    _heading(fig, title, caption)
    fig.canvas.draw()  # the layout, so that labels are placed where they will be drawn
    for ax, texts in labels:
        _separate_labels(ax, texts)
    return save_figure(fig, out_stem)


def _heading(fig: Any, title: str | None, caption: str) -> None:
    """The figure's title and its caption, wrapped to the figure's width."""
    import textwrap

    lines = textwrap.wrap(caption, width=max(60, int(fig.get_figwidth() * 14)))
    fig.suptitle("\n".join([*([title] if title else []), *lines]), fontsize=10)


def _marker_style(style: dict[str, Any]) -> dict[str, Any]:
    keep = ("color", "marker", "markerfacecolor", "markeredgewidth", "zorder")
    return {**{k: style[k] for k in keep}, "markersize": 8}


def _pad_log_axis(ax: Any, seconds: np.ndarray) -> None:
    """Room for the labels right of the points: the x range widened by a factor on each side."""
    lo, hi = float(seconds.min()), float(seconds.max())
    span = max(np.log10(hi / lo), 1.0)
    ax.set_xlim(lo / 10 ** (0.08 * span), hi * 10 ** (0.3 * span))


def _separate_labels(ax: Any, texts: list[Any]) -> None:
    """Move point labels off other selectors' markers (to their right), then labels that would
    overlap apart vertically (the upper one up, the lower down), so that selectors at about the
    same place (fisher and fstat often are) stay readable."""
    renderer = ax.figure.canvas.get_renderer()
    points_per_pixel = 72.0 / ax.figure.dpi
    centers = [ax.transData.transform(t.xy) for t in texts]
    half = 5.0 / points_per_pixel  # half a marker (8 points wide) and a little room, in pixels
    for i, text in enumerate(texts):  # a label over another selector's marker moves right of it
        for j in sorted(range(len(texts)), key=lambda j: centers[j][0]):
            box, (cx, cy) = text.get_window_extent(renderer), centers[j]
            if j != i and box.x0 < cx + half and cx - half < box.x1 and box.y0 < cy + half and cy - half < box.y1:
                x, y = text.xyann
                text.xyann = (x + (cx + half - box.x0) * points_per_pixel, y)
    for _ in range(20):
        moved = False
        boxes = [t.get_window_extent(renderer) for t in texts]
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                a, b = boxes[i], boxes[j]
                if a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0:
                    continue
                upper, lower = (i, j) if (a.y0 + a.y1, -i) >= (b.y0 + b.y1, -j) else (j, i)
                overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
                shift = (overlap / 2 + 0.5) * points_per_pixel
                for index, sign in ((upper, 1), (lower, -1)):
                    x, y = texts[index].xyann
                    texts[index].xyann = (x, y + sign * shift)
                boxes = [t.get_window_extent(renderer) for t in texts]
                moved = True
        if not moved:
            return
