"""Pairwise comparisons: per dataset over its splits, and across datasets with Holm's correction.

Per dataset (and k), two selectors a and b scored on the same J splits give differences
x_j = acc_a(j) - acc_b(j), with mean m and sample variance s^2 (ddof = 1). The splits overlap
(their training sets share most samples), so the x_j are correlated and the plain paired
t-test, Var(m) = s^2 / J, understates the variance. With rho = n_test / n_total:

- corrected resampled t-test (Nadeau & Bengio 2003, for J random hold-out splits):
      t = m / sqrt((1/J + n_test/n_train) s^2),  n_test/n_train = rho / (1 - rho),
  Student t with J - 1 degrees of freedom, two-sided p-value. For r repetitions of k-fold
  cross-validation (Bouckaert & Frank 2004) the same formula over the J = r k folds, with
  n_test/n_train = 1/(k - 1), that is rho = 1/k. ``test_fraction = 0`` gives the plain
  paired t-test;
- Wilcoxon signed-rank test of the x_j (``scipy.stats.wilcoxon``; zero differences split
  between the signs, ``zero_method="zsplit"``, as Demšar 2006 recommends). It ignores the
  correlation of overlapping splits: read its p-value as descriptive;
- Bayesian correlated t-test (Corani & Benavoli 2015): the posterior of the mean difference
  is a Student t with J - 1 degrees of freedom, location m and scale
  sqrt((1/J + rho/(1 - rho)) s^2); it gives P(a better) = P(mu > rope),
  P(equivalent) = P(-rope <= mu <= rope) and P(b better) = P(mu < -rope), the region of
  practical equivalence (rope) 1 accuracy point (0.01) by default.

Across N datasets, the mean accuracy of each dataset pairs the selectors; every pair is
compared by the Wilcoxon signed-rank test over the datasets (Demšar 2006, Section 3.1.3) and
the p-values of the K (K - 1) / 2 pairs adjusted by Holm's step-down method (Holm 1979):
with p_(1) <= ... <= p_(m), adjusted p_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).

Differences are rounded to 12 decimals before ranking, so accuracies that differ by equal
amounts (0.75 - 0.70 and 0.80 - 0.75) tie as they should, whatever the floating-point noise.

References: C. Nadeau, Y. Bengio, Inference for the generalization error, Machine Learning 52
(2003) 239-281; R. Bouckaert, E. Frank, Evaluating the replicability of significance tests for
comparing learning algorithms, PAKDD 2004; G. Corani, A. Benavoli, A Bayesian approach for
comparing cross-validated algorithms on multiple data sets, Machine Learning 100 (2015)
285-304; S. Holm, A simple sequentially rejective multiple test procedure, Scand. J. Statist.
6 (1979) 65-70; J. Demšar, JMLR 7 (2006) 1-30.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as st

from fsbench.stats._checks import check_alpha, check_fraction, paired, score_matrix

#: default region of practical equivalence: 1 accuracy point, accuracies being fractions
ROPE = 0.01
DECIMALS = 12


@dataclass(frozen=True)
class TTestResult:
    """Corrected resampled t-test of a - b: mean difference, t, degrees of freedom, two-sided
    p-value and the variance factor 1/J + n_test/n_train."""

    mean_diff: float
    t: float
    dof: int
    p_value: float
    variance_factor: float


@dataclass(frozen=True)
class BayesianResult:
    """Bayesian correlated t-test of a - b: P(a better), P(practically equivalent), P(b better),
    and the posterior Student t (location, scale, degrees of freedom)."""

    p_better: float
    p_equivalent: float
    p_worse: float
    mean_diff: float
    scale: float
    dof: int
    rope: float


@dataclass(frozen=True)
class WilcoxonResult:
    """Wilcoxon signed-rank test of a - b: scipy's statistic (min(R+, R-), two-sided) and p-value."""

    statistic: float
    p_value: float


def _differences(a: Any, b: Any) -> np.ndarray:
    a, b = paired(a, b, "splits")
    return np.round(a - b, DECIMALS)


def corrected_ttest(a: Any, b: Any, test_fraction: float) -> TTestResult:
    """Nadeau-Bengio corrected resampled t-test of paired per-split accuracies ``a`` and ``b``.

    t = mean(x) / sqrt((1/J + rho/(1 - rho)) var(x)), x = a - b over J splits, var with ddof 1,
    rho = ``test_fraction`` = n_test / n_total (hold-out: the test share; r x k-fold CV: 1/k,
    Bouckaert & Frank's correction); Student t with J - 1 degrees of freedom, two-sided.
    ``test_fraction = 0`` is the plain paired t-test. A zero variance gives p = 1 when the
    mean difference is 0, else t = +-inf and p = 0.
    """
    x = _differences(a, b)
    rho = check_fraction(test_fraction)
    j = x.size
    factor = 1.0 / j + rho / (1.0 - rho)
    mean = float(x.mean())
    var = float(x.var(ddof=1))
    if var == 0.0:
        t = 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
        p = 1.0 if mean == 0.0 else 0.0
    else:
        t = mean / math.sqrt(factor * var)
        p = float(2.0 * st.t.sf(abs(t), j - 1))
    return TTestResult(mean_diff=mean, t=t, dof=j - 1, p_value=min(p, 1.0), variance_factor=factor)


def bayesian_correlated_ttest(a: Any, b: Any, test_fraction: float, rope: float = ROPE) -> BayesianResult:
    """Corani & Benavoli's Bayesian correlated t-test of paired per-split accuracies.

    Posterior of the mean difference mu: Student t, J - 1 degrees of freedom, location
    mean(x), scale sqrt((1/J + rho/(1 - rho)) var(x)), x = a - b, rho = ``test_fraction`` =
    n_test / n_total. Returns P(mu > rope), P(-rope <= mu <= rope), P(mu < -rope). A zero
    variance puts the posterior at mean(x).
    """
    x = _differences(a, b)
    rho = check_fraction(test_fraction)
    if not (isinstance(rope, (int, float)) and math.isfinite(rope) and rope >= 0):
        raise ValueError(f"rope must be a finite number >= 0; got {rope!r}.")
    j = x.size
    mean = float(x.mean())
    scale = math.sqrt((1.0 / j + rho / (1.0 - rho)) * float(x.var(ddof=1)))
    if scale == 0.0:
        better, worse = float(mean > rope), float(mean < -rope)
    else:
        posterior = st.t(j - 1, loc=mean, scale=scale)
        better, worse = float(posterior.sf(rope)), float(posterior.cdf(-rope))
    return BayesianResult(p_better=better, p_equivalent=max(0.0, 1.0 - better - worse), p_worse=worse,
                          mean_diff=mean, scale=scale, dof=j - 1, rope=float(rope))


def _signed_rank_permutation_p(x: np.ndarray, zero_method: str) -> tuple[float, float]:
    """(min(R+, R-), two-sided p) of the exact sign-flip distribution of R+ given the ranks.

    Under the null every nonzero difference takes either sign with probability 1/2; R+ is the
    sum of the ranks of |x| over the positive differences, plus half the ranks of the zeros
    (zsplit; pratt: none of them). Ranks are multiples of 1/2, so twice R+ is an integer and
    its distribution is the convolution of the 2^n sign choices, built rank by rank. This is
    the distribution scipy.stats.wilcoxon enumerates by permutation_test for 13 or fewer
    differences with ties or zeros, at a thousandth of the time.
    """
    if zero_method == "wilcox":
        x = x[x != 0]
    ranks = st.rankdata(np.abs(x))
    zero_share = 0.5 if zero_method == "zsplit" else 0.0
    fixed = zero_share * float(ranks[x == 0].sum())
    r_plus = float(ranks[x > 0].sum()) + fixed
    r_minus = float(ranks[x < 0].sum()) + fixed
    free = np.rint(2 * ranks[x != 0]).astype(int)
    counts = np.zeros(int(free.sum()) + 1)
    counts[0] = 1.0
    for r in free:
        shifted = np.zeros_like(counts)
        shifted[r:] = counts[:-r]
        counts = counts + shifted
    probability = counts / counts.sum()
    doubled = 2 * fixed + np.arange(counts.size)  # twice R+ for each outcome
    center = 2 * fixed + free.sum() / 2.0
    deviation = abs(2 * r_plus - center)
    p = float(probability[np.abs(doubled - center) >= deviation - 1e-9].sum())
    return min(r_plus, r_minus), min(p, 1.0)


def wilcoxon_test(a: Any, b: Any, zero_method: str = "zsplit") -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test of a - b, as ``scipy.stats.wilcoxon`` (method
    "auto") computes it; every difference zero gives p = 1.

    scipy takes the exact null distribution without ties or zeros, a sign-flip permutation
    test for 13 or fewer differences with ties or zeros, and the normal approximation
    otherwise. The permutation case (discrete accuracies over 10 splits tie often) is
    computed here by convolution (:func:`_signed_rank_permutation_p`): the same p-value,
    about 65 ms faster a call.
    """
    if zero_method not in ("zsplit", "wilcox", "pratt"):
        raise ValueError(f"zero_method must be zsplit, wilcox or pratt; got {zero_method!r}.")
    x = _differences(a, b)
    if not np.any(x):
        n = x.size
        return WilcoxonResult(statistic=n * (n + 1) / 4.0 if zero_method == "zsplit" else 0.0, p_value=1.0)
    used = x[x != 0] if zero_method == "wilcox" else x
    has_ties = np.unique(np.abs(used)).size < used.size
    if (has_ties or np.any(x == 0)) and x.size <= 13:
        statistic, p = _signed_rank_permutation_p(x, zero_method)
        return WilcoxonResult(statistic=statistic, p_value=p)
    res = st.wilcoxon(x, zero_method=zero_method)
    return WilcoxonResult(statistic=float(res.statistic), p_value=float(res.pvalue))


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the input order.

    Sorted ascending, p_(i) becomes max_{j <= i} min(1, (m - j + 1) p_(j)); a hypothesis is
    rejected at level alpha when its adjusted p-value is below alpha.
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p-values must be a 1-D sequence; got shape {p.shape}.")
    if p.size and not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        raise ValueError("p-values must lie in [0, 1].")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted


def wilcoxon_holm(scores: pd.DataFrame | np.ndarray, selectors: Sequence[str] | None = None, *,
                  alpha: float = 0.05, zero_method: str = "zsplit") -> pd.DataFrame:
    """Every pair of selectors compared over the datasets, Holm-adjusted over the pairs.

    ``scores``: datasets x selectors (each dataset's mean accuracy; :func:`block_matrix`). One
    row per pair (a before b in column order): ``selector_a, selector_b, n_blocks, mean_diff``
    (mean over datasets of a - b), ``statistic, p_value`` (Wilcoxon), ``p_holm`` and
    ``significant`` (p_holm < alpha).
    """
    check_alpha(alpha)
    values, names, _ = score_matrix(scores, selectors=selectors, min_blocks=2)
    rows = []
    for i, j in itertools.combinations(range(len(names)), 2):
        res = wilcoxon_test(values[:, i], values[:, j], zero_method)
        rows.append({"selector_a": names[i], "selector_b": names[j], "n_blocks": values.shape[0],
                     "mean_diff": float(np.mean(values[:, i] - values[:, j])),
                     "statistic": res.statistic, "p_value": res.p_value})
    table = pd.DataFrame(rows)
    table["p_holm"] = holm(table["p_value"].to_numpy())
    table["significant"] = table["p_holm"] < alpha
    return table


def pvalue_matrix(pairs: pd.DataFrame, column: str = "p_holm") -> pd.DataFrame:
    """Symmetric selectors x selectors matrix of ``column`` from a pairs table (diagonal 1),
    the form scikit-posthocs' ``critical_difference_diagram`` takes."""
    names = list(dict.fromkeys([*pairs["selector_a"], *pairs["selector_b"]]))
    matrix = pd.DataFrame(1.0, index=names, columns=names)
    for a, b, p in zip(pairs["selector_a"], pairs["selector_b"], pairs[column], strict=True):
        matrix.at[a, b] = matrix.at[b, a] = float(p)
    return matrix


def _split_fractions(rows: pd.DataFrame, test_fraction: float | Mapping[str, float] | None,
                     dataset: str) -> float:
    if isinstance(test_fraction, Mapping):
        if dataset not in test_fraction:
            raise ValueError(f"test_fraction names no fraction for dataset {dataset!r}.")
        return check_fraction(test_fraction[dataset])
    if test_fraction is not None:
        return check_fraction(test_fraction)
    if not {"n_test", "n_train"} <= set(rows.columns):
        raise ValueError("Give test_fraction (n_test / n_total), or rows with n_test and n_train columns.")
    return check_fraction(float((rows["n_test"] / (rows["n_test"] + rows["n_train"])).mean()))


def single_split_groups(runs: pd.DataFrame) -> list[tuple[str, int]]:
    """The (dataset, k) of ``runs`` (rows as :func:`pairwise_splits` takes them) whose selectors
    have one split only: the per-dataset tests, which pair splits, leave them out."""
    split = ["repeat", "fold"] if "fold" in runs.columns else ["repeat"]
    counts = runs.drop_duplicates(["dataset", "k", *split]).groupby(["dataset", "k"], sort=False).size()
    return [(str(d), int(k)) for (d, k), n in counts.items() if n < 2]


def pairwise_splits(runs: pd.DataFrame, test_fraction: float | Mapping[str, float] | None = None, *,
                    rope: float = ROPE, zero_method: str = "zsplit", value: str = "accuracy") -> pd.DataFrame:
    """Every pair of selectors compared on every dataset and k over their common splits.

    ``runs``: one row per split and selector (fsbench's ``runs.csv.gz`` rows: columns
    ``dataset, selector, k, repeat, accuracy``, with ``fold`` for k-fold protocols, where each
    fold is a split, and ``classifier`` when recorded: never pooled, compared per classifier).
    ``test_fraction`` is rho = n_test / n_total: one number, one per dataset, or None to take
    the mean of n_test / (n_test + n_train) over each dataset's rows. ``value``: the column
    compared (default ``accuracy``; another metric's per-split values).

    One row per (classifier,) dataset, k and pair (a before b in order of appearance):
    ``n_splits, test_fraction, mean_diff`` (a - b), ``t, t_p_value`` (corrected resampled
    t-test), ``wilcoxon_p``, ``p_a_better, p_equivalent, p_b_better`` (Bayesian correlated
    t-test, ``rope``). A dataset and k with a single split has nothing to pair and gives no
    row (:func:`single_split_groups` names them). Raises ValueError when a column is missing,
    a (split, selector) appears twice, or two selectors of one dataset and k do not share their
    splits.
    """
    missing = {"dataset", "selector", "k", "repeat", value} - set(runs.columns)
    if missing:
        raise ValueError(f"The rows lack the column(s) {', '.join(sorted(missing))}.")
    if runs["selector"].nunique() < 2:
        raise ValueError(f"A comparison needs at least two selectors; got {runs['selector'].nunique()}.")
    if not np.isfinite(runs[value].to_numpy(dtype=float)).all():
        raise ValueError(f"The {value} column has missing or infinite values.")
    split = ["repeat", "fold"] if "fold" in runs.columns else ["repeat"]
    groups = ["classifier", "dataset", "k"] if "classifier" in runs.columns else ["dataset", "k"]
    duplicated = runs.duplicated([*groups, *split, "selector"])
    if duplicated.any():
        first = runs.loc[duplicated, [*groups, *split, "selector"]].iloc[0].to_dict()
        raise ValueError(f"Several rows for {first}: one row per split and selector is expected.")
    out = []
    for key, rows in runs.groupby(groups, sort=False, dropna=False):
        key = dict(zip(groups, key, strict=True))
        rho = _split_fractions(rows, test_fraction, str(key["dataset"]))
        selectors = list(dict.fromkeys(rows["selector"]))
        table = rows.set_index([*split, "selector"])[value].unstack("selector").reindex(columns=selectors)
        incomplete = table.columns[table.isna().any()].tolist()
        if incomplete:
            raise ValueError(f"On dataset {key['dataset']!r}, k = {key['k']}, selector {incomplete[0]!r} lacks "
                             f"{int(table[incomplete[0]].isna().sum())} of the {len(table)} splits the others "
                             "have; compare selectors on the same splits.")
        if len(table) < 2:
            continue  # one split: no variance, no test (the across-dataset comparison still pairs them)
        for a, b in itertools.combinations(selectors, 2):
            xa, xb = table[a].to_numpy(), table[b].to_numpy()
            t = corrected_ttest(xa, xb, rho)
            bayes = bayesian_correlated_ttest(xa, xb, rho, rope)
            out.append({**key, "selector_a": a, "selector_b": b, "n_splits": len(xa), "test_fraction": rho,
                        "mean_diff": t.mean_diff, "t": t.t, "t_p_value": t.p_value,
                        "wilcoxon_p": wilcoxon_test(xa, xb, zero_method).p_value,
                        "p_a_better": bayes.p_better, "p_equivalent": bayes.p_equivalent,
                        "p_b_better": bayes.p_worse})
    columns = [*groups, "selector_a", "selector_b", "n_splits", "test_fraction", "mean_diff", "t", "t_p_value",
               "wilcoxon_p", "p_a_better", "p_equivalent", "p_b_better"]
    return pd.DataFrame(out, columns=columns)
