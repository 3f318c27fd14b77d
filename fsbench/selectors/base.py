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

Parameters are validated the way scikit-learn estimators validate theirs: each selector
declares ``_parameter_constraints`` (parameter -> list of allowed constraints, any one of which
may hold: :class:`StrictInterval`, ``StrOptions``, ``"boolean"``, ``None`` ...), ``fit`` checks
them with scikit-learn's ``_validate_params`` and then calls :meth:`BaseSelector.check_params`
for the rules that tie parameters together. ``fsbench`` checks a config's values against the
same constraints before anything runs (``fsbench.configuration.parse``).
"""

from __future__ import annotations

import inspect
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    Options,
    _Booleans,
    _InstancesOf,
    _NoneConstraint,
    make_constraint,
    validate_parameter_constraints,
)
from sklearn.utils.validation import check_is_fitted, check_X_y

#: Largest count a parameter may hold (samples, neighbours, features to rank ...): 2^31 - 1 is
#: beyond the size of any dataset, so a larger count cannot mean anything more.
COUNT_MAX = 2**31 - 1
#: Iteration caps above this are not caps: a fit that does not converge would run for days
#: (every iteration solves at least one linear system or SVM).
ITER_MAX = 1_000_000


class StrictInterval(Interval):
    """scikit-learn's ``Interval`` that refuses booleans.

    scikit-learn counts ``True`` as the integer 1 (``bool`` is an ``Integral``), so
    ``max_iter=True`` would pass ``Interval(Integral, 1, None)``; here it does not. NaN is
    refused by ``Interval`` itself, and an open or finite bound refuses infinity, so every
    numeric constraint of fsbench admits finite numbers only.
    """

    def is_satisfied_by(self, val: Any) -> bool:
        if isinstance(val, bool | np.bool_):
            return False
        return super().is_satisfied_by(val)


#: ``random_state``: what ``sklearn.utils.check_random_state`` takes (fsbench passes a 32-bit seed)
RANDOM_STATE = [StrictInterval(Integral, 0, 2**32 - 1, closed="both"), np.random.RandomState, None]


def count(minimum: int = 1, maximum: int = COUNT_MAX) -> StrictInterval:
    """An integer in [minimum, maximum] (booleans refused)."""
    return StrictInterval(Integral, minimum, maximum, closed="both")


def real(left: float, right: float, closed: str) -> StrictInterval:
    """A finite real number between two finite bounds (``closed`` as in scikit-learn)."""
    return StrictInterval(Real, left, right, closed=closed)


def _exponent(text: str) -> str:
    return text.replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")


def _number(value: float | int) -> str:
    """A bound: 1e-08 -> 1e-8, 100000000.0 -> 1e8, 1.0 -> 1, 0.5 -> 0.5, 10 -> 10."""
    return _exponent(f"{value:g}") if isinstance(value, float) else str(value)


def format_value(value: Any) -> str:
    """A parameter value as YAML would write it: null, true, 'auto', 1.0, 1e-8."""
    if value is None:
        return "null"
    if isinstance(value, bool | np.bool_):
        return str(bool(value)).lower()
    if isinstance(value, float):
        return _exponent(repr(value))
    return repr(value)


def describe_constraint(constraint: Any, short: bool = False) -> str:
    """One constraint in words: ``a float in (0, 1]`` (``float in (0, 1]`` when ``short``)."""
    c = make_constraint(constraint)
    if isinstance(c, Interval):
        kind = "int" if c.type is Integral else "float"
        left = "-inf" if c.left is None else _number(c.left)
        right = "inf" if c.right is None else _number(c.right)
        lb = "[" if c.closed in ("left", "both") else "("
        rb = "]" if c.closed in ("right", "both") else ")"
        article = "" if short else ("an " if kind == "int" else "a ")
        return f"{article}{kind} in {lb}{left}, {right}{rb}"
    if isinstance(c, Options):
        options = sorted(c.options, key=repr)
        if short:
            return " | ".join(map(repr, options))
        return f"{repr(options[0])}" if len(options) == 1 else f"one of {', '.join(map(repr, options))}"
    if isinstance(c, _Booleans):
        return "true | false" if short else "true or false"
    if isinstance(c, _NoneConstraint):
        return "null"
    if isinstance(c, _InstancesOf):
        return f"a {c.type.__module__.split('.')[0]} {c.type.__name__}"
    return str(c)


def describe_constraints(constraints: list[Any], short: bool = False) -> str:
    """The values a list of constraints allows (any one may hold), in words."""
    parts = [describe_constraint(c, short) for c in constraints if not make_constraint(c).hidden]
    if short:
        return " | ".join(parts)
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"


def string_options(constraints: list[Any]) -> list[str]:
    """The strings a list of constraints allows (for a "did you mean" hint)."""
    return sorted(o for c in constraints if isinstance(c, Options) for o in c.options if isinstance(o, str))


def invalid_parameter(cls: type[BaseSelector], name: str, value: Any) -> str | None:
    """None if ``value`` satisfies the constraints of parameter ``name`` of selector ``cls``;
    else the allowed values in words (``"a float in [0.05, 1]"``).

    scikit-learn's ``validate_parameter_constraints`` judges; only its message is replaced, by
    one that a config error can quote after the parameter's key.
    """
    constraints = cls._parameter_constraints[name]
    try:
        validate_parameter_constraints({name: constraints}, {name: value}, cls.__name__)
    except InvalidParameterError:
        return describe_constraints(constraints)
    return None


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

    #: the valid values of every parameter of ``__init__`` (scikit-learn's convention); a
    #: subclass extends its parent's with ``{**Parent._parameter_constraints, ...}``
    _parameter_constraints: dict = {
        "n_features_to_select": [count(1)],
    }

    def __init__(self, *, n_features_to_select: int = 10):
        self.n_features_to_select = n_features_to_select

    def check_params(self) -> None:
        """Raise InvalidParameterError (a ValueError) when parameters contradict each other.

        Each value on its own is checked against ``_parameter_constraints`` first (``fit``
        calls ``_validate_params`` and then this method; fsbench does both when it validates a
        config, for the fixed parameters and for every grid point). Subclasses whose
        parameters constrain each other (an option that only one setting of another uses)
        override it.
        """

    def _reject_unused(self, name: str, used_when: str) -> None:
        """Refuse a non-default ``name`` that the other parameters make ineffective."""
        default = inspect.signature(type(self).__init__).parameters[name].default
        value = getattr(self, name)
        if value != default:
            raise InvalidParameterError(
                f"{name}={value!r} has no effect unless {used_when}; remove {name} or set {used_when}."
            )

    def fit(self, X: Any, y: Any) -> BaseSelector:
        self._validate_params()
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
