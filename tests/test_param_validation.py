"""Selector parameters are validated before anything runs.

Every parameter of every registered selector (found in the registry, so a new selector is swept
as soon as it is registered) is tried with invalid values, generated two ways:

- from the selector's declared ``_parameter_constraints`` (each bound, just outside it, the wrong
  type, infinities, NaN, booleans, near-miss strings, lists), and
- from a hand-written table of what each parameter should accept, written from the papers and
  the docstrings independently of the constraints, so that a missing or too loose constraint
  fails here.

Each must be rejected by the config validator as one ConfigError that names the file, the line
and the key (no other exception, nothing accepted), and by ``fit`` with scikit-learn's
InvalidParameterError before any work. Every default and the table's valid values must pass the
config validator and fit a tiny problem (the constraints are not too strict).
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from param_table import (
    BOOL,
    DECREASE_TOL,
    DISCRETIZATION,
    GAP_TOL,
    ITERS,
    N_SELECT,
    REWEIGHTED,
    SEED,
    SOLVER,
    SVM_C,
    P,
)
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    Options,
    _Booleans,
    generate_invalid_param_val,
    make_constraint,
)

from fsbench.cli import main
from fsbench.configuration.parse import RESERVED_PARAMS, parse_experiment
from fsbench.errors import ConfigError
from fsbench.selectors import make_selector, registry

REGISTRY = registry()
SOURCE = "sweep.yaml"
CONFIG = """\
name: sweep
datasets: [digits]
n_features: [5]
selectors:
  - fisher
  - name: {name}
    label: swept
    {kind}: {body}
"""
LINE = 8  # the line of the swept selector's params / grid


EXPECT: dict[str, dict[str, P]] = {
    "fisher": {"n_features_to_select": N_SELECT},
    "fstat": {"n_features_to_select": N_SELECT},
    "ttest": {"n_features_to_select": N_SELECT, "equal_var": BOOL},
    "random": {"n_features_to_select": N_SELECT, "random_state": SEED},
    "chi2": {"n_features_to_select": N_SELECT, **DISCRETIZATION},
    "infogain": {"n_features_to_select": N_SELECT, **DISCRETIZATION},
    "mrmr": {
        "n_features_to_select": N_SELECT, **DISCRETIZATION,
        "criterion": P("str", ["mid", "miq"], ["mif", "mrmr"]),
        "n_ranked": P("int", [1, 10, 1000], [0, -5], edge=[2**31 - 1]),
        "pool_size": P("int", [None, 1, 50], [0, -1], nullable=True),
        "miq_eps": P("float", [1e-6, 1e-4, 1.0], [0, -1e-4, 1.5, 10], context={"criterion": "miq"}),
    },
    "relieff": {
        "n_features_to_select": N_SELECT,
        "n_neighbors": P("int", [1, 3, 100], [0, -1], edge=[2**31 - 1]),
        "n_samples": P("int", [None, 1, 10, 10_000], [0, -2], nullable=True),
        "discrete_threshold": P("int", [0, 2, 1000], [-1, -10]),
        "miss_weighting": P("str", ["prior", "uniform"], ["equal", "priors"]),
        "random_state": SEED,
    },
    "rfs": {
        "n_features_to_select": N_SELECT,
        "gamma": P("float", [1e-8, 1e-3, 1, 1e3, 1e8], [0, -1, 1e-9, 1.1e8, 1e20, 1e160]),
        "label_coding": P("str", ["onehot", "pm1"], ["one-hot", "ordinal", "+-1"]),
        "fit_intercept": BOOL, "tol": DECREASE_TOL, "max_iter": ITERS,
        "form": P("str", ["auto", "samples", "features"], ["sample", "dual"]),
        "stop": P("str", ["gap", "decrease"], ["duality_gap", "Gap", "relative"]),
        "solver": P("str", ["auto", "reweighted", "admm"], ["ADMM", "irls", "algorithm1"]),
    },
    "dso": {
        "n_features_to_select": N_SELECT,
        "p": P("float", [0.05, 0.1, 0.5, 1, 1.0], [0, -0.5, 0.01, 0.001, 1.0001, 2, 1e-300]),
        "solver": P("str", ["alternating", "joint"], ["cvx", "alternate"]),
        "penalize_bias": BOOL, "tol": DECREASE_TOL, "max_iter": ITERS,
        "zero_tol": P("float", [None, 1e-300, 1e-12, 1e-3], [0, -1e-10, 0.01, 0.5, 1], nullable=True),
    },
    "sl2p": {
        **REWEIGHTED,
        "solver": P("str", ["auto", "ip", "cd", "liblinear", "admm"], ["lbfgs", "IP", "ADMM"], context={"p": 1}),
        "p": P("float", [1, 1.5, 4, 8], [0.5, 0, -1, 8.5, 100]),
        "C_scale": P("float", [0, 0.5, 1], [-1, -0.1, 1.5, 10]),
    },
    "sl21": {**REWEIGHTED, "C_scale": P("float", [0, 0.5, 1], [-1, -0.1, 1.5, 10])},
    "l21svm": REWEIGHTED,
    "cssvm": {
        "n_features_to_select": N_SELECT, "C": SVM_C, "fit_intercept": BOOL,
        "tol": GAP_TOL, "max_iter": ITERS, "solver": SOLVER,
    },
    "l1svm": {
        "n_features_to_select": N_SELECT, "C": SVM_C, "tol": GAP_TOL, "max_iter": ITERS,
        "path_factor": P("float", [1.0001, 2, 10], [1, 0.5, 0, -2, 1001]),
        "path_steps": P("int", [0, 1, 6, 30], [-1, 101]),
        "full_path": BOOL,
        "solver": P("str", ["auto", "lars", "lbfgsb"], ["lbfgs", "LARS", "newton"]),
    },
}

#: parameters that constrain each other: (params, the key the message must name) refused, and
#: combinations that must pass
COMBOS_INVALID: dict[str, list[tuple[dict[str, Any], str]]] = {
    "chi2": [({"n_bins": 5}, "n_bins"), ({"discretize": "quantile", "std_factor": 2}, "std_factor")],
    "infogain": [({"discretize": "mean_std", "n_bins": 4}, "n_bins")],
    "mrmr": [({"miq_eps": 0.01}, "miq_eps"), ({"criterion": "mid", "miq_eps": 0.5}, "miq_eps"),
             ({"n_bins": 4}, "n_bins")],
    "l1svm": [({"path_steps": 0, "full_path": True}, "full_path"),
              ({"path_steps": 0, "path_factor": 3}, "path_factor"),
              ({"path_steps": 100}, "path_steps"),
              ({"C": 1e8, "path_factor": 100, "path_steps": 3}, "path_steps")],
    "rfs": [({"solver": "admm", "stop": "decrease"}, "solver"), ({"solver": "admm", "form": "samples"}, "form")],
    "l21svm": [({"solver": "admm", "loss": "crammer_singer"}, "loss"),
               ({"solver": "admm", "inner_tol": 1e-6}, "inner_tol")],
    "sl21": [({"solver": "admm", "loss": "crammer_singer"}, "loss"),
             ({"solver": "admm", "inner_tol": 1e-6}, "inner_tol")],
    "sl2p": [({"solver": "admm"}, "solver"), ({"solver": "admm", "p": 1.5}, "p = 1"),
             ({"solver": "admm", "p": 1, "loss": "crammer_singer"}, "loss")],
}
COMBOS_VALID: dict[str, list[dict[str, Any]]] = {
    "rfs": [{"solver": "reweighted", "stop": "decrease"}, {"solver": "admm", "form": "auto"}],
    "l21svm": [{"solver": "admm", "tol": 1e-7}, {"solver": "auto", "loss": "crammer_singer", "inner_tol": 1e-6}],
    "sl21": [{"solver": "admm", "C_scale": 0}],
    "sl2p": [{"solver": "admm", "p": 1}, {"solver": "ip", "p": 3}],
    "chi2": [{"discretize": "quantile", "n_bins": 32}, {"discretize": "mean_std", "std_factor": 0}],
    "infogain": [{"discretize": "quantile", "n_bins": 2}],
    "mrmr": [{"criterion": "miq", "miq_eps": 0.01}, {"discretize": "quantile", "n_bins": 5, "criterion": "miq"}],
    "l1svm": [{"path_factor": 1000, "path_steps": 2}, {"C": 1e8, "path_steps": 6},
              {"path_steps": 3, "full_path": True}],
}


def _merge_family_tables() -> None:
    """Add the tables of ``param_table_*.py`` (one family of selectors each) to the three above."""
    import importlib

    for path in sorted(Path(__file__).parent.glob("param_table_*.py")):
        module = importlib.import_module(path.stem)
        for mine, theirs in ((EXPECT, "EXPECT"), (COMBOS_INVALID, "COMBOS_INVALID"),
                             (COMBOS_VALID, "COMBOS_VALID")):
            table = getattr(module, theirs, {})
            assert not set(table) & set(mine), (path.name, set(table) & set(mine))
            mine.update(table)


_merge_family_tables()

# ----------------------------------------------------------------------------- helpers
def yaml_text(v: Any) -> str:
    """A Python value written as YAML 1.2 (fsbench's reader gives it back exactly)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return ".nan" if math.isnan(v) else (".inf" if v > 0 else "-.inf") if math.isinf(v) else repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, list):
        return "[" + ", ".join(map(yaml_text, v)) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {yaml_text(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def config(name: str, params: dict[str, Any] | None = None, grid: dict[str, list[Any]] | None = None) -> str:
    kind, body = ("grid", grid) if grid is not None else ("params", params)
    return CONFIG.format(name=name, kind=kind, body=yaml_text(body))


def parse(text: str):
    return parse_experiment(text, SOURCE)


def satisfied(constraints: list[Any], value: Any) -> bool:
    return any(make_constraint(c).is_satisfied_by(value) for c in constraints)


def invalid_from_constraints(constraints: list[Any]) -> list[Any]:
    """Values just outside and far outside each constraint, and of every wrong type."""
    out: list[Any] = [math.inf, -math.inf, math.nan, 1e300, -1e300, True, False, "not-an-option",
                      "1", [1, 2], {"a": 1}, None]
    for c in map(make_constraint, constraints):
        try:
            out.append(generate_invalid_param_val(c))  # scikit-learn's own generator
        except NotImplementedError:
            pass
        if isinstance(c, Interval):
            integral = c.type is Integral
            for bound, inward, closed in ((c.left, math.inf, c.closed in ("left", "both")),
                                          (c.right, -math.inf, c.closed in ("right", "both"))):
                if bound is None:
                    continue
                outward = -inward
                if integral:
                    out += [bound + (1 if outward > 0 else -1), bound + 0.5]
                else:
                    out.append(math.nextafter(bound, outward) if closed else bound)
                    out.append(float(bound) * 10 + (1 if outward > 0 else -1))
        elif isinstance(c, Options):
            for o in c.options:
                if isinstance(o, str):
                    out += [o.upper(), o + " ", " " + o, o[:-1]]
        elif isinstance(c, _Booleans):
            out += [0, 1, 1.0, "true"]
    return [v for v in out if not satisfied(constraints, v) and not _coerced_valid(constraints, v)]


def _coerced_valid(constraints: list[Any], v: Any) -> bool:
    """The config reads 1e3 as an int where an int is wanted: such a value is not invalid."""
    return (isinstance(v, float) and math.isfinite(v) and v.is_integer()
            and satisfied(constraints, int(v)))


def tiny_problem() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = np.arange(24) % 3
    X = rng.normal(size=(24, 8))
    X[:, :3] += 2.0 * (y[:, None] == np.arange(3))
    X[:, 7] = np.round(X[:, 7])  # ties
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def rejected(text: str, key: str) -> str | None:
    """None if the config is refused as it should be; else what went wrong."""
    try:
        parse(text)
    except ConfigError as exc:
        msg = str(exc)
        if "\n" in msg.strip() or not msg.startswith(f"{SOURCE}:{LINE}: selectors[1]."):
            return f"badly placed message: {msg}"
        if key not in msg:
            return f"message does not name {key!r}: {msg}"
        return None
    except Exception as exc:  # a traceback for the user
        return f"{type(exc).__name__} instead of ConfigError: {exc}"
    return "accepted"


def sweep_one(name: str, key: str, values: list[Any]) -> tuple[int, list[str]]:
    """Try each value as a fixed parameter and inside a grid, and in fit; return (tried, failures)."""
    cls = REGISTRY[name].cls
    X, y = tiny_problem()
    failures, tried = [], 0
    for v in values:
        tried += 1
        if key in RESERVED_PARAMS:
            problem = rejected(config(name, {key: v}), key)
            failures += [f"{name}.{key}={v!r}: {problem}"] if problem else []
        else:
            for text, where in ((config(name, {key: v}), f"params.{key}:"),
                                (config(name, grid={key: [v]}), f"grid.{key}[0]:")):
                problem = rejected(text, key)
                if problem is None and where not in _message(text):
                    problem = f"message does not name the path {where!r}: {_message(text)}"
                failures += [f"{name}.{key}={v!r} ({where.split('.')[0]}): {problem}"] if problem else []
        try:
            cls(**{key: v}).fit(X, y)
            failures.append(f"{name}.{key}={v!r}: fit accepted it")
        except InvalidParameterError:
            pass
        except Exception as exc:
            failures.append(f"{name}.{key}={v!r}: fit raised {type(exc).__name__}: {exc}")
    return tried, failures


def _message(text: str) -> str:
    try:
        parse(text)
    except ConfigError as exc:
        return str(exc)
    return ""


# ----------------------------------------------------------------------------- the sweeps
def test_every_parameter_has_constraints_and_an_entry_in_the_table():
    for name, info in REGISTRY.items():
        assert set(info.params) == set(info.cls._parameter_constraints), name
        assert name in EXPECT, f"add {name!r} to EXPECT: what should each parameter accept?"
        assert set(EXPECT[name]) == set(info.params), (name, set(info.params) ^ set(EXPECT[name]))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_invalid_values_from_the_constraints_are_refused(name):
    info = REGISTRY[name]
    failures, tried = [], 0
    for key in info.params:
        values = invalid_from_constraints(info.cls._parameter_constraints[key])
        assert len(values) >= 8, (key, values)
        n, f = sweep_one(name, key, values)
        tried, failures = tried + n, failures + f
    assert not failures, "\n".join(failures)
    assert tried >= 8 * len(info.params)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_invalid_values_from_the_hand_table_are_refused(name):
    failures = []
    for key, expect in EXPECT.get(name, {}).items():
        failures += sweep_one(name, key, expect.all_invalid())[1]
    assert not failures, "\n".join(failures)


def test_sweep_size():
    """The number of invalid values tried (both sources); reported by ``pytest -s``."""
    from_constraints = sum(len(invalid_from_constraints(info.cls._parameter_constraints[k]))
                           for info in REGISTRY.values() for k in info.params)
    from_table = sum(len(p.all_invalid()) for e in EXPECT.values() for p in e.values())
    combos = sum(map(len, COMBOS_INVALID.values()))
    print(f"\ninvalid values swept: {from_constraints} from the constraints, {from_table} from the "
          f"table, {combos} combinations")
    assert from_constraints > 500 and from_table > 500


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_defaults_and_valid_values_are_accepted_and_fit(name):
    info = REGISTRY[name]
    X, y = tiny_problem()
    cases: list[dict[str, Any]] = [{}]
    for key, expect in EXPECT.get(name, {}).items():
        cases += [{**expect.context, key: v} for v in [info.params[key], *expect.valid]]
    cases += COMBOS_VALID.get(name, [])
    failures = []
    for params in cases:
        settable = {k: v for k, v in params.items() if k not in RESERVED_PARAMS}
        try:
            exp = parse(config(name, settable))
            assert exp.selectors[1].params_dict == settable
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # degenerate or slow fits warn; they must not fail
                fitted = make_selector(name, {**exp.selectors[1].params_dict,
                                              **{k: v for k, v in params.items() if k in RESERVED_PARAMS}}).fit(X, y)
            assert sorted(fitted.ranking_) == list(range(X.shape[1]))
        except Exception as exc:
            failures.append(f"{name} {params}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures)


def test_the_largest_values_are_accepted():
    for name, expect in EXPECT.items():
        for key, p in expect.items():
            if key not in RESERVED_PARAMS:
                for v in p.edge:
                    assert parse(config(name, {**p.context, key: v})).selectors[1].params_dict[key] == v


@pytest.mark.parametrize(("name", "params", "key"),
                         [(n, p, k) for n, combos in COMBOS_INVALID.items() for p, k in combos])
def test_parameters_that_contradict_each_other_are_refused(name, params, key):
    problem = rejected(config(name, params), key)
    assert problem is None, problem
    assert f"{SOURCE}:{LINE}: selectors[1].params:" in _message(config(name, params))
    X, y = tiny_problem()
    with pytest.raises(InvalidParameterError, match=key):
        make_selector(name, params).fit(X, y)


def test_a_grid_point_that_contradicts_the_fixed_parameters_is_refused():
    text = CONFIG.format(name="chi2", kind="params", body="{discretize: quantile}") + \
        "    grid: {std_factor: [1.0, 2.0]}\n"
    msg = _message(text)
    assert msg.startswith(f"{SOURCE}:9: selectors[1].grid: at the grid point {{std_factor: 2.0}}: "
                          "std_factor=2.0 has no effect unless discretize='mean_std'"), msg
    # a grid over both: the mean_std points with n_bins != 3 are refused
    text = CONFIG.format(name="infogain", kind="grid", body="{discretize: [quantile, mean_std], n_bins: [3, 5]}")
    assert "at the grid point {discretize: mean_std, n_bins: 5}" in _message(text)
    ok = CONFIG.format(name="infogain", kind="params", body="{discretize: quantile}") + "    grid: {n_bins: [3, 5]}\n"
    assert parse(ok).selectors[1].grid == (("n_bins", (3, 5)),)


def test_the_issue_examples_give_one_sentence():
    cases = {
        ("dso", "p", 2): "selectors[1].params.p: must be a float in [0.05, 1], got 2.",
        ("rfs", "gamma", -1): "selectors[1].params.gamma: must be a float in [1e-8, 1e8], got -1.",
        ("rfs", "max_iter", 0): "selectors[1].params.max_iter: must be an int in [1, 1000000], got 0.",
        ("cssvm", "max_iter", -1): "selectors[1].params.max_iter: must be an int in [1, 1000000], got -1.",
        ("rfs", "gamma", "big"): "selectors[1].params.gamma: must be a float in [1e-8, 1e8], got the string 'big'.",
        ("rfs", "max_iter", True): "selectors[1].params.max_iter: must be an int in [1, 1000000], "
                                   "got the boolean true.",
        ("dso", "solver", "Joint"): "selectors[1].params.solver: must be one of 'alternating', 'joint', "
                                    "got the string 'Joint'. Did you mean 'joint'?",
    }
    for (name, key, value), expected in cases.items():
        assert _message(config(name, {key: value})) == f"{SOURCE}:{LINE}: {expected}"


def test_integral_floats_become_ints_and_other_values_are_kept():
    exp = parse(config("rfs", {"max_iter": 1e3, "gamma": 1, "tol": 0}))
    assert exp.selectors[1].params_dict == {"max_iter": 1000, "gamma": 1, "tol": 0}
    assert isinstance(exp.selectors[1].params_dict["max_iter"], int)
    assert "max_iter: must be" in _message(config("rfs", {"max_iter": 2.5}))
    assert "lists a value twice" in _message(config("rfs", grid={"max_iter": [10, 1e1]}))


def test_reserved_parameters_cannot_be_set_whatever_the_value():
    for name, key in (("relieff", "random_state"), ("fisher", "n_features_to_select")):
        assert "cannot be set" in _message(config(name, {key: 1}))


def test_fit_checks_the_parameters_before_the_data():
    with pytest.raises(InvalidParameterError, match="'p' parameter of DSOFS"):
        make_selector("dso", {"p": 2}).fit(None, None)
    with pytest.raises(InvalidParameterError, match="max_iter"):
        make_selector("rfs", {"max_iter": True}).fit(*tiny_problem())


def test_the_allowed_values_are_listed():
    assert REGISTRY["dso"].allowed["p"] == "float in [0.05, 1]"
    assert REGISTRY["dso"].allowed["zero_tol"] == "float in (0, 0.001] | null"
    assert REGISTRY["relieff"].allowed["miss_weighting"] == "'prior' | 'uniform'"
    assert REGISTRY["ttest"].allowed["equal_var"] == "true | false"


# ----------------------------------------------------------------------------- the CLI
def test_run_with_an_invalid_parameter_exits_2_with_one_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("FSBENCH_CACHE", str(tmp_path / "cache"))
    text = (Path(__file__).parents[1] / "configs" / "quickstart.yaml").read_text()
    assert "selectors: [fisher, fstat, relieff, mrmr, random]" in text
    text = text.replace("selectors: [fisher, fstat, relieff, mrmr, random]",
                        "selectors:\n  - fisher\n  - name: dso\n    params: {p: 2}")
    path = tmp_path / "dso-fs.yaml"
    path.write_text(text)
    line = text.splitlines().index("    params: {p: 2}") + 1
    out = tmp_path / "results"
    result = CliRunner().invoke(main, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (f"Error: dso-fs.yaml:{line}: selectors[1].params.p: must be a float in "
                                     "[0.05, 1], got 2.")
    assert not out.exists() and not any(tmp_path.glob("**/config.yaml"))
