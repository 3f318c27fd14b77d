"""L21-SVM's and SL21's problems by fsbench's ADMM (``fsbench/selectors/_l21_admm.py``), measured.

For each shape (``bench_scale.make_data``: make_classification, 4 classes, 20 informative
features, z-scored) and dataset (the training part of a registry dataset, z-scored), for both
penalties (L21-SVM: 1/2 ||W||_{2,1}; SL21: 1/(2 sqrt(d)) ||W||_{2,1}^2, its default C_scale 0.5)
and each ``--sigma-scales`` value (the weight of the W = V constraint, ``SIGMA_SCALE`` in the
module, set here for the measurement only): ADMM iterations, the certified relative duality gap
and CPU seconds on one BLAS thread.

Then, side by side, the selectors ``l21svm`` and ``sl21`` at their defaults with ``solver: admm``
and with their reweighting (``solver: ip`` up to 400 samples, ``liblinear`` above: what ``auto``
chose before ADMM existed), on the ``--selector-shapes``: CPU seconds, J reached and the ratio.
The reweighting at the bar's size (over 600 s) is in ``scale.md`` (``bench_scale.py --axis bar``).

Usage::

    python benchmarks/bench_l21svm_admm.py [--shapes 200x100,1000x300,5000x2000] [--datasets semeion]
        [--sigma-scales 1,0.1,0.01,0.001] [--C 1] [--tol 1e-6] [--selector-shapes 300x100,1000x300] [--md FILE]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from bench_l1svm_solvers import training_part
from bench_scale import make_data
from threadpoolctl import threadpool_limits

from fsbench.selectors import _l21_admm, make_selector
from fsbench.selectors._svm import signed_labels


def measure(X: np.ndarray, y: np.ndarray, penalty: str, C: float, tol: float, sigma_scale: float) -> dict:
    classes, codes = np.unique(y, return_inverse=True)
    Y = signed_labels(codes, classes.size)
    lam = 0.5 if penalty == "l21" else X.shape[1] ** -0.5
    default = _l21_admm.SIGMA_SCALE
    _l21_admm.SIGMA_SCALE = {**default, penalty: sigma_scale}
    try:
        with threadpool_limits(1):
            start = time.process_time()
            fit = _l21_admm.hinge_l21_admm(X, Y, C, lam, penalty=penalty, tol=tol)
            seconds = time.process_time() - start
    finally:
        _l21_admm.SIGMA_SCALE = default
    return {"iterations": fit.n_iter, "gap": fit.gap, "converged": fit.converged, "cpu_s": seconds,
            "support": int((np.abs(fit.W).sum(axis=1) > 0).sum())}


def selector_fit(name: str, X: np.ndarray, y: np.ndarray, solver: str) -> tuple[float, float]:
    """(CPU s, J reached) of the selector at its defaults with ``solver``."""
    est = make_selector(name, {"n_features_to_select": min(100, X.shape[1]), "solver": solver})
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.process_time()
        est.fit(X, y)
        seconds = time.process_time() - start
    return seconds, float(est.objective_[-1])


def side_by_side(shapes: str) -> list[str]:
    lines = ["", "| selector | n x d | ADMM CPU s | ADMM J | reweighting | its CPU s | its J | ratio |",
             "|---|---|---:|---:|---|---:|---:|---:|"]
    for shape in filter(None, shapes.split(",")):
        n, d = map(int, shape.split("x"))
        X, y = make_data(n, d)
        for name in ("l21svm", "sl21"):
            t_admm, j_admm = selector_fit(name, X, y, "admm")
            inner = "ip" if n <= 400 else "liblinear"
            t_rw, j_rw = selector_fit(name, X, y, inner)
            lines.append(f"| {name} | {n:,} x {d:,} | {t_admm:.2f} | {j_admm:.6g} | {inner} | {t_rw:.2f} | "
                         f"{j_rw:.6g} | {t_rw / t_admm:.1f}x |")
            print(lines[-1], flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="200x100,1000x300,5000x2000")
    ap.add_argument("--datasets", default="semeion", help="comma-separated registry names ('' for none)")
    ap.add_argument("--sigma-scales", default="1,0.1,0.01,0.001")
    ap.add_argument("--penalties", default="l21,l21_squared")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--selector-shapes", default="300x100,1000x300")
    ap.add_argument("--md", default=None)
    args = ap.parse_args()
    cases = [(f"make_classification {s.replace('x', ' x ')}", *make_data(*map(int, s.split("x"))))
             for s in args.shapes.split(",") if s]
    names = filter(None, args.datasets.split(","))
    cases += [(f"{name.upper()} (training part)", *training_part(name)) for name in names]
    lines = [
        f"`python benchmarks/bench_l21svm_admm.py --shapes {args.shapes} --datasets {args.datasets} "
        f"--sigma-scales {args.sigma_scales} --C {args.C:g} --tol {args.tol:g}` "
        f"({time.strftime('%Y-%m-%d')}, one BLAS thread, load {os.getloadavg()[0]:.1f}).",
        "",
        "| data | n x d | penalty | sigma scale | iterations | relative gap | CPU s | non-zero rows |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for label, X, y in cases:
        for penalty in args.penalties.split(","):
            for scale in map(float, args.sigma_scales.split(",")):
                r = measure(X, y, penalty, args.C, args.tol, scale)
                gap = f"{r['gap']:.1e}" + ("" if r["converged"] else " (max_iter)")
                line = (f"| {label.split(' ')[0]} | {X.shape[0]:,} x {X.shape[1]:,} | {penalty} | {scale:g} | "
                        f"{r['iterations']:,} | {gap} | {r['cpu_s']:.1f} | {r['support']:,} |")
                lines.append(line)
                print(line, flush=True)
    lines += side_by_side(args.selector_shapes)
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
