"""Rankings kept (rankings.csv.gz): equal to rankings computed directly, written and resumed like the
rows, regenerated for results computed before fsbench kept them (fsbench.engine.regenerate_rankings) and
checked against the rows (fsbench.engine.check_rankings), by the library and by the commands
``fsbench rankings regenerate|check``."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import copy_folder
from sklearn.feature_selection import f_classif
from sklearn.model_selection import StratifiedShuffleSplit

import fsbench.engine.regenerate_rankings as rankings_module
from fsbench.cli import main as fsbench_main
from fsbench.configuration.parse import parse_experiment
from fsbench.engine.regenerate_rankings import regenerate_rankings
from fsbench.engine.resume import discard_tasks
from fsbench.engine.runner import run_experiment
from fsbench.errors import FsbenchError
from fsbench.selectors import get_selector
from fsbench.storage.rankings import RANKINGS_FILE, load_rankings, write_rankings_table
from fsbench.storage.runs import RUNS_FILE, load_runs
from fsbench.storage.task_files import TASKS_DIR

COLUMNS = ["dataset", "repeat", "fold", "selector", "position", "feature"]
K = 8  # the largest k of the experiment: what a ranking keeps


class _Spec:
    def __init__(self, name, n_features):
        self.name, self.n_features = name, n_features


def _experiment(seed: int = 0, datasets: str = "[digits]",
                selectors: str = "[fstat, fisher, random, {name: chi2, params: {discretize: quantile}, "
                                 "grid: {n_bins: [2, 5]}}]"):
    text = f"""
name: rk
seed: {seed}
datasets: {datasets}
protocol: {{kind: holdout, train_size: 0.5, n_trials: 2}}
inner_cv: {{n_splits: 3}}
selectors: {selectors}
classifier: {{name: linear_svm, C: 1}}
n_features: [3, {K}]
"""
    return parse_experiment(text, "rk.yaml", dataset_resolver=lambda n: _Spec(n, 64))


@pytest.fixture(scope="module")
def finished(tmp_path_factory, digits):
    """A finished run (seed 0), never modified: tests copy it."""
    out = tmp_path_factory.mktemp("finished") / "run"
    run_experiment(_experiment(), out, data=digits, n_jobs=1)
    return out


def _without_task_files(out):
    """The folder as committed: no task files, no rankings cache."""
    shutil.rmtree(out / TASKS_DIR)
    shutil.rmtree(out / "cache")
    return out


# ----------------------------------------------------------------------------- what is kept
def _train_part(y, split_seed):
    """The training part of a hold-out split, by scikit-learn from the split seed the rows record."""
    sss = StratifiedShuffleSplit(n_splits=1, train_size=0.5, random_state=int(split_seed))
    return np.sort(next(sss.split(np.zeros(y.size), y))[0])


def _zscore(X):
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std == 0, 1.0, std)


def test_rankings_equal_rankings_computed_directly(finished, digits):
    X, y = digits["digits"].X, digits["digits"].y
    kept = load_rankings(finished)
    runs = load_runs(finished)
    assert list(kept.columns) == COLUMNS
    assert len(kept) == 2 * 4 * K  # 2 splits x 4 selectors, K features each
    # sorted by dataset, repeat, fold, selector, position
    pd.testing.assert_frame_equal(kept, kept.sort_values(COLUMNS[:5]).reset_index(drop=True))
    other_grid_point_differs = False
    for (repeat, label), rows in runs.groupby(["repeat", "selector"]):
        first = rows.iloc[0]
        train = _train_part(y, first["split_seed"])
        assert first["n_train"] == train.size
        Xs, ys = _zscore(X[train]), y[train]
        got = kept[(kept.repeat == repeat) & (kept.selector == label)].sort_values("position")
        assert list(got["position"]) == list(range(1, K + 1))
        if label == "fstat":  # plain scikit-learn: F statistics, highest first, ties to the lower index
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # digits has constant features: their F is NaN, ranked last
                scores = f_classif(Xs, ys)[0]
            expected = np.argsort(-np.where(np.isnan(scores), -np.inf, scores), kind="stable")[:K]
        else:  # the selector class itself, with the seed and the (chosen) parameters the rows record
            cls = get_selector(label).cls
            params = json.loads(first["params"])
            if label == "random":
                params["random_state"] = int(first["seed"])
            expected = cls(n_features_to_select=K, **params).fit(Xs, ys).ranking_[:K]
            if label == "chi2":
                other = {**params, "n_bins": 7 - params["n_bins"]}  # the grid point not chosen
                other_grid_point_differs |= not np.array_equal(
                    cls(n_features_to_select=K, **other).fit(Xs, ys).ranking_[:K], expected)
        assert list(got["feature"]) == [int(f) for f in expected], (repeat, label)
    assert other_grid_point_differs  # the check can tell the chosen grid point from the other


def test_rankings_identical_for_one_and_two_jobs(finished, digits, tmp_path):
    run_experiment(_experiment(), tmp_path, data=digits, n_jobs=2)
    assert (tmp_path / RANKINGS_FILE).read_bytes() == (finished / RANKINGS_FILE).read_bytes()
    # a gzip without a timestamp; plain gzip, zcat and pandas read it
    data = (tmp_path / RANKINGS_FILE).read_bytes()
    assert data[4:8] == bytes(4)
    assert gzip.decompress(data).decode().splitlines()[0] == ",".join(COLUMNS)


# ----------------------------------------------------------------------------- resume and discard
def test_resume_from_runs_alone_keeps_every_ranking(finished, digits, tmp_path):
    out = _without_task_files(copy_folder(finished, tmp_path))
    resumed = run_experiment(_experiment(), out, data=digits, n_jobs=1)
    assert resumed.n_resumed == resumed.n_tasks == 8
    assert (out / RANKINGS_FILE).read_bytes() == (finished / RANKINGS_FILE).read_bytes()
    # the restored task files carry the rankings: a later resume keeps them too
    task = json.loads(next((out / TASKS_DIR).glob("*.json")).read_text())
    assert len(task["ranking"]) == K
    (out / RANKINGS_FILE).unlink()
    run_experiment(_experiment(), out, data=digits, n_jobs=1)
    assert (out / RANKINGS_FILE).read_bytes() == (finished / RANKINGS_FILE).read_bytes()


def test_a_task_file_without_a_ranking_is_still_a_task(finished, digits, tmp_path):
    out = copy_folder(finished, tmp_path)
    path = next((out / TASKS_DIR).glob("*__fstat__*.json"))
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(doc["rows"]))  # the format of task files before rankings were kept
    again = run_experiment(_experiment(), out, data=digits, n_jobs=1)
    assert again.n_resumed == 8  # its rows are kept, not recomputed
    kept = load_rankings(out)
    assert len(kept) == 7 * K  # that task has no ranking
    first = doc["rows"][0]
    assert kept[(kept.repeat == first["repeat"]) & (kept.selector == "fstat")].empty


def test_discard_removes_rankings_and_the_rerun_restores_them(finished, digits, tmp_path):
    out = _without_task_files(copy_folder(finished, tmp_path))
    original = load_rankings(finished)
    assert discard_tasks(out, ["fisher"]) == (2, 4)
    left = load_rankings(out)
    pd.testing.assert_frame_equal(left, original[original.selector != "fisher"].reset_index(drop=True))
    rerun = run_experiment(_experiment(), out, data=digits, n_jobs=1)
    assert rerun.n_resumed == 6
    assert (out / RANKINGS_FILE).read_bytes() == (finished / RANKINGS_FILE).read_bytes()
    discard_tasks(out, ["fstat", "fisher", "random", "chi2"])
    assert not (out / RUNS_FILE).exists() and not (out / RANKINGS_FILE).exists()


def test_rankings_of_another_seed_are_never_attached(finished, digits, tmp_path):
    other = tmp_path / "seed1"
    run_experiment(_experiment(seed=1), other, data=digits, n_jobs=1)
    stale = (other / RANKINGS_FILE).read_bytes()
    assert stale != (finished / RANKINGS_FILE).read_bytes()
    out = _without_task_files(copy_folder(finished, tmp_path))
    (out / RANKINGS_FILE).write_bytes(stale)  # left from a run of another seed, beside this run's rows
    runs_before = (out / RUNS_FILE).read_bytes()
    resumed = run_experiment(_experiment(), out, data=digits, n_jobs=1)
    assert resumed.n_resumed == 8 and (out / RUNS_FILE).read_bytes() == runs_before
    assert any("rankings of another configuration" in n and "not used" in n for n in resumed.notes)
    assert any("8 tasks restored from runs.csv.gz have no ranking" in n for n in resumed.notes)
    assert not (out / RANKINGS_FILE).exists()  # none of this configuration: no file
    with pytest.raises(FsbenchError, match=r"No rankings\.csv\.gz in .*fsbench rankings regenerate"):
        load_rankings(out)
    # a --force run of another configuration writes its own
    run_experiment(_experiment(seed=1), out, data=digits, n_jobs=1, force=True)
    assert (out / RANKINGS_FILE).read_bytes() == stale


@pytest.mark.parametrize("damage", ["truncated", "columns", "positions"])
def test_a_damaged_rankings_file_is_one_sentence_and_changes_nothing(finished, digits, tmp_path, damage):
    out = _without_task_files(copy_folder(finished, tmp_path))
    path = out / RANKINGS_FILE
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        table = load_rankings(out)
        table = table.rename(columns={"feature": "feat"}) if damage == "columns" else table.assign(
            position=table["position"] + (table.index == 3))
        path.write_bytes(gzip.compress(table.to_csv(index=False).encode(), mtime=0))
    damaged = path.read_bytes()
    with pytest.raises(FsbenchError, match=r"rankings\.csv\.gz' is damaged .*regenerate it") as exc:
        load_rankings(out)
    assert str(out / RANKINGS_FILE) in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(FsbenchError, match="is damaged"):
        run_experiment(_experiment(), out, data=digits, n_jobs=1)
    assert path.read_bytes() == damaged and not (out / TASKS_DIR).exists()
    result = CliRunner().invoke(fsbench_main, ["rankings", "regenerate", str(out)])
    assert result.exit_code == 2 and "rankings.csv.gz' is damaged" in result.output


# ----------------------------------------------------------------------------- regeneration


def test_regeneration_gives_the_run_rankings_byte_for_byte(finished, digits, tmp_path, monkeypatch):
    out = _without_task_files(copy_folder(finished, tmp_path))
    (out / RANKINGS_FILE).unlink()
    runs_before = (out / RUNS_FILE).read_bytes()
    # killed after two fits: the next regeneration fits only the other six
    fitted: list[str] = []
    real = _kill_after(monkeypatch, 2, fitted)
    with pytest.raises(KeyboardInterrupt):
        regenerate_rankings(out, data=digits)
    assert not (out / RANKINGS_FILE).exists()
    monkeypatch.setattr(rankings_module, "_refit", lambda *args: (fitted.append(args[1].id), real(*args))[1])
    lines = []
    path = regenerate_rankings(out, data=digits, echo=lines.append)
    assert len(fitted) == 8 and len(set(fitted)) == 8  # each task fitted once over both invocations
    assert path.read_bytes() == (finished / RANKINGS_FILE).read_bytes()
    assert (out / RUNS_FILE).read_bytes() == runs_before
    assert not (out / "cache" / "regenerated-rankings").exists()
    assert lines[-1].endswith("rankings.csv.gz: 8 of 8 tasks ranked")


def test_regeneration_reports_rows_of_other_code_and_allows_rows_without_code(finished, digits, tmp_path):
    out = _without_task_files(copy_folder(finished, tmp_path))
    runs = load_runs(out)
    edited = runs.assign(code=np.where(runs.selector == "fisher", "0" * 16, runs["code"]))
    edited.loc[edited.selector == "fstat", "code"] = np.nan  # rows from before fsbench recorded code
    (out / RUNS_FILE).write_bytes(gzip.compress(edited.to_csv(index=False).encode(), mtime=0))
    lines = []
    regenerate_rankings(out, data=digits, echo=lines.append)
    assert any("2 tasks hold rows computed by other code" in n and "fisher: 2" in n and "recompute-stale" in n
               for n in lines), lines
    assert any("2 tasks hold rows written before fsbench recorded the code" in n and "fstat: 2" in n
               for n in lines), lines
    original = load_rankings(finished)
    # fisher's saved rankings (this configuration's) are kept; every other task is refitted
    pd.testing.assert_frame_equal(load_rankings(out), original)
    (out / RANKINGS_FILE).unlink()
    regenerate_rankings(out, data=digits)
    pd.testing.assert_frame_equal(load_rankings(out), original[original.selector != "fisher"].reset_index(drop=True))


def test_a_refit_that_iterates_otherwise_than_its_rows_gets_no_ranking(finished, digits, tmp_path):
    out = _without_task_files(copy_folder(finished, tmp_path))
    runs = load_runs(out)
    # as if another code of the selector had iterated 7 times there
    edited = runs.assign(n_iter=np.where((runs.selector == "chi2") & (runs.repeat == 1), 7, runs["n_iter"]))
    (out / RUNS_FILE).write_bytes(gzip.compress(edited.to_csv(index=False).encode()))
    lines = []
    regenerate_rankings(out, data=digits, echo=lines.append)
    assert any("1 refits iterated another number of times" in n and "chi2: 1" in n and "digits__r001f00__chi2__" in n
               and "(0 against 7)" in n for n in lines), lines
    original = load_rankings(finished)
    gone = (original.selector == "chi2") & (original.repeat == 1)
    pd.testing.assert_frame_equal(load_rankings(out), original[~gone].reset_index(drop=True))


def test_regeneration_skips_datasets_it_cannot_find(digits, tmp_path, monkeypatch):
    both = {**digits, "other": digits["digits"]}
    exp = _experiment(datasets="[digits, other]", selectors="[fstat]")
    run_experiment(exp, tmp_path, data=both, n_jobs=1)
    original = (tmp_path / RANKINGS_FILE).read_bytes()
    (tmp_path / RANKINGS_FILE).unlink()
    import fsbench.datasets as datasets_module

    monkeypatch.setattr(datasets_module, "locate", lambda name, data_dir=None: None)
    lines = []
    regenerate_rankings(tmp_path, data=digits, echo=lines.append)
    assert any("skipped dataset other: its files are not found" in n for n in lines), lines
    assert set(load_rankings(tmp_path)["dataset"]) == {"digits"}
    # with a rankings.csv.gz of this configuration, the skipped dataset's rankings are kept
    (tmp_path / RANKINGS_FILE).write_bytes(original)
    regenerate_rankings(tmp_path, data=digits)
    assert (tmp_path / RANKINGS_FILE).read_bytes() == original


def test_regeneration_refuses_rows_that_are_not_its_configurations(finished, digits, tmp_path):
    out = _without_task_files(copy_folder(finished, tmp_path))
    runs = load_runs(out)
    (out / RUNS_FILE).write_bytes(gzip.compress(runs.assign(seed=runs["seed"] + 1).to_csv(index=False).encode()))
    with pytest.raises(FsbenchError, match="another configuration.*seed"):
        regenerate_rankings(out, data=digits)
    assert not (out / "cache" / "regenerated-rankings").exists() and (out / RANKINGS_FILE).exists()
    result = CliRunner().invoke(fsbench_main, ["rankings", "regenerate", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "No runs.csv.gz in" in result.output


# ----------------------------------------------------------------------------- rankings vs rows
def test_rankings_that_do_not_reproduce_their_rows_are_dropped(finished, digits, tmp_path):
    from sklearn.svm import SVC

    from fsbench.engine.check_rankings import check_rankings
    from fsbench.storage.rankings import rankings_fingerprint

    out = copy_folder(finished, tmp_path)
    before = (out / RANKINGS_FILE).read_bytes()
    assert check_rankings(out, data=digits) == []  # a run's own rankings reproduce its rows
    assert (out / RANKINGS_FILE).read_bytes() == before

    # one task's ranking replaced by its reverse: its top 3 are other features
    rankings = load_rankings(out)
    key = ("digits", 0, 0, "fstat")
    mask = (rankings.dataset == key[0]) & (rankings.repeat == key[1]) & (rankings.fold == key[2]) & (
        rankings.selector == key[3])
    tampered = rankings.copy()
    tampered.loc[mask, "feature"] = tampered.loc[mask, "feature"].to_numpy()[::-1]
    write_rankings_table(out, tampered, rankings_fingerprint(out))
    # independently: the reversed top 3 on the task's split does not give the row's n_correct
    X, y = digits["digits"].X, digits["digits"].y
    runs = load_runs(out)
    row = runs[(runs.dataset == key[0]) & (runs.repeat == 0) & (runs.fold == 0) & (runs.selector == "fstat")
               & (runs.k == 3)].iloc[0]
    train = _train_part(y, row.split_seed)
    test = np.setdiff1d(np.arange(y.size), train)
    mean, std = X[train].mean(0), X[train].std(0)
    Z = (X - mean) / np.where(std == 0, 1.0, std)
    top3 = tampered.loc[mask].sort_values("position")["feature"].to_numpy()[:3]
    replayed = int((SVC(kernel="linear", C=1).fit(Z[train][:, top3], y[train]).predict(Z[test][:, top3])
                    == y[test]).sum())
    assert replayed != int(row.n_correct)

    dropped = check_rankings(out, data=digits)
    assert len(dropped) == 1 and dropped[0].startswith("digits repeat 0 fold 0 fstat")
    after = load_rankings(out)
    assert not ((after.dataset == "digits") & (after.repeat == 0) & (after.fold == 0)
                & (after.selector == "fstat")).any()
    pd.testing.assert_frame_equal(after.reset_index(drop=True),
                                  rankings[~mask.to_numpy()].reset_index(drop=True))
    assert rankings_fingerprint(out) == rankings_fingerprint(finished)


# ----------------------------------------------------------------------------- faults
def _kill_after(monkeypatch, n, fitted):
    """rankings._refit raising KeyboardInterrupt once ``n`` fits were made (as a killed regeneration)."""
    real = rankings_module._refit

    def refit(*args):
        if len(fitted) == n:
            raise KeyboardInterrupt
        fitted.append(args[1].id)
        return real(*args)

    monkeypatch.setattr(rankings_module, "_refit", refit)
    return real


@pytest.mark.parametrize("damage", ["truncated", "another fingerprint", "cut ranking"])
def test_a_damaged_saved_refit_is_fitted_again(finished, digits, tmp_path, monkeypatch, damage):
    out = _without_task_files(copy_folder(finished, tmp_path))
    (out / RANKINGS_FILE).unlink()
    fitted = []
    real = _kill_after(monkeypatch, 3, fitted)
    with pytest.raises(KeyboardInterrupt):
        regenerate_rankings(out, data=digits)
    folder = out / "cache" / "regenerated-rankings"
    saved = sorted(folder.glob("*.json"))
    assert len(saved) == 3
    victim = saved[1]
    if damage == "truncated":
        victim.write_bytes(victim.read_bytes()[:20])
    else:
        record = json.loads(victim.read_text())
        if damage == "another fingerprint":
            record["fingerprint"] = "0" * 16
        else:
            record["ranking"] = record["ranking"][:2]
        victim.write_text(json.dumps(record))
    (folder / ".leftover.json.tmp").write_text("{")  # a killed writer's temporary file
    refitted = []
    monkeypatch.setattr(rankings_module, "_refit", lambda *args: (refitted.append(args[1].id), real(*args))[1])
    regenerate_rankings(out, data=digits)
    assert len(refitted) == 6 and set(refitted) == {victim.stem} | (_all_ids(out) - set(fitted))
    assert (out / RANKINGS_FILE).read_bytes() == (finished / RANKINGS_FILE).read_bytes()
    assert not folder.exists()


def _all_ids(out):
    from fsbench.engine.resume import _task_ids

    return set(_task_ids(load_runs(out)))


def test_a_regeneration_refuses_a_folder_another_process_holds(finished, digits, tmp_path):
    from test_integrity import _lock_held_by_another_process

    from fsbench.engine.check_rankings import check_rankings

    out = _without_task_files(copy_folder(finished, tmp_path))
    before = (out / RANKINGS_FILE).read_bytes()
    with _lock_held_by_another_process(out):
        with pytest.raises(FsbenchError, match="Another fsbench process is writing to"):
            regenerate_rankings(out, data=digits)
        with pytest.raises(FsbenchError, match="Another fsbench process is writing to"):
            check_rankings(out, data=digits)
    assert (out / RANKINGS_FILE).read_bytes() == before and not (out / "cache").exists()


def test_a_regeneration_refuses_rows_of_another_fingerprint(finished, digits, tmp_path):
    out = _without_task_files(copy_folder(finished, tmp_path))
    runs = load_runs(out)
    (out / RUNS_FILE).write_bytes(gzip.compress(runs.assign(fingerprint="0" * 16).to_csv(index=False).encode()))
    before = (out / RANKINGS_FILE).read_bytes()
    with pytest.raises(FsbenchError, match="holds rows of fingerprint 0{16}, its config.yaml"):
        regenerate_rankings(out, data=digits)
    assert (out / RANKINGS_FILE).read_bytes() == before


def _one_sentence(result, text):
    assert result.exit_code == 2, result.output
    assert text in result.output and "Traceback" not in result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output


@pytest.mark.parametrize("command", ["regenerate", "check"])
def test_the_commands_refuse_bad_input_in_one_sentence(finished, tmp_path, command):
    def invoke(*args):
        return CliRunner().invoke(fsbench_main, ["rankings", command, *args])

    missing = tmp_path / "missing"
    _one_sentence(invoke(str(missing)), "No runs.csv.gz in")
    assert not missing.exists()  # the lock never created it
    (tmp_path / "empty").mkdir()
    _one_sentence(invoke(str(tmp_path / "empty")), "No runs.csv.gz in")
    no_config = tmp_path / "no-config"
    no_config.mkdir()
    shutil.copy(finished / RUNS_FILE, no_config / RUNS_FILE)
    _one_sentence(invoke(str(no_config)), "config.yaml")
    out = copy_folder(finished, tmp_path)
    for jobs in ("0", "-2"):
        _one_sentence(invoke(str(out), "-j", jobs), f"n_jobs = {jobs}")
    _one_sentence(invoke(str(out), "--n-jobs", "two"), "'two' is not a valid integer")
    _one_sentence(invoke(), "Missing argument 'RESULTS_DIR'")


def test_the_commands_run_as_the_installed_script(tmp_path):
    """``python -m fsbench.cli rankings ...`` (what the ``fsbench`` script runs): the group, its
    subcommands and their options exist, and a bad folder is one sentence with exit status 2."""
    for command in ("regenerate", "check"):
        shown = subprocess.run([sys.executable, "-m", "fsbench.cli", "rankings", command, "--help"],
                               capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0 and "RESULTS_DIR" in shown.stdout
        assert "--data-dir" in shown.stdout and "--n-jobs" in shown.stdout
        done = subprocess.run([sys.executable, "-m", "fsbench.cli", "rankings", command, str(tmp_path / "none")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith("Error: No runs.csv.gz in") and done.stderr.count("\n") == 1, done.stderr


def test_the_regenerate_command_writes_the_run_rankings_and_resumes(finished, digits, tmp_path, monkeypatch):
    out = _without_task_files(copy_folder(finished, tmp_path))
    (out / RANKINGS_FILE).unlink()
    monkeypatch.setattr(rankings_module, "load_data", lambda names, data, *a: digits)
    fitted: list[str] = []
    real = _kill_after(monkeypatch, 3, fitted)
    result = CliRunner().invoke(fsbench_main, ["rankings", "regenerate", str(out)])
    assert result.exit_code == 130 and "Traceback" not in result.output, result.output
    assert result.output.rstrip().endswith("Interrupted: the rankings refitted so far are kept; run the same "
                                           "command again to continue.")
    assert not (out / RANKINGS_FILE).exists()
    monkeypatch.setattr(rankings_module, "_refit", lambda *args: (fitted.append(args[1].id), real(*args))[1])
    result = CliRunner().invoke(fsbench_main, ["rankings", "regenerate", str(out), "-j", "1"])
    assert result.exit_code == 0, result.output
    assert len(fitted) == 8 and len(set(fitted)) == 8  # the three refitted before Ctrl-C are not refitted
    assert result.stdout == f"wrote {out / RANKINGS_FILE}\n"  # progress and notes go to stderr
    assert "8 of 8 tasks ranked" in result.stderr
    # the run's rankings, which test_rankings_equal_rankings_computed_directly checks against scikit-learn
    assert (out / RANKINGS_FILE).read_bytes() == (finished / RANKINGS_FILE).read_bytes()


def test_the_check_command_drops_a_ranking_that_does_not_reproduce_its_rows(finished, digits, tmp_path,
                                                                             monkeypatch):
    import fsbench.engine.check_rankings as check_module
    from fsbench.storage.rankings import rankings_fingerprint

    out = copy_folder(finished, tmp_path)
    monkeypatch.setattr(check_module, "load_data", lambda names, data, *a: digits)
    result = CliRunner().invoke(fsbench_main, ["rankings", "check", str(out)])
    assert result.exit_code == 0 and result.stdout == "", result.output
    assert result.stderr.rstrip().endswith("8 of 8 rankings reproduce their rows")
    rankings = load_rankings(out)
    # repeat 1's random control ranked by its reverse: the rows' top 3 came from other features
    mask = ((rankings.repeat == 1) & (rankings.selector == "random")).to_numpy()
    tampered = rankings.copy()
    tampered.loc[mask, "feature"] = tampered.loc[mask, "feature"].to_numpy()[::-1]
    write_rankings_table(out, tampered, rankings_fingerprint(out))
    result = CliRunner().invoke(fsbench_main, ["rankings", "check", str(out), "--n-jobs", "2"])
    assert result.exit_code == 0, result.output
    assert "dropped the ranking of digits repeat 1 fold 0 random" in result.stderr
    assert "7 of 8 rankings reproduce their rows" in result.stderr
    pd.testing.assert_frame_equal(load_rankings(out), rankings[~mask].reset_index(drop=True))


def test_the_check_refuses_a_damaged_or_missing_rankings_file(finished, tmp_path):
    out = copy_folder(finished, tmp_path)
    path = out / RANKINGS_FILE
    path.write_bytes(path.read_bytes()[:100])
    damaged = path.read_bytes()
    _one_sentence(CliRunner().invoke(fsbench_main, ["rankings", "check", str(out)]), "rankings.csv.gz' is damaged")
    assert path.read_bytes() == damaged
    path.unlink()
    _one_sentence(CliRunner().invoke(fsbench_main, ["rankings", "check", str(out)]), "No rankings.csv.gz in")


def test_an_interrupted_check_leaves_the_rankings_file_as_it_was(finished, digits, tmp_path, monkeypatch):
    import fsbench.engine.check_rankings as check_module
    from fsbench.storage.rankings import rankings_fingerprint

    out = copy_folder(finished, tmp_path)
    rankings = load_rankings(out)
    # every ranking reversed: a finished check would drop them all
    tampered = rankings.assign(
        feature=rankings.groupby(["repeat", "selector"])["feature"].transform(lambda f: f[::-1].to_numpy()))
    write_rankings_table(out, tampered, rankings_fingerprint(out))
    before = (out / RANKINGS_FILE).read_bytes()
    real, calls = check_module._replay, []

    def interrupted(*args):
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(check_module, "_replay", interrupted)
    monkeypatch.setattr(check_module, "load_data", lambda names, data, *a: digits)
    result = CliRunner().invoke(fsbench_main, ["rankings", "check", str(out)])
    assert result.exit_code == 130 and "Traceback" not in result.output
    assert (out / RANKINGS_FILE).read_bytes() == before
    assert not list(out.glob(".*.tmp"))
    monkeypatch.setattr(check_module, "_replay", real)
    assert len(check_module.check_rankings(out, data=digits)) == 8  # not interrupted: every one dropped
    assert not (out / RANKINGS_FILE).exists()


def test_a_ranking_without_rows_is_dropped_by_the_check(finished, digits, tmp_path):
    from fsbench.engine.check_rankings import check_rankings

    out = copy_folder(finished, tmp_path)
    runs = load_runs(out)
    gone = (runs.selector == "random") & (runs.repeat == 1)
    (out / RUNS_FILE).write_bytes(gzip.compress(runs[~gone].to_csv(index=False).encode(), mtime=0))
    dropped = check_rankings(out, data=digits)
    assert dropped == ["digits repeat 1 fold 0 random (runs.csv.gz holds no row of it)"]
    kept = load_rankings(out)
    assert len(kept) == 7 * K and kept[(kept.selector == "random") & (kept.repeat == 1)].empty


def test_every_committed_results_config_rebuilds_to_its_fingerprint():
    """config.yaml of every committed results folder (known data, users' files, classifier lists
    included) rebuilds to the fingerprint it records, through the function the rankings commands use."""
    import yaml

    from fsbench.configuration.experiment import Experiment
    from fsbench.engine.traces import experiment_from_results

    root = Path(__file__).resolve().parents[1] / "results"
    folders = sorted(p.parent for p in root.glob("**/config.yaml") if (p.parent / "runs.csv.gz").is_file())
    assert len(folders) >= 10
    for folder in folders:
        doc = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
        assert Experiment.from_dict(doc).fingerprint() == doc["fingerprint"], folder
        assert experiment_from_results(folder).fingerprint() == doc["fingerprint"], folder
    assert any("known_data" in yaml.safe_load((f / "config.yaml").read_text()) for f in folders)


def test_rankings_of_a_users_file_with_probes_are_checked_and_regenerated(tmp_path):
    """A run on a user's (sparse) file with probes: 'rankings check' replays every ranking against its
    rows and 'rankings regenerate' writes the same rankings (both refused the folder before)."""
    import scipy.sparse
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    y = np.arange(60) % 3
    X = scipy.sparse.hstack([scipy.sparse.random(60, 300, density=0.03, format="csr", random_state=2),
                             scipy.sparse.csr_matrix(np.eye(3)[y] * rng.uniform(1, 2, (60, 1)))], format="csr")
    dump_svmlight_file(X, y, str(tmp_path / "text.svm"))
    (tmp_path / "c.yaml").write_text("""\
name: text
seed: 0
datasets:
  - name: text-probes
    base: {path: text.svm}
    probes: {n: 40, kind: permuted, seed: 1}
protocol: {kind: holdout, train_size: 0.6, n_trials: 3}
selectors: [fisher, chi2]
classifier: {name: linear_svm, backend: liblinear, C: [1]}
n_features: [2, 5]
n_jobs: 1
""")
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(fsbench_main, ["run", str(tmp_path / "c.yaml"), "-o", str(out), "-q"]).exit_code == 0
    before = gzip.decompress((out / "rankings.csv.gz").read_bytes())
    # the user's file changed since the run: one sentence, exit 2, the rankings untouched
    original_file = (tmp_path / "text.svm").read_bytes()
    (tmp_path / "text.svm").write_bytes(original_file + b"0 1:5\n")
    changed = runner.invoke(fsbench_main, ["rankings", "check", str(out)])
    assert changed.exit_code == 2 and "changed since" in changed.output, changed.output
    assert len(changed.output.strip().splitlines()) == 1
    assert gzip.decompress((out / "rankings.csv.gz").read_bytes()) == before
    (tmp_path / "text.svm").write_bytes(original_file)
    checked = runner.invoke(fsbench_main, ["rankings", "check", str(out)])
    assert checked.exit_code == 0, checked.output
    assert "6 of 6 rankings reproduce their rows" in checked.output
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "rankings.csv.gz").unlink()
    shutil.rmtree(copy / "tasks")
    made = runner.invoke(fsbench_main, ["rankings", "regenerate", str(copy)])
    assert made.exit_code == 0, made.output
    regenerated = pd.read_csv(copy / "rankings.csv.gz").drop(columns=["fingerprint"], errors="ignore")
    original = pd.read_csv(io.BytesIO(before)).drop(columns=["fingerprint"], errors="ignore")
    pd.testing.assert_frame_equal(regenerated.sort_values(list(regenerated.columns)).reset_index(drop=True),
                                  original.sort_values(list(original.columns)).reset_index(drop=True))
