"""fsbench: a reproducible benchmark of multi-class feature selection.

The public API, for scripts and notebooks::

    import fsbench
    experiment = fsbench.load_experiment("configs/quickstart.yaml")
    result = fsbench.run_experiment(experiment, "results/quickstart")
    result.runs                     # one row per (dataset, split, selector, classifier, k)

- :func:`load_experiment` (a YAML file) and :func:`parse_experiment` (YAML text) validate a
  configuration into a frozen :class:`Experiment`;
- :func:`run_experiment` runs it, or resumes it, into a results folder and returns a
  :class:`RunResult` whose ``runs`` is the table written to ``runs.csv.gz``;
- :func:`registry`, :func:`get_selector` and :func:`make_selector`: the registered selectors,
  each a scikit-learn estimator;
- :func:`load_dataset`: a registered dataset, checked (``fsbench.datasets.load``);
- :class:`FsbenchError`: every error a user can cause, one sentence naming the problem and the fix.

Names are imported on first use, so ``import fsbench`` stays fast.

The code is a stack of role packages; each imports only from those before it:

- top-level modules: :mod:`~fsbench.errors` (the exceptions), :mod:`~fsbench.fixed_order` (sums in
  a stated order), :mod:`~fsbench.code_identity` (the digest that identifies code in result rows);
- :mod:`fsbench.storage`: the results folder (atomic writes, lock, task files, ``runs.csv.gz``,
  ``rankings.csv.gz``, run log, digests);
- :mod:`fsbench.datasets`: the papers' datasets (registry, fetching, integrity) and users' files;
- :mod:`fsbench.selectors`: the built-in selectors and their registry;
- :mod:`fsbench.plugins`: users' selectors by import path or entry point;
- :mod:`fsbench.evaluation`: the protocol, the classifiers, the exact LIBSVM/LIBLINEAR routes,
  the metrics;
- :mod:`fsbench.configuration`: YAML to a frozen experiment;
- :mod:`fsbench.engine`: tasks, fitting, resuming, workers, the Dask cluster, the runner;
- :mod:`fsbench.stats`: statistical tests as pure functions;
- :mod:`fsbench.report`: tables, plots and statistics reports from ``runs.csv.gz``;
- :mod:`fsbench.papers`: the papers' printed tables, their report, the reproduce and check
  workflows;
- :mod:`fsbench.cli`: the command line.

Layer order, lowest first: top-level modules < storage < datasets < selectors < plugins <
evaluation < configuration < engine < stats < report < papers < cli < this package's API.
Imports under ``if TYPE_CHECKING:`` do not count; ``tests/test_architecture.py`` checks the order.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> (module, attribute), imported on first use
_LAZY = {
    "load_experiment": ("fsbench.configuration.parse", "load_experiment"),
    "parse_experiment": ("fsbench.configuration.parse", "parse_experiment"),
    "Experiment": ("fsbench.configuration.experiment", "Experiment"),
    "run_experiment": ("fsbench.engine.runner", "run_experiment"),
    "RunResult": ("fsbench.engine.runner", "RunResult"),
    "registry": ("fsbench.selectors", "registry"),
    "get_selector": ("fsbench.selectors", "get_selector"),
    "make_selector": ("fsbench.selectors", "make_selector"),
    "load_dataset": ("fsbench.datasets", "load"),
    "FsbenchError": ("fsbench.errors", "FsbenchError"),
}

__all__ = ["Experiment", "FsbenchError", "RunResult", "__version__", "get_selector", "load_dataset",
           "load_experiment", "make_selector", "parse_experiment", "registry", "run_experiment"]

if TYPE_CHECKING:
    from fsbench.configuration.experiment import Experiment
    from fsbench.configuration.parse import load_experiment, parse_experiment
    from fsbench.datasets import load as load_dataset
    from fsbench.engine.runner import RunResult, run_experiment
    from fsbench.errors import FsbenchError
    from fsbench.selectors import get_selector, make_selector, registry


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'fsbench' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
