"""Legibility of the accuracy curves with many selectors (``fsbench plot`` and the papers' figures).

Oracles: geometry measured on the drawn figure (the legend's window extent against the
figure's canvas, the saved tight bounding box and every panel's extent, ticks and labels
included), the artists drawn (each line's colour, marker and line style; the bands'
collections) and the repetition counts of the test's own synthetic tables.
"""

from __future__ import annotations

import json

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.text import Text
from matplotlib.transforms import Bbox

import fsbench.papers.figures as figures
import fsbench.report.plots as plots

SELECTORS_8 = ["fisher", "fstat", "ttest", "chi2", "infogain", "relieff", "mrmr", "random"]
SELECTORS_12 = [*SELECTORS_8, "rfs", "sl21", "sl2p", "cssvm"]
PAD_INCHES = 0.1  # as saved


def runs_table(repeats, selectors, ks=(10, 20, 30, 40, 50), n_folds=1, n_test=20, seed=0, same=()):
    """Rows like runs.csv.gz: ``repeats`` maps dataset -> number of repetitions; the selectors
    of each pair in ``same`` get identical rows (as fisher and fstat do)."""
    rng = np.random.default_rng(seed)
    twin = {b: a for a, b in same}
    rows = []
    for dataset, n_repeats in repeats.items():
        for repeat in range(n_repeats):
            for fold in range(n_folds):
                drawn = {}
                for label in selectors:
                    for k in ks:
                        key = (twin.get(label, label), k)
                        if key not in drawn:
                            drawn[key] = int(rng.integers(n_test // 2, n_test + 1))
                        correct = drawn[key]
                        rows.append({"dataset": dataset, "repeat": repeat, "fold": fold, "selector": label,
                                     "method": label, "params": "{}", "k": k, "n_correct": correct,
                                     "n_test": n_test, "accuracy": correct / n_test})
    return pd.DataFrame(rows)


@pytest.fixture
def drawn(monkeypatch):
    """The figures handed to save_figure (saved as usual), drawn again for measuring."""
    figs = []
    real = plots.save_figure

    def keep(fig, stem):
        figs.append(fig)
        return real(fig, stem)

    monkeypatch.setattr(plots, "save_figure", keep)
    monkeypatch.setattr(figures, "save_figure", keep)
    return figs


def render(fig):
    canvas = FigureCanvasAgg(fig)  # save_figure closed the figure's own canvas
    canvas.draw()
    return canvas.get_renderer()


def legends(fig):
    found = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert found, "the figure has no legend"
    return found


def panels(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.has_data()]


def selector_lines(fig, labels):
    lines = {}
    for ax in panels(fig):
        for line in ax.get_lines():
            if line.get_label() in labels:
                lines.setdefault(line.get_label(), line)
    assert sorted(lines) == sorted(labels)
    return lines


def panel_extent(ax, renderer):
    """The panel's frame, ticks, tick labels, axis labels and title (not a legend it may hold)."""
    parts = [ax.get_window_extent(renderer), ax.xaxis.get_tightbbox(renderer), ax.yaxis.get_tightbbox(renderer)]
    parts += [t.get_window_extent(renderer) for t in (ax.title, ax._left_title, ax._right_title) if t.get_text()]
    return Bbox.union([p for p in parts if p is not None])


def texts(fig):
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]


def panel_title(fig, dataset):
    titles = [ax.get_title() for ax in panels(fig) if ax.get_title().split("\n")[0] == dataset]
    assert len(titles) == 1, [ax.get_title() for ax in panels(fig)]
    return titles[0]


# the quickstart (5 selectors, "random" was cut to "rand"), GLIOMA (8 selectors, entries cut
# and the legend on the axis label), 12 selectors on one and on three panels
CASES = {
    "quickstart": ({"digits": 5}, SELECTORS_8[:3] + ["mrmr", "random"], "quickstart"),
    "glioma-8": ({"glioma": 10}, SELECTORS_8, None),
    "one-panel-12": ({"glioma": 10}, SELECTORS_12, "synthetic"),
    "three-panels-12": ({"glioma": 10, "allaml": 10, "isolet": 10}, SELECTORS_12, "synthetic"),
}


def draw_case(case, tmp_path, drawn):
    repeats, selectors, title = CASES[case]
    plots.plot_curves(runs_table(repeats, selectors, ks=range(10, 101, 10)), tmp_path / "curves", title=title)
    (fig,) = drawn
    return fig


def draw_paper(kind, tmp_path, drawn):
    if kind == "sl2p-curves":  # ten selectors and the printed stars, one dataset run so far
        labels = ["infogain", "ttest", "fisher", "chi2", "relieff", "mrmr", "cssvm", "l21svm", "sl21", "sl2p"]
        figures.accuracy_curves(runs_table({"glioma": 10}, labels, ks=(10, 20, 40, 80)), "sl2p",
                                tmp_path / "curves")
    else:  # six fixed p and the tuned DSO-FS on one dataset
        runs = runs_table({"ar": 4}, ["dso", *(f"dso-p{p:g}" for p in (0.1, 0.3, 0.5, 0.7, 0.9, 1))])
        runs["method"] = "dso"
        runs["params"] = [json.dumps({"p": float(s[5:])}) if s != "dso" else json.dumps({"p": 0.3 + r % 2 * 0.4})
                          for s, r in zip(runs["selector"], runs["repeat"], strict=True)]
        figures.accuracy_per_p(runs, tmp_path / "per_p")
    (fig,) = drawn
    return fig


FIGURES = [*CASES, "sl2p-curves", "per-p"]


def draw(kind, tmp_path, drawn):
    return draw_case(kind, tmp_path, drawn) if kind in CASES else draw_paper(kind, tmp_path, drawn)


# ----------------------------------------------------------------------------- legend
@pytest.mark.parametrize("kind", FIGURES)
def test_legend_lies_inside_the_saved_figure(tmp_path, drawn, kind):
    fig = draw(kind, tmp_path, drawn)
    renderer = render(fig)
    saved = fig.get_tightbbox(renderer).padded(PAD_INCHES)  # bbox_inches="tight", in inches
    canvas = fig.bbox
    for legend in legends(fig):
        box = legend.get_window_extent(renderer)
        # inside the canvas: in the file whether or not it is cropped to the tight bbox
        assert canvas.x0 - 0.5 <= box.x0 and box.x1 <= canvas.x1 + 0.5, (box, canvas)
        assert canvas.y0 - 0.5 <= box.y0 and box.y1 <= canvas.y1 + 0.5, (box, canvas)
        inches = Bbox.from_extents(*(np.array(box.extents) / fig.dpi))
        assert saved.x0 <= inches.x0 and inches.x1 <= saved.x1 and saved.y0 <= inches.y0 and inches.y1 <= saved.y1
        # every entry whole: each label's text inside the canvas
        for text in legend.get_texts():
            t = text.get_window_extent(renderer)
            assert canvas.x0 - 0.5 <= t.x0 and t.x1 <= canvas.x1 + 0.5, text.get_text()


@pytest.mark.parametrize("kind", FIGURES)
def test_legend_overlaps_no_panel_tick_or_axis_label(tmp_path, drawn, kind):
    fig = draw(kind, tmp_path, drawn)
    renderer = render(fig)
    for legend in legends(fig):
        box = legend.get_window_extent(renderer)
        for ax in panels(fig):
            inter = Bbox.intersection(box, panel_extent(ax, renderer))
            assert inter is None or inter.width * inter.height < 1.0, (ax.get_title(), box, inter)


# ----------------------------------------------------------------------------- line styles
@pytest.mark.parametrize("kind", ["one-panel-12", "three-panels-12"])
def test_twelve_selectors_have_twelve_distinct_styles(tmp_path, drawn, kind):
    fig = draw(kind, tmp_path, drawn)
    lines = selector_lines(fig, SELECTORS_12)
    colors = [mcolors.to_hex(line.get_color()) for line in lines.values()]
    markers = [line.get_marker() for line in lines.values()]
    dashes = [line.get_linestyle() for line in lines.values()]
    assert len(set(zip(colors, markers, dashes, strict=True))) == 12
    # each attribute alone already tells them apart, but the line style
    assert len(set(colors)) == 12 and len(set(markers)) == 12
    assert all(m not in ("None", "", " ", None) for m in markers)
    assert len(set(dashes)) >= 4
    # the colours are a qualitative palette: tab10 first, then tab20's tints
    tab20 = [mcolors.to_hex(c) for c in plots.pyplot().get_cmap("tab20").colors]
    assert colors[:10] == tab20[0::2] and set(colors[10:]) <= set(tab20[1::2])


def test_paper_curves_with_twelve_selectors_are_distinct_too(tmp_path, drawn):
    labels = ["infogain", "ttest", "fisher", "chi2", "relieff", "mrmr", "cssvm", "l21svm", "sl21", "sl2p",
              "rfs", "random"]
    figures.accuracy_curves(runs_table({"glioma": 3}, labels), "sl2p", tmp_path / "curves")
    lines = selector_lines(drawn[0], labels)
    assert len({line.get_marker() for line in lines.values()}) == 12
    assert len({mcolors.to_hex(line.get_color()) for line in lines.values()}) == 12


def test_a_line_lying_on_another_still_shows(tmp_path, drawn):
    runs = runs_table({"glioma": 4}, ["fisher", "fstat", "relieff"], same=[("fisher", "fstat")])
    plots.plot_curves(runs, tmp_path / "curves", bands=False)
    lines = selector_lines(drawn[0], ["fisher", "fstat"])
    a, b = lines["fisher"], lines["fstat"]
    assert np.array_equal(a.get_ydata(), b.get_ydata())  # the table really has coinciding curves
    assert a.get_marker() != b.get_marker() and a.get_linestyle() != b.get_linestyle()
    # hollow markers: the one underneath shows inside or around the one on top
    assert all(mcolors.to_rgba(line.get_markerfacecolor())[3] == 0 for line in (a, b))
    top = max((a, b), key=lambda line: line.get_zorder())
    assert top.get_linestyle() != "-"  # the lower line shows through the gaps of the upper


# ----------------------------------------------------------------------------- caption
@pytest.mark.parametrize("n_repeats", [3, 7])
def test_caption_names_the_number_of_repetitions(tmp_path, drawn, n_repeats):
    runs = runs_table({"glioma": n_repeats}, SELECTORS_8)
    r = len(set(runs["repeat"]))  # counted from the table itself
    plots.plot_curves(runs, tmp_path / "curves", title="glioma")
    assert any(f"mean ± 1 sd over {r} splits" in t for t in texts(drawn[0])), texts(drawn[0])


def test_caption_is_per_panel_when_datasets_differ(tmp_path, drawn):
    runs = runs_table({"glioma": 3, "allaml": 5}, SELECTORS_8[:4])
    counts = runs.groupby("dataset")["repeat"].nunique()
    plots.plot_curves(runs, tmp_path / "curves")
    fig = drawn[0]
    for dataset in ("glioma", "allaml"):
        assert f"mean ± 1 sd over {counts[dataset]} splits" in panel_title(fig, dataset)
    heading = fig._suptitle.get_text() if fig._suptitle is not None else ""
    assert "over 3 splits" not in heading and "over 5 splits" not in heading  # no one count for both


def test_caption_of_repeated_kfold_counts_repetitions_not_folds(tmp_path, drawn):
    runs = runs_table({"glioma": 4}, SELECTORS_8[:3], n_folds=5)
    plots.plot_curves(runs, tmp_path / "curves")
    assert any("mean ± 1 sd over 4 repetitions of 5-fold CV" in t for t in texts(drawn[0])), texts(drawn[0])


def test_paper_figures_caption_the_repetitions(tmp_path, drawn):
    figures.accuracy_curves(runs_table({"glioma": 6, "allaml": 6}, ["rfs", "mrmr"]), "rfs", tmp_path / "curves")
    assert "mean ± 1 sd over 6 splits" in drawn[0]._suptitle.get_text()


# ----------------------------------------------------------------------------- bands
def bands_of(fig):
    return [c for ax in panels(fig) for c in ax.collections if isinstance(c, PolyCollection)]


def test_bands_are_light_by_default_and_can_be_turned_off(tmp_path, drawn):
    runs = runs_table({"glioma": 5}, SELECTORS_8)
    plots.plot_curves(runs, tmp_path / "with")
    plots.plot_curves(runs, tmp_path / "without", bands=False)
    with_bands, without = drawn
    assert len(bands_of(with_bands)) == 8
    assert all(0.05 <= band.get_alpha() <= 0.12 for band in bands_of(with_bands))
    assert bands_of(without) == []
    # the caption no longer promises bands
    assert not any("± 1 sd over" in t for t in texts(without))
    assert any("over 5 splits" in t for t in texts(without))
    assert (tmp_path / "without.png").stat().st_size > 1000


@pytest.mark.parametrize("kind", ["curves", "per-p"])
def test_paper_figures_can_turn_bands_off(tmp_path, drawn, kind):
    if kind == "curves":
        figures.accuracy_curves(runs_table({"glioma": 3}, ["rfs", "mrmr"]), "rfs", tmp_path / "c", bands=False)
    else:
        runs = runs_table({"ar": 3}, ["dso-p0.5", "dso-p1"])
        runs["method"] = "dso"
        runs["params"] = [json.dumps({"p": 0.5 if s == "dso-p0.5" else 1.0}) for s in runs["selector"]]
        figures.accuracy_per_p(runs, tmp_path / "p", bands=False)
    assert bands_of(drawn[0]) == []
