"""Where the reproduction's compute goes: by paper, dataset, selector and phase.

Two sources, combined:

1. **The committed rows** (``results/papers/**/runs.csv.gz``): one ``task_seconds`` per task
   (the whole task) and one ``fit_seconds`` (the final selector fit). Summed by config, dataset
   and selector. Nothing is recomputed.
2. **Instrumented reruns of whole tasks** (one BLAS thread, a fresh rankings cache, so every
   selector fit is real): the runner's own task function with timers around its phases and
   cProfile around everything. Phases (exclusive times):

   - ``grid: selector fits``: the selector fitted on every inner fold for every grid point;
   - ``grid: inner-CV evaluation``: scoring those rankings (``cv_accuracy_grid`` inside
     ``tune_selector``);
   - ``final fit``: the selector on the whole training part;
   - ``inner-CV evaluation (C)``: the classifier's C tuned per k (``cv_accuracy_grid`` inside
     the evaluation);
   - ``final evaluation``: the refit per k on the training part and the test score;
   - ``other``: standardization, splits, bookkeeping.

The committed rows record two numbers per task, so their phases are estimated: the final fit is
recorded; the evaluation of the final ranking (inner-CV C tuning + final evaluation) is taken as
the median ``task_seconds - fit_seconds`` of the untuned selectors of the same split (same
folds, same k, same C grid; for a config without untuned selectors, of the same split in the
config named in ``EVALUATION_FROM``), split into its two phases by the shares measured here; a
tuned selector's remaining time is its grid search, whose inner-CV evaluation is estimated as
(grid points) x (one inner-CV evaluation, as measured on the same dataset) and whose selector
fits are the rest. The instrumented tasks check the estimate against the measured phases.

Usage (from the repository root; datasets from $FSBENCH_DATA):

    python benchmarks/profile_protocol.py [--quick] [--out benchmarks/profile.md] [--rows-only]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import platform
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "papers"
PHASES = ("grid: selector fits", "grid: inner-CV evaluation", "final fit", "inner-CV evaluation (C)",
          "final evaluation", "other")
#: the paper each results folder belongs to
PAPER = {"dso-fs": "DSO-FS", "dso-fs-isolet": "DSO-FS", "rfs": "RFS", "rfs-gamma-tuned": "RFS",
         "rfs-intercept": "RFS", "rfs-select-all": "RFS", "rfs-standardize-train": "RFS", "sl2p": "SL2P"}
#: configs without untuned selectors take the evaluation cost of the same split from another config
EVALUATION_FROM = {"rfs-gamma-tuned": "rfs"}
#: the projection's speed factors of a config not instrumented: those of a config evaluating the same way
SPEED_FROM = {"rfs-intercept": "rfs", "rfs-select-all": "rfs", "rfs-standardize-train": "rfs",
              "sl2p-test-size-brain-tumor-2": "sl2p", "sl2p-test-size-glioma": "sl2p",
              "sl2p-test-size-mll": "sl2p", "sl2p-test-size-srbct": "sl2p"}
#: (config, dataset, repeat, fold, selector label): the instrumented tasks
TASKS = [
    ("dso-fs", "semeion", 0, 0, "mrmr"),
    ("dso-fs", "semeion", 0, 0, "rfs"),
    ("dso-fs", "umist", 0, 0, "relieff"),
    ("dso-fs", "ar", 0, 0, "relieff"),
    ("dso-fs", "ar", 0, 0, "l1svm"),
    ("dso-fs", "ar", 0, 0, "dso"),
    ("rfs", "glioma", 0, 0, "rfs"),
    ("rfs-gamma-tuned", "glioma", 0, 0, "rfs"),
    ("sl2p", "glioma", 0, 0, "fisher"),
    ("sl2p", "glioma", 0, 0, "sl2p"),
]
QUICK = [("dso-fs", "ar", 0, 0, "relieff"), ("dso-fs", "ar", 0, 0, "l1svm"), ("rfs", "glioma", 0, 0, "rfs")]


def config_path(name: str) -> Path:
    direct = ROOT / "configs" / "papers" / f"{name}.yaml"
    return direct if direct.exists() else ROOT / "configs" / "papers" / "variants" / f"{name}.yaml"


# ----------------------------------------------------------------------------- committed rows
def committed_tasks() -> pd.DataFrame:
    """One row per committed task: config, paper, dataset, repeat, fold, selector, tuned, task and fit seconds."""
    frames = []
    for path in sorted(RESULTS.glob("**/runs.csv.gz")):
        config = path.parent.name
        df = pd.read_csv(path, low_memory=False)
        keys = ["dataset", "repeat", "fold", "selector"]
        t = df.groupby(keys, sort=True).agg(task=("task_seconds", "first"), fit=("fit_seconds", "first"),
                                            n_tasks=("task_seconds", "size")).reset_index()
        t.insert(0, "config", config)
        t.insert(1, "paper", PAPER.get(config, PAPER.get(config.split("-test-size")[0], "?")))
        frames.append(t.drop(columns="n_tasks"))
    tasks = pd.concat(frames, ignore_index=True)
    tuned = {}
    from fsbench.configuration.parse import load_experiment

    for config in tasks.config.unique():
        exp = load_experiment(config_path(config))
        tuned[config] = {s.label: len(s.grid_points()) if s.grid else 0 for s in exp.selectors}
    tasks["grid_points"] = [tuned[c].get(s, 0) for c, s in zip(tasks.config, tasks.selector, strict=True)]
    return tasks


def estimate_phases(tasks: pd.DataFrame, inner_share: dict[tuple[str, str], float],
                    grid_eval_ratio: dict[tuple[str, str], float]) -> pd.DataFrame:
    """The committed tasks with estimated phase seconds (the model of the module docstring).

    ``inner_share[(config, dataset)]``: inner-CV (C) share of the final ranking's evaluation;
    ``grid_eval_ratio[(config, dataset)]``: one grid point's inner-CV evaluation / the evaluation
    of an untuned selector's ranking on the same split (both measured; a config or dataset not
    measured takes the mean of the measured values of its config, else of all).
    """
    out = tasks.copy()
    untuned = out[out.grid_points == 0].assign(evaluation=lambda t: (t.task - t.fit).clip(lower=0))
    per_split = untuned.groupby(["config", "dataset", "repeat", "fold"]).evaluation.median()

    def fallback(table: dict[tuple[str, str], float], config: str, dataset: str, default: float) -> float:
        if (config, dataset) in table:
            return table[(config, dataset)]
        same = [v for (c, _), v in table.items() if c == config]
        return float(np.mean(same)) if same else (float(np.mean(list(table.values()))) if table else default)

    evaluation, inner, final, grid_fit, grid_eval = [], [], [], [], []
    for row in out.itertuples():
        source = EVALUATION_FROM.get(row.config, row.config)
        e = per_split.get((source, row.dataset, row.repeat, row.fold), np.nan)
        if row.grid_points == 0 or np.isnan(e):
            e = max(row.task - row.fit, 0.0) if row.grid_points == 0 else 0.0
        e = min(e, max(row.task - row.fit, 0.0))
        share = fallback(inner_share, row.config, row.dataset, 0.0)
        rest = max(row.task - row.fit - e, 0.0)
        g_eval = min(rest, row.grid_points * fallback(grid_eval_ratio, row.config, row.dataset, 1.0) * e)
        evaluation.append(e)
        inner.append(share * e)
        final.append((1 - share) * e)
        grid_eval.append(g_eval if row.grid_points else 0.0)
        grid_fit.append(rest - g_eval if row.grid_points else 0.0)
    out["grid: selector fits"] = grid_fit
    out["grid: inner-CV evaluation"] = grid_eval
    out["final fit"] = out.fit
    out["inner-CV evaluation (C)"] = inner
    out["final evaluation"] = final
    out["other"] = (out.task - out[list(PHASES[:-1])].sum(axis=1)).clip(lower=0)
    return out


# ----------------------------------------------------------------------------- instrumented tasks
class PhaseClock:
    """Exclusive seconds per phase: a phase entered inside another is not counted twice."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[list[Any]] = []  # [phase, start, seconds of nested phases]
        self.in_grid = False

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self._stack.append([name, time.perf_counter(), 0.0])
        try:
            yield
        finally:
            name, start, nested = self._stack.pop()
            elapsed = time.perf_counter() - start
            self.seconds[name] += elapsed - nested
            if self._stack:
                self._stack[-1][2] += elapsed


def _wrap(module: Any, attr: str, make: Callable[[Callable[..., Any]], Callable[..., Any]],
          undo: list[tuple[Any, str, Any]]) -> None:
    if hasattr(module, attr):
        original = getattr(module, attr)
        undo.append((module, attr, original))
        setattr(module, attr, make(original))


@contextlib.contextmanager
def instrumented(clock: PhaseClock) -> Iterator[None]:
    """The runner's phases timed, by wrapping the functions it calls (restored on exit)."""
    import fsbench.engine.runner as runner
    import fsbench.engine.tasks as tasks
    import fsbench.evaluation.protocol as protocol

    undo: list[tuple[Any, str, Any]] = []

    def tune(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            clock.in_grid = True
            try:
                return original(*args, **kwargs)
            finally:
                clock.in_grid = False
        return wrapper

    def fit(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with clock.phase("grid: selector fits" if clock.in_grid else "final fit"):
                return original(*args, **kwargs)
        return wrapper

    def grid(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with clock.phase("grid: inner-CV evaluation" if clock.in_grid else "inner-CV evaluation (C)"):
                return original(*args, **kwargs)
        return wrapper

    def evaluation(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with clock.phase("final evaluation"):
                return original(*args, **kwargs)
        return wrapper

    _wrap(runner, "tune_selector", tune, undo)
    for module in (runner, tasks):
        _wrap(module, "fit_selector", fit, undo)
    _wrap(protocol, "cv_accuracy_grid", grid, undo)
    with contextlib.suppress(ImportError):  # the fast route's inner folds (fsbench.evaluation.linear_libsvm)
        import fsbench.evaluation.linear_libsvm as fast

        _wrap(fast, "fold_counts", grid, undo)
    # and of fsbench.evaluation.linear_liblinear (its evaluate holds both phases)
    with contextlib.suppress(ImportError):
        import fsbench.evaluation.linear_liblinear as fast_linear

        _wrap(fast_linear, "_pooled", grid, undo)
    for attr in ("evaluate_ranking", "evaluate_classifiers"):
        _wrap(runner, attr, evaluation, undo)
    try:
        yield
    finally:
        for module, attr, original in reversed(undo):
            setattr(module, attr, original)


@contextlib.contextmanager
def plain_evaluation(plain: bool) -> Iterator[None]:
    """With ``plain``, every classifier takes the generic scikit-learn route (the protocol as it
    was before commits 58cefd1 and 47cfb40), by turning the fast routes of fsbench.evaluation.linear_libsvm and
    fsbench.evaluation.linear_liblinear off; their cache is emptied either way, so no task reuses another's
    counts."""
    try:
        import fsbench.evaluation.linear_libsvm as fast
    except ImportError:  # a version of fsbench before the fast route: always plain
        yield
        return
    routes = [fast]
    with contextlib.suppress(ImportError):  # the LIBLINEAR route came later
        import fsbench.evaluation.linear_liblinear as fast_linear
        routes.append(fast_linear)
    fast.clear_cache()
    originals = [module.solver_for for module in routes]
    if plain:
        for module in routes:
            module.solver_for = lambda estimators: None
    try:
        yield
    finally:
        for module, original in zip(routes, originals, strict=True):
            module.solver_for = original
        fast.clear_cache()


def run_task(config: str, dataset: str, repeat: int, fold: int, label: str, data_dir: str | None,
             plain: bool = False) -> tuple[dict[str, float], float, pstats.Stats]:
    """One committed task rerun with phase timers and cProfile: (phase seconds, total, stats)."""
    from fsbench.configuration.parse import load_experiment
    from fsbench.datasets import load
    from fsbench.engine.runner import _evaluate_task, plan

    exp = load_experiment(config_path(config))
    data = {dataset: load(dataset, data_dir)}
    exp = exp.with_overrides(datasets=(dataset,))
    task = next(t for t in plan(exp, data) if t.split.repeat == repeat and t.split.fold == fold
                and t.selector.label == label)
    clock = PhaseClock()
    profiler = cProfile.Profile()
    with tempfile.TemporaryDirectory() as cache, instrumented(clock), threadpool_limits(1), \
            plain_evaluation(plain):
        t0 = time.perf_counter()
        with clock.phase("other"):
            profiler.enable()
            _evaluate_task(exp, task, data[dataset].X, data[dataset].y, Path(cache))
            profiler.disable()
        total = time.perf_counter() - t0
    return dict(clock.seconds), total, pstats.Stats(profiler)


#: cProfile buckets: (label, file name, function): scikit-learn's wrappers, whose own time is the
#: compiled solver's (Cython functions do not appear in cProfile by themselves)
BUCKETS = [
    ("LIBSVM fit", "_base.py", "_dense_fit"),
    ("LIBSVM predict", "_base.py", "_dense_predict"),
    ("LIBLINEAR fit", "_base.py", "_fit_liblinear"),
]


def hot_spots(stats: pstats.Stats, top: int = 6) -> tuple[dict[str, float], list[tuple[str, float]]]:
    """Seconds in LIBSVM/LIBLINEAR's C code, and the top functions by own time."""
    buckets: dict[str, float] = defaultdict(float)
    rows = []
    for (file, _line, name), (_cc, _nc, tottime, _cum, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        for label, file_name, function in BUCKETS:
            if Path(file).name == file_name and name == function:
                buckets[label] += tottime
                break
        where = name if file == "~" else f"{Path(file).name}:{name}"
        rows.append((where, tottime))
    rows.sort(key=lambda r: -r[1])
    return dict(buckets), rows[:top]


# ----------------------------------------------------------------------------- report
def fmt(seconds: float) -> str:
    return f"{seconds:,.0f}" if seconds >= 10 else f"{seconds:.1f}"


ESTIMATED = PHASES[:-1]  # the committed rows have no "other": it is in the phases' estimates
EVALUATION = ("grid: inner-CV evaluation", "inner-CV evaluation (C)", "final evaluation")


def table(df: pd.DataFrame, by: list[str], total: float, phases: tuple[str, ...] = ESTIMATED,
          column: str = "task") -> list[str]:
    g = df.groupby(by)[[column, *phases]].sum().sort_values(column, ascending=False)
    head = [*by, "tasks s", "share", *phases]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(by) + "---:|" * (len(head) - len(by))]
    for key, row in g.iterrows():
        key = key if isinstance(key, tuple) else (key,)
        cells = [*map(str, key), fmt(row[column]), f"{100 * row[column] / total:.1f}%", *(fmt(row[p]) for p in phases)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def dso_check(est: pd.DataFrame) -> list[str]:
    """The tuned DSO-FS's grid fits estimated a second way: DSO-FS at each fixed p of the grid was
    also fitted on the same splits (selectors dso-p0.1 ... dso-p1.0, their final fits recorded),
    so the grid's fits are about (inner folds) x (the sum of those fits), each fold fit on
    (F - 1) / F of the rows."""
    from fsbench.configuration.parse import load_experiment

    exp = load_experiment(config_path("dso-fs"))
    rows = est[est.config == "dso-fs"]
    lines = ["## A check of the estimate: the tuned DSO-FS's grid fits", "",
             "DSO-FS at each fixed p of its grid was fitted on the same splits (dso-p0.1 ... dso-p1.0; final "
             "fits recorded), so the tuned `dso`'s grid fits are about (inner folds) x (the sum of those fits) "
             "(each fold fit sees (F - 1) / F of the rows, so this leans high where a fit's time grows with n).",
             "", "| dataset | inner folds | estimated (remainder) s | inner folds x fixed-p fits s |",
             "|---|---:|---:|---:|"]
    fixed = rows[rows.selector.str.startswith("dso-p")]
    for dataset in sorted(rows.dataset.unique()):
        tuned = rows[(rows.dataset == dataset) & (rows.selector == "dso")]
        if tuned.empty:
            continue
        n_train = int(pd.read_csv(RESULTS / "dso-fs" / "runs.csv.gz", usecols=["dataset", "n_train"])
                      .query("dataset == @dataset").n_train.iloc[0])
        folds = exp.inner_cv.folds_for(n_train)
        by_split = fixed[fixed.dataset == dataset].groupby(["repeat", "fold"]).fit.sum()
        lines.append(f"| {dataset} | {folds} | {tuned['grid: selector fits'].sum():,.0f} | "
                     f"{folds * by_split.sum():,.0f} |")
    return lines


def _mean_by(values: dict[tuple[str, str], list[float]]) -> dict[tuple[str, str], float]:
    return {k: float(np.mean(v)) for k, v in values.items() if v}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="instrument three small tasks only")
    parser.add_argument("--rows-only", action="store_true", help="no reruns: the committed rows alone")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "profile.md"))
    parser.add_argument("--measurements", help="JSON file: with --reuse, read the instrumented tasks' "
                        "measurements from it instead of rerunning them; else write them to it")
    parser.add_argument("--reuse", action="store_true", help="read --measurements instead of rerunning")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    data_dir = os.environ.get("FSBENCH_DATA")

    tasks = committed_tasks()
    measured: list[dict[str, Any]] = []
    load = os.getloadavg()[0]
    if args.reuse:
        saved = json.loads(Path(args.measurements).read_text(encoding="utf-8"))
        measured, load = saved["tasks"], saved["load_average"]
        for entry in measured:
            entry["spec"] = tuple(entry["spec"])
    elif not args.rows_only:
        for spec in QUICK if args.quick else TASKS:
            entry: dict[str, Any] = {"spec": spec}
            for route, plain in (("plain", True), ("fast", False)):
                phases, total, stats = run_task(*spec, data_dir, plain=plain)
                buckets, top = hot_spots(stats)
                entry[route] = {"phases": phases, "total": total, "buckets": buckets, "top": top}
                print(f"{spec} {route}: {total:.1f} s " + ", ".join(f"{k} {v:.2f}" for k, v in phases.items()),
                      flush=True)
            measured.append(entry)
        load = os.getloadavg()[0]
        if args.measurements:
            Path(args.measurements).write_text(json.dumps({"load_average": load, "tasks": measured}, indent=1),
                                               encoding="utf-8")

    # measured on the plain route (as the committed rows were computed): the evaluation of an untuned
    # selector's ranking per (config, dataset); the inner-CV (C) share of an evaluation; one grid
    # point's inner-CV evaluation relative to the untuned evaluation of the same split
    points = dict(zip(zip(tasks.config, tasks.selector, strict=True), tasks.grid_points, strict=True))
    untuned_eval: dict[tuple[str, str], list[float]] = defaultdict(list)
    inner_share: dict[tuple[str, str], list[float]] = defaultdict(list)
    speed: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for entry in measured:
        config, dataset, _r, _f, label = entry["spec"]
        phases = entry["plain"]["phases"]
        evaluation = phases.get("inner-CV evaluation (C)", 0.0) + phases.get("final evaluation", 0.0)
        if evaluation > 0:
            inner_share[(config, dataset)].append(phases.get("inner-CV evaluation (C)", 0.0) / evaluation)
            if not points.get((config, label), 0):
                untuned_eval[(config, dataset)].append(evaluation)
        for phase in EVALUATION:
            before, after = phases.get(phase, 0.0), entry["fast"]["phases"].get(phase, 0.0)
            if before > 0.05:
                speed[(config, dataset, phase)].append(after / before)
    untuned = _mean_by(untuned_eval)
    grid_ratio: dict[tuple[str, str], list[float]] = defaultdict(list)
    for entry in measured:
        config, dataset, _r, _f, label = entry["spec"]
        n_points = points.get((config, label), 0)
        reference = untuned.get((EVALUATION_FROM.get(config, config), dataset))
        if n_points and reference:
            grid_ratio[(config, dataset)].append(
                entry["plain"]["phases"].get("grid: inner-CV evaluation", 0.0) / n_points / reference)
    shares, ratios = _mean_by(inner_share), _mean_by(grid_ratio)
    est = estimate_phases(tasks, shares, ratios)
    total = est.task.sum()

    # projection: each evaluation phase scaled by the fast/plain time measured on the same (config,
    # dataset), else the mean over the config's (or SPEED_FROM's) datasets, else unchanged
    factors = _mean_by(speed)
    projected = est.copy()
    for phase in EVALUATION:
        def factor(config: str, dataset: str, phase: str = phase) -> float:
            if (config, dataset, phase) in factors:
                return factors[(config, dataset, phase)]
            source = config if any(c == config for c, _d, _p in factors) else SPEED_FROM.get(config, config)
            same = [v for (c, _d, p), v in factors.items() if c == source and p == phase]
            return float(np.mean(same)) if same else 1.0
        projected[phase] = [row[phase] * factor(row.config, row.dataset) for _, row in est.iterrows()]
    projected["task"] = projected[list(ESTIMATED)].sum(axis=1)

    phase_totals = est[list(ESTIMATED)].sum()
    evaluation_total = phase_totals[list(EVALUATION)].sum()
    fits_total = phase_totals[["grid: selector fits", "final fit"]].sum()
    by_paper = est.groupby("paper").task.sum().sort_values(ascending=False)
    lines = ["# Where the reproduction's compute goes", "",
             "Generated by `benchmarks/profile_protocol.py` (the method is in its docstring); "
             f"Python {platform.python_version()}, one BLAS thread, {os.cpu_count()} cores shared with other jobs "
             + f"(load average {load:.2f} when the measurements ended; "
             + "the instrumented tasks' seconds are inflated by the machine's load, their shares much less).", "",
             "## Headline", "",
             f"- **{total:,.0f} s** of compute in the committed rows ({len(est):,} tasks, {est.config.nunique()} "
             "results folders; the sum of `task_seconds`, one value per task): "
             + ", ".join(f"{paper} {v:,.0f} s" for paper, v in by_paper.items()) + ".",
             f"- Selector fits: **{fits_total:,.0f} s ({100 * fits_total / total:.0f}%)**: final fits "
             f"{phase_totals['final fit']:,.0f} s (recorded), fits inside grid searches "
             f"{phase_totals['grid: selector fits']:,.0f} s (estimated).",
             f"- Evaluation of rankings (LIBSVM/LIBLINEAR fits and predictions): **{evaluation_total:,.0f} s "
             f"({100 * evaluation_total / total:.0f}%)**: scoring the grid points of tuned selectors "
             f"{phase_totals['grid: inner-CV evaluation']:,.0f} s, tuning C for the final ranking "
             f"{phase_totals['inner-CV evaluation (C)']:,.0f} s, the final refit and test score "
             f"{phase_totals['final evaluation']:,.0f} s.",
             ]
    if measured:
        untuned_tasks = [e for e in measured if not points.get((e["spec"][0], e["spec"][4]), 0)]

        def share(bucket_names: tuple[str, ...], configs: tuple[str, ...]) -> str:
            chosen = [e for e in untuned_tasks if e["spec"][0] in configs]
            inside = sum(e["plain"]["buckets"].get(b, 0.0) for e in chosen for b in bucket_names)
            ev = sum(e["plain"]["phases"].get(p, 0.0) for e in chosen for p in EVALUATION)
            return f"{100 * inside / ev:.0f}%" if ev else "-"

        lines += ["- Untuned tasks instrumented (their selectors use neither LIBSVM nor LIBLINEAR): in DSO-FS's "
                  f"(LIBSVM, 7 C tuned), {share(('LIBSVM fit', 'LIBSVM predict'), ('dso-fs',))} of the evaluation "
                  "time is inside LIBSVM's fit and predict (own time of scikit-learn's `_dense_fit` and "
                  f"`_dense_predict`); in SL2P's (LIBLINEAR Crammer-Singer, 21 C tuned), "
                  f"{share(('LIBLINEAR fit',), ('sl2p',))} inside LIBLINEAR; in RFS's (LIBSVM, C = 1 fixed), "
                  f"{share(('LIBSVM fit', 'LIBSVM predict'), ('rfs',))}; the rest is scikit-learn's per-fit "
                  "validation and Python.",
                  f"- Projected with the fast evaluation (the exact LIBSVM and LIBLINEAR routes; "
                  "each evaluation phase scaled by the fast/plain "
                  f"time measured on the same config and dataset, else on the nearest measured; selector fits "
                  f"unchanged): "
                  f"**{projected.task.sum():,.0f} s**; evaluation {evaluation_total:,.0f} -> "
                  f"{projected[list(EVALUATION)].sum().sum():,.0f} s."]
    lines += ["", "## By phase (all papers)", "", "| phase | seconds | share |", "|---|---:|---:|"]
    for p in ESTIMATED:
        lines.append(f"| {p} | {phase_totals[p]:,.0f} | {100 * phase_totals[p] / total:.1f}% |")
    lines += ["", "## By paper", "", *table(est, ["paper"], total), "",
              "## By results folder", "", *table(est, ["config"], total), "",
              "## By paper and dataset", "", *table(est, ["paper", "dataset"], total), "",
              "## By results folder, dataset and selector (groups above 1% of the total)", ""]
    big = est.groupby(["config", "dataset", "selector"]).task.transform("sum") > 0.01 * total
    lines += [*table(est[big], ["config", "dataset", "selector"], total), ""]
    lines += [*dso_check(est), ""]

    if measured:
        lines += ["## Instrumented tasks (measured)", "",
                  "Whole tasks rerun through the runner's task function, a fresh rankings cache, one BLAS "
                  "thread, under cProfile (its overhead is included), twice: `plain` evaluates every classifier "
                  "through scikit-learn's estimators (the protocol as the committed rows were computed), `fast` "
                  "with the part-2 route for the built-in linear_svm on LIBSVM (fsbench.evaluation.linear_libsvm; "
                  "other "
                  "classifiers are plain in both). `estimated` is the model applied to the committed row of the "
                  "same task.", "",
                  "| config | dataset | selector | route | seconds | committed s | " + " | ".join(PHASES) + " |",
                  "|---|---|---|---|---:|---:|" + "---:|" * len(PHASES)]
        for entry in measured:
            config, dataset, repeat, fold, label = entry["spec"]
            row = est[(est.config == config) & (est.dataset == dataset) & (est.repeat == repeat)
                      & (est.fold == fold) & (est.selector == label)]
            committed = f"{row.task.iloc[0]:.1f}" if len(row) else "-"
            for route in ("plain", "fast"):
                m = entry[route]
                lines.append(f"| {config} | {dataset} | {label} | {route} | {m['total']:.1f} | "
                             f"{committed if route == 'plain' else ''} | "
                             + " | ".join(f"{m['phases'].get(p, 0.0):.2f}" for p in PHASES) + " |")
            if len(row):
                lines.append("| | | | estimated | | | "
                             + " | ".join(f"{row[p].iloc[0]:.2f}" for p in ESTIMATED) + " | |")
        lines += ["", "The estimate puts into `grid: selector fits` what the other phases do not explain, including "
                  "the load the committed run met (the committed and the measured seconds of a task differ by "
                  "that load): it is an upper bound of the grid's fits where a task ran under more load than "
                  "here (SEMEION's tuned RFS above).", ""]
        lines += ["", "### Hot spots (cProfile, own time, plain route)", "",
                  "| config | dataset | selector | LIBSVM fit | LIBSVM predict | LIBLINEAR fit "
                  "| top functions (own s) |",
                  "|---|---|---|---:|---:|---:|---|"]
        for entry in measured:
            config, dataset, _r, _f, label = entry["spec"]
            b, top = entry["plain"]["buckets"], entry["plain"]["top"]
            tops = "; ".join(f"`{name}` {sec:.2f}" for name, sec in top)
            lines.append(f"| {config} | {dataset} | {label} | {b.get('LIBSVM fit', 0):.2f} | "
                         f"{b.get('LIBSVM predict', 0):.2f} | {b.get('LIBLINEAR fit', 0):.2f} | {tops} |")
        lines += ["", "Measured values the estimate uses: inner-CV (C) share of an evaluation "
                  + ", ".join(f"{c}/{d} {v:.3f}" for (c, d), v in sorted(shares.items()))
                  + "; one grid point's inner-CV evaluation / an untuned selector's evaluation of the same split "
                  + ", ".join(f"{c}/{d} {v:.2f}" for (c, d), v in sorted(ratios.items()))
                  + "; fast / plain time per evaluation phase "
                  + ", ".join(f"{c}/{d} {p} {v:.2f}" for (c, d, p), v in sorted(factors.items())) + ".", "",
                  "## Projected with the fast evaluation, by results folder", "",
                  *table(projected, ["config"], projected.task.sum()), ""]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[:16]))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
