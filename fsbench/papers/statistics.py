"""REPORT.md's per-paper statistics: ranks across datasets with their CD diagram, and stability.

For each paper, the methods of its tables are ranked on its datasets (each dataset's accuracy
averaged over our repetitions first; Demšar 2006): at every k of its tables, and with one block
per (dataset, k) over every k run (descriptive: the ks of one dataset are not independent
blocks). Friedman's test, Iman-Davenport's F and Nemenyi's critical difference come from
:func:`fsbench.report.statistics.ranks_and_friedman`, the diagram from
:func:`fsbench.report.stats_figures.cd_figure` (scikit-posthocs), written beside the paper's
results as ``cd_k<K>.png`` and ``cd_all.png``. The stability of each method's top-k over the
outer splits (Nogueira et al. 2018, with its 95% interval) comes from the results'
``rankings.csv.gz`` at the tables' k.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fsbench.papers import dataset_titles, method_titles, paper_datasets, table_ks
from fsbench.report.markdown import md_table, num, pvalue
from fsbench.report.statistics import FriedmanTables, ranks_and_friedman, stability_table

ALPHA = 0.05


def _paper_rows(paper: str, runs: pd.DataFrame) -> pd.DataFrame:
    methods = list(method_titles(paper))
    return runs[runs["dataset"].isin(paper_datasets(paper)) & runs["selector"].isin(methods)]


def _friedman_row(label: str, tables: FriedmanTables) -> list[str]:
    f = tables.friedman.iloc[0]
    return [label, str(int(f["n_blocks"])), str(int(f["n_selectors"])), num(f["statistic"]), pvalue(f["p_value"]),
            num(f["iman_davenport"]), pvalue(f["iman_davenport_p"]), num(f["cd"])]


def _ranks_line(paper: str, tables: FriedmanTables) -> str:
    titles = method_titles(paper)
    ranks = tables.ranks.sort_values("average_rank", kind="stable")
    return ", ".join(f"{titles.get(r.selector, r.selector)} {r.average_rank:.2f}" for r in ranks.itertuples())


def ranks_section(paper: str, runs: pd.DataFrame | None, results_dir: Path, root: Path,
                  write_figures: bool) -> list[str]:
    """Average ranks, Friedman and the CD diagrams of the paper's methods over its datasets."""
    if runs is None or runs.empty:
        return []
    rows = _paper_rows(paper, runs)
    lines = ["### Ranks across datasets", ""]
    table, ranks_text, figures = [], [], []
    for k, label, stem in [*((k, f"k = {k}", f"cd_k{k}") for k in table_ks(paper)), (None, "every k", "cd_all")]:
        part = rows if k is None else rows[rows["k"] == k]
        tables = ranks_and_friedman(part, k, alpha=ALPHA)
        if tables.friedman is None:
            ranks_text.append(f"- {label}: {tables.note}.")
            continue
        table.append(_friedman_row(label, tables))
        ranks_text.append(f"- Average ranks at {label} (1 = best): {_ranks_line(paper, tables)}.")
        if write_figures:
            from fsbench.report.stats_figures import cd_figure

            title = f"{paper}: {label}" + (" ((dataset, k) blocks, descriptive)" if k is None else "")
            cd_figure(tables, results_dir / stem, alpha=ALPHA, title=title)
        if (results_dir / f"{stem}.png").is_file():
            figures.append(f"![{paper}: critical-difference diagram, {label}]"
                           f"({(results_dir / f'{stem}.png').relative_to(root).as_posix()})")
    lines += ["Each method's accuracy on each dataset, averaged over our repetitions, ranked within the dataset "
              "(1 = best; ties share the mean rank); Friedman's test over the blocks, Iman-Davenport's F and "
              f"Nemenyi's critical difference (CD) at alpha = {ALPHA}: two methods whose average ranks differ by "
              "less than the CD are not significantly different. \"every k\" takes one block per (dataset, k) "
              "over every k run: the ks of one dataset are not independent, so its p-values are descriptive.", ""]
    if table:
        lines += md_table(["k", "blocks", "methods", "Friedman chi2", "p", "Iman-Davenport F", "p", "CD"], table)
        lines.append("")
    lines += [*ranks_text, ""]
    for figure in figures:
        lines += [figure, ""]
    return lines


def stability_section(paper: str, runs: pd.DataFrame | None, rankings: pd.DataFrame | None,
                      n_features: dict[str, int]) -> list[str]:
    """Nogueira's stability of each method's top-k over the outer splits, at the tables' k."""
    if runs is None or runs.empty:
        return []
    lines = ["### Stability of the selected features", ""]
    if rankings is None:
        return lines + ["No rankings.csv.gz in these results yet: stability is not computed.", ""]
    methods, datasets = list(method_titles(paper)), paper_datasets(paper)
    present = set(runs["dataset"])
    keep = rankings["dataset"].isin([d for d in datasets if d in present]) & rankings["selector"].isin(methods)
    ks = {d: table_ks(paper) for d in datasets}
    table = stability_table(rankings[keep], ks, n_features)
    if table.empty:
        return lines + ["No method has rankings of two or more splits here.", ""]
    titles, dtitles = method_titles(paper), dataset_titles(paper)
    lines += ["Nogueira, Sechidis & Brown's (2018) stability of each method's top-k over our outer splits, with "
              "its 95% confidence interval (1: the same k features on every split; about 0: no more alike than "
              "random k-subsets).", ""]
    for k, part in table.groupby("k", sort=True):
        header = ["dataset", *(titles[m] for m in methods if m in set(part["selector"]))]
        body = []
        for dataset in datasets:
            cells = part[part["dataset"] == dataset].set_index("selector")
            if cells.empty:
                continue
            body.append([dtitles[dataset], *(f"{cells.at[m, 'nogueira']:.2f} [{cells.at[m, 'ci_low']:.2f}, "
                                             f"{cells.at[m, 'ci_high']:.2f}]" if m in cells.index else "n/a"
                                             for m in methods if m in set(part["selector"]))])
        lines += [f"At k = {k}:", "", *md_table(header, body), ""]
    return lines
