"""``fsbench run --dry-run``: it writes nothing, counts the tasks a run computes, estimates each task by
the cost model's formula, and announces a run predicted above an hour (fsbench.engine.cost_model)."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import fsbench.engine.cost_model as cost_model
from fsbench.cli import main
from fsbench.configuration.experiment import Experiment, InnerCVConfig, ProtocolConfig, SelectorConfig
from fsbench.engine.cost_model import COST_MODEL_FILE, CostModel, load_cost_model, task_seconds, wall_seconds
from fsbench.evaluation.classifiers import classifier_spec

TINY = """\
name: tiny
seed: 0
datasets: [digits]
protocol: {kind: holdout, train_size: 0.5, n_trials: 3}
inner_cv: {n_splits: 2}
selectors: [fisher, variance]
classifier: {name: linear_svm, C: [0.1, 1]}
n_features: [4, 8]
"""


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.setenv("FSBENCH_CACHE", str(tmp_path / "user-cache"))
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def _files(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")}


def _coefficients() -> dict:
    return json.loads(COST_MODEL_FILE.read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- the command
def test_dry_run_writes_nothing_and_counts_the_tasks_a_run_computes(runner, tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    before = _files(tmp_path)
    result = runner.invoke(main, ["run", "--dry-run", str(config), "-j", "1"])
    assert result.exit_code == 0, result.output
    assert _files(tmp_path) == before  # no results folder, no cache, nothing
    n_tasks = 1 * 3 * 2  # datasets x outer splits x selectors, counted by hand
    assert f"{n_tasks} tasks (1 dataset x 3 outer splits x 2 selectors); none done yet" in result.output
    rows = [line.split() for line in result.output.splitlines() if line.startswith("digits ")]
    assert [(r[1], r[2], r[3]) for r in rows] == [("fisher", "3", "0"), ("variance", "3", "0")]

    ran = runner.invoke(main, ["run", str(config), "-j", "1", "-q"])
    assert ran.exit_code == 0, ran.output
    task_files = list((tmp_path / "results" / "tiny" / "tasks").glob("*.json"))
    assert len(task_files) == n_tasks
    assert "Warning" not in ran.output  # a run of seconds is not announced

    again = runner.invoke(main, ["run", "--dry-run", str(config)])
    assert again.exit_code == 0, again.output
    assert f"{n_tasks} already done" in again.output and ", 0 to run" in again.output
    total = next(line for line in again.output.splitlines() if line.startswith("total"))
    assert total.split()[1:3] == [str(n_tasks), str(n_tasks)]


@pytest.mark.parametrize("text, fragment", [
    (TINY.replace("fisher", "fishr"), "Unknown selector 'fishr'"),
    (TINY.replace("[4, 8]", "[4, 100]"), "k = 100 exceeds the 64 features"),
])
def test_a_bad_config_is_one_sentence_and_the_same_as_the_run(runner, tmp_path, text, fragment):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    before = _files(tmp_path)
    dry = runner.invoke(main, ["run", "--dry-run", str(config)])
    assert dry.exit_code == 2, dry.output
    message = dry.output.strip()
    assert message.startswith("Error: ") and "\n" not in message and fragment in message, message
    assert _files(tmp_path) == before
    real = runner.invoke(main, ["run", str(config), "-q"])
    assert real.exit_code == 2 and real.output.strip() == message


def _over_an_hour_config(tmp_path: Path, n_trials: int) -> Path:
    config = tmp_path / f"large-{n_trials}.yaml"
    config.write_text(f"""\
name: large
seed: 0
datasets:
  - name: big
    generate: {{kind: classification, n_samples: 1000, n_features: 4000, n_informative: 10, n_classes: 4, seed: 1}}
protocol: {{kind: holdout, train_size: 0.5, n_trials: {n_trials}}}
inner_cv: {{n_splits: 3}}
selectors: [rfs]
classifier: {{name: linear_svm, backend: liblinear, C: [0.01, 1, 100]}}
n_features: [10, 50, 100]
""")
    return config


def _hand_estimate_of_one_task(n_train: int, d: int) -> float:
    """One task of :func:`_over_an_hour_config`, from the JSON's coefficients: rfs's fit, then per k
    3 folds x 3 C on 2/3 of the rows and a refit, LIBLINEAR's route (500 training samples)."""
    doc = _coefficients()
    s, c = doc["selector_fit"]["rfs"], doc["classifier_fit"]["liblinear"]
    seconds = _t(s, ("a", "alpha", "beta"), n_train, d)
    for k in (10, 50, 100):
        seconds += 9 * _t(c, ("b", "gamma", "delta"), n_train * 2 / 3, k) + _t(c, ("b", "gamma", "delta"), n_train, k)
    return seconds


def test_the_over_an_hour_line_appears_above_an_hour_and_not_below(runner, tmp_path):
    per_task = _hand_estimate_of_one_task(500, 4000)
    above = math.ceil(2 * 3600 / per_task) + 1  # 1 worker: wall = sum over tasks > 2 h
    below = max(1, math.floor(0.5 * 3600 / per_task))  # < 30 min
    assert below < above
    for n_trials, expected in ((above, True), (below, False)):
        result = runner.invoke(main, ["run", "--dry-run", str(_over_an_hour_config(tmp_path, n_trials)), "-j", "1"])
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert lines[0].startswith("Warning: this run is predicted to take") is expected, result.output
        assert ("more than an hour" in result.output) is expected
        total = next(line for line in lines if line.startswith("total")).split()
        assert total[1] == str(n_trials)
    assert not (tmp_path / "results").exists()


def test_a_run_predicted_above_an_hour_says_so_before_it_starts(runner, tmp_path, monkeypatch):
    """The wiring of the real run: with a model predicting 10,000 s per selector fit, the warning is the
    first line, and the run then runs (and finishes: the prediction is no limit)."""
    real = load_cost_model()
    slow = CostModel({name: (math.log(10_000.0), 0.0, 0.0) for name in real.selectors}, real.classifiers)
    monkeypatch.setattr(cost_model, "load_cost_model", lambda path=None: slow)
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    result = runner.invoke(main, ["run", str(config), "-j", "1"])
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.startswith("Warning: this run is predicted to take") and "6 tasks" in first, result.output
    assert len(list((tmp_path / "results" / "tiny" / "tasks").glob("*.json"))) == 6


# ----------------------------------------------------------------------------- the formula
def _experiment(selectors, classifiers, ks, folds=4, select_on="train") -> Experiment:
    return Experiment(name="x", seed=0, datasets=("d",), selectors=tuple(selectors), n_features=tuple(ks),
                      protocol=ProtocolConfig(select_on=select_on), inner_cv=InnerCVConfig(n_splits=folds),
                      classifiers=tuple(classifiers))


def _t(c: dict, keys: tuple[str, str, str], x: float, z: float) -> float:
    a, b, g = (c[k] for k in keys)
    return math.exp(a + b * math.log(x) + g * math.log(z))


def test_a_task_estimate_is_the_formula_over_the_json_coefficients():
    doc = _coefficients()
    sel, svm, knn = doc["selector_fit"]["relieff"], doc["classifier_fit"]["libsvm"], doc["classifier_fit"]["knn"]
    S, C = ("a", "alpha", "beta"), ("b", "gamma", "delta")
    n, d, ks = 120, 2000, (10, 50)
    experiment = _experiment([SelectorConfig("relieff", "relieff")],
                             [classifier_spec("linear_svm", grid={"C": [0.01, 1.0, 100.0]}), classifier_spec("knn")],
                             ks)
    # relieff's fit; per k: the SVM on 4 inner folds (90 rows) x 3 C and a refit (120 rows); knn untuned: a refit
    expected = _t(sel, S, 120, 2000)
    for k in ks:
        expected += 4 * 3 * _t(svm, C, 90, k) + _t(svm, C, 120, k) + _t(knn, C, 120, k)
    assert math.isclose(task_seconds(load_cost_model().uncalibrated(), experiment, experiment.selectors[0], n, d),
                        expected, rel_tol=1e-12)


def test_a_selector_grid_a_plugin_and_select_on_all_by_hand():
    doc = _coefficients()
    fisher, cs = doc["selector_fit"]["fisher"], doc["classifier_fit"]["crammer_singer"]
    liblinear = doc["classifier_fit"]["liblinear"]
    S, C = ("a", "alpha", "beta"), ("b", "gamma", "delta")
    plugin = SelectorConfig("mypackage.module:Scorer", "mine", grid=(("alpha", (1, 2)),), kind="class")
    experiment = _experiment([plugin], [classifier_spec("crammer_singer", grid={"C": [0.1, 1.0]}),
                                        classifier_spec("linear_svm", params={"backend": "liblinear", "C": 1.0})],
                             (5,), folds=3, select_on="all")
    # a user's selector costs fisher's; selected on all 150 samples; its grid: 2 points x 3 folds of
    # 100 rows, each a fit and the first classifier's 2 C at k = 5 (no refit)
    tuning = 2 * 3 * (_t(fisher, S, 100, 500) + 2 * _t(cs, C, 100, 5))
    evaluation = 3 * 2 * _t(cs, C, 60, 5) + _t(cs, C, 90, 5) + _t(liblinear, C, 90, 5)
    model = load_cost_model().uncalibrated()
    with_fits = task_seconds(model, experiment, plugin, 90, 500, n_select=150)
    assert math.isclose(with_fits, _t(fisher, S, 150, 500) + tuning + evaluation, rel_tol=1e-12)
    # a later split's selector fits come from the rankings cache; the grid's evaluation does not
    cached = task_seconds(model, experiment, plugin, 90, 500, n_select=150, fit_selection=False)
    assert math.isclose(cached, 2 * 3 * 2 * _t(cs, C, 100, 5) + evaluation, rel_tol=1e-12)


def test_wall_time_of_workers_taking_the_next_task_by_hand():
    assert wall_seconds([3, 1, 1, 1], 2) == 3  # one worker runs the 3, the other the three 1s
    assert wall_seconds([1, 1, 3], 2) == 4  # the 3 waits for the first free worker
    assert wall_seconds([2, 2, 2], 1) == 6
    assert wall_seconds([], 4) == 0


def test_a_missing_or_damaged_model_is_one_sentence(tmp_path):
    from fsbench.errors import FsbenchError

    bad = tmp_path / "model.json"
    bad.write_text("{}")
    with pytest.raises(FsbenchError, match=r"cannot be read .* rerun benchmarks/fit_cost_model.py"):
        load_cost_model(bad)


def test_every_registered_selector_and_route_has_coefficients():
    from fsbench.selectors import registry

    doc = _coefficients()
    assert set(registry()) <= set(doc["selector_fit"])
    assert set(cost_model.ROUTES) == set(doc["classifier_fit"])
    assert re.search(r"\d{4}-\d{2}-\d{2}", doc["source"])


# ----------------------------------------------------------------------------- parameters and classes
def _hand_model(**kwargs) -> CostModel:
    selectors = {"fisher": (0.0, 0.0, 0.0), "rfs": (0.0, 0.0, 0.0),
                 "rfs[stop=decrease]": (math.log(2.0), 0.0, 0.0),
                 "rfs[gamma=10.0;stop=decrease]": (math.log(5.0), 0.0, 0.0)}
    classifiers = {route: (math.log(0.5), 0.0, 0.0) for route in cost_model.ROUTES}
    return CostModel(selectors, classifiers, **kwargs)


def test_a_selector_is_costed_by_the_entry_measured_with_its_parameters():
    model = _hand_model()
    assert model.selector_seconds("rfs", 50, 100) == 1.0  # defaults
    assert model.selector_seconds("rfs", 50, 100, {"gamma": 10}) == 1.0  # stop not decrease: defaults
    assert math.isclose(model.selector_seconds("rfs", 50, 100, {"stop": "decrease", "tol": 1e-6}), 2.0)
    # the most specific entry wins, and 10, 10.0 and "10" are one value
    for gamma in (10, 10.0, "10"):
        assert math.isclose(model.selector_seconds("rfs", 50, 100, {"stop": "decrease", "gamma": gamma}), 5.0)
    assert math.isclose(model.selector_seconds("rfs", 50, 100, {"stop": "decrease", "gamma": 1}), 2.0)
    assert cost_model.parse_entry("rfs[gamma=10.0;stop=decrease]") == ("rfs", {"gamma": "10.0", "stop": "decrease"})
    assert cost_model.entry_name("rfs", {"stop": "decrease", "gamma": 10}) == "rfs[gamma=10.0;stop=decrease]"
    assert cost_model.entry_name("fisher", {}) == "fisher"


def test_a_grid_costs_each_point_by_its_entry_by_hand():
    model = _hand_model()
    selector = SelectorConfig("rfs", "rfs", params=(("stop", "decrease"),), grid=(("gamma", (1.0, 10.0)),))
    experiment = _experiment([selector], [classifier_spec("knn")], (5,), folds=3)
    knn = 0.5  # every classifier fit
    # the chosen point's fit (the mean of the points: 2 and 5), each point on 3 inner folds, each point's
    # inner evaluation of knn at k = 5 on 3 folds, and the task's knn refit
    expected = (2.0 + 5.0) / 2 + 3 * (2.0 + 5.0) + 2 * 3 * knn + knn
    assert math.isclose(task_seconds(model, experiment, selector, 90, 500), expected, rel_tol=1e-12)
    # gamma = 1 has no entry of its own: costed as rfs[stop=decrease], and the dry run says so
    assert cost_model._selector_note(model, experiment, selector) == "some parameters at their defaults' cost"
    covered = SelectorConfig("rfs", "rfs", params=(("stop", "decrease"),))
    assert cost_model._selector_note(model, _experiment([covered], [classifier_spec("knn")], (5,)), covered) == ""
    partly = SelectorConfig("rfs", "rfs", params=(("stop", "decrease"), ("fit_intercept", True)))
    assert "defaults" in cost_model._selector_note(model, _experiment([partly], [classifier_spec("knn")], (5,)),
                                                   partly)


def test_a_route_scales_with_the_classes_by_its_exponent():
    model = _hand_model(class_exponents={"liblinear": 1.0, "libsvm": 0.5}, calibration_classes=4)
    assert model.classifier_seconds("liblinear", 100, 10) == 0.5  # classes not given: the calibration's
    assert math.isclose(model.classifier_seconds("liblinear", 100, 10, 8), 1.0)
    assert math.isclose(model.classifier_seconds("liblinear", 100, 10, 2), 0.25)
    assert math.isclose(model.classifier_seconds("libsvm", 100, 10, 16), 1.0)
    assert model.classifier_seconds("knn", 100, 10, 16) == 0.5  # no exponent: no change


def test_the_shipped_model_has_class_exponents_and_the_papers_variants():
    doc = _coefficients()
    assert doc["calibration_classes"] == 4
    assert all("eta" in doc["classifier_fit"][route] for route in ("libsvm", "liblinear", "crammer_singer"))
    model = load_cost_model()
    papers_rfs = {"stop": "decrease", "tol": 1e-6, "max_iter": 1000, "gamma": 1.0}
    assert model.selector_entry("rfs", papers_rfs) == "rfs[gamma=1.0;max_iter=1000.0;stop=decrease;tol=1e-06]"
    assert model.selector_entry("dso", {"p": 0.5}) == "dso[p=0.5]"


def test_measured_fit_line_by_hand(tmp_path):
    doc = {"measured_fit": {"slow": {"label": "after", "commit": "abc", "d": 1000, "points": [
        [100, 0.5, "ok", None, 300.0], [300, 4.5, "ok", None, 300.0], [1000, None, "beyond_time_cap", None, 300.0],
        [3000, None, "predicted_beyond_cap", 5000.0, 300.0]]}}}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(doc))
    line = cost_model.measured_fit("slow", path)
    # 4.5 / 0.5 = 9 over 300 / 100 = 3: n^2.0
    assert line == ("fit at its defaults on d = 1,000 features, one core: 0.5 s at n = 100, 4.5 s at n = 300, "
                    "over 5.0 min at n = 1,000, n = 3,000 not run (predicted 1.4 h); grows about n^2.0 between "
                    "n = 100 and 300")
    assert cost_model.measured_fit("unmeasured", path) is None


def test_the_shipped_measured_fits_are_the_scale_table_rows():
    import csv

    shipped = _coefficients().get("measured_fit", {})
    assert {"dso", "sl2p", "rfs", "l1svm", "cssvm"} <= set(shipped)
    with open(Path(__file__).resolve().parent.parent / "benchmarks" / "scale.csv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["what"] == "selector" and r["axis"] == "n" and r["d"] == "1000"]
    for name, entry in shipped.items():
        mine = {int(r["n"]): r for r in rows if r["name"] == name and r["label"] == entry["label"]}
        assert sorted(mine) == [p[0] for p in entry["points"]], name
        for n, seconds, status, _, _ in entry["points"]:
            assert mine[n]["status"] == status
            if seconds is not None:
                assert seconds == float(mine[n]["cpu_s"])


# ----------------------------------------------------------------------------- the real-data factors
def _fit_cost_model():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "fit_cost_model.py"
    spec = importlib.util.spec_from_file_location("fit_cost_model_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_factors_multiply_the_formula_and_the_shipped_ones_are_applied():
    model = _hand_model(selector_factors={"rfs": 3.0}, route_factors={"knn": 0.25})
    assert math.isclose(model.selector_seconds("rfs", 50, 100, {"stop": "decrease", "gamma": 10}), 15.0)
    assert model.selector_seconds("fisher", 50, 100) == model.uncalibrated().selector_seconds("fisher", 50, 100)
    assert math.isclose(model.classifier_seconds("knn", 100, 10), 0.125)
    assert model.uncalibrated().classifier_seconds("knn", 100, 10) == 0.5
    # a name without coefficients (a user's selector) is costed as the fallback, with the fallback's factor
    fallback = _hand_model(selector_factors={"fisher": 2.0, "mine": 100.0})
    assert fallback.selector_seconds("mine", 50, 100) == 2.0
    shipped = load_cost_model()
    calibration = _coefficients()["calibration"]
    for name, factor in calibration["selectors"].items():
        if name in shipped.selectors:
            assert math.isclose(shipped.selector_seconds(name, 80, 900),
                                factor * shipped.uncalibrated().selector_seconds(name, 80, 900), rel_tol=1e-12)
    for route, factor in calibration["routes"].items():
        assert math.isclose(shipped.classifier_seconds(route, 80, 20),
                            factor * shipped.uncalibrated().classifier_seconds(route, 80, 20), rel_tol=1e-12)


def _tasks(rows):
    import pandas as pd

    return pd.DataFrame(rows, columns=["dataset", "method", "measured", "fit_measured", "selector_part", "route_parts"])


def test_factors_are_medians_of_the_log_ratios_by_hand():
    fcm = _fit_cost_model()
    table = _tasks([
        # fisher's fits: measured / predicted = 2, 8, 4 -> median 4; the rest of each task is libsvm's
        ("a", "fisher", 3.0, 2.0, 1.0, {"libsvm": 1.0}),   # libsvm: (3 - 2) / 1 = 1
        ("b", "fisher", 9.0, 8.0, 1.0, {"libsvm": 0.5}),   # 2
        ("c", "fisher", 4.4, 0.4, 0.1, {"libsvm": 1.0}),   # 4
        # two routes in one task: no route factor from it
        ("c", "relieff", 1.0, 0.5, 1.0, {"libsvm": 0.1, "knn": 0.1}),
    ])
    selectors, routes = fcm.fit_factors(table)
    assert math.isclose(selectors["fisher"], 4.0) and math.isclose(selectors["relieff"], 0.5)
    assert math.isclose(routes["libsvm"], 2.0) and "knn" not in routes
    predicted = fcm.apply_factors(table, selectors, routes)
    assert math.isclose(predicted[0], 4.0 * 1.0 + 2.0 * 1.0)
    assert math.isclose(predicted[3], 0.5 * 1.0 + 2.0 * 0.1 + 1.0 * 0.1)


def test_out_of_sample_predictions_never_use_the_dataset_they_predict():
    fcm = _fit_cost_model()
    table = _tasks([
        ("a", "fisher", 100.0, 90.0, 1.0, {"knn": 1.0}),  # fisher 90x, knn 10x on a alone
        ("b", "fisher", 3.0, 2.0, 1.0, {"knn": 1.0}),
        ("c", "fisher", 3.0, 2.0, 1.0, {"knn": 1.0}),
    ])
    left_out = fcm.left_out_predictions(table)
    assert math.isclose(left_out[0], 2.0 * 1.0 + 1.0 * 1.0)  # a from b and c
    # b from a and c: medians of (90, 2) and (10, 1) on the log scale, their geometric means
    assert math.isclose(left_out[1], math.sqrt(90 * 2) + math.sqrt(10 * 1))
