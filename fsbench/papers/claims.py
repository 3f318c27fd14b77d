"""The papers' headline claims judged on our results, and the variants' differences.

A claim ("the proposed method is the most accurate") is checked per dataset of the paper and k
of its tables: is the method's mean accuracy over our repetitions the best, and is its margin
over the runner-up beyond the noise of the splits? The splits overlap (every training part
shares most samples with every other), so the differences of two methods over the splits are
correlated and the plain paired t-test is anti-conservative (Nadeau & Bengio 2003; measured in
benchmarks/stats_false_positives.py). The verdict uses the corrected resampled t-test over the
splits (:func:`fsbench.stats.corrected_ttest`): every outer split is one (each fold of a
repeated k-fold protocol, Bouckaert & Frank's correction; each repetition of a hold-out one),
with rho = 1/k for k folds per repetition, else n_test / (n_test + n_train) of the rows. The
plain paired t-test over repetitions (the verdict before the corrected test, commit 94660ea) and
the Wilcoxon signed-rank test over repetitions are shown beside it; a margin "beyond noise" is
positive with a corrected p-value below :data:`ALPHA`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from fsbench.papers import NOT_COMPARED, PROPOSED, TABLES, dataset_titles, method_titles, paper_datasets, table_ks
from fsbench.report.markdown import md_table, num, pvalue
from fsbench.report.statistics import split_fractions
from fsbench.stats import corrected_ttest, wilcoxon_test
from fsbench.storage.runs import ROW_KEY

ALPHA = 0.05


# ----------------------------------------------------------------------------- tests
def test_fraction(runs: pd.DataFrame) -> float:
    """rho of one dataset's rows, as ``fsbench stats`` takes it
    (:func:`fsbench.report.statistics.split_fractions`): 1/k for k folds per repetition
    (Bouckaert & Frank: n_test / n_train = 1/(k - 1)), else the rows' mean n_test / (n_test +
    n_train) (Nadeau & Bengio)."""
    fractions = split_fractions(runs, {})
    if len(fractions) != 1:
        raise ValueError(f"test_fraction takes the rows of one dataset; got {len(fractions)}.")
    return next(iter(fractions.values()))[1]


def split_accuracies(runs: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (%) per outer split, one column per selector, rows indexed by (repeat, fold);
    only the splits every selector has."""
    table = runs.assign(accuracy=100.0 * runs["n_correct"] / runs["n_test"])
    return table.pivot_table(index=["repeat", "fold"], columns="selector", values="accuracy").dropna()


def repeat_accuracies(runs: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (%) per repetition pooled over its folds, one column per selector."""
    grouped = runs.groupby(["selector", "repeat"])[["n_correct", "n_test"]].sum()
    return (100.0 * grouped["n_correct"] / grouped["n_test"]).unstack("selector")


def plain_and_wilcoxon(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sided plain paired t-test and Wilcoxon signed-rank p-values of a - b (nan under 2 pairs),
    by :mod:`fsbench.stats` as ``fsbench stats`` computes them (zero differences split between
    the signs)."""
    if a.size < 2:
        return float("nan"), float("nan")
    return corrected_ttest(a / 100.0, b / 100.0, 0.0).p_value, wilcoxon_test(a / 100.0, b / 100.0).p_value


def corrected_pvalue(a: np.ndarray, b: np.ndarray, rho: float) -> float:
    """The corrected resampled t-test's two-sided p-value of a - b over splits (nan under 2)."""
    if a.size < 2:
        return float("nan")
    # fsbench.stats takes accuracies as fractions; the p-value does not depend on the unit
    return corrected_ttest(a / 100.0, b / 100.0, rho).p_value


# ----------------------------------------------------------------------------- the claims
def _printed_rows(paper: str, k: int) -> dict[str, dict[str, float]]:
    """dataset -> method -> printed value, for every printed row at k."""
    out: dict[str, dict[str, float]] = {}
    for table in TABLES[paper]:
        for cell in table.cells:
            if cell.k == k:
                out.setdefault(cell.dataset, {})[cell.method] = cell.value
    return out


def competitors(paper: str, method: str) -> list[str]:
    """The methods of the paper's tables a proposed method is held against."""
    excluded = {method, *NOT_COMPARED.get(method, ())}
    methods = []
    for table in TABLES[paper]:
        methods += [m for m, _ in table.column_titles if m not in excluded and m not in methods]
    return methods


def headline_claims(paper: str, runs: pd.DataFrame | None) -> pd.DataFrame:
    """Per proposed method, dataset of the paper and k of its tables: best in ours and as printed.

    Ours: the mean accuracy over our repetitions; the margin is the mean paired difference to
    the runner-up (the best other method); ``t_pvalue`` is the corrected resampled t-test over
    the splits, ``plain_t_pvalue`` the plain paired t-test and ``wilcoxon_pvalue`` the Wilcoxon
    signed-rank test over the repetitions. ``significant``: a positive margin with corrected
    p < 0.05; ``significant_plain``: the same with the plain test (the verdict before the corrected test).
    Printed: whether the method's printed value is the largest of the printed row.
    """
    rows = []
    datasets = paper_datasets(paper)
    for method in PROPOSED[paper]:
        others = competitors(paper, method)
        for k in table_ks(paper):
            printed = _printed_rows(paper, k)
            for dataset in datasets:
                row: dict[str, Any] = {"method": method, "dataset": dataset, "k": k, "has_results": False}
                values = printed.get(dataset, {})
                if method in values:
                    rival = max((v for m, v in values.items() if m in others), default=float("nan"))
                    row.update(printed=values[method], printed_margin=values[method] - rival,
                               printed_best=bool(values[method] >= rival))
                if runs is not None and len(runs):
                    mine = runs[(runs["dataset"] == dataset) & (runs["k"] == k)]
                    row.update(_measured(mine, method, others))
                rows.append(row)
    return pd.DataFrame(rows)


def _measured(runs: pd.DataFrame, method: str, others: list[str]) -> dict[str, Any]:
    if runs.empty:
        return {}
    acc = repeat_accuracies(runs)
    present = [m for m in others if m in acc.columns]
    if method not in acc.columns or not present:
        return {}
    acc = acc[[method, *present]].dropna()
    if acc.empty:
        return {}
    means = acc.mean()
    best = means.idxmax()  # ties go to the proposed method (first column)
    runner_up = means.drop(method).idxmax()
    plain_p, w_p = plain_and_wilcoxon(acc[method].to_numpy(), acc[runner_up].to_numpy())
    t_p, n_splits = float("nan"), 0
    if {"fold", "n_train"} <= set(runs.columns):
        pair = runs[runs["selector"].isin([method, runner_up])]
        splits = split_accuracies(pair)
        n_splits = len(splits)
        t_p = corrected_pvalue(splits[method].to_numpy(), splits[runner_up].to_numpy(), test_fraction(pair))
    margin = float((acc[method] - acc[runner_up]).mean())
    return {"has_results": True, "best": best, "mean": float(means[method]), "runner_up": runner_up,
            "runner_up_mean": float(means[runner_up]), "margin": margin, "t_pvalue": t_p,
            "plain_t_pvalue": plain_p, "wilcoxon_pvalue": w_p, "n_repeats": len(acc), "n_splits": n_splits,
            "is_best": bool(best == method), "significant": bool(margin > 0 and t_p < ALPHA),
            "significant_plain": bool(margin > 0 and plain_p < ALPHA)}


def claim_sentences(paper: str, claims: pd.DataFrame) -> list[str]:
    """One sentence per proposed method and k: the claim as measured, then as printed."""
    sentences = []
    names = method_titles(paper)
    for method in PROPOSED[paper]:
        for k in sorted(claims.loc[claims["method"] == method, "k"].unique()):
            sentences.append(_claim_sentence(names.get(method, method), int(k),
                                             claims[(claims["method"] == method) & (claims["k"] == k)]))
    return sentences


def _claim_sentence(name: str, k: int, part: pd.DataFrame) -> str:
    ours = part[part["has_results"]]
    n = len(ours)
    printed_all = int(part["printed_best"].sum())
    if not n:
        return (f"{name} at k = {k}: no dataset of the paper has results yet; as printed, it is the best on "
                f"{printed_all} of {len(part)} datasets.")
    best, significant = int(ours["is_best"].sum()), int(ours["significant"].sum())
    text = (f"{name} has the best accuracy on {best} of {n} datasets at k = {k}; its margin over the runner-up is "
            f"significant (corrected resampled t-test p < {ALPHA}) on {significant} (plain paired t-test: "
            f"{int(ours['significant_plain'].sum())}). As printed, it is the best on "
            f"{int(ours['printed_best'].sum())} of the same {n}")
    return text + (f" (on {printed_all} of all {len(part)} printed rows)." if n != len(part) else ".")


def verdict_changes(claims: pd.DataFrame) -> pd.DataFrame:
    """The (method, dataset, k) whose "beyond noise" verdict differs between the plain and the
    corrected test."""
    if "significant" not in claims:
        return claims.iloc[0:0]
    ours = claims[claims["has_results"]]
    return ours[ours["significant"] != ours["significant_plain"]]


def claims_section(paper: str, runs: pd.DataFrame | None) -> list[str]:
    """REPORT.md's "Headline claim" section of a paper."""
    claims = headline_claims(paper, runs)
    titles, dtitles = method_titles(paper), dataset_titles(paper)
    lines = ["### Headline claim", "",
             "Beyond noise: a positive margin over the runner-up with p < 0.05 under the corrected resampled "
             "t-test over the outer splits (Nadeau & Bengio; Bouckaert & Frank for repeated k-fold), which "
             "allows for the splits' overlap. The plain paired t-test over repetitions, the verdict before "
             "the corrected resampled t-test was adopted, and the Wilcoxon signed-rank test over repetitions "
             "(zero differences split between the signs, as fsbench stats computes it) are shown beside it.", ""]
    for method in PROPOSED[paper]:
        against = ", ".join(titles[m] for m in competitors(paper, method))
        lines += [f"{titles[method]} against {against}:", ""]
        part = claims[claims["method"] == method]
        header = ["dataset", "k", "our best", f"{titles[method]} (ours)", "runner-up (ours)", "margin",
                  "corrected t p", "Wilcoxon p", "plain t p", "splits", "best?", "beyond noise?",
                  f"{titles[method]} printed", "printed margin", "best as printed?"]
        rows = []
        for r in part.itertuples():
            if not r.has_results:
                continue
            rows.append([dtitles[r.dataset], r.k, titles.get(r.best, r.best), num(r.mean),
                         f"{titles.get(r.runner_up, r.runner_up)} {num(r.runner_up_mean)}",
                         num(r.margin, signed=True), pvalue(r.t_pvalue), pvalue(r.wilcoxon_pvalue),
                         pvalue(r.plain_t_pvalue), int(r.n_splits), "yes" if r.is_best else "no",
                         "yes" if r.significant else "no", num(getattr(r, "printed", float("nan"))),
                         num(getattr(r, "printed_margin", float("nan")), signed=True),
                         "yes" if getattr(r, "printed_best", False) else "no"])
        if rows:
            lines += md_table(header, rows) + [""]
    lines += [*(f"- {sentence}" for sentence in claim_sentences(paper, claims))]
    changed = verdict_changes(claims)
    if len(changed):
        lines.append("- Verdicts the correction changed (beyond noise under the plain test, not under the corrected "
                     "one, or the reverse): " + "; ".join(
                         f"{titles[r.method]} on {dtitles[r.dataset]} at k = {r.k}: "
                         f"{'yes' if r.significant_plain else 'no'} -> {'yes' if r.significant else 'no'} "
                         f"(plain p {pvalue(r.plain_t_pvalue)}, corrected p {pvalue(r.t_pvalue)})"
                         for r in changed.itertuples()) + ".")
    elif (claims.get("has_results", pd.Series(dtype=bool))).any():
        lines.append("- The correction changed no verdict.")
    return lines + [""]


# ----------------------------------------------------------------------------- variants
def compare_variant(main: pd.DataFrame, variant: pd.DataFrame, ks: Iterable[int]) -> pd.DataFrame:
    """Main vs variant on the same (dataset, repeat, fold, selector, k) rows, per dataset x selector x k.

    Accuracy per repetition is pooled over the shared folds (as :func:`per_repeat` does); the
    difference is variant - main in points, tested by the corrected resampled t-test over the
    shared splits (both runs use the same splits, so their differences are correlated as two
    selectors' are).
    """
    ks = list(ks)
    keys = main[main["k"].isin(ks)][ROW_KEY].merge(variant[variant["k"].isin(ks)][ROW_KEY], on=ROW_KEY)
    columns = ["dataset", "selector", "k", "main", "variant", "diff", "t_pvalue", "n_repeats"]
    if keys.empty:
        return pd.DataFrame(columns=columns)
    shared_main, shared_variant = main.merge(keys, on=ROW_KEY), variant.merge(keys, on=ROW_KEY)

    def pooled(shared: pd.DataFrame) -> pd.DataFrame:
        grouped = shared.groupby(["dataset", "selector", "k", "repeat"])[["n_correct", "n_test"]].sum()
        return (100.0 * grouped["n_correct"] / grouped["n_test"]).rename("accuracy").reset_index()

    both = pooled(shared_main).merge(pooled(shared_variant), on=["dataset", "selector", "k", "repeat"],
                                     suffixes=("_main", "_var"))
    per_split = shared_main.merge(shared_variant, on=ROW_KEY, suffixes=("_main", "_var"))
    rows = []
    for (dataset, selector, k), part in both.groupby(["dataset", "selector", "k"], sort=True):
        a, b = part["accuracy_var"].to_numpy(), part["accuracy_main"].to_numpy()
        splits = per_split[(per_split["dataset"] == dataset) & (per_split["selector"] == selector)
                           & (per_split["k"] == k)]
        acc_var = 100.0 * splits["n_correct_var"] / splits["n_test_var"]
        acc_main = 100.0 * splits["n_correct_main"] / splits["n_test_main"]
        rho = test_fraction(shared_main[(shared_main["dataset"] == dataset) & (shared_main["selector"] == selector)
                                        & (shared_main["k"] == k)])
        t_p = corrected_pvalue(acc_var.to_numpy(), acc_main.to_numpy(), rho)
        rows.append({"dataset": dataset, "selector": selector, "k": int(k), "main": float(b.mean()),
                     "variant": float(a.mean()), "diff": float((a - b).mean()), "t_pvalue": t_p,
                     "n_repeats": len(part)})
    return pd.DataFrame(rows, columns=columns)
