"""Selectors from outside fsbench: a scikit-learn estimator class or a score function, named by
its import path in a config or registered by an installed package.

This package is the library behind the config keys ``class:`` and ``score_func:``; it reads no
file and writes no result. A plugin is described by a :class:`PluginSpec` (from
:func:`resolve`, :func:`find_plugin` or :func:`discover_plugins`); :func:`probe` validates it
with its parameters before anything runs; :func:`build_selector` makes the
:class:`ExternalSelector` that the runner fits like a built-in selector; :func:`plugin_code` is
its code identity for the rankings cache and the result rows; :func:`output_to_stderr` is where
a plugin's printed output goes while fsbench fits or probes it.

A plugin is user code, so fsbench does not trust it with shared state: it is fitted on its own
copy of the data (:func:`fsbench.engine.fitting.fit_selector`), NaN scores fail its fit
(:mod:`~fsbench.plugins.ranking`), its printed output goes to standard error, and the probe
warns (:class:`PluginWarning`) when two fits with the same ``random_state`` differ.

Its modules, each depending only on those listed before it:

- :mod:`~fsbench.plugins.output`: :func:`output_to_stderr`, a plugin's standard output sent to
  standard error (Python's stream and file descriptor 1);
- :mod:`~fsbench.plugins.loading`: import paths (``package.module:Name``), :class:`PluginSpec`,
  :func:`resolve` and :func:`spec_of`, and :class:`PluginError`;
- :mod:`~fsbench.plugins.parameters`: the parameters a plugin accepts, their defaults, and
  whether it takes ``random_state``;
- :mod:`~fsbench.plugins.ranking`: the ranking rule (how a fitted estimator's ``ranking_``,
  ``scores_``, ``feature_importances_`` or ``coef_``, or a score function's output, becomes a
  ranking) and :class:`ExternalSelector`;
- :mod:`~fsbench.plugins.probe`: the check of a plugin and its parameters at config time, and
  :class:`PluginWarning`;
- :mod:`~fsbench.plugins.identity`: :func:`plugin_code`, the code identity;
- :mod:`~fsbench.plugins.entry_points`: plugins that installed packages register (group
  ``fsbench.selectors``), found by name and listed for ``fsbench selectors``.

Every error a user can cause is a :class:`PluginError` (a ``ConfigError``): one line, naming the
problem; its ``key`` says which config key is at fault (``class``, ``score_func``,
``params.alpha``, ``grid.alpha``...).

May import: errors, fixed_order, code_identity, storage, datasets and selectors.
"""

from fsbench.plugins.entry_points import (
    ENTRY_POINT_GROUP,
    PluginInfo,
    discover_plugins,
    find_plugin,
    list_plugins,
)
from fsbench.plugins.identity import distribution_versions, plugin_code
from fsbench.plugins.loading import PluginError, PluginSpec, canonical_path, load_object, resolve, spec_of
from fsbench.plugins.output import output_to_stderr
from fsbench.plugins.parameters import parameter_defaults, parameter_names, uses_random_state
from fsbench.plugins.probe import PluginWarning, probe, probe_problem
from fsbench.plugins.ranking import (
    RANKING_ATTRIBUTES,
    ExternalSelector,
    build_selector,
    rank_estimator,
    rank_scores,
)

__all__ = [
    "ENTRY_POINT_GROUP", "RANKING_ATTRIBUTES", "ExternalSelector", "PluginError", "PluginInfo", "PluginSpec",
    "PluginWarning", "build_selector", "canonical_path", "discover_plugins", "distribution_versions", "find_plugin",
    "list_plugins", "load_object", "output_to_stderr", "parameter_defaults", "parameter_names", "plugin_code",
    "probe", "probe_problem", "rank_estimator", "rank_scores", "resolve", "spec_of", "uses_random_state",
]
