"""Time every baseline selector next to its fastest Python peer, at equal output.

The cases come from ``benchmarks/baselines_*.py`` (one family of methods each, see
``benchmarks/baseline_cases.py``): each names fsbench's registered selector, the peer, how both
are called and how their outputs are compared. Benchmark-only packages (fsbench never imports
them): ``pip install -e ".[bench]"`` (skrebate, scikit-feature, ITMO_FS).

Usage::

    FSBENCH_DATA=/path/to/datasets python benchmarks/bench_baselines.py [--datasets glioma,srbct]
        [--methods jmi,cmim] [--out benchmarks/bench_baselines.md]

Datasets: the microarray sets of the papers (GLIOMA, ALLAML, SRBCT, MLL, Brain_Tumor_2), each
z-scored as fsbench's protocol does, every class kept. Both sides run on one BLAS thread in the
same process, one after the other, so each ratio is measured in one run on the same machine
load; the load average is printed. A time is the best of a few runs (one run when the first
takes more than 2 s). fsbench's time is ``fit`` alone (the selector is built beforehand); the
peer's is its call as the case writes it, on the input ``prepare`` gives both sides (for
example the same discretized states, whose computation neither side is timed for).
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import sklearn
from threadpoolctl import threadpool_limits

from fsbench import load_dataset, make_selector

sys.path.insert(0, str(Path(__file__).parent))
from baseline_cases import Case  # noqa: E402
from bench_filters import timed  # noqa: E402

DATASETS = ("glioma", "allaml", "srbct", "mll", "brain-tumor-2")


def zscore(X: np.ndarray) -> np.ndarray:
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def all_cases() -> list[Case]:
    cases: list[Case] = []
    for path in sorted(Path(__file__).parent.glob("baselines_*.py")):
        cases += importlib.import_module(path.stem).CASES
    return cases


def run_case(case: Case, X: np.ndarray, y: np.ndarray) -> dict:
    if case.max_features is not None:
        X = X[:, : case.max_features]
    if case.prepare is not None:
        X, y = case.prepare(X, y)
    k = min(case.n_picks, X.shape[1])
    selector = make_selector(case.method, {**case.params, "n_features_to_select": k})
    t_fs, fitted = timed(lambda: selector.fit(X, y), repeats=5, budget=2.0)
    t_peer, peer_out = timed(lambda: case.run_peer(X, y, k), repeats=5, budget=2.0)
    return {"fsbench_s": t_fs, "peer_s": t_peer, "ratio": t_peer / t_fs, "output": case.compare(fitted, peer_out, k),
            "shape": f"{X.shape[0]} x {X.shape[1]}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--methods", default="", help="comma-separated registered names (default: all cases)")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) to this file")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    cases = all_cases()
    if args.methods:
        wanted = set(args.methods.split(","))
        cases = [c for c in cases if c.method in wanted]
    lines = [f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, numpy {np.__version__}, scikit-learn {sklearn.__version__}; "
             f"load average at start {os.getloadavg()[0]:.2f}; one BLAS thread.", "",
             "| method | dataset (n x d) | peer | fsbench (s) | peer (s) | peer / fsbench | output | note |",
             "|---|---|---|---:|---:|---:|---|---|"]
    print("\n".join(lines), flush=True)
    with threadpool_limits(1):
        for name in args.datasets.split(","):
            ds = load_dataset(name)
            X, y = zscore(np.asarray(ds.X, dtype=float)), np.unique(ds.y, return_inverse=True)[1]
            for case in cases:
                try:
                    r = run_case(case, X, y)
                except Exception as exc:  # a peer that fails on this input is reported, not fatal
                    line = f"| {case.method} | {name} | {case.peer} | | | | failed: {type(exc).__name__}: {exc} | |"
                else:
                    line = (f"| {case.method} | {name} ({r['shape']}) | {case.peer} | {r['fsbench_s']:.3g} | "
                            f"{r['peer_s']:.3g} | {r['ratio']:.1f}x | {r['output']} | {case.note} |")
                print(line, flush=True)
                lines.append(line)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
