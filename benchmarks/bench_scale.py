"""How every registered selector, its Python peers and the whole evaluation protocol scale with the
number of samples n and of features d: fit time (CPU and wall) and peak memory, one process each.

Owns ``benchmarks/scale.csv`` (one row per measurement) and ``benchmarks/scale.md`` (its tables);
:func:`load_scale_table` reads the CSV with its types (the cost model of ``fsbench run --dry-run``
is fitted on it).

What is measured:

- every selector of :func:`fsbench.selectors.registry` with its default parameters and
  ``n_features_to_select = min(100, d)``, at n in 100..30,000 with d = 1,000 and at
  d in 1,000..100,000 with n = 200 (axes ``n`` and ``d``);
- the peers where they exist, called as the cases of ``benchmarks/baseline_cases.py`` define them
  (imported from ``bench_baselines.all_cases``) and, for ReliefF, mRMR (mrmr_selection), the
  t-test, chi2 and information gain, with the calls of ``benchmarks/bench_filters.py``; where a
  case calls fsbench with other parameters or on prepared input (``Case.prepare``, for example
  discretized states), fsbench is measured once more on that input with those parameters
  (``what = paired``), so that every ratio compares equal work;
- the whole protocol, ``fsbench run`` of a generated config (fisher, linear SVM with C tuned over
  1e-4..1e2 by 3-fold inner CV, k = 10..100, one 70:30 hold-out split) at n in 500..8,000 with
  d = 2,000, once per backend of the linear SVM.

The data are ``sklearn.datasets.make_classification`` (4 classes, 20 informative features,
seed 0, then z-scored), generated once per size into a temporary folder and read by every
measurement of that size. Each measurement runs in its own child process (one BLAS thread;
``RLIMIT_AS`` caps its address space, 10 GB by default; it is killed once the CPU time of its
process tree passes the time cap, 300 s by default, or its wall time three times the cap: the
machine may be shared, and CPU time is what a loaded machine does not inflate); the child times
``fit`` alone (``time.process_time`` and wall clock; data loading and the peers' ``prepare`` are
not timed), the parent reads the child's peak resident set from ``wait4``. Sizes are walked
upward, every entry at one size before the next size: a size at least as large in n and in d as
one that exceeded a cap is marked beyond that cap without running; a size whose CPU time,
extrapolated from the growth exponent of the two previous measured sizes (both >= 0.05 s), would
exceed twice the time cap is skipped and marked with the prediction.

Usage::

    python benchmarks/bench_scale.py [--selectors a,b] [--axis n|d|protocol|all] [--cap-seconds 300]
        [--out benchmarks/scale.csv] [--resume] [--label before|after] [--md benchmarks/scale.md]
    python benchmarks/bench_scale.py --render --out benchmarks/scale.csv --md benchmarks/scale.md

The fsbench measured is the one Python imports (set ``PYTHONPATH`` to measure another checkout;
the child processes inherit it). ``--resume`` skips the rows already in the CSV, so a long run
can be continued; ``--label`` tells two runs (two code versions) apart in one CSV.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import platform
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent

N_SIZES = (100, 300, 1_000, 3_000, 10_000, 30_000)
N_AXIS_D = 1_000
D_SIZES = (1_000, 10_000, 100_000)
#: ``--axis bar``: the sparse models at the size of their bar (60 s of one core each), always run to the cap
BAR_SIZE = (5_000, 2_000)
BAR_SELECTORS = ("rfs", "l1svm", "l21svm", "sl21", "cssvm", "dso", "sl2p")
D_AXIS_N = 200
PROTOCOL_SIZES = (500, 2_000, 8_000)
PROTOCOL_D = 2_000
N_CLASSES, N_INFORMATIVE, SEED, N_SELECT = 4, 20, 0, 100
C_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2)
#: a child is killed when its CPU time exceeds the cap, or its wall time this many times the cap
WALL_FACTOR = 4.0
#: times below this are left out of growth exponents and extrapolations (start-up noise dominates)
MIN_TIME = 0.05

COLUMNS = ("label", "what", "name", "method", "pair", "axis", "n", "d", "cpu_s", "wall_s", "peak_mb", "base_mb",
           "status", "predicted_s", "cap_s", "cap_gb", "note", "load1", "date", "commit")
BEYOND = ("beyond_time_cap", "beyond_memory_cap")
STATUSES = ("ok", *BEYOND, "predicted_beyond_cap")  # and "error: ..."
_FLOATS = ("cpu_s", "wall_s", "peak_mb", "base_mb", "predicted_s", "cap_s", "cap_gb", "load1")
_STRINGS = ("label", "what", "name", "method", "pair", "axis", "status", "note", "date", "commit")


# ----------------------------------------------------------------------------- pure parts
def growth_exponent(sizes: Sequence[float], times: Sequence[float], min_time: float = MIN_TIME) -> float:
    """Least-squares slope of log(time) on log(size) over the points with a finite time >= ``min_time``;
    NaN with fewer than two such points of distinct sizes."""
    s, t = np.asarray(sizes, dtype=float), np.asarray(times, dtype=float)
    keep = np.isfinite(t) & (t >= min_time)
    x, z = np.log(s[keep]), np.log(t[keep])
    if np.unique(x).size < 2:
        return math.nan
    x, z = x - x.mean(), z - z.mean()
    return float((x * z).sum() / (x * x).sum())


@dataclass(frozen=True)
class Point:
    """One earlier measurement (or decision) of the same selector, peer or protocol."""

    n: int
    d: int
    cpu_s: float
    status: str


def plan_size(done: Iterable[Point], n: int, d: int, cap_s: float,
              min_time: float = MIN_TIME) -> tuple[str, float, str]:
    """Whether to run the size (n, d), given what was decided for smaller sizes: ``("run", nan, "")``,
    or the status to record without running, the predicted seconds and a note.

    A size at least as large in n and in d as one that exceeded a cap is beyond that cap. Otherwise,
    along the axis of (n, d) (the earlier points sharing its n or its d), the CPU time of the two
    largest measured smaller sizes s1 < s2 (both >= ``min_time``) gives a growth exponent
    b = log(t2 / t1) / log(s2 / s1), and t2 (size / s2)^b > 2 ``cap_s`` is "predicted_beyond_cap"."""
    done = list(done)
    for p in done:
        if p.status in BEYOND and p.n <= n and p.d <= d and (p.n, p.d) != (n, d):
            return p.status, math.nan, f"not run: {p.n} x {p.d} was {p.status.replace('_', ' ')}"
    for same, size, size_of in ((lambda p: p.d == d, n, lambda p: p.n), (lambda p: p.n == n, d, lambda p: p.d)):
        ok = sorted((size_of(p), p.cpu_s) for p in done if same(p) and p.status == "ok" and size_of(p) < size)
        if len(ok) < 2:
            continue
        (s1, t1), (s2, t2) = ok[-2:]
        if min(t1, t2) < min_time:
            continue
        b = math.log(t2 / t1) / math.log(s2 / s1)
        predicted = t2 * (size / s2) ** b
        if predicted > 2 * cap_s:
            return ("predicted_beyond_cap", predicted,
                    f"predicted {predicted:.3g} s (exponent {b:.2f} from {s1} and {s2})")
    return "run", math.nan, ""


def format_cell(row: dict[str, Any] | pd.Series) -> str:
    """One table cell: "CPU seconds / peak MB", or what stopped the measurement."""
    status = str(row["status"])
    cap = float(row["cap_s"]) if pd.notna(row.get("cap_s")) else math.nan
    if status == "ok":
        return f"{_seconds(float(row['cpu_s']))} / {float(row['peak_mb']):.0f}"
    if status == "beyond_time_cap":
        return f"> {cap:.0f} s"
    if status == "beyond_memory_cap":
        gb = row.get("cap_gb")
        return f"> {float(gb):g} GB" if gb is not None and pd.notna(gb) else "> memory cap"
    if status == "predicted_beyond_cap":
        return f"> cap (predicted {_seconds(float(row['predicted_s']))} s)"
    return "error"


def _seconds(t: float) -> str:
    if t >= 100:
        return f"{t:,.0f}"
    return f"{t:.3g}" if t >= 0.01 else f"{t:.1e}"


def load_scale_table(path: str | Path) -> pd.DataFrame:
    """The CSV of :func:`main`, typed: n and d integers, the times, memories, cap and load floats (NaN where
    not measured), the rest strings ("" where empty)."""
    df = pd.read_csv(path, dtype={c: "string" for c in _STRINGS}, keep_default_na=False,
                     na_values={c: [""] for c in _FLOATS})
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path} lacks the columns {', '.join(missing)}; it is not a table of bench_scale.py "
                         "(write it with benchmarks/bench_scale.py --out).")
    df = df[list(COLUMNS)]
    for c in _STRINGS:
        df[c] = df[c].fillna("").astype(str)
    for c in _FLOATS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    for c in ("n", "d"):
        df[c] = df[c].astype(np.int64)
    return df


# ----------------------------------------------------------------------------- markdown
def size_table(sub: pd.DataFrame, axis: str, with_method: bool = False) -> list[str]:
    """Markdown rows: one per name (and its fsbench method), one column per size along ``axis``."""
    sizes = sorted(sub[axis].unique())
    head = "| method | name |" if with_method else "| name |"
    lines = [head + " " + " | ".join(f"{axis} = {s:,}" for s in sizes) + " |",
             "|" + "---|" * (1 + with_method) + "---:|" * len(sizes)]
    for (method, name), rows in sub.groupby(["method", "name"], sort=True):
        by_size = {r[axis]: format_cell(r) for _, r in rows.iterrows()}
        lines.append(("| " + method + " " if with_method else "") + f"| {name} | "
                     + " | ".join(by_size.get(s, "") for s in sizes) + " |")
    return lines


def _axis_frame(df: pd.DataFrame, axis: str) -> pd.DataFrame:
    return df[df.axis == axis]


def exponents(df: pd.DataFrame) -> pd.DataFrame:
    """Growth exponents of CPU time per (label, what, name) along each axis (the measured sizes only)."""
    out = []
    for (label, what, name), rows in df.groupby(["label", "what", "name"], sort=True):
        rec = {"label": label, "what": what, "name": name}
        for axis, size in (("n", "n"), ("d", "d"), ("protocol", "n")):
            ok = rows[(rows.axis == axis) & (rows.status == "ok")]
            rec[axis] = growth_exponent(ok[size].to_numpy(), ok.cpu_s.to_numpy())
        out.append(rec)
    return pd.DataFrame(out, columns=["label", "what", "name", "n", "d", "protocol"])


def ratios(df: pd.DataFrame) -> pd.DataFrame:
    """peer CPU time / fsbench CPU time at every size where fsbench was measured (fsbench's paired row where
    the peer has one, else the default selector's row): ``bound`` "=" where the peer was measured too, ">"
    (the cap over fsbench's time) where the peer was beyond the time cap."""
    out = []
    for _, peer in df[(df.what == "peer") & df.status.isin(["ok", "beyond_time_cap"])].iterrows():
        mine = df[(df.label == peer.label) & (df.n == peer.n) & (df.d == peer.d) & (df.status == "ok")]
        mine = mine[(mine.what == "paired") & (mine.name == peer.pair)] if peer.pair else \
            mine[(mine.what == "selector") & (mine.name == peer.method)]
        if len(mine):
            ok = peer.status == "ok"
            out.append({"label": peer.label, "axis": peer.axis, "method": peer.method, "peer": peer["name"],
                        "n": peer.n, "d": peer.d, "bound": "=" if ok else ">",
                        "ratio": (peer.cpu_s if ok else peer.cap_s) / mine.cpu_s.iloc[0]})
    return pd.DataFrame(out, columns=["label", "axis", "method", "peer", "n", "d", "bound", "ratio"])


def _versions() -> str:
    import importlib.metadata as md

    parts = [f"Python {platform.python_version()}"]
    for dist in ("numpy", "scipy", "scikit-learn", "skrebate", "skfeature-chappers", "ITMO_FS", "mrmr_selection"):
        try:
            parts.append(f"{dist} {md.version(dist)}")
        except md.PackageNotFoundError:
            pass
    return ", ".join(parts)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def coverage(sub: pd.DataFrame) -> str:
    """How much of the run the rows hold: their count by status, and the sizes reached on each axis."""
    counts = sub.status.str.split(":").str[0].value_counts()
    counts = counts.sort_index().sort_values(ascending=False, kind="stable")  # ties by name
    reached = []
    for axis in ("n", "d", "protocol"):
        sizes = sorted(sub.loc[sub.axis == axis, "d" if axis == "d" else "n"].unique())
        if sizes:
            reached.append(f"{axis} {', '.join(f'{s:,}' for s in sizes)}")
    return (f"{len(sub)} rows: " + ", ".join(f"{count} {status}" for status, count in counts.items())
            + "; sizes reached: " + "; ".join(reached) + ".")


def render_markdown(df: pd.DataFrame) -> str:
    """``scale.md``: per label, a table per size axis (selectors, peers and fsbench at the peers'
    settings, protocol), the growth exponents and the peer / fsbench ratios."""
    lines = ["# How the selectors, their peers and the protocol scale", "",
             "Generated by `benchmarks/bench_scale.py` from `scale.csv` (one row per measurement). "
             f"Machine: {_cpu_model()}, {os.cpu_count()} cores, shared with other jobs; {_versions()}.", ""]
    for label, sub in df.groupby("label", sort=False):
        dates = sorted(d for d in sub.date if d)
        commits = ", ".join(sorted(set(sub.commit) - {""}))
        lines += [f"## Label `{label or '(none)'}`", "",
                  f"fsbench commit {commits or 'unknown'}; measured {dates[0][:16]} to {dates[-1][:16]} "
                  f"(UTC); load average (1 min) at the start of each measurement {sub.load1.min():.2f} to "
                  f"{sub.load1.max():.2f}. Each measurement ran in its own process on one BLAS thread, killed "
                  f"once its CPU time passed {sub.cap_s.max():.0f} s (or its wall time {WALL_FACTOR:g} times "
                  f"that) and limited to {sub.cap_gb.max():g} GB of address space. Cells: CPU seconds of the fit "
                  "(data loading and the peers' prepared input not timed) / peak resident MB of the child process "
                  "(its imports and data included); \"> cap\": stopped at a cap, or not run because a smaller "
                  "size was, or predicted beyond it (`status`, `note` and `predicted_s` in the CSV); \"error\": "
                  "the message is in the CSV's `status`.", "",
                  coverage(sub), ""] if dates else []
        for what, title in (("selector", "Selectors (default parameters, k = min(100, d))"),
                            ("peer", "Peers (as the cases of bench_baselines.py / bench_filters.py call them)"),
                            ("paired", "fsbench at the peers' settings (their parameters, on their prepared "
                                       "input)")):
            for axis, fixed in (("n", f"d = {N_AXIS_D:,}"), ("d", f"n = {D_AXIS_N:,}")):
                part = _axis_frame(sub[sub.what == what], axis)
                if len(part):
                    lines += [f"### {title}, {fixed}", "", *size_table(part, axis, what == "peer"), ""]
        part = sub[(sub.what == "selector") & (sub.axis == "bar")]
        if len(part):
            n_bar, d_bar = BAR_SIZE
            lines += [f"### The sparse models at n = {n_bar:,}, d = {d_bar:,} (bar: 60 s of one core each)", "",
                      "| name | CPU s | peak MB | status |", "|---|---:|---:|---|"]
            for r in part.sort_values("name").itertuples():
                cpu = f"{r.cpu_s:.3g}" if r.status == "ok" else f"> {r.cap_s:.0f}"
                lines.append(f"| {r.name} | {cpu} | {r.peak_mb:.0f} | {r.status} |")
            lines.append("")
        part = sub[sub.what == "protocol"]
        if len(part):
            lines += [f"### The whole protocol (`fsbench run`, one task), d = {PROTOCOL_D:,}", "",
                      "Cells: CPU seconds of the whole `fsbench run` (its start-up, worker, table and figures "
                      "included) / peak resident MB of its largest process.", "",
                      *size_table(part, "n"), ""]
        exp = exponents(sub)
        if exp[["n", "d", "protocol"]].notna().to_numpy().any():
            lines += ["### Growth exponents of CPU time", "",
                      f"Least-squares slope of log(CPU s) on log(size) over the measured sizes with CPU >= "
                      f"{MIN_TIME} s; blank: fewer than two such sizes.", "",
                      "| what | name | n | d | protocol (n) |", "|---|---|---:|---:|---:|"]
            for r in exp.itertuples():
                cells = [("" if math.isnan(v) else f"{v:.2f}") for v in (r.n, r.d, r.protocol)]
                if any(cells):
                    lines.append(f"| {r.what} | {r.name} | " + " | ".join(cells) + " |")
            lines.append("")
        rat = ratios(sub)
        if len(rat):
            lines += ["### Peer / fsbench CPU time (how many times faster fsbench is)", "",
                      "fsbench's time is the paired row's (the peer's parameters and input) where the peer has "
                      "one, else the default selector's; \"> \": the peer passed the time cap (or a smaller size "
                      "did), so the ratio is at least the cap over fsbench's time.", ""]
            for axis in ("n", "d"):
                part = rat[rat.axis == axis]
                if not len(part):
                    continue
                sizes = sorted(part[axis].unique())
                lines += ["| method | peer | " + " | ".join(f"{axis} = {s:,}" for s in sizes) + " |",
                          "|---|---|" + "---:|" * len(sizes)]
                for (method, peer), rows in part.groupby(["method", "peer"], sort=True):
                    by = {r[axis]: ("> " if r.bound == ">" else "") + f"{r.ratio:,.3g}x" for _, r in rows.iterrows()}
                    lines.append(f"| {method} | {peer} | " + " | ".join(by.get(s, "") for s in sizes) + " |")
                lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# ----------------------------------------------------------------------------- data
def make_data(n: int, d: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """make_classification (4 classes, 20 informative features), every feature z-scored."""
    from sklearn.datasets import make_classification
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        X, y = make_classification(n_samples=n, n_features=d, n_informative=N_INFORMATIVE, n_classes=N_CLASSES,
                                   random_state=seed)
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0), y.astype(np.int64)


class DataFolder:
    """The data of each size, generated on first use into one temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[tuple[int, int], tuple[Path, Path]] = {}

    def paths(self, n: int, d: int) -> tuple[Path, Path]:
        if (n, d) not in self.made:
            X, y = make_data(n, d)
            px, py = self.root / f"X_{n}_{d}.npy", self.root / f"y_{n}_{d}.npy"
            np.save(px, X)
            np.save(py, y)
            self.made[(n, d)] = (px, py)
        return self.made[(n, d)]

    def npz(self, n: int, d: int) -> Path:
        path = self.root / f"data_{n}_{d}.npz"
        if not path.exists():
            X, y = make_data(n, d)
            np.savez(path, X=X, y=y)
        return path


# ----------------------------------------------------------------------------- what is measured
@dataclass(frozen=True)
class Entry:
    """One line of the tables: a selector, a peer, fsbench at a peer's settings, or the protocol."""

    what: str  # selector | peer | paired | protocol
    name: str
    method: str
    pair: str = ""  # a peer's paired row ("" : the default selector's row)


def peer_cases() -> list:
    """The peers: every case of bench_baselines.py, then the calls of bench_filters.py (skrebate's ReliefF,
    mrmr_selection, scipy's t-test, scikit-learn's chi2 and mutual information, scikit-feature's
    information gain) as cases on fsbench's default states."""
    sys.path.insert(0, str(HERE))
    from baseline_cases import Case
    from baselines_correlation import states
    from bench_baselines import all_cases
    from bench_filters import mrmr_selection_miq, scipy_ovr_t, skfeature_ig, sklearn_chi2_onehot, skrebate_relieff
    from sklearn.feature_selection import mutual_info_classif

    def no_compare(fitted: Any, peer: np.ndarray, k: int) -> str:
        return ""

    filters = [
        Case("relieff", {"miss_weighting": "uniform"}, "skrebate 0.8.4 ReliefF (10 neighbours)",
             lambda X, y, k: skrebate_relieff(X, y, 10), no_compare),
        Case("mrmr", {"criterion": "miq"}, "mrmr_selection 0.2.8 mrmr_base + scikit-feature MI (MIQ)",
             lambda X, y, k: mrmr_selection_miq(states(X), y, k)[0], no_compare),
        Case("ttest", {}, "scipy ttest_ind (Welch), one-vs-rest loop", lambda X, y, k: scipy_ovr_t(X, y),
             no_compare),
        Case("chi2", {}, "scikit-learn OneHotEncoder + chi2, summed", lambda X, y, k: sklearn_chi2_onehot(
            states(X), y), no_compare),
        Case("infogain", {}, "scikit-learn mutual_info_classif(discrete)",
             lambda X, y, k: mutual_info_classif(states(X), y, discrete_features=True), no_compare),
        Case("infogain", {}, "scikit-feature 1.2.1 information_gain per feature",
             lambda X, y, k: skfeature_ig(states(X), y), no_compare),
    ]
    return all_cases() + filters


def pair_name(case: Any, defaults: dict[str, Any]) -> str:
    """The paired row a peer's case needs ("" when fsbench's default selector does the same work: default
    parameters but a seed, no prepared input)."""
    differs = {k: v for k, v in case.params.items() if k != "random_state" and defaults.get(k) != v}
    if case.prepare is None and not differs:
        return ""
    params = ", ".join(f"{k}={v}" for k, v in sorted(case.params.items()))
    on = f" on {case.prepare.__module__}.{case.prepare.__name__}" if case.prepare is not None else ""
    return f"{case.method}({params}){on}"


def entries(selectors: set[str] | None, peers: bool) -> list[Entry]:
    from fsbench.selectors import registry

    reg = registry()
    out = [Entry("selector", name, name) for name in reg if selectors is None or name in selectors]
    if peers:
        paired: dict[str, Entry] = {}
        for case in peer_cases():
            if selectors is not None and case.method not in selectors:
                continue
            pair = pair_name(case, reg[case.method].params)
            if pair:
                paired.setdefault(pair, Entry("paired", pair, case.method))
            out.append(Entry("peer", case.peer, case.method, pair))
        out += list(paired.values())
    return out


def find_case(entry_what: str, name: str) -> tuple[Any, dict[str, Any]]:
    from fsbench.selectors import registry

    reg = registry()
    for case in peer_cases():
        if (entry_what == "peer" and case.peer == name) or \
                (entry_what == "paired" and pair_name(case, reg[case.method].params) == name):
            return case, reg[case.method].params
    raise KeyError(f"no peer case named {name!r}")


# ----------------------------------------------------------------------------- child processes
def _in_own_group_limited(max_bytes: int) -> Callable[[], None]:
    """In the child before it starts: its own process group (killed as one) and the address-space limit."""
    def setup() -> None:
        os.setpgid(0, 0)
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))

    return setup


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        env[var] = "1"
    env.setdefault("MPLBACKEND", "Agg")
    return env


@dataclass
class ChildRun:
    returncode: int
    wall_s: float
    cpu_s: float  # of the child and the descendants it waited for
    peak_mb: float
    timed_out: bool
    stderr: str


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of a live process, its live descendants and the children it reaped."""
    import psutil

    try:
        proc = psutil.Process(pid)
        t = proc.cpu_times()
        total = t.user + t.system + t.children_user + t.children_system
        for child in proc.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                c = child.cpu_times()
                total += c.user + c.system
        return total
    except psutil.Error:
        return math.nan


def run_child(argv: list[str], cap_s: float, max_bytes: int, log: Path) -> ChildRun:
    """Run ``argv`` in a new process group under the memory limit; kill the group once its CPU time exceeds
    ``cap_s`` seconds (or its wall time ``WALL_FACTOR`` times that)."""
    with open(log, "w") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=child_env(),
                                preexec_fn=_in_own_group_limited(max_bytes))
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > WALL_FACTOR * cap_s or tree_cpu_seconds(proc.pid) > cap_s:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(min(1.0, 0.05 + (time.perf_counter() - t0) / 30))  # short fits end soon; long ones polled less
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if timed_out:
        with open(log, "a") as err:
            err.write("killed at the time cap\n")
        try:  # workers of a killed run left in its process group
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return ChildRun(proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, timed_out,
                    log.read_text(errors="replace")[-4000:])


def _memory_failure(text: str) -> bool:
    return any(s in text for s in ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "malloc failed",
                                   "Unable to allocate"))


def _error_status(text: str, fallback: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else fallback
    return "error: " + last.replace("\n", " ")[:200]


def child_main(spec_path: str) -> None:
    """In the child: load the data, build what the spec names, time its fit, write the result file."""
    spec = json.loads(Path(spec_path).read_text())
    from threadpoolctl import threadpool_limits

    from fsbench.selectors import make_selector

    X, y = np.load(spec["x"]), np.load(spec["y"])
    k = min(N_SELECT, X.shape[1])
    if spec["what"] == "selector":
        selector = make_selector(spec["method"], {"n_features_to_select": k})
        run = lambda: selector.fit(X, y)  # noqa: E731
    else:
        case, _ = find_case(spec["what"], spec["name"])
        if case.prepare is not None:
            X, y = case.prepare(X, y)
        if spec["what"] == "peer":
            run = lambda: case.run_peer(X, y, min(case.n_picks, X.shape[1]))  # noqa: E731
        else:
            selector = make_selector(case.method, {**case.params, "n_features_to_select": k})
            run = lambda: selector.fit(X, y)  # noqa: E731
    result: dict[str, Any] = {"base_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    with threadpool_limits(1):
        c0, t0 = time.process_time(), time.perf_counter()
        try:
            run()
        except MemoryError:
            result["status"] = "beyond_memory_cap"
        else:
            result["status"] = "ok"
        result["wall_s"] = time.perf_counter() - t0
        result["cpu_s"] = time.process_time() - c0
    Path(spec["result"]).write_text(json.dumps(result))


def measure_fit(entry: Entry, data: tuple[Path, Path], cap_s: float, max_bytes: int, work: Path) -> dict[str, Any]:
    spec = {"what": entry.what, "name": entry.name, "method": entry.method, "x": str(data[0]), "y": str(data[1]),
            "result": str(work / "result.json")}
    Path(spec["result"]).unlink(missing_ok=True)
    (work / "spec.json").write_text(json.dumps(spec))
    run = run_child([sys.executable, str(Path(__file__).resolve()), "--child", str(work / "spec.json")], cap_s,
                    max_bytes, work / "child.log")
    out = {"peak_mb": run.peak_mb, "wall_s": math.nan, "cpu_s": math.nan, "base_mb": math.nan}
    result = Path(spec["result"])
    if run.timed_out:
        out.update(status="beyond_time_cap", wall_s=run.wall_s, note="killed at the cap")
    elif result.exists():
        out.update(json.loads(result.read_text()))
    elif _memory_failure(run.stderr):
        out.update(status="beyond_memory_cap", note="allocation failed outside Python")
    else:
        out.update(status=_error_status(run.stderr, f"exit status {run.returncode}"))
    return out


def protocol_config(name: str, data: Path, backend: str) -> str:
    classifier = {"name": "linear_svm", "C": list(C_GRID)}
    if backend != "default":
        classifier["backend"] = backend
    doc = {"name": name, "seed": 0, "datasets": [{"name": name, "path": str(data), "x": "X", "y": "y"}],
           "preprocessing": {"standardize": "train"},
           "protocol": {"kind": "holdout", "train_size": 0.7, "n_trials": 1},
           "inner_cv": {"n_splits": 3}, "selectors": ["fisher"], "classifier": classifier,
           "n_features": {"start": 10, "stop": 100, "step": 10}, "n_jobs": 1}
    return json.dumps(doc, indent=1)  # JSON is YAML


def protocol_backends() -> list[str]:
    """The linear SVM's backends to run the protocol with: every one fsbench accepts (libsvm, liblinear,
    and auto where it exists)."""
    from fsbench.configuration.parse import BACKENDS

    return [b for b in ("auto", "libsvm", "liblinear") if b in BACKENDS]


def measure_protocol(n: int, backend: str, data: DataFolder, cap_s: float, max_bytes: int,
                     work: Path) -> dict[str, Any]:
    name = f"scale-n{n}-{backend}"
    folder = Path(tempfile.mkdtemp(prefix=name + "-", dir=work))
    config = folder / "config.yaml"
    config.write_text(protocol_config(name, data.npz(n, PROTOCOL_D), backend))
    run = run_child([sys.executable, "-m", "fsbench.cli", "run", str(config), "-o", str(folder / "out"), "-q"],
                    cap_s, max_bytes, folder / "run.log")
    out = {"peak_mb": run.peak_mb, "wall_s": run.wall_s, "cpu_s": run.cpu_s, "base_mb": math.nan}
    if run.timed_out:
        out.update(status="beyond_time_cap", cpu_s=math.nan, note="killed at the cap")
    elif run.returncode == 0:
        out.update(status="ok")
    else:
        failures = folder / "out" / "failures.csv"
        text = run.stderr + (failures.read_text(errors="replace") if failures.exists() else "")
        out.update(status="beyond_memory_cap" if _memory_failure(text) else
                   _error_status(run.stderr, f"exit status {run.returncode}"))
    return out


# ----------------------------------------------------------------------------- the run
def fsbench_commit() -> str:
    import fsbench

    root = Path(fsbench.__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "fsbench"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"fsbench {fsbench.__version__}"
    return head + ("+edits" if dirty else "")


class Table:
    """The CSV, appended to row by row (a killed run keeps every finished row)."""

    def __init__(self, path: Path, resume: bool) -> None:
        self.path = path
        if path.exists() and path.stat().st_size and not resume:
            raise SystemExit(f"{path} exists; pass --resume to continue it, or another --out.")
        self.rows: list[dict[str, Any]] = []
        if path.exists() and path.stat().st_size:
            self.rows = load_scale_table(path).to_dict("records")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", newline="") as f:
                csv.writer(f).writerow(COLUMNS)

    def find(self, label: str, entry: Entry, n: int, d: int) -> dict[str, Any] | None:
        for r in self.rows:
            if (r["label"], r["what"], r["name"], r["n"], r["d"]) == (label, entry.what, entry.name, n, d):
                return r
        return None

    def history(self, label: str, entry: Entry) -> list[Point]:
        return [Point(int(r["n"]), int(r["d"]), float(r["cpu_s"]), str(r["status"])) for r in self.rows
                if (r["label"], r["what"], r["name"]) == (label, entry.what, entry.name)]

    def append(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        with open(self.path, "a", newline="") as f:
            csv.writer(f).writerow(["" if isinstance(row.get(c), float) and math.isnan(row[c]) else
                                    (f"{row[c]:.6g}" if isinstance(row.get(c), float) else row.get(c, ""))
                                    for c in COLUMNS])


def sizes_of(axis: str, args: argparse.Namespace) -> list[tuple[int, int]]:
    if axis == "n":
        return [(n, N_AXIS_D) for n in args.n_sizes]
    if axis == "d":
        return [(D_AXIS_N, d) for d in args.d_sizes]
    if axis == "bar":
        return [BAR_SIZE]
    return [(n, PROTOCOL_D) for n in args.protocol_sizes]


def run(args: argparse.Namespace) -> None:
    table = Table(args.out, args.resume)
    commit = fsbench_commit()
    selectors = set(args.selectors.split(",")) if args.selectors else None
    axes = ["n", "d", "protocol"] if args.axis == "all" else [args.axis]
    max_bytes = int(args.cap_gb * 1024**3)
    fits = entries(selectors, not args.no_peers) if set(axes) - {"protocol"} else []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        work = Path(tmp)
        data = DataFolder(work)
        for axis in axes:
            todo = fits if axis != "protocol" else [Entry("protocol", f"fisher, linear_svm backend={b}", "fisher")
                                                    for b in protocol_backends()]
            if axis == "bar":
                todo = [e for e in fits if e.what == "selector" and e.name in BAR_SELECTORS]
            for n, d in sizes_of(axis, args):  # every entry at one size, then the next size
                for entry in todo:
                    if table.find(args.label, entry, n, d) is not None:
                        continue
                    decision, predicted, note = plan_size(table.history(args.label, entry), n, d, args.cap_seconds)
                    if axis == "bar":  # measured whatever the other axes predict
                        decision, predicted, note = "run", math.nan, ""
                    row = {"label": args.label, "what": entry.what, "name": entry.name, "method": entry.method,
                           "pair": entry.pair, "axis": axis, "n": n, "d": d, "cap_s": float(args.cap_seconds),
                           "cap_gb": float(args.cap_gb),
                           "load1": os.getloadavg()[0], "date": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
                           "commit": commit, "predicted_s": predicted, "note": note}
                    if decision != "run":
                        row.update(status=decision, cpu_s=math.nan, wall_s=math.nan, peak_mb=math.nan,
                                   base_mb=math.nan)
                    elif axis == "protocol":
                        row.update(measure_protocol(n, entry.name.rsplit("=", 1)[1], data, args.cap_seconds,
                                                    max_bytes, work))
                    else:
                        row.update(measure_fit(entry, data.paths(n, d), args.cap_seconds, max_bytes, work))
                    table.append(row)
                    print(f"{row['date']} {axis} {entry.what:8s} {entry.name[:60]:60s} n={n} d={d}: {row['status']}"
                          f" cpu {row['cpu_s']:.3g} s wall {row['wall_s']:.3g} s peak {row['peak_mb']:.0f} MB"
                          f" {row['note']}", flush=True)


def _ints(text: str) -> list[int]:
    return [int(x.replace("_", "")) for x in text.split(",") if x]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--selectors", default="", help="comma-separated registered names (default: all), their "
                                                     "peers included")
    ap.add_argument("--axis", choices=("n", "d", "protocol", "bar", "all"), default="all",
                    help="all: n, d and protocol; bar: the sparse models at n = 5,000, d = 2,000")
    ap.add_argument("--cap-seconds", type=float, default=300.0, help="wall seconds before a child is killed")
    ap.add_argument("--cap-gb", type=float, default=10.0, help="address-space limit of each child (GB)")
    ap.add_argument("--out", type=Path, default=HERE / "scale.csv")
    ap.add_argument("--resume", action="store_true", help="keep the rows already in --out and add the missing ones")
    ap.add_argument("--label", default="", help="tells two runs (two code versions) apart in one CSV")
    ap.add_argument("--no-peers", action="store_true", help="the selectors alone")
    ap.add_argument("--n-sizes", type=_ints, default=list(N_SIZES))
    ap.add_argument("--d-sizes", type=_ints, default=list(D_SIZES))
    ap.add_argument("--protocol-sizes", type=_ints, default=list(PROTOCOL_SIZES))
    ap.add_argument("--md", type=Path, help="write the tables of the whole --out here (after the run)")
    ap.add_argument("--render", action="store_true", help="only write --md from --out")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child_main(args.child)
        return
    if args.render and not args.md:
        ap.error("--render writes the tables to --md PATH; name it (for example --md benchmarks/scale.md).")
    if not args.render:
        print(f"command: {shlex.join(sys.argv)}; load average {os.getloadavg()}", flush=True)
        run(args)
    if args.md:
        args.md.write_text(render_markdown(load_scale_table(args.out)))


if __name__ == "__main__":
    main()
