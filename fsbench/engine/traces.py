"""Objective per iteration of the iterative selectors, for the convergence figures.

The papers prove that their iterations never increase the objective: RFS (Nie et al. 2010,
Theorem 1), DSO-FS (Peng & Fan 2016, Theorem 1: ||W||_{2,p} per iteration), SL21/SL2P (Xu,
Nie & Han 2017, Theorem 2 and Figs. 2-3), and the l2,1 SVM of Cai et al. 2011 by the same
reweighting argument. :func:`objective_traces` refits each such selector of an experiment on
the training part of the first outer split of every dataset (standardized as the experiment
does) and records ``objective_``; the columns ``rel_increase``, ``max_rel_increase`` and
``monotone`` say whether the proven decrease held. A fit by a solver other than the paper's
iteration (RFS by ADMM, whose objective need not decrease, ``diagnostics_["solver"]`` "admm")
has no trace: no theorem is checked there. Pure computing: the figure is
:func:`fsbench.papers.figures.objective_curves`.
"""

from __future__ import annotations

import inspect
import json
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from fsbench.configuration.parse import Experiment, SelectorConfig
from fsbench.engine.runner import ranking_key
from fsbench.errors import FsbenchError
from fsbench.evaluation.protocol import derive_seed, outer_splits, standardize
from fsbench.selectors import get_selector, selector_code
from fsbench.storage.atomic import atomic_write_text
from fsbench.storage.folder import CONFIG_FILE, TRACES_FILE
from fsbench.storage.ranking_cache import RANKINGS_DIR, load_ranking

#: registered selectors whose ``objective_`` is a trace over iterations (not a single value)
ITERATIVE = ("rfs", "dso", "l21svm", "sl21", "sl2p")
#: solvers (``diagnostics_["solver"]``) that are not the paper's iteration: their fits give no trace
NOT_THE_PAPERS_ITERATION = ("admm",)
#: a trace is called monotone when no step increases the objective by more than this, relative
MONOTONE_RTOL = 1e-6

COLUMNS = ["dataset", "selector", "method", "params", "iteration", "objective", "rel_increase",
           "max_rel_increase", "monotone", "n_iter", "n_train", "fit_seconds", "warnings", "code"]


def _params_json(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True)


def chosen_params(runs: pd.DataFrame | None, dataset: str, selector: SelectorConfig) -> dict[str, Any]:
    """The params a selector used most often on a dataset in ``runs`` (one vote per outer split).

    Without runs (or rows for this dataset and selector) they are the configured params and the
    first grid point. Ties go to the params of the earliest (repeat, fold).
    """
    default = {**selector.params_dict, **(selector.grid_points()[0] if selector.grid else {})}
    if runs is None or "params" not in runs.columns:
        return default
    rows = runs[(runs["dataset"] == dataset) & (runs["selector"] == selector.label)]
    if rows.empty:
        return default
    per_split = rows.sort_values(["repeat", "fold"], kind="stable").drop_duplicates(["repeat", "fold"])
    votes = Counter(per_split["params"].astype(str))  # insertion order breaks ties
    return {**default, **json.loads(votes.most_common(1)[0][0])}


def _trace_params(runs: pd.DataFrame | None, dataset: str, selector: SelectorConfig) -> list[dict[str, Any]]:
    params = chosen_params(runs, dataset, selector)
    grid = dict(selector.grid)
    if selector.name == "dso" and "p" in grid:
        # DSO-FS: every p of the grid (the p-dependence is what its Fig. 1 is about)
        return [{**params, "p": p} for p in sorted(grid["p"])]
    return [params]


def _relative_increase(objective: np.ndarray) -> np.ndarray:
    """(J_t - J_{t-1}) / |J_{t-1}|, clipped at 0; NaN for the first iteration."""
    out = np.full(objective.size, np.nan)
    if objective.size > 1:
        prev, cur = objective[:-1], objective[1:]
        scale = np.maximum(np.abs(prev), np.finfo(float).tiny)
        out[1:] = np.maximum(cur - prev, 0.0) / scale
    return out


def _fit_trace(method: str, params: dict[str, Any], X: np.ndarray, y: np.ndarray, k_max: int,
               seed: int, threads: int | None, cache: Path | None = None
               ) -> tuple[np.ndarray, float, list[str]]:
    """The selector's ``objective_`` on (X, y), its fit time and warnings; taken from the run's
    ranking cache when the run made this very fit (same data, params, seed and selector code).
    Empty when a solver of :data:`NOT_THE_PAPERS_ITERATION` ran."""
    cls = get_selector(method).cls
    uses_seed = "random_state" in inspect.signature(cls.__init__).parameters
    if cache is not None:
        hit = load_ranking(cache, ranking_key(method, params, X, y, seed if uses_seed else None))
        if hit is not None and "objective" in hit:
            objective = np.asarray(hit["objective"], dtype=float)
            if (hit.get("diagnostics") or {}).get("solver") in NOT_THE_PAPERS_ITERATION:
                objective = objective[:0]
            return objective, float(hit["fit_seconds"]), list(hit["warnings"])
    selector = cls(n_features_to_select=k_max, **params, **({"random_state": seed} if uses_seed else {}))
    with threadpool_limits(limits=threads), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        selector.fit(X, y)
        seconds = time.perf_counter() - t0
    messages = sorted({str(w.message).split("\n")[0] for w in caught
                       if not issubclass(w.category, DeprecationWarning)})
    objective = np.asarray(getattr(selector, "objective_", []), dtype=float).ravel()
    if (getattr(selector, "diagnostics_", None) or {}).get("solver") in NOT_THE_PAPERS_ITERATION:
        objective = objective[:0]
    return objective, seconds, messages


def objective_traces(
    experiment: Experiment,
    data: dict[str, Any],
    runs: pd.DataFrame | None = None,
    *,
    n_jobs: int = 1,
    threads: int | None = 1,
    reuse: pd.DataFrame | None = None,
    cache: Path | None = None,
) -> pd.DataFrame:
    """Objective per iteration of every iterative selector of ``experiment``, per dataset.

    ``data`` maps dataset name -> an object with ``X`` and ``y`` (datasets of the experiment
    missing from it are left out). Each selector named in :data:`ITERATIVE` is fitted on the
    training part of the first outer split (``fsbench.evaluation.protocol.outer_splits``), z-scored as the
    experiment says (``fsbench.evaluation.protocol.standardize``), with the params the runs chose most
    often on that dataset when ``runs`` is given (see :func:`chosen_params`), else the
    configured params and first grid point; DSO-FS is fitted for every p of its grid. A
    (dataset, method, params) fitted once is not fitted again for another label. The fits run
    in ``n_jobs`` joblib workers with ``threads`` BLAS threads each (None: no limit; on a
    loaded machine unlimited threads oversubscribe the cores and were measured 50x slower).

    Returns one row per iteration with the columns of :data:`COLUMNS`: ``params`` as JSON,
    ``iteration`` from 1, ``rel_increase`` = max(0, J_t - J_{t-1}) / |J_{t-1}|, and per trace
    ``max_rel_increase`` and ``monotone`` (max_rel_increase <= :data:`MONOTONE_RTOL`).
    Traces found in ``reuse`` (an earlier result: same dataset, selector and params, fitted by
    the same selector code, column ``code`` = :func:`fsbench.selectors.selector_code`) are taken
    from it, not refitted: the fits are deterministic, so a growing run fits only what is new.
    A fit the run itself made (a selector without a seed, on the first split's training part)
    is read from the run's ranking cache ``cache`` (:func:`fsbench.engine.runner.fit_selector` keeps
    ``objective_`` there) instead of being refitted.
    """
    k_max = max(experiment.n_features)
    jobs = []
    parts: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in (n for n in experiment.datasets if n in data):
        X, y = np.asarray(data[name].X, dtype=float), np.asarray(data[name].y)
        split = outer_splits(y, experiment.protocol, experiment.seed, name)[0]
        X_train, _ = standardize(X, split.train, split.test, experiment.standardize)
        parts[name] = (X_train, y[split.train])
        done: set[tuple[str, str]] = set()
        for sel in experiment.selectors:
            if sel.name not in ITERATIVE:
                continue
            for params in _trace_params(runs, name, sel):
                key = (sel.name, _params_json(params))
                if key not in done:
                    done.add(key)
                    jobs.append((name, sel, params, derive_seed(experiment.seed, "trace", name, sel.label)))
    known = {}
    codes = {sel.name: selector_code(sel.name) for sel in experiment.selectors if sel.name in ITERATIVE}
    if reuse is not None and "code" in reuse:
        # a trace fitted by other code of its selector is stale and refitted; an edit of another
        # selector's module leaves it valid
        current = reuse[reuse["code"].astype(str) == reuse["method"].map(codes).astype(str)]
        for key, t in current.groupby(["dataset", "selector", "params"], sort=False):
            known[key] = t.sort_values("iteration")
    fresh = [i for i, (name, sel, params, _) in enumerate(jobs)
             if (name, sel.label, _params_json(params)) not in known]
    fitted = dict(zip(fresh, Parallel(n_jobs=n_jobs)(
        delayed(_fit_trace)(jobs[i][1].name, jobs[i][2], *parts[jobs[i][0]], k_max, jobs[i][3], threads, cache)
        for i in fresh
    ), strict=True))
    frames = []
    for i, (name, sel, params, _) in enumerate(jobs):
        if i not in fitted:
            frames.append(known[(name, sel.label, _params_json(params))][COLUMNS])
            continue
        objective, seconds, messages = fitted[i]
        if objective.size == 0:
            continue
        rise = _relative_increase(objective)
        worst = float(np.nanmax(rise)) if objective.size > 1 else 0.0
        frames.append(pd.DataFrame({
            "dataset": name, "selector": sel.label, "method": sel.name, "params": _params_json(params),
            "iteration": np.arange(1, objective.size + 1), "objective": objective,
            "rel_increase": rise, "max_rel_increase": worst,
            "monotone": worst <= MONOTONE_RTOL, "n_iter": objective.size,
            "n_train": int(parts[name][1].size), "fit_seconds": seconds,
            "warnings": " | ".join(messages), "code": codes[sel.name],
        }))
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def trace_summary(traces: pd.DataFrame, rtol: float = MONOTONE_RTOL) -> pd.DataFrame:
    """One row per trace: iterations, first and last objective, largest relative rise, monotone."""
    keys = ["dataset", "selector", "method", "params"]
    rows = []
    for key, t in traces.groupby(keys, sort=False):
        obj = t.sort_values("iteration")["objective"].to_numpy(dtype=float)
        rise = _relative_increase(obj)
        worst = float(np.nanmax(rise)) if obj.size > 1 else 0.0
        rows.append({**dict(zip(keys, key, strict=True)), "n_iter": obj.size, "first": obj[0],
                     "last": obj[-1], "max_rel_increase": worst, "monotone": worst <= rtol})
    return pd.DataFrame(rows, columns=[*keys, "n_iter", "first", "last", "max_rel_increase", "monotone"])


def write_traces(experiment: Experiment, data: dict[str, Any], runs: pd.DataFrame | None,
                 results_dir: str | Path, *, n_jobs: int = 1, threads: int | None = 1) -> Path:
    """Compute :func:`objective_traces` and write it atomically to ``results_dir/objective.csv``.

    Traces already in that file (same dataset, selector, params and selector code) are reused,
    not refitted.
    """
    path = Path(results_dir) / TRACES_FILE
    previous = pd.read_csv(path, dtype={"params": str}) if path.is_file() else None
    cache = Path(results_dir) / RANKINGS_DIR
    traces = objective_traces(experiment, data, runs, n_jobs=n_jobs, threads=threads, reuse=previous,
                              cache=cache if cache.is_dir() else None)
    atomic_write_text(path, traces.to_csv(index=False, float_format="%.17g"))
    return path


def experiment_from_results(results_dir: str | Path) -> Experiment:
    """The experiment a results directory was run with, rebuilt from its ``config.yaml``.

    Raises FsbenchError when the file is missing or does not rebuild to its fingerprint.
    """
    path = Path(results_dir) / CONFIG_FILE
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise FsbenchError(f"Cannot read {str(path)!r} ({exc}); rerun the experiment.") from None
    try:
        experiment = Experiment.from_dict(doc, source=str(path))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise FsbenchError(f"{str(path)!r} is not an fsbench config.yaml ({exc}); rerun the experiment.") from None
    if doc.get("fingerprint") and experiment.fingerprint() != doc["fingerprint"]:
        raise FsbenchError(f"{str(path)!r} does not rebuild to its fingerprint; rerun the experiment.")
    return experiment
