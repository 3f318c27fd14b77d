"""RFS's stopping rule before and after the duality-gap certificate (commit aea5faf).

For every dataset and gamma of the papers' configs that is present (configs/papers/rfs.yaml:
gamma = 1 on ALLAML, GLIOMA, Prostate-GE; configs/papers/dso-fs.yaml: gamma in 1e-3..1e3 on AR,
UMIST, SEMEION; its ISOLET variant: gamma = 1), on a stratified 60% training split (seed 0)
z-scored with its own statistics, one BLAS thread:

- before: the relative-decrease rule (J_(t-1) - J_t <= 1e-6 J_(t-1), max_iter 1000), rfs.py of
  ``--before-rev``;
- after: the duality-gap rule at its defaults (tol 1e-7, max_iter 50,000), rfs.py of
  ``--after-rev`` (commit aea5faf; reverted in fb752bf, then restored as the default with the
  old rule kept as ``stop="decrease"``, which the papers' configs pin and which computes the
  old rule's iterates bit for bit: tests/test_rfs.py). Both versions are read from git, so
  the table compares exactly the two codes it names;
- a reference fit run to a relative duality gap of 1e-12, or for as many iterations as
  ``--ref-seconds`` allow but at least twice the iterations of "after" (its gap is printed);
- the stopping points of the certificate at ``--sweep`` tolerances.

Each row gives iterations, seconds, J above the reference (relative), the certified gap, and the
overlap of the top-100 features (and of the top-k, k = min(100, support)) with the reference's.
"support" counts the reference's rows of W above 1e-6 of the largest; it is 0 when gamma >=
max_j ||x_j^T Y|| (then W = 0 is optimal and every row decays). A second table times single
iterations (``tol=0``) and the bound itself. Usage:

    FSBENCH_DATA=DIR python benchmarks/bench_rfs_stopping.py [--datasets glioma,ar]
        [--gammas 1,10] [--ref-seconds 60] [--sweep 1e-6,1e-8] [--before-rev REV]
        [--after-rev REV] [--skip-timing | --timing-only] [--bars]
"""

from __future__ import annotations

import argparse
import inspect
import subprocess
import time
import types
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from fsbench.datasets import load

GRID = [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3]
CASES = {"allaml": [1.0], "glioma": [1.0], "prostate-ge": [1.0], "ar": GRID, "umist": GRID,
         "semeion": GRID, "isolet": [1.0]}
BEFORE_REV = "d2e7fb1"  # rfs.py with the relative-decrease rule (tol=1e-6, max_iter=1000)
AFTER_REV = "aea5faf"  # rfs.py with the duality-gap rule (tol=1e-7, max_iter=50,000)
REPO = Path(__file__).resolve().parents[1]


def train_split(name: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    data = load(name)
    X, y = np.array(data.X), np.array(data.y)
    n_train = int(np.ceil(0.6 * len(y)))
    Xtr, _, ytr, _ = train_test_split(X, y, train_size=n_train, stratify=y, random_state=seed)
    mu, sd = Xtr.mean(0), Xtr.std(0)
    return (Xtr - mu) / np.where(sd > 0, sd, 1.0), ytr


def rfs_module(rev: str) -> types.ModuleType:
    """rfs.py as of ``rev``, its functions only (the selector class would register twice)."""
    src = subprocess.run(["git", "show", f"{rev}:fsbench/selectors/rfs.py"], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    src = src[:src.index('@register("rfs")')].replace("from fsbench.selectors import register\n", "")
    module = types.ModuleType(f"rfs_{rev}")
    exec(compile(src, f"rfs.py@{rev}", "exec"), module.__dict__)
    return module


def defaults(module: types.ModuleType) -> tuple[float, int]:
    params = inspect.signature(module.rfs_fit).parameters
    return params["tol"].default, params["max_iter"].default


def top(W: np.ndarray, k: int = 100) -> set[int]:
    return set(np.argsort(-np.linalg.norm(W, axis=1), kind="stable")[:k].tolist())


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def overlap(W: np.ndarray, ref: np.ndarray, k: int) -> str:
    """Features shared by the top-100 of W and of ref, and by their top-k."""
    return f"{len(top(W) & top(ref))} / {len(top(W, k) & top(ref, k)) if k else '-'}"


def case_row(name: str, X: np.ndarray, Y: np.ndarray, gamma: float, before: types.ModuleType,
             after: types.ModuleType, sweep: list[float], ref_seconds: float) -> str:
    tol, max_iter = defaults(after)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (W_b, obj_b), s_b = timed(lambda: before.rfs_fit(X, Y, gamma, tol=1e-6, max_iter=1000))
        fit, s_a = timed(lambda: after.rfs_fit(X, Y, gamma, tol=tol, max_iter=max_iter))
        n_after = fit.objective.size
        cap = max(2000, 2 * n_after, int(ref_seconds / (s_a / n_after)))
        ref = after.rfs_fit(X, Y, gamma, tol=1e-12, max_iter=cap)
        best_dual = np.maximum.accumulate(ref.dual_bound)
        swept = [after.rfs_fit(X, Y, gamma, tol=t, max_iter=cap)
                 if np.any(ref.objective - best_dual <= t * best_dual) else None for t in sweep]
    gamma_max = float(np.linalg.norm(X.T @ Y, axis=1).max())  # W = 0 is optimal from here on
    norms = np.linalg.norm(ref.W, axis=1)
    support = 0 if gamma >= gamma_max else int(np.sum(norms > 1e-6 * norms.max()))
    k = min(100, support)
    J_ref = after.rfs_objective(X, Y, ref.W, gamma)
    above_b = (after.rfs_objective(X, Y, W_b, gamma) - J_ref) / J_ref
    cells = [
        name, f"{gamma:g}", f"{support}",
        f"{obj_b.size}, {s_b:.2f}, {above_b:.1e}, {overlap(W_b, ref.W, k)}",
        f"{n_after}{'' if fit.converged else ' (max_iter)'}, {s_a:.2f}, "
        f"{fit.duality_gap:.1e}, {overlap(fit.W, ref.W, k)}",
    ]
    for swept_fit in swept:
        cells.append("not reached" if swept_fit is None else
                     f"{swept_fit.objective.size}{'' if swept_fit.converged else ' (cap)'}, "
                     f"{overlap(swept_fit.W, ref.W, k)}")
    cells.append(f"{ref.objective.size}{'' if ref.converged else ' (cap)'}, {ref.duality_gap:.1e}")
    return "| " + " | ".join(cells) + " |"


def time_iterations(name: str, X: np.ndarray, Y: np.ndarray, gamma: float, before: types.ModuleType,
                    after: types.ModuleType, n_iter: int = 1000) -> str:
    """Per-iteration cost at a fixed count (tol = 0), best of 3, and the bound's own cost."""
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # -inf: the old rule stopped at tol = 0 once J stalled; run the same count of iterations
        s_b = min(timed(lambda: before.rfs_fit(X, Y, gamma, tol=-np.inf, max_iter=n_iter))[1] for _ in range(3))
        s_a = min(timed(lambda: after.rfs_fit(X, Y, gamma, tol=0.0, max_iter=n_iter))[1] for _ in range(3))
        W = after.rfs_fit(X, Y, gamma, tol=0.0, max_iter=n_iter).W
        # the last iterate's dual point, formed as the n x n iteration forms it
        pi_w = np.linalg.norm(W, axis=1)
        E = (Y - X @ W) / gamma
        pi_e = np.linalg.norm(E, axis=1)
        K = (X * pi_w) @ X.T
        K[np.diag_indices_from(K)] += gamma**2 * pi_e
        Lam = after._spd_solve(K, Y)
        step = after.RFSStep(W, E, Lam, X.T @ Lam)
        reps = 200
        s_bound = timed(lambda: [after.rfs_dual_bound(Y, gamma, step) for _ in range(reps)])[1] / reps
        s_product = timed(lambda: [X.T @ Lam for _ in range(reps)])[1] / reps
    share = pi_w * np.einsum("ij,ij->j", X, X)
    kept = int(np.sum(share > after.NEGLIGIBLE_ROW_SHARE * share.sum()))  # left out below 0.9 d
    return (f"| {name} | {gamma:g} | {n_iter} | {s_b / n_iter * 1e3:.3f} | {s_a / n_iter * 1e3:.3f} | "
            f"{s_bound * 1e6:.0f} | {s_product * 1e6:.0f} | {kept} of {X.shape[1]} |")


def bar_row(after: types.ModuleType) -> str:
    """RFS at gamma = 1 with the rule's defaults on bench_rfs_dso.py's random 122 x 3312 problem."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((122, 3312))
    X = (X - X.mean(0)) / X.std(0)
    Y = after.label_matrix(np.arange(122) % 5, 5, "onehot")
    with threadpool_limits(1):
        runs = [timed(lambda: after.rfs_fit(X, Y, 1.0)) for _ in range(3)]
    fit, seconds = runs[0][0], min(s for _, s in runs)
    return (f"random 122x3312, gamma = 1, defaults: {seconds:.3f} s (best of 3), {fit.objective.size} "
            f"iterations, gap {fit.duality_gap:.1e}, converged {fit.converged}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=",".join(CASES))
    ap.add_argument("--gammas", default=None, help="restrict the grid (comma-separated)")
    ap.add_argument("--ref-seconds", type=float, default=60.0)
    ap.add_argument("--sweep", default="1e-6,1e-8")
    ap.add_argument("--before-rev", default=BEFORE_REV)
    ap.add_argument("--after-rev", default=AFTER_REV)
    ap.add_argument("--skip-timing", action="store_true")
    ap.add_argument("--timing-only", action="store_true", help="only the per-iteration table")
    ap.add_argument("--bars", action="store_true",
                    help="only the fit time on the random 122x3312 problem of bench_rfs_dso.py")
    args = ap.parse_args()
    before, after = rfs_module(args.before_rev), rfs_module(args.after_rev)
    if args.bars:
        print(bar_row(after))
        return
    sweep = [float(t) for t in args.sweep.split(",") if t]
    gammas = None if args.gammas is None else {float(g) for g in args.gammas.split(",")}
    tol, max_iter = defaults(after)
    print(f"after: {args.after_rev} (tol={tol:g}, max_iter={max_iter}); before: {args.before_rev} "
          "(tol=1e-6 on the relative decrease, max_iter=1000)\n")
    header = ("| data | gamma | support | before: it., s, J above ref., top-100 / top-k | "
              "after: it., s, certified gap, top-100 / top-k | "
              + " | ".join(f"gap <= {t:g}: it., top-100 / top-k" for t in sweep)
              + " | reference: it., gap |")
    if not args.timing_only:
        print(header)
        print("|" + "---|" * (header.count("|") - 1))
    timing_rows = []
    for name in args.datasets.split(","):
        X, y = train_split(name)
        Y = after.label_matrix(y, int(y.max()) + 1, "onehot")
        for gamma in CASES[name]:
            if gammas is not None and gamma not in gammas:
                continue
            if not args.timing_only:
                print(case_row(name, X, Y, gamma, before, after, sweep, args.ref_seconds), flush=True)
            if not args.skip_timing and gamma in (1e-2, 1.0, 1e2):
                timing_rows.append(time_iterations(name, X, Y, gamma, before, after))
    if timing_rows:
        print("\n| data | gamma | iterations | before ms/it. | after ms/it. | bound us/it. | "
              "X^T Lam us | rows kept at the end |")
        print("|---|---|---|---|---|---|---|---|")
        for row in timing_rows:
            print(row)


if __name__ == "__main__":
    main()
