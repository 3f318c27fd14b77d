"""scikit-learn's estimator checks on every registered selector, and keyword-only parameters.

Each selector comes from the registry, so a newly registered one is checked without editing
this file: with its own defaults, except for the few iterative selectors listed in
:data:`FAST`, whose iteration caps are lowered so that the whole file runs in seconds.

Every selector is built with ``n_features_to_select=1``: the checks fit and transform data of
one to five features, and a selector refuses by design to keep more features than it was
fitted on (``transform`` raises, as fsbench refuses a k beyond a dataset's features) instead
of silently returning fewer.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

from fsbench.selectors import registry

pytestmark = [
    pytest.mark.usefixtures("one_blas_thread"),
    # the lowered caps stop some fits early; the checks test the interface, not convergence
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    # DSO-FS says when the checks' random labels leave it infeasible or collapsed: not a defect
    pytest.mark.filterwarnings("ignore::fsbench.selectors.dso.DSOWarning"),
]

#: parameters that keep the slow selectors fast on the checks' tiny problems (iteration caps)
FAST: dict[str, dict[str, Any]] = {
    "rfs": {"max_iter": 200},
    "dso": {"max_iter": 30},
    "l21svm": {"max_iter": 10},
    "sl21": {"max_iter": 10},
    "sl2p": {"max_iter": 10},
    "l1svm": {"path_steps": 2},
}

def _merge_family_tables() -> None:
    """Add the ``FAST`` parameters of ``param_table_*.py`` (one family of selectors each)."""
    import importlib
    from pathlib import Path

    for path in sorted(Path(__file__).parent.glob("param_table_*.py")):
        table = getattr(importlib.import_module(path.stem), "FAST", {})
        assert not set(table) & set(FAST), (path.name, set(table) & set(FAST))
        FAST.update(table)


_merge_family_tables()


#: checks that cannot apply to a selector by design: registry name -> {check name: reason}
EXPECTED_FAILED: dict[str, dict[str, str]] = {}


def selectors() -> list[BaseEstimator]:
    return [info.cls(**{"n_features_to_select": 1, **FAST.get(name, {})}) for name, info in registry().items()]


def expected_failed(estimator: BaseEstimator) -> dict[str, str]:
    return EXPECTED_FAILED.get(type(estimator).registry_name, {})


def test_the_tables_name_registered_selectors_only():
    names = set(registry())
    assert set(FAST) <= names
    assert set(EXPECTED_FAILED) <= names
    for name, params in FAST.items():
        assert set(params) <= set(registry()[name].params), name


@parametrize_with_checks(selectors(), expected_failed_checks=expected_failed, xfail_strict=True)
def test_sklearn_estimator_checks(estimator: BaseEstimator, check: Any) -> None:
    check(estimator)


@pytest.mark.parametrize("name", sorted(registry()))
def test_parameters_are_keyword_only(name: str) -> None:
    cls = registry()[name].cls
    parameters = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
    assert parameters, name
    positional = [p.name for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert positional == [], f"{name}: {positional} can be passed by position"
    with pytest.raises(TypeError):
        cls(parameters[0].default)


@pytest.mark.parametrize("name", sorted(registry()))
def test_every_keyword_reaches_its_own_attribute(name: str) -> None:
    """A distinct object per parameter comes back from get_params under its own name, so no
    constructor forwards a value to another parameter of its base class (as passing by position
    through several levels would)."""
    cls = registry()[name].cls
    values = {p: object() for p in registry()[name].params}
    got = cls(**values).get_params(deep=False)
    assert got.keys() == values.keys()
    for p, value in values.items():
        assert got[p] is value, f"{name}: {p} is stored as {got[p]!r}"
