"""Fit times and convergence of the SVM-based selectors: sl2p, sl21, l21svm, cssvm, l1svm.

Usage:  FSBENCH_DATA=/path/to/datasets python benchmarks/bench_svm_selectors.py [--quick]

Everything runs on one core (threadpoolctl, BLAS limited to 1 thread). Training splits:
GLIOMA, MLL, Brain_Tumor_2 50% stratified (the SL2P protocol); ISOLET 4678 of 7797 and
SEMEION 956 of 1593 stratified (the DSO-FS 6:4 protocol); features z-scored on the training
part. Prints markdown: the fit-time table, the SL2P bar (< 2 s on GLIOMA and MLL), a
comparison of inner SVM solvers, and how often the SL2P objective rises between iterations.
The machine may be shared: the load average is printed, and ratios within one run are more
meaningful than absolute times.

No extra packages (peers) are needed: scikit-learn's LinearSVC (LIBLINEAR) is the only
external solver compared.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io as sio
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from fsbench.selectors import make_selector


def data_dir() -> Path:
    if "FSBENCH_DATA" not in os.environ:
        raise SystemExit("Set FSBENCH_DATA to the datasets directory.")
    return Path(os.environ["FSBENCH_DATA"])


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    root = data_dir()
    if name == "MLL":
        df = pd.read_csv(root / "MLL.csv")
        y = df.pop("class").to_numpy()
        return df.to_numpy(float), y
    if name == "ISOLET":
        parts = [sio.loadmat(root / "isolet_full" / f"Isolet{i}.mat") for i in range(1, 6)]
        return (
            np.vstack([p["fea"].astype(float) for p in parts]),
            np.concatenate([p["gnd"].ravel() for p in parts]),
        )
    if name == "SEMEION":
        a = np.loadtxt(root / "semeion.data")
        return a[:, :256], a[:, 256:].argmax(axis=1)
    m = sio.loadmat(root / f"{name}.mat")
    return m["X"].astype(float), m["Y"].ravel()


TRAIN_SIZE = {"GLIOMA": 0.5, "MLL": 0.5, "Brain_Tumor_2": 0.5, "ISOLET": 4678, "SEMEION": 956}


def training_split(name: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = load(name)
    Xtr, _, ytr, _ = train_test_split(
        X, y, train_size=TRAIN_SIZE[name], stratify=y, random_state=seed
    )
    return StandardScaler().fit_transform(Xtr), ytr


def timed_fit(name: str, params: dict, X: np.ndarray, y: np.ndarray):
    est = make_selector(name, params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        est.fit(X, y)
        seconds = time.perf_counter() - t0
    return est, seconds, sorted({w.category.__name__ for w in caught})


def rises(obj: np.ndarray) -> tuple[int, float]:
    r = (obj[1:] - obj[:-1]) / np.abs(obj[1:])
    return int(np.sum(r > 0)), float(max(r.max(initial=0.0), 0.0))


METHODS = [
    ("sl2p", {"p": 2.0, "C": 1.0}),
    ("sl2p", {"p": 3.0, "C": 1.0}),
    ("sl21", {"C": 1.0}),
    ("l21svm", {"C": 1.0}),
    ("cssvm", {"C": 1.0}),
    ("l1svm", {"C": 1.0, "n_features_to_select": 100}),
]


def fit_time_table(datasets: list[str], capped: dict[str, int]) -> None:
    print("## Fit times (one core, C = 1)\n")
    print("| dataset | n x d | method | seconds | iterations | converged | inner solver | notes |")
    print("|---|---|---|---|---|---|---|---|")
    for ds in datasets:
        X, y = training_split(ds)
        for name, params in METHODS:
            params = dict(params)
            cap = capped.get(ds)
            if cap and name in ("sl2p", "sl21", "l21svm"):
                params["max_iter"] = cap
            load = os.getloadavg()[0]
            est, sec, warned = timed_fit(name, params, X, y)
            notes_load = f"load {load:.1f}"
            diag = getattr(est, "diagnostics_", {})
            label = name + ("" if "p" not in params else f" p={params['p']:g}")
            solver = diag.get(
                "inner_solver", diag.get("solver", "newton-lars" if name == "l1svm" else "")
            )
            notes = []
            if cap and name in ("sl2p", "sl21", "l21svm"):
                notes.append(f"capped at max_iter={cap}")
            if "n_support" in diag:
                notes.append(f"theta>1e-12: {diag['n_support']}")
            if name == "l1svm":
                notes.append(
                    f"non-zero {diag['n_nonzero']}, +{diag['n_entered_on_path']} on "
                    f"{diag['path_points']} path points; gap {diag['duality_gap']:.1e}"
                )
            if "max_inner_gap" in diag:
                gap = diag["max_inner_gap"]
                notes.append(f"max inner gap {gap:.1e}" if np.isfinite(gap) else "gap uncertified")
            if warned:
                notes.append("warned: " + ", ".join(warned))
            notes.append(notes_load)
            print(
                f"| {ds} | {X.shape[0]} x {X.shape[1]} | {label} | {sec:.2f} | {est.n_iter_} | "
                f"{diag.get('converged', '')} | {solver} | {'; '.join(notes)} |",
                flush=True,
            )
    print()


def sl2p_bar() -> None:
    print("## Bar: SL2P (one C and p) under 2 s on the GLIOMA and MLL training splits\n")
    print("| dataset | method | seconds | iterations | bar |")
    print("|---|---|---|---|---|")
    for ds in ("GLIOMA", "MLL"):
        X, y = training_split(ds)
        for name, params in [
            ("sl2p", {"p": 2.0}),
            ("sl2p", {"p": 3.0}),
            ("sl2p", {"p": 1.5}),
            ("sl21", {}),
        ]:
            times = []
            for _ in range(3):
                est, sec, _ = timed_fit(name, params, X, y)
                times.append(sec)
            label = name + ("" if "p" not in params else f" p={params['p']:g}")
            best = min(times)
            print(
                f"| {ds} | {label} | {best:.2f} (best of 3; "
                f"{', '.join(f'{t:.2f}' for t in times)}) | "
                f"{est.n_iter_} | {'met' if best < 2 else 'NOT met'} |",
                flush=True,
            )
    print()


def inner_solvers() -> None:
    print("## Inner SVM solver of SL2P (p = 2, C = 1)\n")
    print(
        "ip: interior point to a certified relative gap 1e-8 (default for n <= 400); cd: dual "
        "coordinate descent (Python loop) warm-started across iterations, gap 1e-8; liblinear: "
        "LinearSVC at the given tol, no warm start.\n"
    )
    print(
        "| dataset | inner solver | seconds | iterations | rises | max rise (relative) | final J |"
    )
    print("|---|---|---|---|---|---|---|")
    for ds in ("GLIOMA", "MLL"):
        X, y = training_split(ds)
        for solver, tol in [("ip", 1e-8), ("cd", 1e-8), ("liblinear", 1e-4), ("liblinear", 1e-8)]:
            est, sec, _ = timed_fit("sl2p", {"p": 2.0, "solver": solver, "inner_tol": tol}, X, y)
            k, worst = rises(est.objective_)
            print(
                f"| {ds} | {solver} (tol {tol:g}) | {sec:.2f} | {est.n_iter_} | {k} | "
                f"{worst:.1e} | "
                f"{est.objective_[-1]:.6g} |",
                flush=True,
            )
    print()


def rise_sweep(solvers: list[tuple[str, float]]) -> None:
    print("## SL2P objective rises between iterations: 81 runs\n")
    print(
        "3 datasets (GLIOMA, MLL, Brain_Tumor_2) x p in {1, 2, 3} x C in {0.1, 1, 10} x 3 splits; "
        "max_iter 100. A run stops at its first rise (its decrease is then below tol), so "
        "'rises' counts at most one per run.\n"
    )
    print(
        "| inner solver | runs with a rise | rises / iterations | max rise (relative) "
        "| max certified gap |"
    )
    print("|---|---|---|---|---|")
    splits = {
        (ds, s): training_split(ds, s)
        for ds in ("GLIOMA", "MLL", "Brain_Tumor_2")
        for s in range(3)
    }
    for solver, tol in solvers:
        runs = n_rises = n_steps = 0
        worst = gap = 0.0
        for (_ds, _s), (X, y) in splits.items():
            for p in (1.0, 2.0, 3.0):
                for C in (0.1, 1.0, 10.0):
                    est, _, _ = timed_fit(
                        "sl2p",
                        {"p": p, "C": C, "solver": solver, "inner_tol": tol, "max_iter": 100},
                        X,
                        y,
                    )
                    k, w = rises(est.objective_)
                    runs += k > 0
                    n_rises += k
                    n_steps += est.n_iter_ - 1
                    worst = max(worst, w)
                    g = est.diagnostics_["max_inner_gap"]
                    gap = max(gap, g) if np.isfinite(g) and np.isfinite(gap) else np.nan
        print(
            f"| {solver} (tol {tol:g}) | {runs} / 81 | {n_rises} / {n_steps} | {worst:.1e} "
            f"| {'uncertified' if np.isnan(gap) else f'{gap:.1e}'} |",
            flush=True,
        )
    print()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="microarrays only, no sweep")
    parser.add_argument(
        "--isolet-max-iter",
        type=int,
        default=3,
        help="cap on outer iterations of sl2p/sl21/l21svm on ISOLET",
    )
    parser.add_argument("--sections", default="times,bar,solvers,sweep")
    args = parser.parse_args()
    sections = args.sections.split(",")
    print(f"load average at start: {os.getloadavg()}\n")
    with threadpool_limits(1):
        if "times" in sections:
            datasets = ["GLIOMA", "MLL", "Brain_Tumor_2"] + (
                [] if args.quick else ["SEMEION", "ISOLET"]
            )
            fit_time_table(datasets, {"ISOLET": args.isolet_max_iter})
        if "bar" in sections:
            sl2p_bar()
        if "solvers" in sections:
            inner_solvers()
        if "sweep" in sections and not args.quick:
            rise_sweep([("ip", 1e-8), ("liblinear", 1e-4), ("liblinear", 1e-8)])
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
