"""Stored rows are verified before they are reused (digests), and label columns read as strings."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import copy_folder

from fsbench.configuration.parse import parse_experiment
from fsbench.engine.runner import run_experiment
from fsbench.storage.digests import DIGEST_COLUMN, rows_digest, with_rows_digests
from fsbench.storage.rankings import load_rankings, write_rankings
from fsbench.storage.runs import RUNS_FILE, load_runs, write_runs
from fsbench.storage.task_files import (
    TaskFile,
    finished_tasks,
    load_failures,
    read_task_file,
    task_path,
    write_failures,
)

TIMING = ["fit_seconds", "task_seconds"]


class _Spec:
    def __init__(self, name, n_features):
        self.name, self.n_features = name, n_features


def _experiment():
    # rfs: iterative (n_iter), diagnostics (a bool and a float column the other selectors leave empty)
    return parse_experiment("""
name: unit
seed: 0
datasets: [digits]
protocol: {kind: holdout, train_size: 0.5, n_trials: 2}
inner_cv: {n_splits: 3}
selectors: [fisher, random, {name: rfs, params: {max_iter: 20}}]
classifier: {name: linear_svm, C: [0.01, 1]}
n_features: [4, 16]
""", "unit.yaml", dataset_resolver=lambda n: _Spec("digits", 64))


@pytest.fixture(scope="module")
def finished(tmp_path_factory, digits):
    """A finished run, copied by each test that changes it."""
    out = tmp_path_factory.mktemp("finished") / "run"
    run_experiment(_experiment(), out, data=digits, n_jobs=1)
    return out


def _rows(df):
    return (df.drop(columns=[*TIMING, DIGEST_COLUMN], errors="ignore")
            .sort_values(["dataset", "repeat", "fold", "selector", "k"]).reset_index(drop=True))


def _run(out, digits):
    """Run the experiment into ``out``; returns the result and the ids of the tasks it computed."""
    ran: list[str] = []
    result = run_experiment(_experiment(), out, data=digits, n_jobs=1, on_task_done=ran.append)
    return result, ran


def _csv_rows(out):
    return pd.read_csv(io.BytesIO(gzip.decompress((out / RUNS_FILE).read_bytes())), keep_default_na=False)


# ----------------------------------------------------------------------------- task files
def test_a_task_file_whose_numbers_were_changed_is_named_and_recomputed(finished, tmp_path, digits):
    out = copy_folder(finished, tmp_path)
    original = _rows(load_runs(out))
    task_id = sorted(finished_tasks(out))[0]
    doc = json.loads(task_path(out, task_id).read_text())
    true_accuracy = doc["rows"][0]["n_correct"] / doc["rows"][0]["n_test"]
    doc["rows"][0]["accuracy"] = 0.999  # valid JSON, plausible number
    task_path(out, task_id).write_text(json.dumps(doc))

    result, ran = _run(out, digits)
    assert ran == [task_id]  # that task alone is recomputed
    named = [n for n in result.notes if task_id in n and "digest" in n]
    assert named and str(task_path(out, task_id)) in named[0]
    runs = _rows(result.runs)
    assert not (runs["accuracy"] == 0.999).any()
    # the recomputed row gives the accuracy its own counts give, as the first run did
    first = runs[(runs["selector"] == doc["rows"][0]["selector"]) & (runs["repeat"] == doc["rows"][0]["repeat"])
                 & (runs["k"] == doc["rows"][0]["k"])].iloc[0]
    assert first["accuracy"] == pytest.approx(true_accuracy, abs=1e-15)
    pd.testing.assert_frame_equal(runs, original)


def test_a_changed_ranking_in_a_task_file_is_recomputed(finished, tmp_path, digits):
    out = copy_folder(finished, tmp_path)
    task_id = sorted(finished_tasks(out))[-1]
    doc = json.loads(task_path(out, task_id).read_text())
    doc["ranking"][0], doc["ranking"][1] = doc["ranking"][1], doc["ranking"][0]
    task_path(out, task_id).write_text(json.dumps(doc))
    _, ran = _run(out, digits)
    assert ran == [task_id]


@pytest.mark.parametrize("garbage", ["sha256:" + "0" * 64, "", 5, ["sha256:"], {"sha256": 1}])
def test_a_task_file_whose_digest_is_garbage_is_recomputed(finished, tmp_path, digits, garbage):
    out = copy_folder(finished, tmp_path)
    task_id = sorted(finished_tasks(out))[1]
    doc = json.loads(task_path(out, task_id).read_text())
    doc["digest"] = garbage
    task_path(out, task_id).write_text(json.dumps(doc))
    result, ran = _run(out, digits)
    assert ran == [task_id]
    assert any(task_id in n and "digest" in n for n in result.notes)


def _without_digest(out, task_id, accuracy=None):
    doc = json.loads(task_path(out, task_id).read_text())
    del doc["digest"]
    if accuracy is not None:
        doc["rows"][0]["accuracy"] = accuracy
    task_path(out, task_id).write_text(json.dumps(doc))


def test_a_task_file_without_a_digest_is_checked_against_the_runs_file(finished, tmp_path, digits):
    # its rows as written: runs.csv.gz's digest of them vouches for them (no note)
    out = copy_folder(finished, tmp_path)
    kept, edited = sorted(finished_tasks(out))[:2]
    _without_digest(out, kept)
    assert read_task_file(out, kept).digest is None
    # its digest removed and a number changed: runs.csv.gz's digest of its rows no longer matches
    _without_digest(out, edited, accuracy=0.999)
    result, ran = _run(out, digits)
    assert ran == [edited]
    assert any(edited in n and "digest" in n for n in result.notes)
    assert not any("before fsbench recorded digests" in n for n in result.notes)
    assert not (result.runs["accuracy"] == 0.999).any()


def test_a_task_file_written_before_digests_is_kept_with_a_note(finished, tmp_path, digits):
    # no digest in the file, nor in runs.csv.gz (as before digests): nothing can verify it, it is kept
    out = copy_folder(finished, tmp_path)
    task_id = sorted(finished_tasks(out))[0]
    _without_digest(out, task_id)
    (out / RUNS_FILE).unlink()
    result, ran = _run(out, digits)
    assert ran == []
    assert any("1 tasks hold rows written before fsbench recorded digests" in n for n in result.notes)


# ----------------------------------------------------------------------------- runs.csv.gz
def test_a_hand_edited_runs_file_restored_without_task_files_recomputes_that_task(finished, tmp_path, digits):
    out = copy_folder(finished, tmp_path)
    original = _rows(load_runs(out))
    shutil.rmtree(out / "tasks")
    text = gzip.decompress((out / RUNS_FILE).read_bytes()).decode()
    records = list(csv.reader(io.StringIO(text)))  # quoted cells (classifier_params' JSON) hold commas
    header, cells = records[0], records[5]
    edited = dict(zip(header, cells, strict=True))
    cells[header.index("accuracy")] = "0.999"
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(records)
    (out / RUNS_FILE).write_bytes(gzip.compress(buffer.getvalue().encode()))

    result, ran = _run(out, digits)
    assert len(ran) == 1 and ran[0].startswith(f"digits__r{int(edited['repeat']):03d}f00__{edited['selector']}__")
    assert any(ran[0] in n and "runs.csv.gz" in n and "digest" in n for n in result.notes)
    pd.testing.assert_frame_equal(_rows(result.runs), original)


@pytest.mark.parametrize("rows_of_task", ["one", "every"])
def test_a_task_whose_rows_lost_their_digest_in_the_runs_file_is_recomputed(finished, tmp_path, digits, rows_of_task):
    # one writer writes runs.csv.gz whole: a task without its digest among tasks with theirs was edited
    out = copy_folder(finished, tmp_path)
    original = _rows(load_runs(out))
    shutil.rmtree(out / "tasks")
    df = _csv_rows(out)
    first = df.iloc[0]
    rows = df.index[(df[["repeat", "selector"]] == first[["repeat", "selector"]]).all(axis=1)]
    df.loc[rows[:1] if rows_of_task == "one" else rows, DIGEST_COLUMN] = ""
    (out / RUNS_FILE).write_bytes(gzip.compress(df.to_csv(index=False, float_format="%.17g").encode()))
    result, ran = _run(out, digits)
    assert len(ran) == 1 and ran[0].startswith(f"digits__r{int(first['repeat']):03d}f00__{first['selector']}__")
    assert any(ran[0] in n and "runs.csv.gz" in n and "digest" in n for n in result.notes)
    assert not any("before fsbench recorded digests" in n for n in result.notes)
    pd.testing.assert_frame_equal(_rows(result.runs), original)


def test_digests_survive_a_tool_that_rewrites_the_csv_faithfully(finished, tmp_path, digits):
    # shortest float repr instead of %.17g, columns and rows reordered, no compression level in common
    out = copy_folder(finished, tmp_path)
    shutil.rmtree(out / "tasks")
    df = _csv_rows(out)
    df = df[list(reversed(df.columns))].iloc[::-1]
    (out / RUNS_FILE).write_bytes(gzip.compress(df.to_csv(index=False).encode(), compresslevel=1))
    result, ran = _run(out, digits)
    assert ran == [] and not any("digest" in n for n in result.notes)


def test_a_rows_digest_is_a_sha256_of_the_rows_canonical_values():
    # computed here by hand: keys sorted, integral floats as integers, floats by repr, missing dropped
    rows = [{"k": 16, "accuracy": 0.1, "C": 1.0, "selector": "fisher", "note": "", "gap": float("nan")},
            {"k": 4, "accuracy": 2 / 3, "C": 1e-2, "selector": "fisher", "note": None, "ok": True}]
    canonical = sorted([
        json.dumps([["C", "1"], ["accuracy", "0.1"], ["k", "16"], ["selector", "fisher"]], separators=(",", ":")),
        json.dumps([["C", "0.01"], ["accuracy", "0.6666666666666666"], ["k", "4"], ["ok", "True"],
                    ["selector", "fisher"]], separators=(",", ":"))])
    expected = hashlib.sha256(json.dumps({"rows": canonical}, separators=(",", ":")).encode()).hexdigest()
    assert rows_digest(rows) == f"sha256:{expected}"
    # read back through CSV (%.17g, ints as floats where a value is missing): the same digest
    back = pd.read_csv(io.StringIO(pd.DataFrame(rows).to_csv(index=False, float_format="%.17g")))
    assert back["C"].dtype == float and rows_digest(back.to_dict("records")) == rows_digest(rows)
    assert rows_digest([{**rows[0], "accuracy": float("0.10000000000000001")}, rows[1]]) == rows_digest(rows)
    assert rows_digest([{**rows[0], "accuracy": 0.10000000000000002}, rows[1]]) != rows_digest(rows)


def test_every_task_of_a_new_runs_file_carries_the_digest_of_its_rows(finished):
    # recomputed here from the task files' rows: one digest per task, the same on each of its rows
    runs = load_runs(finished)
    assert runs.groupby(["dataset", "repeat", "fold", "selector"])[DIGEST_COLUMN].nunique().eq(1).all()
    for task_id in finished_tasks(finished):
        rows = json.loads(task_path(finished, task_id).read_text())["rows"]
        mine = runs[(runs["selector"] == rows[0]["selector"]) & (runs["repeat"] == rows[0]["repeat"])]
        assert set(mine[DIGEST_COLUMN]) == {rows_digest(rows)}


def test_a_runs_file_written_before_digests_resumes_unchanged_with_a_note(finished, tmp_path, digits):
    out = copy_folder(finished, tmp_path)
    shutil.rmtree(out / "tasks")
    df = _csv_rows(out).drop(columns=DIGEST_COLUMN)
    (out / RUNS_FILE).write_bytes(gzip.compress(df.to_csv(index=False, float_format="%.17g").encode(), mtime=0))
    before = (out / RUNS_FILE).read_bytes()
    result, ran = _run(out, digits)
    assert ran == []
    assert any("6 tasks hold rows written before fsbench recorded digests" in n for n in result.notes)
    assert (out / RUNS_FILE).read_bytes() == before  # same rows: the legacy file is not rewritten


def test_collecting_digests_the_rows_once_and_keeps_a_runs_file_of_the_same_rows(finished, tmp_path, monkeypatch):
    import fsbench.storage.runs as store

    out = copy_folder(finished, tmp_path)
    calls = []
    monkeypatch.setattr(store, "with_rows_digests", lambda *a: calls.append(1) or with_rows_digests(*a))
    before = (out / RUNS_FILE).read_bytes()
    store.collect_runs(out)  # the same rows: compared, not rewritten
    assert (out / RUNS_FILE).read_bytes() == before and len(calls) == 1
    task_path(out, sorted(finished_tasks(out))[0]).unlink()
    store.collect_runs(out)  # other rows: written from the same digests
    assert len(calls) == 2 and len(load_runs(out)) < len(load_runs(finished))


def test_a_damaged_runs_file_is_replaced_by_the_rows_written_over_it(finished, tmp_path):
    out = copy_folder(finished, tmp_path)
    (out / RUNS_FILE).write_bytes(b"\x1f\x8b cut short")
    rows = [row for task_id in sorted(finished_tasks(out)) for row in read_task_file(out, task_id).rows]
    pd.testing.assert_frame_equal(_rows(write_runs(out, rows)), _rows(load_runs(finished)))


def test_committed_paper_results_carry_digests_that_verify():
    # the RFS paper's rows, recomputed on 2026-11-27, carry their digests: a committed row edited
    # by hand or by a tool would be named here (and recomputed by a run instead of reused)
    from pathlib import Path

    from fsbench.engine.resume import _rows_by_task, check_rows_digests

    folder = Path(__file__).resolve().parent.parent / "results" / "papers" / "rfs"
    runs = load_runs(folder)
    assert DIGEST_COLUMN in runs.columns and len(runs) > 1000
    changed, legacy = check_rows_digests(_rows_by_task(runs))
    assert changed == [] and legacy == []
    edited = runs.copy()
    edited.loc[5, "n_correct"] += 1
    changed, _ = check_rows_digests(_rows_by_task(edited))
    assert len(changed) == 1


# ----------------------------------------------------------------------------- labels as strings
MISSING_LOOKING = ["NA", "None", "null", "nan", "N/A", "NULL"]


def _label_rows():
    rows = []
    for i, name in enumerate(MISSING_LOOKING):
        for k in (4, 8):
            rows.append({"experiment": "NA", "dataset": "null", "repeat": 0, "fold": 0, "selector": name,
                         "method": "None", "classifier": "nan", "k": k, "accuracy": 0.5 + i / 100,
                         "n_correct": 50 + i, "n_test": 100, "inner_accuracy": float("nan")})
    return rows


def test_labels_that_look_missing_are_read_as_strings(tmp_path):
    write_runs(tmp_path, _label_rows())
    runs = load_runs(tmp_path)
    assert sorted(set(runs["selector"])) == sorted(MISSING_LOOKING)
    for column, value in (("dataset", "null"), ("experiment", "NA"), ("method", "None"), ("classifier", "nan")):
        assert list(runs[column].unique()) == [value]
    assert runs["inner_accuracy"].isna().all()  # numbers still read their missing values
    write_failures(tmp_path, [{"dataset": "NA", "repeat": 0, "fold": 0, "selector": "null", "method": "None",
                               "error": "ValueError: x", "seconds": 1.0}])
    failures = load_failures(tmp_path)
    assert failures.loc[0, ["dataset", "selector", "method"]].tolist() == ["NA", "null", "None"]
    write_rankings(tmp_path, [TaskFile([{"dataset": "NA", "repeat": 0, "fold": 0, "selector": "null"}], [3, 1, 2])],
                   "f")
    rankings = load_rankings(tmp_path)
    assert set(rankings["dataset"]) == {"NA"} and set(rankings["selector"]) == {"null"}


def test_table_and_plot_of_labels_that_look_missing(tmp_path):
    from fsbench.report.plots import plot_curves
    from fsbench.report.tables import format_table

    rows = [{k: v for k, v in r.items() if k != "classifier"} for r in _label_rows()]
    rows += [{**r, "repeat": 1, "n_correct": r["n_correct"] + 2} for r in rows]
    write_runs(tmp_path, rows)
    runs = load_runs(tmp_path)
    table = format_table(runs, None, "csv")
    for name in MISSING_LOOKING:
        assert name in table
    paths = plot_curves(runs, tmp_path / "curves")
    assert all(p.stat().st_size > 0 for p in paths)


def test_rows_of_labels_that_look_missing_are_restored_by_their_task(tmp_path):
    from fsbench.configuration.experiment import SelectorConfig
    from fsbench.engine.resume import existing_rows
    from fsbench.engine.tasks import Task
    from fsbench.evaluation.protocol import Split

    rows = [{**r, "fingerprint": "f"} for r in _label_rows()]
    write_runs(tmp_path, rows)
    tasks = [Task("null", Split(0, 0, np.empty(0), np.empty(0), 0), SelectorConfig(name, name))
             for name in MISSING_LOOKING]
    found = existing_rows(tmp_path, tasks, "f")
    assert sorted(found.from_runs) == sorted(t.id for t in tasks)
    for task in tasks:
        assert {r["selector"] for r in found.rows[task.id]} == {task.selector.label}
        assert sorted(r["k"] for r in found.rows[task.id]) == [4, 8]


def test_an_unreadable_config_yaml_reads_as_no_config(tmp_path):
    """A results folder's config.yaml that is not UTF-8 text (or not YAML) is read as absent, as the
    docstring says, instead of raising UnicodeDecodeError out of table, stats and resume."""
    from fsbench.storage.folder import planned_datasets, planned_selectors, read_config_doc

    (tmp_path / "config.yaml").write_bytes(b"name: \xff\xfe\x00broken\n")
    assert read_config_doc(tmp_path) == {}
    assert planned_datasets(tmp_path) == ([], [])
    assert planned_selectors(tmp_path) == []
    (tmp_path / "config.yaml").write_text("name: [unclosed\n")
    assert read_config_doc(tmp_path) == {}
