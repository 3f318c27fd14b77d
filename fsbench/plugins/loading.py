"""Loading a user's selector: its import path, the object it names, and the
:class:`PluginSpec` that describes it (an estimator class or a score function); and
:class:`PluginError`, the one-line error of every module of :mod:`fsbench.plugins`.

Import paths
    ``package.module:Name`` is the canonical form (the one entry points use); ``Name`` may be
    dotted (``module:Outer.Inner``). The dotted form ``package.module.Name`` is accepted too:
    it means the module ``package.module`` and its attribute ``Name`` (the last component is
    always the attribute). Both forms name the same plugin (:attr:`PluginSpec.path` is the
    colon form), so they share a code identity and cached rankings.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import keyword
from typing import Any, Literal

import numpy as np

from fsbench.errors import ConfigError

__all__ = ["Kind", "PluginError", "PluginSpec", "canonical_path", "load_object", "resolve", "spec_of"]

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
