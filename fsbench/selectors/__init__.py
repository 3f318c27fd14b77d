"""The built-in feature selectors, each a scikit-learn estimator, and their registry.

Every module of this package defines its selector classes and registers each under a short
name with :func:`register`; the package imports its modules on first use, so adding a
selector is adding a module. ``fsbench selectors`` lists the registry. :mod:`fsbench.selectors.base`
holds the base class and the parameter checks; the modules named ``_x`` are helpers of the
selectors (discretization, the SVM and DSO solvers), private to this package.

The code identity a selector's rows carry is :func:`selector_code`, within :data:`SELECTOR_SCOPE`
(the evaluation protocol's is :func:`fsbench.evaluation.protocol_code`).

Sparse (CSR) data: :func:`accepts_sparse`, :func:`fit_sparse`, :func:`sparse_code`,
:func:`dense_fit_bytes`, :func:`sparse_fit_bytes` and :data:`SPARSE_ROUTES`, from :mod:`fsbench.selectors.sparse_input`,
which is imported on first use of one of them (it imports the selector modules).

May import: errors, fixed_order, code_identity, storage and datasets.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fsbench.code_identity import module_digest
from fsbench.errors import ConfigError
from fsbench.selectors.base import BaseSelector, describe_constraints, rank_by_scores

__all__ = ["SELECTOR_SCOPE", "SPARSE_ROUTES", "BaseSelector", "SelectorInfo", "accepts_sparse", "dense_fit_bytes",
           "fit_sparse", "get_selector", "make_selector", "rank_by_scores", "register", "registry", "selector_code",
           "sparse_code", "sparse_fit_bytes"]

#: the names of the sparse route (:mod:`fsbench.selectors.sparse_input`), resolved on first use
_SPARSE_NAMES = ("SPARSE_ROUTES", "accepts_sparse", "dense_fit_bytes", "fit_sparse", "sparse_code", "sparse_fit_bytes")

_REGISTRY: dict[str, type[BaseSelector]] = {}
_loaded = False


#: the code whose identity a selector's rows carry: the selector modules (not this registry) and
#: the fixed-order sums some of them call
SELECTOR_SCOPE = ("fsbench.selectors.", "fsbench.fixed_order")


def selector_code(name: str) -> str:
    """The code identity of registered selector ``name``: :func:`fsbench.code_identity.module_digest`
    of the module that defines it within :data:`SELECTOR_SCOPE` (its own module, and the helpers,
    base class and fixed-order sums it imports, transitively). It keys the rankings cache and is
    recorded in every result row; moving a module unchanged keeps it."""
    cls = get_selector(name).cls
    if cls.__module__ not in sys.modules:  # pragma: no cover - registered classes are imported
        importlib.import_module(cls.__module__)
    return module_digest(cls.__module__, SELECTOR_SCOPE)


def register(name: str) -> Callable[[type[BaseSelector]], type[BaseSelector]]:
    """Class decorator: make a selector available to configs under ``name``.

    The class must declare the valid values of every parameter of its ``__init__`` in
    ``_parameter_constraints`` (scikit-learn's convention; see ``fsbench.selectors.base``).
    """

    def decorate(cls: type[BaseSelector]) -> type[BaseSelector]:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise RuntimeError(f"selector name {name!r} registered twice")
        undeclared = sorted(set(inspect.signature(cls.__init__).parameters) - {"self"}
                            - set(cls._parameter_constraints))
        if undeclared:
            raise RuntimeError(f"selector {name!r} declares no _parameter_constraints for "
                               f"{', '.join(undeclared)}")
        cls.registry_name = name
        _REGISTRY[name] = cls
        return cls

    return decorate


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_") and module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")
    _loaded = True


@dataclass(frozen=True)
class SelectorInfo:
    name: str
    cls: type[BaseSelector]
    summary: str
    params: dict[str, Any]  # parameter name -> default
    allowed: dict[str, str]  # parameter name -> its valid values in words ("float in (0, 1]")


def registry() -> dict[str, SelectorInfo]:
    """All registered selectors by name, sorted."""
    _load_all()
    out = {}
    for name in sorted(_REGISTRY):
        cls = _REGISTRY[name]
        summary = cls.summary or (inspect.getdoc(cls) or "").split("\n", 1)[0]
        params = {
            p.name: p.default
            for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self"
        }
        allowed = {k: describe_constraints(cls._parameter_constraints[k], short=True) for k in params}
        out[name] = SelectorInfo(name, cls, summary, params, allowed)
    return out


def get_selector(name: str) -> SelectorInfo:
    """Look a selector up by name; an unknown name raises a ConfigError with a suggestion."""
    reg = registry()
    if name not in reg:
        close = difflib.get_close_matches(name, reg, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"Unknown selector {name!r}.{hint} Run 'fsbench selectors' to list them."
        )
    return reg[name]


def make_selector(name: str, params: dict[str, Any] | None = None) -> BaseSelector:
    """Instantiate a registered selector with the given parameters."""
    return get_selector(name).cls(**(params or {}))


def __getattr__(name: str) -> Any:
    """The sparse route's names, from :mod:`fsbench.selectors.sparse_input` imported on first use
    (importing it here would import every selector module with the package)."""
    if name in _SPARSE_NAMES:
        module = importlib.import_module(f"{__name__}.sparse_input")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SPARSE_NAMES))
