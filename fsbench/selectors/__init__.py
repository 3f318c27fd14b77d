"""Registry of feature selectors.

Every module of this package defines its selector classes and registers each under a short
name with :func:`register`; the package imports its modules on first use, so adding a
selector is adding a module. ``fsbench selectors`` lists the registry.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib
import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbench.errors import ConfigError
from fsbench.selectors.base import BaseSelector, rank_by_scores

__all__ = ["BaseSelector", "SelectorInfo", "get_selector", "make_selector", "rank_by_scores",
           "register", "registry", "source_digest"]

_REGISTRY: dict[str, type[BaseSelector]] = {}
_loaded = False


@functools.cache
def source_digest() -> str:
    """A hash of this package's source files: part of every cache key of fitted selectors.

    The fits are deterministic functions of the data, the parameters and this code, so cached
    rankings and objective traces stay valid exactly as long as the code is unchanged (a
    version number is not bumped by every change of a solver).
    """
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def register(name: str) -> Callable[[type[BaseSelector]], type[BaseSelector]]:
    """Class decorator: make a selector available to configs under ``name``."""

    def decorate(cls: type[BaseSelector]) -> type[BaseSelector]:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise RuntimeError(f"selector name {name!r} registered twice")
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
        out[name] = SelectorInfo(name, cls, summary, params)
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
