"""The linear SVM's solver chosen by size (``backend: auto``), checked against independent computations.

- the rule: a task whose training part has at most LIBSVM_MAX_TRAIN samples runs LIBSVM and its
  rows equal a plain ``SVC(kernel="linear")`` refit computed here; one above runs LIBLINEAR and
  its rows' predictions equal a plain ``LinearSVC`` built as fsbench.evaluation.classifiers builds it
  (``max_iter=20000``, ``random_state`` the task's evaluation seed); the rows name the backend;
- fingerprints: a pinned ``backend: libsvm`` keeps the fingerprint committed results record, and
  ``auto`` never shares one with LIBSVM (a ``classifier:`` and a ``classifiers:`` list alike);
- every committed results folder's config still parses to the fingerprint its rows record;
- a backend that is none of auto, libsvm, liblinear is refused in one sentence, exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from sklearn.svm import SVC, LinearSVC

from fsbench.cli import main
from fsbench.configuration.experiment import LIBSVM_MAX_TRAIN, resolve_backend
from fsbench.configuration.parse import load_experiment, parse_experiment
from fsbench.engine.runner import plan, run_experiment
from fsbench.engine.tasks import task_data
from fsbench.engine.traces import experiment_from_results
from fsbench.errors import ConfigError, FsbenchError
from fsbench.evaluation.classifiers import classifier_spec
from fsbench.storage.rankings import load_rankings

ROOT = Path(__file__).resolve().parent.parent
K = 3


def _config(train_size: int, classifier: str) -> str:
    return f"""\
name: rule
seed: 3
datasets: [toy]
protocol: {{kind: holdout, train_size: {train_size}, n_trials: 1}}
selectors: [fisher]
{classifier}
n_features: [{K}]
"""


def _problem(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three overlapping Gaussian classes on 8 features (two informative): LIBSVM's one-vs-one hinge
    and LIBLINEAR's one-vs-rest squared hinge predict differently on it."""
    rng = np.random.Generator(np.random.PCG64(seed))
    y = np.arange(n) % 3
    X = rng.standard_normal((n, 8))
    X[:, 0] += 0.9 * y
    X[:, 1] -= 0.7 * (y == 1)
    return X, y


def _run(tmp_path: Path, train_size: int, classifier: str, n: int, out: str = "out"):
    X, y = _problem(n)
    experiment = parse_experiment(_config(train_size, classifier),
                                  dataset_resolver=lambda name: SimpleNamespace(name=name, n_features=8))
    data = {"toy": SimpleNamespace(X=X, y=y)}
    result = run_experiment(experiment, tmp_path / out, data=data, n_jobs=1)
    return experiment, data, result


def _by_hand(experiment, data, out: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The task's training and test parts on its stored top-K features, z-scored here with numpy
    from the training part, and its evaluation seed."""
    (task,) = plan(experiment, data)
    X, y = data["toy"].X, data["toy"].y
    ranking = load_rankings(out).sort_values("position")["feature"].to_numpy()[:K]
    train, test = task.split.train, task.split.test
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    X_train, X_test = (X[train] - mean) / std, (X[test] - mean) / std
    seed = task_data(experiment, task, X, y).eval_seed
    return X_train[:, ranking], y[train], X_test[:, ranking], y[test], seed


def _counts(predicted: np.ndarray, truth: np.ndarray) -> tuple[int, str, str]:
    return (int(np.sum(predicted == truth)), ";".join(str(int(np.sum(predicted == c))) for c in range(3)),
            ";".join(str(int(np.sum((predicted == c) & (truth == c)))) for c in range(3)))


# ----------------------------------------------------------------------------- the rule
def test_the_rule_as_stated():
    assert LIBSVM_MAX_TRAIN == 300  # the value README, CHANGES and benchmarks/solver_rule.md state
    assert [resolve_backend("auto", n) for n in (1, 299, 300, 301, 10_000)] == \
        ["libsvm", "libsvm", "libsvm", "liblinear", "liblinear"]
    assert [resolve_backend(b, 10_000) for b in ("libsvm", "liblinear")] == ["libsvm", "liblinear"]
    assert [resolve_backend(b, 5) for b in ("libsvm", "liblinear")] == ["libsvm", "liblinear"]


def test_a_small_training_part_runs_libsvm_as_a_plain_svc(tmp_path: Path):
    experiment, data, result = _run(tmp_path, 30, "classifier: {name: linear_svm, C: 1}", 60)
    assert experiment.classifier.backend == "auto"
    (row,) = result.runs.to_dict("records")
    assert json.loads(row["classifier_params"]) == {"C": 1.0, "backend": "libsvm"}
    X_train, y_train, X_test, y_test, seed = _by_hand(experiment, data, tmp_path / "out")
    svc = SVC(kernel="linear", C=1.0).fit(X_train, y_train).predict(X_test)
    assert (row["n_correct"], row["class_predicted"], row["class_correct"]) == _counts(svc, y_test)
    linear = LinearSVC(C=1.0, max_iter=20000, random_state=seed).fit(X_train, y_train).predict(X_test)
    assert not np.array_equal(svc, linear), "the problem must tell the two solvers apart"


@pytest.mark.parametrize("train_size, backend", [(LIBSVM_MAX_TRAIN, "libsvm"), (LIBSVM_MAX_TRAIN + 1, "liblinear")])
def test_the_threshold_is_the_training_parts_size(tmp_path: Path, train_size: int, backend: str):
    _, _, result = _run(tmp_path, train_size, "classifier: {name: linear_svm, C: 1}", 400)
    assert set(result.runs["n_train"]) == {train_size}
    assert {json.loads(p)["backend"] for p in result.runs["classifier_params"]} == {backend}


def test_a_large_training_part_runs_liblinear_as_a_plain_linearsvc(tmp_path: Path):
    experiment, data, result = _run(tmp_path, 320, "classifier: {name: linear_svm, C: [0.5]}", 400)
    (row,) = result.runs.to_dict("records")
    assert row["n_train"] == 320 > LIBSVM_MAX_TRAIN
    assert json.loads(row["classifier_params"]) == {"C": 0.5, "backend": "liblinear"}
    X_train, y_train, X_test, y_test, seed = _by_hand(experiment, data, tmp_path / "out")
    linear = LinearSVC(C=0.5, max_iter=20000, random_state=seed).fit(X_train, y_train).predict(X_test)
    assert (row["n_correct"], row["class_predicted"], row["class_correct"]) == _counts(linear, y_test)
    svc = SVC(kernel="linear", C=0.5).fit(X_train, y_train).predict(X_test)
    assert not np.array_equal(svc, linear), "the problem must tell the two solvers apart"


def test_a_classifiers_list_resolves_auto_and_names_it(tmp_path: Path):
    entry = "classifiers: [{name: linear_svm, label: svm, C: 1}, {name: linear_svm, label: pinned, " \
            "backend: libsvm, C: 1}]"
    experiment, data, result = _run(tmp_path, 320, entry, 400)
    assert dict(experiment.classifiers[0].params)["backend"] == "auto"
    params = {r["classifier"]: json.loads(r["classifier_params"]) for r in result.runs.to_dict("records")}
    assert params == {"svm": {"C": 1.0, "backend": "liblinear"}, "pinned": {"C": 1.0, "backend": "libsvm"}}
    X_train, y_train, X_test, y_test, seed = _by_hand(experiment, data, tmp_path / "out")
    runs = result.runs.set_index("classifier")
    linear = LinearSVC(C=1.0, max_iter=20000, random_state=seed).fit(X_train, y_train).predict(X_test)
    svc = SVC(kernel="linear", C=1.0).fit(X_train, y_train).predict(X_test)
    assert runs.loc["svm", "n_correct"] == _counts(linear, y_test)[0]
    assert runs.loc["pinned", "n_correct"] == _counts(svc, y_test)[0]


def test_rankings_check_replays_auto_rows_with_the_backend_they_ran(tmp_path: Path):
    from fsbench.engine.check_rankings import check_rankings

    _, data, result = _run(tmp_path, 320, "classifier: {name: linear_svm, C: [0.01, 1]}", 400)
    assert {json.loads(p)["backend"] for p in result.runs["classifier_params"]} == {"liblinear"}
    assert check_rankings(tmp_path / "out", data=data) == []  # replayed with LinearSVC: every row reproduced
    runs = pd.read_csv(tmp_path / "out" / "runs.csv.gz")
    X_train, y_train, X_test, y_test, seed = _by_hand(*_experiment_and_data(), tmp_path / "out")
    C = float(runs["C"].item())
    svc = SVC(kernel="linear", C=C).fit(X_train, y_train).predict(X_test)
    assert _counts(svc, y_test)[0] != runs["n_correct"].item(), "a LIBSVM replay would have dropped the ranking"


def _experiment_and_data():
    X, y = _problem(400)
    experiment = parse_experiment(_config(320, "classifier: {name: linear_svm, C: [0.01, 1]}"),
                                  dataset_resolver=lambda name: SimpleNamespace(name=name, n_features=8))
    return experiment, {"toy": SimpleNamespace(X=X, y=y)}


def test_pinned_rows_keep_their_columns(tmp_path: Path):
    _, _, result = _run(tmp_path, 30, "classifier: {name: linear_svm, backend: libsvm, C: 1}", 60)
    assert "classifier_params" not in result.runs.columns  # as the papers' committed rows


# ----------------------------------------------------------------------------- fingerprints
def test_pinned_libsvm_keeps_the_committed_fingerprint_and_auto_does_not():
    recorded = set(pd.read_csv(ROOT / "results" / "glioma" / "runs.csv.gz", usecols=["fingerprint"],
                               dtype=str)["fingerprint"])
    assert len(recorded) == 1
    # the committed config.yaml records the old default as it resolved: backend libsvm
    assert yaml.safe_load((ROOT / "results" / "glioma" / "config.yaml").read_text())["classifier"]["backend"] == \
        "libsvm"
    assert {experiment_from_results(ROOT / "results" / "glioma").fingerprint()} == recorded
    pinned = load_experiment(ROOT / "configs" / "glioma.yaml")
    assert pinned.classifier.backend == "libsvm" and {pinned.fingerprint()} == recorded
    text = (ROOT / "configs" / "glioma.yaml").read_text()
    assert text.count("  backend: libsvm\n") == 1
    auto = parse_experiment(text.replace("  backend: libsvm\n", ""))
    assert auto.classifier.backend == "auto" and auto.fingerprint() not in recorded


def test_a_classifiers_list_never_shares_a_fingerprint_between_auto_and_libsvm():
    def fingerprint(entry: str) -> str:
        return parse_experiment(_config(30, f"classifiers: [{entry}]"), dataset_resolver=lambda name: SimpleNamespace(
            name=name, n_features=8)).fingerprint()

    auto = fingerprint("{name: linear_svm, C: [0.1, 1]}")
    pinned = fingerprint("{name: linear_svm, backend: libsvm, C: [0.1, 1]}")
    # the list as configs wrote it before auto existed: no backend in the spec, which ran LIBSVM
    old = parse_experiment(_config(30, "classifiers: [knn]"), dataset_resolver=lambda name: SimpleNamespace(
        name=name, n_features=8))
    old = old.with_overrides(classifiers=(classifier_spec("linear_svm", grid={"C": (0.1, 1.0)}),))
    assert len({auto, pinned, old.fingerprint()}) == 3


def test_a_folder_of_libsvm_rows_refuses_auto(tmp_path: Path):
    _run(tmp_path, 30, "classifier: {name: linear_svm, backend: libsvm, C: 1}", 60)
    with pytest.raises(FsbenchError, match="different configuration"):
        _run(tmp_path, 30, "classifier: {name: linear_svm, C: 1}", 60)


def _committed() -> list[Path]:
    return sorted((ROOT / "results").rglob("config.yaml"))


@pytest.mark.parametrize("folder", [p.parent for p in _committed()],
                         ids=[str(p.parent.relative_to(ROOT / "results")) for p in _committed()])
def test_every_committed_config_parses_to_the_fingerprint_of_its_rows(folder: Path):
    config = ROOT / "configs" / f"{folder.relative_to(ROOT / 'results')}.yaml"
    experiment = load_experiment(config)
    recorded = set(pd.read_csv(folder / "runs.csv.gz", usecols=["fingerprint"], dtype=str)["fingerprint"])
    written = yaml.safe_load((folder / "config.yaml").read_text())["fingerprint"]
    assert {experiment.fingerprint()} == recorded == {written}
    assert not experiment.auto_backend  # committed results never rely on auto


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("entry, key", [
    ("classifier: {name: linear_svm, backend: fast, C: 1}", "classifier.backend"),
    ("classifiers: [{name: linear_svm, backend: fast, C: 1}]", "classifiers[0].backend"),
])
def test_an_unknown_backend_is_one_sentence_and_exit_2(tmp_path: Path, monkeypatch, entry: str, key: str):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "bad.yaml"
    config.write_text(_config(30, entry).replace("[toy]", "[glioma]"))
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out"), "-q"])
    message = result.output.strip()
    assert result.exit_code == 2, message
    assert message.startswith("Error: bad.yaml:6: ") and "\n" not in message, message
    assert f"{key}: 'fast' is not a backend of linear_svm; write auto" in message, message
    assert "libsvm or liblinear." in message and message.count(". ") == 0, message
    assert not (tmp_path / "out").exists()


def test_auto_takes_only_parameters_both_solvers_accept():
    resolver = lambda name: SimpleNamespace(name=name, n_features=8)  # noqa: E731
    with pytest.raises(ConfigError, match=r"classifiers\[0\]\.params\.shrinking: with backend auto, which runs "
                                          r"liblinear above 300 training samples, linear_svm has no parameter "
                                          r"'shrinking'.*; pin backend: libsvm or liblinear"):
        parse_experiment(_config(30, "classifiers: [{name: linear_svm, params: {shrinking: false}}]"),
                         dataset_resolver=resolver)
    pinned = parse_experiment(_config(30, "classifiers: [{name: linear_svm, backend: libsvm, params: "
                                          "{shrinking: false}}]"), dataset_resolver=resolver)
    assert dict(pinned.classifiers[0].params) == {"backend": "libsvm", "shrinking": False}
