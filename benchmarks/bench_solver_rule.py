"""The linear SVM's solver chosen by size (``backend: auto``): where LIBSVM stops being cheap, and what auto costs.

One task is what ``fsbench run`` computes for one (dataset, split, selector): the Fisher score
fitted on the training part, then for every k = 10, 20, ..., 100 the linear SVM's C tuned on
7 values (1e-4, ..., 1e2) by 3-fold inner CV on the training part, refitted and scored on the
test part (``fsbench.engine.runner.compute_task``, the engine's own code path, in a fresh child
process with one BLAS thread). Data: scikit-learn's ``make_classification`` with 2,000 features
(20 informative, 20 redundant, 3 classes, ``random_state`` = the problem's seed), split 70/30
(stratified hold-out, first repetition), z-scored on the training part.

Three measurements, each task run in its own process, stopped after 300 s of CPU time:

1. **scaling**: the task's CPU time with ``backend: libsvm`` and ``backend: liblinear`` at
   n = 200 ... 800 samples (140 ... 560 training samples), three problems (seeds 0, 1, 2); the
   threshold ``LIBSVM_MAX_TRAIN`` of fsbench.configuration.experiment is read off this table;
2. **the bar**: one task of the default classifier (``auto``) at n = 8,000, d = 2,000 must take
   under 60 s of one core;
3. **accuracy**: at n = 500 and 2,000, the auto rows' test accuracies against the rows of the same
   task with LIBSVM pinned (where LIBSVM finishes within 300 CPU s): mean and largest absolute
   difference over the 10 k. The two solvers minimise different losses (hinge vs squared hinge)
   with different multi-class schemes (one-vs-one vs one-vs-rest), so they are not expected to
   agree; the difference is reported, not judged against a tolerance.

CPU time is the child's ``time.process_time()`` around the task; wall time is printed beside it
because the machine may be shared (its load average is printed before and after).

Usage:

    python benchmarks/bench_solver_rule.py [--quick] [--out benchmarks/solver_rule.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

LIMIT = 300  # CPU seconds per task before the child is stopped (RLIMIT_CPU)
WALL_LIMIT = 3600.0  # wall seconds, a safety net on a loaded machine
N_FEATURES = 2000
PROBLEM = {"n_informative": 20, "n_redundant": 20, "n_classes": 3}
SCALING_N = (200, 300, 350, 400, 450, 500, 600, 800)
SEEDS = (0, 1, 2)
BAR_N = 8000
COMPARE_N = (500, 2000)
CONFIG = """\
name: solver-rule
seed: 0
datasets: [synthetic]
protocol: {{kind: holdout, train_size: 0.7, n_trials: 1}}
inner_cv: {{n_splits: 3}}
selectors: [fisher]
classifier:
  name: linear_svm
{backend}  C: [1e-4, 1e-3, 1e-2, 1e-1, 1, 1e1, 1e2]
n_features: {{start: 10, stop: 100, step: 10}}
"""


def one_task(n: int, seed: int, backend: str) -> dict[str, Any]:
    """Run one task in this process (one BLAS thread) and return its timing and rows' accuracies."""
    import numpy as np
    from sklearn.datasets import make_classification
    from threadpoolctl import threadpool_limits

    from fsbench.configuration.parse import parse_experiment
    from fsbench.engine.runner import compute_task, plan

    X, y = make_classification(n_samples=n, n_features=N_FEATURES, random_state=seed, **PROBLEM)
    text = CONFIG.format(backend="" if backend == "auto" else f"  backend: {backend}\n")
    experiment = parse_experiment(text, dataset_resolver=lambda name: SimpleNamespace(name=name,
                                                                                        n_features=N_FEATURES))
    (task,) = plan(experiment, {"synthetic": SimpleNamespace(X=X, y=y)})
    with threadpool_limits(limits=1):
        cpu, wall = time.process_time(), time.perf_counter()
        outcome = compute_task(experiment, task, np.asarray(X), np.asarray(y), cache=None, threads=1)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if outcome.failure is not None:
        raise RuntimeError(outcome.failure["error"])
    rows = outcome.rows or []
    resolved = json.loads(rows[0]["classifier_params"])["backend"] if "classifier_params" in rows[0] else backend
    return {"n": n, "seed": seed, "backend": backend, "resolved": resolved, "n_train": int(task.split.train.size),
            "cpu": cpu, "wall": wall, "accuracy": {int(r["k"]): float(r["accuracy"]) for r in rows},
            "C": {int(r["k"]): float(r["C"]) for r in rows}}


def _cpu_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (LIMIT, LIMIT + 5))


def in_child(n: int, seed: int, backend: str) -> dict[str, Any] | None:
    """:func:`one_task` in a fresh process, stopped after :data:`LIMIT` CPU seconds (None then): CPU
    time, not wall time, so that other jobs on a shared machine do not decide what finishes."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    try:
        done = subprocess.run([sys.executable, __file__, "--one", json.dumps([n, seed, backend])], env=env,
                              capture_output=True, text=True, timeout=WALL_LIMIT, preexec_fn=_cpu_limit)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return None
    if done.returncode != 0:
        raise RuntimeError(f"n = {n}, seed {seed}, {backend}: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    return " / ".join(f"{v:.2f}" for v in os.getloadavg())


def fmt(found: dict[str, Any] | None) -> str:
    return f"> {LIMIT} (stopped)" if found is None else f"{found['cpu']:.2f} ({found['wall']:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, one problem")
    parser.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        n, seed, backend = json.loads(args.one)
        print(json.dumps(one_task(n, seed, backend)))
        return

    import numpy as np
    import sklearn

    from fsbench.configuration.experiment import LIBSVM_MAX_TRAIN

    sizes, seeds = ((200, 400, 500), (0,)) if args.quick else (SCALING_N, SEEDS)
    compare = (500,) if args.quick else COMPARE_N
    lines = ["# The linear SVM's solver chosen by size (`backend: auto`)", "",
             "Written by `python benchmarks/bench_solver_rule.py --out benchmarks/solver_rule.md`; the script's "
             "docstring states the protocol. One task = Fisher score + 10 k x 7 C x 3 inner folds + refits (the "
             "engine's `compute_task`), one BLAS thread, each task in a fresh process stopped after 300 s of CPU "
             "time.", "",
             f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}, numpy {np.__version__}, scikit-learn {sklearn.__version__}. "
             f"Load average (1/5/15 min) at the start: {load()}.", ""]
    print("\n".join(lines), flush=True)

    # 1. scaling
    table = ["## 1. Task CPU time by training size: LIBSVM vs LIBLINEAR", "",
             "CPU seconds of one task (wall seconds in brackets), `make_classification` problems with seeds "
             f"{', '.join(map(str, seeds))}.", "",
             "| n | n_train | seed | libsvm CPU s (wall) | liblinear CPU s (wall) | libsvm / liblinear |",
             "|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(table), flush=True)
    scaling: dict[tuple[int, int], dict[str, Any]] = {}
    for n in sizes:
        for seed in seeds:
            svm, linear = in_child(n, seed, "libsvm"), in_child(n, seed, "liblinear")
            scaling[n, seed] = {"libsvm": svm, "liblinear": linear}
            ratio = "-" if svm is None or linear is None else f"{svm['cpu'] / linear['cpu']:.1f}x"
            n_train = (svm or linear)["n_train"]
            table.append(f"| {n} | {n_train} | {seed} | {fmt(svm)} | {fmt(linear)} | {ratio} |")
            print(table[-1], flush=True)
    table += ["", f"Rule in force: LIBSVM when the training part has at most {LIBSVM_MAX_TRAIN} samples "
              "(`fsbench.configuration.experiment.LIBSVM_MAX_TRAIN`), LIBLINEAR above.", ""]
    lines += table

    # 2. the bar
    bar = in_child(BAR_N, 0, "auto")
    text = ["## 2. The bar: one auto task at n = 8,000, d = 2,000", "",
            "| n | n_train | resolved backend | CPU s | wall s | under 60 s of one core |",
            "|---:|---:|---|---:|---:|---|"]
    text.append(f"| {BAR_N} | {bar['n_train']} | {bar['resolved']} | {bar['cpu']:.2f} | {bar['wall']:.1f} | "
                f"{'yes' if bar['cpu'] < 60 else 'no'} |" if bar else f"| {BAR_N} | - | - | > 300 | - | no |")
    text.append("")
    print("\n".join(text), flush=True)
    lines += text

    # 3. accuracy: auto against LIBSVM pinned
    text = ["## 3. Test accuracy: auto rows against LIBSVM-pinned rows of the same task", "",
            "Absolute difference of the test accuracy over k = 10, 20, ..., 100 (accuracy as a fraction); the "
            "two are different losses and multi-class schemes, so this is a measured difference, not a tolerance.",
            "", "| n | n_train | seed | auto resolves to | auto CPU s | libsvm CPU s | mean abs diff | max abs diff | "
            "mean acc auto | mean acc libsvm |", "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(text), flush=True)
    for n in compare:
        for seed in seeds:
            auto = in_child(n, seed, "auto")
            svm = scaling.get((n, seed), {}).get("libsvm") if (n, seed) in scaling else in_child(n, seed, "libsvm")
            if svm is None:
                text.append(f"| {n} | {auto['n_train']} | {seed} | {auto['resolved']} | {auto['cpu']:.2f} | "
                            f"> {LIMIT} (stopped) | - | - | {np.mean(list(auto['accuracy'].values())):.4f} | - |")
            else:
                a = np.array([auto["accuracy"][k] for k in sorted(auto["accuracy"])])
                b = np.array([svm["accuracy"][k] for k in sorted(svm["accuracy"])])
                text.append(f"| {n} | {auto['n_train']} | {seed} | {auto['resolved']} | {auto['cpu']:.2f} | "
                            f"{svm['cpu']:.2f} | {np.mean(np.abs(a - b)):.4f} | {np.max(np.abs(a - b)):.4f} | "
                            f"{a.mean():.4f} | {b.mean():.4f} |")
            print(text[-1], flush=True)
    text += ["", f"Load average (1/5/15 min) at the end: {load()}.", ""]
    print(text[-2], flush=True)
    lines += text
    if args.out:
        args.out.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
