"""The command line as a user meets it: help, a run, tables, plots, and every bad input."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.io
from click.testing import CliRunner
from conftest import papers_data

from fsbench import __version__
from fsbench.cli import main
from fsbench.datasets import registry
from fsbench.storage.runs import write_runs

SMALL = """\
name: clitest
seed: 0
datasets: [digits]
protocol: {{kind: holdout, train_size: 0.5, n_trials: {trials}}}
inner_cv: {{n_splits: 3}}
selectors: [fisher, fstat, random]
classifier: {{name: linear_svm, C: [0.01, 1]}}
n_features: {ks}
"""


def _config(tmp_path: Path, trials: int = 2, ks: str = "[4, 16]", text: str | None = None) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(text if text is not None else SMALL.format(trials=trials, ks=ks))
    return path


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.setenv("FSBENCH_CACHE", str(tmp_path / "user-cache"))
    return CliRunner()


def _fail(runner: CliRunner, args: list[str], *fragments: str) -> str:
    result = runner.invoke(main, args)
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    message = result.output.strip()
    assert message.startswith("Error: ") and "\n" not in message and "Traceback" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


@pytest.mark.parametrize("args", [[], ["run"], ["table"], ["plot"], ["selectors"], ["datasets"],
                                  ["datasets", "list"], ["datasets", "info"], ["datasets", "fetch"],
                                  ["discard"]])
def test_every_command_explains_itself(runner, args):
    result = runner.invoke(main, [*args, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output
    assert len(result.output.splitlines()) > 3


def test_version(runner):
    result = runner.invoke(main, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_selectors_lists_parameters(runner):
    out = runner.invoke(main, ["selectors"]).output
    for name in ("fisher", "fstat", "random"):
        assert name in out
    # every parameter with its allowed values and default; fsbench's own not offered for setting
    assert "p: float in [0.05, 1], default 1.0" in out
    assert "solver: 'alternating' | 'joint', default 'alternating'" in out
    assert "zero_tol: float in (0, 0.001] | null, default null" in out
    assert "random_state: not settable" in out and "n_features_to_select" not in out
    # the measured growth of a fit (benchmarks/scale.csv, through the cost model's file)
    sl2p = out.split("\nsl2p ", 1)[1].split("\n")
    assert sl2p[2].strip().startswith("cost: fit at its defaults on d = 1,000 features, one core: ")



def test_a_reader_that_closes_the_pipe_early_ends_the_command_quietly():
    """``fsbench selectors | head -1``: the output has nowhere to go; no error message, status 141.

    The reading end is closed before the command writes anything (it is still importing), so
    its first write fails with EPIPE whatever the pipe's buffer size."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.Popen([sys.executable, "-m", "fsbench.cli", "selectors"], stdout=write_end,
                            stderr=subprocess.PIPE)
    os.close(write_end)
    _, err = proc.communicate(timeout=60)
    assert not err, err.decode()
    assert proc.returncode == 141


def test_run_writes_results_table_and_curves(runner, tmp_path):
    out = tmp_path / "res"
    result = runner.invoke(main, ["run", str(_config(tmp_path)), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    for name in ("runs.csv.gz", "config.yaml", "table.md", "curves.png", "curves.pdf"):
        assert (out / name).is_file(), name
    runs = pd.read_csv(out / "runs.csv.gz")
    assert len(runs) == 2 * 3 * 2 and set(runs.k) == {4, 16}
    assert "| digits |" in result.output

    md = runner.invoke(main, ["table", str(out), "--k", "4"])
    assert md.exit_code == 0 and "top 4 features" in md.output and "±" in md.output
    csv = runner.invoke(main, ["table", str(out), "--format", "csv"])
    assert csv.exit_code == 0 and csv.output.startswith("dataset,selector,k,accuracy_mean")
    tex = runner.invoke(main, ["table", str(out), "--format", "latex"])
    assert tex.exit_code == 0 and r"\begin{tabular}" in tex.output
    _fail(runner, ["table", str(out), "--k", "7"], "k = 7", "4, 16")

    plot = runner.invoke(main, ["plot", str(out), "--out", str(tmp_path / "fig")])
    assert plot.exit_code == 0 and (tmp_path / "fig.png").stat().st_size > 1000

    again = runner.invoke(main, ["run", str(_config(tmp_path)), "--out", str(out), "-q"])
    assert again.exit_code == 0 and "12 resumed" not in again.output and "6 resumed" in again.output


def test_table_of_missing_results(runner, tmp_path):
    _fail(runner, ["table", str(tmp_path / "nothing")], "No results", "fsbench run")


# ----------------------------------------------------------------------------- bad input
def _run_fails(runner, tmp_path, text: str, *fragments: str, data_dir: Path | None = None) -> None:
    out = tmp_path / "out"
    args = ["run", str(_config(tmp_path, text=text)), "--out", str(out), "-q"]
    if data_dir is not None:
        args += ["--data-dir", str(data_dir)]
    _fail(runner, args, *fragments)
    assert not out.exists(), "a failed run must leave no partial output"


def test_malformed_yaml(runner, tmp_path):
    _run_fails(runner, tmp_path, "name: x\ndatasets: [digits\n", "exp.yaml:", "malformed YAML")


def test_unknown_key(runner, tmp_path):
    _run_fails(runner, tmp_path, SMALL.format(trials=2, ks="[4]") + "colour: red\n", "exp.yaml:9", "colour")


def test_wrong_type(runner, tmp_path):
    text = SMALL.format(trials="two", ks="[4]")
    _run_fails(runner, tmp_path, text, "exp.yaml:4", "protocol.n_trials", "integer")


def test_unknown_dataset(runner, tmp_path):
    text = SMALL.format(trials=2, ks="[4]").replace("[digits]", "[digitz]")
    _run_fails(runner, tmp_path, text, "datasets[0]", "digitz", "Did you mean 'digits'")


def test_unknown_selector(runner, tmp_path):
    text = SMALL.format(trials=2, ks="[4]").replace("[fisher,", "[fischer,")
    _run_fails(runner, tmp_path, text, "selectors[0].name", "Did you mean 'fisher'")


def test_k_larger_than_the_features(runner, tmp_path):
    _run_fails(runner, tmp_path, SMALL.format(trials=2, ks="[4, 65]"), "n_features", "64 features")


def test_missing_config_file(runner, tmp_path):
    _fail(runner, ["run", str(tmp_path / "nope.yaml")], "does not exist")


LUNG = """\
name: lungtest
datasets: [lung]
protocol: {kind: holdout, train_size: 0.6, n_trials: 1}
selectors: [fisher]
classifier: {name: linear_svm, C: 1}
n_features: [5]
"""


@pytest.fixture
def unpinned_lung(monkeypatch):
    """The lung.mat files below are made up to test content checks, not provenance: drop the git
    blob id that would otherwise reject them before their content is read."""
    spec = registry.resolve("lung")
    files = tuple(dataclasses.replace(f, git_blob=None) for f in spec.files)
    monkeypatch.setitem(registry._REGISTRY, "lung", dataclasses.replace(spec, files=files))


def _write_lung(folder: Path, X: np.ndarray, y: np.ndarray) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    scipy.io.savemat(folder / "lung.mat", {"X": X, "Y": y.reshape(-1, 1)})
    return folder


def _lung_like(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.repeat([1, 2, 3, 4, 5], [139, 17, 21, 20, 6])
    return rng.normal(size=(203, 3312)), y


def test_missing_dataset_file_says_how_to_fetch(runner, tmp_path):
    _run_fails(runner, tmp_path, LUNG, "lung", "fsbench datasets fetch", "FSBENCH_DATA",
               data_dir=tmp_path / "empty")


def test_wrong_shape(runner, tmp_path, unpinned_lung):
    X, y = _lung_like()
    folder = _write_lung(tmp_path / "data", X[:, :100], y)
    _run_fails(runner, tmp_path, LUNG, "shape", data_dir=folder)


def test_nan_and_inf_values(runner, tmp_path, unpinned_lung):
    for bad in (np.nan, np.inf):
        X, y = _lung_like()
        X[3, 7] = bad
        folder = _write_lung(tmp_path / f"data{bad}", X, y)
        _run_fails(runner, tmp_path, LUNG, "lung", data_dir=folder)


def test_class_too_small_for_the_splits(runner, tmp_path, unpinned_lung):
    X, y = _lung_like()
    y = y.copy()
    y[-6:] = [5, 4, 4, 4, 4, 4]  # class 5 keeps a single sample
    folder = _write_lung(tmp_path / "data", X, y)
    _run_fails(runner, tmp_path, LUNG, "single sample", data_dir=folder)


def test_checksum_mismatch(runner, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    original = papers_data() / "GLIOMA.mat"
    data = scipy.io.loadmat(original)
    data["X"][0, 0] += 1.0  # same shape, one value changed
    scipy.io.savemat(folder / "GLIOMA.mat", {"X": data["X"], "Y": data["Y"]})
    text = LUNG.replace("lungtest", "gliomatest").replace("[lung]", "[glioma]")
    _run_fails(runner, tmp_path, text, "checksum", data_dir=folder)


def test_fsbench_data_may_list_several_folders(tmp_path, monkeypatch):
    # the library searches each folder of $FSBENCH_DATA; the command line must not hand it the
    # whole variable as one folder
    real = papers_data()
    monkeypatch.setenv("FSBENCH_DATA", os.pathsep.join([str(tmp_path / "empty"), str(real)]))
    monkeypatch.setenv("FSBENCH_CACHE", str(tmp_path / "cache"))
    config = tmp_path / "glioma.yaml"
    config.write_text(LUNG.replace("lungtest", "gliomatest").replace("[lung]", "[glioma]"))
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out"), "-q", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert len(pd.read_csv(tmp_path / "out" / "runs.csv.gz")) == 1


# ----------------------------------------------------------------------------- datasets
def test_datasets_list_and_info(runner):
    out = runner.invoke(main, ["datasets", "list"]).output
    for name in ("lung", "glioma", "isolet", "cll-sub-111", "digits"):
        assert name in out
    info = runner.invoke(main, ["datasets", "info", "BrainT2"])
    assert info.exit_code == 0 and "10367" in info.output
    _fail(runner, ["datasets", "info", "glioam"], "Did you mean")
    _fail(runner, ["datasets", "fetch"], "--all")


# ----------------------------------------------------------------------------- kill and resume
def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fsbench.cli", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def test_killed_run_resumes_to_identical_rows(tmp_path):
    config = _config(tmp_path, trials=6, ks="[2, 8, 32]")
    env = {**os.environ, "FSBENCH_CACHE": str(tmp_path / "cache")}
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    assert _cli("run", str(config), "--out", str(reference), "-q", "-j", "1", env=env).wait(300) == 0

    proc = _cli("run", str(config), "--out", str(killed), "-q", "-j", "2", env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((killed / "tasks").glob("*.json"))) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    n_saved = len(list((killed / "tasks").glob("*.json")))
    assert 3 <= n_saved < 18, n_saved
    assert not (killed / "runs.csv.gz").exists()

    assert _cli("run", str(config), "--out", str(killed), "-q", "-j", "2", env=env).wait(300) == 0
    a = pd.read_csv(reference / "runs.csv.gz").drop(columns=["fit_seconds", "task_seconds", "rows_digest"])
    b = pd.read_csv(killed / "runs.csv.gz").drop(columns=["fit_seconds", "task_seconds", "rows_digest"])
    pd.testing.assert_frame_equal(a, b)


def test_discard_removes_one_selector_and_the_next_run_recomputes_only_it(runner, tmp_path):
    out = tmp_path / "res"
    config = str(_config(tmp_path))
    assert runner.invoke(main, ["run", config, "--out", str(out), "-q"]).exit_code == 0
    timing = ["fit_seconds", "task_seconds", "rows_digest"]  # the digest covers the timings
    before = pd.read_csv(out / "runs.csv.gz").drop(columns=timing)
    # as committed: runs.csv.gz without the task files, plus one task finished after it was
    # written (its file only)
    task_files = sorted((out / "tasks").glob("*.json"))
    late = next(p for p in task_files if p.stem.rsplit("__", 1)[0].endswith("__random"))
    for path in task_files:
        if path != late:
            path.unlink()
    full = pd.read_csv(out / "runs.csv.gz")
    late_rows = (full.selector == "random") & (full.repeat == int(late.name.split("__r")[1][:3]))
    write_runs(out, full[~late_rows].to_dict("records"))

    _fail(runner, ["discard", str(out), "-s", "fisher", "-s", "relief"], "'relief'", "fisher, fstat, random")
    _fail(runner, ["discard", str(out), "-s", "fisher", "-d", "iris"], "'iris'", "digits")
    assert len(pd.read_csv(out / "runs.csv.gz")) == len(before) - 2  # refusals change nothing

    result = runner.invoke(main, ["discard", str(out), "-s", "fstat"])
    assert result.exit_code == 0 and "Discarded 2 tasks (4 rows) of fstat" in result.output
    key = ["dataset", "repeat", "fold", "selector", "k"]
    left = pd.read_csv(out / "runs.csv.gz").drop(columns=timing)
    assert list(left.selector[-2:]) == ["random", "random"]  # the late task, appended
    pd.testing.assert_frame_equal(left.sort_values(key).reset_index(drop=True),
                                  before[before.selector != "fstat"].sort_values(key).reset_index(drop=True))
    assert sorted(p.name.split("__")[-2] for p in (out / "tasks").glob("*.json")) == \
        ["fisher"] * 2 + ["random"] * 2
    assert "nothing discarded" in runner.invoke(main, ["discard", str(out), "-s", "fstat"]).output

    again = runner.invoke(main, ["run", config, "--out", str(out), "-q"])
    assert again.exit_code == 0 and "(4 resumed)" in again.output
    rerun = pd.read_csv(out / "runs.csv.gz").drop(columns=timing)
    pd.testing.assert_frame_equal(rerun.sort_values(key).reset_index(drop=True),
                                  before.sort_values(key).reset_index(drop=True))


def test_off_a_terminal_progress_is_counted_lines_and_the_files_line_names_every_file(runner, tmp_path):
    out = tmp_path / "res"
    result = runner.invoke(main, ["run", str(_config(tmp_path)), "--out", str(out), "-j", "1"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    counts = [line for line in lines if " tasks (" in line and "/" in line.split(" tasks")[0]]
    n_tasks = len(list((out / "tasks").glob("*.json")))
    assert counts and counts[-1].startswith(f"clitest: {n_tasks}/{n_tasks} tasks")
    assert not any(line.strip() == "tasks" for line in lines)
    # the last line names the command that makes the results' page; the line before it, every file written
    assert lines[-1].strip().endswith(f"fsbench html {out}"), lines[-1]
    last = lines[-2]
    for name in ("config.yaml", "runs.csv.gz", "rankings.csv.gz", "runlog.jsonl", "table.md", "curves.png",
                 "curves.pdf", "tasks"):
        assert str(out / name) in last, (name, last)
    # every file the last line names exists
    for path in last.split("wrote ", 1)[1].split(" and ")[0].split(", "):
        assert Path(path).is_file(), path


def test_table_output_into_a_missing_folder_creates_it(runner, tmp_path):
    out = tmp_path / "res"
    assert runner.invoke(main, ["run", str(_config(tmp_path)), "--out", str(out), "-q"]).exit_code == 0
    target = tmp_path / "new" / "deeper" / "table.csv"
    result = runner.invoke(main, ["table", str(out), "--format", "csv", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text().splitlines()[0].startswith("dataset")


def test_readme_and_the_quickstart_config_quote_the_same_run_time():
    import re

    root = Path(__file__).resolve().parents[1]
    readme = re.search(r"about (\d+) seconds on 2 cores", (root / "README.md").read_text())
    config = re.search(r"About (\d+) seconds on 2 cores", (root / "configs" / "quickstart.yaml").read_text())
    assert readme and config and readme.group(1) == config.group(1)
