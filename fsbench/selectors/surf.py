"""SURF, SURF*, MultiSURF and MultiSURF*: Relief whose neighbours lie within distance thresholds.

Sources: SURF, Greene, Penrod, Kiralis & Moore (BioData Mining 2, 2009); SURF*, Greene,
Himmelstein, Kiralis & Moore (EvoBIO 2010, LNCS 6023); MultiSURF*, Granizo-Mackenzie & Moore
(EvoBIO 2013, LNCS 7833); MultiSURF, Urbanowicz, Olson, Schmitt, Meeker & Moore, "Benchmarking
relief-based feature selection methods for bioinformatics data mining" (J. Biomed. Inform. 85,
2018). The four in one notation: Urbanowicz, Meeker, La Cava, Olson & Moore, "Relief-based
feature selection: introduction and review" (J. Biomed. Inform. 85, 2018).

Every instance R_i (i = 1..n) is a target. With diff(A, i, j) = |x_iA - x_jA| / (max A - min A)
for a numeric feature and [x_iA != x_jA] for a nominal one (ReliefF's diff), the distance is
d(i, j) = sum_A diff(A, i, j), Manhattan distance on range-normalized features. The
neighbours of R_i are the other instances with d(i, j) < T_i ("near") and, for the * variants,
those with d(i, j) > T'_i ("far"); a distance exactly on a threshold is neither. Then

    W_A = 1/n sum_i [ S_i(A; near) - S_i(A; far) ]       (the far term only for SURF*, MultiSURF*)
    S_i(A; N) = - 1/|H| sum_{j in H} diff(A, i, j)
                + sum_{C in K} w_i(C) 1/|M(C)| sum_{j in M(C)} diff(A, i, j)

where H are the hits (same class as R_i) in the set N, M(C) its misses of class C, K the miss
classes with at least one member in N, and an empty H or K contributes nothing. Far hits thus
raise a feature's weight and far misses lower it (SURF*'s "opposite" scoring). The miss weights
are ReliefF's (Kononenko 1994) over the classes present: ``miss_weighting="prior"`` gives
w_i(C) = P(C) / sum_{C' in K} P(C') with P the class frequencies (P(C) / (1 - P(class R_i))
when every class is present), ``"uniform"`` gives 1/|K|; both are 1 for two classes.

Thresholds:

- SURF, SURF*: T_i = T'_i = T, the mean of d(i, j) over the n(n - 1) ordered pairs i != j.
- MultiSURF, MultiSURF*: mu_i and sigma_i, the mean and the (population) standard deviation of
  the n - 1 distances d(i, j), j != i; T_i = mu_i - sigma_i / 2, T'_i = mu_i + sigma_i / 2.

Choices this module makes and states: strict inequalities on both sides and the population
standard deviation (both as ReBATE), and the prior weights renormalized over the miss classes
present in the set (so that the misses as a whole weigh as much as the hits, as with two
classes). A constant feature never differs: weight 0.

Differences from skrebate 0.8.4 (the ReBATE implementation, ``n_jobs=1``):

- multi-class miss weighting: skrebate weights the summed diffs of class C's misses by
  (c - 1) m_C / m^2 (m_C of class C among the m misses of the set; c classes), i.e. class C's
  mean diff by (c - 1)(m_C / m)^2 (neither the priors nor a sum of 1); equal for two classes;
- SURF and SURF* thresholds: skrebate averages the whole n x n distance matrix, its n zero
  self-distances included, i.e. T (n - 1) / n;
- MultiSURF* far pairs: skrebate scores them with 1 - diff and the near signs (a far hit
  lowers the weight by 1 - diff), which is ours plus a per-instance amount that is the same for
  every feature: equal rankings, scores shifted by one constant;
- mixed nominal and numeric features: skrebate scores a numeric feature's diff as 1 when the
  raw difference exceeds the feature's standard deviation (a ramp), and counts a nominal
  mismatch in the distance as d / d_nominal instead of 1; with only nominal features its
  distance is the mismatch fraction (a constant multiple of ours: the same neighbours);
- skrebate treats more than 10 classes as a continuous endpoint, takes features with at most
  10 distinct values as nominal by default (here ``discrete_threshold=0``: all numeric), and
  divides by zero on a constant feature declared numeric.

Determinism: no sum goes through BLAS. d(i, j) adds the numeric features' diffs in feature
order, one rounding per addition, then the nominal mismatch count (an exact integer); a row's
sum runs over j in index order, T adds the row sums over i in order, sigma_i the squared
deviations over j in order. Every such sum is ((a_0 + a_1) + a_2) + ..., computed by a prefix
sum (``fsbench.fixed_order.column_sums``) or by one vectorized ``np.add`` per term over many
elements at once, both that order by definition: each value is what a plain Python loop gives,
on every machine, and a distance exactly equal to a threshold falls on the same side everywhere
(where every step is exact, it is neither near nor far; the tests build such data and check
against rational arithmetic). The
class counts of a neighbour set are products of 0/1 matrices, exact integers in any order. The
scores add (c_ij + c_ji) diff(A, i, j) over the pairs i < j in the order (i, j), c_ij being the
coefficient of j in i's sets (0 outside them), so duplicated features score exactly alike and
neither the block nor the chunk sizes change a bit. Ties in score go to the lower feature index.

Memory: targets are taken in blocks of rows (at most ``_BLOCK_ELEMENTS`` distances, 8 MB), the
differences in chunks of at most ``_CHUNK_ELEMENTS`` (16 MB); the n x n distances are kept
between the sweeps only while n^2 <= ``_KEEP_ELEMENTS`` (64 MB), else each block's rows are
computed again (two sweeps, three for SURF and SURF*, whose threshold needs every row first).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from fsbench.fixed_order import column_sums
from fsbench.selectors import register
from fsbench.selectors._discretize import dense_codes
from fsbench.selectors.base import BaseSelector, count

MISS_WEIGHTINGS = ("prior", "uniform")
_BLOCK_ELEMENTS = 1 << 20        # distances of one block of target rows: 8 MB of float64
_CHUNK_ELEMENTS = 1 << 21        # one temporary array of differences: 16 MB
_KEEP_ELEMENTS = 1 << 23         # the n x n distances are kept (64 MB at most) while they fit
_WIDE = 256                      # rows this wide are summed one vectorized addition each


def _add_rows(acc: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """``((acc + terms[0]) + terms[1]) + ...`` elementwise, one rounding per addition.

    Wide rows are added one ``np.add`` each (the loop runs over rows of at least ``_WIDE``
    elements, so the interpreter's share stays small), narrow ones by a prefix sum down the rows
    (:func:`fsbench.fixed_order.column_sums`); both are this order by definition, bit for bit.
    """
    if terms.shape[0] == 0:
        return acc
    if terms.shape[1] >= _WIDE:
        acc = acc.copy()
        for row in terms:
            np.add(acc, row, out=acc)
        return acc
    terms[0] += acc
    return column_sums(terms)


class _Features:
    """The features that can differ, prepared once: numeric ones range-normalized, nominal ones
    as integer codes, both also feature-major for the distance sums."""

    def __init__(self, X: np.ndarray, nominal: np.ndarray):
        lo = X.min(axis=0)
        span = X.max(axis=0) - lo
        self.numeric = ~nominal & (span > 0)
        self.nominal = nominal & (span > 0)
        self.n = X.shape[0]
        self.xn = np.ascontiguousarray((X[:, self.numeric] - lo[self.numeric]) / span[self.numeric])
        self.xnT = np.ascontiguousarray(self.xn.T)
        codes = dense_codes(X[:, self.nominal])[0] if self.nominal.any() else np.zeros((self.n, 0), np.intp)
        self.xd = np.ascontiguousarray(codes)
        self.xdT = np.ascontiguousarray(codes.T)

    def distances(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """d(i, j) for i in ``rows``, j in ``cols``: the numeric diffs summed in feature order
        (:func:`_add_rows` over chunks of features, the running sum carried, so the chunking
        changes no bit), then the nominal mismatch count (an exact integer) added."""
        b, m = rows.size, cols.size
        out = np.zeros(b * m)
        width = max(1, _CHUNK_ELEMENTS // max(b * m, 1))
        for f0 in range(0, self.xnT.shape[0], width):
            part = self.xnT[f0:f0 + width]
            out = _add_rows(out, np.abs(part[:, rows, None] - part[:, None, cols]).reshape(-1, b * m))
        out = out.reshape(b, m)
        if self.xdT.shape[0]:
            mismatches = np.zeros((b, m), dtype=np.int64)
            for f0 in range(0, self.xdT.shape[0], width):
                part = self.xdT[f0:f0 + width]
                mismatches += (part[:, rows, None] != part[:, None, cols]).sum(axis=0)
            out += mismatches
        return out


class _Distances:
    """Rows of the distance matrix, block by block: all computed at once and kept when
    n^2 <= ``_KEEP_ELEMENTS`` (the upper triangle in eight bands, mirrored: d(i, j) and d(j, i)
    are the same sum), else computed anew at each request. Either way every entry has the same bits."""

    def __init__(self, feats: _Features, blocks: list[np.ndarray]):
        self.feats, self.blocks, n = feats, blocks, feats.n
        self.full = None
        if n * n <= _KEEP_ELEMENTS:
            self.full = np.empty((n, n))
            band = max(1, -(-n // 8))
            for s in range(0, n, band):
                rows = np.arange(s, min(s + band, n))
                tile = feats.distances(rows, np.arange(s, n))
                self.full[s:s + rows.size, s:] = tile
                self.full[s:, s:s + rows.size] = tile.T

    def rows(self, b: int, start: int = 0) -> np.ndarray:
        """d(i, j) for the rows i of block ``b`` and the columns j >= ``start``."""
        rows = self.blocks[b]
        if self.full is not None:
            return self.full[rows[0]:rows[-1] + 1, start:]
        return self.feats.distances(rows, np.arange(start, self.feats.n))


def _row_sums(D: np.ndarray) -> np.ndarray:
    """Each row summed over its columns in index order."""
    return _add_rows(np.zeros(D.shape[0]), D.T)


def _set_table(inside: np.ndarray, y_rows: np.ndarray, onehot: np.ndarray, class_counts: np.ndarray,
               weighting: str) -> tuple[np.ndarray, np.ndarray]:
    """Per target (row) and class: the coefficient of a member of that class in the target's set
    (-1/|H| for its own class, w(C)/|M(C)| for a miss class, 0 for a class absent from the set),
    and the size of each set. Counts come from a product of 0/1 matrices: exact integers whatever
    the summation order."""
    r = np.arange(inside.shape[0])
    counts = inside.astype(float) @ onehot                     # (b, c): members of each class
    hits = counts[r, y_rows].copy()
    misses = counts.copy()
    misses[r, y_rows] = 0.0
    present = misses > 0
    table = np.zeros_like(counts)
    if weighting == "prior":
        # P(C) / sum_K P(C') / |M(C)| = n_C / (sum_K n_C' |M(C)|): one rounding of exact integers
        mass = present.astype(float) @ class_counts.astype(float)
        np.divide(class_counts[None, :].astype(float), mass[:, None] * misses, out=table, where=present)
    else:
        np.divide(1.0, present.sum(axis=1)[:, None] * misses, out=table, where=present)
    table[r, y_rows] = -1.0 / np.maximum(hits, 1.0)
    return table, counts.sum(axis=1).astype(np.int64)


def _add_pairs(acc: np.ndarray, x: np.ndarray, gi: np.ndarray, gj: np.ndarray, coef: np.ndarray,
               nominal: bool) -> np.ndarray:
    """acc + sum over the pairs (gi, gj), in the order given, of coef x diff (:func:`_add_rows`)."""
    if x.shape[1] == 0:
        return acc
    step = max(1, _CHUNK_ELEMENTS // x.shape[1])
    for s in range(0, gi.size, step):
        a, b = x[gi[s:s + step]], x[gj[s:s + step]]
        terms = (a != b).astype(float) if nominal else np.abs(a - b)
        terms *= coef[s:s + step, None]
        acc = _add_rows(acc, terms)
    return acc


def surf_scores(X: np.ndarray, y: np.ndarray, n_classes: int, *, threshold: str, far: bool,
                nominal: np.ndarray | None = None, miss_weighting: str = "prior") -> dict[str, np.ndarray | None]:
    """Weights of the SURF family; see the module docstring for the definition.

    ``threshold`` is ``"mean"`` (SURF, SURF*) or ``"instance"`` (MultiSURF, MultiSURF*), ``far``
    adds the far term (the * variants), ``nominal`` marks the features compared by equality.
    Returns ``scores`` and, per instance, ``near_threshold``, ``far_threshold``, ``n_near`` and
    ``n_far`` (the far ones None without the far term).

    Two sweeps over blocks of target rows: the first sets each target's thresholds and the
    coefficients of its near and far sets, the second adds coef x diff over the pairs i < j with
    the coefficients of both directions, (c_ij + c_ji) diff(A, i, j), since diff is symmetric:
    pairs in the order (i, j), one rounding per addition, whatever the blocks.
    """
    n, d = X.shape
    feats = _Features(X, np.zeros(d, dtype=bool) if nominal is None else nominal)
    class_counts = np.bincount(y, minlength=n_classes)
    onehot = (y[:, None] == np.arange(n_classes)).astype(float)
    block = max(1, min(n, _BLOCK_ELEMENTS // n))
    blocks = [np.arange(s, min(s + block, n)) for s in range(0, n, block)]
    dist = _Distances(feats, blocks)
    cols = np.arange(n)
    near_t, far_t = np.empty(n), np.empty(n)
    tab_near, tab_far = np.zeros((n, n_classes)), np.zeros((n, n_classes))
    n_near, n_far = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    if threshold == "mean":
        row_sums = np.concatenate([_row_sums(dist.rows(b)) for b in range(len(blocks))])
        near_t[:] = far_t[:] = _add_rows(np.zeros(1), row_sums[:, None])[0] / (n * (n - 1.0))
    for b, rows in enumerate(blocks):
        D = dist.rows(b)
        others = cols[None, :] != rows[:, None]
        if threshold == "instance":
            mu = _row_sums(D) / (n - 1)
            dev = np.where(others, D - mu[:, None], 0.0)       # the target itself is no neighbour
            sigma = np.sqrt(_row_sums(dev * dev) / (n - 1))
            near_t[rows] = mu - sigma / 2
            far_t[rows] = mu + sigma / 2
        inside = (D < near_t[rows, None]) & others
        tab_near[rows], n_near[rows] = _set_table(inside, y[rows], onehot, class_counts, miss_weighting)
        if far:
            outside = D > far_t[rows, None]
            tab_far[rows], n_far[rows] = _set_table(outside, y[rows], onehot, class_counts, miss_weighting)
    acc_num, acc_nom = np.zeros(feats.xn.shape[1]), np.zeros(feats.xd.shape[1])
    for b, rows in enumerate(blocks):
        s = int(rows[0])
        D, later, yr, ys = dist.rows(b, s), cols[None, s:] > rows[:, None], y[rows], y[s:]
        # c_ij: j in i's set (row i's table at j's class); c_ji: i in j's set (row j's table at i's class)
        c_ij = np.where(D < near_t[rows, None], tab_near[rows][:, ys], 0.0)
        c_ji = np.where(D < near_t[None, s:], tab_near[s:, yr].T, 0.0)
        if far:
            c_ij -= np.where(D > far_t[rows, None], tab_far[rows][:, ys], 0.0)
            c_ji -= np.where(D > far_t[None, s:], tab_far[s:, yr].T, 0.0)
        coef = np.where(later, c_ij + c_ji, 0.0)
        r, j = np.nonzero(coef)
        c = coef[r, j]
        acc_num = _add_pairs(acc_num, feats.xn, rows[r], j + s, c, nominal=False)
        acc_nom = _add_pairs(acc_nom, feats.xd, rows[r], j + s, c, nominal=True)
    scores = np.zeros(d)
    scores[feats.numeric] = acc_num / n
    scores[feats.nominal] = acc_nom / n
    return {"scores": scores, "near_threshold": near_t, "far_threshold": far_t if far else None,
            "n_near": n_near, "n_far": n_far if far else None}


class _SURFFamily(BaseSelector):
    """Shared engine of the four selectors; subclasses set the threshold and the far term."""

    _threshold = "mean"
    _far = False

    # discrete_threshold beyond the sample count means "every feature nominal"; 0 means none
    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "discrete_threshold": [count(0)],
        "miss_weighting": [StrOptions(set(MISS_WEIGHTINGS))],
    }

    def __init__(self, *, n_features_to_select: int = 10, discrete_threshold: int = 0,
                 miss_weighting: str = "prior"):
        super().__init__(n_features_to_select=n_features_to_select)
        self.discrete_threshold = discrete_threshold
        self.miss_weighting = miss_weighting

    def _fit(self, X, y, classes):
        threshold = int(self.discrete_threshold)
        nominal = np.zeros(X.shape[1], dtype=bool)
        if threshold > 0:
            nominal = dense_codes(X)[1] <= threshold
        out = surf_scores(X, y, classes.size, threshold=self._threshold, far=self._far,
                          nominal=nominal, miss_weighting=self.miss_weighting)
        self.nominal_ = nominal
        self.near_threshold_ = out["near_threshold"]
        self.far_threshold_ = out["far_threshold"]
        self.n_near_ = out["n_near"]
        self.n_far_ = out["n_far"]
        name = self.registry_name
        self.diagnostics_ = {f"{name}_n_nominal": int(nominal.sum()),
                             f"{name}_n_constant": int((np.ptp(X, axis=0) == 0).sum()),
                             f"{name}_mean_near": float(out["n_near"].mean()),
                             f"{name}_n_without_near": int((out["n_near"] == 0).sum())}
        if self._far:
            self.diagnostics_[f"{name}_mean_far"] = float(out["n_far"].mean())
        return out["scores"]


@register("surf")
class SURF(_SURFFamily):
    """SURF: hits and misses within the mean pairwise distance, ReliefF's scoring.

    Greene, Penrod, Kiralis & Moore (BioData Mining 2, 2009). Neighbours of R_i: d(i, j) < T,
    T the mean distance over all pairs of distinct instances;
    W_A = 1/n sum_i [ -mean_{H_i} diff + sum_C w_i(C) mean_{M_i(C)} diff ]. Definition,
    parameters, determinism and the differences from skrebate: :mod:`fsbench.selectors.surf`.

    - ``discrete_threshold``: features with at most this many distinct values are nominal
      (diff 0/1); 0, the default, treats every feature as numeric.
    - ``miss_weighting``: ``"prior"`` (class frequencies renormalized over the miss classes
      found) or ``"uniform"``.

    Fitted, besides ``scores_`` and ``ranking_``: ``nominal_`` (the features compared by
    equality), per instance ``near_threshold_`` and ``n_near_`` (the size of its near set), for
    the * variants ``far_threshold_`` and ``n_far_`` (None otherwise), and ``diagnostics_``.
    """


@register("surfstar")
class SURFStar(_SURFFamily):
    """SURF*: SURF plus opposite scoring of the instances beyond the mean distance.

    Greene, Himmelstein, Kiralis & Moore (EvoBIO 2010). Near: d(i, j) < T; far: d(i, j) > T,
    T the mean distance over all pairs of distinct instances;
    W_A = 1/n sum_i [ S_i(near) - S_i(far) ], S_i as in SURF. Parameters as :class:`SURF`.
    """

    _far = True


@register("multisurf")
class MultiSURF(_SURFFamily):
    """MultiSURF: hits and misses nearer than each instance's mean distance minus half its deviation.

    Urbanowicz, Olson, Schmitt, Meeker & Moore (J. Biomed. Inform. 85, 2018). Near:
    d(i, j) < mu_i - sigma_i / 2, mu_i and sigma_i the mean and the population standard
    deviation of R_i's distances to the n - 1 others; no far term. Parameters as :class:`SURF`.
    """

    _threshold = "instance"


@register("multisurfstar")
class MultiSURFStar(_SURFFamily):
    """MultiSURF*: per-instance near and far thresholds mu_i -/+ sigma_i / 2, far pairs scored opposite.

    Granizo-Mackenzie & Moore (EvoBIO 2013). Near: d(i, j) < mu_i - sigma_i / 2; far:
    d(i, j) > mu_i + sigma_i / 2; between them a dead band that is not scored;
    W_A = 1/n sum_i [ S_i(near) - S_i(far) ]. Parameters as :class:`SURF`.
    """

    _threshold = "instance"
    _far = True
