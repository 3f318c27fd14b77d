"""Experiment configuration: YAML -> a validated, frozen :class:`Experiment`.

Every problem is reported before anything runs, as one sentence that starts with the file,
the line and the key's path (``glioma.yaml:12: protocol.train_size: ...``).

Schema (see ``configs/quickstart.yaml`` for a commented example)::

    name: str                       # experiment name; results go to results/<name> by default
    description: str                # optional
    seed: int                       # every random choice derives from it and the task identity
    datasets: [name, ...]           # registry names or aliases ('fsbench datasets list')
    preprocessing:
      standardize: train | global | none     # z-score fit on the training part / all data / off
    protocol:
      kind: holdout | kfold
      train_size: 0.6               # holdout: fraction in (0, 1) or a sample count
      n_trials: 10                  # holdout: number of random stratified splits
      n_splits: 5                   # kfold: folds (stratified)
      n_repeats: 1                  # kfold: repetitions with fresh shuffles
      select_on: train              # fit selectors on the training part, or on 'all' data
                                    # before splitting (a leakage study; never the default)
    inner_cv:
      n_splits: 3                   # or the DSO-FS rule: {below: 200, small: 3, large: 8}
    selectors:                      # a name, or a mapping:
      - name: rfs
        label: rfs                  # optional, unique; the name in tables
        params: {max_iter: 50}      # fixed hyper-parameters
        grid: {gamma: [0.1, 1, 10]} # tuned by inner CV on the training part
    classifier:
      name: linear_svm | crammer_singer
      backend: libsvm | liblinear   # linear_svm only: SVC(kernel='linear') or LinearSVC
      C: [0.01, 0.1, 1, 10]         # a list is tuned by inner CV; a number is fixed
    n_features: [10, 20, 30]        # or {start: 10, stop: 100, step: 10} (stop included)
    n_jobs: 1
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from fsbench.errors import ConfigError, FsbenchError
from fsbench.yamlio import Located, load_yaml

STANDARDIZE = ("train", "global", "none")
PROTOCOLS = ("holdout", "kfold")
SELECT_ON = ("train", "all")
CLASSIFIERS = ("linear_svm", "crammer_singer")
BACKENDS = ("libsvm", "liblinear")
RESERVED_PARAMS = {
    "n_features_to_select": "fsbench sets it from n_features",
    "random_state": "fsbench derives it from the config seed and the task",
}


# ----------------------------------------------------------------------------- the schema
@dataclass(frozen=True)
class SelectorConfig:
    """One selector of the experiment; ``params`` and ``grid`` are sorted (key, value) pairs."""

    name: str
    label: str
    params: tuple[tuple[str, Any], ...] = ()
    grid: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    @property
    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def grid_points(self) -> list[dict[str, Any]]:
        """Every combination of the grid, in a fixed order (the first key varies slowest)."""
        points: list[dict[str, Any]] = [{}]
        for key, values in self.grid:
            points = [{**p, key: v} for p in points for v in values]
        return points


@dataclass(frozen=True)
class ProtocolConfig:
    kind: str = "holdout"
    train_size: float | int = 0.6
    n_trials: int = 10
    n_splits: int = 5
    n_repeats: int = 1
    select_on: str = "train"

    @property
    def n_outer(self) -> int:
        """Number of (repeat, fold) splits."""
        return self.n_trials if self.kind == "holdout" else self.n_splits * self.n_repeats


@dataclass(frozen=True)
class InnerCVConfig:
    """Inner cross-validation folds: a fixed number, or ``small`` below ``below`` samples else ``large``."""

    n_splits: int | None = 3
    below: int | None = None
    small: int | None = None
    large: int | None = None

    def folds_for(self, n_train: int) -> int:
        if self.n_splits is not None:
            return self.n_splits
        return self.small if n_train < self.below else self.large


@dataclass(frozen=True)
class ClassifierConfig:
    name: str = "linear_svm"
    backend: str = "libsvm"
    C: tuple[float, ...] = (1.0,)

    @property
    def tuned(self) -> bool:
        return len(self.C) > 1


@dataclass(frozen=True)
class Experiment:
    name: str
    seed: int
    datasets: tuple[str, ...]
    selectors: tuple[SelectorConfig, ...]
    n_features: tuple[int, ...]
    standardize: str = "train"
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)
    inner_cv: InnerCVConfig = field(default_factory=InnerCVConfig)
    classifier: ClassifierConfig = field(default_factory=ClassifierConfig)
    n_jobs: int = 1
    description: str = ""
    source: str = "<config>"

    def to_dict(self) -> dict[str, Any]:
        """The resolved configuration as plain data (what ``config.yaml`` in a results dir holds)."""
        d = asdict(self)
        d.pop("source")
        d["selectors"] = [
            {"name": s.name, "label": s.label, "params": dict(s.params),
             "grid": {k: list(v) for k, v in s.grid}}
            for s in self.selectors
        ]
        d["datasets"] = list(self.datasets)
        d["n_features"] = list(self.n_features)
        d["classifier"]["C"] = list(self.classifier.C)
        return d

    def fingerprint(self) -> str:
        """Hash of everything that determines the results (not n_jobs, name or description)."""
        d = self.to_dict()
        for key in ("n_jobs", "name", "description"):
            d.pop(key)
        if d["protocol"]["select_on"] == "train":  # the default; keeps older fingerprints valid
            d["protocol"].pop("select_on")
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=repr).encode()).hexdigest()[:16]

    def with_overrides(self, **changes: Any) -> Experiment:
        return replace(self, **changes)


# ----------------------------------------------------------------------------- validation
class _Reader:
    """Walks the located YAML tree and raises ConfigError naming file, line and key path."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, node: Located | None, path: str, message: str) -> None:
        line = f":{node.line}" if node is not None else ""
        where = f"{path}: " if path else ""
        raise ConfigError(f"{self.source}{line}: {where}{message}")

    def mapping(self, node: Located, path: str, allowed: dict[str, str]) -> dict[str, Located]:
        if not isinstance(node.value, dict):
            self.fail(node, path, f"expected a mapping with keys {', '.join(allowed)}, got {_describe(node.value)}.")
        for key, value in node.value.items():
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else f" Allowed keys: {', '.join(allowed)}."
                self.fail(value, _join(path, key), f"unknown key.{hint}")
        return node.value

    def integer(self, node: Located, path: str, minimum: int | None = None) -> int:
        value = node.value
        if isinstance(value, float) and value.is_integer() and math.isfinite(value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(node, path, f"expected an integer, got {_describe(node.value)}.")
        if minimum is not None and value < minimum:
            self.fail(node, path, f"must be at least {minimum}, got {value}.")
        return value

    def number(self, node: Located, path: str, positive: bool = False) -> float:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(node, path, f"expected a number, got {_describe(value)}.")
        if not math.isfinite(value):
            self.fail(node, path, f"expected a finite number, got {value}.")
        if positive and value <= 0:
            self.fail(node, path, f"must be positive, got {value}.")
        return float(value)

    def string(self, node: Located, path: str, choices: tuple[str, ...] | None = None) -> str:
        if not isinstance(node.value, str):
            self.fail(node, path, f"expected a string, got {_describe(node.value)}.")
        if choices is not None and node.value not in choices:
            close = difflib.get_close_matches(node.value, choices, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            self.fail(node, path, f"{node.value!r} is not one of {', '.join(choices)}.{hint}")
        return node.value

    def sequence(self, node: Located, path: str, nonempty: bool = True) -> list[Located]:
        if not isinstance(node.value, list):
            self.fail(node, path, f"expected a list, got {_describe(node.value)}.")
        if nonempty and not node.value:
            self.fail(node, path, "the list is empty.")
        return node.value


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        if ":" in value and all(part.strip().isdigit() for part in value.split(":")):
            return f"the string {value!r} (YAML 1.1 would read it as a base-60 number; write a plain number)"
        if value.lower() in ("yes", "no", "on", "off", "y", "n"):
            return f"the string {value!r} (write true or false for a boolean)"
        return f"the string {value!r}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


TOP_KEYS = {
    "name": "experiment name", "description": "free text", "seed": "integer",
    "datasets": "list of dataset names", "preprocessing": "mapping", "protocol": "mapping",
    "inner_cv": "mapping", "selectors": "list", "classifier": "mapping",
    "n_features": "list of k", "n_jobs": "integer",
}


def parse_experiment(
    text: str,
    source: str = "<config>",
    *,
    dataset_resolver: Callable[[str], Any] | None = None,
) -> Experiment:
    """Validate a YAML experiment description and return it frozen.

    ``dataset_resolver(name)`` returns the registry spec of a dataset (with ``name`` and
    ``n_features``) or raises ConfigError; it defaults to :func:`fsbench.datasets.resolve`.
    """
    if dataset_resolver is None:
        from fsbench.datasets import resolve as dataset_resolver
    r = _Reader(source)
    root = load_yaml(text, source)
    top = r.mapping(root, "", TOP_KEYS)
    for required in ("name", "datasets", "selectors", "n_features"):
        if required not in top:
            r.fail(root, "", f"the required key {required!r} is missing.")

    name = r.string(top["name"], "name")
    if not name or any(ch in name for ch in "/\\") or name.startswith("."):
        r.fail(top["name"], "name", "must be a non-empty name without slashes (it names the results folder).")
    description = r.string(top["description"], "description") if "description" in top else ""
    seed = r.integer(top["seed"], "seed", minimum=0) if "seed" in top else 0
    n_jobs = r.integer(top["n_jobs"], "n_jobs") if "n_jobs" in top else 1
    if n_jobs == 0:
        r.fail(top["n_jobs"], "n_jobs", "must be a positive number of workers or -1 for all cores.")

    # datasets
    datasets: list[str] = []
    specs = []
    for i, item in enumerate(r.sequence(top["datasets"], "datasets")):
        path = _join("datasets", i)
        label = r.string(item, path)
        try:
            spec = dataset_resolver(label)
        except ConfigError as exc:
            r.fail(item, path, str(exc))
        if spec.name in datasets:
            r.fail(item, path, f"dataset {spec.name!r} is listed twice.")
        datasets.append(spec.name)
        specs.append(spec)

    standardize = "train"
    if "preprocessing" in top:
        pre = r.mapping(top["preprocessing"], "preprocessing", {"standardize": ""})
        if "standardize" in pre:
            standardize = r.string(pre["standardize"], "preprocessing.standardize", STANDARDIZE)

    protocol = _parse_protocol(r, top.get("protocol"))
    inner_cv = _parse_inner_cv(r, top.get("inner_cv"))
    classifier = _parse_classifier(r, top.get("classifier"))
    n_features = _parse_n_features(r, top["n_features"])
    for spec in specs:
        if spec.n_features and max(n_features) > spec.n_features:
            r.fail(top["n_features"], "n_features",
                   f"k = {max(n_features)} exceeds the {spec.n_features} features of dataset "
                   f"{spec.name!r}; lower n_features or drop the dataset.")

    selectors: list[SelectorConfig] = []
    for i, item in enumerate(r.sequence(top["selectors"], "selectors")):
        sel = _parse_selector(r, item, _join("selectors", i))
        if any(s.label == sel.label for s in selectors):
            r.fail(item, _join("selectors", i),
                   f"label {sel.label!r} is used twice; give each entry a distinct 'label'.")
        selectors.append(sel)

    return Experiment(
        name=name, seed=seed, datasets=tuple(datasets), selectors=tuple(selectors),
        n_features=n_features, standardize=standardize, protocol=protocol, inner_cv=inner_cv,
        classifier=classifier, n_jobs=n_jobs, description=description, source=source,
    )


def _parse_protocol(r: _Reader, node: Located | None) -> ProtocolConfig:
    if node is None:
        return ProtocolConfig()
    keys = {"kind": "", "train_size": "", "n_trials": "", "n_splits": "", "n_repeats": "", "select_on": ""}
    m = r.mapping(node, "protocol", keys)
    kind = r.string(m["kind"], "protocol.kind", PROTOCOLS) if "kind" in m else "holdout"
    wrong = {"holdout": ("n_splits", "n_repeats"), "kfold": ("train_size", "n_trials")}[kind]
    for key in wrong:
        if key in m:
            r.fail(m[key], f"protocol.{key}", f"does not apply to protocol.kind {kind!r}; remove it.")
    out = ProtocolConfig(kind=kind)
    if "train_size" in m:
        value = m["train_size"].value
        if isinstance(value, int) and not isinstance(value, bool):
            size: float | int = r.integer(m["train_size"], "protocol.train_size", minimum=2)
        else:
            size = r.number(m["train_size"], "protocol.train_size")
            if not 0 < size < 1:
                r.fail(m["train_size"], "protocol.train_size",
                       f"a fraction must lie strictly between 0 and 1, got {size}.")
        out = replace(out, train_size=size)
    if "n_trials" in m:
        out = replace(out, n_trials=r.integer(m["n_trials"], "protocol.n_trials", minimum=1))
    if "n_splits" in m:
        out = replace(out, n_splits=r.integer(m["n_splits"], "protocol.n_splits", minimum=2))
    if "n_repeats" in m:
        out = replace(out, n_repeats=r.integer(m["n_repeats"], "protocol.n_repeats", minimum=1))
    if "select_on" in m:
        out = replace(out, select_on=r.string(m["select_on"], "protocol.select_on", SELECT_ON))
    return out


def _parse_inner_cv(r: _Reader, node: Located | None) -> InnerCVConfig:
    if node is None:
        return InnerCVConfig()
    m = r.mapping(node, "inner_cv", {"n_splits": ""})
    if "n_splits" not in m:
        return InnerCVConfig()
    value = m["n_splits"]
    if isinstance(value.value, dict):
        rule = r.mapping(value, "inner_cv.n_splits", {"below": "", "small": "", "large": ""})
        for key in ("below", "small", "large"):
            if key not in rule:
                r.fail(value, "inner_cv.n_splits",
                       f"the rule needs 'below', 'small' and 'large' (missing {key!r}), "
                       "e.g. {below: 200, small: 3, large: 8}.")
        return InnerCVConfig(
            n_splits=None,
            below=r.integer(rule["below"], "inner_cv.n_splits.below", minimum=1),
            small=r.integer(rule["small"], "inner_cv.n_splits.small", minimum=2),
            large=r.integer(rule["large"], "inner_cv.n_splits.large", minimum=2),
        )
    return InnerCVConfig(n_splits=r.integer(value, "inner_cv.n_splits", minimum=2))


def _parse_classifier(r: _Reader, node: Located | None) -> ClassifierConfig:
    if node is None:
        return ClassifierConfig()
    m = r.mapping(node, "classifier", {"name": "", "backend": "", "C": ""})
    name = r.string(m["name"], "classifier.name", CLASSIFIERS) if "name" in m else "linear_svm"
    backend = "libsvm" if name == "linear_svm" else "liblinear"
    if "backend" in m:
        if name != "linear_svm":
            r.fail(m["backend"], "classifier.backend", "applies to linear_svm only; remove it.")
        backend = r.string(m["backend"], "classifier.backend", BACKENDS)
    C: tuple[float, ...] = (1.0,)
    if "C" in m:
        if isinstance(m["C"].value, list):
            values = [r.number(v, _join("classifier.C", i), positive=True)
                      for i, v in enumerate(r.sequence(m["C"], "classifier.C"))]
            if len(set(values)) != len(values):
                r.fail(m["C"], "classifier.C", "lists a value twice.")
            C = tuple(values)
        else:
            C = (r.number(m["C"], "classifier.C", positive=True),)
    return ClassifierConfig(name=name, backend=backend, C=C)


def _parse_n_features(r: _Reader, node: Located) -> tuple[int, ...]:
    if isinstance(node.value, dict):
        m = r.mapping(node, "n_features", {"start": "", "stop": "", "step": ""})
        for key in ("start", "stop"):
            if key not in m:
                r.fail(node, "n_features", f"a range needs 'start' and 'stop' (missing {key!r}).")
        start = r.integer(m["start"], "n_features.start", minimum=1)
        stop = r.integer(m["stop"], "n_features.stop", minimum=1)
        step = r.integer(m["step"], "n_features.step", minimum=1) if "step" in m else 1
        if stop < start:
            r.fail(m["stop"], "n_features.stop", f"must be at least start ({start}).")
        return tuple(range(start, stop + 1, step))
    if isinstance(node.value, int) and not isinstance(node.value, bool):
        return (r.integer(node, "n_features", minimum=1),)
    ks = [r.integer(v, _join("n_features", i), minimum=1)
          for i, v in enumerate(r.sequence(node, "n_features"))]
    if len(set(ks)) != len(ks):
        r.fail(node, "n_features", "lists a value twice.")
    return tuple(sorted(ks))


def _parse_selector(r: _Reader, node: Located, path: str) -> SelectorConfig:
    from fsbench.selectors import get_selector

    if isinstance(node.value, str):
        node = Located({"name": node}, node.line)
    m = r.mapping(node, path, {"name": "", "label": "", "params": "", "grid": ""})
    if "name" not in m:
        r.fail(node, path, "a selector needs a 'name' ('fsbench selectors' lists them).")
    name = r.string(m["name"], _join(path, "name"))
    try:
        info = get_selector(name)
    except ConfigError as exc:
        r.fail(m["name"], _join(path, "name"), str(exc))
    label = r.string(m["label"], _join(path, "label")) if "label" in m else name
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
            r.fail(m["params"], _join(path, "params"), "expected a mapping of parameter: value.")
        for key, value_node in m["params"].value.items():
            where = _join(_join(path, "params"), key)
            check_key(key, value_node, where)
            params[key] = _check_value(r, info.cls, key, value_node, where, in_grid=False)
    grid: dict[str, tuple[Any, ...]] = {}
    if "grid" in m:
        if not isinstance(m["grid"].value, dict):
            r.fail(m["grid"], _join(path, "grid"), "expected a mapping of parameter: [values].")
        for key, value_node in m["grid"].value.items():
            where = _join(_join(path, "grid"), key)
            check_key(key, value_node, where)
            if key in params:
                r.fail(value_node, where, "is both fixed in 'params' and searched in 'grid'; keep one.")
            values = tuple(_check_value(r, info.cls, key, v, _join(where, i), in_grid=True)
                           for i, v in enumerate(r.sequence(value_node, where)))
            if len(set(map(repr, values))) != len(values):
                r.fail(value_node, where, "lists a value twice.")
            grid[key] = values
    _check_params(r, info.cls, params, grid, m, node, path)
    return SelectorConfig(name=name, label=label, params=tuple(sorted(params.items())),
                          grid=tuple(sorted(grid.items())))


def _check_value(r: _Reader, cls: type, key: str, node: Located, path: str, *, in_grid: bool) -> Any:
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
                           f"got {_describe(value)}{hint}.")
    allowed = invalid_parameter(cls, key, value)
    if allowed is None:
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() \
            and invalid_parameter(cls, key, int(value)) is None:
        return int(value)
    given = repr(value) if isinstance(value, int | float) and not isinstance(value, bool) else _describe(value)
    hint = ""
    if isinstance(value, str):
        options = string_options(cls._parameter_constraints[key])
        close = [o for o in options if o.lower() == value.lower()] or difflib.get_close_matches(value, options, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
    r.fail(node, path, f"must be {allowed}, got {given}.{hint}")


def _check_params(r: _Reader, cls: type, params: dict[str, Any], grid: dict[str, tuple[Any, ...]],
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
                r.fail(m.get("params") or node, _join(path, "params"), f"{message}.")
            shown = ", ".join(f"{k}: {v}" for k, v in point.items())
            r.fail(m["grid"], _join(path, "grid"), f"at the grid point {{{shown}}}: {message}.")


def load_experiment(path: str | Path, **kwargs: Any) -> Experiment:
    """Read and validate a YAML experiment file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FsbenchError(f"Config file {str(path)!r} does not exist; check the path.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FsbenchError(f"Cannot read config file {str(path)!r} ({exc}); check the file.") from None
    return parse_experiment(text, source=path.name, **kwargs)
