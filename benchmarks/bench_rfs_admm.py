"""RFS's problem for many samples: Algorithm 1 (``rfs_fit``) beside ADMM (``rfs_fit_admm``).

Both minimize J(W) = ||X W - Y||_{2,1} + gamma ||W||_{2,1} (one-hot Y) to the same certificate,
a relative duality gap of 1e-7 (RFS's default), in this process with one BLAS thread. Each row
reports the CPU seconds of each, its iterations, the gap it certified, and, where both reached
it, the largest difference of their weights and whether their top-100 features agree.

Algorithm 1 is given a budget of CPU time (``--cap``, 300 s): it runs the iteration of
``rfs_fit`` (the public step functions, the same choice of system, rows left out and
certificate) and stops once the gap is met or the budget spent; where it stops before the gap,
the row gives the gap it had reached. The data:

- ``make_classification`` as ``bench_scale.py`` generates it (4 classes, 20 informative
  features, seed 0, z-scored) at the shapes of ``--shapes`` (``n x d``);
- the training part (60 %) of registry datasets with more samples than features
  (``--datasets``, from ``FSBENCH_DATA``).

Usage::

    python benchmarks/bench_rfs_admm.py [--shapes 5000x2000,...] [--datasets semeion,isolet]
        [--gammas 1] [--cap 300] [--md benchmarks/rfs_large_n.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from bench_l1svm_solvers import training_part
from bench_scale import make_data
from threadpoolctl import threadpool_limits

from fsbench.selectors._rfs_admm import rfs_fit_admm
from fsbench.selectors.rfs import (
    NEGLIGIBLE_ROW_SHARE,
    label_matrix,
    rfs_dual_bound,
    rfs_objective,
    rfs_step_features,
    rfs_step_samples,
)

DEFAULT_SHAPES = "300x1000,1000x1000,3000x1000,5000x2000,10000x1000,30000x1000"
DEFAULT_DATASETS = "semeion,isolet"
TOL = 1e-7
TOP = 100


def timed(fn, *args, **kwargs):
    start = time.process_time()
    out = fn(*args, **kwargs)
    return out, time.process_time() - start


def algorithm1_within(X: np.ndarray, Y: np.ndarray, gamma: float, cap: float) -> dict:
    """rfs_fit's iteration (stop "gap", form "auto") until the gap meets TOL or ``cap`` CPU seconds pass."""
    n, d = X.shape
    column_sq = np.einsum("ij,ij->j", X, X)
    pi_w, pi_e = np.ones(d), np.ones(n)
    best, gap, iterations, W = 0.0, np.inf, 0, np.zeros((d, Y.shape[1]))
    start = time.process_time()
    while time.process_time() - start < cap:
        share = pi_w * column_sq
        kept = share > NEGLIGIBLE_ROW_SHARE * share.sum()
        rows = None if kept.sum() > 0.9 * d else np.flatnonzero(kept)
        n_rows = d if rows is None else rows.size
        if n > n_rows and n_rows > 0 and pi_e.min() > 1e-10 * pi_e.max():
            step = rfs_step_features(X, Y, gamma, pi_w, pi_e, rows)
        else:
            step = rfs_step_samples(X, Y, gamma, pi_w, pi_e, rows)
        W, iterations = step.W, iterations + 1
        pi_w, pi_e = np.sqrt(np.einsum("ij,ij->i", step.W, step.W)), np.sqrt(np.einsum("ij,ij->i", step.E, step.E))
        best = max(best, rfs_dual_bound(Y, gamma, step))
        if best > 0 and (gamma * (pi_e.sum() + pi_w.sum()) - best) / best <= TOL:
            gap = (rfs_objective(X, Y, W, gamma) - best) / best
            if gap <= TOL:
                break
    if not gap <= TOL:
        gap = (rfs_objective(X, Y, W, gamma) - best) / best if best > 0 else np.inf
    return {"W": W, "iterations": iterations, "gap": gap, "converged": bool(gap <= TOL),
            "seconds": time.process_time() - start}


def measure(label: str, X: np.ndarray, y: np.ndarray, gamma: float, cap: float) -> dict:
    Y = label_matrix(np.unique(y, return_inverse=True)[1], np.unique(y).size, "onehot")
    with threadpool_limits(1):
        admm, t_admm = timed(rfs_fit_admm, X, Y, gamma, tol=TOL)
        alg1 = algorithm1_within(X, Y, gamma, cap)
    row = {"data": label, "n": X.shape[0], "d": X.shape[1], "classes": Y.shape[1], "gamma": gamma,
           "admm_s": t_admm, "admm_iter": 10 * admm.objective.size, "admm_gap": admm.duality_gap,
           "alg1_s": alg1["seconds"], "alg1_iter": alg1["iterations"], "alg1_gap": alg1["gap"],
           "alg1_converged": alg1["converged"], "max_w_diff": np.nan, "same_top": None}
    if admm.converged and alg1["converged"]:
        sa, si = np.linalg.norm(admm.W, axis=1), np.linalg.norm(alg1["W"], axis=1)
        top = min(TOP, X.shape[1], int((sa > 0).sum()))
        row.update(max_w_diff=float(np.abs(admm.W - alg1["W"]).max()),
                   same_top=bool(np.array_equal(np.argsort(-sa, kind="stable")[:top],
                                                np.argsort(-si, kind="stable")[:top])))
    return row



def markdown(rows: list[dict], cap: float) -> str:
    lines = [
        "# RFS for many samples: Algorithm 1 and ADMM",
        "",
        f"`python benchmarks/bench_rfs_admm.py` ({time.strftime('%Y-%m-%d')}, "
        f"{platform.processor() or platform.machine()}, "
        f"one BLAS thread, load {os.getloadavg()[0]:.1f}). CPU seconds to certify a relative duality gap of {TOL:g} "
        f"(RFS's default); Algorithm 1 stopped after about {cap:.0f} s if it had not.",
        "",
        "| data | n x d | classes | gamma | Algorithm 1 | its iterations | ADMM | its iterations "
        "| max weight difference | same top 100 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        alg1 = (f"{r['alg1_s']:.1f} s" if r["alg1_converged"]
                else f"stopped at {r['alg1_s']:.0f} s, gap {r['alg1_gap']:.1e}")
        diff = "" if np.isnan(r["max_w_diff"]) else f"{r['max_w_diff']:.1e}"
        same = "" if r["same_top"] is None else ("yes" if r["same_top"] else "no")
        lines.append(f"| {r['data']} | {r['n']:,} x {r['d']:,} | {r['classes']} | {r['gamma']:g} | {alg1} | "
                     f"{r['alg1_iter']:,} | {r['admm_s']:.1f} s (gap {r['admm_gap']:.1e}) | {r['admm_iter']:,} | "
                     f"{diff} | {same} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--datasets", default=DEFAULT_DATASETS, help="comma-separated registry names ('' for none)")
    ap.add_argument("--gammas", default="1")
    ap.add_argument("--cap", type=float, default=300.0, help="Algorithm 1's budget of CPU seconds")
    ap.add_argument("--md", default=None)
    args = ap.parse_args()
    gammas = [float(g) for g in args.gammas.split(",")]
    rows = []
    cases = [("make_classification", *map(int, s.split("x"))) for s in args.shapes.split(",") if s]
    for label, n, d in cases:
        X, y = make_data(n, d)
        for gamma in gammas:
            rows.append(measure(label, X, y, gamma, args.cap))
            print(rows[-1], flush=True)
    for name in filter(None, args.datasets.split(",")):
        X, y = training_part(name)
        for gamma in gammas:
            rows.append(measure(name.upper(), X, y, gamma, args.cap))
            print(rows[-1], flush=True)
    text = markdown(rows, args.cap)
    print(text)
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
