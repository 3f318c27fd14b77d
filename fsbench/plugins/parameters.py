"""The parameters of a user's selector: the names an estimator class (its ``get_params()``, else
its ``__init__``) or a score function (its keyword parameters after X, y) accepts, their
defaults, and whether it takes ``random_state`` (fsbench then sets it from the task seed).

Creating a default instance runs the user's code: that runs under :func:`_quiet` (no warnings,
no printed output). Fits, the probe's and a run's, send the plugin's printed output to standard
error instead (:func:`fsbench.plugins.output_to_stderr`), where the user can read it.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import warnings
from collections.abc import Callable
from typing import Any

from fsbench.plugins.loading import PluginSpec

__all__ = ["parameter_defaults", "parameter_names", "uses_random_state"]


@contextlib.contextmanager
def _quiet() -> Any:
    """No warnings and no printed output (a user's fit may print or warn)."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


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
