"""The config-time check of a user's selector (:func:`probe`): its params and grid keys are
parameters it takes, an estimator class accepts their values, and two fits on a small fixed
problem (:func:`probe_problem`) give a ranking, so that a broken plugin fails before anything
runs, naming the config key at fault; a plugin whose two fits differ, or that writes into its
input, is warned about (:class:`PluginWarning`).

Warnings
    The probe's checks that do not stop a run are Python warnings of category
    :class:`PluginWarning`, issued while the config is read and attributed to the plugin's own
    source line (its ``class`` or ``def``), so that the interpreter prints them on standard
    error as ``plugin.py:12: PluginWarning: ...`` followed by that line; a caller may record or
    format them (``warnings.catch_warnings(record=True)``), and ``-W error::UserWarning`` turns
    them into errors.
"""

from __future__ import annotations

import difflib
import inspect
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fsbench.plugins.loading import PluginError, PluginSpec, _first_line, _sentence
from fsbench.plugins.output import output_to_stderr
from fsbench.plugins.parameters import _quiet, parameter_names, uses_random_state
from fsbench.plugins.ranking import ExternalSelector, build_selector

__all__ = ["PROBE_SHAPE", "PluginWarning", "probe", "probe_problem"]


class PluginWarning(UserWarning):
    """A user's selector can run, but something about it deserves attention: its fits are not
    reproducible, or it writes into the data it is given (:func:`probe`)."""

#: the probe problem: samples, features, classes (:func:`probe`)
PROBE_SHAPE = (30, 6, 3)

#: seconds: a first probe fit slower than this is not repeated (:func:`probe`'s reproducibility check)
REPEAT_BUDGET = 1.0


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
    - two fits (one when the first is slow, see Cost) on :func:`probe_problem` (30 x 6, 3
      classes; ``nonnegative`` for data in [0, 1], e.g. when the config's preprocessing is
      ``none`` and the selector needs counts) with the fixed params and the first value of
      each grid key, ``random_state`` 0 both times, warnings suppressed and printed output
      sent to standard error (as in a run's fits, :func:`fsbench.plugins.output_to_stderr`),
      each on its own copy of the problem: each must end with one of ``ranking_``,
      ``scores_``, ``feature_importances_``, ``coef_`` (a score function: d scores) giving
      a permutation of the features, by the rule of :mod:`fsbench.plugins.ranking` (NaN scores
      only for constant features, and the probe problem has none). An exception the user's
      code raises is reported as one line, the class (function) and the exception's first line.

    Warns (:class:`PluginWarning`, the run goes on) when the two fits give different rankings
    or scores: an unseeded random choice, which would make two runs of one config give
    different rows; and when a fit wrote into the X it was given (fsbench fits every selector
    on its own copy, so no result is affected, but the plugin is named).

    Cost: two fits of 30 samples x 6 features, which is the mitigation for a slow selector; there
    is no time limit (a thread cannot be stopped), but a first fit slower than
    :data:`REPEAT_BUDGET` seconds is not repeated, so a selector slow even on that delays
    validation by one fit, and its reproducibility is not checked. Parameter values that only
    fail on the full data (a neighbour count above 29) are not caught, the other grid points are
    not fitted, and a selector random only on larger data (or whose two unseeded fits happen to
    agree here) is not warned about.
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
    X, y = probe_problem(nonnegative)
    t0 = time.perf_counter()
    one, wrote = _probe_fit(spec, {**params, **first}, X, y)
    differs = None
    if time.perf_counter() - t0 <= REPEAT_BUDGET:
        two, _ = _probe_fit(spec, {**params, **first}, X, y)
        differs = ("rankings" if not np.array_equal(one.ranking_, two.ranking_)
                   else "scores" if not np.array_equal(one.scores_, two.scores_, equal_nan=True) else None)
    if differs:
        fix = ("seed every random choice from its random_state parameter (sklearn.utils.check_random_state("
               "self.random_state)), which fsbench sets from the config seed" if uses_random_state(spec) else
               "give it a random_state parameter and seed every random choice from it, which fsbench then sets "
               "from the config seed")
        _warn(spec, f"{spec.path} gave different {differs} in two fits of the same {PROBE_SHAPE[0]} x "
                    f"{PROBE_SHAPE[1]} probe problem with the same random_state, so two runs of one config would "
                    f"give different rows: {fix}.")
    if wrote:
        _warn(spec, f"{spec.path} writes into the X it is given to fit; fsbench fits every selector on its own copy, "
                    "so no result is affected, but copy X before changing it (X = X - m or X = X.copy(), not "
                    "X -= m).")
    return one.ranked_by_


def _warn(spec: PluginSpec, message: str) -> None:
    """Issue a PluginWarning at the plugin's definition (its file and the line of its ``class`` or
    ``def``), where the user will fix it; at the probe's caller when the source is unknown."""
    try:
        obj = inspect.unwrap(spec.obj)
        filename = inspect.getsourcefile(obj)
        lineno = inspect.getsourcelines(obj)[1]
    except (TypeError, OSError):
        filename = None
    if not filename:
        warnings.warn(message, PluginWarning, stacklevel=3)
        return
    module = getattr(obj, "__module__", None) or spec.path.partition(":")[0]
    warnings.warn_explicit(message, PluginWarning, filename, lineno, module=module)


def _probe_fit(spec: PluginSpec, params: dict[str, Any], X: np.ndarray, y: np.ndarray
               ) -> tuple[ExternalSelector, bool]:
    """One probe fit, on its own copy of the probe problem: the fitted selector, and whether the
    fit wrote into X. PluginError (key: the plugin's) for whatever goes wrong."""
    selector = build_selector(spec, params, n_features_to_select=1,
                              random_state=0 if uses_random_state(spec) else None)
    X_fit = X.copy()
    what = "class" if spec.kind == "class" else "function"
    try:
        with warnings.catch_warnings(), output_to_stderr():
            warnings.simplefilter("ignore")
            selector.fit(X_fit, y.copy())
    except PluginError as exc:  # the output cannot rank: name the plugin by its path
        message = str(exc)
        if message.startswith(spec.name + " "):
            message = spec.path + message[len(spec.name):]
        raise PluginError(message, exc.key or spec.kind) from None
    except Exception as exc:
        raise PluginError(f"The {what} {spec.path} raised {_first_line(exc).rstrip('.')} while fitting a "
                          f"{PROBE_SHAPE[0]} x {PROBE_SHAPE[1]} probe problem with {_describe(params)}.",
                          spec.kind) from None
    return selector, not np.array_equal(X_fit, X)
