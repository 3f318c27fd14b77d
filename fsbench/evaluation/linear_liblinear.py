"""scikit-learn's ``LinearSVC`` as fsbench builds it, evaluated for every k and every C without its per-fit overhead.

:func:`fsbench.evaluation.protocol.cv_accuracy_grid` and the final evaluation train the configured
classifier for every inner fold x k x C, then once per k. For the built-in ``crammer_singer``
(``LinearSVC(multi_class="crammer_singer", max_iter=20000)``) and ``linear_svm`` on LIBLINEAR
(``LinearSVC(max_iter=20000)``) much of that time is not LIBLINEAR's (48-82% on the SL2P
datasets, benchmarks/protocol.md): it is ``LinearSVC.fit``'s and ``predict``'s validation
(parameter checks, ``validate_data``, the target's type, the label encoder, the class weights)
and Python around each of the small solves. This module computes the same numbers (every
prediction, hence every count, chosen C and inner accuracy):

- **LIBLINEAR called directly**: ``sklearn.svm._liblinear.train_wrap``, the function
  ``LinearSVC.fit`` reaches through ``sklearn.svm._base._fit_liblinear``, with the arguments
  that path passes; the labels are encoded once per fold, not once per fit.
- **The top-k columns sliced once per (fold, k)** and reused by every C.
- **Counts cached across calls** in the process (the cache of :mod:`fsbench.evaluation.linear_libsvm`,
  under keys of their own), keyed by the content of the data, the fold, the ranking's first k
  features and the solver's parameters (the seed included): a ranking evaluated twice is
  evaluated once. A cached count is the count the computation gives (LIBLINEAR reseeds its
  generator on every call), so rows do not depend on n_jobs or on the order tasks run in.

Why the predictions are the same, bit for bit. Nothing numerical is reimplemented; the same
compiled code gets the same bytes:

- *Training.* ``LinearSVC.fit`` converts X to a C-ordered float64 array (``validate_data(...,
  dtype=np.float64, order="C")``); the route passes the same values in the same layout (an
  inner fold's ``X[np.ix_(fit, cols)]``, C-ordered as it is; the refit's ``X_train[:, cols]``,
  made C-ordered as ``validate_data`` makes it). The labels are ``LabelEncoder``'s codes as
  float64, as ``_fit_liblinear`` makes them; the class weights are ``compute_class_weight(None)``
  (ones), the sample weights ``_check_sample_weight(None)`` (ones), the bias is
  ``intercept_scaling`` (``fit_intercept`` is True), ``epsilon`` 0.1, ``tol``, ``C`` and
  ``max_iter`` the estimator's, the solver type ``_get_liblinear_solver_type`` of the dual flag
  ``_validate_dual_parameter`` picks for that block's shape (``dual="auto"``: the dual
  coordinate descent when a block has fewer rows than columns, else the primal Newton solver for
  one-vs-rest; always type 4 for Crammer-Singer), and the seed
  ``check_random_state(random_state).randint(np.iinfo("i").max)``: for an integer
  ``random_state`` (the only kind the route takes) the same number on every fit. LIBLINEAR
  reseeds its generator from it on every call, so its iterates, stopping test and weights are
  the ones ``LinearSVC.fit`` gets, whatever ran before.
- *The model.* ``coef_`` is the weight matrix without its last column and ``intercept_`` that
  column times ``intercept_scaling`` (views and arithmetic as ``_fit_liblinear`` forms them, so
  the same memory layout); for Crammer-Singer on two classes, the difference of the two rows,
  as ``LinearSVC.fit`` takes it.
- *Prediction.* ``decision_function`` is ``X @ coef_.T + intercept_`` (``safe_sparse_dot`` is
  ``@`` on dense arrays), then ``scores > 0`` for one column, else ``argmax`` (ties to the first
  class), indexing ``classes_ = np.unique(y)``. The route evaluates the same expression on an
  array of the same values, shape and memory layout as the one the generic route passes
  (an inner fold's validation block ``X[np.ix_(val, cols)]`` is C-ordered, the refit's test
  block ``X_test[:, cols]`` is Fortran-ordered), so numpy calls the same BLAS routine with the
  same arguments.

The wrapper's own arguments and sklearn's defaults are checked, not assumed: the first time a
process asks for the route, :func:`available` fits a few small problems both ways (this route and
``LinearSVC.fit``) and compares the weights bit for bit; on any difference or error (another
scikit-learn whose internals moved) the route is off and every classifier takes the generic route.

What it does not change: the tuning rules (:func:`fsbench.evaluation.protocol.best_point` chooses C), the
pooled inner accuracy, the folds, the classes' encoding and order. ConvergenceWarning, which
``_fit_liblinear`` raises when LIBLINEAR's iteration count reaches ``max_iter`` (the largest of
the counts ``train_wrap`` returns, one per one-vs-rest problem, ``>= max_iter``), is never raised
here: the route counts a fit under exactly that condition as unconverged (:class:`Counts`,
cached with the counts), where the generic route records the warning
(:func:`fsbench.evaluation.protocol._accuracy`); the weights are the same either way (the warning comes
after the solve). (scikit-learn's LIBLINEAR ignores ``max_iter`` for Crammer-Singer, which stops
at its own 100000 iterations; ``LinearSVC`` warns all the same when the count it returns reaches
``max_iter``, and this route passes ``max_iter`` and counts as it does.) It applies to classifiers that are
exactly ``LinearSVC`` with scikit-learn's defaults but ``C``, ``max_iter``, ``multi_class`` and an
integer ``random_state`` (:func:`solver_for`), on float64 arrays of finite values and
classification targets (:func:`data_ok`); everything else takes the generic route, and degenerate
blocks (no rows, no columns, one class) are handed to ``LinearSVC`` itself, which raises as it
would.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.preprocessing import LabelEncoder
from sklearn.svm import LinearSVC
from sklearn.svm import _liblinear as liblinear
from sklearn.svm._base import _get_liblinear_solver_type
from sklearn.svm._classes import _validate_dual_parameter
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target

from fsbench.evaluation.linear_libsvm import (
    Counts,
    Refit,
    _recall,
    _remember,
    dataset_classes,
    digest,
    fit_recording,
    per_class,
    refit_of,
)

#: the parameters that may differ from LinearSVC's defaults (each passed through as fit passes it)
_FREE = ("C", "max_iter", "multi_class", "random_state")
_DEFAULTS = LinearSVC().get_params()
#: the defaults this module implements (another scikit-learn with other defaults: no route)
_EXPECTED = {"class_weight": None, "dual": "auto", "fit_intercept": True, "intercept_scaling": 1,
             "loss": "squared_hinge", "penalty": "l2", "tol": 1e-4, "verbose": 0}
#: whether the route reproduces LinearSVC in this process (None: not checked yet)
STATE: dict[str, bool | None] = {"available": None}


# ----------------------------------------------------------------------------- which classifiers
@dataclass(frozen=True)
class Solver:
    """LIBLINEAR's parameters as ``LinearSVC.fit`` passes them (C aside)."""

    multi_class: str
    max_iter: int
    random_state: int

    @property
    def seed(self) -> int:
        """The seed ``_fit_liblinear`` draws for LIBLINEAR: ``check_random_state(random_state).randint(INT_MAX)``."""
        return int(check_random_state(self.random_state).randint(np.iinfo("i").max))

    def estimator(self, C: float) -> LinearSVC:
        """The estimator this solver stands for."""
        return LinearSVC(C=C, max_iter=self.max_iter, multi_class=self.multi_class, random_state=self.random_state)


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def solver_for(estimators: Sequence[Any]) -> tuple[Solver, list[float]] | None:
    """The solver and each estimator's C, when every estimator is ``LinearSVC`` with scikit-learn's
    defaults but C, ``max_iter``, ``multi_class`` and an integer ``random_state`` (the last three
    equal across the list) and the route reproduces ``LinearSVC`` in this process; else None."""
    if any(_DEFAULTS.get(key, object()) != value for key, value in _EXPECTED.items()) \
            or set(_DEFAULTS) != set(_EXPECTED) | set(_FREE):
        return None
    Cs = []
    solvers = set()
    for est in estimators:
        if type(est) is not LinearSVC:
            return None
        params = est.get_params()
        if any(params[key] != value or type(params[key]) is not type(value) for key, value in _EXPECTED.items()):
            return None
        C, max_iter, multi_class, random_state = (params[key] for key in _FREE)
        if isinstance(C, bool) or not isinstance(C, int | float | np.number) or not 0 < C < np.inf:
            return None
        if not (_is_int(max_iter) and 0 < max_iter < 2**31) or multi_class not in ("ovr", "crammer_singer"):
            return None
        if not (_is_int(random_state) and 0 <= random_state < 2**32):
            return None
        Cs.append(float(C))
        solvers.add(Solver(str(multi_class), int(max_iter), int(random_state)))
    if len(solvers) != 1 or not available():
        return None
    return solvers.pop(), Cs


def data_ok(y: Any, *Xs: Any) -> bool:
    """Whether the arrays are what the route handles exactly as ``LinearSVC``: 2-d float64 arrays of
    finite values (``fit`` would convert other dtypes, and ``predict`` would compute on them
    unconverted), a 1-d ``y`` of binary or multi-class labels. Otherwise the generic route runs
    (and raises what scikit-learn raises)."""
    for X in Xs:
        if not (isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2 and np.isfinite(X).all()):
            return False
    if not (isinstance(y, np.ndarray) and y.ndim == 1):
        return False
    try:
        return type_of_target(y) in ("binary", "multiclass")
    except (TypeError, ValueError):
        return False


# ----------------------------------------------------------------------------- LIBLINEAR calls
class _Labels:
    """One training part's labels as ``LinearSVC.fit`` encodes them."""

    def __init__(self, y: np.ndarray):
        self.classes = np.unique(y)  # LinearSVC.classes_, which predict indexes
        encoder = LabelEncoder()
        codes = encoder.fit_transform(y)  # _fit_liblinear's y_ind
        self.y_ind = np.require(np.asarray(codes, dtype=np.float64).ravel(), requirements="W")
        self.class_weight = np.ones(encoder.classes_.shape[0], dtype=np.float64, order="C")


def _fit(A: np.ndarray, labels: _Labels, C: float, solver: Solver, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(coef_, intercept_) of ``LinearSVC.fit`` on the C-ordered float64 block A."""
    return _train(A, labels, C, solver, seed)[:2]


def _train(A: np.ndarray, labels: _Labels, C: float, solver: Solver, seed: int,
           ) -> tuple[np.ndarray, np.ndarray, bool]:
    """(coef_, intercept_, unconverged) of ``LinearSVC.fit`` on the C-ordered float64 block A;
    unconverged is ``_fit_liblinear``'s warning condition, ``max(n_iter_) >= max_iter``."""
    intercept_scaling = _EXPECTED["intercept_scaling"]
    dual = _validate_dual_parameter("auto", "squared_hinge", "l2", solver.multi_class, A)
    solver_type = _get_liblinear_solver_type(solver.multi_class, "l2", "squared_hinge", dual)
    raw_coef, n_iter = liblinear.train_wrap(A, labels.y_ind, False, solver_type, _EXPECTED["tol"], intercept_scaling,
                                            C, labels.class_weight, solver.max_iter, seed, 0.1,
                                            np.ones(A.shape[0], dtype=np.float64))
    coef = raw_coef[:, :-1]
    intercept = intercept_scaling * raw_coef[:, -1]
    if solver.multi_class == "crammer_singer" and labels.classes.size == 2:
        coef = (coef[1] - coef[0]).reshape(1, -1)
        intercept = np.array([intercept[1] - intercept[0]])
    return coef, intercept, bool(np.max(n_iter) >= solver.max_iter)


def _predict(B: np.ndarray, coef: np.ndarray, intercept: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``LinearSVC.predict``: the decision values' sign for one column, else their argmax."""
    scores = B @ coef.T + intercept
    if scores.shape[1] == 1:
        return classes.take((scores.reshape(-1) > 0).astype(np.intp), axis=0)
    return classes.take(scores.argmax(axis=1), axis=0)


def _plain_predictions(A: np.ndarray, y_fit: np.ndarray, B: np.ndarray, C: float, solver: Solver,
                       ) -> tuple[np.ndarray, bool]:
    """The generic computation (``LinearSVC`` itself), for blocks it refuses or treats specially:
    the predictions on B and whether the fit warned with ``ConvergenceWarning`` (recorded, not shown)."""
    clf = solver.estimator(C)
    unconverged = fit_recording(clf, A, y_fit)
    return clf.predict(B), unconverged


def _counts(A: np.ndarray, y_fit: np.ndarray, B: np.ndarray, y_eval: np.ndarray, Cs: Sequence[float],
            solver: Solver, classes: np.ndarray | None = None) -> Counts:
    """Correct predictions of ``y_eval`` on B by ``LinearSVC(C).fit(A, y_fit)`` and whether the fit
    converged, for every C, and the per-class counts over ``classes`` when given (:class:`Counts`).

    A must be C-ordered float64 (what ``fit`` makes of its input) and B laid out as the generic
    route's ``predict`` input."""
    labels = _Labels(y_fit)
    plain = labels.classes.size < 2 or 0 in A.shape or 0 in B.shape
    seed = solver.seed
    liblinear.set_verbosity_wrap(0)  # LIBLINEAR's global switch, which fit sets from verbose (0) every time
    out = np.empty(len(Cs), dtype=np.int64)
    unconverged = np.zeros(len(Cs), dtype=np.int64)
    predicted = right = None
    if classes is not None:
        predicted = np.empty((len(Cs), classes.size), dtype=np.int64)
        right = np.empty((len(Cs), classes.size), dtype=np.int64)
    for j, C in enumerate(Cs):
        if plain:
            predictions, warned = _plain_predictions(A, y_fit, B, C, solver)
        else:
            coef, intercept, warned = _train(A, labels, C, solver, seed)
            predictions = _predict(B, coef, intercept, labels.classes)
        out[j] = int(np.sum(predictions == y_eval))
        unconverged[j] = int(warned)
        if classes is not None:
            predicted[j], right[j] = per_class(predictions, y_eval, classes)
    return Counts(out, unconverged, predicted, right)


# ----------------------------------------------------------------------------- the self-check
def _check_problems() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(17)
    problems = []
    for n, d, c in ((24, 40, 3), (40, 6, 3), (20, 30, 2), (30, 5, 2)):  # dual and primal, multi-class and binary
        y = np.arange(n) % c
        X = rng.standard_normal((n, d)) + y[:, None] * 0.3
        problems.append((X, np.array(["a", "b", "c"])[y]))
    return problems


def available() -> bool:
    """Whether this route's weights equal ``LinearSVC.fit``'s, bit for bit, on a few small problems
    (both solvers of one-vs-rest, Crammer-Singer, binary and multi-class); checked once per process."""
    if STATE["available"] is None:
        liblinear.set_verbosity_wrap(0)
        try:
            ok = True
            for X, y in _check_problems():
                for multi_class in ("ovr", "crammer_singer"):
                    solver = Solver(multi_class, 50, 3)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        ref = solver.estimator(0.7).fit(X, y)
                    coef, intercept = _fit(np.ascontiguousarray(X), _Labels(y), 0.7, solver, solver.seed)
                    ok = ok and np.array_equal(ref.coef_, coef) and np.array_equal(ref.intercept_, intercept) \
                        and np.array_equal(ref.predict(X), _predict(X, coef, intercept, _Labels(y).classes))
        except Exception:  # noqa: BLE001 - another scikit-learn's internals: no route, the generic one runs
            ok = False
        STATE["available"] = bool(ok)
    return bool(STATE["available"])


# ----------------------------------------------------------------------------- the protocol's steps
def _data_key(X: np.ndarray, y: np.ndarray, Cs: Sequence[float], solver: Solver) -> bytes:
    """What an inner fold's counts depend on besides the fold and the columns."""
    return digest("liblinear-inner", X, y, solver, [float(C) for C in Cs])


def _pooled(X: np.ndarray, y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]], cols: np.ndarray,
            Cs: Sequence[float], solver: Solver, data_key: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Correct validation predictions and unconverged fits summed over ``folds`` for every C (each
    fold's counts cached).

    A fold's blocks are sliced once, as the generic route slices them (``X[np.ix_(rows, cols)]``,
    C-ordered), and serve every C."""
    correct = np.zeros(len(Cs), dtype=np.int64)
    unconverged = np.zeros(len(Cs), dtype=np.int64)
    for fit, val in folds:
        key = digest(data_key, fit, val, cols)
        found = _recall(key)
        if found is None:
            A = np.ascontiguousarray(X[np.ix_(fit, cols)], dtype=np.float64)  # what fit's validate_data makes
            found = _counts(A, y[fit], X[np.ix_(val, cols)], y[val], Cs, solver)
            _remember(key, found)
        correct += found.correct
        unconverged += found.unconverged
    return correct, unconverged


def inner_counts(X: np.ndarray, y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]],
                 rankings: Sequence[np.ndarray], ks: Sequence[int], Cs: Sequence[float], solver: Solver,
                 ) -> np.ndarray:
    """Correct validation predictions pooled over the folds, shape (len(ks), len(Cs)).

    Fold f is trained and validated on the first k features of ``rankings[f]``; its blocks are
    sliced once per k and serve every C.
    """
    y = np.asarray(y)
    data_key = _data_key(X, y, Cs, solver)
    out = np.zeros((len(ks), len(Cs)), dtype=np.int64)
    groups: dict[bytes, list[int]] = {}
    for f, ranking in enumerate(rankings):
        groups.setdefault(digest(np.asarray(ranking)[:max(ks)]), []).append(f)
    for members in groups.values():
        ranking = np.asarray(rankings[members[0]])
        for i, k in enumerate(ks):
            out[i] += _pooled(X, y, [folds[f] for f in members], ranking[:k], Cs, solver, data_key)[0]
    return out


def evaluate(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
             ranking: np.ndarray, ks: Sequence[int], folds: Sequence[tuple[np.ndarray, np.ndarray]],
             Cs: Sequence[float], solver: Solver, choose: Callable[[np.ndarray], int], *,
             classes: np.ndarray | None = None) -> tuple[np.ndarray, list[int], list[Refit]]:
    """One ranking's evaluation: for every k, the inner-CV accuracy of every C (pooled correct / total
    over ``folds``; none without folds), the index ``choose`` picks from that row (0 without folds),
    and its refit on the whole training part scored on the test part.

    Each fold's blocks are sliced once per k and serve every C. Returns (accuracy grid, chosen
    indices, one :class:`fsbench.evaluation.linear_libsvm.Refit` per k: correct test predictions, per-class
    counts over ``classes`` (default: the classes of ``y_train`` and ``y_test`` together) and
    unconverged fits of that k, inner and refit).
    """
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    classes = dataset_classes(y_train, y_test) if classes is None else np.asarray(classes)
    total = sum(val.size for _, val in folds)
    inner_key = _data_key(X_train, y_train, Cs, solver)
    test_key = digest("liblinear-test", X_train, y_train, X_test, y_test, solver, classes)
    grid = np.zeros((len(ks), len(Cs)))
    chosen, refits = [], []
    for i, k in enumerate(ks):
        cols = np.asarray(ranking)[:k]
        inner_unconverged = 0
        if folds:
            correct, unconverged = _pooled(X_train, y_train, folds, cols, Cs, solver, inner_key)
            grid[i] = correct / total
            inner_unconverged = int(unconverged.sum())
            j = choose(grid[i])
        else:
            j = 0
        chosen.append(j)
        key = digest(test_key, cols, float(Cs[j]))
        found = _recall(key)
        if found is None:
            # the generic route fits on X_train[:, cols] (made C-ordered by validate_data) and predicts
            # on X_test[:, cols] (Fortran-ordered): the same arrays here
            A = np.ascontiguousarray(X_train[:, cols], dtype=np.float64)
            found = _counts(A, y_train, X_test[:, cols], y_test, [float(Cs[j])], solver, classes)
            _remember(key, found)
        refits.append(refit_of(found, inner_unconverged))
    return grid, chosen, refits
