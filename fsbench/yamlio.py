"""YAML reading with line numbers and YAML 1.2 numbers.

PyYAML implements YAML 1.1: it reads ``1e-3`` as the string ``'1e-3'`` (its float pattern
wants a dot) and ``10:30`` as the sexagesimal integer 630, and ``yes``/``no``/``on``/``off``
as booleans. fsbench composes the document into PyYAML's node tree (which keeps the line of
every node) and resolves plain scalars itself with the YAML 1.2 core schema, so
``1e-3`` is 0.001, ``10:30`` stays the string ``'10:30'`` (and a number-typed key then
rejects it by name), and only ``true``/``false`` are booleans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from fsbench.errors import ConfigError

_INT = re.compile(r"[-+]?[0-9]+$")
_INT_OCT = re.compile(r"0o[0-7]+$")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)$")
_NAN = re.compile(r"\.(nan|NaN|NAN)$")


def resolve_plain_scalar(text: str) -> Any:
    """Value of an unquoted scalar under the YAML 1.2 core schema."""
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.match(text):
        return int(text)
    if _INT_OCT.match(text):
        return int(text[2:], 8)
    if _INT_HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return float("-inf") if text.startswith("-") else float("inf")
    if _NAN.match(text):
        return float("nan")
    return text


@dataclass(frozen=True)
class Located:
    """A YAML value with the 1-based line where it starts."""

    value: Any  # dict[str, Located] | list[Located] | scalar
    line: int

    def plain(self) -> Any:
        """The value with every ``Located`` wrapper removed."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value


def _convert(node: yaml.Node, source: str) -> Located:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode):
        if node.style is None:  # plain (unquoted) scalar
            return Located(resolve_plain_scalar(node.value), line)
        return Located(node.value, line)  # quoted or block scalar: always a string
    if isinstance(node, yaml.SequenceNode):
        return Located([_convert(item, source) for item in node.value], line)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Located] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError(f"{source}:{key_node.start_mark.line + 1}: a key must be a plain name.")
            key = key_node.value
            if key == "<<":
                raise ConfigError(f"{source}:{line}: YAML merge keys ('<<') are not supported; write the keys out.")
            if key in out:
                raise ConfigError(
                    f"{source}:{key_node.start_mark.line + 1}: key {key!r} appears twice in the same mapping; keep one."
                )
            out[key] = _convert(value_node, source)
        return Located(out, line)
    raise ConfigError(f"{source}:{line}: unsupported YAML node.")  # pragma: no cover


def load_yaml(text: str, source: str = "<config>") -> Located:
    """Parse one YAML document into ``Located`` values; syntax errors become ConfigError."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(f"{where}: malformed YAML ({problem}); fix the syntax at that line.") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: malformed YAML ({exc}); fix the syntax.") from None
    if node is None:
        raise ConfigError(f"{source}: the file is empty; write an experiment (see configs/quickstart.yaml).")
    return _convert(node, source)
