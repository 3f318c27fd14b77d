"""Symmetrical uncertainty of each discretized feature with the class, and the SU engine of fcbf and cfs.

SU(A, B) = 2 I(A; B) / (H(A) + H(B)) (Press, Teukolsky, Vetterling & Flannery, Numerical Recipes
in C, 2nd ed. 1992, section 14.7; the correlation measure of Yu & Liu's FCBF, ICML 2003, and of
Hall's CFS, PhD thesis 1999), with plug-in entropies in bits of the discretized features. It is
information gain normalized to [0, 1]: 0 when A and B are independent, 1 when each determines the
other; SU = 0 when both A and B are constant (0 / 0: they share no information).

How the floats are made so that exact ties stay exact (``su_parts``, ``equalize_su_ties``):

- every entropy is n H = n log2 n - sum_c c log2 c over the counts c of a table, its marginals
  or its cells, summed exactly in integers (``EntropyTable``: k log2 k in fixed point): it
  depends only on the multiset of counts, so a feature whose states are relabelled (a mirror
  image, permuted classes, a transposed table) gets bit-identical entropies and SU;
- independence (n O_uv = R_u C_v in every cell, integers) gives SU = 0 exactly, and a one-to-one
  table (at most one non-zero cell in every row and column, not both constant) SU = 1 exactly;
- values within a round-off bound of one another are compared exactly (``su_exact_keys``):
  n I and n (H(A) + H(B)) are integer combinations u, v of the logarithms of primes
  (``mutual_info_exponents``), so two SU = 2 (u.L) / (v.L) are equal when (u, v) are proportional,
  or when both are the same rational number (u parallel to v). Every such group takes the float of
  its lowest-index member (a rational value takes its correctly rounded float), as
  ``infogain.equalize_exact_ties`` does for information.

The converse (different keys mean different values) holds if no polynomial relation with rational
coefficients links logarithms of primes, which Schanuel's conjecture implies; two values whose
keys differ and whose floats are within round-off of each other keep their floats.

Peers: scikit-feature's ``su_calculation`` computes the same quantity on the values as given (each
distinct value a state: no discretization of continuous data), with natural logarithms and a
different order of operations (equal to 1e-12 on the same states, tests/test_su_fcbf_cfs.py), and
divides by zero on two constant features; ITMO_FS 0.3.3's ``su_measure`` computes
(H(X) + H(Y) - H(X | Y)) / (H(X) + H(Y)) = (I + H(Y)) / (H(X) + H(Y)) (its conditional entropy
takes the class first), which is not SU.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fsbench.selectors import register
from fsbench.selectors._discretize import (
    DiscretizingSelector,
    contingency,
    mutual_info_exponents,
    near_ties,
    unique_rows,
)


class EntropyTable:
    """k log2 k for k = 0..n as integers in units of 2**-s, s the largest with n log2 n < 2**61.

    Every entropy of a fit is read from it: n H = n log2 n - sum_c c log2 c, summed in int64,
    which is exact and independent of the order of the terms (no term or sum exceeds 2**61), so
    an entropy depends only on the multiset of non-zero counts. Each term is rounded once, to
    within 2**-52 of its value (the float product rounded to an integer), as a float sum would.
    """

    def __init__(self, n: int):
        self.n = int(n)
        top = max(self.n * math.log2(max(self.n, 2)), 2.0)
        self.shift = 61 - math.ceil(math.log2(top))
        k = np.arange(self.n + 1, dtype=float)
        xlogx = np.zeros(self.n + 1)
        xlogx[2:] = k[2:] * np.log2(k[2:])
        self.units = np.rint(np.ldexp(xlogx, self.shift)).astype(np.int64)
        self.scale = math.ldexp(float(self.n), self.shift)  # n 2**s, exact

    def sums(self, counts: np.ndarray) -> np.ndarray:
        """sum_c c log2 c over the last axis of ``counts``, in units of 2**-s (int64, exact)."""
        return self.units[counts].sum(axis=-1)

    def entropies(self, nh: np.ndarray) -> np.ndarray:
        """Entropies in bits from n H in units of 2**-s (one rounding)."""
        return nh.astype(float) / self.scale


def su_parts(joint: np.ndarray, table: EntropyTable | None = None) -> tuple[np.ndarray, np.ndarray]:
    """SU of count tables (m, a, b) with a common total n, and H(A) + H(B) of each, in bits.

    n I = sum O log O - sum R log R - sum C log C + n log n and the entropies are exact integer
    sums of ``EntropyTable`` terms, each converted to a float once: a table whose states are
    relabelled or transposed gives bit-identical values. A table within round-off of independence
    is tested exactly (n O_uv = R_u C_v in every cell, integers) and then has SU = 0, one within
    round-off of SU = 1 is tested for one-to-one (at most one non-zero cell per row and column)
    and then has SU = 1; SU = 0 when both variables are constant.
    """
    joint = np.asarray(joint, dtype=np.int64)
    m, a, b = joint.shape
    if m == 0:
        return np.zeros(0), np.zeros(0)
    n = int(joint[0].sum())
    if table is None or table.n != n:
        table = EntropyTable(n)
    rows, cols = joint.sum(axis=2), joint.sum(axis=1)
    s_a, s_b = table.sums(rows), table.sums(cols)
    s_ab = table.sums(joint.reshape(m, a * b))
    total = table.units[n]
    denom = table.entropies(total - s_a) + table.entropies(total - s_b)  # commutative: transposes agree
    info = np.clip(table.entropies((s_ab + total) - (s_a + s_b)), 0.0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        su = np.where(denom > 0, 2.0 * info / np.where(denom > 0, denom, 1.0), 0.0)
    su = np.clip(su, 0.0, 1.0)
    tol = su_tolerance(denom, n, a * b)
    low = np.flatnonzero(su <= tol)
    if low.size:
        sub = joint[low]
        independent = np.all(n * sub == rows[low][:, :, None] * cols[low][:, None, :], axis=(1, 2))
        su[low[independent]] = 0.0  # also two constant variables (a one-cell table)
    high = np.flatnonzero((su >= 1.0 - tol) & (denom > 0))
    if high.size:
        nonzero = joint[high] > 0
        one_to_one = (nonzero.sum(axis=2).max(axis=1) <= 1) & (nonzero.sum(axis=1).max(axis=1) <= 1)
        su[high[one_to_one]] = 1.0
    return su, denom


def _primitive(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each integer row divided by the gcd of its entries (zero rows stay zero), and the gcds."""
    g = np.gcd.reduce(rows, axis=1)
    return rows // np.maximum(g, 1)[:, None], g


def _diagonal(counts: np.ndarray) -> np.ndarray:
    """Tables (m, a, a) with ``counts`` (m, a) on the diagonal: their mutual information is the
    entropy of the counts (n I = n log n - sum c log c when the table is diagonal)."""
    m, a = counts.shape
    out = np.zeros((m, a, a), dtype=np.int64)
    out[:, np.arange(a), np.arange(a)] = counts
    return out


def su_exact_keys(joint: np.ndarray) -> np.ndarray:
    """Integer rows (m, 1 + 2P), equal for two tables (with the same total) exactly when their SU
    are formally equal (see the module docstring).

    With u the prime exponents of n I and v those of n H(A) + n H(B): a row [0, p, q, 0 ...] says
    SU is the rational p / q (u = 0, or u parallel to v: SU = 2 g_u / g_v); otherwise the row is
    [1, u, v] divided by the gcd of its entries.
    """
    joint = np.asarray(joint, dtype=np.int64)
    m = joint.shape[0]
    if m == 0:
        return np.zeros((0, 1), dtype=np.int64)
    u, _ = mutual_info_exponents(joint)
    e_a, _ = mutual_info_exponents(_diagonal(joint.sum(axis=2)))
    e_b, _ = mutual_info_exponents(_diagonal(joint.sum(axis=1)))
    v = e_a + e_b
    width = u.shape[1]
    keys = np.zeros((m, 1 + 2 * width), dtype=np.int64)
    pu, gu = _primitive(u)
    pv, gv = _primitive(v)
    rational = (gu == 0) | (gv == 0) | np.all(pu == pv, axis=1)
    num = np.where(gv == 0, 0, 2 * gu)
    den = np.where(gv == 0, 1, gv)
    common = np.maximum(np.gcd(num, den), 1)
    keys[rational, 1] = num[rational] // common[rational]
    keys[rational, 2] = den[rational] // common[rational]
    pair, _ = _primitive(np.concatenate([u, v], axis=1)[~rational])
    keys[~rational, 0] = 1
    keys[~rational, 1:] = pair
    return keys


def su_tolerance(denom: np.ndarray, n: int, n_cells: int) -> float:
    """A bound, with room to spare, on the difference of the floats of two exactly equal SU.

    Each term k log2 k of ``EntropyTable`` is within (alpha + 2) u of its value (alpha the ulps
    of log2, u = 2**-53), its integer sums are exact and each conversion to bits rounds once, so
    each entropy is off by at most (alpha + m + 4) u log2 n (m counts summed), I by three and
    H(A) + H(B) by two such errors, and SU = 2 I / D by at
    most 8 (alpha + m + 5) u log2 n / D + 2 u; twice that, with alpha <= 8, is below the value
    returned, for the smallest D of the values compared.
    """
    positive = denom[denom > 0]
    d_min = float(positive.min()) if positive.size else 1.0
    eps = np.finfo(float).eps
    return 32 * (n_cells + 40) * eps * max(1.0, math.log2(max(n, 2))) / d_min + 8 * eps


def equalize_su_ties(su: np.ndarray, joint: np.ndarray, denom: np.ndarray) -> np.ndarray:
    """``su`` (of the tables ``joint`` (m, a, b), with H(A) + H(B) = ``denom``) with every group of
    exactly equal values made bit-identical: the float of its lowest-index member, or the correctly
    rounded rational when the value is rational. Only values within ``su_tolerance`` of a
    different value are examined."""
    su = np.array(su, dtype=float)
    joint = np.asarray(joint)
    if su.size < 2:
        return su
    n = int(joint[0].sum())
    tol = su_tolerance(denom, n, joint.shape[1] * joint.shape[2])
    near = near_ties(su, tol, equal_too=False)
    if near.size:
        keys = su_exact_keys(joint[near])
        _, group = unique_rows(keys)
        _, lowest, inverse = np.unique(group, return_index=True, return_inverse=True)
        values = su[near[lowest]][inverse]
        rational = keys[:, 0] == 0
        for i in np.flatnonzero(rational):
            values[i] = float(Fraction(int(keys[i, 1]), int(keys[i, 2])))
        su[near] = values
    return su


def su_with_class(codes: np.ndarray, n_states: int, y: np.ndarray, n_classes: int,
                  table: EntropyTable | None = None) -> tuple[np.ndarray, np.ndarray]:
    """SU(X_j, Y) of every discretized feature with exact ties equalized, and the tables
    (d, n_states, n_classes) they come from."""
    joint = contingency(codes, n_states, y, n_classes)
    su, denom = su_parts(joint, table)
    return equalize_su_ties(su, joint, denom), joint


def su_with_feature(codes: np.ndarray, n_states: int, j: int, columns: np.ndarray | None = None,
                    table: EntropyTable | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SU(X_j, X_q) for the features q in ``columns`` (default: all), the tables (q states x j
    states) and H(X_j) + H(X_q); no tie equalization (callers decide what to compare)."""
    block = codes if columns is None else codes[:, columns]
    joint = contingency(block, n_states, codes[:, j], n_states)
    su, denom = su_parts(joint, table)
    return su, joint, denom


@register("su")
class SymmetricalUncertainty(DiscretizingSelector):
    """Symmetrical uncertainty: 2 I(X_j; Y) / (H(X_j) + H(Y)) in [0, 1] on the discretized feature.

    Press et al., Numerical Recipes (1992); the relevance measure of Yu & Liu (ICML 2003). Features
    are discretized as in ``infogain`` (``discretize``: ``"mean_std"``, 3 states at mean +-
    ``std_factor`` * std, or ``"quantile"``, ``n_bins`` equal-frequency states; see
    ``fsbench.selectors._discretize``). Entropies are plug-in estimates in bits. Features with
    exactly equal SU get bit-identical scores (module docstring) and rank by index; a constant
    feature scores 0.
    """

    def _score(self, codes, n_states, y, n_classes):
        return su_with_class(codes, n_states, y, n_classes)[0]
