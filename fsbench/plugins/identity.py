"""The code identity of a user's selector (:func:`plugin_code`): what the rankings cache keys on
and result rows record, so that a changed plugin, or a change of how fsbench ranks its
output, is refitted.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import inspect
import json
import sys

from fsbench.code_identity import module_digest
from fsbench.plugins.loading import PluginSpec

__all__ = ["distribution_versions", "plugin_code"]

#: (module, scope): the code that turns a plugin's output into a ranking, each module hashed with
#: the modules of its scope it imports (:func:`fsbench.code_identity.module_digest`)
_RANKING_CODE = (("fsbench.plugins.ranking", ("fsbench.plugins.",)),
                 ("fsbench.selectors.base", ("fsbench.selectors.base",)))


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
    - the code that computes the ranking from the plugin's output (:data:`_RANKING_CODE`, by
      :func:`fsbench.code_identity.module_digest`, so documentation edits and moves do not count):
      :mod:`fsbench.plugins.ranking` with the modules of :mod:`fsbench.plugins` it imports
      (:mod:`~fsbench.plugins.loading` and :mod:`~fsbench.plugins.parameters`, which create the
      estimator and call it), and :mod:`fsbench.selectors.base`. The probe, the entry points and
      this module do not count: they never change a ranking.

    The rankings cache keys on it, and result rows record it, so a changed plugin is refitted.
    """
    module = _defining_module(spec)
    versions = distribution_versions(module) or ["unknown"]
    ours = [module_digest(m, package) for m, package in _RANKING_CODE]
    payload = json.dumps([spec.kind, spec.path, module, _file_digest(module), versions, ours])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
