"""Fit times and iterations of RFS and DSO-FS, and RFS against scikit-feature's ``rfs``.

Benchmark-only dependency (a peer to compare with, never imported by fsbench):

    pip install skfeature-chappers        # skfeature.function.sparse_learning_based.RFS.rfs

Data are read from $FSBENCH_DATA (GLIOMA.mat, MLL.csv, Brain_Tumor_2.mat,
isolet_full/Isolet1..5.mat, semeion.data, umist.mat). Every fit runs on one BLAS thread (threadpoolctl).
Each dataset is cut into a stratified 60% training split (seed 0; the DSO-FS protocol) and
z-scored with the training statistics. Usage:

    python benchmarks/bench_rfs_dso.py [--quick] [--skip-large] [--dso-only]
        [--datasets SEMEION,ISOLET] [--p 0.5,1]

``--skip-large`` leaves out the ISOLET and SEMEION DSO-FS runs (minutes each); ``--dso-only``
leaves out RFS and the scikit-feature comparison; ``--datasets`` and ``--p`` restrict the
dataset list and the p grid. Each DSO-FS row also reports the process CPU time of the fit
(one BLAS thread, so less sensitive to other jobs on the machine than the wall time).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.io as sio
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from fsbench.selectors.dso import DSOFS
from fsbench.selectors.rfs import RFS

P_GRID = [0.1, 0.3, 0.5, 0.7, 0.9, 1.0]


def data_dir() -> Path:
    if "FSBENCH_DATA" not in os.environ:
        sys.exit("set FSBENCH_DATA to the directory holding the datasets")
    return Path(os.environ["FSBENCH_DATA"])


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    d = data_dir()
    if name in ("GLIOMA", "Brain_Tumor_2"):
        m = sio.loadmat(d / f"{name}.mat")
        X, y = m["X"].astype(float), m["Y"].ravel()
    elif name == "MLL":
        raw = np.loadtxt(d / "MLL.csv", delimiter=",", skiprows=1)
        X, y = raw[:, :-1], raw[:, -1]
    elif name == "ISOLET":
        parts = [sio.loadmat(d / "isolet_full" / f"Isolet{i}.mat") for i in range(1, 6)]
        X = np.vstack([p["fea"] for p in parts]).astype(float)
        y = np.concatenate([p["gnd"].ravel() for p in parts])
    elif name == "UMIST":
        m = sio.loadmat(d / "umist.mat")
        X, y = m["fea"].astype(float), m["gnd"].ravel()
    elif name == "SEMEION":
        raw = np.loadtxt(d / "semeion.data")
        X, y = raw[:, :256], raw[:, 256:].argmax(axis=1)
    else:
        raise KeyError(name)
    return X, np.unique(y, return_inverse=True)[1]


def train_split(X, y, seed=0):
    n_train = int(np.ceil(0.6 * len(y)))
    Xtr, _, ytr, _ = train_test_split(X, y, train_size=n_train, stratify=y, random_state=seed)
    mu, sd = Xtr.mean(0), Xtr.std(0)
    return (Xtr - mu) / np.where(sd > 0, sd, 1.0), ytr


def random_problem(m, n, c, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    return (X - X.mean(0)) / X.std(0), np.arange(m) % c


def timed(make, X, y, repeat=1):
    best, sel = np.inf, None
    for _ in range(repeat):
        sel = make()
        t, c = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sel.fit(X, y)
        best = min(best, time.perf_counter() - t)
        sel.cpu_seconds_ = time.process_time() - c
    return best, sel


def dso_row(name, shape, p, solver, secs, sel):
    d = sel.diagnostics_
    conv = "yes" if d["converged"] else ("no (objective rose)" if d.get("objective_increased")
                                         else "no")
    return (f"| {name} | {shape} | DSO-FS {solver} p={p:g} | {secs:.2f} "
            f"(cpu {sel.cpu_seconds_:.2f}) | {sel.n_iter_} | "
            f"{conv} | {d['n_nonzero_rows']} | "
            f"{'yes' if d['feasible'] else 'no'} ({d['violated_share']:.1%}) | "
            f"{'iter ' + str(d['collapse_iter']) if d['collapsed'] else 'no'} |")


def compare_skfeature(X, y, gamma=1.0):
    """scikit-feature's rfs against ours on the same data, gamma, +-1 coding and stopping point."""
    import skfeature.function.sparse_learning_based.RFS as skrfs

    count = {"n": 0}
    orig = skrfs.generate_diagonal_matrix

    def counting(U):  # called once per iteration of its loop
        count["n"] += 1
        return orig(U)

    skrfs.generate_diagonal_matrix = counting
    try:
        t = time.perf_counter()
        W_sk = skrfs.rfs(X, y, mode="raw", gamma=gamma)
        t_sk = time.perf_counter() - t
    finally:
        skrfs.generate_diagonal_matrix = orig
    n_sk = count["n"]
    # its rule: stop when |J_t - J_(t-1)| < 1e-3; run ours for the same number of iterations
    t_ours, ours = timed(lambda: RFS(gamma=gamma, label_coding="pm1", tol=0.0, max_iter=n_sk),
                         X, y, repeat=3)
    obj = ours.objective_
    stop = next((i + 1 for i in range(1, obj.size) if abs(obj[i] - obj[i - 1]) < 1e-3), obj.size)
    top_sk = np.argsort(-np.sum(W_sk**2, axis=1), kind="stable")[:100]
    top_ours = ours.ranking_[:100]
    return {
        "iters_skfeature": n_sk, "iters_ours": ours.n_iter_, "rule_stop_ours": stop,
        "t_skfeature": t_sk, "t_ours": t_ours, "speedup": t_sk / t_ours,
        "same_top100_order": bool(np.array_equal(top_sk, top_ours)),
        "top100_overlap": len(set(top_sk) & set(top_ours)),
        "max_rel_dW": float(np.abs(W_sk - ours.coef_).max() / np.abs(W_sk).max()),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="microarray and synthetic problems only")
    ap.add_argument("--skip-large", action="store_true", help="no DSO-FS on ISOLET / SEMEION")
    ap.add_argument("--dso-only", action="store_true", help="no RFS, no scikit-feature")
    ap.add_argument("--datasets", default=None, help="comma-separated subset of the datasets")
    ap.add_argument("--p", default=None, help="comma-separated subset of the p grid")
    args = ap.parse_args()
    p_grid = P_GRID if args.p is None else [float(v) for v in args.p.split(",")]
    cmp = None
    print(f"load average at start: {os.getloadavg()}")
    rows = ["| data | train shape | method | fit s | iterations | converged | non-zero rows | "
            "margins met (violated) | collapsed |", "|---|---|---|---|---|---|---|---|---|"]
    with threadpool_limits(1):
        # -- bars on synthetic problems of the papers' sizes ------------------------------------
        if not args.dso_only:
            X, y = random_problem(122, 3312, 5)
            t, sel = timed(lambda: RFS(gamma=1.0), X, y, repeat=3)
            rows.append(f"| random (LUNG size) | 122x3312 | RFS gamma=1 | {t:.3f} | "
                        f"{sel.n_iter_} | {'yes' if sel.n_iter_ < sel.max_iter else 'no'} | "
                        "- | - | - |")
            cmp = compare_skfeature(X, y)
        X, y = random_problem(67, 11340, 3)
        for solver in ("alternating", "joint"):
            t, sel = timed(lambda solver=solver: DSOFS(p=1.0, solver=solver), X, y)
            rows.append(dso_row("random (CLL-SUB-111 size)", "67x11340", 1.0, solver, t, sel))
        # -- the datasets ------------------------------------------------------------------
        names = ["GLIOMA", "MLL", "Brain_Tumor_2"] + ([] if args.quick else ["SEMEION", "ISOLET"])
        if args.datasets:
            names = args.datasets.split(",")
        for name in names:
            X, y = train_split(*load(name))
            shape = f"{X.shape[0]}x{X.shape[1]}"
            if not args.dso_only:
                t, sel = timed(lambda: RFS(gamma=1.0), X, y)
                rows.append(f"| {name} | {shape} | RFS gamma=1 | {t:.2f} | {sel.n_iter_} | "
                            f"{'yes' if sel.n_iter_ < sel.max_iter else 'no'} | - | - | - |")
            large = X.shape[0] > X.shape[1] + 1
            if large and args.skip_large:
                continue
            # in the least-squares case (m > n + 1, X of full column rank) the two solvers
            # coincide: there is no U, only the E step
            solvers = ("alternating",) if large else ("alternating", "joint")
            for solver in solvers:
                for p in p_grid:
                    try:
                        t, sel = timed(lambda p=p, solver=solver: DSOFS(p=p, solver=solver), X, y)
                        rows.append(dso_row(name, shape, p, solver, t, sel))
                    except Exception as exc:  # report and go on
                        rows.append(f"| {name} | {shape} | DSO-FS {solver} p={p:g} | error: "
                                    f"{type(exc).__name__}: {exc} | | | | | |")
                    print(rows[-1], flush=True)
    print()
    print("\n".join(rows))
    print()
    if cmp is not None:
        print("RFS vs scikit-feature rfs on random 122x3312, 5 classes, gamma=1, +-1 labels:")
        for k, v in cmp.items():
            print(f"  {k}: {v:.4g}" if isinstance(v, float) else f"  {k}: {v}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
