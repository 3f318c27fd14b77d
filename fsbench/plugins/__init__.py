"""Selectors from outside fsbench: a scikit-learn estimator class or a score function, named by
its import path in a config or registered by an installed package (issue 14).

This module is the library behind the config keys ``class:`` and ``score_func:``; it reads no
file and writes no result. A plugin is described by a :class:`PluginSpec` (from
:func:`resolve`, :func:`find_plugin` or :func:`discover_plugins`); :func:`probe` validates it
with its parameters before anything runs; :func:`build_selector` makes the
:class:`ExternalSelector` that the runner fits like a built-in selector; :func:`plugin_code` is
its code identity for the rankings cache and the result rows.

Import paths
    ``package.module:Name`` is the canonical form (the one entry points use); ``Name`` may be
    dotted (``module:Outer.Inner``). The dotted form ``package.module.Name`` is accepted too:
    it means the module ``package.module`` and its attribute ``Name`` (the last component is
    always the attribute). Both forms name the same plugin (:attr:`PluginSpec.path` is the
    colon form), so they share a code identity and cached rankings.

The ranking rule (:func:`rank_estimator`), the first of these attributes the fitted estimator has
(an attribute that is ``None`` counts as absent):

1. ``ranking_``: a permutation of ``range(d)`` is fsbench's own convention, feature indices best
   first, and is used as is. Any other vector of d finite numbers is read as ranks, one per
   feature, lower is better (scikit-learn's ``RFE.ranking_``: 1 for the selected features, then
   2, 3, ... in reverse order of elimination); the ranking is their stable argsort (tied ranks,
   such as RFE's selected features, keep the lower index first). A 0-based rank vector without
   ties is itself a permutation and is read as indices: such a selector should expose ranks from
   1, as scikit-learn does, or scores.
2. ``scores_``: higher is better.
3. ``feature_importances_``: higher is better.
4. ``coef_``: a 1-D ``coef_`` ranks by ``|coef_j|``; a 2-D ``coef_`` (classes x d, as
   scikit-learn's linear models have) ranks feature j by the Euclidean norm of its column,
   ``sqrt(sum_c coef_cj^2)`` (the l2 norm over classes; for one row, ``|coef_j|``).

Scores, importances and coefficient norms rank by :func:`fsbench.selectors.base.rank_by_scores`:
decreasing, ties keep the lower index first, NaN last. A score function ``f(X, y)`` (the
functions ``SelectKBest`` takes) returns the scores or a ``(scores, pvalues)`` pair; it ranks by
the scores (p-values ignored), by the same rule. Whatever the source, the ranking must be a
permutation of ``range(d)``, or the fit raises :class:`PluginError`.

Entry points
    An installed package registers selectors in the entry-point group ``fsbench.selectors``
    (``name = package.module:Name``, the object a selector class or a score function). A
    config names them like built-ins. A name that is also a built-in's is *shadowed*: the
    built-in keeps the name (installing a package never changes what a published config
    computes), :func:`list_plugins` shows the plugin as shadowed, and it stays usable through
    ``class:``/``score_func:`` and its import path.

Every error a user can cause is a :class:`PluginError` (a ``ConfigError``): one line, naming the
problem; its ``key`` says which config key is at fault (``class``, ``score_func``,
``params.alpha``, ``grid.alpha``...).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import hashlib
import importlib
import importlib.metadata
import inspect
import io
import json
import keyword
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from sklearn.utils._param_validation import HasMethods

from fsbench.errors import ConfigError
from fsbench.selectors.base import RANDOM_STATE, BaseSelector, count, rank_by_scores

__all__ = [
    "ENTRY_POINT_GROUP", "RANKING_ATTRIBUTES", "ExternalSelector", "PluginError", "PluginInfo", "PluginSpec",
    "build_selector", "canonical_path", "discover_plugins", "distribution_versions", "find_plugin", "list_plugins",
    "load_object", "parameter_defaults", "parameter_names", "plugin_code", "probe", "probe_problem",
    "rank_estimator", "rank_scores", "resolve", "spec_of", "uses_random_state",
]

ENTRY_POINT_GROUP = "fsbench.selectors"
#: the attributes read from a fitted estimator, in this order
RANKING_ATTRIBUTES = ("ranking_", "scores_", "feature_importances_", "coef_")
#: the probe problem: samples, features, classes (:func:`probe`)
PROBE_SHAPE = (30, 6, 3)

Kind = Literal["class", "score_func"]


class PluginError(ConfigError):
    """A user's selector cannot be used: one line naming the problem; ``key`` is the config key
    at fault (``class``, ``score_func``, ``params``, ``params.<name>``, ``grid.<name>``) or None."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


def _first_line(exc: BaseException) -> str:
    """``TypeName: first line of the message`` (the type alone when the message is empty)."""
    lines = str(exc).strip().splitlines()
    text = lines[0].strip() if lines else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _sentence(text: str) -> str:
    return text if text.endswith((".", "?", "!")) else text + "."


# ----------------------------------------------------------------------------- import paths
def _split_path(path: str) -> tuple[str, str]:
    """(module, attribute) of an import path; PluginError when it is not one."""
    example = "write package.module:Name (for example sklearn.feature_selection:f_classif)"
    if not isinstance(path, str) or not path.strip():
        raise PluginError(f"{path!r} is not an import path; {example}.")
    text = path.strip()

    def dotted(part: str) -> bool:
        names = part.split(".")
        return all(n.isidentifier() and not keyword.iskeyword(n) for n in names)

    if text.count(":") == 1:
        module, attr = text.split(":")
    elif ":" not in text and "." in text:
        module, _, attr = text.rpartition(".")
    else:
        module, attr = "", ""
    if not (module and attr and dotted(module) and dotted(attr)):
        raise PluginError(f"{path!r} is not an import path; {example}.")
    return module, attr


def canonical_path(path: str) -> str:
    """The colon form of an import path: ``a.b.C`` and ``a.b:C`` -> ``a.b:C``."""
    return ":".join(_split_path(path))


def load_object(path: str) -> Any:
    """The object an import path names: ``package.module:Name`` (``Name`` may be dotted) or
    ``package.module.Name`` (the last component is the attribute).

    Raises PluginError (one line) for a malformed path, a module that cannot be imported (naming
    the module and the first line of the error) and a missing attribute (with close matches).
    """
    module_name, attr = _split_path(path)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise PluginError(f"Cannot import module {module_name!r} (from {path!r}): {_sentence(_first_line(exc))}") \
            from None
    except Exception as exc:  # the user's module raised while being imported
        raise PluginError(f"Importing module {module_name!r} (from {path!r}) raised "
                          f"{_sentence(_first_line(exc))}") from None
    owner = module_name
    for name in attr.split("."):
        if not hasattr(obj, name):
            public = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(name, public, n=3)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else "."
            raise PluginError(f"{owner!r} has no attribute {name!r} (from {path!r}){hint}")
        obj = getattr(obj, name)
        owner = f"{owner}.{name}" if owner != module_name else f"{module_name}:{name}"
    return obj


# ----------------------------------------------------------------------------- specs
@dataclasses.dataclass(frozen=True)
class PluginSpec:
    """A user's selector: ``kind`` "class" (an estimator class) or "score_func" (a function
    f(X, y) -> scores or (scores, pvalues)), ``path`` its import path in colon form, ``obj`` the
    object. Pickled by path (a worker process imports it again)."""

    kind: Kind
    path: str
    obj: Any = dataclasses.field(compare=False, repr=False)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_respec, (self.kind, self.path))

    @property
    def name(self) -> str:
        """The class or function name (the last component of the path)."""
        return self.path.rpartition(":")[2].rpartition(".")[2]


def _respec(kind: Kind, path: str) -> PluginSpec:
    return PluginSpec(kind, path, load_object(path))


def _check_class(obj: Any, path: str) -> None:
    if not isinstance(obj, type):
        if hasattr(obj, "fit") and hasattr(obj, "get_params"):
            raise PluginError(f"{path!r} is an estimator instance, not a class; name its class under class: "
                              "and give its parameters under params:.", "class")
        if callable(obj):
            raise PluginError(f"{path!r} is a function, not an estimator class; a function f(X, y) returning "
                              "scores goes under score_func:.", "class")
        raise PluginError(f"{path!r} is a {type(obj).__name__}, not an estimator class.", "class")
    missing = [m for m in ("fit", "get_params") if not callable(getattr(obj, m, None))]
    if missing:
        raise PluginError(f"{path!r} is not a scikit-learn estimator: it has no {' and no '.join(missing)} "
                          "method.", "class")


def _check_function(obj: Any, path: str) -> None:
    if isinstance(obj, type):
        raise PluginError(f"{path!r} is a class; an estimator class goes under class:, score_func: takes a "
                          "function f(X, y).", "score_func")
    if not callable(obj):
        raise PluginError(f"{path!r} is a {type(obj).__name__}, not a function f(X, y).", "score_func")
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # some built-ins have no signature: the probe calls it
        return
    try:
        signature.bind(np.zeros((2, 2)), np.zeros(2))
    except TypeError:
        raise PluginError(f"{path!r} cannot be called as f(X, y): its signature is {signature}.",
                          "score_func") from None


def spec_of(obj: Any, path: str) -> PluginSpec:
    """The spec of an already loaded object: a class is an estimator class, anything else callable
    a score function (entry points use this: their objects say what they are)."""
    path = canonical_path(path)
    if isinstance(obj, type):
        _check_class(obj, path)
        return PluginSpec("class", path, obj)
    _check_function(obj, path)
    return PluginSpec("score_func", path, obj)


def resolve(class_path: str | None = None, score_func: str | None = None) -> PluginSpec:
    """The spec of a config's ``class:`` or ``score_func:`` (exactly one of them).

    Raises PluginError when both or neither is given, the path cannot be loaded
    (:func:`load_object`), ``class:`` names no estimator class (a class with ``fit`` and
    ``get_params``: a ``sklearn.base.BaseEstimator`` subclass or one that behaves as one) or
    ``score_func:`` no function of (X, y).
    """
    if class_path is not None and score_func is not None:
        raise PluginError("A selector takes class: or score_func:, not both; keep one.", "score_func")
    if class_path is None and score_func is None:
        raise PluginError("A user selector needs class: (an estimator class) or score_func: (a function).")
    key: Kind = "class" if class_path is not None else "score_func"
    path = class_path if class_path is not None else score_func
    try:
        obj = load_object(path)
        canonical = canonical_path(path)
    except PluginError as exc:
        raise PluginError(str(exc), key) from None
    if key == "class":
        _check_class(obj, canonical)
    else:
        _check_function(obj, canonical)
    return PluginSpec(key, canonical, obj)


def _function_parameters(func: Callable[..., Any]) -> list[str] | None:
    """Keyword parameters of a score function after (X, y); None if it takes **kwargs or has no
    signature (any name is then passed on)."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    positional = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    skip = {p.name for p in positional[:2]}
    return [p.name for p in params if p.name not in skip and p.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]


def _class_parameters(cls: type) -> list[str] | None:
    """The parameters an estimator class accepts: ``get_params()`` of a default instance, else
    (a class whose parameters have no defaults) its ``__init__`` signature; None if that takes
    **kwargs."""
    try:
        with _quiet():
            return list(cls().get_params(deep=False))
    except Exception:
        pass
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL]


def parameter_names(spec: PluginSpec) -> list[str] | None:
    """The parameters a plugin accepts (an estimator's ``get_params()`` keys; a score function's
    keyword parameters after X, y), ``random_state`` included; None when it cannot say (a
    ``**kwargs`` signature)."""
    if spec.kind == "class":
        return _class_parameters(spec.obj)
    return _function_parameters(spec.obj)


def parameter_defaults(spec: PluginSpec) -> dict[str, Any]:
    """Parameter -> default, for listings (parameters without a default are left out)."""
    if spec.kind == "class":
        try:
            with _quiet():
                return dict(spec.obj().get_params(deep=False))
        except Exception:
            target: Any = spec.obj.__init__
    else:
        target = spec.obj
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return {}
    names = parameter_names(spec) or []
    return {p.name: p.default for p in signature.parameters.values()
            if p.name in names and p.default is not inspect.Parameter.empty}


def uses_random_state(spec: PluginSpec) -> bool:
    """Whether the plugin takes ``random_state``, which fsbench then sets from the task seed."""
    return "random_state" in (parameter_names(spec) or [])


# ----------------------------------------------------------------------------- ranking
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


def rank_scores(scores: Any, d: int, what: str = "scores") -> tuple[np.ndarray, np.ndarray]:
    """(ranking, scores) of a score vector: decreasing score, ties keep the lower index, NaN last."""
    arr = _as_vector(scores, d, what)
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
    # ranks (lower is better): RFE's 1 for the selected features, then 2, 3, ...
    return np.argsort(arr, kind="stable"), -arr, "ranking_ (ranks)"


def rank_estimator(estimator: Any, d: int) -> tuple[np.ndarray, np.ndarray, str]:
    """(ranking, scores, source) of a fitted estimator by the module's rule: the first of
    ``ranking_``, ``scores_``, ``feature_importances_``, ``coef_`` it has (see the module
    docstring). ``scores`` are such that ``rank_by_scores(scores)`` is the ranking (for a
    ``ranking_``, d, d - 1, ... 1 along it, or minus the ranks). PluginError when it has none
    of them or one that is not a vector of d numbers (for ``coef_``, c x d)."""
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
                return rank_by_scores(norms), norms, "coef_"
            if coef.ndim == 1:
                ranking, scores = rank_scores(np.abs(coef), d, f"{owner}.coef_")
                return ranking, scores, "coef_"
            raise PluginError(f"{owner}.coef_ has shape {coef.shape}; expected ({d},) or (classes, {d}).")
        ranking, scores = rank_scores(value, d, f"{owner}.{attr}")
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
    The estimator sees X as given and y coded 0..c-1.
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
        if self.score_func is not None:
            result = self.score_func(X, y, **self._kwargs())
            name = getattr(self.score_func, "__name__", type(self.score_func).__name__)
            ranking, scores = rank_scores(_score_function_scores(result), d, f"The scores of {name}")
            source = "score_func"
        else:
            est = self.make_estimator()
            est.fit(X, y)
            self.estimator_ = est
            ranking, scores, source = rank_estimator(est, d)
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


# ----------------------------------------------------------------------------- the probe
@contextlib.contextmanager
def _quiet() -> Any:
    """No warnings and no printed output (a user's fit may print or warn)."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def probe_problem(nonnegative: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The probe's data: 30 samples x 6 features, 3 balanced classes, fixed seed; features 0-2
    carry the class, 3-5 are noise. Columns standardized (what fsbench passes a selector after its
    default preprocessing), or scaled to [0, 1] when ``nonnegative``."""
    n, d, c = PROBE_SHAPE
    rng = np.random.default_rng(20240614)
    y = np.arange(n) % c
    X = rng.standard_normal((n, d))
    X[:, :c] += 2.0 * np.eye(c)[y]
    if nonnegative:
        X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    else:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, y


def _check_keys(spec: PluginSpec, params: Mapping[str, Any], grid: Mapping[str, Sequence[Any]]) -> None:
    accepted = parameter_names(spec)
    for section, keys in (("params", list(params)), ("grid", list(grid))):
        for key in keys:
            where = f"{section}.{key}"
            if key == "random_state" and (accepted is None or key in accepted):
                raise PluginError("random_state cannot be set: fsbench derives it from the config seed and the "
                                  "task.", where)
            if accepted is not None and key not in accepted:
                close = difflib.get_close_matches(key, accepted, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else (
                    f"; its parameters: {', '.join(accepted)}." if accepted else "; it takes no parameters.")
                raise PluginError(f"{spec.path} has no parameter {key!r}{hint}", where)
    both = sorted(set(params) & set(grid))
    if both:
        raise PluginError(f"{both[0]!r} is both fixed in params and searched in grid; keep one.", f"grid.{both[0]}")
    for key, values in grid.items():
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise PluginError(f"grid.{key} must be a non-empty list of values.", f"grid.{key}")


def _instantiate(spec: PluginSpec, kwargs: dict[str, Any], where: str) -> None:
    """Create the estimator with ``kwargs`` and check the values with its own ``_validate_params``
    when it declares ``_parameter_constraints`` (scikit-learn's estimators), without fitting."""
    try:
        with _quiet():
            est = spec.obj(**kwargs)
    except Exception as exc:
        raise PluginError(f"{spec.path} cannot be created with {_describe(kwargs)}: {_sentence(_first_line(exc))}",
                          where) from None
    validate = getattr(est, "_validate_params", None)
    if callable(validate) and isinstance(getattr(est, "_parameter_constraints", None), dict):
        try:
            with _quiet():
                validate()
        except Exception as exc:
            raise PluginError(f"{spec.path} refuses {_describe(kwargs)}: {_sentence(_first_line(exc))}",
                              where) from None


def _describe(kwargs: Mapping[str, Any]) -> str:
    if not kwargs:
        return "no parameters"
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def probe(spec: PluginSpec, params: Mapping[str, Any] | None = None,
          grid: Mapping[str, Sequence[Any]] | None = None, *, nonnegative: bool = False) -> str:
    """Validate a plugin with a config's ``params`` and ``grid`` before anything runs; return the
    attribute that ranks its features (``ExternalSelector.ranked_by_``).

    Checks, in this order, each failure a PluginError with the key at fault:

    - every params and grid key is a parameter of the plugin (an estimator's ``get_params()``
      keys, a function's keyword parameters), ``random_state`` excepted: fsbench sets it;
    - an estimator class: it is created with the fixed params, and with them plus each grid value
      on its own (values judged by its ``_validate_params`` when it declares
      ``_parameter_constraints``, as scikit-learn's estimators do);
    - one fit on :func:`probe_problem` (30 x 6, 3 classes; ``nonnegative`` for data in [0, 1],
      e.g. when the config's preprocessing is ``none`` and the selector needs counts) with the
      fixed params and the first value of each grid key, ``random_state`` 0, warnings and output
      suppressed: it must end with one of ``ranking_``, ``scores_``, ``feature_importances_``,
      ``coef_`` (a score function: d scores) giving a permutation of the features. An exception
      the user's code raises is reported as one line, the class (function) and the exception's
      first line.

    Cost: one fit of 30 samples x 6 features, which is the mitigation for a slow selector; there
    is no time limit (a thread cannot be stopped), so a selector slow even on that delays
    validation by as much. Parameter values that only fail on the full data (a neighbour count
    above 29) are not caught, and the other grid points are not fitted.
    """
    params = dict(params or {})
    grid = dict(grid or {})
    _check_keys(spec, params, grid)
    if spec.kind == "class":
        _instantiate(spec, params, "params")
        for key, values in grid.items():
            for value in values:
                _instantiate(spec, {**params, key: value}, f"grid.{key}")
    first = {key: values[0] for key, values in grid.items()}
    selector = build_selector(spec, {**params, **first}, n_features_to_select=1,
                              random_state=0 if uses_random_state(spec) else None)
    X, y = probe_problem(nonnegative)
    what = "class" if spec.kind == "class" else "function"
    try:
        with _quiet():
            selector.fit(X, y)
    except PluginError as exc:  # the output cannot rank: name the plugin by its path
        message = str(exc)
        if message.startswith(spec.name + " "):
            message = spec.path + message[len(spec.name):]
        raise PluginError(message, exc.key or spec.kind) from None
    except Exception as exc:
        raise PluginError(f"The {what} {spec.path} raised {_first_line(exc).rstrip('.')} while fitting a "
                          f"{PROBE_SHAPE[0]} x {PROBE_SHAPE[1]} probe problem with {_describe({**params, **first})}.",
                          spec.kind) from None
    return selector.ranked_by_


# ----------------------------------------------------------------------------- code identity
@functools.lru_cache(maxsize=4)
def _top_level_distributions(path_key: tuple[str, ...]) -> dict[str, list[str]]:
    """importlib.metadata.packages_distributions(), once per sys.path (it scans every
    distribution: a third of a second)."""
    return importlib.metadata.packages_distributions()


def distribution_versions(module: str) -> list[str]:
    """``name==version`` of each distribution providing the top-level package of ``module``
    (usually one); empty when it is not installed as a distribution."""
    top = module.partition(".")[0]
    names = sorted(set(_top_level_distributions(tuple(sys.path)).get(top, [])))
    out = []
    for name in names:
        try:
            out.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover - listed, then removed
            continue
    return out


def _defining_module(spec: PluginSpec) -> str:
    obj = spec.obj
    if callable(obj) and not isinstance(obj, type):
        obj = inspect.unwrap(obj)  # a decorator's wrapper lives elsewhere (sklearn's validate_params)
    module = getattr(obj, "__module__", None)
    return module if isinstance(module, str) and module else spec.path.partition(":")[0]


def _file_digest(module_name: str) -> str:
    module = sys.modules.get(module_name)
    if module is None:
        try:
            module = importlib.import_module(module_name)
        except Exception:
            return "no-module"
    file = getattr(module, "__file__", None)
    if not file:
        return "no-file"
    try:
        with open(file, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return "unreadable"


def plugin_code(spec: PluginSpec) -> str:
    """The code identity of a plugin: 16 hex digits of a sha256 over

    - its import path and kind;
    - the bytes of the file of the module that defines the class or function (its
      ``__module__``, after unwrapping decorators: for ``sklearn.feature_selection:f_classif``,
      ``sklearn/feature_selection/_univariate_selection.py``); any edit of that file, comments
      included, changes the identity. Other modules of the plugin's package do not count: a
      change there counts through the package's version only;
    - ``name==version`` of the distribution(s) installing its top-level package, ``unknown``
      when it is not installed as one (a module on sys.path). For scikit-learn's own classes
      and functions this is scikit-learn's version;
    - the code of this module and of fsbench.selectors.base, which compute the ranking from
      the plugin's output.

    The rankings cache keys on it, and result rows record it, so a changed plugin is refitted.
    """
    from fsbench.selectors import module_digest

    module = _defining_module(spec)
    versions = distribution_versions(module) or ["unknown"]
    ours = [module_digest(m, m) for m in (__name__, "fsbench.selectors.base")]
    payload = json.dumps([spec.kind, spec.path, module, _file_digest(module), versions, ours])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------- entry points
def _entry_points() -> dict[str, list[importlib.metadata.EntryPoint]]:
    found: dict[str, list[importlib.metadata.EntryPoint]] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, []).append(ep)
    return dict(sorted(found.items()))


def _distribution(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


def _builtin_names() -> set[str]:
    from fsbench.selectors import registry

    return set(registry())


def _load_entry_point(ep: importlib.metadata.EntryPoint) -> PluginSpec:
    where = f"entry point {ep.name!r} ({ep.value}, from {_distribution(ep)})"
    path = ep.value.split("[", 1)[0].strip()  # "module:attr [extras]"
    try:
        obj = load_object(path)
        return spec_of(obj, path)
    except PluginError as exc:
        raise PluginError(f"The {where} cannot be used: {exc}") from None


def _plugin_entry(name: str, eps: list[importlib.metadata.EntryPoint]) -> PluginSpec:
    if len({ep.value for ep in eps}) > 1:
        raise PluginError(f"Selector {name!r} is registered by {' and by '.join(map(_distribution, eps))}; "
                          "name the one you mean by its import path under class: or score_func:.")
    return _load_entry_point(eps[0])


def find_plugin(name: str) -> PluginSpec | None:
    """The plugin an installed package registers as ``name`` (group ``fsbench.selectors``), loaded;
    None when no package does or a built-in selector has that name (the built-in wins).
    PluginError when it cannot be loaded, is neither an estimator class nor a function, or two
    distributions register the name with different objects."""
    eps = _entry_points().get(name)
    if not eps or name in _builtin_names():
        return None
    return _plugin_entry(name, eps)


def discover_plugins() -> dict[str, PluginSpec]:
    """Every plugin installed packages register, by name, loaded (shadowed names left out: a
    built-in has them). PluginError on the first that cannot be used."""
    builtins = _builtin_names()
    return {name: _plugin_entry(name, eps) for name, eps in _entry_points().items() if name not in builtins}


@dataclasses.dataclass(frozen=True)
class PluginInfo:
    """One registered plugin, for ``fsbench selectors``. ``status``: "ok"; "shadowed" (a built-in
    has the name; usable by import path); "ambiguous" (two distributions register the name);
    "broken" (it cannot be loaded or is not a selector; ``summary`` says why)."""

    name: str
    path: str
    kind: str  # "class", "score_func" or "" when broken
    distribution: str  # "name version"
    summary: str
    status: str
    params: dict[str, Any]  # parameter -> default


def _summary(obj: Any) -> str:
    doc = obj.__doc__ if isinstance(obj, type) else inspect.getdoc(obj)  # a class's own docstring only
    lines = inspect.cleandoc(doc).strip().splitlines() if isinstance(doc, str) and doc.strip() else []
    return lines[0].strip() if lines else "(no description)"


def list_plugins() -> list[PluginInfo]:
    """Every entry point of group ``fsbench.selectors``, sorted by name, each loaded to read its
    summary (the first line of its docstring) and parameters; never raises for a plugin's fault
    (its status says it)."""
    builtins = _builtin_names()
    out = []
    for name, eps in _entry_points().items():
        ambiguous = len({ep.value for ep in eps}) > 1
        for ep in eps:
            dist = _distribution(ep)
            try:
                spec = _load_entry_point(ep)
            except PluginError as exc:
                out.append(PluginInfo(name, ep.value, "", dist, str(exc), "broken", {}))
                continue
            status = "shadowed" if name in builtins else "ambiguous" if ambiguous else "ok"
            summary = _summary(spec.obj)
            if status == "shadowed":
                summary = f"{summary} (shadowed by the built-in {name!r}; use class:/score_func: {spec.path})"
            elif status == "ambiguous":
                summary = f"{summary} (the name is registered twice; use class:/score_func: {spec.path})"
            out.append(PluginInfo(name, spec.path, spec.kind, dist, summary, status, parameter_defaults(spec)))
            if not ambiguous:
                break
    return out

