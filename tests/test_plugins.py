"""User selectors from import paths and entry points (fsbench.plugins): loading, ranking, probing,
code identity and the entry-point registry.

Every expected ranking is computed here from scikit-learn directly (``np.argsort`` of the
estimator's own attribute), not through fsbench's ranking code.
"""

from __future__ import annotations

import importlib
import pickle
import sys
import textwrap
import uuid
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_selection import RFE, f_classif, mutual_info_classif
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from fsbench.errors import ConfigError, FsbenchError
from fsbench.plugins import (
    ExternalSelector,
    PluginError,
    build_selector,
    discover_plugins,
    distribution_versions,
    find_plugin,
    list_plugins,
    load_object,
    plugin_code,
    probe,
    resolve,
    spec_of,
    uses_random_state,
)


@pytest.fixture
def problem():
    """60 x 8, 3 classes; feature 6 constant (F is NaN: it must rank last), feature 7 a copy of
    feature 0 (a tie: the lower index first)."""
    rng = np.random.default_rng(3)
    y = np.arange(60) % 3
    X = rng.standard_normal((60, 8))
    X[:, :3] += 1.5 * np.eye(3)[y]
    X[:, 3] += 0.5 * (y == 1)
    X[:, 6] = 1.0
    X[:, 7] = X[:, 0]
    return X, y


def fit(selector, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return selector.fit(X, y)


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert isinstance(exc.value, PluginError) and isinstance(exc.value, ConfigError)
    assert isinstance(exc.value, FsbenchError)
    assert "\n" not in message and message.strip() == message and message
    return message


def write_module(folder, text: str) -> str:
    """A fresh module in ``folder`` (on sys.path), with a name no other test uses."""
    name = f"fsb_plugin_{uuid.uuid4().hex[:10]}"
    (folder / f"{name}.py").write_text(textwrap.dedent(text))
    importlib.invalidate_caches()
    return name


# ----------------------------------------------------------------------------- rankings
def test_score_func_ranks_like_f_classif(problem):
    X, y = problem
    spec = resolve(score_func="sklearn.feature_selection:f_classif")
    sel = fit(build_selector(spec, n_features_to_select=3), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        F = f_classif(X, y)[0]
    expected = np.argsort(-F, kind="stable")  # numpy sorts NaN last
    assert np.isnan(F[6]) and F[0] == F[7]
    np.testing.assert_array_equal(sel.ranking_, expected)
    assert sel.ranking_[-1] == 6 and list(sel.ranking_).index(0) < list(sel.ranking_).index(7)
    assert sel.ranked_by_ == "score_func"
    np.testing.assert_array_equal(sel.transform(X), X[:, np.sort(expected[:3])])
    # the dotted form names the same function and the same plugin
    assert resolve(score_func="sklearn.feature_selection.f_classif") == spec


def test_score_func_with_random_state_gets_the_seed(problem):
    X, y = problem
    spec = resolve(score_func="sklearn.feature_selection:mutual_info_classif")
    assert uses_random_state(spec)
    sel = fit(build_selector(spec, {"n_neighbors": 5}, random_state=7), X, y)
    expected = np.argsort(-mutual_info_classif(X, y, n_neighbors=5, random_state=7), kind="stable")
    np.testing.assert_array_equal(sel.ranking_, expected)


def test_random_forest_ranks_by_its_importances(problem):
    X, y = problem
    spec = resolve(class_path="sklearn.ensemble:RandomForestClassifier")
    assert uses_random_state(spec)
    sel = fit(build_selector(spec, {"n_estimators": 30}, random_state=11), X, y)
    rf = RandomForestClassifier(n_estimators=30, random_state=11).fit(X, y)
    np.testing.assert_array_equal(sel.ranking_, np.argsort(-rf.feature_importances_, kind="stable"))
    assert sel.estimator_.random_state == 11 and sel.ranked_by_ == "feature_importances_"
    other = fit(build_selector(spec, {"n_estimators": 30}, random_state=12), X, y)
    assert not np.array_equal(other.estimator_.feature_importances_, sel.estimator_.feature_importances_)


def test_logistic_regression_ranks_by_column_norms_of_coef(problem):
    X, y = problem
    spec = resolve(class_path="sklearn.linear_model:LogisticRegression")
    sel = fit(build_selector(spec, {"C": 0.3}, random_state=0), X, y)
    lr = LogisticRegression(C=0.3, random_state=0).fit(X, y)
    norms = np.sqrt((lr.coef_ ** 2).sum(axis=0))
    assert lr.coef_.shape == (3, 8)
    np.testing.assert_array_equal(sel.ranking_, np.argsort(-norms, kind="stable"))
    assert sel.ranked_by_ == "coef_" and sel.n_iter_ == int(np.max(lr.n_iter_))


class Linear(BaseEstimator):
    def __init__(self, coef=None):
        self.coef = coef

    def fit(self, X, y):
        self.coef_ = np.asarray(self.coef)
        return self


def test_coef_rule_is_the_l2_norm_over_classes_and_the_absolute_value_in_1d():
    X, y = np.eye(5), np.arange(5) % 2
    sel = fit(ExternalSelector(Linear, params={"coef": [0.5, -3.0, 0.0, 2.0, -0.5]}), X, y)
    np.testing.assert_array_equal(sel.ranking_, [1, 3, 0, 4, 2])
    # column norms 2, 1.70, 2.10: the l1 norm (2, 2.4, 2.8) and the largest |coef| (2, 1.2, 1.9) order them otherwise
    coef = [[2.0, -1.2, 1.9], [0.0, 1.2, -0.9]]
    sel = fit(ExternalSelector(Linear, params={"coef": coef}), X[:3, :3], y[:3])
    np.testing.assert_array_equal(sel.ranking_, [2, 0, 1])
    np.testing.assert_allclose(sel.scores_, np.linalg.norm(coef, axis=0))


def test_rfe_ranks_are_converted(problem):
    X, y = problem
    for k in (1, 3):  # k = 3: RFE gives its three selected features rank 1 (ties: lower index first)
        params = {"estimator": LogisticRegression(max_iter=500), "n_features_to_select": k}
        sel = fit(ExternalSelector(RFE, params=params), X, y)
        rfe = fit(RFE(LogisticRegression(max_iter=500), n_features_to_select=k), X, y)
        assert not np.array_equal(np.sort(rfe.ranking_), np.arange(8))  # ranks, not a permutation
        np.testing.assert_array_equal(sel.ranking_, np.argsort(rfe.ranking_, kind="stable"))
        assert sel.ranked_by_ == "ranking_ (ranks)"


class Attributes(BaseEstimator):
    """Exposes the attributes it is given: the order fsbench reads them in."""

    def __init__(self, ranking=None, scores=None, importances=None, coef=None):
        self.ranking = ranking
        self.scores = scores
        self.importances = importances
        self.coef = coef

    def fit(self, X, y):
        for attr, value in (("ranking_", self.ranking), ("scores_", self.scores),
                            ("feature_importances_", self.importances), ("coef_", self.coef)):
            if value is not None:
                setattr(self, attr, np.asarray(value))
        return self


def test_attribute_order_and_a_permutation_ranking_taken_as_is():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    perm, scores, importances, coef = [2, 0, 3, 1], [1, 4, 3, 2], [4, 1, 2, 3], [[0, 0, 9, 1]]
    # a permutation of range(d) is indices best first (read as ranks it would give [1, 3, 0, 2])
    sel = fit(ExternalSelector(Attributes, params={"ranking": perm, "scores": scores}), X, y)
    np.testing.assert_array_equal(sel.ranking_, perm)
    assert sel.ranked_by_ == "ranking_"
    np.testing.assert_array_equal(np.argsort(-sel.scores_, kind="stable"), perm)
    sel = fit(ExternalSelector(Attributes, params={"scores": scores, "importances": importances, "coef": coef}), X, y)
    np.testing.assert_array_equal(sel.ranking_, [1, 2, 3, 0])
    sel = fit(ExternalSelector(Attributes, params={"importances": importances, "coef": coef}), X, y)
    np.testing.assert_array_equal(sel.ranking_, [0, 3, 2, 1])
    sel = fit(ExternalSelector(Attributes, params={"coef": coef}), X, y)
    np.testing.assert_array_equal(sel.ranking_, [2, 3, 0, 1])


@pytest.mark.parametrize("params, words", [
    ({"ranking": [0, 1, 2]}, "ranking_ has shape (3,)"),
    ({"ranking": [1, 2, np.nan, 3]}, "NaN"),
    ({"scores": [[1, 2, 3, 4]]}, "scores_ has shape (1, 4)"),
    ({"coef": np.ones((2, 2, 4))}, "coef_ has shape (2, 2, 4)"),
    ({}, "none of ranking_, scores_, feature_importances_ or coef_"),
])
def test_output_that_cannot_rank_is_an_error(params, words):
    with pytest.raises(PluginError) as exc:
        fit(ExternalSelector(Attributes, params=params), np.eye(4), np.array([0, 1, 0, 1]))
    assert words in one_line(exc)


def test_selector_is_a_scikit_learn_estimator(problem):
    X, y = problem
    spec = resolve(class_path="sklearn.linear_model:LogisticRegression")
    sel = build_selector(spec, {"C": 0.5}, n_features_to_select=2, random_state=3)
    twin = clone(sel)
    assert twin.get_params()["params"] == {"C": 0.5} and twin.random_state == 3
    pipe = fit(Pipeline([("select", sel), ("clf", LogisticRegression())]), X, y)
    assert pipe.named_steps["select"].transform(X).shape == (60, 2)
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and again.obj is LogisticRegression
    with pytest.raises(ValueError, match="exactly one of estimator and score_func"):
        ExternalSelector().fit(X, y)
    with pytest.raises(ValueError, match="random_state is given both"):
        ExternalSelector(LogisticRegression, params={"random_state": 1}, random_state=2).fit(X, y)


# ----------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("path, words", [
    ("", "is not an import path"),
    ("sklearn", "is not an import path"),
    ("a:b:c", "is not an import path"),
    ("sklearn..x:y", "is not an import path"),
    ("my package:Sel", "is not an import path"),
    ("fsbench_no_such_module.sub:Thing", "Cannot import module 'fsbench_no_such_module.sub'"),
    ("sklearn.feature_selection:f_clasif", "did you mean 'f_classif'"),
    ("sklearn.feature_selection.f_clasif", "did you mean 'f_classif'"),
])
def test_bad_import_paths(path, words):
    with pytest.raises(PluginError) as exc:
        load_object(path)
    assert words in one_line(exc)


def test_import_error_names_module_and_first_line(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    name = write_module(tmp_path, "import fsbench_missing_dependency\n")
    with pytest.raises(PluginError) as exc:
        resolve(class_path=f"{name}:Sel")
    message = one_line(exc)
    assert f"Cannot import module {name!r}" in message
    assert "No module named 'fsbench_missing_dependency'" in message and exc.value.key == "class"
    bad = write_module(tmp_path, "raise RuntimeError('first line\\nsecond line')\n")
    with pytest.raises(PluginError) as exc:
        resolve(score_func=f"{bad}:f")
    assert "raised RuntimeError: first line" in one_line(exc) and "second" not in str(exc.value)


@pytest.mark.parametrize("kwargs, key, words", [
    ({"class_path": "sklearn.linear_model:LogisticRegression", "score_func": "sklearn.feature_selection:f_classif"},
     "score_func", "not both"),
    ({"class_path": "sklearn.feature_selection:f_classif"}, "class", "is a function, not an estimator class"),
    ({"class_path": "numpy:ndarray"}, "class", "is not a scikit-learn estimator: it has no fit"),
    ({"class_path": "sklearn.feature_selection:__name__"}, "class", "is a str, not an estimator class"),
    ({"score_func": "sklearn.linear_model:LogisticRegression"}, "score_func", "is a class"),
    ({"score_func": "math:pi"}, "score_func", "not a function"),
    ({"score_func": "math:sqrt"}, "score_func", "cannot be called as f(X, y)"),
])
def test_bad_specs(kwargs, key, words):
    with pytest.raises(PluginError) as exc:
        resolve(**kwargs)
    assert words in one_line(exc) and exc.value.key == key


class Raises(BaseEstimator):
    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def fit(self, X, y):
        raise ValueError("alpha is too small\nTraceback-like detail")


class Noisy(BaseEstimator):
    def fit(self, X, y):
        print("fitting!")
        print("to stderr", file=sys.stderr)
        warnings.warn("careful", UserWarning, stacklevel=1)
        self.scores_ = X.var(axis=0)
        return self


def short_scores(X, y):
    return np.ones(X.shape[1] - 1)


LR = "sklearn.linear_model:LogisticRegression"


@pytest.mark.parametrize("spec, params, grid, key, words", [
    ("sklearn.preprocessing:StandardScaler", {}, {}, "class",
     "sklearn.preprocessing:StandardScaler exposes none of ranking_, scores_, feature_importances_ or coef_"),
    (LR, {"Cc": 1.0}, {}, "params.Cc", "has no parameter 'Cc'; did you mean 'C'?"),
    (LR, {}, {"alhpa": [1, 2]}, "grid.alhpa", "has no parameter 'alhpa'"),
    (LR, {}, {"random_state": [1, 2]}, "grid.random_state",
     "random_state cannot be set"),
    (LR, {"C": 1.0}, {"C": [1, 2]}, "grid.C", "both fixed in params and searched"),
    (LR, {}, {"C": 1}, "grid.C", "must be a non-empty list"),
    (LR, {}, {"C": [1, -2]}, "grid.C", "refuses C=-2"),
    (LR, {"C": "big"}, {}, "params", "refuses C='big'"),
    ("sklearn.feature_selection:RFE", {}, {}, "params", "cannot be created with no parameters"),
    ("sklearn.feature_selection:chi2", {}, {}, "score_func", "raised ValueError: Input X must be non-negative"),
    ("sklearn.feature_selection:mutual_info_classif", {"k": 3}, {}, "params.k", "has no parameter 'k'"),
])
def test_probe_rejects(spec, params, grid, key, words):
    kind = "score_func" if spec.rsplit(":", 1)[1][0].islower() else "class_path"
    with pytest.raises(PluginError) as exc:
        probe(resolve(**{kind: spec}), params, grid)
    assert words in one_line(exc) and exc.value.key == key


def test_probe_reports_a_failing_fit_in_one_line_and_a_short_score_vector():
    with pytest.raises(PluginError) as exc:
        probe(spec_of(Raises, f"{__name__}:Raises"), {"alpha": 0.5})
    message = one_line(exc)
    assert message.startswith(f"The class {__name__}:Raises raised ValueError: alpha is too small while fitting")
    assert "Traceback" not in message and "alpha=0.5" in message
    with pytest.raises(PluginError) as exc:
        probe(spec_of(short_scores, f"{__name__}:short_scores"))
    assert "The scores of short_scores has shape (5,); expected (6,)" in one_line(exc)


def test_probe_accepts_good_plugins_without_warnings_and_keeps_stdout_clean(capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert probe(spec_of(Noisy, f"{__name__}:Noisy")) == "scores_"
        assert probe(resolve(class_path="sklearn.linear_model:LogisticRegression"), {"max_iter": 50},
                     {"C": [0.01, 0.1, 1]}) == "coef_"
        assert probe(resolve(score_func="sklearn.feature_selection:chi2"), nonnegative=True) == "score_func"
    assert not caught  # the plugin's own warning is not the user's concern at validation
    # the plugin's printed output goes to stderr, once per probe fit (two), never to stdout
    assert capsys.readouterr() == ("", "fitting!\nto stderr\n" * 2)


# ----------------------------------------------------------------------------- code identity
def test_plugin_code_follows_the_module_file(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    source = """
        import numpy as np
        from sklearn.base import BaseEstimator

        class Sel(BaseEstimator):
            def fit(self, X, y):
                self.scores_ = X.var(axis=0)
                return self

        def score(X, y):
            return X.var(axis=0)
        """
    name = write_module(tmp_path, source)
    spec = resolve(class_path=f"{name}:Sel")
    func = resolve(score_func=f"{name}:score")
    code = plugin_code(spec)
    assert plugin_code(spec) == code and plugin_code(resolve(class_path=f"{name}.Sel")) == code
    assert plugin_code(func) != code  # another object of the same file
    assert distribution_versions(name) == []  # a module on sys.path: "unknown"
    (tmp_path / "neighbour.py").write_text("x = 1\n")  # another file: no change
    assert plugin_code(spec) == code
    path = tmp_path / f"{name}.py"
    path.write_text(path.read_text().replace("X.var(axis=0)", "X.std(axis=0)", 1))
    edited = plugin_code(spec)
    assert edited != code
    path.write_text(path.read_text() + "# a comment\n")
    assert plugin_code(spec) not in (code, edited)
    path.write_text(textwrap.dedent(source))
    assert plugin_code(spec) == code


def test_scikit_learn_functions_are_identified_by_its_version():
    assert distribution_versions("sklearn.feature_selection") == [f"scikit-learn=={sklearn.__version__}"]
    a = plugin_code(resolve(score_func="sklearn.feature_selection:f_classif"))
    b = plugin_code(resolve(score_func="sklearn.feature_selection:mutual_info_classif"))
    assert a != b and len(a) == 16


# ----------------------------------------------------------------------------- entry points
def fake_distribution(root, dist: str, version: str, entries: str, module: str, source: str) -> None:
    """A distribution as importlib.metadata finds it on sys.path: <dist>-<version>.dist-info with
    METADATA, entry_points.txt and top_level.txt, beside its module."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text("[fsbench.selectors]\n" + textwrap.dedent(entries))
    (info / "top_level.txt").write_text(module + "\n")
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    importlib.invalidate_caches()


PLUGIN_SOURCE = '''
    """Selectors of a fake package."""
    import numpy as np
    from sklearn.base import BaseEstimator

    class FakeSelector(BaseEstimator):
        """Variance of each feature, as a selector.

        More text.
        """

        def __init__(self, power=1.0, random_state=None):
            self.power = power
            self.random_state = random_state

        def fit(self, X, y):
            self.scores_ = X.var(axis=0) ** self.power
            return self

    def fake_score(X, y, shift=0.0):
        """Minus the mean of each feature."""
        return -X.mean(axis=0) + shift, np.ones(X.shape[1])
    '''


@pytest.fixture
def fake_plugins(tmp_path, monkeypatch):
    module = f"fsb_fake_{uuid.uuid4().hex[:8]}"
    entries = f"""
        fsb-fake-sel = {module}:FakeSelector
        fsb-fake-score = {module}:fake_score
        fisher = {module}:fake_score
        """
    fake_distribution(tmp_path, "fsb-fake-plugins", "1.0", entries, module, PLUGIN_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path, module


def test_entry_points_are_found_and_used(fake_plugins, problem):
    root, module = fake_plugins
    X, y = problem
    sel = find_plugin("fsb-fake-sel")
    assert sel.kind == "class" and sel.path == f"{module}:FakeSelector" and uses_random_state(sel)
    assert probe(sel, {"power": 2.0}) == "scores_"
    fitted = fit(build_selector(sel, {"power": 2.0}, random_state=5), X, y)
    np.testing.assert_array_equal(fitted.ranking_, np.argsort(-(X.var(axis=0) ** 2), kind="stable"))
    assert fitted.estimator_.random_state == 5
    score = find_plugin("fsb-fake-score")
    assert score.kind == "score_func"
    fitted = fit(build_selector(score, {"shift": 1.0}), X, y)
    np.testing.assert_array_equal(fitted.ranking_, np.argsort(X.mean(axis=0), kind="stable"))
    assert find_plugin("fisher") is None and find_plugin("fsb-no-such-plugin") is None
    found = discover_plugins()
    assert {"fsb-fake-sel", "fsb-fake-score"} <= set(found) and "fisher" not in found
    # the package's version is part of the code identity
    assert distribution_versions(module) == ["fsb-fake-plugins==1.0"]
    code = plugin_code(sel)
    metadata = root / "fsb_fake_plugins-1.0.dist-info" / "METADATA"
    metadata.write_text(metadata.read_text().replace("Version: 1.0", "Version: 1.1"))
    assert plugin_code(sel) != code


def test_entry_points_are_listed(fake_plugins):
    _, module = fake_plugins
    listed = {p.name: p for p in list_plugins() if p.name.startswith("fsb-") or p.name == "fisher"}
    assert set(listed) == {"fsb-fake-sel", "fsb-fake-score", "fisher"}
    sel = listed["fsb-fake-sel"]
    assert (sel.status, sel.kind, sel.path, sel.distribution, sel.summary) == (
        "ok", "class", f"{module}:FakeSelector", "fsb-fake-plugins 1.0", "Variance of each feature, as a selector.")
    assert sel.params == {"power": 1.0, "random_state": None}
    assert listed["fsb-fake-score"].params == {"shift": 0.0}
    assert listed["fisher"].status == "shadowed" and "shadowed by the built-in 'fisher'" in listed["fisher"].summary


def test_broken_and_ambiguous_entry_points(tmp_path, monkeypatch):
    module = f"fsb_fake_{uuid.uuid4().hex[:8]}"
    entries = f"""
        fsb-missing = {module}:Missing
        fsb-twice = {module}:FakeSelector
        """
    fake_distribution(tmp_path, "fsb-fake-one", "1.0", entries, module, PLUGIN_SOURCE)
    other = tmp_path / "other"
    other.mkdir()
    fake_distribution(other, "fsb-fake-two", "2.0", f"fsb-twice = {module}:fake_score\n", module + "_b", "")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(other))
    with pytest.raises(PluginError) as exc:
        find_plugin("fsb-missing")
    message = one_line(exc)
    assert "entry point 'fsb-missing'" in message and "fsb-fake-one 1.0" in message and "'Missing'" in message
    with pytest.raises(PluginError) as exc:
        find_plugin("fsb-twice")
    assert "registered by fsb-fake-" in one_line(exc) and "fsb-fake-one 1.0" in str(exc.value)
    with pytest.raises(PluginError):
        discover_plugins()
    listed = [p for p in list_plugins() if p.name.startswith("fsb-")]
    assert [(p.name, p.status) for p in listed] == [("fsb-missing", "broken"), ("fsb-twice", "ambiguous"),
                                                    ("fsb-twice", "ambiguous")]
