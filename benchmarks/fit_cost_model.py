"""The cost model of ``fsbench run --dry-run`` (fsbench/engine/cost_model.py): measure, fit, check.

``--quick``   measures every registered selector's fit at a few small sizes (synthetic data: 4 balanced
              classes, 20 informative features of Gaussian class means, the rest Gaussian noise,
              z-scored; ``n_features_to_select`` = min(100, d); default parameters; one BLAS thread;
              each fit stopped after 60 s, and larger sizes of that selector skipped) and the evaluation
              of one ranking through every classifier route at a few (n, k) (3 inner folds; the SVMs
              with the 7-value C grid 1e-4 .. 100 and with C = 1 alone, the others untuned), then
              fits both models by least squares on the log scale and writes
              fsbench/engine/cost_model.json and benchmarks/cost_model.md (measurements included).
``--refit``   refits the selector models on benchmarks/scale.csv (``bench_scale.load_scale_table``:
              rows with status ok, CPU seconds), keeping the classifier models.
``--variants`` measures the selectors whose parameters change their cost severalfold (:data:`VARIANTS`:
              RFS with the papers' stopping rule at each gamma of their grid, DSO-FS at each p of the
              DSO-FS paper) at the sizes of ``--quick``, and every classifier route at 2, 4 and 10 classes
              (:data:`CLASS_SIZES`), then adds the variants' entries and each route's class exponent
              ``eta`` (least squares of log(t_c / t_4) on log(c / 4)) to the model.
``--limits``  copies each selector's measured fit times along n (d = 1,000, rows of ``--label``, the code
              being shipped) from benchmarks/scale.csv (or ``--scale``) into the model, where
              ``fsbench selectors`` states them.
``--calibrate`` fits the real-data factors (one per selector, one per classifier route: medians of
              measured / predicted on the log scale, :func:`fit_factors`) on every task of the committed
              runs into the model's ``calibration``, then checks as ``--check`` does.
``--check``   predicts every task of the committed runs (results/**/runs.csv.gz with its config.yaml)
              and compares with its measured ``task_seconds``; the share within 2x, per selector and
              overall, goes into benchmarks/cost_model.md. Since the factors are fitted on those runs,
              the figure that counts is out of sample: each dataset's tasks predicted with factors
              fitted on the other datasets' (:func:`left_out_predictions`).

Times are CPU seconds of this process (``time.process_time``), which a shared machine inflates less
than wall time; the load average is recorded.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/fit_cost_model.py --quick
    python benchmarks/fit_cost_model.py --calibrate
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import platform
import re
import signal
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from numpy.random import PCG64, Generator
from scipy.optimize import least_squares
from threadpoolctl import threadpool_limits

from fsbench.configuration.experiment import (
    Experiment,
)
from fsbench.datasets.registry import resolve
from fsbench.engine.cost_model import COST_MODEL_FILE, ROUTES, entry_name, load_cost_model, task_parts
from fsbench.engine.fitting import fit_selector
from fsbench.evaluation import linear_libsvm
from fsbench.evaluation.classifiers import classifier_spec
from fsbench.evaluation.protocol import evaluate_ranking
from fsbench.selectors import registry

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "benchmarks" / "cost_model.md"
SCALE_CSV = ROOT / "benchmarks" / "scale.csv"
CAP = 60.0  # seconds a calibration fit may take
N_CLASSES = 4
N_INFORMATIVE = 20
SELECTOR_SIZES = [(n, d) for n in (40, 120, 360) for d in (250, 1000, 4000)]
CLASSIFIER_SIZES = [(n, k) for n in (30, 100, 300, 900) for k in (5, 20, 50, 100)]
C_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0)
INNER_FOLDS = 3
#: selectors measured with parameters of their own (fsbench.engine.cost_model.entry_name): RFS as the papers'
#: configs run it (stop: decrease, tol 1e-6, max_iter 1000) at each gamma of their grid, DSO-FS at each p
_RFS_PAPERS = {"stop": "decrease", "tol": 1e-6, "max_iter": 1000}
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "rfs": [_RFS_PAPERS] + [{**_RFS_PAPERS, "gamma": g} for g in (1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1000.0)],
    "dso": [{"p": p} for p in (0.1, 0.3, 0.5, 0.7, 0.9)],
}
#: the class exponents: every route at these (n, k), at 2, 4 and 10 classes, on both data difficulties
CLASS_SIZES = [(100, 20), (300, 50)]
CLASS_COUNTS = (2, 4, 10)
#: the classifiers are measured on separable data and on overlapping classes with noisy labels, whose
#: SVM fits at large C take longer: the model is fitted on both
DIFFICULTY = {"easy": (1.0, 0.0), "hard": (0.3, 0.1)}


# ----------------------------------------------------------------------------- data
def synthetic(n: int, d: int, seed: int, separation: float = 1.0, flip: float = 0.0,
              classes: int = N_CLASSES) -> tuple[np.ndarray, np.ndarray]:
    """``n`` x ``d``, ``classes`` balanced classes; the first 20 features carry the class (Gaussian class
    means times ``separation``), the rest are noise; a share ``flip`` of the labels redrawn at random;
    z-scored."""
    rng = Generator(PCG64(seed))
    y = np.arange(n) % classes
    rng.shuffle(y)
    X = rng.standard_normal((n, d))
    means = separation * rng.standard_normal((classes, min(N_INFORMATIVE, d)))
    X[:, :means.shape[1]] += means[y]
    flipped = rng.random(n) < flip
    y[flipped] = rng.integers(0, classes, int(flipped.sum()))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, y


def route_specs() -> dict[str, list[tuple[Any, int]]]:
    """Per route, the specs measured and their number of fits per k (inner folds x grid + refit)."""
    tuned = INNER_FOLDS * len(C_GRID) + 1
    svm = {"libsvm": {"backend": "libsvm"}, "liblinear": {"backend": "liblinear"}}
    out: dict[str, list[tuple[Any, int]]] = {}
    for route, params in svm.items():
        out[route] = [(classifier_spec("linear_svm", params=params, grid={"C": C_GRID}), tuned),
                      (classifier_spec("linear_svm", params={**params, "C": 1.0}), 1)]
    out["crammer_singer"] = [(classifier_spec("crammer_singer", grid={"C": C_GRID}), tuned),
                             (classifier_spec("crammer_singer", params={"C": 1.0}), 1)]
    for route in ("knn", "logistic", "random_forest"):
        out[route] = [(classifier_spec(route), 1)]
    return out


# ----------------------------------------------------------------------------- measuring
class CpuCap(Exception):
    """A calibration fit ran past :data:`CAP` seconds of CPU time."""


@contextlib.contextmanager
def cpu_cap(seconds: float) -> Iterator[None]:
    """Raise CpuCap in the block after ``seconds`` of this process's CPU time (ITIMER_PROF: a loaded
    machine stretches wall time, not CPU time, so the cap is the same on a busy and an idle machine)."""
    def expire(signum: int, frame: Any) -> None:
        raise CpuCap

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def cpu_per_call(call: Any, budget: float = 0.3, most: int = 500) -> float:
    """CPU seconds of one ``call()``: calls repeated until they took ``budget`` seconds in all (at most
    ``most`` calls), their total over their number. The process clock of some systems ticks in 4 ms steps,
    so a fast call is only measured in a batch; the cap (:func:`cpu_cap`) applies to each call."""
    calls, t0 = 0, time.process_time()
    while calls < most and (calls == 0 or time.process_time() - t0 < budget):
        with cpu_cap(CAP):
            call()
        calls += 1
    return (time.process_time() - t0) / calls


def measure_selectors(names: list[str],
                      variants: dict[str, list[dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """Every selector of ``names`` at its defaults, or, with ``variants``, each selector with each of its
    parameter sets; rows named by :func:`entry_name`."""
    rows = []
    jobs = ([(name, params) for name, sets in variants.items() for params in sets] if variants is not None
            else [(name, {}) for name in names])
    for name, params in jobs:
        entry = entry_name(name, params)
        too_slow: list[tuple[int, int]] = []
        for n, d in SELECTOR_SIZES:
            if any(n >= n0 and d >= d0 for n0, d0 in too_slow):
                rows.append({"selector": entry, "n": n, "d": d, "cpu_s": float("nan"), "status": "skipped"})
                continue
            X, y = synthetic(n, d, seed=n * 7919 + d)
            status, seconds = "ok", math.nan

            def fit(X: np.ndarray = X, y: np.ndarray = y, name: str = name, d: int = d,
                    params: dict[str, Any] = params) -> None:
                fit_selector(name, params, X, y, 0, min(100, d), None)

            try:
                with threadpool_limits(limits=1), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if (n, d) == SELECTOR_SIZES[0]:
                        fit()  # imports and first calls, not measured
                    seconds = cpu_per_call(fit)
            except CpuCap:
                status = "capped"
                too_slow.append((n, d))
            rows.append({"selector": entry, "n": n, "d": d, "cpu_s": seconds if status == "ok" else float("nan"),
                         "status": status})
            print(f"{entry:20s} n={n:4d} d={d:5d} {status:8s} {seconds:8.3f} s", flush=True)
    return rows


def measure_classifiers(sizes: list[tuple[int, int]] = CLASSIFIER_SIZES,
                        classes: int = N_CLASSES) -> list[dict[str, Any]]:
    rows = []
    for route, specs in route_specs().items():
        for (spec, fits), (data, (separation, flip)) in itertools.product(specs, DIFFICULTY.items()):
            too_slow: list[tuple[int, int]] = []
            for n, k in sizes:
                if any(n >= n0 and k >= k0 for n0, k0 in too_slow):
                    rows.append({"route": route, "data": data, "n": n, "k": k, "fits": fits, "cpu_s": float("nan"),
                                 "status": "skipped", "classes": classes})
                    continue
                n_test = max(classes, round(n * 2 / 3))
                X, y = synthetic(n + n_test, max(k, N_INFORMATIVE), n * 31 + k, separation, flip, classes)
                Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
                status, seconds = "ok", math.nan

                def evaluate(Xtr: np.ndarray = Xtr, ytr: np.ndarray = ytr, Xte: np.ndarray = Xte,
                             yte: np.ndarray = yte, k: int = k, spec: Any = spec) -> None:
                    linear_libsvm.clear_cache()  # both SVM routes keep their counts there
                    evaluate_ranking(Xtr, ytr, Xte, yte, np.arange(Xtr.shape[1]), [k], spec, INNER_FOLDS, 0)

                try:
                    with threadpool_limits(limits=1), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        seconds = cpu_per_call(evaluate)
                except CpuCap:
                    status = "capped"
                    too_slow.append((n, k))
                rows.append({"route": route, "data": data, "n": n, "k": k, "fits": fits, "cpu_s": seconds,
                             "status": status, "classes": classes})
                print(f"{route:15s} {data} c={classes:2d} fits={fits:2d} n={n:4d} k={k:4d} {status:8s} "
                      f"{seconds:8.4f} s", flush=True)
    return rows


# ----------------------------------------------------------------------------- fitting
def fit_selector_model(table: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per selector, (a, alpha, beta) of log t = a + alpha log n + beta log d by least squares."""
    out = {}
    for name, rows in table.groupby("selector"):
        rows = rows[(rows["status"] == "ok") & (rows["cpu_s"] > 0)]
        if len(rows) < 3:
            continue
        A = np.column_stack([np.ones(len(rows)), np.log(rows["n"]), np.log(rows["d"])])
        b = np.log(rows["cpu_s"].to_numpy())
        coef, *_ = np.linalg.lstsq(A, b, rcond=None)
        resid = b - A @ coef
        out[str(name)] = {"a": float(coef[0]), "alpha": float(coef[1]), "beta": float(coef[2]),
                          "points": int(len(rows)), "rms_log": float(np.sqrt(np.mean(resid ** 2))),
                          "n_range": [int(rows["n"].min()), int(rows["n"].max())],
                          "d_range": [int(rows["d"].min()), int(rows["d"].max())]}
    return out


def fit_classifier_model(table: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per route, (b, gamma, delta) of the per-fit time exp(b) n^gamma k^delta, fitted on the log of
    the measured evaluations: T = exp(b) k^delta (fits_inner (n (F-1)/F)^gamma + n^gamma), F inner folds."""
    out = {}
    shrink = (INNER_FOLDS - 1) / INNER_FOLDS
    ok = table["status"] == "ok" if "status" in table else np.isfinite(table["cpu_s"])
    for route, rows in table[ok].groupby("route"):
        n, k = rows["n"].to_numpy(float), rows["k"].to_numpy(float)
        inner = rows["fits"].to_numpy(float) - 1
        target = np.log(rows["cpu_s"].to_numpy(float))

        def residual(p: np.ndarray, n: np.ndarray = n, k: np.ndarray = k, inner: np.ndarray = inner,
                     target: np.ndarray = target) -> np.ndarray:
            b, gamma, delta = p
            return b + delta * np.log(k) + np.log(inner * (n * shrink) ** gamma + n ** gamma) - target

        start = np.linalg.lstsq(np.column_stack([np.ones(len(rows)), np.log(n), np.log(k)]),
                                target - np.log(inner + 1), rcond=None)[0]
        fit = least_squares(residual, start)
        out[str(route)] = {"b": float(fit.x[0]), "gamma": float(fit.x[1]), "delta": float(fit.x[2]),
                           "points": int(len(rows)), "rms_log": float(np.sqrt(np.mean(fit.fun ** 2))),
                           "n_range": [int(n.min()), int(n.max())], "k_range": [int(k.min()), int(k.max())]}
    return out


def fit_class_exponents(table: pd.DataFrame) -> dict[str, float]:
    """Per route, eta of t_c = t_4 (c / 4)^eta: least squares through the origin of log(t_c / t_4) on
    log(c / 4) over the (data, fits, n, k) measured at 4 and at other class counts."""
    ok = table[(table["status"] == "ok") & (table["cpu_s"] > 0)]
    keys = ["route", "data", "fits", "n", "k"]
    base = ok[ok["classes"] == N_CLASSES].set_index(keys)["cpu_s"]
    out = {}
    for route, rows in ok[ok["classes"] != N_CLASSES].groupby("route"):
        pairs = [(math.log(r.classes / N_CLASSES), math.log(r.cpu_s / base[key]))
                 for r in rows.itertuples() if (key := (r.route, r.data, r.fits, r.n, r.k)) in base.index]
        if pairs:
            x, y = np.array(pairs).T
            out[str(route)] = float(x @ y / (x @ x))
    return out


def write_model(selectors: dict, classifiers: dict, source: str) -> None:
    doc = {
        "description": ("fsbench's cost model (fsbench.engine.cost_model): per selector log t = a + alpha log n + "
                        "beta log d, per classifier route and fit log t = b + gamma log n + delta log k; natural "
                        "logarithms, CPU seconds on one BLAS thread; written by benchmarks/fit_cost_model.py"),
        "source": source,
        "fallback_selector": "fisher",
        "fallback_classifier": "logistic",
        "calibration_classes": N_CLASSES,
        "selector_fit": dict(sorted(selectors.items())),
        "classifier_fit": {r: classifiers[r] for r in ROUTES if r in classifiers},
    }
    COST_MODEL_FILE.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- the check
def committed_experiment(folder: Path) -> tuple[Experiment, dict[str, Any]]:
    """A results folder's experiment, rebuilt from its config.yaml (``Experiment.from_dict``), and the file's data."""
    doc = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    return Experiment.from_dict(doc), doc


def dataset_shape(name: str, doc: dict[str, Any]) -> tuple[int, int, int]:
    """(samples, features, classes) of a committed run's dataset: the registry's, or its known-data entry's."""
    for entry in doc.get("known_data") or []:
        if entry.get("name") == name:
            probes = int((entry.get("probes") or {}).get("n", 0))
            if entry.get("generate"):
                generate = entry["generate"]
                return (int(generate["n_samples"]), int(generate["n_features"]) + probes,
                        int(generate.get("n_classes", 2)))
            n, d, c = dataset_shape(entry["base"], {})
            return n, d + probes, c
    spec = resolve(name)
    return spec.n_samples, spec.n_features, spec.n_classes


def check_rows(calibrated: bool = True) -> pd.DataFrame:
    """Every committed task: its folder, dataset, selector, measured and predicted seconds, and the
    prediction's parts (``selector_part``, ``route_parts``: seconds by classifier route) by the shipped
    model, or by the model without its real-data factors (``calibrated`` False)."""
    model = load_cost_model() if calibrated else load_cost_model().uncalibrated()
    out = []
    for runs_path in sorted(ROOT.glob("results/**/runs.csv.gz")):
        folder = runs_path.parent
        experiment, doc = committed_experiment(folder)
        selectors = {s.label: s for s in experiment.selectors}
        runs = pd.read_csv(runs_path, low_memory=False,
                           usecols=["dataset", "repeat", "fold", "selector", "n_train", "task_seconds", "fit_seconds"])
        tasks = runs.groupby(["dataset", "repeat", "fold", "selector"], sort=False).first().reset_index()
        tasks = tasks.sort_values(["repeat", "fold"], kind="stable")
        fitted: set[tuple[str, str]] = set()
        select_all = experiment.protocol.select_on == "all"
        for row in tasks.itertuples(index=False):
            n, d, classes = dataset_shape(row.dataset, doc)
            key = (row.dataset, row.selector)
            first = key not in fitted
            fitted.add(key)
            parts = task_parts(model, experiment, selectors[row.selector], int(row.n_train), d,
                               n_select=n if select_all else None, fit_selection=first or not select_all,
                               classes=classes)
            out.append({"folder": str(folder.relative_to(ROOT / "results")), "dataset": row.dataset,
                        "selector": row.selector, "method": selectors[row.selector].name, "n_train": row.n_train,
                        "d": d, "measured": float(row.task_seconds), "fit_measured": float(row.fit_seconds),
                        "predicted": parts.total, "selector_part": parts.selector, "route_parts": parts.routes})
    table = pd.DataFrame(out)
    table["ratio"] = table["predicted"] / table["measured"]
    table["within"] = (table["ratio"] >= 0.5) & (table["ratio"] <= 2.0)
    return table


# ----------------------------------------------------------------------------- the real-data calibration
#: measured times below this are timer noise (the process clock ticks in 4 ms steps)
_SHORTEST = 0.005


def _log_ratio_median(measured: pd.Series, predicted: pd.Series) -> float | None:
    keep = (predicted > 0) & np.isfinite(predicted)
    if not keep.any():
        return None
    return float(np.exp(np.median(np.log(np.maximum(measured[keep], _SHORTEST) / predicted[keep]))))


def fit_factors(table: pd.DataFrame) -> tuple[dict[str, float], dict[str, float]]:
    """The real-data factors from committed tasks (:func:`check_rows` of the uncalibrated model): per
    selector, the median ratio of measured ``fit_seconds`` to the predicted selector part; per route,
    the median ratio of the rest of the task's time to the predicted evaluation, over the tasks whose
    evaluation takes that route alone. Medians on the log scale, so a few slow tasks do not decide."""
    selectors = {}
    for method, rows in table.groupby("method"):
        factor = _log_ratio_median(rows["fit_measured"], rows["selector_part"])
        if factor is not None:
            selectors[str(method)] = factor
    routes = {}
    single = table[table["route_parts"].map(len) == 1]
    route_of = single["route_parts"].map(lambda parts: next(iter(parts)))
    for route, rows in single.groupby(route_of):
        evaluation = rows["route_parts"].map(lambda parts: next(iter(parts.values())))
        factor = _log_ratio_median(rows["measured"] - rows["fit_measured"], evaluation)
        if factor is not None:
            routes[str(route)] = factor
    return selectors, routes


def apply_factors(table: pd.DataFrame, selectors: dict[str, float], routes: dict[str, float]) -> pd.Series:
    """The predictions of :func:`check_rows`' parts scaled by the factors (1 where a factor is absent)."""
    return pd.Series([row.selector_part * selectors.get(row.method, 1.0)
                      + sum(seconds * routes.get(route, 1.0) for route, seconds in row.route_parts.items())
                      for row in table.itertuples()], index=table.index)


def left_out_predictions(table: pd.DataFrame) -> pd.Series:
    """Out-of-sample predictions: each dataset's tasks predicted with factors fitted on every other
    dataset's tasks (in every results folder), as a new dataset would be."""
    out = pd.Series(np.nan, index=table.index)
    for dataset in table["dataset"].unique():
        held = table["dataset"] == dataset
        selectors, routes = fit_factors(table[~held])
        out[held] = apply_factors(table[held], selectors, routes)
    return out


def calibrate_step() -> pd.DataFrame:
    """``--calibrate``: fit the factors on every committed task, write them into the model, and return
    the check's table with the out-of-sample predictions (``left_out``) beside the shipped ones."""
    table = check_rows(calibrated=False)
    selectors, routes = fit_factors(table)
    doc = json.loads(COST_MODEL_FILE.read_text(encoding="utf-8"))
    doc["calibration"] = {
        "source": f"benchmarks/fit_cost_model.py --calibrate, {time.strftime('%Y-%m-%d')}: {len(table):,} tasks "
                  f"of the committed runs",
        "selectors": {name: round(f, 4) for name, f in sorted(selectors.items())},
        "routes": {route: round(f, 4) for route, f in sorted(routes.items())},
    }
    COST_MODEL_FILE.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    table["left_out"] = left_out_predictions(table)
    table["predicted"] = apply_factors(table, selectors, routes)
    return table


def check_section(table: pd.DataFrame) -> str:
    share = table["within"].mean()
    left_out = table["left_out"] / table["measured"]
    out_of_sample = ((left_out >= 0.5) & (left_out <= 2.0)).mean()
    lines = ["## Accuracy on the committed runs", "",
             f"Predicted task time against the measured `task_seconds` of every task of the committed runs "
             f"({len(table):,} tasks in {table['folder'].nunique()} results folders; `results/**/runs.csv.gz` with "
             f"their `config.yaml`). The synthetic measurements that fit the coefficients never saw them; the "
             f"real-data factors (`calibration` in the model) are fitted on them, so the figure that counts is "
             f"the out-of-sample one: each dataset's tasks (in every folder) predicted with factors fitted on the "
             f"other datasets' tasks, as a new dataset would be. Computed by "
             f"`benchmarks/fit_cost_model.py --calibrate` on {time.strftime('%Y-%m-%d')}.", "",
             f"**Within 2x, out of sample: {out_of_sample:.1%} of tasks** (bar: 80 %; median predicted / measured "
             f"{left_out.median():.2f}). With the shipped factors, fitted on all of them: {share:.1%} (median "
             f"{table['ratio'].median():.2f}); summed over all tasks: predicted {table['predicted'].sum():,.0f} s, "
             f"measured {table['measured'].sum():,.0f} s.", "",
             "Per selector, out of sample (method; `dso-p0.1` etc. are DSO-FS at other p):", "",
             "| selector | tasks | within 2x | median pred/meas | under 0.5x | over 2x | predicted s | measured s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    table = table.assign(out_ratio=left_out, out_within=(left_out >= 0.5) & (left_out <= 2.0))
    for method, rows in sorted(table.groupby("method"), key=lambda kv: kv[1]["out_within"].mean()):
        lines.append(f"| {method} | {len(rows)} | {rows['out_within'].mean():.0%} | {rows['out_ratio'].median():.2f} | "
                     f"{(rows['out_ratio'] < 0.5).mean():.0%} | {(rows['out_ratio'] > 2).mean():.0%} | "
                     f"{rows['left_out'].sum():,.0f} | {rows['measured'].sum():,.0f} |")
    lines += ["", "Per results folder, out of sample:", "",
              "| folder | tasks | within 2x | median pred/meas | predicted s | measured s |",
              "|---|---:|---:|---:|---:|---:|"]
    for folder, rows in table.groupby("folder"):
        lines.append(f"| {folder} | {len(rows)} | {rows['out_within'].mean():.0%} | {rows['out_ratio'].median():.2f} | "
                     f"{rows['left_out'].sum():,.0f} | {rows['measured'].sum():,.0f} |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the report
def measurement_tables(sel: pd.DataFrame, cls: pd.DataFrame) -> str:
    lines = ["## Measurements", "", "Selector fits (CPU s; `-` stopped at 60 CPU s or skipped as larger than a "
             "stopped size):", ""]
    sizes = [f"{n}x{d}" for n, d in SELECTOR_SIZES]
    lines += ["| selector | " + " | ".join(sizes) + " |", "|---|" + "---:|" * len(sizes)]
    for name, rows in sel.groupby("selector"):
        cells = {f"{r.n}x{r.d}": (f"{r.cpu_s:.3g}" if r.status == "ok" else "-") for r in rows.itertuples()}
        lines.append(f"| {name} | " + " | ".join(cells.get(s, "") for s in sizes) + " |")
    lines += ["", "Evaluation of one ranking at one k (CPU s; `fits` = inner folds x grid + refit; `-` stopped at "
              "60 CPU s or skipped as larger than a stopped size):", "",
              "| route | data | fits | " + " | ".join(f"n={n} k={k}" for n, k in CLASSIFIER_SIZES) + " |",
              "|---|---|---:|" + "---:|" * len(CLASSIFIER_SIZES)]
    for (route, data, fits), rows in cls.groupby(["route", "data", "fits"], sort=False):
        cells = {(r.n, r.k): (f"{r.cpu_s:.3g}" if np.isfinite(r.cpu_s) else "-") for r in rows.itertuples()}
        lines.append(f"| {route} | {data} | {fits} | " + " | ".join(cells.get(s, "") for s in CLASSIFIER_SIZES)
                     + " |")
    return "\n".join(lines)


def coefficient_tables(selectors: dict, classifiers: dict) -> str:
    lines = ["## Coefficients (fsbench/engine/cost_model.json)", "",
             "Selector fit: log t = a + alpha log n + beta log d (natural logs, CPU s); `rms` is the root mean "
             "square residual on the log scale (0.69 = a factor of 2).", "",
             "| selector | a | alpha | beta | points | rms | t(100 x 5000) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, c in sorted(selectors.items()):
        t = math.exp(c["a"] + c["alpha"] * math.log(100) + c["beta"] * math.log(5000))
        lines.append(f"| {name} | {c['a']:.2f} | {c['alpha']:.2f} | {c['beta']:.2f} | {c['points']} | "
                     f"{c['rms_log']:.2f} | {t:.3g} s |")
    lines += ["", "Classifier fit (one fit and prediction): log t = b + gamma log n + delta log k.", "",
              "| route | b | gamma | delta | points | rms | t(n=100, k=50) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for route, c in classifiers.items():
        t = math.exp(c["b"] + c["gamma"] * math.log(100) + c["delta"] * math.log(50))
        lines.append(f"| {route} | {c['b']:.2f} | {c['gamma']:.2f} | {c['delta']:.2f} | {c['points']} | "
                     f"{c['rms_log']:.2f} | {t:.3g} s |")
    return "\n".join(lines)


def replace_section(text: str, name: str, content: str) -> str:
    """``text`` with its generated section ``name`` (between ``<!-- name: begin -->`` and ``<!-- name: end -->``)
    replaced by ``content``, or ``content`` appended as that section; text outside the sections (the
    reading of the check, written by hand) is kept."""
    begin, end = f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
    section = f"{begin}\n{content.strip()}\n{end}"
    if begin in text:
        return re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: section, text, flags=re.S)
    return text.rstrip() + "\n\n" + section + "\n"


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, NumPy {np.__version__}; load average {load:.2f} when measured")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="measure at small sizes, fit, write the model")
    parser.add_argument("--refit", action="store_true", help="refit the selector models on benchmarks/scale.csv")
    parser.add_argument("--variants", action="store_true",
                        help="measure the parameter variants and the class exponents, add them to the model")
    parser.add_argument("--limits", action="store_true",
                        help="copy the measured fit times along n from the scale table into the model")
    parser.add_argument("--scale", type=Path, default=SCALE_CSV, help="with --limits: the scale table to read")
    parser.add_argument("--label", default="after",
                        help="with --limits: the scale table's label measured with the code being shipped")
    parser.add_argument("--check", action="store_true", help="compare with the committed runs' task times")
    parser.add_argument("--calibrate", action="store_true",
                        help="fit the real-data factors on the committed runs, then check (out of sample: "
                             "each dataset predicted with factors fitted on the others)")
    parser.add_argument("--selectors", help="comma-separated selectors to measure (default: all registered)")
    parser.add_argument("--measure", choices=("all", "classifiers", "selectors"), default="all",
                        help="with --quick and --save: measure only these (the others are read from --save's folder)")
    parser.add_argument("--save", type=Path, help="with --quick: also write the raw measurements to this folder")
    parser.add_argument("--fit-from", type=Path, help="with --quick: fit on the raw measurements --save wrote "
                                                      "there instead of measuring")
    args = parser.parse_args(argv)
    if not (args.quick or args.refit or args.variants or args.limits or args.check or args.calibrate):
        parser.error("give --quick, --refit, --variants, --limits, --calibrate or --check")
    if args.quick:
        names = args.selectors.split(",") if args.selectors else list(registry())
        started = machine()
        if args.fit_from:
            cls = pd.read_csv(args.fit_from / "classifiers.csv")
            sel = pd.read_csv(args.fit_from / "selectors.csv")
            started = (args.fit_from / "machine.txt").read_text(encoding="utf-8").strip()
        else:
            if args.measure != "all" and not args.save:
                parser.error("--measure needs --save (the folder holding the other measurements)")
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                (args.save / "machine.txt").write_text(started + "\n", encoding="utf-8")
            if args.measure in ("all", "classifiers"):
                cls = pd.DataFrame(measure_classifiers())
                if args.save:
                    cls.to_csv(args.save / "classifiers.csv", index=False)
            else:
                cls = pd.read_csv(args.save / "classifiers.csv")
            if args.measure in ("all", "selectors"):
                sel = pd.DataFrame(measure_selectors(names))
                if args.save:
                    sel.to_csv(args.save / "selectors.csv", index=False)
            else:
                sel = pd.read_csv(args.save / "selectors.csv")
        selectors, classifiers = fit_selector_model(sel), fit_classifier_model(cls)
        write_model(selectors, classifiers, f"benchmarks/fit_cost_model.py --quick, {time.strftime('%Y-%m-%d')}")
        text = REPORT.read_text(encoding="utf-8") if REPORT.is_file() else ""
        text = replace_section(text, "model", report_head(started, "--quick") + "\n\n"
                               + coefficient_tables(selectors, classifiers))
        if "<!-- check: begin -->" not in text:  # the check comes before the measurements
            text = replace_section(text, "check", "## Accuracy on the committed runs\n\nNot computed yet: "
                                   "`benchmarks/fit_cost_model.py --check`.")
        REPORT.write_text(replace_section(text, "measurements", measurement_tables(sel, cls)), encoding="utf-8")
    if args.refit:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_scale import load_scale_table

        scale = load_scale_table(SCALE_CSV)
        scale = scale[(scale["what"] == "selector") & (scale["status"] == "ok")]
        selectors = fit_selector_model(scale.assign(selector=scale["method"].where(scale["method"] != "",
                                                                                   scale["name"])))
        doc = json.loads(COST_MODEL_FILE.read_text(encoding="utf-8"))
        classifiers = doc["classifier_fit"]
        merged = {**doc["selector_fit"], **selectors}
        source = f"selectors: benchmarks/scale.csv, {time.strftime('%Y-%m-%d')}; classifiers: {doc['source']}"
        write_model(merged, classifiers, source)
        text = REPORT.read_text(encoding="utf-8") if REPORT.is_file() else ""
        REPORT.write_text(replace_section(text, "model", report_head(machine(), f"--refit: {source}") + "\n\n"
                                          + coefficient_tables(merged, classifiers)), encoding="utf-8")
    if args.variants:
        variants_step(args.save, args.fit_from)
    if args.limits:
        limits_step(args.scale, args.label)
    if args.calibrate or args.check:
        table = calibrate_step() if args.calibrate else check_rows()
        if not args.calibrate:  # the out-of-sample figure needs the parts without the factors
            uncalibrated = check_rows(calibrated=False)
            table["left_out"] = left_out_predictions(uncalibrated).to_numpy()
        table["ratio"] = table["predicted"] / table["measured"]
        table["within"] = (table["ratio"] >= 0.5) & (table["ratio"] <= 2.0)
        text = REPORT.read_text(encoding="utf-8") if REPORT.is_file() else ""
        REPORT.write_text(replace_section(text, "check", check_section(table)), encoding="utf-8")
        left_out = table["left_out"] / table["measured"]
        print(f"within 2x: {((left_out >= 0.5) & (left_out <= 2)).mean():.1%} of {len(table)} tasks out of sample "
              f"(each dataset left out), {table['within'].mean():.1%} with the shipped factors")
    return 0


def measured_fits(scale: pd.DataFrame, label: str) -> dict[str, dict[str, Any]]:
    """Per selector, its fits along n at d = 1,000 in the scale table's rows of ``label`` (the code
    fsbench ships): ``{"label", "commit", "d", "points": [[n, CPU s or None, status, predicted s or None,
    cap s], ...]}``."""
    rows = scale[(scale["what"] == "selector") & (scale["axis"] == "n") & (scale["d"] == 1000)
                 & (scale["label"] == label)]
    out: dict[str, dict[str, Any]] = {}
    for name, group in rows.groupby("name"):
        points = []
        for r in group.sort_values("n").itertuples():
            points.append([int(r.n), float(r.cpu_s) if r.status == "ok" else None, str(r.status),
                           float(r.predicted_s) if np.isfinite(r.predicted_s) else None,
                           float(r.cap_s) if np.isfinite(r.cap_s) else None])
        out[str(name)] = {"label": str(group["label"].iloc[0]), "commit": str(group["commit"].iloc[0]),
                          "d": 1000, "points": points}
    return out


def limits_step(scale_csv: Path, label: str) -> None:
    """``--limits``: the measured fits of :func:`measured_fits` into the model's ``measured_fit``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_scale import load_scale_table

    doc = json.loads(COST_MODEL_FILE.read_text(encoding="utf-8"))
    fits = measured_fits(load_scale_table(scale_csv), label)
    if not fits:
        raise SystemExit(f"{scale_csv} has no selector rows along n labelled {label!r}; give --label.")
    doc["measured_fit"] = dict(sorted(fits.items()))
    COST_MODEL_FILE.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def variants_step(save: Path | None, fit_from: Path | None) -> None:
    """``--variants``: measure (or read from ``fit_from``) the variants and class counts, merge them into
    the model and write their section of the report."""
    if fit_from is not None:
        sel, cls = pd.read_csv(fit_from / "variants.csv"), pd.read_csv(fit_from / "classes.csv")
        started = (fit_from / "machine_variants.txt").read_text(encoding="utf-8").strip()
    else:
        started = machine()
        cls = pd.DataFrame([row for c in CLASS_COUNTS for row in measure_classifiers(CLASS_SIZES, c)])
        if save:
            save.mkdir(parents=True, exist_ok=True)
            (save / "machine_variants.txt").write_text(started + "\n", encoding="utf-8")
            cls.to_csv(save / "classes.csv", index=False)
        sel = pd.DataFrame(measure_selectors([], VARIANTS))
        if save:
            sel.to_csv(save / "variants.csv", index=False)
    variants, exponents = fit_selector_model(sel), fit_class_exponents(cls)
    doc = json.loads(COST_MODEL_FILE.read_text(encoding="utf-8"))
    for route, eta in exponents.items():
        doc["classifier_fit"][route]["eta"] = eta
    doc["selector_fit"] = dict(sorted({**doc["selector_fit"], **variants}.items()))
    doc["calibration_classes"] = N_CLASSES
    doc["source"] = f"{doc['source']}; variants and class exponents: --variants, {time.strftime('%Y-%m-%d')}"
    COST_MODEL_FILE.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    lines = ["## Parameter variants and classes", "",
             f"`--variants`, measured on {started}. Selector entries measured with parameters of their own "
             "(log t = a + alpha log n + beta log d, at the sizes of the calibration; `-` a size stopped at 60 CPU s "
             "or skipped):", "",
             "| entry | a | alpha | beta | points | rms |", "|---|---:|---:|---:|---:|---:|"]
    for entry, c in sorted(variants.items()):
        lines.append(f"| `{entry}` | {c['a']:.2f} | {c['alpha']:.2f} | {c['beta']:.2f} | {c['points']} | "
                     f"{c['rms_log']:.2f} |")
    sizes = ", ".join(f"({n}, {k})" for n, k in CLASS_SIZES)
    lines += ["", f"Class exponent per route, t_c = t_{N_CLASSES} (c / {N_CLASSES})^eta, from each route at (n, k) in "
              f"{sizes} with {', '.join(map(str, CLASS_COUNTS))} classes on both data difficulties:", "",
              "| route | eta | measurements (CPU s at 2 / 4 / 10 classes) |", "|---|---:|---|"]
    for route, rows in cls.groupby("route", sort=False):
        cells = []
        for _, group in rows.groupby(["data", "fits", "n", "k"], sort=False):
            by_c = dict(zip(group["classes"], group["cpu_s"], strict=True))
            cells.append("/".join(f"{by_c.get(c, math.nan):.3g}" for c in CLASS_COUNTS))
        lines.append(f"| {route} | {exponents.get(str(route), math.nan):.2f} | {'; '.join(cells)} |")
    text = REPORT.read_text(encoding="utf-8") if REPORT.is_file() else ""
    REPORT.write_text(replace_section(text, "variants", "\n".join(lines)), encoding="utf-8")


def report_head(machine_text: str, how: str) -> str:
    return f"""# The cost model of `fsbench run --dry-run`

`fsbench run --dry-run CONFIG` prints, before anything runs, the number of tasks and their predicted compute
and wall time per dataset and selector (`fsbench/engine/cost_model.py` states the formula). This file is
written by `benchmarks/fit_cost_model.py` ({how}); measured on {machine_text}; one BLAS thread, CPU time of
the measuring process.

A task's predicted time is the selector's fit (log t = a_s + alpha_s log n + beta_s log d) plus the
evaluation: for each classifier and k, inner folds x grid points fits on the inner training rows and one
refit on the training part, each log t = b_r + gamma_r log n + delta_r log k for the classifier's route.

What the model does not know:

- **parameters**: a selector is measured at its defaults, except the entries of `--variants` (RFS with the
  papers' stopping rule at each gamma of their grid, DSO-FS at each p of its paper); other parameters are
  ignored (mRMR's n_ranked, ReliefF's n_neighbors, the SVMs' C change the cost severalfold), and the table of
  the dry run says "at its defaults' cost" for such a selector;
- **k_max and the selectors' classes**: selectors are measured with n_features_to_select = min(100, d) and 4
  classes; the greedy information-theoretic selectors scale with n_ranked and the one-vs-rest models with the
  classes (the classifier routes do scale with the classes: the exponent `eta` of `--variants`);
- **data**: the time of iterative solvers (SVMs at large C, DSO-FS, SL2P, the l2,1 models) depends on how
  separable the data is, which synthetic data only approximates;
- **users' selectors and classifiers**: estimated as `fisher` and `logistic` and marked "unknown".

Calibration: every registered selector at {', '.join(f'{n}x{d}' for n, d in SELECTOR_SIZES)} (n x d), and
every classifier route at (n, k) in {{30, 100, 300, 900}} x {{5, 20, 50, 100}}, once on separable classes and
once on overlapping classes with 10 % noisy labels (where the SVMs at large C take far longer), the SVMs
with the C grid 1e-4 .. 100 tuned on 3 inner folds and with C = 1 alone; synthetic data as
`benchmarks/fit_cost_model.py` describes. A measurement stops at 60 CPU seconds (ITIMER_PROF), and larger
sizes of that selector or route are skipped; a stopped one is left out of the fit, so the slowest selectors'
exponents come from their smaller sizes. This machine's process clock ticks in 4 ms steps: fast calls are
timed in batches of at least 0.3 CPU s. `--refit` refits the selectors on the scale benchmark's table
(benchmarks/scale.csv) once it exists."""


if __name__ == "__main__":
    sys.exit(main())
