"""fsbench's evaluation of one ranking with the built-in crammer_singer against the plain scikit-learn loop.

The SL2P paper config (configs/papers/sl2p.yaml) evaluates every ranking with
``LinearSVC(multi_class="crammer_singer", max_iter=20000)``, C tuned on 21 values by 3-fold inner CV
on the training half, k = 10, 20, ..., 80. For one ranking per dataset (Fisher score, fitted on the
training part), both sides compute, on the same inner folds, with the same seed and tuning rules:

- for every inner fold, k and C, the classifier trained on the fold's training rows' top-k columns
  and scored on its validation rows; the pooled accuracy per (k, C);
- the best C per k (highest pooled accuracy, ties to the smallest C), refitted on the whole
  training part and scored on the test part.

fsbench: ``fsbench.evaluation.protocol.evaluate_classifiers`` with the crammer_singer spec of the config, whose
route is ``fsbench.evaluation.linear_liblinear`` (the counts cache emptied before each run). scikit-learn: the
loop below, ``LinearSVC(...).fit(...).predict(...)`` (ConvergenceWarning silenced once around the
loop). A row is one k; it is identical when the test accuracy, the chosen C and the inner accuracy
are equal (as floats). Both run alternately, five times each (the best time of each is kept).

Datasets: GLIOMA, SRBCT, MLL and BRAIN-TUMOR-2, each split as the SL2P config splits it (50/50
stratified hold-out, first repetition, z-scored as a whole); read from $FSBENCH_DATA. One BLAS
thread. The machine may be shared: the load average is printed, and only ratios measured in the
same run are reported. The column "in LIBLINEAR" is the time fsbench's route spends inside
``train_wrap`` (LIBLINEAR's training): the solver's own work, which any computation of
``LinearSVC``'s solutions must also do; *ceiling* is scikit-learn's time over it.

Usage:

    FSBENCH_DATA=/path/to/datasets python benchmarks/bench_liblinear_route.py [--quick] [--datasets A,B]

The last line printed is ``speedup <min ratio>x, identical <a>/<b>``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from fsbench.configuration.experiment import ProtocolConfig
from fsbench.configuration.parse import load_experiment
from fsbench.datasets import load
from fsbench.evaluation import linear_liblinear, linear_libsvm
from fsbench.evaluation.classifiers import classifier_spec
from fsbench.evaluation.protocol import derive_seed, evaluate_classifiers, inner_folds, outer_splits, standardize
from fsbench.selectors import make_selector

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_protocol import alternating, identical_rows  # noqa: E402  (the same timing and row test)

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "papers" / "sl2p.yaml"
DATASETS = ("glioma", "srbct", "mll", "brain-tumor-2")
QUICK = ("glioma",)


def sl2p_grid() -> tuple[tuple[float, ...], tuple[int, ...], int, int]:
    """The config's C grid, k grid, inner folds and seed."""
    cfg = load_experiment(CONFIG)
    return tuple(cfg.classifier.C), tuple(cfg.n_features), cfg.inner_cv.n_splits, cfg.seed


CS, KS, N_INNER, SEED = sl2p_grid()


def problem(name: str, data_dir: str | None):
    """The first SL2P split of a dataset, z-scored as a whole; its Fisher ranking, inner folds and seed."""
    ds = load(name, data_dir)
    split = outer_splits(ds.y, ProtocolConfig(kind="holdout", train_size=0.5, n_trials=1), SEED, name)[0]
    X_train, X_test = standardize(ds.X, split.train, split.test, "global")
    y_train, y_test = ds.y[split.train], ds.y[split.test]
    ranking = make_selector("fisher").fit(X_train, y_train).ranking_
    seed = derive_seed(SEED, "evaluate", name, split.repeat, split.fold)  # as fsbench.engine.tasks derives it
    folds = inner_folds(y_train, N_INNER, derive_seed(seed, "inner-C"))  # as fsbench.evaluation.protocol derives them
    return X_train, y_train, X_test, y_test, ranking, folds, seed


def plain_scikit_learn(X_train, y_train, X_test, y_test, ranking, folds, seed):
    """Rows (k, C, inner_accuracy, accuracy) of the straightforward computation."""

    def build(C: float) -> LinearSVC:
        return LinearSVC(C=C, multi_class="crammer_singer", max_iter=20000, random_state=seed)

    correct = np.zeros((len(KS), len(CS)))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for fit, val in folds:
            for i, k in enumerate(KS):
                cols = ranking[:k]
                X_fit, X_val = X_train[np.ix_(fit, cols)], X_train[np.ix_(val, cols)]
                for j, C in enumerate(CS):
                    correct[i, j] += np.sum(build(C).fit(X_fit, y_train[fit]).predict(X_val) == y_train[val])
        inner = correct / sum(val.size for _, val in folds)
        for i, k in enumerate(KS):
            best = max(range(len(CS)), key=lambda j: (inner[i, j], -CS[j]))  # ties go to the smallest C
            cols = ranking[:k]
            predicted = build(CS[best]).fit(X_train[:, cols], y_train).predict(X_test[:, cols])
            rows.append({"k": k, "C": CS[best], "inner_accuracy": float(inner[i].max()),
                         "accuracy": float(np.sum(predicted == y_test)) / y_test.size})
    return rows


class SolverClock:
    """Seconds spent inside LIBLINEAR's ``train_wrap`` during fsbench's run."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, fn):
        def timed_call(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0
        return timed_call


def fsbench_rows(X_train, y_train, X_test, y_test, ranking, folds, seed, clock: SolverClock):
    linear_libsvm.clear_cache()  # the route's counts live in this cache
    spec = classifier_spec("crammer_singer", grid={"C": CS})
    train_wrap = linear_liblinear.liblinear.train_wrap
    linear_liblinear.liblinear.train_wrap = clock.wrap(train_wrap)
    try:
        return evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, list(KS), [spec], len(folds), seed)
    finally:
        linear_liblinear.liblinear.train_wrap = train_wrap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"one dataset ({', '.join(QUICK)})")
    parser.add_argument("--datasets", help=f"comma-separated subset of {', '.join(DATASETS)}")
    args = parser.parse_args()
    names = QUICK if args.quick else tuple(args.datasets.split(",")) if args.datasets else DATASETS
    data_dir = os.environ.get("FSBENCH_DATA")
    print(f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"scikit-learn {sklearn.__version__}; one BLAS thread; {os.cpu_count()} cores, shared with other "
          f"jobs: load average {os.getloadavg()[0]:.2f} at the start; {len(CS)} C x {len(KS)} k x "
          f"{N_INNER} inner folds", flush=True)
    print("| dataset | n_train x d / classes | fsbench s | scikit-learn s | ratio | identical rows | "
          "fsbench s in LIBLINEAR | ceiling |")
    print("|---|---|---:|---:|---:|---:|---:|---:|", flush=True)
    ratios, identical, total, differing = [], 0, 0, []
    with threadpool_limits(1):
        for name in names:
            data = problem(name, data_dir)
            clocks: list[SolverClock] = []

            def ours(data=data, clocks=clocks):
                clocks.append(SolverClock())
                return fsbench_rows(*data, clocks[-1])

            def theirs(data=data):
                return plain_scikit_learn(*data)

            (ours_rows, t_ours), (theirs_rows, t_theirs) = alternating(ours, theirs, rounds=5)
            inside = min(c.seconds for c in clocks)
            same = identical_rows(name, ours_rows, theirs_rows, differing)
            ratio = t_theirs / t_ours
            ratios.append(ratio)
            identical += same
            total += len(ours_rows)
            X_train, y_train = data[0], data[1]
            print(f"| {name} | {y_train.size}x{X_train.shape[1]}/{np.unique(y_train).size} | {t_ours:.3f} | "
                  f"{t_theirs:.3f} | {ratio:.2f}x | {same}/{len(ours_rows)} | {inside:.3f} "
                  f"({100 * inside / t_ours:.0f}%) | {t_theirs / inside:.2f}x |", flush=True)
    print(f"Load average {os.getloadavg()[0]:.2f} at the end.")
    for d in differing:
        print(f"- differs: {d}")
    print(f"speedup {min(ratios):.2f}x, identical {identical}/{total}")


if __name__ == "__main__":
    main()
