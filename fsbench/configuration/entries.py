"""The entries of a config's lists, validated: selectors (and their parameters) and the classifier.

Each parser takes the located YAML node of one entry and returns the frozen schema object of
:mod:`fsbench.configuration.experiment`, or raises ConfigError naming the file, line and key path.
"""

from __future__ import annotations

import difflib
import itertools
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from fsbench.configuration.experiment import (
    BACKENDS,
    CLASSIFIERS,
    LIBSVM_MAX_TRAIN,
    RESERVED_PARAMS,
    ClassifierConfig,
    DataFileConfig,
    SelectorConfig,
)
from fsbench.configuration.yamlio import Located, Reader, describe_value, join_key
from fsbench.errors import ConfigError


def parse_classifier(r: Reader, node: Located | None) -> ClassifierConfig:
    """The single ``classifier:``; absent, or without ``backend``, ``linear_svm``'s backend is
    ``auto`` (fsbench.configuration.experiment.resolve_backend)."""
    if node is None:
        return ClassifierConfig(backend="auto")
    m = r.mapping(node, "classifier", {"name": "", "backend": "", "C": ""})
    name = r.string(m["name"], "classifier.name", CLASSIFIERS) if "name" in m else "linear_svm"
    backend = "auto" if name == "linear_svm" else "liblinear"
    if "backend" in m:
        if name != "linear_svm":
            r.fail(m["backend"], "classifier.backend", "applies to linear_svm only; remove it.")
        backend = _backend(r, m["backend"], "classifier.backend")
    C: tuple[float, ...] = (1.0,)
    if "C" in m:
        if isinstance(m["C"].value, list):
            values = [r.number(v, join_key("classifier.C", i), positive=True)
                      for i, v in enumerate(r.sequence(m["C"], "classifier.C"))]
            if len(set(values)) != len(values):
                r.fail(m["C"], "classifier.C", "lists a value twice.")
            C = tuple(values)
        else:
            C = (r.number(m["C"], "classifier.C", positive=True),)
    return ClassifierConfig(name=name, backend=backend, C=C)


def _backend(r: Reader, node: Located, path: str) -> str:
    """A ``backend`` of linear_svm, refused in one sentence naming the allowed values."""
    value = node.value
    if not isinstance(value, str) or value not in BACKENDS:
        shown = repr(value) if isinstance(value, str) else describe_value(value)
        r.fail(node, path, f"{shown} is not a backend of linear_svm; write auto (LIBSVM up to "
                           f"{LIBSVM_MAX_TRAIN} training samples, LIBLINEAR above), libsvm or liblinear.")
    return value


DATA_FILE_KEYS = {"name": "", "path": "", "label": "", "x": "", "y": ""}


def parse_data_file(r: Reader, node: Located, path: str, base_dir: Path) -> tuple[DataFileConfig, Any]:
    """A dataset entry naming a user's file (``name``, ``path`` relative to the config's folder,
    ``label`` for tabular files, ``x``/``y`` for .mat/.npz), read and checked now
    (fsbench.datasets.user_files.files) so that a bad file stops the config here; returns the entry and
    what was read (shape, classes)."""
    from fsbench.datasets import resolve
    from fsbench.datasets.user_files.files import read_data_file
    from fsbench.errors import DataError

    m = r.mapping(node, path, DATA_FILE_KEYS)
    for key in ("name", "path"):
        if key not in m:
            r.fail(node, path, f"a dataset from a file needs '{key}' (for example {{name: tox, path: data/tox.csv}}).")
    name = r.string(m["name"], join_key(path, "name"))
    if not name or any(ch in name for ch in "/\\"):
        r.fail(m["name"], join_key(path, "name"), "must be a non-empty name without slashes.")
    try:
        resolve(name)
    except ConfigError:
        pass
    else:
        r.fail(m["name"], join_key(path, "name"),
               f"{name!r} is a registered dataset; give your file another name.")
    file = (base_dir / r.string(m["path"], join_key(path, "path"))).resolve()
    label: str | int | None = None
    if "label" in m:
        value = m["label"].value
        label = r.integer(m["label"], join_key(path, "label")) if isinstance(value, int) \
            else r.string(m["label"], join_key(path, "label"))
    x = r.string(m["x"], join_key(path, "x")) if "x" in m else None
    y = r.string(m["y"], join_key(path, "y")) if "y" in m else None
    try:
        data = read_data_file(file, label=label, x=x, y=y, name=name)
    except DataError as exc:
        r.fail(m["path"], join_key(path, "path"), str(exc).rstrip(".") + ".")
    return DataFileConfig(name=name, path=str(file), sha256=data.sha256, label=label, x=x, y=y), data


def _named_entry(r: Reader, node: Located, path: str, keys: dict[str, str], missing: str
                 ) -> tuple[dict[str, Located], str]:
    """A list entry given as a bare name or as a mapping with ``name``: its keys and its name."""
    if isinstance(node.value, str):
        node = Located({"name": node}, node.line)
    m = r.mapping(node, path, keys)
    if "name" not in m:
        r.fail(node, path, missing)
    return m, r.string(m["name"], join_key(path, "name"))


CLASSIFIER_KEYS = {"name": "", "label": "", "class": "", "params": "", "grid": "", "C": "", "backend": ""}


def parse_classifiers(r: Reader, node: Located, path: str = "classifiers") -> tuple[Any, ...]:
    """A ``classifiers:`` list: each entry a built-in name (``linear_svm``, ``crammer_singer``,
    ``knn``, ``logistic``, ``random_forest``) or a mapping with ``name`` (a built-in, or the
    label of a ``class:`` given by import path), ``params`` and ``grid``; the built-in SVMs also
    take ``C`` (a list is tuned, a number fixed) and ``linear_svm`` its ``backend``, as under
    ``classifier:`` (``auto`` when not given, recorded in its params; its parameters are checked
    against both estimators it may run). Each is checked against its estimator
    (fsbench.evaluation.classifiers)."""
    from fsbench.evaluation.classifiers import ClassifierSpecError, check_classifier_spec, classifier_spec

    specs = []
    for i, item in enumerate(r.sequence(node, path)):
        where = join_key(path, i)
        m, name = _named_entry(r, item, where, CLASSIFIER_KEYS,
                               "a classifier needs a 'name' (a built-in, or a label with 'class').")
        kind = r.string(m["class"], join_key(where, "class")) if "class" in m else name
        label = r.string(m["label"], join_key(where, "label")) if "label" in m else name
        params = _plain_mapping(r, m.get("params"), join_key(where, "params"))
        grid: dict[str, tuple[Any, ...]] = {}
        if "grid" in m:
            if not isinstance(m["grid"].value, dict):
                r.fail(m["grid"], join_key(where, "grid"), "expected a mapping of parameter: [values].")
            for key, values in m["grid"].value.items():
                at = join_key(join_key(where, "grid"), key)
                grid[key] = tuple(_plain_value(r, v, join_key(at, j)) for j, v in enumerate(r.sequence(values, at)))
        for key in ("C", "backend"):
            if key in m:
                if key in params or key in grid:
                    r.fail(m[key], join_key(where, key), "is also under params or grid; keep one.")
                value = m[key].value
                if key == "C" and isinstance(value, list):
                    grid["C"] = tuple(r.number(v, join_key(join_key(where, "C"), j), positive=True)
                                      for j, v in enumerate(r.sequence(m["C"], join_key(where, "C"))))
                else:
                    params[key] = _plain_value(r, m[key], join_key(where, key))
        if kind == "linear_svm":
            if "backend" in m:
                params["backend"] = _backend(r, m["backend"], join_key(where, "backend"))
            elif "backend" in params:
                params["backend"] = _backend(r, m["params"].value["backend"], join_key(where, "params.backend"))
            else:
                params["backend"] = "auto"  # a config's default; recorded, so it never passes for libsvm
        spec = classifier_spec(kind, label=label, params=params, grid=grid)
        auto = kind == "linear_svm" and params["backend"] == "auto"
        checked = []
        # auto runs either estimator: its parameters must suit both (checked with each)
        for backend in ("libsvm", "liblinear") if auto else (None,):
            try:
                checked.append(check_classifier_spec(_with_backend(spec, backend) if auto else spec))
            except ClassifierSpecError as exc:
                top = (exc.where or "").split(".")[0].split("[")[0]
                at = m.get(top) or m.get("class") or m["name"]
                why = str(exc).rstrip(".")
                if auto:
                    side = (f"above {LIBSVM_MAX_TRAIN} training samples" if backend == "liblinear"
                            else f"up to {LIBSVM_MAX_TRAIN} training samples")
                    why = (f"with backend auto, which runs {backend} {side}, {why}; pin backend: libsvm or "
                           "liblinear to use a parameter of one of them")
                r.fail(at, join_key(where, exc.where) if exc.where else where, why + ".")
        spec = _with_backend(checked[0], "auto") if auto else checked[0]
        if any(s.label == spec.label for s in specs):
            r.fail(m["name"], join_key(where, "name"),
                   f"classifier {spec.label!r} is listed twice; give each entry a distinct 'label'.")
        specs.append(spec)
    return tuple(specs)


def _with_backend(spec: Any, backend: str) -> Any:
    """A linear_svm ClassifierSpec with another backend."""
    return replace(spec, params=tuple(sorted({**dict(spec.params), "backend": backend}.items())))


SELECTOR_KEYS = {"name": "", "label": "", "class": "", "score_func": "", "params": "", "grid": "", "timeout": ""}


def parse_selector(r: Reader, node: Located, path: str, *, standardize: str = "train") -> SelectorConfig:
    """A selector entry: a registered name, a name an installed package registers (entry-point
    group ``fsbench.selectors``), or a user's estimator (``class:``) or score function
    (``score_func:``) by import path, with ``params``, ``grid`` and an optional ``timeout``."""
    from fsbench.selectors import get_selector, registry

    m, name = _named_entry(r, node, path, SELECTOR_KEYS, "a selector needs a 'name' ('fsbench selectors' lists them).")
    timeout = _parse_timeout(r, m, path)
    if "class" in m or "score_func" in m:
        return _parse_plugin(r, m, node, path, name, timeout, standardize)
    if name not in registry():
        from fsbench.plugins import PluginError, find_plugin

        try:
            spec = find_plugin(name)
        except PluginError as exc:
            r.fail(m["name"], join_key(path, "name"), str(exc))
        if spec is not None:
            return _parse_plugin(r, m, node, path, name, timeout, standardize, spec)
    try:
        info = get_selector(name)
    except ConfigError as exc:
        r.fail(m["name"], join_key(path, "name"), str(exc))
    label = r.string(m["label"], join_key(path, "label")) if "label" in m else name
    allowed = {k: "" for k in info.params if k not in RESERVED_PARAMS}

    def check_key(key: str, value_node: Located, where: str) -> None:
        if key in RESERVED_PARAMS:
            r.fail(value_node, where, f"cannot be set: {RESERVED_PARAMS[key]}.")
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else (
                f" Its parameters: {', '.join(allowed)}." if allowed else " It has no parameters.")
            r.fail(value_node, where, f"selector {name!r} has no parameter {key!r}.{hint}")

    params: dict[str, Any] = {}
    if "params" in m:
        if not isinstance(m["params"].value, dict):
            r.fail(m["params"], join_key(path, "params"), "expected a mapping of parameter: value.")
        for key, value_node in m["params"].value.items():
            where = join_key(join_key(path, "params"), key)
            check_key(key, value_node, where)
            params[key] = _check_value(r, info.cls, key, value_node, where, in_grid=False)
    grid: dict[str, tuple[Any, ...]] = {}
    if "grid" in m:
        if not isinstance(m["grid"].value, dict):
            r.fail(m["grid"], join_key(path, "grid"), "expected a mapping of parameter: [values].")
        for key, value_node in m["grid"].value.items():
            where = join_key(join_key(path, "grid"), key)
            check_key(key, value_node, where)
            if key in params:
                r.fail(value_node, where, "is both fixed in 'params' and searched in 'grid'; keep one.")
            values = tuple(_check_value(r, info.cls, key, v, join_key(where, i), in_grid=True)
                           for i, v in enumerate(r.sequence(value_node, where)))
            if len(set(map(repr, values))) != len(values):
                r.fail(value_node, where, "lists a value twice.")
            grid[key] = values
    _check_params(r, info.cls, params, grid, m, node, path)
    return SelectorConfig(name=name, label=label, params=tuple(sorted(params.items())),
                          grid=tuple(sorted(grid.items())), timeout=timeout)


def _parse_timeout(r: Reader, m: dict[str, Located], path: str) -> float | None:
    if "timeout" not in m:
        return None
    return r.number(m["timeout"], join_key(path, "timeout"), positive=True)


def _parse_plugin(r: Reader, m: dict[str, Located], node: Located, path: str, name: str, timeout: float | None,
                  standardize: str, spec: Any = None) -> SelectorConfig:
    """A user's selector: resolved, its params and grid checked, and fitted once on a tiny problem
    (:func:`fsbench.plugins.probe`), so a broken plugin fails here, naming the config line."""
    from fsbench.plugins import PluginError, probe, resolve

    key_nodes = {k: m[k] for k in ("class", "score_func", "params", "grid") if k in m}
    try:
        if spec is None:
            spec = resolve(class_path=r.string(m["class"], join_key(path, "class")) if "class" in m else None,
                           score_func=r.string(m["score_func"], join_key(path, "score_func"))
                           if "score_func" in m else None)
        params = _plain_mapping(r, m.get("params"), join_key(path, "params"))
        grid = {key: tuple(r.sequence(value, join_key(join_key(path, "grid"), key)))
                for key, value in (m["grid"].value.items() if "grid" in m and isinstance(m["grid"].value, dict)
                                   else [])}
        if "grid" in m and not isinstance(m["grid"].value, dict):
            r.fail(m["grid"], join_key(path, "grid"), "expected a mapping of parameter: [values].")
        grid_values = {key: tuple(_plain_value(r, v, join_key(join_key(join_key(path, "grid"), key), i))
                                  for i, v in enumerate(nodes)) for key, nodes in grid.items()}
        probe(spec, params, grid_values, nonnegative=standardize == "none")
    except PluginError as exc:
        where = (exc.key or "").split(".")[0]
        r.fail(key_nodes.get(where, m["name"]), join_key(path, exc.key) if exc.key else path,
               str(exc).rstrip(".") + ".")
    label = r.string(m["label"], join_key(path, "label")) if "label" in m else name
    return SelectorConfig(name=spec.path, label=label, params=tuple(sorted(params.items())),
                          grid=tuple(sorted(grid_values.items())), kind=spec.kind, timeout=timeout)


def _plain_mapping(r: Reader, node: Located | None, path: str) -> dict[str, Any]:
    if node is None:
        return {}
    if not isinstance(node.value, dict):
        r.fail(node, path, "expected a mapping of parameter: value.")
    return {key: _plain_value(r, value, join_key(path, key)) for key, value in node.value.items()}


def _plain_value(r: Reader, node: Located, path: str) -> Any:
    if isinstance(node.value, dict | list):
        r.fail(node, path, f"expected a single value, got {describe_value(node.value)}.")
    return node.value


def _check_value(r: Reader, cls: type, key: str, node: Located, path: str, *, in_grid: bool) -> Any:
    """One parameter value, judged by the selector's scikit-learn constraints.

    An integral float for an integer parameter becomes an int (YAML reads ``1e3`` as 1000.0);
    any other value is kept as written. A rejection names the key, the allowed values and the
    value given.
    """
    from fsbench.selectors.base import describe_constraints, invalid_parameter, string_options

    value = node.value
    if isinstance(value, dict | list):
        hint = "" if in_grid or not isinstance(value, list) else " (list the values to search under 'grid')"
        r.fail(node, path, f"must be {describe_constraints(cls._parameter_constraints[key])}, "
                           f"got {describe_value(value)}{hint}.")
    allowed = invalid_parameter(cls, key, value)
    if allowed is None:
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() \
            and invalid_parameter(cls, key, int(value)) is None:
        return int(value)
    given = repr(value) if isinstance(value, int | float) and not isinstance(value, bool) else describe_value(value)
    hint = ""
    if isinstance(value, str):
        options = string_options(cls._parameter_constraints[key])
        close = [o for o in options if o.lower() == value.lower()] or difflib.get_close_matches(value, options, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
    r.fail(node, path, f"must be {allowed}, got {given}.{hint}")


def _check_params(r: Reader, cls: type, params: dict[str, Any], grid: dict[str, tuple[Any, ...]],
                  m: dict[str, Located], node: Located, path: str) -> None:
    """The rules that tie a selector's parameters together (its ``check_params``), for the fixed
    parameters with every point of the grid."""
    keys = list(grid)
    for combo in itertools.product(*grid.values()):
        point = dict(zip(keys, combo, strict=True))
        try:
            cls(**params, **point).check_params()
        except (ValueError, TypeError) as exc:
            message = str(exc).rstrip(".")
            if not point:
                r.fail(m.get("params") or node, join_key(path, "params"), f"{message}.")
            shown = ", ".join(f"{k}: {v}" for k, v in point.items())
            r.fail(m["grid"], join_key(path, "grid"), f"at the grid point {{{shown}}}: {message}.")
