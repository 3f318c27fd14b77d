"""The runner: identical rows for any n_jobs, resume, rankings cache, guarded results folders."""

from __future__ import annotations

import json
import types

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits

from fsbench.configuration.parse import parse_experiment
from fsbench.engine.runner import fit_selector, plan, run_experiment
from fsbench.errors import FsbenchError
from fsbench.storage.runs import load_runs
from fsbench.storage.task_files import finished_tasks

# columns that differ between runs: wall-clock times, and the digest over rows that hold them
TIMING = ["fit_seconds", "task_seconds", "rows_digest"]


class _Spec:
    def __init__(self, name, n_features):
        self.name, self.n_features = name, n_features


def _experiment(extra: str = "", selectors: str = "[fisher, fstat, random]", seed: int = 0):
    text = f"""
name: unit
seed: {seed}
datasets: [digits]
protocol: {{kind: holdout, train_size: 0.5, n_trials: 3}}
inner_cv: {{n_splits: 3}}
selectors: {selectors}
classifier: {{name: linear_svm, C: [0.01, 1]}}
n_features: [4, 16]
{extra}"""
    return parse_experiment(text, "unit.yaml", dataset_resolver=lambda n: _Spec("digits", 64))


def _rows(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=TIMING).sort_values(["dataset", "repeat", "fold", "selector", "k"]).reset_index(drop=True)


def test_rows_identical_for_one_and_two_jobs(tmp_path, digits):
    exp = _experiment()
    one = run_experiment(exp, tmp_path / "one", data=digits, n_jobs=1).runs
    two = run_experiment(exp, tmp_path / "two", data=digits, n_jobs=2).runs
    assert len(one) == 3 * 3 * 2
    pd.testing.assert_frame_equal(_rows(one), _rows(two))
    # and what is on disk is what was returned
    pd.testing.assert_frame_equal(_rows(load_runs(tmp_path / "one")), _rows(one), check_dtype=False)


def test_selectors_share_splits_and_fisher_beats_random(tmp_path, digits):
    runs = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1).runs
    per_trial = runs.groupby(["repeat", "selector"])["split_seed"].first().unstack()
    assert (per_trial.nunique(axis=1) == 1).all()
    at16 = runs[runs.k == 16].groupby("selector")["accuracy"].mean()
    # identical rankings give identical rows: inner folds depend on the split, not the selector
    cols = ["accuracy", "C", "inner_accuracy"]
    np.testing.assert_array_equal(runs[runs.selector == "fisher"][cols], runs[runs.selector == "fstat"][cols])
    assert at16["fisher"] > at16["random"]


def test_tasks_run_repetition_by_repetition_across_datasets(tmp_path, digits):
    # an interrupted long run then holds the first repetitions of every dataset
    exp = parse_experiment(
        "name: u\ndatasets: [digits, digits2]\nprotocol: {kind: holdout, train_size: 0.5, n_trials: 3}\n"
        "selectors: [fstat, fisher]\nclassifier: {name: linear_svm, C: 1}\nn_features: [4]\n",
        "u.yaml", dataset_resolver=lambda n: _Spec(n, 64))
    done = []
    result = run_experiment(exp, tmp_path, data={**digits, "digits2": digits["digits"]}, n_jobs=1,
                            on_task_done=done.append)
    assert [t.rsplit("__", 1)[0] for t in done] == [f"{d}__r{r:03d}f00__{s}" for r in range(3)
                                                    for d in ("digits", "digits2") for s in ("fstat", "fisher")]
    # runs.csv keeps the config's order: dataset, then repetition
    assert list(dict.fromkeys(zip(result.runs["dataset"], result.runs["repeat"], strict=True))) == [
        (d, r) for d in ("digits", "digits2") for r in range(3)]


def test_resume_after_losing_tasks_gives_identical_rows(tmp_path, digits):
    exp = _experiment()
    full = run_experiment(exp, tmp_path, data=digits, n_jobs=1).runs
    tasks = sorted((tmp_path / "tasks").glob("*.json"))
    for path in tasks[::2]:  # as if the run had been killed before these finished
        path.unlink()
    (tmp_path / "runs.csv.gz").unlink()
    resumed = run_experiment(exp, tmp_path, data=digits, n_jobs=2)
    assert resumed.n_resumed == len(tasks) - len(tasks[::2])
    pd.testing.assert_frame_equal(_rows(resumed.runs), _rows(full))


def test_a_different_config_does_not_overwrite_results(tmp_path, digits):
    run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    before = (tmp_path / "runs.csv.gz").read_bytes()
    with pytest.raises(FsbenchError, match="--force"):
        run_experiment(_experiment(seed=1), tmp_path, data=digits, n_jobs=1)
    assert (tmp_path / "runs.csv.gz").read_bytes() == before
    forced = run_experiment(_experiment(seed=1), tmp_path, data=digits, n_jobs=1, force=True)
    assert forced.n_resumed == 0 and (forced.runs["seed"] != 0).all()
    # the run log holds the forced run alone: the wall time of discarded runs is not the results'
    lines = (tmp_path / "runlog.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["n_run"] == forced.n_tasks


def test_k_beyond_the_features_is_rejected_before_writing(tmp_path, digits):
    small = {"digits": types.SimpleNamespace(X=digits["digits"].X[:, :10], y=digits["digits"].y)}
    with pytest.raises(FsbenchError, match="exceeds the 10 features"):
        run_experiment(_experiment(), tmp_path / "out", data=small)
    assert not (tmp_path / "out").exists()


def test_ranking_cache_is_keyed_by_inputs(tmp_path, digits, monkeypatch):
    X, y = digits["digits"].X, digits["digits"].y
    first = fit_selector("fisher", {}, X, y, 0, 10, tmp_path)
    from fsbench.selectors.fisher import FisherScore

    def boom(self, *a, **k):
        raise AssertionError("refit although the ranking is cached")

    monkeypatch.setattr(FisherScore, "_fit", boom)
    again = fit_selector("fisher", {}, X, y, 0, 10, tmp_path)
    np.testing.assert_array_equal(first["ranking"], again["ranking"])
    with pytest.raises(AssertionError, match="refit"):
        fit_selector("fisher", {}, X[:-1], y[:-1], 0, 10, tmp_path)  # other inputs: a new key
    import fsbench.engine.fitting as fitting_module

    monkeypatch.setattr(fitting_module, "selector_code", lambda name: "changed")
    with pytest.raises(AssertionError, match="refit"):
        fit_selector("fisher", {}, X, y, 0, 10, tmp_path)  # other selector code: a new key


def test_plan_is_dataset_x_split_x_selector(digits):
    tasks = plan(_experiment(), digits)
    assert len(tasks) == 9 and len({t.id for t in tasks}) == 9


def test_no_task_files_means_nothing_finished(tmp_path):
    assert finished_tasks(tmp_path / "missing") == set()


def test_selector_grid_is_tuned_on_the_training_part_and_recorded(tmp_path, digits):
    selectors = "[{name: relieff, label: rf, grid: {n_neighbors: [1, 5]}}, fisher]"
    runs = run_experiment(_experiment(selectors=selectors), tmp_path, data=digits, n_jobs=1).runs
    chosen = runs[runs.selector == "rf"]["params"].map(lambda s: __import__("json").loads(s)["n_neighbors"])
    assert set(chosen) <= {1, 5}
    # one choice per task: every k of a task shares it
    assert (runs[runs.selector == "rf"].groupby(["repeat", "fold"])["params"].nunique() == 1).all()
    # 3 trials x (2 grid points x 3 inner folds + the final fit) for relieff, 3 fits of fisher
    assert len(list((tmp_path / "cache" / "rankings").glob("*.npz"))) == 3 * (2 * 3 + 1) + 3


def test_every_registered_selector_runs_through_the_pipeline(tmp_path):
    """Each selector, from a config, on one small split: a full ranking and sane rows."""
    from fsbench.selectors import registry

    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 3)[:60]
    data = {"digits": types.SimpleNamespace(X=X[keep].astype(float), y=y[keep])}
    names = sorted(registry())
    text = f"""
name: every
datasets: [digits]
protocol: {{kind: holdout, train_size: 0.6, n_trials: 1}}
selectors: [{", ".join(names)}]
classifier: {{name: linear_svm, C: 1}}
n_features: [5, 20]
"""
    exp = parse_experiment(text, "every.yaml", dataset_resolver=lambda n: _Spec("digits", 64))
    runs = run_experiment(exp, tmp_path, data=data, n_jobs=1).runs
    assert sorted(runs.selector.unique()) == names
    assert len(runs) == 2 * len(names)
    assert runs.accuracy.between(0, 1).all() and (runs.n_test == 24).all()


def test_select_on_all_selects_once_on_the_whole_dataset(tmp_path, digits):
    """The leakage protocol, checked against scikit-learn: F-statistic ranking on all data
    (z-scored as a whole), top k, linear SVM fit on each training fold, scored on its test fold."""
    from sklearn.feature_selection import f_classif
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC

    from fsbench.evaluation.protocol import derive_seed

    text = """
name: leak
seed: 3
datasets: [digits]
preprocessing: {standardize: global}
protocol: {kind: kfold, n_splits: 3, n_repeats: 2, select_on: all}
selectors: [fstat]
classifier: {name: linear_svm, backend: libsvm, C: 1}
n_features: [4, 16]
"""
    exp = parse_experiment(text, "leak.yaml", dataset_resolver=lambda n: _Spec("digits", 64))
    runs = run_experiment(exp, tmp_path / "leak", data=digits, n_jobs=1).runs
    X, y = digits["digits"].X, digits["digits"].y
    std = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(std == 0, 1.0, std)
    F = np.nan_to_num(f_classif(Z, y)[0], nan=-np.inf)
    order = np.argsort(-F, kind="stable")
    for repeat in range(2):
        skf = StratifiedKFold(3, shuffle=True, random_state=derive_seed(3, "outer", "digits", repeat))
        for fold, (train, test) in enumerate(skf.split(Z, y)):
            for k in (4, 16):
                cols = order[:k]
                expected = SVC(kernel="linear", C=1).fit(Z[train][:, cols], y[train]).score(Z[test][:, cols], y[test])
                row = runs[(runs["repeat"] == repeat) & (runs["fold"] == fold) & (runs["k"] == k)]
                assert row["accuracy"].item() == pytest.approx(expected, abs=1e-12)
    assert set(runs["select_on"]) == {"all"}


def test_select_on_changes_the_fingerprint_only_when_set(digits):
    import hashlib
    import json

    plain = _experiment()
    # results written before select_on existed keep their fingerprint: the default is left out
    d = plain.to_dict()
    for key in ("n_jobs", "name", "description"):
        d.pop(key)
    del d["protocol"]["select_on"]
    before = hashlib.sha256(json.dumps(d, sort_keys=True, default=repr).encode()).hexdigest()[:16]
    assert plain.fingerprint() == before
    leak = parse_experiment(
        "name: unit\nseed: 0\ndatasets: [digits]\nprotocol: {kind: holdout, train_size: 0.5, n_trials: 3, "
        "select_on: all}\ninner_cv: {n_splits: 3}\nselectors: [fisher, fstat, random]\n"
        "classifier: {name: linear_svm, C: [0.01, 1]}\nn_features: [4, 16]\n",
        "unit.yaml", dataset_resolver=lambda n: _Spec("digits", 64))
    assert leak.fingerprint() != plain.fingerprint()
    with pytest.raises(FsbenchError, match="select_on"):
        parse_experiment("name: u\ndatasets: [digits]\nprotocol: {select_on: everything}\nselectors: [fisher]\n"
                         "n_features: [4]\n", "u.yaml", dataset_resolver=lambda n: _Spec("digits", 64))


def test_a_folder_kept_as_runs_csv_alone_resumes_without_recomputing(tmp_path, digits, monkeypatch):
    import shutil

    import fsbench.engine.runner as runner_mod

    exp = _experiment()
    out = tmp_path / "run"
    first = run_experiment(exp, out, data=digits, n_jobs=1).runs
    shutil.rmtree(out / "tasks")
    shutil.rmtree(out / "cache")

    def boom(*args, **kwargs):
        raise AssertionError("a task was recomputed although runs.csv holds it")

    monkeypatch.setattr(runner_mod, "run_task", boom)
    again = run_experiment(exp, out, data=digits, n_jobs=1)
    assert again.n_resumed == again.n_tasks
    pd.testing.assert_frame_equal(_rows(again.runs), _rows(first), check_dtype=False)


def test_each_invocation_that_runs_tasks_logs_its_wall_time(tmp_path, digits):
    from fsbench.storage.runlog import read_runlog

    exp = _experiment()
    out = tmp_path / "run"
    run_experiment(exp, out, data=digits, n_jobs=1)
    run_experiment(exp, out, data=digits, n_jobs=1)  # nothing left to run: no entry
    log = read_runlog(out)
    assert len(log) == 1
    assert log[0]["n_tasks"] == log[0]["n_run"] == 9 and log[0]["seconds"] > 0


def test_an_interrupted_invocation_logs_the_tasks_it_finished(tmp_path, digits):
    from fsbench.storage.runlog import read_runlog

    exp = _experiment()
    out = tmp_path / "run"

    def interrupt_after_two(task_id, seen=[]):  # noqa: B006 - the list counts calls
        seen.append(task_id)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_experiment(exp, out, data=digits, n_jobs=1, on_task_done=interrupt_after_two)
    run_experiment(exp, out, data=digits, n_jobs=1)
    log = read_runlog(out)
    assert [(e["n_run"], e.get("interrupted", False)) for e in log] == [(2, True), (7, False)]
