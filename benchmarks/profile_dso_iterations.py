"""Per-iteration CPU time of one DSO-FS fit, with what each E step did.

    FSBENCH_DATA=... python benchmarks/profile_dso_iterations.py ISOLET 1.0 [max_iter]

Loads the dataset and its 60% training split as ``bench_rfs_dso.py`` does, runs the
alternating solver on one BLAS thread, and prints per iteration: CPU seconds, non-zero feature
rows, and for least-squares E steps the rows r, the warm-start budget, and how many class
columns the warm active set finished, how many went to the interior point and its pivots.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from bench_rfs_dso import load, train_split
from threadpoolctl import threadpool_limits

import fsbench.selectors.dso as dso


def main() -> None:
    name, p = sys.argv[1], float(sys.argv[2])
    max_iter = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    X, y = train_split(*load(name))
    Y = np.where(y[:, None] == np.unique(y)[None], 1.0, -1.0)
    step: dict = {}
    solve = dso.nnls_columns

    def recording(F, S, B, Z0=None, stats=None, **kw):
        mine: dict = {}
        out = solve(F, S, B, Z0, stats=mine, **kw)
        if stats is not None:
            for key, value in mine.items():
                stats[key] = stats.get(key, 0) + value
        step.update(mine, rows=F.shape[0], budget=kw.get("warm_pivots"))
        return out

    dso.nnls_columns = recording
    start = time.process_time()
    last = [start]

    def report(k: int, W: np.ndarray) -> None:
        now = time.process_time()
        nonzero = int((np.linalg.norm(W[:-1], axis=1) > 0).sum())
        print(f"iteration {k}: {now - last[0]:.2f} s (total {now - start:.1f} s), {nonzero} rows, "
              f"E step {step}", flush=True)
        last[0] = now
        step.clear()

    with threadpool_limits(1):
        result = dso.dso_fit(X, Y, p, max_iter=max_iter, callback=report)
    print(f"{len(result.objective)} iterations, converged {result.converged}, collapse at "
          f"{result.collapse_iter or 'none'}, {time.process_time() - start:.1f} s CPU")


if __name__ == "__main__":
    main()
