"""Registry of feature selectors.

Every module of this package defines its selector classes and registers each under a short
name with :func:`register`; the package imports its modules on first use, so adding a
selector is adding a module. ``fsbench selectors`` lists the registry.
"""

from __future__ import annotations

import ast
import difflib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbench.errors import ConfigError
from fsbench.selectors.base import BaseSelector, describe_constraints, rank_by_scores

__all__ = ["BaseSelector", "SelectorInfo", "get_selector", "make_selector", "module_digest",
           "protocol_code", "rank_by_scores", "register", "registry", "selector_code"]

_REGISTRY: dict[str, type[BaseSelector]] = {}
_loaded = False


def _without_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _fsbench_imports(tree: ast.Module, within: str) -> set[str]:
    """The modules of package ``within`` that a module imports (fsbench uses absolute imports)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            # ``from fsbench.selectors import _svm`` imports a module, not a name of the package
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in found if m.startswith(within + ".") and _module_exists(m)}


def _module_exists(name: str) -> bool:
    parent, _, leaf = name.rpartition(".")
    package = sys.modules.get(parent) or importlib.import_module(parent)
    return hasattr(package, "__path__") and any(m.name == leaf for m in pkgutil.iter_modules(package.__path__))


@functools.cache
def module_digest(module: str, within: str = "fsbench") -> str:
    """The code identity of a module: a hash of its syntax tree and of the modules of ``within`` it
    imports, transitively; docstrings, comments and layout do not count.

    Two versions of a module whose code is the same but for its documentation get the same digest,
    so results stay valid across documentation edits and become stale with any change of code.
    """
    seen: set[str] = set()
    trees: dict[str, ast.Module] = {}
    pending = [module]
    h = hashlib.sha256()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        trees[name] = ast.parse(Path(importlib.util.find_spec(name).origin).read_text(encoding="utf-8"))
        pending += sorted(_fsbench_imports(trees[name], within) - seen)
    for name in sorted(trees):
        h.update(name.encode())
        h.update(ast.dump(_without_docstrings(trees[name])).encode())
    return h.hexdigest()[:16]


def selector_code(name: str) -> str:
    """The code identity of registered selector ``name``: :func:`module_digest` of the module that
    defines it, within ``fsbench.selectors`` (its own module, the helpers and base class it
    imports). It keys the rankings cache and is recorded in every result row."""
    cls = get_selector(name).cls
    if cls.__module__ not in sys.modules:  # pragma: no cover - registered classes are imported
        importlib.import_module(cls.__module__)
    return module_digest(cls.__module__, __name__)


def protocol_code() -> str:
    """The code identity of the evaluation protocol (fsbench.protocol, the classifiers it builds,
    fsbench.classifiers, and its exact LIBSVM and LIBLINEAR routes, fsbench.linear_libsvm and
    fsbench.linear_liblinear), recorded in every row as ``protocol_code``."""
    return (module_digest("fsbench.protocol", "fsbench.protocol") + module_digest("fsbench.classifiers",
            "fsbench.classifiers")[:8] + module_digest("fsbench.linear_libsvm", "fsbench.linear_libsvm")[:8]
            + module_digest("fsbench.linear_liblinear", "fsbench.linear_liblinear")[:8])


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
