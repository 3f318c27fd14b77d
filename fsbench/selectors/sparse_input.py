"""Built-in selectors fitted on sparse (CSR) data without densifying the whole matrix.

This module owns the sparse route of the built-in selectors: which of them read a
``scipy.sparse`` CSR matrix (:data:`SPARSE_ROUTES`, :func:`accepts_sparse`), the fit itself
(:func:`fit_sparse`, which sets the attributes ``fit`` sets on dense data), the code identity of
that route (:func:`sparse_code`) and an estimate of the memory of the dense fit
(:func:`dense_fit_bytes`), by which a dense-only selector is refused on data too large to
densify. It registers no selector and edits none: every route calls the selector module's own
functions.

Routes:

- filters whose score of a feature depends on that column and the labels only (fisher, fstat,
  ttest, variance, gini, trace_ratio's traces, kruskal's and auc's rank sums, the discretized
  states of chi2, infogain, su and the information-theoretic criteria) densify blocks of columns
  (:data:`BLOCK_VALUES` values, 64 MB of float64, at a time) and call the selector's own scoring
  on each block. Where the dense method then compares features with each other (the exact
  near-tie pass of kruskal, auc, chi2, infogain and su: which values are recomputed exactly
  depends on the largest statistic and on which values lie near one another over all
  features), the per-feature integer statistics or count tables of all blocks are collected
  and that pass runs once over all features, as on dense data, so scores and rankings equal the
  dense fit's bit for bit;
- l1svm and cssvm solve the same optimization problem with LIBLINEAR, which reads CSR data
  (scikit-learn's ``LinearSVC``): l1svm's l1-regularized squared hinge, one problem per class
  with the intercept a penalized constant feature, is LIBLINEAR's primal solver
  (``penalty="l1", dual=False``), refitted with a smaller tolerance until the relative duality
  gap of the dense solver's certificate is at most ``tol``; cssvm's Crammer-Singer problem is
  LIBLINEAR's ``multi_class="crammer_singer"``. Their rankings follow the dense classes' rules;
  they equal the dense fit where the weights are not tied to within the solvers' tolerance.

Sources: the selector modules of this package; LIBLINEAR (Fan, Chang, Hsieh, Wang & Lin, JMLR 9,
2008) through scikit-learn.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from sklearn.utils.validation import check_array

from fsbench.code_identity import module_digest
from fsbench.selectors import SELECTOR_SCOPE, get_selector, selector_code
from fsbench.selectors._discretize import contingency, dense_codes, discretize, mutual_info_from_joint
from fsbench.selectors._it_engine import MAX_STATES, Tables, mrmr_order, select_states
from fsbench.selectors._svm import loss_value, signed_labels
from fsbench.selectors.base import BaseSelector, rank_by_scores, validate_Xy
from fsbench.selectors.chi2 import chi2_from_counts
from fsbench.selectors.infogain import equalize_exact_ties
from fsbench.selectors.kruskal import class_rank_sums, exact_near_ties
from fsbench.selectors.l1svm import _dual_value
from fsbench.selectors.su import equalize_su_ties, su_parts
from fsbench.selectors.trace_ratio import fisher_traces, trace_ratio_search

__all__ = ["BLOCK_VALUES", "SPARSE_ROUTES", "accepts_sparse", "dense_fit_bytes", "fit_sparse", "sparse_code",
           "sparse_fit_bytes"]

#: values densified at once: a block of columns holds at most this many float64 values (64 MB)
BLOCK_VALUES = 2**23

_GREEDY = ("mifs", "cife", "jmi", "jmim", "cmim", "icap", "disr")

#: every selector that reads sparse data, and how
SPARSE_ROUTES: dict[str, str] = {
    "auc": "rank sums by blocks of columns; the exact near-tie pass over all features",
    "chi2": "states and (state, class) tables by blocks of columns; the exact near-tie pass over all features",
    "fisher": "blocks of columns, the dense scoring on each",
    "fstat": "blocks of columns, the dense scoring on each",
    "gini": "blocks of columns, the dense scoring on each",
    "infogain": "states and (state, class) tables by blocks of columns; the exact-tie pass over all features",
    "kruskal": "rank sums by blocks of columns; the exact near-tie pass over all features",
    "mim": "states and relevance by blocks of columns (memory: one block)",
    "mrmr": "states by blocks of columns (one byte each), the search on the candidates' states",
    "random": "reads only the number of features",
    "su": "states and (state, class) tables by blocks of columns; the exact-tie pass over all features",
    "trace_ratio": "traces by blocks of columns, the search on them",
    "ttest": "blocks of columns, the dense scoring on each",
    "variance": "blocks of columns, the dense scoring on each",
    **{name: "states by blocks of columns, the greedy search on all states (16 bytes per value)"
       for name in _GREEDY},
    "l1svm": "LIBLINEAR's l1-regularized squared-hinge primal solver on CSR, to the same certified gap",
    "cssvm": "LIBLINEAR's Crammer-Singer solver on CSR",
}


def accepts_sparse(name: str) -> bool:
    """Whether built-in selector ``name`` can be fitted on sparse data by :func:`fit_sparse`."""
    return name in SPARSE_ROUTES


def sparse_code(name: str) -> str:
    """The code identity of the sparse route of selector ``name``: 16 hex digits of the sha256 of
    this module's digest (within :data:`fsbench.selectors.SELECTOR_SCOPE`, so with every selector
    module it imports) and of :func:`fsbench.selectors.selector_code` of ``name``; an edit of
    either changes it."""
    if not accepts_sparse(name):
        raise ValueError(f"selector {name!r} does not read sparse data, so its rows have no sparse code.")
    route = module_digest(__name__, SELECTOR_SCOPE)
    return hashlib.sha256(f"{route} {selector_code(name)}".encode()).hexdigest()[:16]


def block_width(n_samples: int) -> int:
    """Columns per densified block: at most :data:`BLOCK_VALUES` values, one column at least."""
    return max(1, BLOCK_VALUES // max(int(n_samples), 1))


def column_blocks(X: sp.spmatrix) -> Iterator[tuple[int, int, np.ndarray]]:
    """(start, stop, dense columns start..stop-1) over the columns of ``X``, in order."""
    Xc = X.tocsc()
    n, d = Xc.shape
    step = block_width(n)
    for start in range(0, d, step):
        stop = min(d, start + step)
        yield start, stop, Xc[:, start:stop].toarray()


# ----------------------------------------------------------------------------- memory of the dense fit
def dense_fit_bytes(name: str, n_samples: int, n_features: int) -> int:
    """An estimate of the peak memory, in bytes, of the dense fit of selector ``name`` on
    ``n_samples`` x ``n_features`` data: the float64 matrix times the copies the method makes
    (centred or sorted copies, discretized codes, LIBLINEAR's copy at 16 bytes per value) plus the
    n x n or d x d matrices it builds. Used to refuse a selector on data too large to densify."""
    get_selector(name)  # an unknown name: ConfigError with a suggestion
    n, d = int(n_samples), int(n_features)
    if n < 1 or d < 1:
        raise ValueError(f"n_samples={n_samples} and n_features={n_features} must be positive counts.")
    m = 8 * n * d  # the float64 matrix
    if name in ("random",):
        return m
    if name in ("fisher", "fstat", "trace_ratio"):
        return 4 * m  # X - class means, the per-class row copies and their running sums
    if name == "ttest":
        return 4 * m
    if name == "variance":
        return 5 * m  # sorted copy, deviations, their squares' running sums
    if name == "gini":
        return m + 12 * 8 * min(n * d, 2_000_000)  # blocks of 2e6 values, a dozen 8-byte arrays each
    if name in ("kruskal", "auc"):
        return m + 12 * 8 * min(n * d, 1 << 20)  # blocks of 2^20 values
    if name == "mrmr":
        return 8 * m  # the discretization below, then the candidates' codes and cell codes
    if name in ("chi2", "infogain", "su", "cfs", "fcbf", "mim", *_GREEDY):
        # discretization: deviations, their squares, running sums (mean_std) or sort order, sorted
        # values, ranks (quantile); int64 codes and the engines' int64 cell codes
        return 7 * m
    if name == "l1svm":
        # X with an intercept column, its rows of positive slack, LARS's copy, LIBLINEAR's start
        # (16 bytes per value) and LARS's (d + 1) x (d + 1) Cholesky buffer
        return 6 * m + 8 * (d + 1) ** 2
    if name in ("cssvm", "l21svm", "sl21", "sl2p"):
        # n <= 400: interior point on n x n kernels (Crammer-Singer: a KKT system of n (c + 1),
        # c <= 10 counted) and LU copies; above, LIBLINEAR's copy of the rescaled data
        return 3 * m + (2 * 8 * (11 * n) ** 2 if n <= 400 else 2 * m)
    if name == "rfe":
        return 4 * m  # the kept columns and LIBLINEAR's copy, per elimination step
    if name == "rfs":
        return 3 * m + 2 * 8 * min(n, d + 1) ** 2  # the n x n or (d + 1) x (d + 1) system
    if name == "dso":
        return 7 * m + 4 * 8 * min(n, d + 1) ** 2
    if name in ("ll_l21", "ls_l21"):
        return 3 * m  # centred copy and products of its size
    if name == "stability_selection":
        return 3 * m  # half-sample copies and LIBLINEAR's
    if name in ("rf_importance", "permutation"):
        return 3 * m + 400_000 * n  # float32 round trip, the trees' copy; 500 trees of 2 n nodes
    # relieff and the surf family: normalized (feature-major) copies, kept distance tiles
    return 3 * m + min(8 * n * n, (1 << 28) + (1 << 26)) + 8 * (1 << 24)


def sparse_fit_bytes(name: str, n_samples: int, n_features: int, n_nonzero: int) -> int:
    """An estimate of the peak memory, in bytes, of :func:`fit_sparse` for selector ``name`` on
    ``n_samples`` x ``n_features`` CSR data with ``n_nonzero`` stored values, beyond the matrix itself.

    The column-block routes hold one densified block (:data:`BLOCK_VALUES` values) and its
    temporaries plus a few arrays per feature; the greedy information-theoretic criteria and mRMR
    hold the states of every value (the engine's int64 codes and cell codes: 16 bytes per value),
    besides a block, so their memory grows with n x d whatever the density; LIBLINEAR (l1svm, cssvm) copies the
    stored values with their indices (16 bytes each) per fit. Used to refuse a sparse fit that
    would not fit in memory, as :func:`dense_fit_bytes` is for dense ones."""
    if not accepts_sparse(name):
        raise ValueError(f"selector {name!r} does not read sparse data; use dense_fit_bytes for its dense fit.")
    n, d, nnz = int(n_samples), int(n_features), int(n_nonzero)
    if n < 1 or d < 1 or nnz < 0:
        raise ValueError(f"n_samples={n_samples}, n_features={n_features} and n_nonzero={n_nonzero} must be "
                         "counts (the first two positive).")
    block = 8 * min(BLOCK_VALUES, n * min(d, block_width(n))) * 8  # a block and its temporaries
    per_feature = 64 * d
    if name in ("mrmr", *_GREEDY):
        return block + 16 * n * d + per_feature
    if name in ("l1svm", "cssvm"):
        return 3 * 16 * nnz + 8 * n * 16 + per_feature  # LIBLINEAR's copies; margins per sample and class
    if name == "random":
        return per_feature
    return block + per_feature


# ----------------------------------------------------------------------------- the fit
def fit_sparse(selector: BaseSelector, X: sp.spmatrix, y: np.ndarray) -> BaseSelector:
    """Fit built-in ``selector`` on sparse ``X`` (CSR; CSC is converted) and labels ``y``, as its
    ``fit`` does on dense data: the same parameter checks and fitted attributes (``scores_``,
    ``ranking_``, ``n_features_in_``, ``classes_`` and each method's own). Only blocks of columns
    are densified. A selector without a sparse route raises ValueError."""
    name = getattr(type(selector), "registry_name", None)
    if name not in SPARSE_ROUTES or get_selector(name).cls is not type(selector):
        label = name if name is not None else type(selector).__name__
        raise ValueError(f"selector {label!r} does not read sparse data, so fit it on dense data "
                         f"(sparse routes: {', '.join(sorted(SPARSE_ROUTES))}).")
    if not sp.issparse(X):
        raise ValueError(f"fit_sparse takes a scipy.sparse CSR matrix, not a {type(X).__name__}, "
                         "so fit dense data with the selector's own fit.")
    selector._validate_params()
    selector.check_params()
    X = check_array(X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=True)
    # the labels exactly as the dense fit reads them (and their length against X's rows)
    _, y_coded, classes = validate_Xy(np.zeros((X.shape[0], 1)), y)
    selector.n_features_in_ = X.shape[1]
    selector.classes_ = classes
    if hasattr(selector, "ranking_"):
        del selector.ranking_
    scores = np.asarray(_ROUTES[name](selector, X, y_coded, classes), dtype=float)
    if scores.shape != (X.shape[1],):  # pragma: no cover - every route returns one score per feature
        raise RuntimeError(f"the sparse route of {name} returned {scores.shape} scores for {X.shape[1]} features")
    selector.scores_ = scores
    if not hasattr(selector, "ranking_"):
        selector.ranking_ = rank_by_scores(scores)
    return selector


# ----------------------------------------------------------------------------- column-wise filters
def _by_columns(selector: BaseSelector, X: sp.spmatrix, y: np.ndarray, classes: np.ndarray,
                columns: tuple[str, ...] = ()) -> np.ndarray:
    """The selector's own ``_fit`` on each block of columns, the scores (and the per-feature
    attributes ``columns``, whose last axis is the feature) concatenated."""
    parts: list[np.ndarray] = []
    kept: dict[str, list[np.ndarray]] = {a: [] for a in columns}
    for _, _, block in column_blocks(X):
        parts.append(np.asarray(selector._fit(block, y, classes), dtype=float))
        for a in columns:
            kept[a].append(getattr(selector, a))
    for a in columns:
        setattr(selector, a, np.concatenate(kept[a], axis=-1))
    return np.concatenate(parts)


def _random(selector, X, y, classes):
    return selector._fit(X, y, classes)  # reads X.shape[1] only


def _trace_ratio(selector, X, y, classes):
    """``TraceRatio._fit`` with the traces (per feature) computed by blocks."""
    n, d = X.shape
    a, b = np.empty(d), np.empty(d)
    for start, stop, block in column_blocks(X):
        a[start:stop], b[start:stop] = fisher_traces(block, y, classes.size)
    k = min(int(selector.n_features_to_select), d)
    scores, lam, lambdas, steps, swaps = trace_ratio_search(a, b, k)
    selector.between_, selector.within_ = a, b
    selector.trace_ratio_ = lam
    selector.objective_ = np.array(lambdas)
    selector.n_iter_ = steps
    selector.diagnostics_ = {"trace_ratio_lambda": lam, "trace_ratio_swaps": swaps}
    return scores


def _rank_sums(X: sp.spmatrix, y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``kruskal.class_rank_sums`` of all features, by blocks of columns."""
    d = X.shape[1]
    sums = np.empty((n_classes, d), dtype=np.int64)
    ties = np.empty(d, dtype=np.int64)
    for start, stop, block in column_blocks(X):
        sums[:, start:stop], ties[start:stop] = class_rank_sums(block, y, n_classes)
    return sums, ties


def _kruskal(selector, X, y, classes):
    """``kruskal.kruskal_h`` step by step from the rank sums of all blocks: the float H of each
    feature is a function of its column, but which values the near-tie pass recomputes exactly
    depends on all features, so that pass runs once, over all of them."""
    n, c = X.shape[0], classes.size
    counts = np.bincount(y, minlength=c).astype(np.int64)
    sums, ties = _rank_sums(X, y, c)
    dev = sums - (counts * (n + 1))[:, None]
    spread = n**3 - n - ties
    terms = dev.astype(float) ** 2 / counts[:, None]
    acc = terms[0].copy()
    for k in range(1, c):
        acc += terms[k]
    with np.errstate(divide="ignore", invalid="ignore"):
        h = (3.0 * (n - 1)) * acc / spread.astype(float)
    h[spread == 0] = 0.0
    lcm = math.lcm(*map(int, counts))
    per_class = [lcm // int(k) for k in counts]

    def exact(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        D, T = rows[:, :-1].astype(object), rows[:, -1].astype(object)
        num = 3 * (n - 1) * (D * D * np.array(per_class, dtype=object)).sum(axis=1)
        return num, lcm * (n**3 - n - T)

    selector.tie_terms_ = ties
    return exact_near_ties(h, c + 4, np.column_stack([dev.T, ties]), exact)


def _auc(selector, X, y, classes):
    """``auc.one_vs_rest_auc`` step by step from the rank sums of all blocks (the near-tie pass
    over all features, as in :func:`_kruskal`)."""
    n, c = X.shape[0], classes.size
    counts = np.bincount(y, minlength=c).astype(np.int64)
    sums, _ = _rank_sums(X, y, c)
    two_u = sums - (counts * (counts + 1))[:, None]
    pairs = 2 * counts * (n - counts)
    selector.auc_ = two_u / pairs[:, None]
    folded = np.maximum(two_u, pairs[:, None] - two_u)
    terms = folded / pairs[:, None]
    acc = terms[0].copy()
    for k in range(1, c):
        acc += terms[k]
    scores = acc / c
    lcm = math.lcm(*map(int, pairs))
    per_class = np.array([lcm // int(p) for p in pairs], dtype=object)

    def exact(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        num = (rows.astype(object) * per_class).sum(axis=1)
        return num, np.full(rows.shape[0], c * lcm, dtype=object)

    return exact_near_ties(scores, c + 1, folded.T, exact)


# ----------------------------------------------------------------------------- discretized filters
def _states(selector: BaseSelector, block: np.ndarray) -> tuple[np.ndarray, int]:
    """The block's states as the selector discretizes (``_discretize.discretize``)."""
    return discretize(block, selector.discretize, selector.std_factor, selector.n_bins)


def _tables(selector, X, y, classes) -> np.ndarray:
    """(state, class) counts (d, states, classes) of every feature, by blocks."""
    parts = []
    for _, _, block in column_blocks(X):
        codes, n_states = _states(selector, block)
        parts.append(contingency(codes, n_states, y, classes.size))
    return np.concatenate(parts)


def _chi2(selector, X, y, classes):
    return chi2_from_counts(_tables(selector, X, y, classes))


def _infogain(selector, X, y, classes):
    joint = _tables(selector, X, y, classes)
    return equalize_exact_ties(mutual_info_from_joint(joint), joint)


def _su(selector, X, y, classes):
    joint = _tables(selector, X, y, classes)
    su, denom = su_parts(joint)
    return equalize_su_ties(su, joint, denom)


def _it_states(selector: BaseSelector, block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_it_engine.feature_states`` of a block, without its refusal of features with too many
    values (``_too_many_states`` names the first of all features)."""
    if selector.discretize != "none":
        codes, n_states = _states(selector, block)
        return codes, np.full(block.shape[1], n_states, dtype=np.intp)
    codes, states = dense_codes(block)
    return codes.astype(np.intp, copy=False), states.astype(np.intp)


def _too_many_states(states: np.ndarray) -> None:
    """discretize='none': refuse features with more than ``MAX_STATES`` values, in the dense words."""
    over = np.flatnonzero(states > MAX_STATES)
    if over.size:
        j = int(over[0])
        more = f" (and {over.size - 1} more)" if over.size > 1 else ""
        raise ValueError(
            f"feature {j}{more} has {int(states[j])} distinct values, more than the {MAX_STATES} that "
            f"discretize='none' takes; use discretize='quantile' or 'mean_std' for continuous features, "
            f"or recode it into at most {MAX_STATES} values.")


def _it_result(selector, d: int, ranking: np.ndarray, relevance: np.ndarray, criterion: np.ndarray,
               n_incremental: int) -> np.ndarray:
    """What ``InformationTheoreticSelector._fit`` sets, and its scores (reversed positions)."""
    selector.ranking_ = ranking
    selector.relevance_ = relevance
    selector.criterion_ = criterion
    selector.diagnostics_ = {"it_n_incremental": int(n_incremental)}
    scores = np.empty(d)
    scores[ranking] = np.arange(d, 0, -1, dtype=float)
    return scores


def _mim(selector, X, y, classes):
    """MIM without the n x d states: the engine's exact relevance by blocks; MIM's greedy search
    adds nothing to it (no redundancy term), so its picks are the features by decreasing
    relevance, ties to the lower index, as ``_it_engine.select_states`` picks them."""
    d = X.shape[1]
    rel = np.empty(d, dtype=np.int64)
    states = np.empty(d, dtype=np.intp)
    unit = 1.0
    for start, stop, block in column_blocks(X):
        codes, states[start:stop] = _it_states(selector, block)
        if selector.discretize == "none" and np.any(states[start:stop] > MAX_STATES):
            continue  # refused below, naming the first such feature of all
        tables = Tables(codes, states[start:stop], y, classes.size)
        rel[start:stop], unit = tables.relevance(), tables.unit
    _too_many_states(states)
    order = np.lexsort((np.arange(d), -rel))
    n_select = min(max(int(selector.n_features_to_select), int(selector.n_ranked)), d)
    return _it_result(selector, d, order, rel / unit, rel[order[:n_select]] / unit, n_select)


def _greedy(selector, X, y, classes):
    """The greedy criteria on the states of all features, built by blocks (the engine holds them)."""
    n, d = X.shape
    codes = np.empty((n, d), dtype=np.intp)
    states = np.empty(d, dtype=np.intp)
    for start, stop, block in column_blocks(X):
        codes[:, start:stop], states[start:stop] = _it_states(selector, block)
    _too_many_states(states)
    n_select = max(int(selector.n_features_to_select), int(selector.n_ranked))
    result = select_states(codes, states, y, classes.size, selector.criterion, n_select=n_select,
                           beta=selector._beta())
    return _it_result(selector, d, result.ranking, result.relevance, result.criterion, result.n_incremental)


def _mrmr(selector, X, y, classes):
    """``_it_engine.mrmr_fit`` with the states built by blocks and kept as bytes (at most 32
    states), widened for the candidates of the search only."""
    n, d = X.shape
    codes = np.empty((n, d), dtype=np.uint8)
    relevance = np.empty(d)
    n_states = 3
    for start, stop, block in column_blocks(X):
        block_codes, n_states = _states(selector, block)
        codes[:, start:stop] = block_codes
        relevance[start:stop] = mutual_info_from_joint(contingency(block_codes, n_states, y, classes.size))
    by_relevance = np.lexsort((np.arange(d), -relevance))
    pool_size = None if selector.pool_size is None else int(selector.pool_size)
    pool = by_relevance[: min(pool_size or d, d)]
    n_select = min(max(int(selector.n_features_to_select), int(selector.n_ranked)), pool.size)
    picks, values = mrmr_order(codes[:, pool].astype(np.intp), n_states, relevance[pool], n_select,
                               selector.criterion, float(selector.miq_eps))
    picked = pool[picks]
    selector.ranking_ = np.concatenate([picked, by_relevance[~np.isin(by_relevance, picked)]])
    selector.relevance_ = relevance
    selector.criterion_ = values
    selector.diagnostics_ = {"mrmr_n_incremental": int(n_select)}
    scores = np.empty(d)
    scores[selector.ranking_] = np.arange(d, 0, -1, dtype=float)
    return scores


# ----------------------------------------------------------------------------- SVMs through LIBLINEAR
#: l1svm: LIBLINEAR's fits per problem at most, and how each refit tightens: the tolerance divided by
#: ``_TOL_STEP`` (not below ``_TOL_MIN``, where it stops only at its cap and ends further from the
#: optimum), or, after a fit stopped by the cap, the cap times ``_CAP_STEP``
_FITS = 6
_TOL_STEP = 100.0
_TOL_MIN = 1e-11
_CAP_STEP = 10
#: l1svm: LIBLINEAR's first iteration cap, per Newton step of the dense solver's ``max_iter``
_ITER_PER_STEP = 100
#: l1svm: LIBLINEAR's iterations over all fits of one problem at most, per Newton step of ``max_iter``.
#: Without it the growing caps reached 10^9 iterations: on 12,000 x 100,000 text-like counts (z-scaled,
#: 0.1 % non-zeros) one iteration takes about 0.8 ms and the gap stayed above 1e-6 after 2 x 10^5
_BUDGET_PER_STEP = 1000


def _l1_sqhinge_class(X: sp.csr_matrix, yk: np.ndarray, C: float, tol: float, max_iter: int,
                      budget: int) -> tuple[np.ndarray, float, int, float]:
    """min ||w||_1 + |b| + C sum_i max(0, 1 - y_i (x_i^T w + b))^2 by LIBLINEAR (its intercept is a
    constant feature of value 1, penalized like the others: the same problem as ``l1svm``).

    LIBLINEAR stops on a projected-gradient test, not on a gap, so it is refitted (at most
    ``_FITS`` fits, from tolerance ``tol`` and ``max_iter`` iterations, see ``_TOL_STEP``) until
    the relative duality gap of ``l1svm``'s certificate is at most ``tol`` or the fits have used
    ``budget`` iterations in all; a fit stopped by the cap can be worse than an earlier one, so the
    fit of smallest gap is kept. Returns (w, b, iterations, relative gap).
    """
    best: tuple[np.ndarray, float, int, float] | None = None
    liblinear_tol, cap, left = tol, max_iter, budget
    for _ in range(_FITS):
        if left <= 0:
            break
        est = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=C, tol=liblinear_tol,
                        fit_intercept=True, intercept_scaling=1.0, max_iter=min(cap, left), random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # the gap below judges
            est.fit(X, yk)
        w, b = est.coef_[0].copy(), float(est.intercept_[0])
        r = np.maximum(0.0, 1.0 - yk * (X @ w + b))
        yr = yk * r
        g = -2.0 * C * np.append(X.T @ yr, yr.sum())  # the loss's gradient in (w, b)
        P = float(np.abs(w).sum() + abs(b) + C * (r @ r))
        gap = float((P - _dual_value(r, g, C)) / max(P, np.finfo(float).tiny))
        n_iter = int(np.max(est.n_iter_))
        left -= n_iter
        if best is None or gap < best[3]:
            best = (w, b, n_iter, gap)
        if gap <= tol:
            break
        if n_iter >= cap:
            cap *= _CAP_STEP
        elif liblinear_tol > _TOL_MIN:
            liblinear_tol = max(liblinear_tol / _TOL_STEP, _TOL_MIN)
        else:
            break
    return best


def _l1svm_all(selector, X, Y: np.ndarray, C: float) -> tuple[np.ndarray, np.ndarray, int, float]:
    """Every one-vs-rest problem at C: W (d, c), b (c,), most iterations, largest relative gap."""
    d, m = X.shape[1], Y.shape[1]
    W, b = np.zeros((d, m)), np.zeros(m)
    steps, gaps = [], []
    for k in range(m):
        W[:, k], b[k], it, gap = _l1_sqhinge_class(X, Y[:, k], C, float(selector.tol),
                                                   _ITER_PER_STEP * int(selector.max_iter),
                                                   _BUDGET_PER_STEP * int(selector.max_iter))
        steps.append(it)
        gaps.append(gap)
    return W, b, max(steps), max(gaps)


def _l1svm(selector, X, y, classes):
    """``L1SVM._fit`` on CSR: the problem at C and along the path solved by LIBLINEAR (no
    continuation: it only chooses the dense solver's start), then l1svm's ranking rule."""
    d, c = X.shape[1], classes.size
    Y = signed_labels(y, c) if c > 2 else signed_labels(y, 2)[:, 1:]
    C = float(selector.C)
    W, b, n_iter, gap = _l1svm_all(selector, X, Y, C)
    norms = np.linalg.norm(W, axis=1)
    selector.coef_, selector.intercept_, selector.n_iter_ = W, b, n_iter
    margin = np.maximum(0.0, 1.0 - Y * (X @ W + b))
    selector.objective_ = np.array([np.abs(W).sum() + np.abs(b).sum() + C * np.sum(margin**2)])
    converged = gap <= selector.tol

    never_code = selector.path_steps + 1
    stage = np.where(norms > 0, 0, never_code)
    key2 = norms.copy()
    Cj, Wj, bj = C, W, b
    path_converged, points = True, 0
    enough = d if selector.full_path else min(d, selector.n_features_to_select)
    for j in range(1, selector.path_steps + 1):
        if not np.any(stage == never_code) or np.sum(stage < never_code) >= enough:
            break
        Cj *= selector.path_factor
        Wj, bj, _, gap_j = _l1svm_all(selector, X, Y, Cj)
        points += 1
        path_converged &= gap_j <= selector.tol
        nj = np.linalg.norm(Wj, axis=1)
        entering = (stage == never_code) & (nj > 0)
        stage[entering] = j
        key2[entering] = nj[entering]
    never = stage == never_code
    if never.any():
        marg = np.maximum(0.0, 1.0 - Y * (X @ Wj + bj))
        grad = -2.0 * Cj * (X.T @ (Y * marg))
        key2[never] = np.abs(grad[never]).max(axis=1)
    selector.ranking_ = np.lexsort((np.arange(d), -key2, stage))
    selector.diagnostics_ = {
        "n_nonzero": int(np.sum(stage == 0)),
        "n_entered_on_path": int(np.sum((stage > 0) & ~never)),
        "n_never_entered": int(np.sum(never)),
        "path_points": points,
        "converged": bool(converged),
        "path_converged": bool(path_converged),
        "duality_gap": float(gap),
        "solver": "liblinear",  # whatever ``solver`` says: the dense solvers do not read CSR
    }
    if not converged:
        warnings.warn(f"l1svm: relative duality gap {gap:.2g} > tol={selector.tol} on sparse data after "
                      f"{_BUDGET_PER_STEP * int(selector.max_iter):,} iterations of LIBLINEAR per problem at most; "
                      "raise max_iter for a closer optimum.", ConvergenceWarning, stacklevel=3)
    return norms


def _cssvm(selector, X, y, classes):
    """``CrammerSingerSVM._fit`` on CSR by LIBLINEAR's Crammer-Singer solver (the problem of
    ``_svm`` with unit scales and the intercept a regularized constant feature of value 1)."""
    c = classes.size
    C = float(selector.C)
    est = LinearSVC(loss="hinge", multi_class="crammer_singer", fit_intercept=bool(selector.fit_intercept),
                    intercept_scaling=1.0, C=C, tol=float(selector.tol), max_iter=int(selector.max_iter),
                    dual=True, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        est.fit(X, y)
    ok = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    U = est.coef_.T
    b = np.asarray(est.intercept_, dtype=float) if selector.fit_intercept else np.zeros(U.shape[1])
    if c == 2:
        # scikit-learn returns w_1 - w_0 for two classes; the optimum splits it evenly, as
        # minimizing ||w_0||^2 + ||w_1||^2 at a fixed difference does (the loss sees only it)
        U, b = np.hstack([-U / 2, U / 2]), np.concatenate([-b / 2, b / 2])
    F = X @ U + b
    P = 0.5 * float(np.sum(U * U) + b @ b) + C * loss_value(F, y, "crammer_singer")
    selector.coef_, selector.intercept_ = U, b
    selector.objective_ = np.array([P])
    selector.n_iter_ = int(np.max(est.n_iter_))
    selector.diagnostics_ = {"converged": ok, "duality_gap": float("nan"), "solver": "liblinear"}
    if not ok:
        warnings.warn(f"cssvm: LIBLINEAR stopped before tol={selector.tol} after {selector.n_iter_} "
                      "iterations on sparse data.", ConvergenceWarning, stacklevel=3)
    return np.linalg.norm(U, axis=1)


_ROUTES: dict[str, Callable[..., np.ndarray]] = {
    "fisher": _by_columns,
    "fstat": _by_columns,
    "gini": _by_columns,
    "variance": _by_columns,
    "ttest": lambda s, X, y, c: _by_columns(s, X, y, c, ("tstats_",)),
    "random": _random,
    "trace_ratio": _trace_ratio,
    "kruskal": _kruskal,
    "auc": _auc,
    "chi2": _chi2,
    "infogain": _infogain,
    "su": _su,
    "mim": _mim,
    **dict.fromkeys(_GREEDY, _greedy),
    "mrmr": _mrmr,
    "l1svm": _l1svm,
    "cssvm": _cssvm,
}
