"""Dask cluster runs: overhead, scaling here, and a model of larger clusters.

1. Overhead: wall time of ``fsbench run CONFIG --scheduler local:2`` against ``-j 2`` on the
   same machine in the same invocation (quickstart and GLIOMA), each into a fresh folder,
   alternating the order over ``--rounds`` rounds; the ratio of medians.
2. Scaling here: the GLIOMA config on LocalClusters of 1 and 2 workers.
3. Model: from the committed per-task times of every paper result (runs.csv.gz, task_seconds,
   one per task), the reproduction's wall time on N workers: the lower bound max(longest task,
   total / N) and a longest-processing-time-first list schedule (what a cluster that starts
   the longest tasks first achieves at most 4/3 of the optimum; fsbench submits in
   repetition order, so its greedy schedule is shown too).

Usage: python benchmarks/bench_cluster.py [--rounds 2] [--data-dir DIR] > benchmarks/cluster.md
"""

from __future__ import annotations

import argparse
import heapq
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
KEY = ["dataset", "repeat", "fold", "selector"]


def wall(args: list[str], env: dict[str, str]) -> float:
    out = Path(tempfile.mkdtemp(prefix="fsbench-bench-cluster-"))
    try:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "fsbench.cli", "run", *args, "--out", str(out / "r"), "-q"],
                       check=True, cwd=REPO, env=env, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t
    finally:
        shutil.rmtree(out, ignore_errors=True)


def overhead(config: str, rounds: int, env: dict[str, str]) -> tuple[float, float]:
    local, cluster = [], []
    for r in range(rounds):
        pair = [("jobs", ["-j", "2"]), ("cluster", ["--scheduler", "local:2"])]
        for name, extra in pair if r % 2 == 0 else pair[::-1]:
            (local if name == "jobs" else cluster).append(wall([config, *extra], env))
    return float(np.median(local)), float(np.median(cluster))


def task_table() -> pd.DataFrame:
    tables = []
    for path in sorted((REPO / "results" / "papers").rglob("runs.csv.gz")):
        runs = pd.read_csv(path, usecols=[*KEY, "task_seconds"]).drop_duplicates(KEY)
        tables.append(runs.assign(results=path.parent.relative_to(REPO / "results" / "papers").as_posix()))
    return pd.concat(tables, ignore_index=True)


def list_schedule(durations: np.ndarray, workers: int) -> float:
    """Makespan of assigning each task, in the given order, to the worker free first."""
    free = [0.0] * workers
    for d in durations:
        heapq.heappush(free, heapq.heappop(free) + float(d))
    return max(free)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data-dir", default=os.environ.get("FSBENCH_DATA"))
    args = parser.parse_args()
    env = {**os.environ, "MPLBACKEND": "Agg"}
    if args.data_dir:
        env["FSBENCH_DATA"] = args.data_dir
    load = os.getloadavg()[0]
    print("# Dask cluster runs: overhead, scaling, model\n")
    print(f"Produced by `python benchmarks/bench_cluster.py --rounds {args.rounds}` on a {os.cpu_count()}-core "
          f"machine (load average {load:.1f} at the start; medians over {args.rounds} rounds, order alternated).\n")
    print("## Overhead: `--scheduler local:2` against `-j 2`\n")
    print("| config | -j 2 (s) | --scheduler local:2 (s) | ratio |")
    print("|---|---|---|---|")
    for config in ("configs/quickstart.yaml", "configs/glioma.yaml"):
        jobs, cluster = overhead(config, args.rounds, env)
        print(f"| {config} | {jobs:.1f} | {cluster:.1f} | {cluster / jobs:.2f} |")
    print("\n## Scaling here: GLIOMA on a LocalCluster of 1 and 2 workers\n")
    print("| workers | wall (s) |")
    print("|---|---|")
    one = wall(["configs/glioma.yaml", "--scheduler", "local:1"], env)
    two = wall(["configs/glioma.yaml", "--scheduler", "local:2"], env)
    print(f"| 1 | {one:.1f} |")
    print(f"| 2 | {two:.1f} (speedup {one / two:.2f}) |")
    tasks = task_table()
    times = tasks["task_seconds"]
    total, longest = float(times.sum()), float(times.max())
    lpt = np.sort(times.to_numpy())[::-1]
    print("\n## Model: the whole reproduction on N workers\n")
    print(f"From the committed results: {len(times)} tasks, {total:.0f} s of compute, the longest task "
          f"{longest:.0f} s ({100 * longest / total:.1f}% of the total). Lower bound max(longest, total / N); "
          "LPT: the longest tasks first; submitted order: tasks in the order of the committed files (fsbench "
          "submits repetition by repetition). Per-task times only: no data transfer or scheduler latency "
          "(measured above as the overhead ratio).\n")
    print("| workers | lower bound (s) | LPT schedule (s) | submitted order (s) |")
    print("|---|---|---|---|")
    for n in (1, 2, 16, 64, 256):
        bound = max(longest, total / n)
        print(f"| {n} | {bound:.0f} | {list_schedule(lpt, n):.0f} | {list_schedule(times.to_numpy(), n):.0f} |")
    top = tasks.sort_values("task_seconds", ascending=False).head(5)
    listed = "; ".join(f"{r.results} {r.dataset} {r.selector} repeat {r.repeat}: {r.task_seconds:.0f} s"
                       for r in top.itertuples())
    print(f"\nThe five longest tasks: {listed}. From about "
          f"{int(np.ceil(total / longest))} workers on, the longest task bounds the wall time.")


if __name__ == "__main__":
    main()
