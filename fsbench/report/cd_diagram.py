"""Critical-difference diagram (Demšar 2006, Figure 1): average ranks, and bars joining the
selectors that the post-hoc test cannot tell apart.

Drawn by scikit-posthocs' ``critical_difference_diagram`` from fsbench's Friedman ranks
(:func:`fsbench.stats.friedman_test`, rank 1 the best) and a post-hoc p-value matrix from
scikit-posthocs:

- ``test="nemenyi"``: ``posthoc_nemenyi_friedman`` (two selectors differ when their average
  ranks differ by more than the critical difference CD, which the diagram shows as a bar of
  that length above the axis);
- ``test="wilcoxon"``: ``posthoc_wilcoxon`` over the datasets with Holm's correction, zero
  differences split between the signs (as :func:`fsbench.stats.wilcoxon_holm`).

A bar joins every maximal group of selectors whose pairs all have p >= alpha. The caption
states the blocks, the test and the Friedman p-value. This module writes figures; the
statistics are the pure functions of :mod:`fsbench.stats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fsbench.report.plots import palette, pyplot, save_figure
from fsbench.stats import friedman_test, score_matrix

TESTS = ("nemenyi", "wilcoxon")


def posthoc_pvalues(scores: pd.DataFrame | np.ndarray, selectors: Sequence[str] | None = None,
                    test: str = "nemenyi") -> pd.DataFrame:
    """Selectors x selectors p-values of scikit-posthocs' Nemenyi (after Friedman) or Holm-adjusted
    Wilcoxon post-hoc test over the blocks (rows of ``scores``)."""
    import scikit_posthocs as sp

    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}; got {test!r}.")
    values, names, _ = score_matrix(scores, selectors=selectors, min_blocks=2)
    if test == "nemenyi":
        p = sp.posthoc_nemenyi_friedman(values)
        return pd.DataFrame(p.to_numpy(), index=names, columns=names)
    n, k = values.shape
    long = pd.DataFrame({"score": values.T.reshape(-1), "selector": np.repeat(np.arange(k), n)})
    p = sp.posthoc_wilcoxon(long, val_col="score", group_col="selector", zero_method="zsplit", p_adjust="holm")
    p = p.reindex(index=range(k), columns=range(k))
    return pd.DataFrame(p.to_numpy(), index=names, columns=names)


def plot_cd_diagram(scores: pd.DataFrame | np.ndarray, selectors: Sequence[str] | None = None, *,
                    alpha: float = 0.05, test: str = "nemenyi", higher_is_better: bool = True,
                    block_name: str = "datasets", title: str | None = None) -> Any:
    """The critical-difference diagram of a blocks x selectors table (a matplotlib Figure).

    ``scores`` as :func:`fsbench.stats.friedman_test` takes it (:func:`fsbench.stats.block_matrix`
    builds it from results). The Nemenyi diagram shows the critical difference as a bar above
    the axis; the Wilcoxon diagram has none (its groups come from pairwise p-values).
    ``block_name`` names the blocks in the caption ("datasets", "(dataset, k) pairs").
    Raises ValueError as ``friedman_test`` does, and for an unknown ``test``.
    """
    result = friedman_test(scores, selectors, alpha=alpha, higher_is_better=higher_is_better)
    names = result.ranks["selector"].tolist()
    colors = dict(zip(score_matrix(scores, selectors=selectors, min_blocks=2)[1], palette(len(names)), strict=True))
    ranks = pd.Series(result.ranks["average_rank"].to_numpy(), index=names)
    sig = posthoc_pvalues(scores, selectors, test).reindex(index=names, columns=names)
    k = len(names)
    plt = pyplot()
    longest = max(len(name) for name in names)
    width = min(14.0, 6.0 + 0.16 * longest + 0.35 * k)
    height = 1.6 + 0.32 * ((k + 1) // 2) + 0.25
    fig, ax = plt.subplots(figsize=(width, height))
    cd = result.cd if test == "nemenyi" else None
    import scikit_posthocs as sp

    artists = sp.critical_difference_diagram(
        ranks, sig, alpha=alpha, ax=ax, text_h_margin=0.08, color_palette=colors,
        label_fmt_left="{label} ({rank:.2f}) ", label_fmt_right=" ({rank:.2f}) {label}",
        label_props={"fontsize": 10}, marker_props={"s": 28},
        elbow_props={"linewidth": 1.2}, crossbar_props={"linewidth": 3, "color": "0.25"})
    # scikit-posthocs joins a bar's points in the order of a set, which varies from run to run
    # (hash seeds): sorted, the same results draw the same bytes
    for lines in artists["crossbars"]:
        for line in lines:
            x, y = line.get_data()
            line.set_data(sorted(x), y)
    for label in artists["labels"]:  # black text: the palette's light tints are lines' colours, hard to read
        label.set_color("k")
    ax.set_xlim(0.8, k + 0.2)
    ax.set_xticks(range(1, k + 1))
    ax.tick_params(axis="x", labelsize=9)
    ymin = ax.get_ylim()[0]
    top = 0.4
    if cd is not None:
        start = 1.0
        ax.plot([start, start + cd], [1.1, 1.1], color="k", linewidth=1.5, solid_capstyle="butt")
        for x in (start, start + cd):
            ax.plot([x, x], [0.95, 1.25], color="k", linewidth=1.2)
        ax.text(start + cd / 2, 1.4, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
        top = 2.1
    ax.set_ylim(ymin - 0.3, top)
    if test == "nemenyi":
        how = f"Nemenyi test, alpha = {alpha:g}"
    else:
        how = f"Wilcoxon signed-rank tests with Holm's correction, alpha = {alpha:g}"
    caption = (f"Average rank over {result.n_blocks} {block_name} (1 = best). Bars join selectors not "
               f"significantly different ({how}).\nFriedman chi2 = {result.statistic:.2f}, p = "
               f"{result.p_value:.3g}; Iman-Davenport F = {result.iman_davenport:.2f}, p = "
               f"{result.iman_davenport_p:.3g}.")
    fig.text(0.5, 0.0, caption, ha="center", va="top", fontsize=8.5, wrap=True)
    if title:
        fig.suptitle(title, fontsize=11, y=1.02)
    return fig


def write_cd_diagram(scores: pd.DataFrame | np.ndarray, out_stem: str | Path, selectors: Sequence[str] | None = None,
                     **options: Any) -> list[Path]:
    """Draw :func:`plot_cd_diagram` and write ``<out_stem>.png`` and ``<out_stem>.pdf``."""
    return save_figure(plot_cd_diagram(scores, selectors, **options), out_stem)
