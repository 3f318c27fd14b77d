"""Selectors that installed packages register: found by name for a config
(:func:`find_plugin`), all of them (:func:`discover_plugins`), and listed for
``fsbench selectors`` (:func:`list_plugins`).

Entry points
    An installed package registers selectors in the entry-point group ``fsbench.selectors``
    (``name = package.module:Name``, the object a selector class or a score function). A
    config names them like built-ins. A name that is also a built-in's is *shadowed*: the
    built-in keeps the name (installing a package never changes what a published config
    computes), :func:`list_plugins` shows the plugin as shadowed, and it stays usable through
    ``class:``/``score_func:`` and its import path.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import inspect
from typing import Any

from fsbench.plugins.loading import PluginError, PluginSpec, load_object, spec_of
from fsbench.plugins.parameters import parameter_defaults

__all__ = ["ENTRY_POINT_GROUP", "PluginInfo", "discover_plugins", "find_plugin", "list_plugins"]

ENTRY_POINT_GROUP = "fsbench.selectors"


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
