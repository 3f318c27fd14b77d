"""The built-in ``linear_svm`` on LIBSVM, evaluated for every k and every C without redundant work.

:func:`fsbench.evaluation.protocol.cv_accuracy_grid` and the final evaluation train scikit-learn's
``SVC(kernel="linear", C=C)`` for every inner fold x k x C, then once per k. This module computes
the same numbers (every prediction, hence every count, chosen C and inner accuracy) faster:

- **One kernel matrix per k, shared by every fold, every C and the refit.** The linear kernel of
  the training part's top-k columns is computed once per k, continuing the previous k's sums;
  each inner fold's training and validation blocks are slices of it, and so is the refit's; only
  the test rows' block is new.
  scikit-learn's plain route recomputes each entry inside every fit (7 C x 8 folds) and in every
  one-vs-one subproblem of a fit.
- **LIBSVM called directly** (``sklearn.svm._libsvm.fit`` and ``predict``, the functions
  ``SVC`` calls), with the arguments ``SVC`` passes, skipping its per-fit validation and copies.
- **Counts cached across calls** in the process, keyed by the content of the data, the fold,
  the ranking's first k features and the solver's parameters: a ranking evaluated twice (a tuned
  selector's grid points that rank a fold alike, a tuned selector whose final fit equals a
  fixed-parameter selector's) is evaluated once. A cached count is the count the computation
  gives, so rows do not depend on n_jobs or on the order tasks run in. An inner fold's entry
  keeps, per C, the correct predictions and whether the fit converged; a refit's entry keeps
  also, per class, how many test samples were predicted as it and how many of those were right
  (:class:`Counts`), so a cached row carries the same per-class counts and convergence as a
  computed one.

Convergence. ``SVC.fit`` warns ("Solver terminated early", a ``ConvergenceWarning``) exactly
when LIBSVM's fit status is 1, which LIBSVM sets only when a solve stops at ``max_iter``
iterations; with ``max_iter=-1`` (scikit-learn's default, and the built-in ``linear_svm``'s) the
limit is off, the status is always 0 and no fit counts as unconverged. A configured
``max_iter`` (a parameter this route passes on) can end a solve early: such a fit counts as
unconverged here, as ``SVC.fit`` would warn. The route reads the status LIBSVM returns, never
the warning.

Which kernel values. LIBSVM's ``kernel="linear"`` takes ``K(x, z)`` from BLAS ``ddot``, whose
kernel OpenBLAS chooses per CPU: the Haswell kernel sums a vector shorter than 16 in order, the
SkylakeX kernel fuses each product into the sum, and both sum longer vectors in SIMD-shaped
blocks, so the last bits of a kernel value, and with them a prediction at a tie, depend on the
machine (measured: a GLIOMA test sample whose decision value is 0 in exact arithmetic came out
-8.9e-16 on one kernel and +6.7e-16 on the other, which moved the row's count from 3 to 4). Here
the kernel is fsbench's: every entry is the products of the k features summed in the ranking's
order, one rounding each (:func:`fsbench.fixed_order.linear_kernel`), the same bits on every
machine; LIBSVM gets it as ``kernel="precomputed"``, in training (the Q matrix, its diagonal) and in
prediction alike, and then performs the same floating-point operations in the same order (the
working-set selection, the shrinking, the stopping test, ``rho``, the one-vs-one votes with ties
to the first class) on any machine. This is ``SVC(kernel="linear")`` wherever BLAS's ``ddot``
sums in that order (OpenBLAS's Haswell kernel below 16 features: bit for bit); elsewhere the two
differ only where a row is decided by rounding. A sum in order also makes the kernels of every k
one computation: the kernel of the first k features is that of the first k - 10 continued by ten
more terms (:func:`fsbench.fixed_order.extend_linear_kernel`), bit for bit.

What it does not change: the tuning rules (:func:`fsbench.evaluation.protocol.best_point` chooses C),
the pooled inner accuracy (correct / total over the folds), the folds, the classes' encoding and
order (``np.unique``, as ``SVC``), LIBSVM's parameters (read from the estimator fsbench builds:
``tol``, ``shrinking``, ``cache_size``, ``max_iter``). It applies to the classifiers that are
exactly ``SVC(kernel="linear")`` with scikit-learn's defaults but C (:func:`supports`); every
other classifier takes the generic route.
"""

from __future__ import annotations

import hashlib
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.svm import SVC
from sklearn.svm import _libsvm as libsvm

from fsbench import fixed_order

#: counts cached per process, the least recently used dropped first (an entry is about 200 bytes)
_CACHE: OrderedDict[bytes, Any] = OrderedDict()
CACHE_SIZE = 50_000


# ----------------------------------------------------------------------------- which classifiers
@dataclass(frozen=True)
class Solver:
    """LIBSVM's parameters as ``SVC.fit`` passes them (C aside)."""

    tol: float
    shrinking: bool
    cache_size: float
    max_iter: int


_SVC_DEFAULTS = SVC(kernel="linear").get_params()
#: parameters that may differ from SVC's defaults without changing the problem LIBSVM solves
_FREE = {"C", "tol", "shrinking", "cache_size", "max_iter", "verbose", "random_state",
         "decision_function_shape"}


def solver_for(estimators: Sequence[Any]) -> tuple[Solver, list[float]] | None:
    """The solver and each estimator's C, when every estimator is ``SVC(kernel="linear")`` with
    scikit-learn's defaults but C and the solver's own parameters (equal across the list); else None.

    ``decision_function_shape`` does not enter ``predict`` (``break_ties`` is False), and
    ``random_state`` only seeds probability estimates, which are off.
    """
    Cs = []
    solvers = set()
    for est in estimators:
        if type(est) is not SVC:
            return None
        params = est.get_params()
        if any(params[key] != value for key, value in _SVC_DEFAULTS.items() if key not in _FREE):
            return None
        C = params["C"]
        if isinstance(C, bool) or not isinstance(C, int | float | np.number) or not C > 0:
            return None
        Cs.append(float(C))
        solvers.add(Solver(float(params["tol"]), bool(params["shrinking"]), float(params["cache_size"]),
                           int(params["max_iter"])))
    return (solvers.pop(), Cs) if len(solvers) == 1 else None


# ----------------------------------------------------------------------------- what a fit gives
@dataclass(frozen=True, eq=False)
class Counts:
    """What fitting once per C and predicting the evaluated rows gives.

    ``correct[j]``: correct predictions at the j-th C; ``unconverged[j]``: 1 when that fit did
    not converge (the condition under which the estimator's ``fit`` warns with
    ``ConvergenceWarning``), else 0. Given the classes, also per C and class (in the order of
    ``classes``): ``predicted[j, c]``, the evaluated rows predicted as class c, and
    ``right[j, c]``, those of them that are of class c; else None.
    """

    correct: np.ndarray
    unconverged: np.ndarray
    predicted: np.ndarray | None = None
    right: np.ndarray | None = None


@dataclass(frozen=True)
class Refit:
    """One k's final step: the refit's correct test predictions (``n_correct``), per class (in the
    dataset's order) the test samples predicted as it (``predicted``) and the right ones among
    them (``correct``), and ``unconverged``, how many fits of that k did not converge: the inner-CV
    fits of every fold and grid point, and the refit."""

    n_correct: int
    predicted: tuple[int, ...]
    correct: tuple[int, ...]
    unconverged: int


def per_class(predictions: np.ndarray, truth: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per class of ``classes`` (sorted, as ``np.unique`` gives them): how many ``predictions`` are
    that class, and how many of those equal ``truth`` (the confusion matrix's column sums and
    diagonal). A prediction that is none of the classes is an error."""
    predictions, truth = np.asarray(predictions), np.asarray(truth)
    c = classes.size
    where = np.minimum(np.searchsorted(classes, predictions), c - 1)
    known = classes[where] == predictions
    if not known.all():
        raise ValueError(f"the classifier predicted {predictions[~known][0]!r}, which is not a class of the data")
    hits = predictions == truth
    return (np.bincount(where, minlength=c).astype(np.int64),
            np.bincount(where[hits], minlength=c).astype(np.int64))


def fit_recording(estimator: Any, X: np.ndarray, y: np.ndarray) -> bool:
    """``estimator.fit(X, y)``; whether it warned with ``ConvergenceWarning``. Those warnings are
    recorded (every one, not once per place) and kept off the console; any other warning is
    issued again as it would have been."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        estimator.fit(X, y)
    unconverged = False
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            unconverged = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return unconverged


# ----------------------------------------------------------------------------- LIBSVM calls
def _counts(train: np.ndarray, y_train: np.ndarray, evaluate: np.ndarray, y_evaluate: np.ndarray,
            Cs: Sequence[float], solver: Solver, classes: np.ndarray | None = None) -> Counts:
    """Correct predictions of ``y_evaluate`` and convergence for every C, and the per-class counts
    when ``classes`` is given (:class:`Counts`). ``train`` and ``evaluate`` are kernel blocks
    (training rows x training rows, evaluated rows x training rows); LIBSVM gets the arguments
    ``SVC(kernel="precomputed")`` gives it. A fit is unconverged when LIBSVM's status is 1
    (``SVC.fit``'s ``_warn_from_fit_status``)."""
    labels, y_code = np.unique(y_train, return_inverse=True)
    if labels.size < 2:  # SVC's own error
        SVC(kernel="linear").fit(np.zeros((y_train.size, 1)), y_train)
    y_code = y_code.astype(np.float64)
    train = np.ascontiguousarray(train, dtype=np.float64)
    evaluate = np.ascontiguousarray(evaluate, dtype=np.float64)
    if not (np.isfinite(train).all() and np.isfinite(evaluate).all()):  # SVC refuses them too
        raise ValueError("Input X contains NaN or infinity.")
    out = np.empty(len(Cs), dtype=np.int64)
    unconverged = np.zeros(len(Cs), dtype=np.int64)
    predicted = right = None
    if classes is not None:
        predicted = np.empty((len(Cs), classes.size), dtype=np.int64)
        right = np.empty((len(Cs), classes.size), dtype=np.int64)
    libsvm.set_verbosity_wrap(0)
    for j, C in enumerate(Cs):
        model = libsvm.fit(train, y_code, svm_type=0, sample_weight=np.empty(0),
                           class_weight=np.ones(labels.size), kernel="precomputed", C=C, nu=0.5, probability=0,
                           degree=3, shrinking=solver.shrinking, tol=solver.tol, cache_size=solver.cache_size,
                           coef0=0.0, gamma=0.0, epsilon=0.1, max_iter=solver.max_iter, random_seed=0)
        support, support_vectors, n_support, dual_coef, intercept, prob_a, prob_b, fit_status = model[:8]
        codes = libsvm.predict(evaluate, support, support_vectors, n_support, dual_coef, intercept, prob_a,
                               prob_b, svm_type=0, kernel="precomputed", degree=3, coef0=0.0, gamma=0.0,
                               cache_size=solver.cache_size)
        predictions = labels[codes.astype(np.intp)]
        out[j] = int(np.sum(predictions == y_evaluate))
        unconverged[j] = int(fit_status == 1)
        if classes is not None:
            predicted[j], right[j] = per_class(predictions, y_evaluate, classes)
    return Counts(out, unconverged, predicted, right)


# ----------------------------------------------------------------------------- cache
def digest(*parts: Any) -> bytes:
    """A key from arrays (dtype, shape and values) and plain values (their repr): from content only.

    An object array's bytes are pointers, which a garbage-collected object's successor may reuse
    with another value; its values are hashed through their repr instead.
    """
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        if isinstance(part, np.ndarray):
            a = np.ascontiguousarray(part)
            h.update(repr((a.dtype.str, a.shape)).encode())
            h.update(repr(a.tolist()).encode() if a.dtype.hasobject else a.tobytes())
        else:
            h.update(repr(part).encode())
        h.update(b"|")
    return h.digest()


def _remember(key: bytes, value: Any) -> None:
    _CACHE[key] = value
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)


def _recall(key: bytes) -> Any:
    value = _CACHE.get(key)
    if value is not None:
        _CACHE.move_to_end(key)
    return value


def clear_cache() -> None:
    """Forget every cached count (tests, benchmarks)."""
    _CACHE.clear()


# ----------------------------------------------------------------------------- the protocol's steps
class _Columns:
    """The first k columns of a ranking, and their kernels over the training rows and the test
    rows, computed only when a count is not cached, continuing the kernels of ``previous`` (the
    same ranking's columns for a smaller k) when it computed them."""

    def __init__(self, X: np.ndarray, cols: np.ndarray, X_test: np.ndarray | None = None,
                 previous: _Columns | None = None):
        self.cols, self.X_test = np.asarray(cols), X_test
        self.A = np.ascontiguousarray(X[:, self.cols])
        self._K: np.ndarray | None = None
        self._K_test: np.ndarray | None = None
        self._previous = previous if previous is not None and _extends(previous.cols, self.cols) else None

    @property
    def K(self) -> np.ndarray:
        if self._K is None:
            self._K = self._continue(self._previous._K if self._previous else None, self.A)
        return self._K

    @property
    def K_test(self) -> np.ndarray:
        if self._K_test is None:
            B = np.ascontiguousarray(self.X_test[:, self.cols])
            self._K_test = self._continue(self._previous._K_test if self._previous else None, B)
        return self._K_test

    def _continue(self, start: np.ndarray | None, rows: np.ndarray) -> np.ndarray:
        if start is None:
            return fixed_order.linear_kernel(rows, self.A)
        done = self._previous.cols.size
        return fixed_order.extend_linear_kernel(start.copy(), rows[:, done:], self.A[:, done:])

    def forget_previous(self) -> None:
        """Drop the link to the smaller k's kernels (memory), once this k has what it needs."""
        self._previous = None


def _extends(shorter: np.ndarray, longer: np.ndarray) -> bool:
    return shorter.size <= longer.size and np.array_equal(longer[:shorter.size], shorter)


def _data_key(X: np.ndarray, y: np.ndarray, Cs: Sequence[float], solver: Solver) -> bytes:
    """What an inner fold's counts depend on besides the fold and the columns."""
    return digest(X, y, solver, [float(C) for C in Cs])


def _pooled(y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]], columns: _Columns, cols: np.ndarray,
            Cs: Sequence[float], solver: Solver, data_key: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Correct validation predictions and unconverged fits summed over ``folds``, for every C
    (each fold's cached)."""
    correct = np.zeros(len(Cs), dtype=np.int64)
    unconverged = np.zeros(len(Cs), dtype=np.int64)
    for fit, val in folds:
        found = fold_counts(y, fit, val, columns, Cs, solver, digest(data_key, fit, val, cols))
        correct += found.correct
        unconverged += found.unconverged
    return correct, unconverged


def fold_counts(y: np.ndarray, fit: np.ndarray, val: np.ndarray, columns: _Columns,
                Cs: Sequence[float], solver: Solver, key: bytes) -> Counts:
    """Correct validation predictions and convergence of one inner fold for every C (cached under
    ``key``)."""
    found = _recall(key)
    if found is None:
        K = columns.K
        found = _counts(K[np.ix_(fit, fit)], y[fit], K[np.ix_(val, fit)], y[val], Cs, solver)
        _remember(key, found)
    return found


def refit_counts(y_train: np.ndarray, y_test: np.ndarray, columns: _Columns, C: float, solver: Solver,
                 key: bytes, classes: np.ndarray) -> Counts:
    """The refit on the whole training part: its correct test predictions, convergence and
    per-class counts over ``classes`` (cached under ``key``, which must cover ``classes``)."""
    found = _recall(key)
    if found is None:
        found = _counts(columns.K, y_train, columns.K_test, y_test, [C], solver, classes)
        _remember(key, found)
    return found


def dataset_classes(y_train: np.ndarray, y_test: np.ndarray) -> np.ndarray:
    """The classes of a split's two parts together, sorted (fsbench's labels 0..c-1: all c of them)."""
    return np.unique(np.concatenate([np.asarray(y_train).ravel(), np.asarray(y_test).ravel()]))


def refit_of(found: Counts, inner_unconverged: int) -> Refit:
    """A k's :class:`Refit` from its refit's counts (one C) and its inner fits' unconverged count."""
    return Refit(int(found.correct[0]), tuple(int(v) for v in found.predicted[0]),
                 tuple(int(v) for v in found.right[0]), int(inner_unconverged) + int(found.unconverged[0]))


def inner_counts(X: np.ndarray, y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]],
                 rankings: Sequence[np.ndarray], ks: Sequence[int], Cs: Sequence[float], solver: Solver,
                 ) -> np.ndarray:
    """Correct validation predictions pooled over the folds, shape (len(ks), len(Cs)).

    Fold f is trained and validated on the first k features of ``rankings[f]``. Folds that share
    a ranking share one kernel matrix per k over all rows of X, sliced per fold.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    data_key = _data_key(X, y, Cs, solver)
    out = np.zeros((len(ks), len(Cs)), dtype=np.int64)
    groups: dict[bytes, list[int]] = {}
    for f, ranking in enumerate(rankings):
        groups.setdefault(digest(np.asarray(ranking)[:max(ks)]), []).append(f)
    for members in groups.values():
        ranking = np.asarray(rankings[members[0]])
        columns = None
        for i, k in enumerate(ks):
            cols = ranking[:k]
            columns = _Columns(X, cols, previous=columns)
            out[i] += _pooled(y, [folds[f] for f in members], columns, cols, Cs, solver, data_key)[0]
            columns.forget_previous()
    return out


def evaluate(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
             ranking: np.ndarray, ks: Sequence[int], folds: Sequence[tuple[np.ndarray, np.ndarray]],
             Cs: Sequence[float], solver: Solver, choose: Callable[[np.ndarray], int], *,
             classes: np.ndarray | None = None) -> tuple[np.ndarray, list[int], list[Refit]]:
    """One ranking's evaluation: for every k, the inner-CV accuracy of every C (pooled correct /
    total over ``folds``; none without folds), the index ``choose`` picks from that row (0
    without folds), and its refit on the whole training part scored on the test part.

    One kernel matrix per k serves every fold, every C and the refit. Returns (accuracy grid,
    chosen indices, one :class:`Refit` per k: correct test predictions, per-class counts over
    ``classes`` (default: the classes of ``y_train`` and ``y_test`` together) and unconverged
    fits of that k, inner and refit); the grid is what :func:`inner_counts` / total gives.
    """
    X_train = np.asarray(X_train, dtype=np.float64)
    X_test = np.asarray(X_test, dtype=np.float64)
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    classes = dataset_classes(y_train, y_test) if classes is None else np.asarray(classes)
    total = sum(val.size for _, val in folds)
    inner_key = _data_key(X_train, y_train, Cs, solver)
    test_key = digest(X_train, y_train, X_test, y_test, solver, classes)
    grid = np.zeros((len(ks), len(Cs)))
    chosen, refits = [], []
    columns = None
    for i, k in enumerate(ks):
        cols = np.asarray(ranking)[:k]
        columns = _Columns(X_train, cols, X_test, previous=columns)
        inner_unconverged = 0
        if folds:
            correct, unconverged = _pooled(y_train, folds, columns, cols, Cs, solver, inner_key)
            grid[i] = correct / total
            inner_unconverged = int(unconverged.sum())
            j = choose(grid[i])
        else:
            j = 0
        chosen.append(j)
        found = refit_counts(y_train, y_test, columns, float(Cs[j]), solver,
                             digest(test_key, cols, float(Cs[j])), classes)
        refits.append(refit_of(found, inner_unconverged))
        columns.forget_previous()
    return grid, chosen, refits
