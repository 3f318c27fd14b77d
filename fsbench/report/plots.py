"""Accuracy-vs-number-of-features curves: one panel per dataset, one line per selector.

The styling here is shared with the papers' figures (:mod:`fsbench.papers.figures`) so that a
figure stays legible with 8-12 selectors:

- every selector has a fixed style by its position (:func:`line_styles`): a colour from a
  qualitative palette (tab10, then the light tints of tab20), one of twelve marker shapes and
  one of four line styles, so twelve selectors have twelve distinct (colour, marker, line
  style) triples. Markers are hollow and dashed lines are drawn above solid ones, so a line
  lying exactly on another (fisher and fstat rank alike) still shows its colour and marker;
  on dense curves (more than 20 values of k) each line marks every few k, shifted per line;
- the ± 1 sd bands are light (alpha :data:`BAND_ALPHA`) and optional (``bands=False``);
- the legend sits outside the axes, right of the top-right panel, in room the constrained
  layout reserves and the figure's width adds (:func:`figure_legend`), and figures are saved
  with a tight bounding box, so no entry is ever clipped and none overlaps a panel;
- a caption states what the lines and bands are and over how many repetitions
  (:func:`spread_captions`), per panel when the datasets differ.

Results of several classifiers (a ``classifier`` column with several values) get one set of
panels per classifier, each set starting a row, titled with the dataset and the classifier;
a selector keeps its style in every set. Nothing is averaged over classifiers; ``classifier``
plots one classifier's rows only. Results without the column are drawn as they always were.

``metric`` (:data:`fsbench.evaluation.metrics.ALL_METRICS`) draws another metric than accuracy, pooled over
the folds of a repetition by summing its per-class counts; the y-axis names it. A selection metric
(relevant recall or precision, probe rate) leaves out the datasets that lack it (no known
relevant features or probes: :func:`fsbench.evaluation.metrics.datasets_without_metric`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fsbench.evaluation.metrics import check_metric, datasets_without_metric, is_selection_metric, metric_label
from fsbench.report.tables import classifiers_in, group_keys, per_repeat, select_classifier

#: marker shapes, one per selector position (cycled after twelve); ``*`` is left to the
#: printed values of the papers' figures
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", "p", ">", "x", "d")
#: line styles, cycled: with ten colours, (colour, line style) pairs repeat only after twenty
LINESTYLES = ("-", "--", "-.", ":")
#: opacity of the ± 1 sd bands: light enough that eight overlapping bands stay a faint wash
BAND_ALPHA = 0.08
#: a curve with more values of k than this marks only every few k (shifted per line)
DENSE = 20
#: width (inches) of one panel, and its height
PANEL_SIZE = (4.6, 3.6)


def curves(runs: pd.DataFrame, *, metric: str = "accuracy") -> pd.DataFrame:
    """Mean and std (over repetitions) of accuracy (%) per dataset, selector and k (and
    classifier, first, when the results record one: never averaged over); of ``metric`` (x 100)
    when given, pooled over folds from the per-class counts."""
    reps = per_repeat(runs, metric=metric)
    keys = group_keys(reps, "dataset", "selector", "k")
    options = {"dropna": False} if len(keys) == 4 else {}
    stats = reps.groupby(keys, sort=False, **options)[metric].agg(["mean", "std"]) * 100
    return stats.reset_index().sort_values(keys, kind="stable")


def pyplot() -> Any:
    """matplotlib.pyplot on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# ----------------------------------------------------------------------------- styles
def palette(n: int) -> list[tuple[float, ...]]:
    """``n`` qualitative colours: tab10, then tab20's ten light tints (cycled beyond twenty)."""
    tab20 = pyplot().get_cmap("tab20").colors
    colors = list(tab20[0::2]) + list(tab20[1::2])
    return [tuple(colors[i % len(colors)]) for i in range(n)]


def line_styles(labels: Sequence[str], colors: Sequence[Any] | None = None) -> dict[str, dict[str, Any]]:
    """Keyword arguments of ``Axes.plot`` for each label, fixed by its position in ``labels``.

    Label i gets colour i of :func:`palette` (or ``colors[i]``), marker ``MARKERS[i % 12]``
    and line style ``LINESTYLES[i % 4]``: the first twelve labels have pairwise distinct
    colours and markers. Markers are hollow, and non-solid lines are drawn above solid ones,
    so that coinciding lines both show.
    """
    colors = list(colors) if colors is not None else palette(len(labels))
    styles = {}
    for i, label in enumerate(labels):
        linestyle = LINESTYLES[i % len(LINESTYLES)]
        styles[label] = {"color": colors[i], "marker": MARKERS[i % len(MARKERS)], "linestyle": linestyle,
                         "linewidth": 1.3, "markersize": 5.5, "markerfacecolor": "none", "markeredgewidth": 1.1,
                         "zorder": 2.0 + 0.5 * (linestyle != "-") + 0.01 * i}
    return styles


def draw_curve(ax: Any, d: pd.DataFrame, style: Mapping[str, Any], label: str, bands: bool,
               position: int = 0, n_lines: int = 1) -> None:
    """One selector's mean curve (columns k, mean, std of :func:`curves`), its band if ``bands``.

    A dense curve (more than :data:`DENSE` values of k) marks about ten of its points, the
    first at an offset that depends on ``position`` among ``n_lines``, so that the markers of
    coinciding lines do not fall on each other.
    """
    kwargs = dict(style)
    n = len(d)
    if n > DENSE:
        step = math.ceil(n / 10)
        kwargs["markevery"] = ((position * step) // max(n_lines, 1) % step, step)
    ax.plot(d["k"], d["mean"], label=label, **kwargs)
    if bands:
        std = d["std"].fillna(0.0)
        ax.fill_between(d["k"], d["mean"] - std, d["mean"] + std, color=style["color"], alpha=BAND_ALPHA,
                        linewidth=0, zorder=1)


def accuracy_axis(ax: Any, title: str, fontsize: float | None = 10, *, ylabel: str = "accuracy (%)") -> None:
    """Title, axis labels and grid of an accuracy-vs-number-of-features panel (``ylabel``: the
    metric drawn)."""
    ax.set_title(title, **({} if fontsize is None else {"fontsize": fontsize}))
    ax.set_xlabel("number of selected features")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


# ----------------------------------------------------------------------------- layout, legend
def panel_grid(n: int, width: float = PANEL_SIZE[0], height: float = PANEL_SIZE[1],
               header: float = 0.6, ncols: int | None = None) -> tuple[Any, Any]:
    """A figure of ``n`` panels, at most three per row (or ``ncols``), in constrained layout
    (unused ones hidden); ``header`` inches of height are added for the figure's title."""
    plt = pyplot()
    ncols = min(3, max(n, 1)) if ncols is None else ncols
    nrows = math.ceil(max(n, 1) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows + header), squeeze=False,
                             layout="constrained")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, axes


def legend_entries(axes: Sequence[Any]) -> tuple[list[Any], list[str]]:
    """The legend handles and labels of several panels, each label once, in order of appearance."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    return handles, labels


def figure_legend(fig: Any, handles: Sequence[Any], labels: Sequence[str]) -> Any:
    """The figure's legend, right of the top-right panel (one column up to 16 entries).

    It belongs to that panel, so the constrained layout reserves its room: it overlaps no
    panel, tick or axis label, and starts below the figure's title. The figure is widened by
    the legend's width, so the panels keep theirs however long the labels are.
    """
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_subplotspec() is not None]
    top = [ax for ax in panels if ax.get_subplotspec().rowspan.start == 0]
    anchor = max(top, key=lambda ax: ax.get_subplotspec().colspan.stop)
    legend = anchor.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0.0,
                           ncol=1 if len(labels) <= 16 else 2, frameon=False, fontsize=9, handlelength=3.0)
    width = legend.get_window_extent(fig.canvas.get_renderer()).width / fig.dpi
    fig.set_figwidth(fig.get_figwidth() + width + 0.1)
    return legend


# ----------------------------------------------------------------------------- captions
def _splits(n_repeats: Sequence[int], n_folds: int) -> str:
    lo, hi = min(n_repeats), max(n_repeats)
    count = str(lo) if lo == hi else f"{lo}-{hi}"
    if n_folds > 1:
        return f"{count} repetition{'s' * (hi != 1)} of {n_folds}-fold CV"
    return f"{count} split{'s' * (hi != 1)}"


def spread_captions(runs: pd.DataFrame, bands: bool = True) -> dict[str, str]:
    """Per dataset: what a line and a band show, e.g. ``mean ± 1 sd over 10 splits``.

    The count is the number of repetitions (``repeat`` values) behind each curve; a k-fold
    repetition pools its folds, so it reads ``10 repetitions of 5-fold CV``. When selectors
    of a dataset have different counts (an unfinished run), the range is given.
    """
    out = {}
    for dataset, rows in runs.groupby("dataset", sort=False):
        reps = rows.groupby("selector", sort=False)["repeat"].nunique().to_numpy()
        folds = int(rows["fold"].nunique()) if "fold" in rows.columns else 1
        what = _splits([int(r) for r in reps], folds)
        if int(np.max(reps)) < 2:
            out[str(dataset)] = f"mean over {what} (no sd)"
        elif bands:
            out[str(dataset)] = f"mean ± 1 sd over {what}"
        else:
            out[str(dataset)] = f"mean over {what} (± 1 sd bands off)"
    return out


def shared_caption(captions: Mapping[str, str]) -> str | None:
    """The caption every dataset shares, or None when they differ (then say it per panel)."""
    texts = set(captions.values())
    return texts.pop() if len(texts) == 1 else None


# ----------------------------------------------------------------------------- saving
def save_figure(fig: Any, stem: str | Path) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.pdf``, close the figure, return the paths.

    The saved area is the tight bounding box of everything drawn (``bbox_inches="tight"``),
    so no legend or label is clipped. The files carry no creation date or software version,
    so regenerating a figure from the same results rewrites the same bytes (committed figures
    do not change without a reason).

    Both files are drawn in memory first, then each written atomically (a temporary file in the
    same folder renamed into place, :func:`fsbench.storage.atomic.atomic_write_bytes`): a drawing that
    fails, or a killed process, leaves the previous figure whole, never a truncated one.
    """
    import io

    from fsbench.storage.atomic import atomic_write_bytes

    stem = Path(stem)
    if stem.suffix in (".png", ".pdf"):
        stem = stem.with_suffix("")
    drawn = {}
    try:
        for ext, metadata in (("png", {"Software": None}), ("pdf", {"CreationDate": None, "Producer": None})):
            buffer = io.BytesIO()
            fig.savefig(buffer, format=ext, dpi=130, metadata=metadata, bbox_inches="tight", pad_inches=0.1)
            drawn[stem.parent / f"{stem.name}.{ext}"] = buffer.getvalue()
    finally:
        pyplot().close(fig)
    for path, data in drawn.items():
        atomic_write_bytes(path, data)
    return list(drawn)


# ----------------------------------------------------------------------------- the curves
def plot_curves(runs: pd.DataFrame, out_stem: str | Path, title: str | None = None,
                bands: bool = True, classifier: str | None = None, *, metric: str = "accuracy") -> list[Path]:
    """Write ``<out_stem>.png`` and ``<out_stem>.pdf``; return the paths.

    One panel per dataset, one line per selector (styles: :func:`line_styles`), a light
    ± 1 sd band per line unless ``bands`` is False, the legend right of the panels and a
    caption naming the number of repetitions (:func:`spread_captions`). Results of several
    classifiers: one set of panels per classifier, or ``classifier``'s panels only. ``metric``:
    the metric drawn (default accuracy), named on the y-axis; a selection metric draws the
    datasets that have it only (FsbenchError when none has).
    """
    runs = select_classifier(runs, classifier)
    if is_selection_metric(metric):
        check_metric(runs, metric)
        runs = runs[~runs["dataset"].astype(str).isin(datasets_without_metric(runs, metric))]
    ylabel = metric_label(metric)
    if len(classifiers_in(runs)) > 1:
        return _plot_per_classifier(runs, out_stem, title, bands, metric=metric)
    data = curves(runs, metric=metric)
    datasets = list(dict.fromkeys(runs["dataset"]))
    selectors = list(dict.fromkeys(runs["selector"]))
    styles = line_styles(selectors)
    captions = spread_captions(runs, bands)
    shared = shared_caption(captions)
    fig, axes = panel_grid(len(datasets))
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        for i, sel in enumerate(selectors):
            d = data[(data["dataset"] == dataset) & (data["selector"] == sel)]
            if not d.empty:
                draw_curve(ax, d, styles[sel], sel, bands, i, len(selectors))
        # one panel, or captions that differ: the caption goes under the panel's title
        per_panel = shared is None or len(datasets) == 1
        accuracy_axis(ax, f"{dataset}\n{captions[dataset]}" if per_panel else dataset, ylabel=ylabel)
    handles, labels = legend_entries(list(axes.flat)[: len(datasets)])
    figure_legend(fig, handles, labels)
    heading = [t for t in (title if title and datasets != [title] else None,
                           shared if len(datasets) > 1 else None) if t]
    if heading:
        fig.suptitle("\n".join(heading), fontsize=11)
    return save_figure(fig, out_stem)


def _plot_per_classifier(runs: pd.DataFrame, out_stem: str | Path, title: str | None, bands: bool, *,
                         metric: str = "accuracy") -> list[Path]:
    """The curves of results with several classifiers: one set of dataset panels per
    classifier, each set starting a row (one dataset: one panel per classifier, three a row)."""
    classifiers = classifiers_in(runs)
    data = curves(runs, metric=metric)
    datasets = list(dict.fromkeys(runs["dataset"]))
    selectors = list(dict.fromkeys(runs["selector"]))
    styles = line_styles(selectors)
    captions = {(c, d): text for c in classifiers
                for d, text in spread_captions(select_classifier(runs, c), bands).items()}
    shared = shared_caption(captions)
    if len(datasets) == 1:
        ncols, per_set = min(3, len(classifiers)), 1
    else:
        ncols = min(3, len(datasets))
        per_set = math.ceil(len(datasets) / ncols) * ncols
    slots = {(c, d): i * per_set + j for i, c in enumerate(classifiers) for j, d in enumerate(datasets)}
    n_slots = (len(classifiers) - 1) * per_set + len(datasets) if len(datasets) > 1 else len(classifiers)
    fig, axes = panel_grid(n_slots, ncols=ncols)
    flat = list(axes.flat)
    used = set(slots.values())
    for i, ax in enumerate(flat):
        if i not in used:
            ax.set_visible(False)
    for (clf, dataset), i in slots.items():
        ax = flat[i]
        for j, sel in enumerate(selectors):
            d = data[(data["classifier"].astype(str) == clf) & (data["dataset"] == dataset)
                     & (data["selector"] == sel)]
            if not d.empty:
                draw_curve(ax, d, styles[sel], sel, bands, j, len(selectors))
        name = f"{dataset} · {clf}"
        accuracy_axis(ax, f"{name}\n{captions[(clf, dataset)]}" if shared is None else name,
                      ylabel=metric_label(metric))
    handles, labels = legend_entries([flat[i] for i in sorted(used)])
    figure_legend(fig, handles, labels)
    heading = [t for t in (title, shared) if t]
    if heading:
        fig.suptitle("\n".join(heading), fontsize=11)
    return save_figure(fig, out_stem)
