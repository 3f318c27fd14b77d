"""The memory bar of sparse data: a text-like svmlight file of 20,000 samples x 100,000 features at
0.1 % non-zeros (4 classes) run end to end by ``fsbench run -j 1`` under 2 GB peak.

The file is written to a temporary folder: every sample stores 100 features drawn uniformly
(counts 1..5), and features 0..19 are informative (feature 5c + i, i < 5, is stored in 30 % of
the samples of class c, with counts 3..8), all drawn from ``Generator(PCG64(seed))``. The config
runs fisher, chi2, mim and l1svm, the linear SVM on LIBLINEAR with C in [0.01, 1, 100], one
holdout trial (60 % training) and k = 10..50. Densified, the matrix would take 16.0 GB.

Measured: the wall time of ``fsbench run`` and ``fsbench datasets info`` in a child process, and
their peak memory two ways: ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` after the child
ends (the largest resident set of any one process of the tree), and the sum of the resident
sets of the whole process tree polled from /proc every 0.05 s (pages a forked worker shares
with its parent are counted twice, so it overstates the tree's memory). The bar is on the
larger of the two.

    python benchmarks/bench_sparse.py [--selectors fisher,chi2,mim,l1svm] [--out benchmarks/sparse.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import scipy.sparse
from numpy.random import PCG64, Generator
from sklearn.datasets import dump_svmlight_file

N_SAMPLES, N_FEATURES, PER_ROW, N_CLASSES = 20_000, 100_000, 100, 4
N_INFORMATIVE_PER_CLASS, INFORMATIVE_RATE = 5, 0.3
BAR_BYTES = 2_000_000_000


def make_file(path: Path, seed: int = 0) -> tuple[int, int]:
    """Write the svmlight file; returns (non-zeros, size in bytes)."""
    rng = Generator(PCG64(seed))
    y = np.repeat(np.arange(N_CLASSES), N_SAMPLES // N_CLASSES)
    rng.shuffle(y)
    rows = np.repeat(np.arange(N_SAMPLES), PER_ROW)
    cols = rng.integers(N_INFORMATIVE_PER_CLASS * N_CLASSES, N_FEATURES, rows.size)
    vals = rng.integers(1, 6, rows.size).astype(np.float64)
    extra_rows, extra_cols, extra_vals = [], [], []
    for c in range(N_CLASSES):  # a loop over the classes and their informative features
        members = np.flatnonzero(y == c)
        for i in range(N_INFORMATIVE_PER_CLASS):
            chosen = members[rng.random(members.size) < INFORMATIVE_RATE]
            extra_rows.append(chosen)
            extra_cols.append(np.full(chosen.size, N_INFORMATIVE_PER_CLASS * c + i))
            extra_vals.append(rng.integers(3, 9, chosen.size).astype(np.float64))
    X = scipy.sparse.coo_matrix((np.concatenate([vals, *extra_vals]),
                                 (np.concatenate([rows, *extra_rows]), np.concatenate([cols, *extra_cols]))),
                                shape=(N_SAMPLES, N_FEATURES)).tocsr()
    X.sum_duplicates()
    X.data = np.minimum(X.data, 8.0)  # a feature drawn twice for a sample: a count, capped
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return int(X.nnz), path.stat().st_size


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def measure(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run ``command``; its wall time, the tree's polled peak and the largest process's ru_maxrss."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0
    done = threading.Event()

    def poll() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, sum(rss_bytes(p) for p in descendants(proc.pid)))
            time.sleep(0.05)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    output, _ = proc.communicate()
    done.set()
    watcher.join()
    seconds = time.perf_counter() - t0
    maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # kB on Linux
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}):\n{output}")
    return {"seconds": seconds, "tree_peak": peak, "maxrss": maxrss if maxrss > before * 1024 else float("nan"),
            "output": output}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--selectors", default="fisher,chi2,mim,l1svm")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("sparse.md"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    selectors = args.selectors.split(",")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "MPLBACKEND": "Agg"}
    fsbench = [sys.executable, "-m", "fsbench.cli"]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        data = folder / "text.svm"
        t0 = time.perf_counter()
        nnz, size = make_file(data, args.seed)
        write_seconds = time.perf_counter() - t0
        config = folder / "sparse.yaml"
        config.write_text(textwrap.dedent(f"""\
            name: sparse-bench
            seed: {args.seed}
            datasets:
              - {{name: text, path: {data.name}}}
            protocol: {{kind: holdout, train_size: 0.6, n_trials: 1}}
            selectors: [{", ".join(selectors)}]
            classifier: {{name: linear_svm, backend: liblinear, C: [0.01, 1, 100]}}
            n_features: [10, 20, 30, 40, 50]
            """))
        info = measure([*fsbench, "datasets", "info", str(data)], env)
        run = measure([*fsbench, "run", str(config), "-j", "1", "-q", "--out", str(folder / "results")], env)
        # the table and the summary's counts, without the temporary folder's paths
        table = "\n".join(line.split("; wrote ")[0] for line in run["output"].splitlines()
                          if not line.startswith("Browse the results"))  # names the temporary folder
    gb = 1e9
    lines = [
        "# Sparse data: the memory bar",
        "",
        f"`benchmarks/bench_sparse.py` (seed {args.seed}): an svmlight file of {N_SAMPLES:,} x {N_FEATURES:,} at "
        f"{nnz / (N_SAMPLES * N_FEATURES):.3%} non-zeros ({nnz:,}; {size / 1e6:.1f} MB on disk, written in "
        f"{write_seconds:.0f} s; 16.0 GB densified), {N_CLASSES} classes, features 0..19 informative. "
        f"`fsbench run -j 1` with selectors {', '.join(selectors)}; `linear_svm` on LIBLINEAR, C in "
        "[0.01, 1, 100]; one holdout trial (60 % training); k = 10..50.",
        "",
        "Peak memory: *tree* is the sum of the resident sets of the command's process tree polled from /proc "
        "every 0.05 s (a forked worker's pages shared with its parent counted twice: an upper bound); *largest "
        "process* is `getrusage(RUSAGE_CHILDREN).ru_maxrss` after the command ended. Bar: under 2 GB.",
        "",
        "| command | wall time | peak, tree | peak, largest process | under 2 GB |",
        "|---|---|---|---|---|",
    ]
    for name, m in (("fsbench datasets info", info), ("fsbench run -j 1", run)):
        worst = max(m["tree_peak"], 0 if np.isnan(m["maxrss"]) else m["maxrss"])
        lines.append(f"| `{name}` | {m['seconds']:.1f} s | {m['tree_peak'] / gb:.2f} GB | "
                     f"{m['maxrss'] / gb:.2f} GB | {'yes' if worst < BAR_BYTES else 'NO'} |")
    load = os.getloadavg()
    lines += ["", f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
                  f"load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}.", "",
              "The run's table (test accuracy by k):", "", "```", table.strip(), "```", ""]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
