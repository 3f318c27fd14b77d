"""A user's selector, data and classifiers beside the published ones: the example
under examples/ runs, its plugin rows equal a plain scikit-learn computation, an edited plugin is
recomputed and an unchanged one is not, and a plugin that fails on one split loses nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from fsbench.cli import main
from fsbench.configuration.parse import load_experiment
from fsbench.engine.runner import run_experiment
from fsbench.evaluation.protocol import outer_splits
from fsbench.storage.task_files import load_failures

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "own_selector"
TIMING = ["fit_seconds", "task_seconds", "rows_digest"]  # the digest covers the timings
KEY = ["dataset", "repeat", "fold", "selector", "classifier", "k"]


def _has_glioma() -> bool:
    root = os.environ.get("FSBENCH_DATA")
    return bool(root) and (Path(root) / "GLIOMA.mat").is_file()


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("example") / "results"
    args = ["run", str(EXAMPLE / "benchmark.yaml"), "--out", str(out), "-j", "2"]
    result = CliRunner().invoke(main, args + ([] if _has_glioma() else ["--skip-missing"]))
    assert result.exit_code == 0, result.output
    return out, result.output


def test_the_example_runs_and_tabulates_every_selector_and_classifier(example_run):
    out, output = example_run
    runs = pd.read_csv(out / "runs.csv.gz")
    datasets = ["glioma", "toy"] if _has_glioma() else ["toy"]
    assert sorted(runs["dataset"].unique()) == datasets
    assert sorted(runs["selector"].unique()) == ["centroid-spread", "fisher", "relieff", "rfs"]
    assert sorted(runs["classifier"].unique()) == ["knn", "linear_svm"]
    # 5 splits x 4 selectors x 2 classifiers x 3 k per dataset, nothing missing or doubled
    assert len(runs) == len(datasets) * 5 * 4 * 2 * 3
    assert not runs.duplicated(KEY).any()
    assert "Classifier knn:" in output and "Classifier linear_svm:" in output
    assert set(runs.loc[runs.selector == "centroid-spread", "method"]) == {"centroid_spread:CentroidSpread"}


def test_plugin_rows_equal_a_plain_scikit_learn_computation(example_run):
    """The example's own selector, ranked and classified by scikit-learn in this test on the same
    splits: 1-NN, and the linear SVM at the C the row reports."""
    out, _ = example_run
    runs = pd.read_csv(out / "runs.csv.gz")
    experiment = load_experiment(EXAMPLE / "benchmark.yaml")
    sys.path.insert(0, str(EXAMPLE))
    from centroid_spread import CentroidSpread

    table = pd.read_csv(EXAMPLE / "toy.csv")
    classes = sorted(table["class"].unique())
    y = table["class"].map({c: i for i, c in enumerate(classes)}).to_numpy()
    X = table.drop(columns="class").to_numpy(float)
    checked = 0
    for split in outer_splits(y, experiment.protocol, experiment.seed, "toy"):
        scaler = StandardScaler().fit(X[split.train])
        X_train, X_test = scaler.transform(X[split.train]), scaler.transform(X[split.test])
        y_train, y_test = y[split.train], y[split.test]
        scores = CentroidSpread().fit(X_train, y_train).scores_
        ranking = np.argsort(-scores, kind="stable")
        ours = runs[(runs.dataset == "toy") & (runs.selector == "centroid-spread") & (runs.repeat == split.repeat)]
        for row in ours.itertuples():
            top = ranking[: row.k]
            if row.classifier == "knn":
                model = KNeighborsClassifier(n_neighbors=1)
            else:
                model = SVC(kernel="linear", C=row.C)
            correct = int((model.fit(X_train[:, top], y_train).predict(X_test[:, top]) == y_test).sum())
            assert correct == row.n_correct, (split.repeat, row.classifier, row.k)
            checked += 1
    assert checked == 5 * 2 * 3


def _module(folder: Path) -> str:
    """A module name of this test's own (one process imports each name once)."""
    return "sel_" + folder.name.replace("-", "_")


def _plugin_project(folder: Path, body: str) -> Path:
    (folder / f"{_module(folder)}.py").write_text(textwrap.dedent(f"""
        import numpy as np
        from sklearn.base import BaseEstimator


        class Spread(BaseEstimator):
            def fit(self, X, y):
                {body}
                return self
    """))
    config = folder / "plugin.yaml"
    config.write_text(textwrap.dedent(f"""
        name: plugin
        datasets: [digits]
        protocol: {{kind: holdout, train_size: 0.5, n_trials: 3}}
        selectors:
          - fisher
          - {{name: mine, class: "{_module(folder)}:Spread"}}
        classifier: {{name: linear_svm, C: 1}}
        n_features: [4, 8]
    """))
    return config


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fsbench.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_an_edited_plugin_is_recomputed_and_an_unchanged_one_is_not(tmp_path):
    config = _plugin_project(tmp_path, "self.scores_ = X.var(axis=0)")
    first = _cli("run", str(config), "--out", "res", "-q", "-j", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = pd.read_csv(tmp_path / "res" / "runs.csv.gz")

    unchanged = _cli("run", str(config), "--out", "res", "-q", "-j", "1", cwd=tmp_path)
    assert unchanged.returncode == 0 and "(6 resumed)" in unchanged.stdout

    config.parent.joinpath(f"{_module(tmp_path)}.py").write_text(
        config.parent.joinpath(f"{_module(tmp_path)}.py").read_text().replace("X.var(axis=0)", "-X.var(axis=0)"))
    stale = _cli("run", str(config), "--out", "res", "-q", "-j", "1", cwd=tmp_path)
    assert stale.returncode == 2 and "mine: 3 tasks" in stale.stderr and "--recompute-stale" in stale.stderr
    again = _cli("run", str(config), "--out", "res", "-q", "-j", "2", "--recompute-stale", cwd=tmp_path)
    assert again.returncode == 0 and "(3 resumed)" in again.stdout  # fisher's 3 tasks kept
    after = pd.read_csv(tmp_path / "res" / "runs.csv.gz")
    mine_before = before[before.selector == "mine"].sort_values(KEY[:-2] + ["k"])
    mine_after = after[after.selector == "mine"].sort_values(KEY[:-2] + ["k"])
    assert set(mine_before["code"]) != set(mine_after["code"])
    # the edit reversed the ranking: the rows must show the new code's results (lowest variance first)
    assert (mine_after["accuracy"].to_numpy() < mine_before["accuracy"].to_numpy()).all()
    fisher = [after[after.selector == "fisher"].drop(columns=TIMING).reset_index(drop=True),
              before[before.selector == "fisher"].drop(columns=TIMING).reset_index(drop=True)]
    pd.testing.assert_frame_equal(*fisher)


def test_an_edited_plugin_in_a_long_lived_process_runs_the_new_code(tmp_path):
    """A notebook imports the plugin, the file is edited, the run is repeated in the same process:
    the rows must be the new code's, as their code identity says."""
    config = _plugin_project(tmp_path, "self.scores_ = X.var(axis=0)")
    experiment = load_experiment(config)
    first = run_experiment(experiment, tmp_path / "a", n_jobs=1).runs
    (tmp_path / f"{_module(tmp_path)}.py").write_text((tmp_path / f"{_module(tmp_path)}.py").read_text().replace(
        "X.var(axis=0)", "-X.var(axis=0)"))
    second = run_experiment(experiment, tmp_path / "b", n_jobs=1).runs
    fresh = _cli("run", str(config), "--out", "c", "-q", "-j", "1", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    third = pd.read_csv(tmp_path / "c" / "runs.csv.gz")
    pick = [r[r.selector == "mine"].sort_values(["repeat", "k"])[["n_correct", "code"]].reset_index(drop=True)
            for r in (first, second, third)]
    assert not pick[0].equals(pick[1])
    pd.testing.assert_frame_equal(pick[1], pick[2], check_dtype=False)


def test_a_plugin_that_fails_on_one_split_loses_no_other_row_and_a_rerun_completes_it(tmp_path):
    marker = tmp_path / "fail-on-second-fit"
    marker.write_text("")
    config = _plugin_project(tmp_path, "self.scores_ = X.var(axis=0)")
    (tmp_path / f"{_module(tmp_path)}.py").write_text(textwrap.dedent(f"""
        import os

        from sklearn.base import BaseEstimator

        calls = 0


        class Spread(BaseEstimator):
            def fit(self, X, y):
                global calls
                calls += 1
                if os.path.exists({str(marker)!r}) and calls == 2 and X.shape[0] > 100:
                    raise RuntimeError("singular matrix on this split")
                self.scores_ = X.var(axis=0)
                return self
    """))
    clean = _cli("run", str(config), "--out", "clean", "-q", "-j", "1", cwd=tmp_path)
    assert clean.returncode == 1  # the clean run also met the marker: its second fit failed
    marker.unlink()
    assert _cli("run", str(config), "--out", "clean", "-q", "-j", "1", cwd=tmp_path).returncode == 0
    reference = pd.read_csv(tmp_path / "clean" / "runs.csv.gz")

    marker.write_text("")
    failed = _cli("run", str(config), "--out", "res", "-j", "1", cwd=tmp_path)
    assert failed.returncode == 1
    assert "1 of 6 tasks failed" in failed.stderr and "RuntimeError: singular matrix on this split" in failed.stderr
    assert "Traceback" not in failed.stderr
    failures = load_failures(tmp_path / "res")
    assert len(failures) == 1 and failures.iloc[0]["selector"] == "mine"
    partial = pd.read_csv(tmp_path / "res" / "runs.csv.gz")
    assert len(partial) == len(reference) - 2  # the failed task's two k, nothing else
    assert "failed (1 task)" in (tmp_path / "res" / "table.md").read_text()
    merged = partial.merge(reference, on=["dataset", "repeat", "fold", "selector", "k"], suffixes=("", "_ref"))
    assert (merged["n_correct"] == merged["n_correct_ref"]).all() and len(merged) == len(partial)

    marker.unlink()
    retried = _cli("run", str(config), "--out", "res", "-q", "-j", "1", cwd=tmp_path)
    assert retried.returncode == 0 and "(5 resumed)" in retried.stdout
    assert not (tmp_path / "res" / "failures.csv").exists()
    done = pd.read_csv(tmp_path / "res" / "runs.csv.gz").drop(columns=TIMING)
    key = ["selector", "repeat", "k"]
    pd.testing.assert_frame_equal(done.sort_values(key).reset_index(drop=True),
                                  reference.drop(columns=TIMING).sort_values(key).reset_index(drop=True))


def test_a_fit_past_its_timeout_is_a_failed_task(tmp_path):
    config = _plugin_project(tmp_path, "import time; time.sleep(30); self.scores_ = X.var(axis=0)")
    config.write_text(config.read_text().replace(':Spread"}', ':Spread", timeout: 0.5}'))
    # the probe at validation fits the plugin once: keep it fast by sleeping only on real data
    (tmp_path / f"{_module(tmp_path)}.py").write_text((tmp_path / f"{_module(tmp_path)}.py").read_text().replace(
        "import time; time.sleep(30)", "import time; time.sleep(30 if X.shape[0] > 100 else 0)"))
    result = run_experiment(load_experiment(config), tmp_path / "res", n_jobs=1)
    assert len(result.failed) == 3 and all("timeout of 0.5 s" in f["error"] for f in result.failed)
    assert set(result.runs["selector"]) == {"fisher"}
    assert "timeout: 0.5" in (tmp_path / "res" / "config.yaml").read_text()


def test_selectors_lists_a_package_s_plugins(tmp_path, monkeypatch):
    dist = tmp_path / "acme_fs-1.2.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-fs\nVersion: 1.2\n")
    (dist / "entry_points.txt").write_text("[fsbench.selectors]\nacme = acme_fs:Acme\n")
    (tmp_path / "acme_fs.py").write_text(
        '"""Acme."""\nfrom sklearn.base import BaseEstimator\n\n\nclass Acme(BaseEstimator):\n'
        '    """Acme variance: the largest variance first."""\n\n    def __init__(self, power=1):\n'
        '        self.power = power\n\n    def fit(self, X, y):\n        self.scores_ = X.var(axis=0) ** self.power\n'
        '        return self\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(main, ["selectors"])
    assert result.exit_code == 0
    assert "acme" in result.output and "Acme variance" in result.output and "acme_fs:Acme" in result.output
    # and a config can name it like a built-in
    config = tmp_path / "c.yaml"
    config.write_text("name: c\ndatasets: [digits]\nselectors: [acme]\nclassifier: {name: linear_svm, C: 1}\n"
                      "protocol: {kind: holdout, train_size: 0.5, n_trials: 1}\nn_features: [4]\n")
    runs = run_experiment(load_experiment(config), tmp_path / "res", n_jobs=1).runs
    assert set(runs["method"]) == {"acme_fs:Acme"}
