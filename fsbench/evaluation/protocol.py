"""The evaluation protocol as pure functions: splits, scaling, tuning, accuracy at every k.

One outer split (a trial of a hold-out protocol, or a fold of a k-fold protocol):

1. split the data (stratified) into a training and a test part;
2. standardize: fit the z-score on the training part (``train``), on all data (``global``,
   as the papers did), or not at all (``none``);
3. fit the selector once on the training part; when the config gives a grid, choose its
   hyper-parameters first by inner cross-validation on the training part (below);
4. for every classifier of the config and every k, keep the first k features of the ranking
   (one ranking serves every classifier and every k), choose the classifier's grid point (the
   SVMs' C) by inner cross-validation on the training part, refit on the whole training part
   and score the test part.

Nothing computed from the test part reaches steps 3 and 4 (with ``global`` standardization the
test part's mean and variance do, which is the papers' protocol and is reported as such).

Classifiers are :class:`fsbench.evaluation.classifiers.ClassifierSpec` (built-ins by name, any
scikit-learn classifier by class); a single ``classifier:`` of a config
(:class:`~fsbench.configuration.experiment.ClassifierConfig`) is the spec
:func:`fsbench.evaluation.classifiers.spec_from_config` gives, and evaluates exactly as before
several classifiers existed. Every classifier of a split is tuned on the same inner folds and
seeded with the same seed, so a classifier's rows
do not depend on which other classifiers the config lists.

Tuning rules, stated once:

- A classifier's grid point, per k: the point with the highest mean inner-CV accuracy
  (correct / total pooled over the inner folds). Ties:

  - the built-in SVMs (``linear_svm``, ``crammer_singer``) tuning C alone: ties go to the
    smallest C;
  - every other grid: ties go to the first grid point, in the grid's order (keys sorted by
    name, the first key varying slowest, each key's values in the order the config lists
    them; for a grid of one key, the config's order).

  A grid of one point is not tuned (no inner CV; ``inner_accuracy`` is NaN).
- A selector grid point is scored by the inner-CV accuracy of the classifier on its top-k
  features, taking the best grid point of the classifier (the best C) for each k and averaging
  over the k of ``n_features``; ties go to the first grid point. The selector is refit on each
  inner-training fold, so the score does not see the validation fold through the ranking.
  With several classifiers, a selector's grid is scored with the first classifier of the
  config only (one ranking, chosen once, serves every classifier).

How the numbers are computed: a classifier that is exactly ``SVC(kernel="linear")`` but C (the
built-in ``linear_svm`` on LIBSVM) is trained on one precomputed kernel matrix per k, shared by the
inner folds, the C grid and the refit, whose entries are sums in a stated order, the same bits on
every machine (:mod:`fsbench.evaluation.linear_libsvm` says where that equals ``SVC(kernel="linear")``, whose
BLAS kernel differs per CPU); a classifier that is exactly
``LinearSVC`` as fsbench builds it (``crammer_singer``, ``linear_svm`` on LIBLINEAR) is trained by
calling LIBLINEAR directly with the arguments ``LinearSVC.fit`` passes, without its per-fit
validation (:mod:`fsbench.evaluation.linear_liblinear`, which states why its predictions are
``LinearSVC``'s, bit for bit); every other classifier is fitted through its scikit-learn
estimator for every inner fold, k and grid point.

Rows (:func:`evaluate_ranking`, :func:`evaluate_classifiers`): ``k``, ``accuracy``,
``n_correct``, ``n_test``, ``C`` (the estimator's C as fitted, fixed or chosen; NaN for an
estimator without a C parameter, e.g. ``knn`` and ``random_forest``), ``inner_accuracy``
(the chosen point's inner-CV accuracy; NaN when nothing is tuned), and from
:func:`evaluate_classifiers` also ``classifier`` (the spec's label) and ``classifier_params``
(JSON of the parameters the config sets for the classifier: its fixed ``params`` and the chosen
grid point, keys sorted; see :func:`fsbench.evaluation.classifiers.chosen_params`).

Every row also counts, per class, in the order of the dataset's classes (the labels of the
training and test parts together, sorted: fsbench's 0..c-1, every one of the c classes, a class
never predicted included with 0), the refit's test predictions: ``class_support`` (the test
samples of the class), ``class_predicted`` (the test samples predicted as it) and
``class_correct`` (those of them that are right), each a ``;``-separated list of c integers
(``14;7;14;15``), so that their sums are ``n_test``, ``n_test`` and ``n_correct``; and
``diag_classifier_unconverged``, how many of the row's classifier fits did not converge: the
inner-CV fits of every fold and grid point at that k, and the refit. A fit is unconverged when
scikit-learn's ``fit`` warns with ``ConvergenceWarning``: the generic route records the warning
(kept off the console); the LIBLINEAR route counts a fit whose iteration count reaches
``max_iter``, the condition under which ``LinearSVC.fit`` warns; the LIBSVM route reads LIBSVM's
fit status, which is never set with ``max_iter=-1`` (the built-in's), so that route counts 0
unless a ``max_iter`` is configured. Fits that tune a selector's grid are not counted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

from fsbench.errors import FsbenchError
from fsbench.evaluation import linear_liblinear, linear_libsvm
from fsbench.evaluation.classifiers import ClassifierSpec, as_spec, chosen_params, make_classifier
from fsbench.evaluation.linear_libsvm import Counts, Refit, dataset_classes, fit_recording, per_class
from fsbench.fixed_order import column_sums

if TYPE_CHECKING:  # the configuration layer sits above the protocol: its types only annotate
    from fsbench.configuration.experiment import ClassifierConfig, InnerCVConfig, ProtocolConfig


def derive_seed(*parts: Any) -> int:
    """A 32-bit seed from the config seed and a task's identity (never from execution order)."""
    digest = hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).digest()
    return int.from_bytes(digest[:4], "little")


@dataclass(frozen=True)
class Split:
    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray
    seed: int


def outer_splits(y: np.ndarray, protocol: ProtocolConfig, seed: int, dataset: str) -> list[Split]:
    """All outer splits of a dataset; each repetition's seed depends only on (seed, dataset, repeat)."""
    y = np.asarray(y)
    splits = []
    if protocol.kind == "holdout":
        _check_holdout(y, protocol, dataset)
        for repeat in range(protocol.n_trials):
            s = derive_seed(seed, "outer", dataset, repeat)
            sss = StratifiedShuffleSplit(n_splits=1, train_size=protocol.train_size, random_state=s)
            train, test = next(sss.split(np.zeros(y.size), y))
            splits.append(Split(repeat, 0, np.sort(train), np.sort(test), s))
    else:
        smallest = np.bincount(y).min()
        if smallest < protocol.n_splits:
            raise FsbenchError(
                f"Dataset {dataset!r} has a class with only {smallest} samples, fewer than the "
                f"{protocol.n_splits} folds of protocol.n_splits; lower n_splits."
            )
        for repeat in range(protocol.n_repeats):
            s = derive_seed(seed, "outer", dataset, repeat)
            skf = StratifiedKFold(n_splits=protocol.n_splits, shuffle=True, random_state=s)
            for fold, (train, test) in enumerate(skf.split(np.zeros(y.size), y)):
                splits.append(Split(repeat, fold, train, test, s))
    return splits


def _check_holdout(y: np.ndarray, protocol: ProtocolConfig, dataset: str) -> None:
    n, counts = y.size, np.bincount(y)
    n_train = protocol.train_size if isinstance(protocol.train_size, int) else int(np.floor(protocol.train_size * n))
    if counts.min() < 2:
        raise FsbenchError(
            f"Dataset {dataset!r} has a class with a single sample, which a stratified split cannot "
            "place in both parts; drop the dataset or use another protocol."
        )
    if not counts.size <= n_train <= n - counts.size:
        raise FsbenchError(
            f"protocol.train_size gives {n_train} training samples of {n} in dataset {dataset!r}; "
            f"both parts need at least one sample of each of the {counts.size} classes; change train_size."
        )


def check_inner_cv(y_train: np.ndarray, inner: InnerCVConfig, dataset: str) -> int:
    """The number of inner folds for this training part; error if a class is too small for it."""
    folds = inner.folds_for(y_train.size)
    smallest = np.bincount(y_train).min()
    if smallest < folds:
        raise FsbenchError(
            f"A training part of dataset {dataset!r} has a class with only {smallest} samples, fewer "
            f"than the {folds} inner-CV folds; lower inner_cv.n_splits or enlarge protocol.train_size."
        )
    return folds


def standardize(X: np.ndarray, train: np.ndarray, test: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Z-score every feature; the mean and std come from the training part, all data, or nowhere.

    ``mean = s / n`` and ``std = sqrt(sum((x - mean)^2) / n)`` with every sum in sample order
    (:func:`fsbench.fixed_order.column_sums`), so the standardized data has the same bits on every
    machine (they equal numpy's ``mean`` and ``std`` on a C-ordered matrix of two or more
    features). A feature with zero standard deviation is only centred.
    """
    X = np.asarray(X, dtype=np.float64)
    X_train, X_test = X[train], X[test]
    if mode == "none":
        return np.array(X_train, dtype=float), np.array(X_test, dtype=float)
    ref = X_train if mode == "train" else X
    n = ref.shape[0]
    mean = column_sums(ref) / n
    centred = ref - mean
    std = np.sqrt(column_sums(np.multiply(centred, centred, out=centred)) / n)
    std[std == 0] = 1.0
    return (X_train - mean) / std, (X_test - mean) / std


def inner_folds(y_train: np.ndarray, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    return list(skf.split(np.zeros(y_train.size), y_train))


def _accuracy(clf: ClassifierMixin, X_fit, y_fit, X_eval, y_eval, *, classes: np.ndarray | None = None,
              ) -> Counts:
    """The generic route's one fit and prediction: correct predictions of ``y_eval``, whether the fit
    warned with ``ConvergenceWarning`` (recorded, kept off the console), and the per-class counts over
    ``classes`` when given (:class:`fsbench.evaluation.linear_libsvm.Counts` of one grid point)."""
    unconverged = fit_recording(clf, X_fit, y_fit)
    predictions = clf.predict(X_eval)
    predicted = right = None
    if classes is not None:
        predicted, right = (v[None, :] for v in per_class(predictions, y_eval, classes))
    return Counts(np.array([np.sum(predictions == y_eval)], dtype=np.int64),
                  np.array([int(unconverged)], dtype=np.int64), predicted, right)


def _generic_grid(X: np.ndarray, y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]],
                  rankings: Sequence[np.ndarray], ks: Sequence[int], spec: ClassifierSpec, seed: int,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The generic route's inner CV: correct validation predictions pooled over the folds and the
    number of unconverged fits, each of shape (len(ks), number of grid points)."""
    points = spec.grid_points()
    correct = np.zeros((len(ks), len(points)), dtype=np.int64)
    unconverged = np.zeros((len(ks), len(points)), dtype=np.int64)
    for (fit, val), ranking in zip(folds, rankings, strict=True):
        for i, k in enumerate(ks):
            cols = ranking[:k]
            X_fit, X_val = X[np.ix_(fit, cols)], X[np.ix_(val, cols)]
            for j, point in enumerate(points):
                found = _accuracy(make_classifier(spec, point, seed), X_fit, y[fit], X_val, y[val])
                correct[i, j] += found.correct[0]
                unconverged[i, j] += found.unconverged[0]
    return correct, unconverged


def _liblinear_route(estimators: Sequence[Any], y: np.ndarray, *Xs: np.ndarray,
                     ) -> tuple[linear_liblinear.Solver, list[float]] | None:
    """LIBLINEAR's direct route (:mod:`fsbench.evaluation.linear_liblinear`) when the estimators are ``LinearSVC``
    as fsbench builds them (defaults but C, max_iter, multi_class, random_state) and the data is what
    it handles exactly; else None."""
    fast = linear_liblinear.solver_for(estimators)
    return fast if fast is not None and linear_liblinear.data_ok(y, *Xs) else None


def cv_accuracy_grid(
    X: np.ndarray,
    y: np.ndarray,
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
    rankings: Sequence[np.ndarray],
    ks: Sequence[int],
    cfg: ClassifierConfig | ClassifierSpec,
    seed: int,
) -> np.ndarray:
    """Inner-CV accuracy, shape (len(ks), number of grid points): pooled correct / total over
    the folds; the grid points in the order of ``spec.grid_points()`` (a single C list: its order).

    ``rankings[f]`` is the ranking used in fold f (the same one for every fold when tuning the
    classifier for a fixed ranking, a per-fold refit when tuning a selector).

    A classifier that is exactly ``SVC(kernel="linear")`` but C (the built-in ``linear_svm`` on
    LIBSVM) is evaluated by :func:`fsbench.evaluation.linear_libsvm.inner_counts`: LIBSVM on the linear kernel
    as fsbench computes it (sums in a stated order), one kernel matrix per k. A
    ``LinearSVC`` as fsbench builds it (``crammer_singer``, ``linear_svm`` on LIBLINEAR) is evaluated
    by :func:`fsbench.evaluation.linear_liblinear.inner_counts`: LIBLINEAR called directly, the same predictions.
    """
    spec = as_spec(cfg)
    points = spec.grid_points()
    total = sum(val.size for _, val in folds)
    estimators = [make_classifier(spec, point, seed) for point in points]
    fast = linear_libsvm.solver_for(estimators)
    if fast is not None:
        solver, Cs = fast
        return linear_libsvm.inner_counts(X, y, folds, rankings, ks, Cs, solver) / total
    fast_linear = _liblinear_route(estimators, y, X)
    if fast_linear is not None:
        linear_solver, Cs = fast_linear
        return linear_liblinear.inner_counts(X, y, folds, rankings, ks, Cs, linear_solver) / total
    return _generic_grid(X, y, folds, rankings, ks, spec, seed)[0] / total


def best_C(accuracy_row: np.ndarray, Cs: Sequence[float]) -> float:
    """The C with the highest accuracy; ties go to the smallest C."""
    order = np.argsort(Cs, kind="stable")
    best = order[np.argmax(accuracy_row[order])]
    return float(Cs[best])


def best_point(accuracy_row: np.ndarray, spec: ClassifierSpec) -> int:
    """Index of the chosen grid point: the highest accuracy; ties to the smallest C for the
    built-in SVMs tuning C alone, else to the first point in ``spec.grid_points()`` order."""
    if spec.smallest_C_wins:
        Cs = [point["C"] for point in spec.grid_points()]
        order = np.argsort(Cs, kind="stable")
        return int(order[np.argmax(accuracy_row[order])])
    return int(np.argmax(accuracy_row))


def _C_of(clf: Any) -> float:
    """The estimator's C (NaN when it has no numeric C)."""
    C = clf.get_params(deep=False).get("C") if hasattr(clf, "get_params") else None
    return float(C) if isinstance(C, int | float | np.number) and not isinstance(C, bool) else float("nan")


def _evaluate_one(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    ranking: np.ndarray,
    ks: Sequence[int],
    spec: ClassifierSpec,
    n_inner_folds: int,
    seed: int,
) -> list[dict[str, Any]]:
    points = spec.grid_points()
    folds = inner_folds(y_train, n_inner_folds, derive_seed(seed, "inner-C")) if spec.tuned else []
    classes = dataset_classes(y_train, y_test)  # every class of the dataset: both parts hold each one
    support = per_class(np.asarray(y_test), np.asarray(y_test), classes)[0]
    estimators = [make_classifier(spec, point, seed) for point in points]
    fast = linear_libsvm.solver_for(estimators)
    fast_linear = _liblinear_route(estimators, y_train, X_train, X_test) if fast is None else None
    if fast is not None:  # the same numbers as below, one kernel matrix per k (fsbench.evaluation.linear_libsvm)
        solver, Cs = fast
        grid, picked, refits = linear_libsvm.evaluate(X_train, y_train, X_test, y_test, ranking, ks, folds, Cs,
                                                      solver, lambda row: best_point(row, spec), classes=classes)
        chosen = [points[j] for j in picked]
    elif fast_linear is not None:  # the same numbers as below, LIBLINEAR called directly (evaluation.linear_liblinear)
        linear_solver, Cs = fast_linear
        grid, picked, refits = linear_liblinear.evaluate(X_train, y_train, X_test, y_test, ranking, ks, folds, Cs,
                                                         linear_solver, lambda row: best_point(row, spec),
                                                         classes=classes)
        chosen = [points[j] for j in picked]
    else:
        inner_unconverged = np.zeros(len(ks), dtype=np.int64)
        if spec.tuned:
            correct, unconverged = _generic_grid(X_train, y_train, folds, [ranking] * len(folds), ks, spec, seed)
            grid = correct / sum(val.size for _, val in folds)
            inner_unconverged = unconverged.sum(axis=1)
        chosen = [points[best_point(grid[i], spec)] if spec.tuned else points[0] for i in range(len(ks))]
        refits = []
        for i, (point, k) in enumerate(zip(chosen, ks, strict=True)):
            found = _accuracy(make_classifier(spec, point, seed), X_train[:, ranking[:k]], y_train,
                              X_test[:, ranking[:k]], y_test, classes=classes)
            refits.append(Refit(int(found.correct[0]), tuple(int(v) for v in found.predicted[0]),
                                tuple(int(v) for v in found.right[0]),
                                int(inner_unconverged[i]) + int(found.unconverged[0])))
    classifiers = [make_classifier(spec, point, seed) for point in chosen]
    rows = []
    for i, k in enumerate(ks):
        refit, n_test = refits[i], y_test.size
        rows.append({"classifier": spec.label, "k": int(k), "accuracy": refit.n_correct / n_test,
                     "n_correct": refit.n_correct, "n_test": n_test,
                     "class_support": _joined(support), "class_predicted": _joined(refit.predicted),
                     "class_correct": _joined(refit.correct), "C": _C_of(classifiers[i]),
                     "inner_accuracy": float(grid[i].max()) if spec.tuned else float("nan"),
                     "classifier_params": chosen_params(spec, chosen[i]),
                     "diag_classifier_unconverged": refit.unconverged})
    return rows


def _joined(counts: Sequence[int] | np.ndarray) -> str:
    """Per-class counts as a row stores them: ``;``-separated integers."""
    return ";".join(str(int(v)) for v in counts)


def refit_count(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
                columns: np.ndarray, spec: ClassifierSpec, point: dict[str, Any], seed: int) -> int:
    """Correct test predictions of the classifier at grid point ``point``, fitted on the training
    part's ``columns``: the protocol's final step for one k, through the route
    :func:`evaluate_ranking` takes (the ordered linear kernel for the built-in linear_svm), so a
    stored ranking replayed here gives its row's count on any machine."""
    columns = np.asarray(columns)
    estimators = [make_classifier(spec, point, seed)]
    fast = linear_libsvm.solver_for(estimators)
    if fast is not None:
        solver, Cs = fast
        return linear_libsvm.evaluate(X_train, y_train, X_test, y_test, columns, [columns.size], [], Cs,
                                      solver, lambda row: 0)[2][0].n_correct
    fast_linear = _liblinear_route(estimators, y_train, X_train, X_test)
    if fast_linear is not None:
        linear_solver, Cs = fast_linear
        return linear_liblinear.evaluate(X_train, y_train, X_test, y_test, columns, [columns.size], [], Cs,
                                         linear_solver, lambda row: 0)[2][0].n_correct
    return int(_accuracy(estimators[0], X_train[:, columns], y_train, X_test[:, columns], y_test).correct[0])


#: the keys of :func:`evaluate_ranking`'s rows, in this order
ROW_KEYS = ("k", "accuracy", "n_correct", "n_test", "class_support", "class_predicted", "class_correct", "C",
            "inner_accuracy", "diag_classifier_unconverged")


def evaluate_ranking(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    ranking: np.ndarray,
    ks: Sequence[int],
    cfg: ClassifierConfig | ClassifierSpec,
    n_inner_folds: int,
    seed: int,
) -> list[dict[str, Any]]:
    """Test accuracy of one classifier on the top-k features, for every k (its grid tuned per k).

    Rows hold k, accuracy, n_correct, n_test, the per-class counts (class_support,
    class_predicted, class_correct), C, inner_accuracy and diag_classifier_unconverged (see the
    module's docstring); :func:`evaluate_classifiers` adds the classifier's label and params.
    """
    rows = _evaluate_one(X_train, y_train, X_test, y_test, ranking, ks, as_spec(cfg), n_inner_folds, seed)
    return [{key: row[key] for key in ROW_KEYS} for row in rows]


def evaluate_classifiers(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    ranking: np.ndarray,
    ks: Sequence[int],
    classifiers: Sequence[ClassifierSpec | ClassifierConfig],
    n_inner_folds: int,
    seed: int,
) -> list[dict[str, Any]]:
    """Every classifier on one ranking (ranked once), for every k: rows in the order of
    ``classifiers``, then of ``ks``, each with ``classifier`` (the label) and
    ``classifier_params`` besides the columns of :func:`evaluate_ranking`.

    A classifier's rows equal :func:`evaluate_ranking`'s for it alone: every classifier is tuned
    on the same inner folds with the same seed.
    """
    specs = [as_spec(c) for c in classifiers]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"classifier labels must be distinct, got {labels}")
    rows: list[dict[str, Any]] = []
    for spec in specs:
        rows += _evaluate_one(X_train, y_train, X_test, y_test, ranking, ks, spec, n_inner_folds, seed)
    return rows


def tune_selector(
    fit_ranking: Callable[[np.ndarray, np.ndarray, dict[str, Any], int], np.ndarray],
    X_train: np.ndarray,
    y_train: np.ndarray,
    grid_points: Sequence[dict[str, Any]],
    ks: Sequence[int],
    cfg: ClassifierConfig | ClassifierSpec | Sequence[ClassifierSpec],
    n_inner_folds: int,
    seed: int,
) -> tuple[dict[str, Any], list[float]]:
    """Choose a selector's grid point by inner CV on the training part.

    ``fit_ranking(X, y, point, fold)`` fits the selector with the grid point on a fold's
    training rows and returns its ranking. Returns the chosen point and every point's score.
    Points are scored with the classifier ``cfg``; given several, with the first.
    """
    spec = as_spec(cfg[0]) if isinstance(cfg, list | tuple) else as_spec(cfg)
    folds = inner_folds(y_train, n_inner_folds, derive_seed(seed, "inner-selector"))
    scores = []
    for point in grid_points:
        rankings = [fit_ranking(X_train[fit], y_train[fit], point, f) for f, (fit, _) in enumerate(folds)]
        grid = cv_accuracy_grid(X_train, y_train, folds, rankings, ks, spec, seed)
        scores.append(float(grid.max(axis=1).mean()))
    return dict(grid_points[int(np.argmax(scores))]), scores
