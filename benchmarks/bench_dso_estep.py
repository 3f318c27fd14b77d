"""DSO-FS least-squares E step: the full-QR active set ("qr") against the complement one ("null").

    FSBENCH_DATA=... python benchmarks/bench_dso_estep.py [p ...] [--seeds 0 1] [--max-iter 300]

UMIST, z-scored by column over the whole X, a random 60% and then 7/8 of it (an inner training
fold of the protocol: 301 samples x 645 columns with the bias, rank 298), Y = +-1 one-vs-rest.
For each p and subset the two solvers fit in turn (qr first for even seeds, null first for
odd ones) on one BLAS thread; reported: CPU seconds of the fit, the iterations, whether the
E steps' passive sets (Z > 0) agree at every iteration (else the first that differs), the
largest relative difference of W over the iterations and at the end, and the final ranking
(dso.py's ``_rank_rows`` on the feature rows): identical, or the top-100 overlap and the first
position that differs. Results: benchmarks/dso_estep.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

import fsbench.selectors.dso as dso
from fsbench.datasets import load


def subset(seed: int) -> tuple[np.ndarray, np.ndarray]:
    ds = load("umist", None)
    X = np.asarray(ds.X, dtype=float)
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    rng = np.random.default_rng(seed)
    outer = rng.permutation(X.shape[0])[: int(0.6 * X.shape[0])]
    inner = outer[rng.permutation(outer.size)[: int(outer.size * 7 / 8)]]
    y = np.asarray(ds.y)[inner]
    Y = np.where(y[:, None] == np.unique(y)[None], 1.0, -1.0)
    return X[inner], Y


def fit(X, Y, p, solver, max_iter):
    dso.E_STEP_SOLVER = solver
    masks, Ws = [], []
    real = dso.nnls_columns

    def recording(F, S, B, Z0=None, **kw):
        Z, Res = real(F, S, B, Z0, **kw)
        masks.append(Z > 0)
        return Z, Res

    dso.nnls_columns = recording
    try:
        start = time.process_time()
        res = dso.dso_fit(X, Y, p, max_iter=max_iter, callback=lambda k, W: Ws.append(W))
        seconds = time.process_time() - start
    finally:
        dso.nnls_columns = real
        dso.E_STEP_SOLVER = "qr"
    n = X.shape[1]
    ranking = dso._rank_rows(res.last_iter[:n], res.last_norm[:n])
    return seconds, res, masks, Ws, ranking


def compare(a, b) -> dict:
    _, ra, ma, Wa, ka = a
    _, rb, mb, Wb, kb = b
    first_mask = next((i + 1 for i, (x, y) in enumerate(zip(ma, mb, strict=False)) if not np.array_equal(x, y)),
                      None)
    if first_mask is None and len(ma) != len(mb):
        first_mask = min(len(ma), len(mb)) + 1
    dws = [np.abs(x - y).max() / np.abs(x).max() for x, y in zip(Wa, Wb, strict=False)]
    same = np.array_equal(ka, kb)
    diff = None if same else int(np.flatnonzero(ka != kb)[0])
    return {
        "iters": (len(ra.objective), len(rb.objective)),
        "estep_agree": first_mask is None,
        "first_estep_diff": first_mask,
        "dW_end": float(np.abs(ra.W - rb.W).max() / np.abs(ra.W).max()),
        "dW_max": float(max(dws)),
        "ranking_identical": same,
        "top100": len(set(ka[:100]) & set(kb[:100])),
        "first_rank_diff": diff,
        "inexact": (ra.inexact_columns, rb.inexact_columns),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("p", nargs="*", type=float, default=[0.1, 0.5, 1.0])
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1])
    ap.add_argument("--max-iter", type=int, default=300)
    args = ap.parse_args()
    print("| p | subset | iterations | qr s | null s | null / qr | E steps agree | "
          "max dW/W (end; any iteration) | ranking |")
    print("|---|---|---|---|---|---|---|---|---|")
    with threadpool_limits(1):
        for p in args.p:
            for seed in args.seeds:
                X, Y = subset(seed)
                order = ("qr", "null") if seed % 2 == 0 else ("null", "qr")
                out = {s: fit(X, Y, p, s, args.max_iter) for s in order}
                c = compare(out["qr"], out["null"])
                tq, tn = out["qr"][0], out["null"][0]
                agree = "yes" if c["estep_agree"] else f"no (from iteration {c['first_estep_diff']})"
                rank = ("identical" if c["ranking_identical"] else
                        f"differs: top-100 overlap {c['top100']}, first at position "
                        f"{c['first_rank_diff']}")
                it = c["iters"][0] if c["iters"][0] == c["iters"][1] else c["iters"]
                print(f"| {p} | {seed} | {it} | {tq:.1f} | {tn:.1f} | {tn / tq:.2f} | {agree} | "
                      f"{c['dW_end']:.1e}; {c['dW_max']:.1e} | {rank} |", flush=True)
                if any(c["inexact"]):
                    print(f"  inexact E-step columns (qr, null): {c['inexact']}", flush=True)


if __name__ == "__main__":
    main()
