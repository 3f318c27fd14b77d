"""The summary ``fsbench stats`` prints: one row per selector, then the Friedman test and the
across-datasets comparisons, as markdown, csv or latex. Pure: tables in, text out.

Per selector (best average rank first; by accuracy without ranks, the lowest first for a metric
where lower is better, :func:`fsbench.evaluation.metrics.higher_is_better`):

- ``average_rank``: its Friedman average rank (1 = best), empty when it was left out;
- ``accuracy``: mean over datasets of its mean test accuracy (%) at k (or of the metric
  ``fsbench stats --metric`` names, x 100; the header says which);
- ``stability``: mean over datasets of Nogueira's stability of its top k (empty without rankings);
- ``fit_seconds``: median over datasets of its median selector fit time;
- ``wins``, ``losses``: over the (dataset, other selector) pairs at k, how often the corrected
  resampled t-test finds it significantly more (less) accurate at alpha (with a baseline, only
  the pairs with the baseline are tested); for a metric where lower is better, a win is a
  significantly lower value.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fsbench.evaluation.metrics import higher_is_better, metric_label
from fsbench.report.statistics import FriedmanTables

SUMMARY_COLUMNS = ("selector", "average_rank", "accuracy", "stability", "fit_seconds", "wins", "losses")
HEADERS = {"selector": "selector", "average_rank": "average rank", "accuracy": "accuracy (%)",
           "stability": "stability", "fit_seconds": "median fit (s)", "wins": "wins", "losses": "losses"}


def selector_summary(selectors: Sequence[str], friedman: FriedmanTables, points: pd.DataFrame,
                     stability: pd.DataFrame | None, cost: pd.DataFrame, pairwise: pd.DataFrame, k: int,
                     baseline: str | None = None, *, metric: str = "accuracy") -> pd.DataFrame:
    """One row per selector (columns :data:`SUMMARY_COLUMNS`, see the module docstring); ``metric``:
    what the ``accuracy`` column and the tests hold, which sets the direction of wins and order."""
    better_high = higher_is_better(metric)
    table = pd.DataFrame({"selector": list(selectors)}).set_index("selector")
    if friedman.ranks is not None:
        table["average_rank"] = friedman.ranks.set_index("selector")["average_rank"]
    table["accuracy"] = 100 * points.groupby("selector")["accuracy"].mean()
    if stability is not None and len(stability):
        table["stability"] = stability[stability["k"] == k].groupby("selector")["nogueira"].mean()
    table["fit_seconds"] = cost.groupby("selector")["fit_seconds_median"].median()
    rows = pairwise[(pairwise["scope"] == "dataset") & (pairwise["k"] == k) & pairwise["significant"].astype(bool)]
    a_wins = rows[rows["mean_diff"] > 0] if better_high else rows[rows["mean_diff"] < 0]
    b_wins = rows[rows["mean_diff"] < 0] if better_high else rows[rows["mean_diff"] > 0]
    wins = pd.concat([a_wins["selector_a"], b_wins["selector_b"]]).value_counts()
    losses = pd.concat([a_wins["selector_b"], b_wins["selector_a"]]).value_counts()
    table["wins"] = wins.reindex(table.index).fillna(0).astype(int)
    table["losses"] = losses.reindex(table.index).fillna(0).astype(int)
    table = table.reindex(columns=list(SUMMARY_COLUMNS[1:])).reset_index()
    if friedman.ranks is not None:
        table = table.sort_values(["average_rank", "accuracy"], ascending=[True, not better_high],
                                  na_position="last")
    else:
        table = table.sort_values("accuracy", ascending=not better_high, kind="stable")
    return table.reset_index(drop=True)


def _cell(column: str, value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if column in ("wins", "losses"):
        return str(int(value))  # type: ignore[call-overload]
    if column == "fit_seconds":
        return f"{float(value):.3g}"  # type: ignore[arg-type]
    if column in ("average_rank", "stability", "accuracy"):
        return f"{float(value):.2f}"  # type: ignore[arg-type]
    return str(value)


def _notes(friedman: FriedmanTables, pairwise: pd.DataFrame, k_table: int | None, k: int, baseline: str | None,
           alpha: float) -> list[str]:
    lines = []
    if friedman.friedman is not None:
        f = friedman.friedman.iloc[0]
        at = f"at k = {k}" if k_table is not None else "at every k"
        lines.append(f"Friedman over {int(f['n_blocks'])} {friedman.block_name} {at}, {int(f['n_selectors'])} "
                     f"selectors: chi2 = {f['statistic']:.2f} (p = {f['p_value']:.3g}), Iman-Davenport F = "
                     f"{f['iman_davenport']:.2f} (p = {f['iman_davenport_p']:.3g}); Nemenyi CD = {f['cd']:.2f} "
                     f"average ranks at alpha = {alpha:g}"
                     + ("." if k_table is not None else " (descriptive: the blocks of one dataset are not "
                        "independent)."))
    across = pairwise[(pairwise["scope"] == "across") & (pairwise["k"] == k)]
    if len(across):
        significant = across[across["significant"].astype(bool)]
        which = "; ".join(f"{a} {'>' if d > 0 else '<'} {b} (p_holm = {p:.3g})" for a, b, d, p in
                          zip(significant["selector_a"], significant["selector_b"], significant["mean_diff"],
                              significant["p_holm"], strict=True))
        pairs = f"pairs with {baseline}" if baseline else "pairs"
        lines.append(f"Across datasets at k = {k} (Wilcoxon signed-rank, Holm): {len(significant)} of {len(across)} "
                     f"{pairs} differ at alpha = {alpha:g}{': ' + which if which else ''}.")
    return lines


def format_summary(table: pd.DataFrame, friedman: FriedmanTables, pairwise: pd.DataFrame, k_table: int | None,
                   k: int, fmt: str, baseline: str | None = None, classifier: str | None = None,
                   alpha: float = 0.05, *, metric: str = "accuracy") -> str:
    """The summary as ``fmt`` (markdown, csv: the table alone, latex), ending with a newline;
    ``metric``: what the ``accuracy`` column holds (csv: the column is named after it)."""
    if fmt == "csv":
        return table.rename(columns={"accuracy": metric}).to_csv(index=False, float_format="%.6g")
    of = f", classifier {classifier}" if classifier else ""
    vs = f" against {baseline}" if baseline else ""
    lower = "" if higher_is_better(metric) else " (lower is better)"
    caption = (f"Selectors at k = {k}{of}: average rank (1 = best), mean {metric_label(metric, percent=False)}"
               f"{lower} over datasets, mean stability "
               f"(Nogueira), median fit time, and wins / losses{vs} on datasets (corrected resampled t-test, "
               f"alpha = {alpha:g}).")
    table = table[[c for c in table.columns if table[c].notna().any()]]
    header = [metric_label(metric) if c == "accuracy" else HEADERS[c] for c in table.columns]
    cells = [[_cell(c, row[c]) for c in table.columns] for _, row in table.iterrows()]
    notes = _notes(friedman, pairwise, k_table, k, baseline, alpha)
    if fmt == "markdown":
        lines = [caption, "", f"| {' | '.join(header)} |", "|" + "---|" * len(header)]
        lines += [f"| {' | '.join(row)} |" for row in cells]
        return "\n".join([*lines, "", *notes]) + "\n"

    def tex(s: str) -> str:
        return s.replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")

    lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{tex(' '.join([caption, *notes]))}}}",
             r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\toprule",
             " & ".join(tex(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join(tex(c) for c in row) + r" \\" for row in cells]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"
