"""YAML reading with line numbers and YAML 1.2 numbers.

PyYAML implements YAML 1.1: it reads ``1e-3`` as the string ``'1e-3'`` (its float pattern
wants a dot) and ``10:30`` as the sexagesimal integer 630, and ``yes``/``no``/``on``/``off``
as booleans. fsbench composes the document into PyYAML's node tree (which keeps the line of
every node) and resolves plain scalars itself with the YAML 1.2 core schema, so
``1e-3`` is 0.001, ``10:30`` stays the string ``'10:30'`` (and a number-typed key then
rejects it by name), and only ``true``/``false`` are booleans.

A config is small, so what YAML allows beyond that is refused before validation, in one
sentence naming the file and line: a document that expands to more than :data:`MAX_NODES`
values (aliases of aliases, the "billion laughs": seven levels of ten make 10^7 values from a
dozen lines), nesting deeper than :data:`MAX_DEPTH`, and any tag but YAML's own scalar and
collection tags (``!foo 3``, ``!!python/tuple``, ``!!binary``, ``!!timestamp``, ``!!set``),
which PyYAML's node tree keeps but which fsbench would otherwise drop without a word.
"""

from __future__ import annotations

import difflib
import math
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

#: values (scalars, lists, mappings) a document may expand to, aliases counted each time used
MAX_NODES = 100_000
#: lists and mappings nested in each other
MAX_DEPTH = 50
_YAML_TAG = "tag:yaml.org,2002:"
#: tags a config may write (``!!str 10`` is the string '10'); the others are refused by name
_SCALAR_TAGS = {f"{_YAML_TAG}{t}" for t in ("str", "int", "float", "bool", "null")} | {"!"}
_COLLECTION_TAGS = {"sequence": {f"{_YAML_TAG}seq", "!"}, "mapping": {f"{_YAML_TAG}map", "!"}}


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


class _Composer(yaml.SafeLoader):
    """PyYAML's safe composer, recording on each node the tag written in the file (``written_tag``,
    None when there is none: the node tree's ``tag`` does not tell a written tag from a resolved
    one) and refusing nesting deeper than :data:`MAX_DEPTH` before Python's recursion limit."""

    source = "<config>"
    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        is_alias = isinstance(event, yaml.AliasEvent)
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise ConfigError(f"{self.source}:{event.start_mark.line + 1}: lists and mappings are nested more "
                                  f"than {MAX_DEPTH} deep; a config needs a few levels, so flatten it.")
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        if not is_alias:
            node.written_tag = getattr(event, "tag", None)
        return node


class _Converter:
    """The node tree as ``Located`` values, counting every value made (an alias once per use)."""

    def __init__(self, source: str):
        self.source = source
        self.made = 0
        self.top: tuple[str, int] | None = None  # the top-level key being converted, and its line

    def __call__(self, node: yaml.Node) -> Located:
        line = node.start_mark.line + 1
        self.made += 1
        if self.made > MAX_NODES:
            key, at = self.top or ("", line)
            raise ConfigError(f"{self.source}:{at}: {key + ': ' if key else ''}the YAML expands to more than "
                              f"{MAX_NODES:,} values (aliases such as '*name' repeated inside each other); write "
                              "the values out instead of nesting aliases.")
        tag = getattr(node, "written_tag", None)
        if isinstance(node, yaml.ScalarNode):
            return Located(self._scalar(node, tag, line), line)
        kind = "sequence" if isinstance(node, yaml.SequenceNode) else "mapping"
        if tag is not None and tag not in _COLLECTION_TAGS.get(kind, ()):
            self._refuse_tag(tag, line)
        if isinstance(node, yaml.SequenceNode):
            return Located([self(item) for item in node.value], line)
        return self._mapping(node, line)

    def _refuse_tag(self, tag: str, line: int) -> None:
        shown = "!!" + tag[len(_YAML_TAG):] if tag.startswith(_YAML_TAG) else tag
        raise ConfigError(f"{self.source}:{line}: the YAML tag {shown!r} is not supported (fsbench reads plain "
                          "values, lists and mappings); remove the tag, or quote the value to make it a string.")

    def _scalar(self, node: yaml.ScalarNode, tag: str | None, line: int) -> Any:
        if tag is None:
            if node.style is None:  # plain (unquoted) scalar
                return resolve_plain_scalar(node.value)
            return node.value  # quoted or block scalar: always a string
        if tag not in _SCALAR_TAGS:
            self._refuse_tag(tag, line)
        if tag in ("!", f"{_YAML_TAG}str"):
            return node.value  # '! 10' and '!!str 10' are the string '10'
        value = resolve_plain_scalar(node.value)
        expected = {"int": int, "float": float, "bool": bool, "null": type(None)}[tag[len(_YAML_TAG):]]
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not expected:
            raise ConfigError(f"{self.source}:{line}: {node.value!r} is not a valid "
                              f"!!{tag[len(_YAML_TAG):]}; write the value without the tag.")
        return value

    def _mapping(self, node: yaml.MappingNode, line: int) -> Located:
        source = self.source
        root = self.top is None and self.made == 1
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
            if getattr(key_node, "written_tag", None) not in (None, "!", f"{_YAML_TAG}str"):
                self._refuse_tag(key_node.written_tag, key_node.start_mark.line + 1)
            if root:
                self.top = (key, key_node.start_mark.line + 1)
            out[key] = self(value_node)
        return Located(out, line)


def load_yaml(text: str, source: str = "<config>") -> Located:
    """Parse one YAML document into ``Located`` values; syntax errors become ConfigError."""
    loader = None
    try:
        loader = _Composer(text)  # checks every character first
        loader.source = source
        node = loader.get_single_node()
    except yaml.reader.ReaderError as exc:
        line = text[:exc.position].count("\n") + 1 if isinstance(exc.position, int) else None
        where = f"{source}:{line}" if line else source
        raise ConfigError(f"{where}: holds the character U+{exc.character:04X}, which YAML does not allow (is it a "
                          "binary file?); save the config as plain UTF-8 text.") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(f"{where}: malformed YAML ({problem}); fix the syntax at that line.") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: malformed YAML ({exc}); fix the syntax.") from None
    finally:
        if loader is not None:
            loader.dispose()
    if node is None:
        raise ConfigError(f"{source}: the file is empty; write an experiment (see configs/quickstart.yaml).")
    return _Converter(source)(node)


# ----------------------------------------------------------------------------- validation
class Reader:
    """Walks the located YAML tree and raises ConfigError naming file, line and key path."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, node: Located | None, path: str, message: str) -> None:
        line = f":{node.line}" if node is not None else ""
        where = f"{path}: " if path else ""
        raise ConfigError(f"{self.source}{line}: {where}{message}")

    def mapping(self, node: Located, path: str, allowed: dict[str, str]) -> dict[str, Located]:
        if not isinstance(node.value, dict):
            self.fail(node, path,
                      f"expected a mapping with keys {', '.join(allowed)}, got {describe_value(node.value)}.")
        for key, value in node.value.items():
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else f" Allowed keys: {', '.join(allowed)}."
                self.fail(value, join_key(path, key), f"unknown key.{hint}")
        return node.value

    def integer(self, node: Located, path: str, minimum: int | None = None) -> int:
        value = node.value
        if isinstance(value, float) and value.is_integer() and math.isfinite(value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(node, path, f"expected an integer, got {describe_value(node.value)}.")
        if minimum is not None and value < minimum:
            self.fail(node, path, f"must be at least {minimum}, got {value}.")
        return value

    def number(self, node: Located, path: str, positive: bool = False) -> float:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(node, path, f"expected a number, got {describe_value(value)}.")
        if not math.isfinite(value):
            self.fail(node, path, f"expected a finite number, got {value}.")
        if positive and value <= 0:
            self.fail(node, path, f"must be positive, got {value}.")
        return float(value)

    def string(self, node: Located, path: str, choices: tuple[str, ...] | None = None) -> str:
        if not isinstance(node.value, str):
            self.fail(node, path, f"expected a string, got {describe_value(node.value)}.")
        if choices is not None and node.value not in choices:
            close = difflib.get_close_matches(node.value, choices, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            self.fail(node, path, f"{node.value!r} is not one of {', '.join(choices)}.{hint}")
        return node.value

    def sequence(self, node: Located, path: str, nonempty: bool = True) -> list[Located]:
        if not isinstance(node.value, list):
            self.fail(node, path, f"expected a list, got {describe_value(node.value)}.")
        if nonempty and not node.value:
            self.fail(node, path, "the list is empty.")
        return node.value


def join_key(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def describe_value(value: Any) -> str:
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
