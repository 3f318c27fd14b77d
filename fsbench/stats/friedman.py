"""Friedman test over blocks, average ranks, Iman-Davenport's F and Nemenyi's critical difference.

A block is one dataset (its accuracy averaged over repetitions first) or one (dataset, k) pair;
every selector must have a score in every block. In each block the selectors are ranked, rank 1
the best (highest accuracy), tied scores sharing the average of the ranks they span. With N
blocks, K selectors and R_j the average rank of selector j (Demšar 2006, Section 3.2.2):

- Friedman:        chi2_F = 12 N / (K (K + 1)) * (sum_j R_j^2 - K (K + 1)^2 / 4),
                   chi-square with K - 1 degrees of freedom (Friedman 1937, 1940);
- Iman-Davenport:  F_F = (N - 1) chi2_F / (N (K - 1) - chi2_F),
                   F with K - 1 and (K - 1)(N - 1) degrees of freedom (Iman & Davenport 1980);
- Nemenyi:         CD = q_alpha sqrt(K (K + 1) / (6 N)), q_alpha the (1 - alpha) quantile of the
                   Studentized range of K means with infinite degrees of freedom, divided by
                   sqrt(2) (Nemenyi 1963); two selectors differ when their average ranks differ
                   by more than CD.

``tie_correction=True`` divides chi2_F by 1 - sum(t^3 - t) / (N (K^3 - K)) over the groups of
t tied scores within blocks (as ``scipy.stats.friedmanchisquare`` does); the default follows
Demšar, who does not correct. With (dataset, k) blocks the blocks of one dataset are not
independent, which the tests assume: their p-values are then descriptive.

Reference: J. Demšar, Statistical comparisons of classifiers over multiple data sets, JMLR 7
(2006) 1-30.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as st

from fsbench.stats._checks import check_alpha, score_matrix

#: the fields of :meth:`FriedmanResult.record`, in order
RECORD_FIELDS = ("statistic", "p_value", "iman_davenport", "iman_davenport_p", "n_blocks", "n_selectors",
                 "alpha", "cd")


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test of K selectors over N blocks (see the module docstring for the formulas).

    ``ranks`` is the table of ranks: one row per selector (columns ``selector``,
    ``average_rank``, ``n_blocks``), best first.
    """

    statistic: float
    p_value: float
    iman_davenport: float
    iman_davenport_p: float
    n_blocks: int
    n_selectors: int
    alpha: float
    cd: float
    ranks: pd.DataFrame = field(repr=False, compare=False)

    def record(self) -> dict[str, float | int]:
        """``statistic, p_value, iman_davenport, iman_davenport_p, n_blocks, n_selectors, alpha, cd``."""
        return {name: getattr(self, name) for name in RECORD_FIELDS}


def rank_matrix(values: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Ranks within each row (block) of an N x K array: 1 for the best, ties averaged."""
    values = np.asarray(values, dtype=float)
    return st.rankdata(-values if higher_is_better else values, method="average", axis=1)


def average_ranks(scores: pd.DataFrame | np.ndarray, selectors: Sequence[str] | None = None, *,
                  higher_is_better: bool = True) -> pd.Series:
    """Average rank of each selector over the blocks (rows of ``scores``), in column order.

    ``scores``: a DataFrame (blocks as rows, selectors as columns) or an N x K array with the
    selectors' names in ``selectors``. Rank 1 is the best (highest score unless
    ``higher_is_better`` is False); tied scores share the average of their ranks.
    """
    values, names, _ = score_matrix(scores, selectors=selectors, min_blocks=1)
    return pd.Series(rank_matrix(values, higher_is_better).mean(axis=0), index=names, name="average_rank")


def nemenyi_q(n_selectors: int, alpha: float = 0.05) -> float:
    """q_alpha of the Nemenyi test: the (1 - alpha) quantile of the Studentized range of
    ``n_selectors`` means with infinite degrees of freedom, over sqrt(2) (2.569 for K = 4 at
    alpha = 0.05, Demšar's Table 5a)."""
    check_alpha(alpha)
    if n_selectors < 2:
        raise ValueError(f"The Nemenyi test compares at least two selectors; got {n_selectors}.")
    return float(st.studentized_range.ppf(1 - alpha, n_selectors, np.inf) / math.sqrt(2))


def nemenyi_cd(n_selectors: int, n_blocks: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference CD = q_alpha sqrt(K (K + 1) / (6 N)) of average ranks."""
    if n_blocks < 1:
        raise ValueError(f"The critical difference needs at least one block; got {n_blocks}.")
    return nemenyi_q(n_selectors, alpha) * math.sqrt(n_selectors * (n_selectors + 1) / (6 * n_blocks))


def friedman_test(scores: pd.DataFrame | np.ndarray, selectors: Sequence[str] | None = None, *,
                  alpha: float = 0.05, higher_is_better: bool = True,
                  tie_correction: bool = False) -> FriedmanResult:
    """Friedman's test of K >= 2 selectors over N >= 2 blocks, with Iman-Davenport's F and the
    Nemenyi critical difference at ``alpha``.

    ``scores``: a DataFrame (blocks as rows, selectors as columns; :func:`block_matrix` builds
    one from fsbench's results) or an N x K array with the names in ``selectors``. A perfect
    agreement of every block (chi2_F = N (K - 1)) gives F_F = inf and p = 0; blocks that all
    tie every selector give chi2_F = 0 and p = 1.

    Raises ValueError for fewer than two selectors or blocks, a missing (NaN) score, or names
    that do not match the columns.
    """
    check_alpha(alpha)
    values, names, _ = score_matrix(scores, selectors=selectors, min_blocks=2)
    n, k = values.shape
    ranks = rank_matrix(values, higher_is_better)
    mean_ranks = ranks.mean(axis=0)
    chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(mean_ranks**2)) - k * (k + 1) ** 2 / 4.0)
    chi2 = max(chi2, 0.0)  # rounding below zero when every rank is the mean rank
    if tie_correction:
        ties = sum(float(np.sum(c**3 - c)) for c in (np.unique(row, return_counts=True)[1] for row in ranks))
        correction = 1.0 - ties / (n * (k**3 - k))
        chi2 = chi2 / correction if correction > 0 else 0.0
    p_value = float(st.chi2.sf(chi2, k - 1))
    denominator = n * (k - 1) - chi2
    if denominator <= 1e-12 * n * (k - 1):
        f_f, f_p = math.inf, 0.0
    else:
        f_f = (n - 1) * chi2 / denominator
        f_p = float(st.f.sf(f_f, k - 1, (k - 1) * (n - 1)))
    table = pd.DataFrame({"selector": names, "average_rank": mean_ranks, "n_blocks": n})
    table = table.sort_values("average_rank", kind="stable").reset_index(drop=True)
    return FriedmanResult(statistic=float(chi2), p_value=p_value, iman_davenport=float(f_f),
                          iman_davenport_p=f_p, n_blocks=n, n_selectors=k, alpha=float(alpha),
                          cd=nemenyi_cd(k, n, alpha), ranks=table)


def _describe(block: Any) -> str:
    """A block label for messages: 'glioma' or ('glioma', 20), numpy scalars as Python's."""
    parts = [getattr(b, "item", lambda b=b: b)() for b in (block if isinstance(block, (tuple, list)) else [block])]
    return repr(parts[0]) if len(parts) == 1 else repr(tuple(parts))


def _exact_means(reps: pd.DataFrame, keys: list[str]) -> pd.Series | None:
    """Mean of n_correct / n_test per group of ``keys``, computed in fractions and rounded once;
    None when the rows lack integral counts (then the float mean of ``accuracy`` is taken)."""
    if not {"n_correct", "n_test"} <= set(reps.columns):
        return None
    counts = reps[["n_correct", "n_test"]].to_numpy(dtype=float)
    if not (np.isfinite(counts).all() and (counts == np.round(counts)).all() and (counts[:, 1] > 0).all()):
        return None
    correct, tested = counts[:, 0].astype(np.int64), counts[:, 1].astype(np.int64)
    out = {}
    for key, index in reps.groupby(keys, sort=False).indices.items():
        total = sum((Fraction(int(correct[i]), int(tested[i])) for i in index), Fraction(0))
        out[key] = float(total / len(index))
    series = pd.Series(out, dtype=float)
    series.index = pd.MultiIndex.from_tuples(list(out), names=keys)
    return series


def block_matrix(reps: pd.DataFrame, blocks: Sequence[str] = ("dataset",), value: str = "accuracy") -> pd.DataFrame:
    """Blocks x selectors table of the mean ``value`` over repetitions, for :func:`friedman_test`.

    ``reps`` has one row per (dataset, selector, k, repeat): the accuracy of each repetition
    pooled over its folds, as :func:`fsbench.report.tables.per_repeat` returns it. ``blocks``
    is ``("dataset",)`` (the rows must then hold one k) or ``("dataset", "k")``. Rows are
    blocks in order of appearance (a MultiIndex for two keys), columns selectors.

    Accuracies given with their counts (columns ``n_correct`` and ``n_test``, integers) are
    averaged exactly, as fractions, and then rounded once: selectors whose counts give the same
    mean (equal pooled counts, 7/12 + 5/12 and 6/12 + 6/12) get the same float and tie in the
    ranks, where a float mean may differ in its last bit with the order of the terms and break
    the tie by noise. Otherwise the same numbers as a float mean (to the last bit or so).

    Raises ValueError when a column is missing, the rows hold several classifiers (choose one:
    nothing is averaged over classifiers) or several k for dataset blocks, a (block, selector,
    repeat) appears twice (folds not pooled), or the selectors of a block do not have the same
    repetitions (a missing or failed task): a mean over other splits is no fair comparison.
    """
    blocks = list(blocks)
    if not blocks or any(b not in ("dataset", "k") for b in blocks) or len(set(blocks)) != len(blocks):
        raise ValueError(f"Blocks are ('dataset',) or ('dataset', 'k'); got {tuple(blocks)}.")
    missing = {*blocks, "selector", "repeat", value} - set(reps.columns)
    if missing:
        raise ValueError(f"The rows lack the column(s) {', '.join(sorted(missing))}; pass one row per "
                         "dataset, selector, k and repeat (fsbench.report.tables.per_repeat).")
    if "classifier" in reps.columns and reps["classifier"].nunique(dropna=False) > 1:
        raise ValueError("The rows hold several classifiers; select one (nothing is averaged over classifiers).")
    if "k" not in blocks and "k" in reps.columns and reps["k"].nunique() > 1:
        raise ValueError("The rows hold several k; keep one k or use ('dataset', 'k') blocks.")
    if reps[value].isna().any():
        raise ValueError(f"The column {value!r} has missing values.")
    keys = [*blocks, "selector", "repeat"]
    duplicated = reps.duplicated(keys)
    if duplicated.any():
        first = reps.loc[duplicated, keys].iloc[0].tolist()
        raise ValueError(f"Several rows for {dict(zip(keys, first, strict=True))}: pool the folds of each "
                         "repetition first (fsbench.report.tables.per_repeat).")
    for block, rows in reps.groupby(blocks, sort=False):
        repeats = rows.groupby("selector", sort=False)["repeat"].apply(frozenset)
        if repeats.nunique() > 1:
            counts = ", ".join(f"{s}: {len(r)}" for s, r in repeats.items())
            raise ValueError(f"The selectors of block {_describe(block)} do not share their repetitions ({counts} "
                             "repetitions); compare them on the same splits.")
    means = _exact_means(reps, [*blocks, "selector"]) if value == "accuracy" else None
    if means is None:
        means = reps.groupby([*blocks, "selector"], sort=False)[value].mean()
    table = means.unstack("selector")
    selectors = list(dict.fromkeys(reps["selector"]))
    labels = reps[blocks[0]] if len(blocks) == 1 else zip(*(reps[b] for b in blocks), strict=True)
    order = list(dict.fromkeys(labels))
    table = table.reindex(index=order, columns=selectors)
    holes = table.isna()
    if holes.to_numpy().any():
        *block, selector = holes.stack().loc[lambda s: s].index[0]
        raise ValueError(f"Selector {selector!r} has no results in block {_describe(block)}; every selector needs a "
                         "score in every block (drop the block or the selector).")
    table.columns.name = "selector"
    return table
