"""What a run will cost before it runs: the model of a task's compute time, and ``fsbench run --dry-run``.

A task (one selector on one outer split of one dataset, :mod:`fsbench.engine.tasks`) costs

- the selector's fit on the selection data (``n`` samples, ``d`` features)::

      log t_sel = a_s + alpha_s log n + beta_s log d

  (natural logarithms, CPU seconds on one BLAS thread), fitted by least squares on the log scale per
  selector from measured fits (``benchmarks/fit_cost_model.py``). A selector with a grid adds, per grid
  point and inner fold, a fit on the inner fold's training rows and the inner-CV evaluation of the
  first classifier (every grid point of it at every k, no refit);
- the evaluation: for each classifier, per k, ``folds x grid points`` fits on the inner folds'
  training rows (when its grid is tuned) plus one refit on the training part, each::

      log t_fit = b_r + gamma_r log n + delta_r log k

  for the classifier's route ``r`` (:func:`classifier_route`: the exact LIBSVM route of the built-in
  ``linear_svm``, LIBLINEAR's one-vs-rest and Crammer-Singer routes, and the generic scikit-learn fits
  of ``knn``, ``logistic`` and ``random_forest``; ``backend: auto`` resolved per task as the runner
  resolves it), fitted on measured evaluations, times ``(c / c_0)^eta_r`` for ``c`` classes (``c_0``
  the classes of the calibration, ``eta_r`` measured per route at 2, 4 and 10 classes).

Both are then scaled by factors measured on real data (``calibration`` of the model file): per
selector, the median ratio of the measured to the predicted fit time over the committed runs' tasks,
and per classifier route the same for the evaluation (``benchmarks/fit_cost_model.py --calibrate``,
which states their out-of-sample accuracy, dataset by dataset left out). The synthetic calibration
data are easier for the iterative solvers than real data; the factors carry that difference.

A selector whose parameters change its cost severalfold (RFS's stopping rule and ``gamma``, DSO-FS's
``p``) has entries of its own, ``name[key=value;...]``, measured with those parameters: the entry
whose parameters all equal the config's (the most of them when several do) is used, per grid point.

The coefficients live in ``cost_model.json`` beside this module (:func:`load_cost_model`), written by
``benchmarks/fit_cost_model.py`` with its calibration and accuracy in ``benchmarks/cost_model.md``.
Where the model knows nothing, it says so: a user's selector (or one without coefficients) is
estimated as Fisher's score, a user's classifier as ``logistic``, and a selector's parameters are
otherwise costed at its defaults (the dry run says so).

With ``select_on: all`` a selector is fitted once per dataset on all samples and the rankings cache
serves the other splits (a Dask cluster's workers have no cache: every task fits).

:func:`estimate_run` validates a config with the checks :func:`fsbench.engine.runner.run_experiment`
makes (:mod:`fsbench.engine.preflight`: the same errors, in the same order), counts the tasks a results
folder already holds with the engine's resume checks (read only) and estimates the rest; it writes
nothing.
:func:`format_estimate` prints it and :func:`over_an_hour` is the line a run prints first when its
predicted wall time exceeds an hour.
"""

from __future__ import annotations

import functools
import heapq
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fsbench.configuration.experiment import Experiment, SelectorConfig
from fsbench.errors import FsbenchError

__all__ = ["COST_MODEL_FILE", "HOUR", "CostModel", "RowEstimate", "RunEstimate", "TaskParts", "classifier_route",
           "entry_name", "estimate_run", "estimate_tasks", "format_estimate", "load_cost_model", "measured_fit",
           "over_an_hour", "parse_entry", "starting_estimate", "summarize", "task_parts", "task_seconds",
           "wall_seconds"]

#: the coefficients, beside this module (package data)
COST_MODEL_FILE = Path(__file__).with_name("cost_model.json")
#: a predicted wall time above this many seconds is announced before the run starts
HOUR = 3600.0
#: the routes of :func:`classifier_route`
ROUTES = ("libsvm", "liblinear", "crammer_singer", "knn", "logistic", "random_forest")


@dataclass(frozen=True)
class CostModel:
    """Coefficients of the two fit-time models (natural logarithms, CPU seconds).

    ``selectors`` maps a registered selector to ``(a, alpha, beta)``; ``classifiers`` a route
    (:data:`ROUTES`) to ``(b, gamma, delta)``. ``fallback_selector`` and ``fallback_classifier`` stand
    in for what the model does not know. ``selector_factors`` (by selector name) and ``route_factors``
    multiply the fits' times: the real-data calibration (1 where absent).
    """

    selectors: dict[str, tuple[float, float, float]]
    classifiers: dict[str, tuple[float, float, float]]
    fallback_selector: str = "fisher"
    fallback_classifier: str = "logistic"
    source: str = ""
    class_exponents: dict[str, float] = field(default_factory=dict)
    calibration_classes: int = 4
    selector_factors: dict[str, float] = field(default_factory=dict)
    route_factors: dict[str, float] = field(default_factory=dict)

    def uncalibrated(self) -> CostModel:
        """The same model without the real-data factors (what ``--calibrate`` fits them on)."""
        return replace(self, selector_factors={}, route_factors={})

    def knows_selector(self, name: str) -> bool:
        return name in self.selectors

    def selector_entry(self, name: str, params: dict[str, Any] | None = None) -> str:
        """The entry costing ``name`` with ``params``: ``name[key=value;...]`` whose parameters all equal
        ``params``' (the one with the most of them), else ``name`` itself (its defaults)."""
        given = {key: _canonical(value) for key, value in (params or {}).items()}
        best, most = name, 0
        for entry in self.selectors:
            base, entry_params = parse_entry(entry)
            if base == name and len(entry_params) > most and all(
                    given.get(key) == _canonical(value) for key, value in entry_params.items()):
                best, most = entry, len(entry_params)
        return best

    def covers(self, name: str, params: dict[str, Any]) -> bool:
        """Whether an entry of ``name`` was measured with every one of ``params``."""
        return set(params) <= set(parse_entry(self.selector_entry(name, params))[1])

    def selector_seconds(self, name: str, n: float, d: float, params: dict[str, Any] | None = None) -> float:
        """Predicted CPU seconds of one fit of built-in selector ``name`` with ``params`` on ``n`` x ``d``
        (:meth:`selector_entry`; the fallback's for a name without coefficients)."""
        entry = self.selector_entry(name, params)
        if entry not in self.selectors:
            name = entry = self.fallback_selector
        a, alpha, beta = self.selectors[entry]
        factor = self.selector_factors.get(name, 1.0)
        return factor * math.exp(a + alpha * math.log(n) + beta * math.log(d))

    def classifier_seconds(self, route: str, n: float, k: float, classes: int | None = None) -> float:
        """Predicted CPU seconds of one fit (and prediction) of a classifier of ``route`` on ``n`` x ``k``
        with ``classes`` classes (default: those of the calibration)."""
        if route not in self.classifiers:
            route = self.fallback_classifier
        b, gamma, delta = self.classifiers[route]
        seconds = self.route_factors.get(route, 1.0) * math.exp(b + gamma * math.log(n) + delta * math.log(k))
        if classes is not None and classes >= 2:
            seconds *= (classes / self.calibration_classes) ** self.class_exponents.get(route, 0.0)
        return seconds


def parse_entry(entry: str) -> tuple[str, dict[str, str]]:
    """``"rfs[gamma=1.0;stop=decrease]"`` -> ``("rfs", {"gamma": "1.0", "stop": "decrease"})``."""
    if not entry.endswith("]") or "[" not in entry:
        return entry, {}
    base, _, inside = entry[:-1].partition("[")
    return base, dict(item.split("=", 1) for item in inside.split(";") if "=" in item)


def entry_name(name: str, params: dict[str, Any]) -> str:
    """The entry :func:`parse_entry` reads back as ``name`` with ``params`` (sorted by key)."""
    if not params:
        return name
    return f"{name}[{';'.join(f'{key}={_canonical(value)}' for key, value in sorted(params.items()))}]"


def _canonical(value: Any) -> str:
    """A parameter's value as entries compare them: numbers by value (1, 1.0 and "1.0" agree)."""
    if isinstance(value, bool) or value is None:
        return str(value)
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        return str(value)


def load_cost_model(path: str | Path | None = None) -> CostModel:
    """The model in ``path`` (default: :data:`COST_MODEL_FILE`, the one fsbench ships)."""
    path = Path(path) if path is not None else COST_MODEL_FILE
    return _load(str(path.resolve()))


@functools.cache
def _load(path: str) -> CostModel:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        selectors = {name: (float(c["a"]), float(c["alpha"]), float(c["beta"]))
                     for name, c in doc["selector_fit"].items()}
        classifiers = {route: (float(c["b"]), float(c["gamma"]), float(c["delta"]))
                       for route, c in doc["classifier_fit"].items()}
        exponents = {route: float(c["eta"]) for route, c in doc["classifier_fit"].items() if "eta" in c}
        calibration = doc.get("calibration") or {}
        model = CostModel(selectors, classifiers, doc.get("fallback_selector", "fisher"),
                          doc.get("fallback_classifier", "logistic"), doc.get("source", ""), exponents,
                          int(doc.get("calibration_classes", 4)),
                          {name: float(f) for name, f in (calibration.get("selectors") or {}).items()},
                          {route: float(f) for route, f in (calibration.get("routes") or {}).items()})
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FsbenchError(f"The cost model {path!r} cannot be read ({exc}); reinstall fsbench or rerun "
                           "benchmarks/fit_cost_model.py.") from None
    if model.fallback_selector not in selectors or model.fallback_classifier not in classifiers:
        raise FsbenchError(f"The cost model {path!r} lacks its fallback selector or classifier; rerun "
                           "benchmarks/fit_cost_model.py.")
    return model


def measured_fit(name: str, path: str | Path | None = None) -> str | None:
    """One line on how selector ``name``'s fit time grows with the samples, as the scale benchmark
    measured it (``measured_fit`` of the model, copied from benchmarks/scale.csv), or None when it was
    not measured: the CPU seconds at each n (d = 1,000, one core) and where a fit passed its cap."""
    path = Path(path) if path is not None else COST_MODEL_FILE
    entry = _measured(str(path.resolve())).get(name)
    if not entry:
        return None
    parts = []
    for n, seconds, status, predicted, cap in entry["points"]:
        if seconds is not None:
            parts.append(f"{_duration(seconds) if seconds >= 1 else f'{seconds:.2g} s'} at n = {n:,}")
        elif status == "predicted_beyond_cap" and predicted is not None:
            parts.append(f"n = {n:,} not run (predicted {_duration(predicted)})")
        elif status.startswith("beyond") and cap is not None:
            parts.append(f"over {_duration(cap)} at n = {n:,}")
    if not parts:
        return None
    times = [(n, s) for n, s, *_ in entry["points"] if s is not None and s >= 0.05]
    growth = ""
    if len(times) >= 2:
        (n0, t0), (n1, t1) = times[-2], times[-1]
        growth = f"; grows about n^{math.log(t1 / t0) / math.log(n1 / n0):.1f} between n = {n0:,} and {n1:,}"
    return f"fit at its defaults on d = {entry['d']:,} features, one core: " + ", ".join(parts) + growth


@functools.cache
def _measured(path: str) -> dict[str, Any]:
    try:
        return dict(json.loads(Path(path).read_text(encoding="utf-8")).get("measured_fit", {}))
    except (OSError, ValueError):
        return {}


# ----------------------------------------------------------------------------- one task
def classifier_route(spec: Any) -> str:
    """The route a classifier spec's fits take in the protocol (:mod:`fsbench.evaluation.protocol`),
    as the cost model names it; ``"unknown"`` for a class the model was not calibrated on."""
    from fsbench.evaluation import linear_liblinear, linear_libsvm
    from fsbench.evaluation.classifiers import as_spec, make_classifier

    spec = as_spec(spec)
    estimators = [make_classifier(spec, point, 0) for point in spec.grid_points()]
    if linear_libsvm.solver_for(estimators) is not None:
        return "libsvm"
    if linear_liblinear.solver_for(estimators) is not None:
        multi_class = estimators[0].get_params().get("multi_class")
        return "crammer_singer" if multi_class == "crammer_singer" else "liblinear"
    if spec.builtin and spec.kind in ROUTES:
        return spec.kind
    if spec.builtin and spec.kind == "linear_svm":  # SVC with other parameters: LIBSVM through scikit-learn
        return "libsvm"
    return "unknown"


def _fold_rows(n: float, folds: int) -> float:
    """Training rows of an inner fold of ``folds`` stratified folds over ``n`` rows."""
    return n * (folds - 1) / folds


@dataclass(frozen=True)
class TaskParts:
    """A task's predicted CPU seconds split as the model computes them: the selector's fits and, per
    classifier route, the classifier fits (inner CV of a selector's grid included)."""

    selector: float
    routes: dict[str, float]

    @property
    def total(self) -> float:
        return self.selector + sum(self.routes.values())


def task_parts(model: CostModel, experiment: Experiment, selector: SelectorConfig, n_train: int, d: int, *,
               n_select: int | None = None, fit_selection: bool = True, classes: int | None = None) -> TaskParts:
    """Predicted CPU seconds of one task of ``selector`` whose training part has ``n_train`` rows of
    ``d`` features in ``classes`` classes (default: the calibration's), by part; the selector is fitted
    on ``n_select`` rows (default ``n_train``; all samples with ``select_on: all``). ``fit_selection``
    False leaves out the selector's fits (served by the rankings cache), not the inner-CV evaluation
    of its grid.

    The formula is the module's: selector fits plus, per classifier and k, inner fits and one refit.
    """
    n_sel = n_train if n_select is None else n_select
    name = selector.name if not selector.is_plugin else model.fallback_selector
    params = dict(selector.params)
    points = [{**params, **point} for point in selector.grid_points()]
    # without a grid, one fit; with one, every point on the inner folds and the chosen point (their mean) on all
    mean_fit = sum(model.selector_seconds(name, n_sel, d, p) for p in points) / len(points)
    selector_seconds = mean_fit if fit_selection else 0.0
    routes: dict[str, float] = {}
    specs = experiment.classifier_specs_for(n_train)  # linear_svm's backend auto resolved as the runner does
    ks = experiment.n_features
    if selector.grid:
        folds = experiment.inner_cv.folds_for(n_sel)
        rows = _fold_rows(n_sel, folds)
        if fit_selection:
            selector_seconds += folds * sum(model.selector_seconds(name, rows, d, p) for p in points)
        first = specs[0]
        route = classifier_route(first)
        per_k = sum(model.classifier_seconds(route, rows, k, classes) for k in ks)
        routes[route] = routes.get(route, 0.0) + len(points) * folds * len(first.grid_points()) * per_k
    folds = experiment.inner_cv.folds_for(n_train)
    rows = _fold_rows(n_train, folds)
    for spec in specs:
        route = classifier_route(spec)
        inner = folds * len(spec.grid_points()) if spec.tuned else 0
        routes[route] = routes.get(route, 0.0) + sum(
            inner * model.classifier_seconds(route, rows, k, classes) + model.classifier_seconds(route, n_train, k,
                                                                                                  classes)
            for k in ks)
    return TaskParts(selector_seconds, routes)


def task_seconds(model: CostModel, experiment: Experiment, selector: SelectorConfig, n_train: int, d: int, *,
                 n_select: int | None = None, fit_selection: bool = True, classes: int | None = None) -> float:
    """Predicted CPU seconds of one task: the sum of :func:`task_parts`."""
    return task_parts(model, experiment, selector, n_train, d, n_select=n_select, fit_selection=fit_selection,
                      classes=classes).total


def wall_seconds(seconds: Sequence[float], workers: int) -> float:
    """Wall time of tasks taking ``seconds`` each, run in this order by ``workers`` processes, each
    taking the next task as soon as it is free (as :mod:`fsbench.engine.workers` hands them out)."""
    free = [0.0] * max(1, min(workers, len(seconds)))
    for s in seconds:
        heapq.heapreplace(free, free[0] + s)
    return max(free) if seconds else 0.0


# ----------------------------------------------------------------------------- a run
@dataclass(frozen=True)
class RowEstimate:
    """One (dataset, selector) of a run: its tasks, those already done, and the estimate of the rest."""

    dataset: str
    selector: str
    n_tasks: int
    n_done: int
    cpu_seconds: float
    wall_seconds: float
    note: str = ""


@dataclass(frozen=True)
class RunEstimate:
    """What :func:`estimate_run` found: the rows, totals over the tasks still to run, and context."""

    name: str
    out_dir: Path
    rows: tuple[RowEstimate, ...]
    n_datasets: int
    n_splits: tuple[int, ...]  # outer splits per dataset
    n_selectors: int
    n_done: int
    cpu_seconds: float
    wall_seconds: float
    workers: int
    n_jobs: int
    done_counted: bool = True  # False: the folder's results could not be inspected (not counted)
    skipped: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def n_tasks(self) -> int:
        return sum(r.n_tasks for r in self.rows)


def estimate_tasks(model: CostModel, experiment: Experiment, tasks: Sequence[Any],
                   sizes: dict[str, tuple[int, int, int]], done: Iterable[str] = (), *,
                   cached_selection: bool = True) -> dict[str, float]:
    """Predicted CPU seconds of every task not in ``done``, by task id (a task is
    :class:`fsbench.engine.tasks.Task`; ``sizes`` maps a dataset to its (samples, features, classes)).

    With ``select_on: all`` and ``cached_selection``, only the first task (in the runner's order) of
    each (dataset, selector) still to run fits the selector: the rankings cache serves the others.
    """
    done = set(done)
    out: dict[str, float] = {}
    fitted: set[tuple[str, str]] = set()
    select_all = experiment.protocol.select_on == "all"
    for task in sorted((t for t in tasks if t.id not in done), key=lambda t: (t.split.repeat, t.split.fold)):
        n, d, classes = sizes[task.dataset]
        key = (task.dataset, task.selector.label)
        fit = not (select_all and cached_selection and key in fitted)
        fitted.add(key)
        out[task.id] = task_seconds(model, experiment, task.selector, int(task.split.train.size), d,
                                    n_select=n if select_all else None, fit_selection=fit, classes=classes)
    return out


def _selector_note(model: CostModel, experiment: Experiment, selector: SelectorConfig) -> str:
    if selector.is_plugin or not model.knows_selector(selector.name):
        return f"unknown: estimated as {model.fallback_selector}"
    notes = []
    keys = {key for key, _ in selector.grid} | {key for key, _ in selector.params}
    if keys and not all(model.covers(selector.name, {**dict(selector.params), **point})
                        for point in selector.grid_points()):
        own_entry = model.selector_entry(selector.name, dict(selector.params)) != selector.name
        notes.append("some parameters at their defaults' cost" if own_entry else "at its defaults' cost")
    routes = {classifier_route(spec) for spec in experiment.classifier_specs_for(1)}
    if "unknown" in routes:
        notes.append(f"classifier unknown: estimated as {model.fallback_classifier}")
    return "; ".join(notes)


def _workers(n_jobs: int) -> int:
    cores = os.cpu_count() or 1
    return cores if n_jobs < 0 else min(n_jobs, cores)


def summarize(model: CostModel, experiment: Experiment, tasks: Sequence[Any], sizes: dict[str, tuple[int, int, int]],
              done: set[str], out_dir: Path, n_jobs: int, *, done_counted: bool = True, cached_selection: bool = True,
              skipped: Sequence[str] = (), notes: Sequence[str] = ()) -> RunEstimate:
    """The :class:`RunEstimate` of planned ``tasks`` of which ``done`` are finished, run by ``n_jobs`` workers."""
    seconds = estimate_tasks(model, experiment, tasks, sizes, done, cached_selection=cached_selection)
    workers = _workers(n_jobs)
    order = [t.id for t in sorted(tasks, key=lambda t: (t.split.repeat, t.split.fold)) if t.id in seconds]
    rows = []
    for name in (n for n in experiment.datasets if n in sizes):
        for sel in experiment.selectors:
            ids = {t.id for t in tasks if t.dataset == name and t.selector.label == sel.label}
            pending = [seconds[i] for i in order if i in ids]
            rows.append(RowEstimate(name, sel.label, len(ids), len(ids) - len(pending), sum(pending),
                                    wall_seconds(pending, workers), _selector_note(model, experiment, sel)))
    splits = tuple(sum(1 for t in tasks if t.dataset == name) // max(1, len(experiment.selectors))
                   for name in experiment.datasets if name in sizes)
    return RunEstimate(experiment.name, out_dir, tuple(rows), len(splits), splits, len(experiment.selectors),
                       sum(r.n_done for r in rows), sum(seconds.values()),
                       wall_seconds([seconds[i] for i in order], workers), workers, n_jobs, done_counted,
                       tuple(skipped), tuple(notes))


def _sizes(data: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """(samples, features, classes) per dataset."""
    import numpy as np

    return {name: (int(data[name].X.shape[0]), int(data[name].X.shape[1]), int(np.unique(data[name].y).size))
            for name in data}


def _scheduler_notes(scheduler: str | None, n_jobs: int) -> list[str]:
    if scheduler is None:
        return []
    return [f"the wall time is that of {_workers(n_jobs)} local workers: a cluster's are not counted before it "
            "is reached"]


def estimate_run(experiment: Experiment, out_dir: str | Path, *, data_dir: str | Path | None = None,
                 n_jobs: int | None = None, force: bool = False, skip_missing: bool = False,
                 recompute_stale: bool = False, scheduler: str | None = None,
                 model: CostModel | None = None) -> RunEstimate:
    """The estimate ``fsbench run --dry-run`` prints: the config validated as
    :func:`fsbench.engine.runner.run_experiment` validates it (the same FsbenchError, in the same
    order), the tasks a results folder already holds counted by the engine's resume checks (read only;
    none with ``force``, which would discard them), the others estimated. Writes nothing."""
    from fsbench.engine.preflight import check_resume, load_checked
    from fsbench.engine.runner import plan

    model = model or load_cost_model()
    out_dir = Path(out_dir)
    n_jobs = experiment.n_jobs if n_jobs is None else n_jobs
    data, skipped = load_checked(experiment, out_dir, data_dir=data_dir, n_jobs=n_jobs, skip_missing=skip_missing)
    tasks = plan(experiment, data)
    done: set[str] = set()
    if not force and out_dir.is_dir():
        done = set(check_resume(experiment, tasks, out_dir, data, recompute_stale)[1].kept)
    return summarize(model, experiment, tasks, _sizes(data), done, out_dir, n_jobs,
                     cached_selection=scheduler is None, skipped=skipped, notes=_scheduler_notes(scheduler, n_jobs))


def starting_estimate(experiment: Experiment, data: dict[str, Any], out_dir: str | Path, *, n_jobs: int | None = None,
                      scheduler: str | None = None, model: CostModel | None = None) -> RunEstimate:
    """The estimate of a run as it starts (``run_experiment``'s ``on_start``): by then the runner has
    checked the folder, restored the rows it trusts as task files and deleted the others, so the
    plan's tasks whose files the folder holds are exactly those it will not run."""
    from fsbench.engine.runner import plan
    from fsbench.storage.task_files import finished_tasks

    model = model or load_cost_model()
    out_dir = Path(out_dir)
    n_jobs = experiment.n_jobs if n_jobs is None else n_jobs
    tasks = plan(experiment, data)
    done = finished_tasks(out_dir) & {t.id for t in tasks}
    return summarize(model, experiment, tasks, _sizes(data), done, out_dir, n_jobs,
                     cached_selection=scheduler is None, notes=_scheduler_notes(scheduler, n_jobs))


# ----------------------------------------------------------------------------- printing
def _duration(seconds: float) -> str:
    """``42 s``, ``12.5 min``, ``3.2 h``."""
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    if seconds < HOUR:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / HOUR:.1f} h"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def over_an_hour(estimate: RunEstimate) -> str | None:
    """The line announcing a run predicted to take more than an hour of wall time, else None."""
    if estimate.wall_seconds <= HOUR:
        return None
    pending = estimate.n_tasks - estimate.n_done
    return (f"Warning: this run is predicted to take {_duration(estimate.wall_seconds)} of wall time (more than an "
            f"hour: {pending} tasks, {estimate.cpu_seconds:,.0f} CPU s on {estimate.workers} workers); "
            "'fsbench run --dry-run' breaks the estimate down, -j or fewer datasets, selectors or splits shorten it.")


def format_estimate(estimate: RunEstimate) -> str:
    """The dry run's report: the over-an-hour line first (if any), the task count, a table per
    dataset x selector and the total."""
    lines = []
    if (warning := over_an_hour(estimate)) is not None:
        lines.append(warning)
    splits = sorted(set(estimate.n_splits))
    split_text = str(splits[0]) if len(splits) == 1 else f"({'+'.join(map(str, estimate.n_splits))})"
    pending = estimate.n_tasks - estimate.n_done
    where = str(estimate.out_dir)
    if not estimate.done_counted:
        done_text = f"tasks already done in {where!r} are not counted"
    elif estimate.n_done:
        done_text = f"{estimate.n_done} already done in {where!r}, {pending} to run"
    else:
        done_text = f"none done yet in {where!r}"
    lines.append(f"Dry run of {estimate.name!r}: nothing is computed or written.")
    lines.append(f"{estimate.n_tasks} tasks ({_plural(estimate.n_datasets, 'dataset')} x {split_text} outer splits x "
                 f"{_plural(estimate.n_selectors, 'selector')}); {done_text}.")
    if estimate.skipped:
        lines.append(f"Skipped (files not found): {', '.join(estimate.skipped)}.")
    lines.append(f"Estimated cost of the tasks to run: compute = CPU seconds summed over tasks, wall = with "
                 f"{estimate.workers} worker{'s' if estimate.workers != 1 else ''} (n_jobs {estimate.n_jobs}, "
                 f"{os.cpu_count() or 1} cores).")
    header = ("dataset", "selector", "tasks", "done", "compute", "wall", "note")
    table = [header] + [(r.dataset, r.selector, str(r.n_tasks), str(r.n_done), _duration(r.cpu_seconds),
                         _duration(r.wall_seconds), r.note) for r in estimate.rows]
    table.append(("total", "", str(estimate.n_tasks), str(estimate.n_done), _duration(estimate.cpu_seconds),
                  _duration(estimate.wall_seconds), ""))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    right = {2, 3, 4, 5}
    for row in table:
        cells = [cell.rjust(w) if i in right else cell.ljust(w)
                 for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    lines += [f"Note: {note}." for note in estimate.notes]
    lines.append(f"The model: {estimate_basis()}")
    return "\n".join(lines)


def estimate_basis() -> str:
    """One sentence on what the estimate rests on."""
    return ("fit times measured on one BLAS thread (benchmarks/cost_model.md states its accuracy on the committed "
            "runs); a busy machine, unusual parameters or hard data can take several times longer.")
