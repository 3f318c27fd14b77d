"""The papers' figures and the objective traces behind the convergence figures.

Oracles: hand-worked accuracy statistics (a k-fold repetition pooled over its folds, then the
spread over repetitions), the printed tables of DESIGN.md read by eye, the papers' theorems
(RFS Theorem 1, DSO-FS Theorem 1: the objective never increases) as properties, and cvxpy's
optimum of the convex RFS problem on the split the traces must have used.
"""

from __future__ import annotations

import json
import shutil
import types

import numpy as np
import pandas as pd
import pytest

from fsbench.configuration.parse import parse_experiment
from fsbench.engine.traces import TRACES_FILE, objective_traces, trace_summary, write_traces
from fsbench.errors import FsbenchError
from fsbench.evaluation.protocol import outer_splits
from fsbench.papers.figures import (
    accuracy_curves,
    accuracy_per_p,
    fixed_p_selectors,
    objective_curves,
    paper_datasets,
    paper_figures,
    per_p_curves,
    printed_points,
)
from fsbench.report.plots import curves


# ----------------------------------------------------------------------------- synthetic runs
def synthetic_runs(datasets, selectors, ks, n_repeats=3, n_folds=1, n_test=20, seed=0):
    """Rows like runs.csv: ``selectors`` is a list of (label, method, params or callable(repeat))."""
    rng = np.random.default_rng(seed)
    rows = []
    for dataset in datasets:
        for repeat in range(n_repeats):
            for fold in range(n_folds):
                for label, method, params in selectors:
                    p = params(repeat) if callable(params) else params
                    for k in ks:
                        correct = int(rng.integers(n_test // 2, n_test + 1))
                        rows.append({"dataset": dataset, "repeat": repeat, "fold": fold, "selector": label,
                                     "method": method, "params": json.dumps(p, sort_keys=True), "k": k,
                                     "accuracy": correct / n_test, "n_correct": correct, "n_test": n_test})
    return pd.DataFrame(rows)


def plain(*labels):
    return [(label, label, {}) for label in labels]


FIXED_P = [(f"dso-p{p:g}", "dso", {"p": p}) for p in (0.1, 0.5, 1.0)]
TUNED_DSO = ("dso", "dso", lambda r: {"p": (0.3, 1.0)[r % 2]})


def nonempty(paths, names):
    assert sorted(p.name for p in paths) == sorted(names)
    for p in paths:
        assert p.is_file() and p.stat().st_size > 1000, p


# ----------------------------------------------------------------------------- accuracy curves
def test_kfold_repetition_is_pooled_over_folds_then_spread_over_repetitions():
    # two repetitions of 2-fold CV: 8/10 + 6/10 -> 70 %, 9/10 + 9/10 -> 90 %
    rows = [(0, 0, 8), (0, 1, 6), (1, 0, 9), (1, 1, 9)]
    runs = pd.DataFrame([{"dataset": "glioma", "selector": "rfs", "k": 20, "repeat": r, "fold": f,
                          "n_correct": c, "n_test": 10, "accuracy": c / 10} for r, f, c in rows])
    stats = curves(runs)
    assert stats["mean"].item() == pytest.approx(80.0)
    assert stats["std"].item() == pytest.approx(np.sqrt(200.0))  # (70-80)^2 + (90-80)^2, ddof 1


def test_printed_points_are_the_papers_cells():
    rfs = printed_points("rfs")
    glioma = rfs[rfs["dataset"] == "glioma"].set_index(["method", "k"])["value"]
    assert len(glioma) == 12 and glioma[("rfs", 20)] == 74 and glioma[("relieff", 80)] == 54
    dso = printed_points("dso-fs").set_index(["dataset", "method"])
    assert dso.loc[("cll-sub-111", "dso"), "value"] == 81.18 and dso.loc[("cll-sub-111", "dso"), "std"] == 6.60
    sl2p = printed_points("sl2p")
    assert sorted(set(sl2p["k"])) == [20, 40] and len(sl2p) == 2 * 6 * 10


@pytest.mark.parametrize("paper, datasets, labels", [
    ("rfs", ["glioma", "allaml"], ["relieff", "fstat", "ttest", "infogain", "mrmr", "rfs"]),
    ("sl2p", ["srbct", "glioma", "mll"], ["infogain", "ttest", "fisher", "chi2", "relieff", "mrmr", "cssvm",
                                          "l21svm", "sl21", "sl2p"]),
])
def test_accuracy_curves_write_png_and_pdf(tmp_path, paper, datasets, labels):
    n_folds = 5 if paper == "rfs" else 1
    runs = synthetic_runs(datasets, plain(*labels), [10, 20, 40, 80], n_repeats=2, n_folds=n_folds)
    paths = accuracy_curves(runs, paper, tmp_path / "fig" / "curves")
    nonempty(paths, ["curves.png", "curves.pdf"])


def test_regenerating_a_figure_rewrites_the_same_bytes(tmp_path):
    # committed figures must not change when nothing behind them did (no creation date inside)
    runs = synthetic_runs(["glioma"], plain("rfs", "mrmr"), [10, 20], n_repeats=2)
    first = [p.read_bytes() for p in accuracy_curves(runs, "rfs", tmp_path / "a" / "curves")]
    second = [p.read_bytes() for p in accuracy_curves(runs, "rfs", tmp_path / "b" / "curves")]
    assert first == second
    assert b"CreationDate" not in first[1]  # the pdf: two writes within one second would agree anyway


def test_paper_datasets_lists_the_missing_ones_in_the_papers_order():
    runs = synthetic_runs(["mll", "glioma", "extra"], plain("sl2p"), [20])
    present, missing = paper_datasets(runs, "sl2p")
    assert present == ["glioma", "mll", "extra"]
    assert missing == ["lung", "carcinomas", "brain-tumor-2", "srbct"]


def test_unknown_paper_and_empty_results_are_errors(tmp_path):
    runs = synthetic_runs(["glioma"], plain("rfs"), [20])
    with pytest.raises(FsbenchError, match="Unknown paper"):
        accuracy_curves(runs, "nips", tmp_path / "x")
    with pytest.raises(FsbenchError, match="No results"):
        accuracy_curves(runs.iloc[:0], "rfs", tmp_path / "x")


# ----------------------------------------------------------------------------- per-p figure
def test_per_p_figure_takes_exactly_the_fixed_p_selectors(tmp_path):
    # a second tuned DSO-FS label (p varies over the splits) and another method with a p are not fixed-p
    other_tuned = ("dso-tuned", "dso", lambda r: {"p": (0.5, 0.9)[r % 2]})
    sl2p = ("sl2p-p2", "sl2p", {"p": 2.0, "C": 1.0})
    runs = synthetic_runs(["isolet", "umist"], [*plain("rfs"), TUNED_DSO, other_tuned, sl2p, *FIXED_P], [10, 100])
    assert fixed_p_selectors(runs) == {"dso-p0.1": 0.1, "dso-p0.5": 0.5, "dso-p1": 1.0}
    stats = per_p_curves(runs)
    assert set(stats["selector"]) == {"dso-p0.1", "dso-p0.5", "dso-p1"}
    assert len(stats) == 2 * 3 * 2  # datasets x p x k
    paths = accuracy_per_p(runs, tmp_path / "accuracy_per_p")
    nonempty(paths, ["accuracy_per_p.png", "accuracy_per_p.pdf"])


def test_per_p_figure_is_skipped_without_fixed_p_rows(tmp_path):
    runs = synthetic_runs(["isolet"], [*plain("rfs"), TUNED_DSO], [10, 100])
    assert accuracy_per_p(runs, tmp_path / "accuracy_per_p") is None
    assert not list(tmp_path.iterdir())


# ----------------------------------------------------------------------------- traces
class _Spec:
    def __init__(self, name, n_features):
        self.name, self.n_features = name, n_features


def _experiment():
    text = """
name: traces
seed: 3
datasets: [toy]
preprocessing: {standardize: train}
protocol: {kind: holdout, train_size: 0.6, n_trials: 3}
inner_cv: {n_splits: 2}
selectors:
  - fisher
  - name: rfs
    grid: {gamma: [0.5, 2.0]}
  - name: dso
    grid: {p: [0.5, 1.0]}
  - name: dso
    label: dso-p1
    params: {p: 1.0}
classifier: {name: linear_svm, C: 1}
n_features: [2, 4]
"""
    return parse_experiment(text, "traces.yaml", dataset_resolver=lambda n: _Spec("toy", 40))


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(7)
    y = np.arange(30) % 3
    X = 3.0 * rng.standard_normal((30, 40)) + 5.0  # not standardized: traces must do it
    X[:, :3] += 4.0 * np.eye(3)[y]
    return {"toy": types.SimpleNamespace(X=X, y=y)}


@pytest.fixture(scope="module")
def traces(toy):
    # split 0 chose gamma 0.5 (on many k rows), splits 1 and 2 chose gamma 2: one vote per split
    rows = [{"dataset": "toy", "selector": "rfs", "repeat": r, "fold": 0, "k": k,
             "params": json.dumps({"gamma": g})}
            for r, g, ks in [(0, 0.5, range(1, 9)), (1, 2.0, [2]), (2, 2.0, [2])] for k in ks]
    return objective_traces(_experiment(), toy, pd.DataFrame(rows))


def test_written_traces_are_reused_and_only_new_ones_fitted(tmp_path, toy, monkeypatch):
    import fsbench.engine.traces as traces_module

    first = write_traces(_experiment(), toy, None, tmp_path)  # rfs at its first grid point, gamma 0.5
    before = first.read_bytes()
    fitted = []
    real = traces_module._fit_trace
    monkeypatch.setattr(traces_module, "_fit_trace", lambda *a: fitted.append(a[:2]) or real(*a))
    write_traces(_experiment(), toy, None, tmp_path)
    assert fitted == [] and first.read_bytes() == before
    # the runs now chose gamma 2: only that trace is fitted, the stale gamma 0.5 one is dropped
    runs = pd.DataFrame([{"dataset": "toy", "selector": "rfs", "repeat": 0, "fold": 0, "k": 2,
                          "params": json.dumps({"gamma": 2.0})}])
    write_traces(_experiment(), toy, runs, tmp_path)
    assert fitted == [("rfs", {"gamma": 2.0})]
    again = pd.read_csv(first)
    assert {json.loads(p)["gamma"] for p in again.loc[again["method"] == "rfs", "params"]} == {2.0}
    # other selector code: nothing is reused (a changed solver must not keep its old traces)
    fitted.clear()
    monkeypatch.setattr(traces_module, "selector_code", lambda name: "changed")
    write_traces(_experiment(), toy, runs, tmp_path)
    assert len(fitted) == again.groupby(["selector", "params"]).ngroups
    assert set(pd.read_csv(first)["code"]) == {"changed"}
    # an edit of one selector's code refits its traces only
    fitted.clear()
    monkeypatch.setattr(traces_module, "selector_code", lambda name: "dso edited" if name == "dso" else "changed")
    write_traces(_experiment(), toy, runs, tmp_path)
    assert fitted and {method for method, _ in fitted} == {"dso"}


def test_traces_cover_the_iterative_selectors_with_the_chosen_params(traces):
    assert set(traces["method"]) == {"rfs", "dso"}  # fisher has no objective trace
    assert {json.loads(p)["gamma"] for p in traces.loc[traces["method"] == "rfs", "params"]} == {2.0}
    dso = traces[traces["method"] == "dso"]
    assert sorted({json.loads(p)["p"] for p in dso["params"]}) == [0.5, 1.0]
    assert set(dso["selector"]) == {"dso"}  # dso-p1 repeats a trace already computed
    assert (traces.groupby("params")["iteration"].apply(lambda s: list(s) == list(range(1, len(s) + 1)))).all()
    assert (traces["n_train"] == 18).all()


@pytest.mark.parametrize("method, p", [("rfs", None), ("dso", 1.0)])
def test_objective_never_increases(traces, method, p):
    t = traces[traces["method"] == method]
    if p is not None:
        t = t[[json.loads(s)["p"] == p for s in t["params"]]]
    obj = t.sort_values("iteration")["objective"].to_numpy()
    assert obj.size >= 3
    assert np.all(np.diff(obj) <= 1e-9 * np.abs(obj[:-1])), np.diff(obj)
    assert obj[-1] < obj[0]
    assert t["monotone"].all() and (t["max_rel_increase"] <= 1e-9).all()


def test_rfs_trace_ends_at_the_convex_optimum_on_the_first_training_part(traces, toy):
    cp = pytest.importorskip("cvxpy")
    exp = _experiment()
    X, y = toy["toy"].X, toy["toy"].y
    split = outer_splits(y, exp.protocol, exp.seed, "toy")[0]
    Xt = X[split.train]
    Xt = (Xt - Xt.mean(axis=0)) / Xt.std(axis=0)
    Y = np.eye(3)[y[split.train]]
    W = cp.Variable((40, 3))
    problem = cp.Problem(cp.Minimize(cp.sum(cp.norm(Xt @ W - Y, 2, axis=1)) + 2.0 * cp.sum(cp.norm(W, 2, axis=1))))
    problem.solve()
    last = traces.loc[traces["method"] == "rfs", "objective"].iloc[-1]
    assert last == pytest.approx(problem.value, rel=1e-4)


def test_trace_summary_measures_the_largest_rise():
    t = pd.DataFrame({"dataset": "d", "selector": "s", "method": "rfs", "params": "{}",
                      "iteration": [1, 2, 3, 4], "objective": [10.0, 8.0, 8.8, 7.0]})
    s = trace_summary(t).iloc[0]
    assert s["max_rel_increase"] == pytest.approx(0.1) and not s["monotone"]
    assert (s["n_iter"], s["first"], s["last"]) == (4, 10.0, 7.0)
    t["objective"] = [10.0, 8.0, 8.0, 7.0]
    assert trace_summary(t).iloc[0]["monotone"]


# ----------------------------------------------------------------------------- one paper
def test_paper_figures_writes_every_figure(tmp_path, toy):
    runs = synthetic_runs(["isolet", "ar"], [*plain("mrmr", "relieff", "l1svm", "rfs"), TUNED_DSO, *FIXED_P],
                          [10, 50, 100], n_repeats=4)
    runs.to_csv(tmp_path / "runs.csv.gz", index=False)
    path = write_traces(_experiment(), toy, None, tmp_path)
    assert path == tmp_path / TRACES_FILE and not list(tmp_path.glob(".*.tmp"))
    written = paper_figures("dso-fs", tmp_path, out_dir=tmp_path / "figs")
    nonempty(written, ["curves.png", "curves.pdf", "accuracy_per_p.png", "accuracy_per_p.pdf",
                       "objective.png", "objective.pdf"])
    assert {p.parent for p in written} == {tmp_path / "figs"}


def test_objective_curves_on_traces(tmp_path, traces):
    nonempty(objective_curves(traces, tmp_path / "objective"), ["objective.png", "objective.pdf"])
    with pytest.raises(FsbenchError):
        objective_curves(traces.iloc[:0], tmp_path / "none")


def test_traces_reuse_the_runs_own_fits_from_the_ranking_cache(tmp_path, toy, monkeypatch):
    from fsbench.engine.runner import run_experiment
    from fsbench.evaluation.protocol import outer_splits, standardize
    from fsbench.selectors.dso import DSOFS

    runs = run_experiment(_experiment(), tmp_path, data=toy, n_jobs=1).runs
    exp = _experiment()
    split = outer_splits(toy["toy"].y, exp.protocol, exp.seed, "toy")[0]
    X_train, _ = standardize(np.asarray(toy["toy"].X, dtype=float), split.train, split.test, exp.standardize)
    expected = DSOFS(p=1.0).fit(X_train, toy["toy"].y[split.train]).objective_  # independent refit

    fits = []
    real_fit = DSOFS.fit
    monkeypatch.setattr(DSOFS, "fit", lambda self, X, y: fits.append(self.p) or real_fit(self, X, y))
    traces = pd.read_csv(write_traces(exp, toy, runs, tmp_path))
    p1 = traces["params"].map(json.loads).map(lambda d: d.get("p")) == 1.0
    fixed = traces[(traces["method"] == "dso") & p1].sort_values("iteration")
    # the first split's fit at p = 1 is the run's own (dso-p1's): read, not refitted
    assert len(fixed) == expected.size and np.array_equal(fixed["objective"].to_numpy(), expected)
    assert fits.count(1.0) == 0  # p = 1 on this split was fitted by the run (dso-p1), for any label
    # without the cache every trace is a fit
    fits.clear()
    (tmp_path / "objective.csv").unlink()
    shutil.rmtree(tmp_path / "cache")
    write_traces(exp, toy, runs, tmp_path)
    n_dso = traces[traces["method"] == "dso"].groupby(["selector", "params"]).ngroups
    assert fits.count(1.0) >= 1 and len(fits) == n_dso


def test_variant_figures_read_the_runs_own_fits_for_datasets_the_paper_lacks(tmp_path, monkeypatch):
    from fsbench.configuration.parse import load_experiment
    from fsbench.engine.runner import run_experiment
    from fsbench.papers.reproduce import write_variant_figures
    from fsbench.selectors.dso import DSOFS

    paper = tmp_path / "paper.yaml"
    paper.write_text("name: paper\nseed: 0\ndatasets: [ar]\nselectors: [fisher]\n"
                     "classifier: {name: linear_svm, C: 1}\nn_features: [5]\n")
    variant = tmp_path / "variant.yaml"
    variant.write_text("name: variant\nseed: 0\ndatasets: [digits]\n"
                       "protocol: {kind: holdout, train_size: 0.3, n_trials: 2}\n"
                       "selectors:\n  - {name: dso, label: dso-p0.5, params: {p: 0.5}}\n"
                       "  - {name: dso, label: dso-p1.0, params: {p: 1.0}}\n"
                       "classifier: {name: linear_svm, C: 1}\nn_features: [5, 10]\n")
    out = tmp_path / "variant"
    run_experiment(load_experiment(variant), out, n_jobs=1)
    fits = []
    real_fit = DSOFS.fit
    monkeypatch.setattr(DSOFS, "fit", lambda self, X, y: fits.append(self.p) or real_fit(self, X, y))
    written = write_variant_figures(out, variant, paper, None)
    assert {p.name for p in written} >= {"accuracy_per_p.png", "objective.png"}
    traces = pd.read_csv(out / TRACES_FILE)
    assert set(traces["selector"]) == {"dso-p0.5", "dso-p1.0"} and fits == []  # read from the run's cache
    # a variant whose datasets the paper runs gets no traces (they are the paper's)
    (out / TRACES_FILE).unlink()
    written = write_variant_figures(out, variant, variant, None)
    assert not (out / TRACES_FILE).exists()
    assert {p.name for p in written} == {"accuracy_per_p.png", "accuracy_per_p.pdf"}
