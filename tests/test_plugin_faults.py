"""A user's selector cannot corrupt what anything else sees: not the data the evaluation and the
other selectors use (it is fitted on its own copy), not the results (NaN scores and a ranking_
that ranks nothing fail its task), not the reproducibility of a config without a word (the probe
fits it twice and warns), not fsbench's standard output (its printed output goes to stderr).

Every expected value is computed here independently: the data compared with a copy taken before
the fit, rankings and correct counts from scikit-learn directly, printed output read from the
file descriptors.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import subprocess
import sys
import textwrap
import threading
import uuid
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.feature_selection import chi2
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from fsbench.cli import main
from fsbench.configuration.parse import load_experiment
from fsbench.datasets import load
from fsbench.engine import fitting
from fsbench.engine.fitting import fit_selector, input_written_note
from fsbench.engine.runner import run_experiment
from fsbench.evaluation.protocol import outer_splits
from fsbench.plugins import (
    ExternalSelector,
    PluginError,
    PluginWarning,
    output_to_stderr,
    probe,
    resolve,
)
from fsbench.selectors import make_selector
from fsbench.selectors.base import BaseSelector
from fsbench.storage.task_files import load_failures

PLUGINS = '''
    import ctypes
    import sys

    import numpy as np
    from sklearn.base import BaseEstimator
    from sklearn.feature_selection import chi2


    class InPlace(BaseEstimator):
        """chi2 needs non-negative data: the common idiom, shifting X in place."""

        def fit(self, X, y):
            X -= X.min(axis=0)
            self.scores_ = np.nan_to_num(chi2(X, y)[0])
            return self


    class OnCopy(BaseEstimator):
        """The same selector, shifting a copy."""

        def fit(self, X, y):
            X = X - X.min(axis=0)
            self.scores_ = np.nan_to_num(chi2(X, y)[0])
            return self


    class Zeroes(BaseEstimator):
        """Ranks by variance, then zeroes its input."""

        def fit(self, X, y):
            self.scores_ = X.var(axis=0)
            X[:] = 0.0
            y[:] = 0
            return self


    class Variance(BaseEstimator):
        def fit(self, X, y):
            self.scores_ = X.var(axis=0)
            return self


    def all_nan(X, y):
        """NaN for every feature of real data; fine on the probe's 6 features."""
        return np.full(X.shape[1], np.nan) if X.shape[1] > 6 else X.var(axis=0)


    def one_nan(X, y):
        """NaN for the feature of largest variance (not a constant one) of real data."""
        scores = X.var(axis=0)
        if X.shape[1] > 6:
            scores[np.argmax(scores)] = np.nan
        return scores


    def short(X, y):
        """One score too few on real data; fine on the probe's 6 features."""
        return X.var(axis=0)[: X.shape[1] - (X.shape[1] > 6)]


    class ZeroRanking(BaseEstimator):
        """ranking_ all zeros on real data: it ranks nothing."""

        def fit(self, X, y):
            if X.shape[1] > 6:
                self.ranking_ = np.zeros(X.shape[1], dtype=int)
            else:
                self.scores_ = X.var(axis=0)
            return self


    class Unseeded(BaseEstimator):
        """Random scores from an unseeded generator, and no random_state parameter."""

        def fit(self, X, y):
            self.scores_ = np.random.default_rng().random(X.shape[1])
            return self


    class IgnoresSeed(BaseEstimator):
        """Takes random_state and does not use it."""

        def __init__(self, random_state=None):
            self.random_state = random_state

        def fit(self, X, y):
            self.scores_ = X.var(axis=0) + np.random.default_rng().random(X.shape[1])
            return self


    class Seeded(BaseEstimator):
        def __init__(self, random_state=None):
            self.random_state = random_state

        def fit(self, X, y):
            self.scores_ = X.var(axis=0) + np.random.default_rng(self.random_state).random(X.shape[1])
            return self


    class Prints(BaseEstimator):
        """Prints through Python and through C's printf, as a compiled extension would."""

        def fit(self, X, y):
            print("PLUGIN-PYTHON-PRINT")
            ctypes.CDLL(None).printf(b"PLUGIN-C-PRINTF\\n")
            self.scores_ = X.var(axis=0)
            return self


    class Exits(BaseEstimator):
        def fit(self, X, y):
            print("before exit")
            sys.exit(3)


    class ClosesStdout(BaseEstimator):
        def fit(self, X, y):
            print("before close")
            sys.stdout.close()
            self.scores_ = X.var(axis=0)
            return self
'''


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """The module above, under a name of this test's own, on sys.path."""
    name = f"fsb_faults_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(PLUGINS))
    importlib.invalidate_caches()
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def digits_config(folder: Path, name: str, selectors: list[str], n_trials: int, n_features: list[int]) -> Path:
    """A config of ``selectors`` (YAML flow entries) on digits: holdout halves, a linear SVM."""
    config = folder / f"{name}.yaml"
    config.write_text(textwrap.dedent(f"""
        name: {name}
        datasets: [digits]
        protocol: {{kind: holdout, train_size: 0.5, n_trials: {n_trials}}}
        selectors:
    """) + "".join(f"  - {entry}\n" for entry in selectors) + textwrap.dedent(f"""
        classifier: {{name: linear_svm, backend: libsvm, C: 1}}
        n_features: {n_features}
    """))
    return config


def problem(seed: int = 0, n: int = 60, d: int = 12):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.standard_normal((n, d))
    X[:, :3] += 2.0 * np.eye(3)[y][:, :d]
    return X, y


# ----------------------------------------------------------------------------- input written
@pytest.mark.parametrize("plugin", ["InPlace", "Zeroes"])
def test_fit_selector_leaves_its_input_unchanged_and_names_a_plugin_that_wrote_into_it(plugins, plugin):
    X, y = problem()
    X0, y0 = X.copy(), y.copy()
    fitted = fit_selector(f"{plugins}:{plugin}", {}, X, y, 0, 5, None, kind="class")
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    assert fitted["input_written"] == ["X"]  # y is coded 0..c-1 into a new array before the plugin sees it
    assert f"selector {plugins}:{plugin} wrote into the training data it was given (X)" in fitted["warnings"][0]
    if plugin == "InPlace":  # its ranking is that of chi2 on the shifted data, computed here
        expected = np.argsort(-np.nan_to_num(chi2(X0 - X0.min(axis=0), y0)[0]), kind="stable")
        np.testing.assert_array_equal(fitted["ranking"], expected)


def test_a_plugin_that_does_not_write_gets_no_note_and_the_note_survives_the_cache(plugins, tmp_path):
    X, y = problem()
    clean = fit_selector(f"{plugins}:OnCopy", {}, X, y, 0, 5, None, kind="class")
    assert clean["input_written"] == [] and not clean["warnings"]
    cache = tmp_path / "cache"
    first = fit_selector(f"{plugins}:InPlace", {}, X, y, 0, 5, cache, kind="class")
    again = fit_selector(f"{plugins}:InPlace", {}, X, y, 0, 5, cache, kind="class")  # from the cache
    assert again["input_written"] == ["X"] and again["warnings"] == first["warnings"]
    np.testing.assert_array_equal(again["ranking"], clean["ranking"])


class WritesBuiltin(BaseSelector):
    """A built-in that zeroes its input: fsbench's own code must not, and it fails instead."""

    def _fit(self, X, y, classes):
        scores = X.var(axis=0)
        X[:] = 0.0
        return scores


def test_builtins_are_fitted_on_read_only_views_so_a_write_fails_the_fit(monkeypatch):
    X, y = problem()
    X0 = X.copy()
    for name in ("fisher", "relieff", "random"):
        fitted = fit_selector(name, {}, X, y, 1, 5, None)
        np.testing.assert_array_equal(X, X0)
        assert fitted["input_written"] == []
    # no copy for a built-in (fsbench's code): a write is refused, not compared after the fit
    monkeypatch.setattr(fitting, "_selector_source", lambda name, kind: (
        lambda params, k_max, seed: WritesBuiltin(n_features_to_select=k_max), "code", False))
    with pytest.raises(ValueError, match="read-only"):
        fit_selector("writes", {}, X, y, 1, 5, None)
    np.testing.assert_array_equal(X, X0)
    assert X.flags.writeable


def test_a_plugin_editing_its_input_is_evaluated_as_if_it_had_worked_on_a_copy(plugins, tmp_path):
    """The rows of a plugin that shifts X in place equal a plain scikit-learn computation (chi2 on
    the shifted training part, a linear SVM on the original one), as its copying twin's do, and
    a plugin zeroing X is evaluated on the real data. Before, the classifier was trained on the
    edited matrix: 55.7 % against 71.4 % at k = 16, and chance for the zeroing plugin."""
    config = digits_config(tmp_path, "mut", [f'{{name: {label}, class: "{plugins}:{cls}"}}' for label, cls in (
        ("inplace", "InPlace"), ("oncopy", "OnCopy"), ("zeroes", "Zeroes"), ("variance", "Variance"))],
        n_trials=2, n_features=[8, 16])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        experiment = load_experiment(config)
    data = load("digits")
    X0, y0 = data.X.copy(), data.y.copy()
    said = []
    result = run_experiment(experiment, tmp_path / "out", data={"digits": data}, n_jobs=1, on_note=said.append)
    runs = result.runs
    np.testing.assert_array_equal(data.X, X0)
    np.testing.assert_array_equal(data.y, y0)
    key = ["repeat", "k"]
    rows = {label: runs[runs.selector == label].sort_values(key).reset_index(drop=True)
            for label in ("inplace", "oncopy", "zeroes", "variance")}
    for a, b in (("inplace", "oncopy"), ("zeroes", "variance")):
        np.testing.assert_array_equal(rows[a]["n_correct"], rows[b]["n_correct"])
    assert rows["inplace"]["selector_warnings"].str.contains("wrote into the training data").all()
    assert not rows["oncopy"]["selector_warnings"].fillna("").str.contains("wrote into").any()
    # the run's note, given by the process that gathers the rows (fits run in workers)
    assert input_written_note(runs.to_dict("records")).startswith(
        "selectors that wrote into the training data they were given while fitting: inplace (2 tasks), "
        "zeroes (2 tasks); ")
    assert input_written_note(runs[runs.selector == "oncopy"].to_dict("records")) is None
    assert input_written_note(runs.to_dict("records")) in said and said == list(result.notes)
    checked = 0
    for split in outer_splits(y0, experiment.protocol, experiment.seed, "digits"):
        scaler = StandardScaler().fit(X0[split.train])
        X_train, X_test = scaler.transform(X0[split.train]), scaler.transform(X0[split.test])
        y_train, y_test = y0[split.train], y0[split.test]
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.nan_to_num(chi2(X_train - X_train.min(axis=0), y_train)[0])
        ranking = np.argsort(-scores, kind="stable")
        for row in rows["inplace"][rows["inplace"].repeat == split.repeat].itertuples():
            top = ranking[: row.k]
            model = SVC(kernel="linear", C=1).fit(X_train[:, top], y_train)
            assert int((model.predict(X_test[:, top]) == y_test).sum()) == row.n_correct
            checked += 1
    assert checked == 4
    assert (rows["zeroes"]["accuracy"] > 0.3).all()  # ten classes: chance is 0.1


# ----------------------------------------------------------------------------- NaN and rankings
def fit(selector, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return selector.fit(X, y)


class Given:
    """An estimator exposing the scores or ranking it is given (a plain class: sklearn's clone
    is not needed, ExternalSelector instantiates it)."""

    def __init__(self, scores=None, ranking=None):
        self.scores, self.ranking = scores, ranking

    def get_params(self, deep=False):
        return {"scores": self.scores, "ranking": self.ranking}

    def fit(self, X, y):
        if self.scores is not None:
            self.scores_ = np.asarray(self.scores, dtype=float)
        if self.ranking is not None:
            self.ranking_ = np.asarray(self.ranking)
        return self


@pytest.mark.parametrize("params, words", [
    ({"scores": [np.nan] * 4}, "Given.scores_ is NaN for every one of the 4 features, so it ranks none of them"),
    ({"scores": [1.0, np.nan, 3.0, 2.0]}, "Given.scores_ is NaN for 1 of the 4 features (feature 1), which are not "
                                          "constant"),
    ({"ranking": [0, 0, 0, 0]}, "Given.ranking_ gives all 4 features the same value (0), so it ranks none"),
])
def test_nan_scores_and_a_ranking_that_ranks_nothing_fail_the_fit(params, words):
    X, y = problem(d=4)
    with pytest.raises(PluginError) as exc:
        fit(ExternalSelector(Given, params=params), X, y)
    message = str(exc.value)
    assert words in message and "\n" not in message


def test_nan_for_a_constant_feature_ranks_last_and_infinite_scores_are_scores():
    X, y = problem(d=5)
    X[:, 3] = 4.0  # constant: 0/0 there is a NaN score, ranked last as the built-ins' are
    scores = [1.0, -np.inf, 0.5, np.nan, np.inf]
    sel = fit(ExternalSelector(Given, params={"scores": scores}), X, y)
    np.testing.assert_array_equal(sel.ranking_, [4, 0, 2, 1, 3])
    # a NaN of a non-constant feature is refused even when a constant feature's is excused
    with pytest.raises(PluginError, match=r"NaN for 1 of the 5 features \(feature 4\)"):
        fit(ExternalSelector(Given, params={"scores": [1.0, 2.0, 0.0, np.nan, np.nan]}), X, y)


def test_fisher_keeps_its_infinite_scores():
    """fisher is +inf for a feature constant within every class but varying between them (and 0
    for a constant feature): built-ins keep their scores, the new rule is for plugins."""
    X, y = problem(d=5)
    X[:, 1] = y  # constant within each class, varying between them
    X[:, 3] = 7.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = make_selector("fisher", {}).fit(X, y)
        fitted = fit_selector("fisher", {}, X, y, 0, 5, None)
    assert np.isposinf(sel.scores_[1]) and sel.scores_[3] == 0.0
    assert fitted["ranking"][0] == 1 and fitted["ranking"][-1] == 3


def test_a_single_feature_rank_is_a_ranking():
    X, y = problem(d=1)
    for ranking in ([0], [1]):  # an index, and a rank from 1 (RFE's)
        np.testing.assert_array_equal(fit(ExternalSelector(Given, params={"ranking": ranking}), X, y).ranking_, [0])


def test_fit_selector_raises_for_a_plugin_with_nan_scores(plugins):
    X, y = problem()
    with pytest.raises(PluginError, match="The scores of one_nan is NaN for 1 of the 12 features"):
        fit_selector(f"{plugins}:one_nan", {}, X, y, 0, 5, None, kind="score_func")


def test_nan_scores_fail_their_tasks_in_failures_csv_and_the_run_exits_1(plugins, tmp_path):
    config = digits_config(tmp_path, "nan", [
        "fisher", f'{{name: all-nan, score_func: "{plugins}:all_nan"}}',
        f'{{name: one-nan, score_func: "{plugins}:one_nan"}}', f'{{name: short, score_func: "{plugins}:short"}}',
        f'{{name: zero-ranking, class: "{plugins}:ZeroRanking"}}',
    ], n_trials=1, n_features=[8])
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(out), "-q", "-j", "1"])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    failures = load_failures(out).set_index("selector")["error"]
    assert sorted(failures.index) == ["all-nan", "one-nan", "short", "zero-ranking"]
    assert failures["all-nan"] == ("PluginError: The scores of all_nan is NaN for every one of the 64 features, so "
                                   "it ranks none of them: fix the computation that gives NaN (a division by zero, a "
                                   "log of zero, an empty class).")
    assert failures["one-nan"].startswith("PluginError: The scores of one_nan is NaN for 1 of the 64 features")
    assert failures["zero-ranking"].startswith("PluginError: ZeroRanking.ranking_ gives all 64 features the same "
                                               "value (0), so it ranks none of them")
    assert failures["short"] == ("PluginError: The scores of short has shape (63,); expected (64,), one value per "
                                 "feature.")
    runs = pd.read_csv(out / "runs.csv.gz")
    assert set(runs["selector"]) == {"fisher"}


# ----------------------------------------------------------------------------- non-determinism
def probe_warnings(spec, **kwargs) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        probe(spec, **kwargs)
    return [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]


def test_the_probe_warns_about_a_plugin_whose_two_fits_differ(plugins):
    X, y = problem()
    for name, fix in (("Unseeded", "give it a random_state parameter and seed every random choice from it"),
                      ("IgnoresSeed", "seed every random choice from its random_state parameter")):
        spec = resolve(class_path=f"{plugins}:{name}")
        # independently: two fits with the same random_state differ
        a = fit(ExternalSelector(spec.obj, random_state=0), X, y)
        b = fit(ExternalSelector(spec.obj, random_state=0), X, y)
        assert not np.array_equal(a.scores_, b.scores_)
        [message] = probe_warnings(spec)
        assert message.startswith(f"{plugins}:{name} gave different rankings in two fits of the same 30 x 6 probe "
                                  "problem with the same random_state, so two runs of one config would give "
                                  "different rows")
        assert fix in message and "\n" not in message


def test_the_probe_does_not_warn_about_seeded_or_deterministic_plugins(plugins):
    assert probe_warnings(resolve(class_path=f"{plugins}:Seeded")) == []
    forest = resolve(class_path="sklearn.ensemble:RandomForestClassifier")
    assert probe_warnings(forest, params={"n_estimators": 5}) == []
    assert probe_warnings(resolve(score_func="sklearn.feature_selection:mutual_info_classif")) == []
    assert probe_warnings(resolve(class_path=f"{plugins}:OnCopy")) == []


def test_a_slow_first_probe_fit_is_not_repeated(plugins, monkeypatch):
    spec = resolve(class_path=f"{plugins}:Unseeded")
    monkeypatch.setattr(importlib.import_module("fsbench.plugins.probe"), "REPEAT_BUDGET", 0.0)
    fits = []
    monkeypatch.setattr(spec.obj, "fit", lambda self, X, y, fit=spec.obj.fit: fits.append(1) or fit(self, X, y))
    assert probe_warnings(spec) == []  # one fit: nothing to compare it with
    assert len(fits) == 1


def test_the_probe_names_a_plugin_that_writes_into_its_input_and_its_copies_keep_the_fits_equal(plugins):
    # InPlace shifts X in place: were the second probe fit given the first one's edited X, its
    # ranking could differ and it would be wrongly called non-deterministic
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        probe(resolve(class_path=f"{plugins}:InPlace"))
    [warning] = caught
    assert str(warning.message).startswith(f"{plugins}:InPlace writes into the X it is given to fit")
    # attributed to the plugin's own class statement, where the user fixes it
    source = Path(sys.modules[plugins].__file__)
    assert warning.category is PluginWarning and Path(warning.filename) == source
    assert source.read_text().splitlines()[warning.lineno - 1] == "class InPlace(BaseEstimator):"


def test_a_probe_warning_reaches_the_user_on_stderr(plugins, tmp_path):
    """The user's view: ``fsbench run`` in its own process prints the probe's warning on stderr,
    stdout keeps the table, and the plugin's printed output (Python's and C's printf) goes to
    stderr, in its probes and in its fits."""
    config = digits_config(tmp_path, "noisy", [f'{{name: prints, class: "{plugins}:Prints"}}',
                                               f'{{name: unseeded, class: "{plugins}:Unseeded"}}'],
                           n_trials=2, n_features=[8])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                                     os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "fsbench.cli", "run", str(config), "--out", "out", "-q", "-j", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert f"{plugins}.py:" in done.stderr and "PluginWarning" in done.stderr
    assert f"{plugins}:Unseeded gave different rankings" in done.stderr
    for marker in ("PLUGIN-PYTHON-PRINT", "PLUGIN-C-PRINTF"):
        assert marker not in done.stdout
        # two probe fits, then one fit per task (2 tasks)
        assert done.stderr.count(marker) == 4, (marker, done.stderr)
    assert "| dataset | prints | unseeded |" in done.stdout


# ----------------------------------------------------------------------------- output
def test_output_to_stderr_covers_python_and_the_file_descriptor_and_is_restored(capfd):
    libc = ctypes.CDLL(None)
    print("fsbench before")
    with output_to_stderr():
        print("plugin python")
        with output_to_stderr():  # nested: one redirection, restored by the outer block
            libc.printf(b"plugin C\n")
        os.write(1, b"plugin fd\n")
    print("fsbench after")
    libc.printf(b"fsbench C after\n")
    libc.fflush(None)
    out, err = capfd.readouterr()  # (Python's, C's and the descriptor's writes are buffered apart)
    assert sorted(out.splitlines()) == ["fsbench C after", "fsbench after", "fsbench before"]
    assert sorted(err.splitlines()) == ["plugin C", "plugin fd", "plugin python"]


def test_a_plugin_calling_sys_exit_is_not_swallowed_and_leaves_stdout_restored(plugins, capfd):
    X, y = problem()
    stdout = sys.stdout
    with pytest.raises(SystemExit) as exc:
        fit_selector(f"{plugins}:Exits", {}, X, y, 0, 5, None, kind="class")
    assert exc.value.code == 3 and sys.stdout is stdout
    print("fsbench after")
    out, err = capfd.readouterr()
    assert out == "fsbench after\n" and "before exit" in err


def test_a_plugin_closing_its_stdout_leaves_fsbench_stderr_open(plugins, capfd):
    X, y = problem()
    stdout, stderr = sys.stdout, sys.stderr
    fit_selector(f"{plugins}:ClosesStdout", {}, X, y, 0, 5, None, kind="class")
    assert sys.stdout is stdout and sys.stderr is stderr and not stderr.closed and not stdout.closed
    print("fsbench after")
    print("fsbench message", file=sys.stderr)
    out, err = capfd.readouterr()
    assert out == "fsbench after\n" and err == "before close\nfsbench message\n"


def test_output_to_stderr_from_two_threads_is_restored_by_the_last_to_leave(capfd):
    entered, left = threading.Event(), threading.Event()

    def other():
        with output_to_stderr():
            entered.set()
            left.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    entered.wait(10)
    with output_to_stderr():
        left.set()
        thread.join(10)  # the other thread has left: this block still redirects
        print("plugin python")
        os.write(1, b"plugin fd\n")
    print("fsbench after")
    out, err = capfd.readouterr()
    assert out == "fsbench after\n" and sorted(err.splitlines()) == ["plugin fd", "plugin python"]
