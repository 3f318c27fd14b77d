"""The selector interface shared by every method.

A selector is a scikit-learn estimator: hyper-parameters in ``__init__``, and ``fit(X, y)``
sets

- ``scores_``: one score per feature, higher is better;
- ``ranking_``: feature indices, best first (a permutation of ``range(n_features)``);
- ``n_features_in_``;

iterative selectors also set ``n_iter_`` and ``objective_`` (one value per iteration), and
any selector may set ``diagnostics_``, a flat ``dict`` of scalars (for example
``{"feasible": False}``) that fsbench records as columns of the results.

``transform`` keeps the first ``n_features_to_select`` features of the ranking, so a selector
works inside a scikit-learn ``Pipeline``. fsbench itself reads ``ranking_`` once and
evaluates every k from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted, check_X_y


def rank_by_scores(scores: np.ndarray) -> np.ndarray:
    """Feature indices by decreasing score; ties keep the lower index first.

    NaN scores (for example a constant feature's Fisher score 0/0) rank last.
    """
    scores = np.asarray(scores, dtype=float)
    key = np.where(np.isnan(scores), -np.inf, scores)
    return np.argsort(-key, kind="stable")


def validate_Xy(X: Any, y: Any, *, min_classes: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check a feature matrix and labels; return float X, integer-coded y and the classes."""
    X, y = check_X_y(X, y, dtype=np.float64, ensure_all_finite=True, y_numeric=False)
    classes, y_coded = np.unique(y, return_inverse=True)
    if classes.size < min_classes:
        raise ValueError(
            f"y has {classes.size} class(es); feature selection for classification "
            f"needs at least {min_classes}."
        )
    return X, y_coded, classes


class BaseSelector(SelectorMixin, BaseEstimator):
    """Base class: subclasses implement ``_fit(X, y_coded, classes)`` returning scores.

    A subclass whose ranking is not a plain sort of its scores (mRMR, the random control)
    sets ``self.ranking_`` itself inside ``_fit``.
    """

    #: one-line description shown by ``fsbench selectors``; defaults to the docstring's first line
    summary: str = ""

    def __init__(self, n_features_to_select: int = 10):
        self.n_features_to_select = n_features_to_select

    def check_params(self) -> None:
        """Raise ValueError for an invalid hyper-parameter value.

        ``fit`` calls it first, and fsbench calls it when it validates a config, so a bad value
        is reported before anything runs. Subclasses with constraints override it.
        """

    def fit(self, X: Any, y: Any) -> BaseSelector:
        self.check_params()
        X, y_coded, classes = validate_Xy(X, y)
        self.n_features_in_ = X.shape[1]
        self.classes_ = classes
        if hasattr(self, "ranking_"):
            del self.ranking_
        scores = np.asarray(self._fit(X, y_coded, classes), dtype=float)
        if scores.shape != (X.shape[1],):
            raise RuntimeError(f"{type(self).__name__} returned {scores.shape} scores for {X.shape[1]} features")
        self.scores_ = scores
        if not hasattr(self, "ranking_"):
            self.ranking_ = rank_by_scores(scores)
        return self

    def _fit(self, X: np.ndarray, y: np.ndarray, classes: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "ranking_")
        k = self.n_features_to_select
        if not 0 < k <= self.n_features_in_:
            raise ValueError(f"n_features_to_select={k} must be in 1..{self.n_features_in_}")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.ranking_[:k]] = True
        return mask
