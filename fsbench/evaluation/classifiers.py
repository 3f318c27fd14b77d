"""The classifiers that score a ranking: built-ins by name, any scikit-learn classifier by class.

A config's classifier becomes a :class:`ClassifierSpec`: a label (the value of the results'
``classifier`` column), the built-in name or the class's import path ``module:Class``, fixed
parameters and a tuning grid. :func:`make_classifier` builds a fresh estimator from a spec and
one grid point; :func:`check_classifier_spec` validates a spec before anything runs.

Built-ins (the estimator, then fsbench's defaults; every other parameter is scikit-learn's
default, and any parameter of the estimator may be set in ``params`` or searched in ``grid``):

=================  ==========================================================================
``linear_svm``     ``backend: libsvm`` (default): ``SVC(kernel="linear")``, LIBSVM, one-vs-one,
                   hinge loss (as DSO-FS used); ``backend: liblinear``: ``LinearSVC(max_iter=20000)``,
                   one-vs-rest, squared hinge (LIBLINEAR's default). ``C = 1.0``.
``crammer_singer`` ``LinearSVC(multi_class="crammer_singer", max_iter=20000)`` (as SL2P used). ``C = 1.0``.
``knn``            ``KNeighborsClassifier()``: 5 neighbours, uniform weights, Euclidean distance.
``logistic``       ``LogisticRegression(max_iter=1000)``: lbfgs, l2 penalty, ``C = 1.0``.
``random_forest``  ``RandomForestClassifier()``: 100 trees, Gini, ``max_features="sqrt"``.
=================  ==========================================================================

No built-in has a grid unless the config gives one; for ``linear_svm`` and ``crammer_singer``
the grid is the config's C list (a list of several C is tuned, a single C is fixed), as before
several classifiers existed. A grid of a single point is not tuned: that point is used as a
fixed parameter.

Seeds: ``random_state`` is set from the task's evaluation seed whenever the estimator has
that parameter (``LinearSVC``, ``LogisticRegression``, ``RandomForestClassifier``, a user's
class), and configs cannot set it. The one exception is the built-in ``linear_svm`` on
LIBSVM, whose ``SVC`` is built without one, as it always was (``SVC`` draws on it only for
probability estimates, which fsbench does not use). Parameters that make a built-in what it
is (``kernel`` of ``linear_svm`` on LIBSVM, ``multi_class`` of ``crammer_singer``) cannot be
changed: name the class instead (``class: sklearn.svm:SVC``).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fsbench.configuration.experiment import ClassifierConfig

#: parameters no config may set, and why
RESERVED = {"random_state": "fsbench derives it from the config seed and the task"}
#: the choice of estimator of ``linear_svm`` (a built-in option, not an estimator parameter)
BACKENDS = ("libsvm", "liblinear")


# ----------------------------------------------------------------------------- errors
class ClassifierSpecError(ValueError):
    """A classifier spec that cannot run; the message is one sentence.

    ``where`` is the key of the classifier's entry the problem is at (``name``, ``class``,
    ``params.n_neighbors``, ``grid.C``...), for the config reader to find its line.
    """

    def __init__(self, message: str, where: str = ""):
        super().__init__(message)
        self.where = where


class NotAClassifierError(ClassifierSpecError, TypeError):
    """A class that is no classifier: no ``fit`` or ``predict``, or not a class at all."""


# ----------------------------------------------------------------------------- built-ins
@dataclass(frozen=True)
class BuiltinClassifier:
    """One built-in: its estimator class (``module:Class``), the parameters that define it
    (``fixed``, never changed), fsbench's defaults and whether ``random_state`` is seeded."""

    name: str
    cls: str
    summary: str
    fixed: tuple[tuple[str, Any], ...] = ()
    defaults: tuple[tuple[str, Any], ...] = ()
    seeded: bool = True


_LINEAR_SVM = {
    "libsvm": BuiltinClassifier("linear_svm", "sklearn.svm:SVC", "LIBSVM, linear kernel, one-vs-one",
                                fixed=(("kernel", "linear"),), defaults=(("C", 1.0),), seeded=False),
    "liblinear": BuiltinClassifier("linear_svm", "sklearn.svm:LinearSVC", "LIBLINEAR, one-vs-rest, squared hinge",
                                   defaults=(("C", 1.0), ("max_iter", 20000))),
}
BUILTINS: dict[str, BuiltinClassifier] = {
    "linear_svm": _LINEAR_SVM["libsvm"],
    "crammer_singer": BuiltinClassifier("crammer_singer", "sklearn.svm:LinearSVC", "Crammer-Singer multi-class SVM",
                                        fixed=(("multi_class", "crammer_singer"),),
                                        defaults=(("C", 1.0), ("max_iter", 20000))),
    "knn": BuiltinClassifier("knn", "sklearn.neighbors:KNeighborsClassifier", "k nearest neighbours"),
    "logistic": BuiltinClassifier("logistic", "sklearn.linear_model:LogisticRegression",
                                  "multinomial logistic regression", defaults=(("max_iter", 1000),)),
    "random_forest": BuiltinClassifier("random_forest", "sklearn.ensemble:RandomForestClassifier", "random forest"),
}
#: the built-ins whose C grid keeps the SVMs' tie rule (ties to the smallest C)
SVM_BUILTINS = ("linear_svm", "crammer_singer")


# ----------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class ClassifierSpec:
    """One classifier of a config; ``params`` and ``grid`` are (key, value) pairs sorted by key.

    ``kind`` is a built-in name (:data:`BUILTINS`) or a class's import path ``module:Class``.
    ``linear_svm``'s ``backend`` (libsvm | liblinear) is one of its ``params``.
    """

    label: str
    kind: str
    params: tuple[tuple[str, Any], ...] = ()
    grid: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    @property
    def builtin(self) -> bool:
        """Whether ``kind`` names a built-in (else it is an import path)."""
        return ":" not in self.kind

    @property
    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def grid_points(self) -> list[dict[str, Any]]:
        """Every combination of the grid, in a fixed order: keys sorted, the first varying
        slowest, each key's values in the order the config lists them; ``[{}]`` without a grid."""
        points: list[dict[str, Any]] = [{}]
        for key, values in self.grid:
            points = [{**p, key: v} for p in points for v in values]
        return points

    @property
    def tuned(self) -> bool:
        """Whether inner CV chooses a grid point (the grid has more than one point)."""
        return len(self.grid_points()) > 1

    @property
    def smallest_C_wins(self) -> bool:
        """Whether ties go to the smallest C: a built-in SVM whose grid is C alone."""
        return self.kind in SVM_BUILTINS and [key for key, _ in self.grid] == ["C"]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for config.yaml and fingerprints)."""
        return {"label": self.label, "kind": self.kind, "params": dict(self.params),
                "grid": {k: list(v) for k, v in self.grid}}


def classifier_spec(kind: str, *, label: str | None = None, params: Mapping[str, Any] | None = None,
                    grid: Mapping[str, Sequence[Any]] | None = None) -> ClassifierSpec:
    """A :class:`ClassifierSpec` (params and grid sorted by key; label defaults to ``kind``).

    Nothing is validated here: :func:`check_classifier_spec` does that.
    """
    return ClassifierSpec(label=kind if label is None else label, kind=kind,
                          params=tuple(sorted((params or {}).items())),
                          grid=tuple(sorted((k, tuple(v)) for k, v in (grid or {}).items())))


def spec_from_config(cfg: ClassifierConfig, label: str | None = None) -> ClassifierSpec:
    """The spec of today's single ``classifier:`` (name, backend, C): a C list of several
    values is the grid, a single C a fixed parameter; ``linear_svm`` keeps its backend."""
    params: dict[str, Any] = {"backend": cfg.backend} if cfg.name == "linear_svm" else {}
    grid: dict[str, Sequence[Any]] = {}
    if len(cfg.C) > 1:
        grid["C"] = tuple(cfg.C)
    else:
        params["C"] = cfg.C[0]
    return classifier_spec(cfg.name, label=label, params=params, grid=grid)


def as_spec(classifier: ClassifierSpec | ClassifierConfig) -> ClassifierSpec:
    """A spec as it is, a :class:`~fsbench.configuration.parse.ClassifierConfig` through :func:`spec_from_config`."""
    return classifier if isinstance(classifier, ClassifierSpec) else spec_from_config(classifier)


# ----------------------------------------------------------------------------- building
def resolve_class(path: str) -> type:
    """The class an import path ``module:Class`` (or ``module:Outer.Inner``) names."""
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ClassifierSpecError(f"{path!r} is not an import path of the form 'module:Class', e.g. "
                                  "'sklearn.linear_model:LogisticRegression'.", "class")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ClassifierSpecError(f"cannot import module {module_name!r} of {path!r} ({exc}); check the "
                                  "name or install the package.", "class") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ClassifierSpecError(f"module {module_name!r} has no {attr!r}; check the class name in "
                                      f"{path!r}.", "class")
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise NotAClassifierError(f"{path!r} is a {type(obj).__name__}, not a class; name a scikit-learn "
                                  "classifier class.", "class")
    return obj


def _builtin(spec: ClassifierSpec) -> BuiltinClassifier | None:
    if not spec.builtin:
        return None
    if spec.kind == "linear_svm":
        return _LINEAR_SVM[spec.params_dict.get("backend", "libsvm")]
    return BUILTINS[spec.kind]


def estimator_class(spec: ClassifierSpec) -> type:
    """The scikit-learn class a spec builds."""
    builtin = _builtin(spec)
    return resolve_class(builtin.cls if builtin else spec.kind)


def estimator_params(spec: ClassifierSpec, point: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The keyword arguments of the estimator for a grid point, without ``random_state``:
    the built-in's defining and default parameters, the spec's fixed ones, then the point."""
    builtin = _builtin(spec)
    out: dict[str, Any] = {}
    if builtin:
        out.update(builtin.fixed)
        out.update(builtin.defaults)
    out.update((k, v) for k, v in spec.params if not (spec.kind == "linear_svm" and k == "backend"))
    out.update(point or {})
    return out


@functools.cache
def _accepts_random_state(cls: type) -> bool:
    return "random_state" in _accepted_params(cls)


def make_classifier(spec: ClassifierSpec, params: Mapping[str, Any] | None, seed: int) -> Any:
    """A fresh, unfitted estimator of ``spec`` at the grid point ``params`` (``{}`` or None: no
    grid), its ``random_state`` set to ``seed`` when it has one (not for LIBSVM's built-in)."""
    cls = estimator_class(spec)
    kwargs = estimator_params(spec, params)
    builtin = _builtin(spec)
    seeded = builtin.seeded if builtin else True
    if seeded and _accepts_random_state(cls):
        kwargs["random_state"] = seed
    return cls(**kwargs)


def chosen_params(spec: ClassifierSpec, point: Mapping[str, Any] | None) -> str:
    """The results' ``classifier_params``: JSON of the parameters the config sets (fixed
    ``params``, ``backend`` included, and the chosen grid point), keys sorted."""
    return json.dumps({**spec.params_dict, **(point or {})}, sort_keys=True, default=str)


# ----------------------------------------------------------------------------- validation
def _accepted_params(cls: type) -> list[str]:
    """The parameters an estimator class accepts: ``get_params()`` of a default instance, or
    its constructor's named parameters when it has no default instance."""
    try:
        return sorted(cls().get_params(deep=False))
    except Exception:  # noqa: BLE001 - a constructor with required arguments, or no get_params
        sig = inspect.signature(cls)
        return sorted(n for n, p in sig.parameters.items()
                      if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD))


def _estimator_type(cls: type) -> str | None:
    """scikit-learn's estimator type of a class (``classifier``, ``regressor``...); None for a
    class that is no scikit-learn estimator or has no default instance."""
    from sklearn.base import BaseEstimator
    from sklearn.utils import get_tags

    if not issubclass(cls, BaseEstimator):
        return None
    try:
        return get_tags(cls()).estimator_type
    except Exception:  # noqa: BLE001 - a constructor with required arguments
        return None


def _same(a: Any, b: Any) -> bool:
    """Whether two grid values are the same value (1 and 1.0 are; True and 1 are not)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values that do not compare
        return False


def _check_value(cls: type, base: dict[str, Any], key: str, value: Any, where: str) -> Any:
    """A value judged by the estimator's own constraints (``_validate_params``); an integral
    float the estimator wants as an int becomes one (YAML reads ``1e3`` as 1000.0)."""
    validate = getattr(cls, "_validate_params", None)
    if validate is None:
        return value
    try:
        cls(**{**base, key: value})._validate_params()
        return value
    except (ValueError, TypeError) as exc:
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            try:
                cls(**{**base, key: int(value)})._validate_params()
                return int(value)
            except (ValueError, TypeError):
                pass
        message = re.sub(r"\. Got (.*) instead\.?$", r", got \1.", str(exc).strip().splitlines()[0])
        raise ClassifierSpecError(message if message.endswith(".") else message + ".", where) from None


def check_classifier_spec(spec: ClassifierSpec) -> ClassifierSpec:
    """Validate a spec before anything runs; return it with integral floats made ints where
    the estimator wants ints.

    Raises :class:`ClassifierSpecError` (a ValueError; :class:`NotAClassifierError`, also a
    TypeError, for a class without ``fit``/``predict``) with one sentence, for: an unknown
    built-in (with a did-you-mean), an import path that does not resolve, a class that is no
    classifier, a params or grid key the estimator does not accept (from ``get_params()``),
    ``random_state``, a built-in's defining parameter, a key both fixed and searched, an empty
    grid or one listing a value twice, and a value the estimator's constraints refuse.
    """
    if spec.builtin:
        if spec.kind not in BUILTINS:
            close = difflib.get_close_matches(spec.kind, list(BUILTINS), n=1)
            if close:
                hint = f"did you mean {close[0]!r}?"
            elif "." in spec.kind:
                hint = "to name a class, write its import path with a colon before the class (module:Class)."
            else:
                hint = (f"the built-ins are {', '.join(BUILTINS)}, and 'class: module:Class' names any other "
                        "scikit-learn classifier.")
            raise ClassifierSpecError(f"{spec.kind!r} is not a built-in classifier; {hint}", "name")
        backend = spec.params_dict.get("backend", "libsvm")
        if "backend" in spec.params_dict and spec.kind != "linear_svm":
            raise ClassifierSpecError("backend applies to linear_svm only; remove it.", "params.backend")
        if backend not in BACKENDS:
            raise ClassifierSpecError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}.", "params.backend")
        if any(k == "backend" for k, _ in spec.grid):
            raise ClassifierSpecError("backend chooses the estimator and cannot be searched; list linear_svm "
                                      "once per backend, with distinct labels.", "grid.backend")
    cls = estimator_class(spec)
    where_class = "name" if spec.builtin else "class"
    for method in ("fit", "predict"):
        if not callable(getattr(cls, method, None)):
            raise NotAClassifierError(f"{spec.kind} has no {method} method, so it cannot classify; name a "
                                      "scikit-learn classifier.", where_class)
    kind = _estimator_type(cls)
    if kind not in (None, "classifier"):
        raise NotAClassifierError(f"{spec.kind} is a scikit-learn {kind}, not a classifier; name a "
                                  "scikit-learn classifier.", where_class)
    accepted = _accepted_params(cls)
    builtin = _builtin(spec)
    defining = dict(builtin.fixed) if builtin else {}
    name = spec.kind if builtin else cls.__name__

    def check_key(key: str, where: str) -> None:
        if key in RESERVED:
            raise ClassifierSpecError(f"{key} cannot be set: {RESERVED[key]}.", where)
        if key in defining:
            raise ClassifierSpecError(f"{key} is {defining[key]!r} in the built-in {spec.kind}; for another "
                                      f"{key} name the class instead ('class: {builtin.cls}').", where)
        if key not in accepted:
            close = difflib.get_close_matches(key, accepted, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"its parameters are {', '.join(accepted)}."
            raise ClassifierSpecError(f"{name} has no parameter {key!r}; {hint}", where)

    base = estimator_params(spec)
    fixed = {k: v for k, v in spec.params if not (spec.kind == "linear_svm" and k == "backend")}
    base_defaults = {k: v for k, v in base.items() if k not in fixed}
    params = dict(spec.params)
    for key, value in fixed.items():
        check_key(key, f"params.{key}")
        params[key] = _check_value(cls, base_defaults, key, value, f"params.{key}")
    grid: dict[str, tuple[Any, ...]] = {}
    for key, values in spec.grid:
        where = f"grid.{key}"
        check_key(key, where)
        if key in fixed:
            raise ClassifierSpecError(f"{key} is both fixed in 'params' and searched in 'grid'; keep one.", where)
        if not values:
            raise ClassifierSpecError(f"the grid of {key} is empty; list its values or remove it.", where)
        if any(_same(v, w) for i, v in enumerate(values) for w in values[:i]):
            raise ClassifierSpecError(f"the grid of {key} lists a value twice.", where)
        grid[key] = tuple(_check_value(cls, base_defaults, key, v, f"{where}[{i}]") for i, v in enumerate(values))
    checked = ClassifierSpec(spec.label, spec.kind, tuple(sorted(params.items())), tuple(sorted(grid.items())))
    try:
        make_classifier(checked, checked.grid_points()[0], 0)
    except TypeError as exc:  # a constructor that needs arguments the config does not give
        message = str(exc).strip().splitlines()[0].rstrip(".")
        raise NotAClassifierError(f"{spec.kind} cannot be built from the config's parameters ({message}); give "
                                  "them under 'params'.", where_class) from None
    return checked


def check_classifier_specs(specs: Sequence[ClassifierSpec]) -> tuple[ClassifierSpec, ...]:
    """Every spec checked (:func:`check_classifier_spec`), and their labels distinct."""
    seen: set[str] = set()
    out = []
    for spec in specs:
        if spec.label in seen:
            raise ClassifierSpecError(f"the label {spec.label!r} is used twice; give each classifier a distinct "
                                      "label (the results' classifier column).", "name")
        seen.add(spec.label)
        out.append(check_classifier_spec(spec))
    return tuple(out)
