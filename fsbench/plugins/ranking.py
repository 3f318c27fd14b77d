"""How a user's selector ranks features, and :class:`ExternalSelector`, which fits it like a
built-in selector. This module's code, with the modules of :mod:`fsbench.plugins` it imports,
is part of every plugin's code identity (:func:`fsbench.plugins.plugin_code`): editing it
changes the rankings' cache keys.

The ranking rule (:func:`rank_estimator`), the first of these attributes the fitted estimator has
(an attribute that is ``None`` counts as absent):

1. ``ranking_``: a permutation of ``range(d)`` is fsbench's own convention, feature indices best
   first, and is used as is. Any other vector of d finite numbers is read as ranks, one per
   feature, lower is better (scikit-learn's ``RFE.ranking_``: 1 for the selected features, then
   2, 3, ... in reverse order of elimination); the ranking is their stable argsort (tied ranks,
   such as RFE's selected features, keep the lower index first). A 0-based rank vector without
   ties is itself a permutation and is read as indices: such a selector should expose ranks from
   1, as scikit-learn does, or scores. A vector giving every feature the same value (all zeros)
   ranks nothing: it is an error, not "the first k columns".
2. ``scores_``: higher is better.
3. ``feature_importances_``: higher is better.
4. ``coef_``: a 1-D ``coef_`` ranks by ``|coef_j|``; a 2-D ``coef_`` (classes x d, as
   scikit-learn's linear models have) ranks feature j by the Euclidean norm of its column,
   ``sqrt(sum_c coef_cj^2)`` (the l2 norm over classes; for one row, ``|coef_j|``).

Scores, importances and coefficient norms rank by :func:`fsbench.selectors.base.rank_by_scores`:
decreasing, ties keep the lower index first. A score function ``f(X, y)`` (the functions
``SelectKBest`` takes) returns the scores or a ``(scores, pvalues)`` pair; it ranks by the
scores (p-values ignored), by the same rule. Whatever the source, the ranking must be a
permutation of ``range(d)``, or the fit raises :class:`PluginError`.

Non-finite scores (the rule for user code; fsbench's built-in selectors keep theirs, see
:func:`~fsbench.selectors.base.rank_by_scores`):

- ``+inf`` and ``-inf`` are scores like any other, the best and the worst: an F statistic is
  ``+inf`` for a feature constant within every class but varying between them, as Fisher's
  score is for the built-in ``fisher``.
- NaN is accepted only for a feature that is constant in the data the selector was fitted on:
  there a score is 0/0 (``f_classif`` gives NaN with a warning), and such features rank last,
  as the built-ins' do. A NaN for any other feature, or for every feature, is a
  :class:`PluginError` naming the selector: a NaN score has no place in an order, and ranking it
  last (or ranking all-NaN scores as "the first k columns") would report a failed computation as
  a selector's result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from sklearn.utils._param_validation import HasMethods

from fsbench.plugins.loading import PluginError, PluginSpec
from fsbench.plugins.parameters import _class_parameters, _function_parameters
from fsbench.selectors.base import RANDOM_STATE, BaseSelector, count, rank_by_scores

__all__ = ["RANKING_ATTRIBUTES", "ExternalSelector", "build_selector", "rank_estimator", "rank_scores"]

#: the attributes read from a fitted estimator, in this order
RANKING_ATTRIBUTES = ("ranking_", "scores_", "feature_importances_", "coef_")


def _as_vector(value: Any, d: int, what: str) -> np.ndarray:
    if hasattr(value, "toarray"):  # a sparse coef_ (sparsify())
        value = value.toarray()
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise PluginError(f"{what} is not numeric (a {type(value).__name__}).") from None
    if arr.shape != (d,):
        raise PluginError(f"{what} has shape {arr.shape}; expected ({d},), one value per feature.")
    return arr


def _refuse_nan(scores: np.ndarray, what: str, constant: np.ndarray | None) -> None:
    """PluginError when ``scores`` has a NaN but for a ``constant`` feature (the module's rule)."""
    nan = np.isnan(scores)
    if not nan.any():
        return
    d = scores.size
    if nan.all():
        raise PluginError(f"{what} is NaN for every one of the {d} features, so it ranks none of them: fix the "
                          "computation that gives NaN (a division by zero, a log of zero, an empty class).")
    bad = np.flatnonzero(nan if constant is None else nan & ~constant)
    if bad.size:
        shown = ", ".join(map(str, bad[:5])) + (", ..." if bad.size > 5 else "")
        raise PluginError(f"{what} is NaN for {bad.size} of the {d} features (feature {shown}), which are not "
                          "constant, so they cannot be ranked: return a number for every feature (NaN is "
                          "accepted only for a constant feature, ranked last).")


def rank_scores(scores: Any, d: int, what: str = "scores", *,
                constant: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(ranking, scores) of a score vector: decreasing score, ties keep the lower index; a NaN
    is a PluginError unless ``constant`` (a boolean mask of the features constant in the data)
    marks its feature, which then ranks last (the module's rule)."""
    arr = _as_vector(scores, d, what)
    _refuse_nan(arr, what, constant)
    return rank_by_scores(arr), arr


def _rank_ranking(value: Any, d: int, owner: str) -> tuple[np.ndarray, np.ndarray, str]:
    if np.asarray(value).dtype == bool:
        raise PluginError(f"{owner}.ranking_ is a boolean mask, not a ranking.")
    arr = _as_vector(value, d, f"{owner}.ranking_")
    if not np.all(np.isfinite(arr)):
        raise PluginError(f"{owner}.ranking_ contains NaN or infinite values.")
    if np.array_equal(np.sort(arr), np.arange(d)):  # indices, best first
        ranking = arr.astype(np.int64)
        scores = np.empty(d)
        scores[ranking] = np.arange(d, 0, -1, dtype=float)  # rank_by_scores(scores) == ranking
        return ranking, scores, "ranking_"
    if d > 1 and np.all(arr == arr[0]):  # one value for every feature orders nothing
        raise PluginError(f"{owner}.ranking_ gives all {d} features the same value ({arr[0]:g}), so it ranks none "
                          f"of them: set it to feature indices best first (a permutation of 0..{d - 1}) or to "
                          "ranks from 1, lower is better.")
    # ranks (lower is better): RFE's 1 for the selected features, then 2, 3, ...
    return np.argsort(arr, kind="stable"), -arr, "ranking_ (ranks)"


def rank_estimator(estimator: Any, d: int, *, constant: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, str]:
    """(ranking, scores, source) of a fitted estimator by the module's rule: the first of
    ``ranking_``, ``scores_``, ``feature_importances_``, ``coef_`` it has (see the module
    docstring). ``scores`` are such that ``rank_by_scores(scores)`` is the ranking (for a
    ``ranking_``, d, d - 1, ... 1 along it, or minus the ranks). PluginError when it has none
    of them, one that is not a vector of d numbers (for ``coef_``, c x d), a ``ranking_`` that
    ranks nothing, or NaN scores but for the features ``constant`` marks (the module's rule)."""
    owner = type(estimator).__name__
    for attr in RANKING_ATTRIBUTES:
        try:
            value = getattr(estimator, attr)
        except AttributeError:  # NotFittedError included
            continue
        if value is None:
            continue
        if attr == "ranking_":
            return _rank_ranking(value, d, owner)
        if attr == "coef_":
            if hasattr(value, "toarray"):
                value = value.toarray()
            coef = np.asarray(value, dtype=float)
            if coef.ndim == 2 and coef.shape[1] == d:
                norms = np.sqrt(np.sum(coef ** 2, axis=0))
                ranking, scores = rank_scores(norms, d, f"{owner}.coef_ (its column norms)", constant=constant)
                return ranking, scores, "coef_"
            if coef.ndim == 1:
                ranking, scores = rank_scores(np.abs(coef), d, f"{owner}.coef_", constant=constant)
                return ranking, scores, "coef_"
            raise PluginError(f"{owner}.coef_ has shape {coef.shape}; expected ({d},) or (classes, {d}).")
        ranking, scores = rank_scores(value, d, f"{owner}.{attr}", constant=constant)
        return ranking, scores, attr
    raise PluginError(f"{owner} exposes none of ranking_, scores_, feature_importances_ or coef_ after fit, "
                      "so fsbench cannot rank features with it.", "class")


def _score_function_scores(result: Any) -> Any:
    """The scores of a score function's result: like SelectKBest, a pair of vectors (tuple or
    list) is (scores, pvalues); anything else is the scores."""
    if isinstance(result, tuple | list) and len(result) == 2 and all(np.ndim(r) == 1 for r in result):
        return result[0]
    return result


# ----------------------------------------------------------------------------- the selector
class ExternalSelector(BaseSelector):
    """A user's estimator class or score function as an fsbench selector.

    Parameters
    ----------
    estimator : estimator class, or estimator instance (cloned), or None
        Instantiated at fit with ``params`` (an instance: ``clone(estimator).set_params(**params)``).
    score_func : callable f(X, y) -> scores or (scores, pvalues), or None
        Called with ``params`` as keyword arguments. Exactly one of estimator and score_func.
    params : dict or None
        The estimator's (function's) parameters.
    n_features_to_select : int
        Features ``transform`` keeps (fsbench reads ``ranking_`` and evaluates every k).
    random_state : int, RandomState or None
        Set as the estimator's (function's) ``random_state`` when it takes one and this is not
        None (fsbench passes the task seed); ``params`` then must not set it too.

    After fit: ``ranking_`` (feature indices, best first, by the module's rule), ``scores_``
    (``rank_by_scores(scores_)`` is ``ranking_``), ``ranked_by_`` (the attribute that ranked:
    ``ranking_``, ``ranking_ (ranks)``, ``scores_``, ``feature_importances_``, ``coef_`` or
    ``score_func``), ``estimator_`` (the fitted estimator), ``n_features_in_``, ``n_iter_`` when
    the estimator has one (the largest entry of an array, e.g. LogisticRegression's per class)
    and ``diagnostics_`` (the estimator's own, its scalar entries; else empty).
    The estimator sees X as given and y coded 0..c-1. Its scores may be NaN only for features
    constant in X (the module's rule); fsbench fits it on its own copy of X
    (:func:`fsbench.engine.fitting.fit_selector`), so it may change it.
    """

    _parameter_constraints: dict = {
        "estimator": [type, HasMethods(["fit", "get_params"]), None],
        "score_func": [callable, None],
        "params": [dict, None],
        "n_features_to_select": [count(1)],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, estimator: Any = None, score_func: Callable[..., Any] | None = None,
                 params: dict[str, Any] | None = None, n_features_to_select: int = 10,
                 random_state: Any = None):
        self.estimator = estimator
        self.score_func = score_func
        self.params = params
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state

    def check_params(self) -> None:
        from sklearn.utils._param_validation import InvalidParameterError

        if (self.estimator is None) == (self.score_func is None):
            raise InvalidParameterError("ExternalSelector needs exactly one of estimator and score_func.")
        if self.random_state is not None and "random_state" in (self.params or {}) \
                and "random_state" in (self._accepted() or []):
            raise InvalidParameterError("random_state is given both as a parameter of ExternalSelector and in "
                                        "params; give it once.")

    def _accepted(self) -> list[str] | None:
        if self.score_func is not None:
            return _function_parameters(self.score_func)
        if isinstance(self.estimator, type):
            return _class_parameters(self.estimator)
        return list(self.estimator.get_params(deep=False))

    def _kwargs(self) -> dict[str, Any]:
        kwargs = dict(self.params or {})
        if self.random_state is not None and "random_state" in (self._accepted() or []):
            kwargs["random_state"] = self.random_state
        return kwargs

    def make_estimator(self) -> Any:
        """The unfitted estimator with its parameters (random_state included)."""
        from sklearn.base import clone

        if isinstance(self.estimator, type):
            return self.estimator(**self._kwargs())
        return clone(self.estimator).set_params(**self._kwargs())

    def _fit(self, X: np.ndarray, y: np.ndarray, classes: np.ndarray) -> np.ndarray:
        d = X.shape[1]
        for attr in ("estimator_", "n_iter_", "diagnostics_"):
            if hasattr(self, attr):
                delattr(self, attr)
        # before the user's code runs: it may change X (NaN is excused for what was constant)
        constant = np.all(X == X[:1], axis=0)
        if self.score_func is not None:
            result = self.score_func(X, y, **self._kwargs())
            name = getattr(self.score_func, "__name__", type(self.score_func).__name__)
            ranking, scores = rank_scores(_score_function_scores(result), d, f"The scores of {name}",
                                          constant=constant)
            source = "score_func"
        else:
            est = self.make_estimator()
            est.fit(X, y)
            self.estimator_ = est
            ranking, scores, source = rank_estimator(est, d, constant=constant)
            n_iter = getattr(est, "n_iter_", None)
            if n_iter is not None and np.size(n_iter) and np.issubdtype(np.asarray(n_iter).dtype, np.number):
                self.n_iter_ = int(np.max(n_iter))
            diagnostics = getattr(est, "diagnostics_", None)
            if isinstance(diagnostics, Mapping):
                self.diagnostics_ = {str(k): (v.item() if isinstance(v, np.generic) else v)
                                     for k, v in diagnostics.items()
                                     if isinstance(v, str | int | float | bool | np.generic) or v is None}
        ranking = np.asarray(ranking, dtype=np.int64)
        if ranking.shape != (d,) or not np.array_equal(np.sort(ranking), np.arange(d)):
            raise PluginError(f"The ranking of {self._label()} is not a permutation of the {d} features.")
        self.ranking_ = ranking
        self.ranked_by_ = source
        self.diagnostics_ = getattr(self, "diagnostics_", {})
        return scores

    def _label(self) -> str:
        target = self.score_func if self.score_func is not None else self.estimator
        if self.score_func is None and not isinstance(target, type):
            target = type(target)
        return getattr(target, "__qualname__", type(target).__name__)


def build_selector(spec: PluginSpec, params: Mapping[str, Any] | None = None, *, n_features_to_select: int = 10,
                   random_state: Any = None) -> ExternalSelector:
    """The selector the runner fits: ``params`` the config's fixed parameters with a grid point;
    ``random_state`` the task seed (ignored when the plugin takes no random_state)."""
    which = {"estimator": spec.obj} if spec.kind == "class" else {"score_func": spec.obj}
    return ExternalSelector(**which, params=dict(params or {}), n_features_to_select=n_features_to_select,
                            random_state=random_state)
