"""ReliefF (Kononenko 1994; Robnik-Sikonja & Kononenko 2003), vectorized and memory-bounded."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors import register
from fsbench.selectors._discretize import dense_codes
from fsbench.selectors.base import RANDOM_STATE, BaseSelector, count

MISS_WEIGHTINGS = ("prior", "uniform")
_BLOCK_ELEMENTS = 1 << 22        # ~32 MB of float64 per block of distance rows
_CHUNK_ELEMENTS = 1 << 15        # differences are summed in cache-sized chunks of pairs
_UPPER_MAX_BYTES = 1 << 28       # keep the upper-triangle tiles (half the work) up to 256 MB
_MAX_BLOCK_ROWS = 256


def _nearest_mask(dist: np.ndarray, need: np.ndarray) -> np.ndarray:
    """Boolean mask of the ``need[r]`` smallest entries of each row of ``dist``.

    Ties at the boundary go to the lower column index (what a stable sort would pick).
    """
    rows = np.arange(dist.shape[0])
    kths = np.unique(need[need > 0]) - 1
    if kths.size == 0:
        return np.zeros(dist.shape, dtype=bool)
    part = np.partition(dist, kths, axis=1)
    cut = np.where(need > 0, part[rows, np.maximum(need - 1, 0)], -np.inf)[:, None]
    less = dist < cut
    equal = dist == cut
    room = need - less.sum(axis=1)
    return less | (equal & (np.cumsum(equal, axis=1) <= room[:, None]))


class _Distances:
    """Rows of the ReliefF distance matrix sum_A diff(A, i, j), one block of rows at a time.

    When the blocks are requested in order and cover every instance, only the tiles on and
    above the diagonal are computed (half the work) and kept for the rows below, as long as
    they fit in ``_UPPER_MAX_BYTES``; otherwise every block is computed in full.
    """

    def __init__(self, xn: np.ndarray, xd: np.ndarray | None, all_rows: bool):
        self.xn, self.xd, self.n = xn, xd, xn.shape[0]
        self.symmetric = all_rows and self.n * self.n * 4 <= _UPPER_MAX_BYTES
        self.tiles: list[tuple[int, int, np.ndarray]] = []
        if xd is not None:
            # one-hot of the nominal features: matching counts are a matrix product
            codes, n_levels = dense_codes(xd)
            offsets = np.concatenate([[0], np.cumsum(n_levels)[:-1]])
            self.onehot = np.zeros((self.n, int(n_levels.sum())))
            np.put_along_axis(self.onehot, codes + offsets, 1.0, axis=1)
            self.n_nominal = xd.shape[1]

    def _numeric(self, idx: np.ndarray) -> np.ndarray:
        if self.xn.shape[1] == 0:
            return np.zeros((idx.size, self.n))
        if not self.symmetric:
            return cdist(self.xn[idx], self.xn, "cityblock")
        i0, i1 = int(idx[0]), int(idx[-1]) + 1     # consecutive rows, blocks in increasing order
        out = np.empty((idx.size, self.n))
        upper = cdist(self.xn[i0:i1], self.xn[i0:], "cityblock")
        out[:, i0:] = upper
        for j0, j1, tile in self.tiles:
            out[:, j0:j1] = tile[:, i0 - j0:i1 - j0].T
        self.tiles.append((i0, i1, upper))
        return out

    def rows(self, idx: np.ndarray) -> np.ndarray:
        out = self._numeric(idx)
        if self.xd is not None:
            out += self.n_nominal - self.onehot[idx] @ self.onehot.T
        out[np.arange(idx.size), idx] = np.inf
        return out


def _weighted_abs_diff(x: np.ndarray, rows: np.ndarray, nbrs: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """sum_g coef[g] sum_q |x[rows[g]] - x[nbrs[g, q]]|, in cache-sized chunks of rows."""
    q, width = nbrs.shape[1], x.shape[1]
    out = np.zeros(width)
    step = max(1, _CHUNK_ELEMENTS // max(q * width, 1))
    buf = np.empty((step * q, width))
    for s in range(0, rows.size, step):
        g = min(step, rows.size - s)
        diff = buf[: g * q]
        np.take(x, nbrs[s:s + g].ravel(), axis=0, out=diff)
        diff3 = diff.reshape(g, q, width)
        np.subtract(diff3, x[rows[s:s + g]][:, None, :], out=diff3)
        np.abs(diff, out=diff)
        out += coef[s:s + g] @ diff3.sum(axis=1)
    return out


def relieff_scores(X: np.ndarray, y: np.ndarray, n_classes: int, n_neighbors: int = 10,
                   samples: np.ndarray | None = None, nominal: np.ndarray | None = None,
                   miss_weighting: str = "prior") -> np.ndarray:
    """ReliefF weights W_A of every feature; see :class:`ReliefF` for the definition.

    ``samples`` are the indices of the instances R_i (None: all), ``nominal`` a boolean mask
    of features compared by equality instead of range-normalized absolute difference.
    """
    n, d = X.shape
    nominal = np.zeros(d, dtype=bool) if nominal is None else nominal
    lo = X.min(axis=0)
    span = X.max(axis=0) - lo
    numeric = ~nominal & (span > 0)
    nominal = nominal & (span > 0)           # a constant feature never differs: weight 0
    # instances sorted by class (stable: by index within a class); every class is a column slice
    perm = np.argsort(y, kind="stable")
    ys = y[perm]
    xn = np.ascontiguousarray((X[perm][:, numeric] - lo[numeric]) / span[numeric])
    xd = np.ascontiguousarray(X[perm][:, nominal]) if nominal.any() else None
    counts = np.bincount(y, minlength=n_classes)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    prior = counts / n
    if miss_weighting == "prior":
        with np.errstate(divide="ignore", invalid="ignore"):
            weight = prior[None, :] / (1.0 - prior[:, None])
    else:
        weight = np.full((n_classes, n_classes), 1.0 / (n_classes - 1))
    np.fill_diagonal(weight, -1.0)           # hits count against the feature
    inv = np.empty(n, dtype=np.intp)
    inv[perm] = np.arange(n)
    rows_all = np.arange(n) if samples is None else np.sort(inv[samples])
    m = rows_all.size
    dist = _Distances(xn, xd, all_rows=samples is None)
    w_num = np.zeros(xn.shape[1])
    w_nom = np.zeros(0 if xd is None else xd.shape[1])
    block = max(1, min(_BLOCK_ELEMENTS // n, _MAX_BLOCK_ROWS))
    for start in range(0, m, block):
        rows = rows_all[start:start + block]
        dr = dist.rows(rows)
        own = ys[rows]
        for c in range(n_classes):
            a, b = bounds[c], bounds[c + 1]
            # all members when a class has fewer than k (others), as Robnik-Sikonja & Kononenko
            for group, q in ((own == c, min(n_neighbors, b - a - 1)), (own != c, min(n_neighbors, b - a))):
                if q == 0 or not group.any():
                    continue
                g_rows = rows[group]
                near = _nearest_mask(dr[group, a:b], np.full(g_rows.size, q))
                # each row has exactly q neighbours here, in increasing column order
                nbrs = np.nonzero(near)[1].reshape(g_rows.size, q) + a
                coef = weight[ys[g_rows], c] / q
                w_num += _weighted_abs_diff(xn, g_rows, nbrs, coef)
                if xd is not None:
                    w_nom += coef @ (xd[nbrs] != xd[g_rows][:, None, :]).sum(axis=1)
    scores = np.zeros(d)
    scores[numeric] = w_num / m
    scores[nominal] = w_nom / m
    return scores


@register("relieff")
class ReliefF(BaseSelector):
    """ReliefF: k nearest hits and k nearest misses from every other class, misses weighted by priors.

    Robnik-Sikonja & Kononenko (2003, Sec. 2.2; Kononenko 1994): for each of m instances R_i
    with class c_i, find its k nearest hits H_j (same class) and, for every class C != c_i,
    its k nearest misses M_j(C); then
    W_A = 1/m sum_i [ -1/k sum_j diff(A, R_i, H_j)
                      + sum_{C != c_i} P(C) / (1 - P(c_i)) 1/k sum_j diff(A, R_i, M_j(C)) ].
    diff(A, x, x') = |x_A - x'_A| / (max A - min A) over the training data (numeric features)
    or [x_A != x'_A] (nominal features); the distance that finds neighbours is sum_A diff,
    i.e. Manhattan distance on range-normalized features. Priors P(C) are class frequencies.

    - ``n_neighbors`` (k, default 10): a class with fewer than k candidates (fewer than k + 1
      members for the hits) contributes all of them, and 1/k becomes 1/(number used).
      A distance tie at the k-th neighbour goes to the lower sample index.
    - ``n_samples`` (m): None uses every instance (deterministic); an integer m < n draws m
      distinct instances with ``random_state``.
    - ``discrete_threshold``: features with at most this many distinct values are nominal.
      The default 0 treats every feature as numeric; skrebate silently uses 10.
    - ``miss_weighting``: ``"prior"`` (the definition above) or ``"uniform"``, 1/(c - 1) for
      every miss class; they agree on balanced classes. skrebate 0.8 computes ``"uniform"``
      when every class has more than k members (with fewer, it counts the instance itself
      among its hits and reweights the misses).

    A constant feature scores 0. Distances are computed in blocks of rows (memory bounded);
    with every instance used and n^2/2 distances fitting in 256 MB, only the upper triangle is
    computed. Differences are accumulated in cache-sized chunks of pairs.
    """

    # n_neighbors, n_samples or discrete_threshold beyond the sample count mean "all of them"
    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "n_neighbors": [count(1)],
        "n_samples": [count(1), None],
        "discrete_threshold": [count(0)],
        "miss_weighting": [StrOptions(set(MISS_WEIGHTINGS))],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, n_features_to_select: int = 10, n_neighbors: int = 10, n_samples: int | None = None,
                 discrete_threshold: int = 0, miss_weighting: str = "prior",
                 random_state: int | np.random.RandomState | None = None):
        super().__init__(n_features_to_select=n_features_to_select)
        self.n_neighbors = n_neighbors
        self.n_samples = n_samples
        self.discrete_threshold = discrete_threshold
        self.miss_weighting = miss_weighting
        self.random_state = random_state

    def _fit(self, X, y, classes):
        k, threshold, weighting = int(self.n_neighbors), int(self.discrete_threshold), self.miss_weighting
        m = None if self.n_samples is None else int(self.n_samples)
        n, d = X.shape
        samples = None
        if m is not None and m < n:
            samples = check_random_state(self.random_state).choice(n, size=m, replace=False)
        nominal = np.zeros(d, dtype=bool)
        if threshold > 0:
            nominal = dense_codes(X)[1] <= threshold
        span = np.ptp(X, axis=0)
        self.nominal_ = nominal
        self.diagnostics_ = {"relieff_n_nominal": int(nominal.sum()),
                             "relieff_n_constant": int((span == 0).sum()),
                             "relieff_n_samples": int(n if samples is None else m)}
        return relieff_scores(X, y, classes.size, k, samples, nominal, weighting)
