"""Chi-square statistic of each discretized feature against the class (Liu & Setiono 1995)."""

from __future__ import annotations

import math

import numpy as np

from fsbench.selectors import register
from fsbench.selectors._discretize import DiscretizingSelector, contingency, near_ties, unique_rows


def chi2_from_counts(counts: np.ndarray) -> np.ndarray:
    """Pearson's chi2 = sum_{u,k} (O_uk - E_uk)^2 / E_uk of tables (..., states, classes).

    E_uk = O_u. O_.k / n; empty states (E = 0) contribute nothing, as if removed from the table.
    Tables with the same chi2 get the same float, so ties are broken by index, not by round-off.

    Every table is first evaluated in floating point (``chi2_float``). Its rounding error
    depends on the cells, not only on the value: a feature and its mirror image (states
    reversed), permuted classes, or unrelated tables with the same rational chi2 can differ in
    the last bit. That error is at most (m + 5) u (chi2 + n), with m = states x classes and
    u = 2**-53 (one rounding each in E, O - E, the square and the quotient; m - 1 in the sum of
    non-negative terms). Every value within tol = 4 (m + 8) eps (max n + max chi2) of another,
    at least four times two such errors plus half an ulp, is recomputed exactly and correctly
    rounded by ``chi2_exact``: equal statistics give bit-identical floats, and the ranking is
    the ranking of the exact values (the other values are more than tol apart, so their float
    order is exact; distinct rationals within half an ulp of each other may round to one float
    and then rank by index). Exact arithmetic only on these near ties keeps the cost low;
    rounding every value to fewer digits would not do, as two values one ulp apart can fall on
    either side of a rounding boundary, and it would merge distinct statistics.
    """
    counts = np.asarray(counts)
    stat = chi2_float(counts)
    values = stat.reshape(-1)
    if values.size < 2:
        return stat
    n_cells = counts.shape[-2] * counts.shape[-1]
    tables = counts.reshape(values.size, n_cells)
    tol = 4 * (n_cells + 8) * np.finfo(float).eps * (tables.sum(axis=1).max() + values.max())
    near = near_ties(values, tol)
    if near.size:
        values = values.copy()
        values[near] = chi2_exact(counts.reshape(-1, *counts.shape[-2:])[near])
    return values.reshape(stat.shape)


def chi2_exact(counts: np.ndarray) -> np.ndarray:
    """Pearson's chi2 of tables (..., states, classes), exact and then correctly rounded.

    chi2 = n sum_{u,k} O_uk^2 / (R_u C_k) - n over the non-empty states and classes is rational.
    With L the least common multiple of the non-zero class counts C_k, A_u = sum_k O_uk^2 L / C_k
    is an integer at most L R_u (as O_uk <= C_k), and chi2 = (n num - n den) / den with
    num = sum_u A_u prod_{v != u} R_v <= s den and den = L prod_u R_u (s states; empty states
    count as R_u = 1, with A_u = 0). When s n den < 2**52 these integers are exact in int64 and
    in float64, and one IEEE division of exact operands is correctly rounded; larger tables use
    Python integers, whose true division is correctly rounded too (each distinct table once).
    Either way equal rationals give the same float, whatever their tables.
    """
    counts = np.asarray(counts, dtype=np.int64)
    shape, (s, c) = counts.shape[:-2], counts.shape[-2:]
    tables = counts.reshape(-1, s, c)
    out = np.empty(tables.shape[0])
    if out.size == 0:
        return out.reshape(shape)
    n = tables.sum(axis=(1, 2))
    rows = np.maximum(tables.sum(axis=2), 1)
    cols = np.maximum(tables.sum(axis=1), 1)
    col_first, col_of = unique_rows(cols)  # usually one group: the fit's class counts
    lcms = [math.lcm(*map(int, cols[i])) for i in col_first]
    small = np.array([lcm < 2**52 for lcm in lcms])[col_of]
    lcm_small = np.array([lcm if lcm < 2**52 else 1 for lcm in lcms], dtype=np.int64)[col_of]
    fast = small & (float(s) * n * lcm_small.astype(float) * np.prod(rows, axis=1, dtype=float) < 2**52)
    if fast.any():
        t, r, lcm = tables[fast], rows[fast], lcm_small[fast]
        a = np.einsum("tuk,tk->tu", t * t, lcm[:, None] // cols[fast])
        prod = r.prod(axis=1)
        num = (a * (prod[:, None] // r)).sum(axis=1)
        den = lcm * prod
        out[fast] = (n[fast] * (num - den)).astype(float) / den.astype(float)
    if not fast.all():
        slow = np.flatnonzero(~fast)
        first, group = unique_rows(tables[slow].reshape(slow.size, s * c))
        idx = slow[first]
        t, r = tables[idx].astype(object), rows[idx].astype(object)
        lcm = np.array(lcms, dtype=object)[col_of[idx]]
        a = (t * t * (lcm[:, None] // cols[idx].astype(object))[:, None, :]).sum(axis=2)
        prod = r.prod(axis=1)
        num = (a * (prod[:, None] // r)).sum(axis=1)
        den = lcm * prod
        nn = n[idx].astype(object)
        out[slow] = ((nn * num - nn * den) / den).astype(float)[group]
    return out.reshape(shape)


def chi2_float(counts: np.ndarray) -> np.ndarray:
    """Pearson's chi2 of tables (..., states, classes) in floating point, as in the definition."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=(-2, -1), keepdims=True)
    expected = counts.sum(axis=-1, keepdims=True) * counts.sum(axis=-2, keepdims=True) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (counts - expected) ** 2 / expected
    return np.where(expected > 0, terms, 0.0).sum(axis=(-2, -1))


@register("chi2")
class ChiSquare(DiscretizingSelector):
    """Chi-square: Pearson's statistic of the (discretized feature x class) contingency table.

    Each feature is first discretized (``discretize``: ``"mean_std"``, 3 states at mean +-
    ``std_factor`` * std, or ``"quantile"``, ``n_bins`` equal-frequency states; see
    ``fsbench.selectors._discretize``), then scored by Liu & Setiono's (1995) statistic
    chi2 = sum_u sum_k (A_uk - E_uk)^2 / E_uk, with A_uk the number of samples of class k in
    state u and E_uk = R_u C_k / n. It is computed on the states, never on the raw values,
    so it is independent of each feature's scale and sign and needs no non-negative data
    (scikit-learn's ``chi2`` instead treats raw non-negative values as frequencies: a different
    statistic; it equals this one only when fed the one-hot encoding of the states and its
    per-state values are summed). Features with equal statistics get bit-identical scores (see
    ``chi2_from_counts``), so they rank by index.
    """

    def _score(self, codes, n_states, y, n_classes):
        return chi2_from_counts(contingency(codes, n_states, y, n_classes))
