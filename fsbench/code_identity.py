"""Code identity: a digest of what a module does, independent of where it lives.

Every result row records the identity of the code that computed it (``code``: the selector's;
``protocol_code``: the evaluation's), and the rankings cache keys on it, so an edit that changes
what the code does makes rows stale, while documentation edits and moves do not.

The digest of a module, within a *scope* (the packages and modules whose code counts, e.g. the
selectors with the fixed-order sums they call), is a sha256 over:

- the module's **canonical syntax tree**: its AST without docstrings (comments and layout never
  reach the AST), in which every import of the module's own top-level package is rewritten so
  that no module path remains: ``from fsbench.selectors.base import rank_by_scores as r`` becomes
  an import of the object ``rank_by_scores`` *of a module in scope* bound to ``r``. The import is
  resolved to the module that defines the name (following re-exports, so importing a name from
  a package or from its defining module is the same), read statically from the source files;
- the canonical trees of every module in scope that it imports, transitively;
- the import graph among them, each module named by the digest of its canonical tree, never by
  its dotted name.

So moving or renaming a module unchanged, and updating its importers' import lines, keeps every
digest; any edit of code in scope (a token, a constant, which module a name comes from) changes
it. A name imported from outside the scope counts by its own name only (``ConfigError``), as a
library's code counts by nothing: only the scope's code is identity.

Sources are read as files (:class:`PackageSources`) by default; :class:`MappedSources` serves
sources from elsewhere (a commit of the repository), so a test can prove that a move kept
every digest.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MappedSources", "PackageSources", "Sources", "canonical_dump", "module_digest", "scope_digest"]


class Sources:
    """Where module sources come from: ``source(name)`` is the text of module or package ``name``
    (a package's ``__init__``), or None when no such module exists."""

    def source(self, name: str) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError


class PackageSources(Sources):
    """Modules as the import system finds them (their files, not their imported state)."""

    def source(self, name: str) -> str | None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        return Path(spec.origin).read_text(encoding="utf-8")


@dataclass(frozen=True)
class MappedSources(Sources):
    """Module sources from a mapping of dotted name to text (packages under their own name)."""

    texts: Mapping[str, str]

    def source(self, name: str) -> str | None:
        return self.texts.get(name)


def _strip_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The absolute module of ``from ... import``, relative imports resolved against ``module``."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts[:len(parts) - node.level]  # a module's package is its name minus the last part
    return ".".join(base + ([node.module] if node.module else []))


def _top_level(tree: ast.Module) -> Iterable[ast.stmt]:
    """Statements that bind module-level names: the body, and the bodies of top-level if/try."""
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        yield node
        if isinstance(node, ast.If | ast.Try):
            pending[:0] = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", []),
                           *(s for h in getattr(node, "handlers", []) for s in h.body)]


@dataclass(frozen=True)
class _Ref:
    """What an import of the root package binds: a module, or a name defined in a module."""

    module: str
    name: str | None  # None: the module itself


class _Reader:
    def __init__(self, sources: Sources, root: str):
        self.sources, self.root = sources, root
        self._trees: dict[str, ast.Module | None] = {}

    def tree(self, name: str) -> ast.Module | None:
        if name not in self._trees:
            text = self.sources.source(name)
            self._trees[name] = None if text is None else ast.parse(text)
        return self._trees[name]

    def internal(self, module: str) -> bool:
        return module == self.root or module.startswith(self.root + ".")

    def resolve(self, module: str, name: str, depth: int = 0) -> _Ref:
        """Where ``from module import name`` leads: the module defining ``name`` (re-exports
        followed), or the submodule ``module.name``."""
        tree = self.tree(module)
        found: _Ref | None = None
        if tree is not None and depth < 50:
            for node in _top_level(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
                    found = _Ref(module, name)
                elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                        found = _Ref(module, name)
                elif isinstance(node, ast.ImportFrom):
                    source = _absolute(module, node)
                    for alias in node.names:
                        if (alias.asname or alias.name) == name:
                            found = (self.resolve(source, alias.name, depth + 1) if self.internal(source)
                                     else _Ref(source, alias.name))
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.asname == name:
                            found = _Ref(alias.name, None)
        if found is None and self.tree(f"{module}.{name}") is not None:
            found = _Ref(f"{module}.{name}", None)
        return found or _Ref(module, name)


def _in_scope(module: str, scope: tuple[str, ...]) -> bool:
    """``scope`` holds modules (``"fsbench.fixed_order"``: it and, for a package, its submodules)
    and packages' submodules alone (``"fsbench.selectors."``: not the package's ``__init__``)."""
    return any(module.startswith(s) if s.endswith(".") else (module == s or module.startswith(s + "."))
               for s in scope)


def _sort_import_runs(tree: ast.AST) -> None:
    """Sort every run of consecutive import statements by their dump: the order of imports is
    layout (a linter reorders them when a module moves), not code."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
                continue
            out, run = [], []
            for stmt in [*body, None]:
                if isinstance(stmt, ast.Import | ast.ImportFrom):
                    run.append(stmt)
                    continue
                out += sorted(run, key=ast.dump)
                run = []
                if stmt is not None:
                    out.append(stmt)
            setattr(node, field, out)


def _canonical(reader: _Reader, module: str, scope: tuple[str, ...]) -> tuple[ast.Module, list[tuple[str, _Ref]]]:
    """The module's tree without docstrings, with its root-package imports rewritten (no module path
    left; one statement per imported name; runs of imports sorted), and what it binds to modules in
    scope: (bound name, reference) pairs."""
    tree = _strip_docstrings(reader.tree(module))
    refs: list[tuple[str, _Ref]] = []

    def alias(ref: _Ref, bound: str) -> ast.alias:
        if _in_scope(ref.module, scope):
            refs.append((bound, ref))
            name = "<in-scope module>" if ref.name is None else f"<in-scope>.{ref.name}"
        else:  # outside the scope: by its own name only (a module by its last component)
            name = f"<outside>.{ref.name if ref.name is not None else ref.module.rpartition('.')[2]}"
        return ast.alias(name=name, asname=bound)

    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            out = []
            for stmt in body:
                if isinstance(stmt, ast.ImportFrom) and reader.internal(_absolute(module, stmt)):
                    source = _absolute(module, stmt)
                    out += [ast.ImportFrom(module="<internal>", level=0,
                                           names=[alias(reader.resolve(source, a.name), a.asname or a.name)])
                            for a in stmt.names]
                elif isinstance(stmt, ast.Import) and any(reader.internal(a.name) for a in stmt.names):
                    for a in stmt.names:
                        # ``import fsbench.x.y`` binds ``fsbench``: the path is then code, kept as written
                        keep = not reader.internal(a.name) or a.asname is None
                        out.append(ast.Import(names=[a if keep else alias(_Ref(a.name, None), a.asname)]))
                else:
                    out.append(stmt)
            setattr(node, field, out)
    _sort_import_runs(tree)
    return tree, refs


def canonical_dump(module: str, *, scope: str | Iterable[str] | None = None,
                   sources: Sources | None = None) -> str:
    """The canonical syntax tree of one module (see the module docstring), as ``ast.dump`` text."""
    reader = _Reader(sources or PackageSources(), module.partition(".")[0])
    return ast.dump(_canonical(reader, module, _scope(module, scope))[0])


def _scope(module: str, scope: str | Iterable[str] | None) -> tuple[str, ...]:
    if scope is None:
        return (module.partition(".")[0],)
    return (scope,) if isinstance(scope, str) else tuple(scope)


def scope_digest(module: str, *, scope: str | Iterable[str] | None = None, sources: Sources | None = None) -> str:
    """The code identity of ``module`` within ``scope`` (default: its whole top-level package):
    16 hex digits, as described in the module docstring."""
    scope = _scope(module, scope)
    reader = _Reader(sources or PackageSources(), module.partition(".")[0])
    if reader.tree(module) is None:
        raise ModuleNotFoundError(f"no source for module {module!r}")
    local: dict[str, str] = {}
    edges: dict[str, list[tuple[str, _Ref]]] = {}
    pending = [module]
    while pending:
        name = pending.pop()
        if name in local:
            continue
        tree, refs = _canonical(reader, name, scope)
        local[name] = hashlib.sha256(ast.dump(tree).encode()).hexdigest()
        edges[name] = refs
        pending += [r.module for _, r in refs if r.module not in local and reader.tree(r.module) is not None]
    h = hashlib.sha256(local[module].encode())
    # the import graph, each module named by its tree's digest: importer, bound name, imported module
    graph = sorted(f"{local[name]} {bound} {local.get(ref.module, 'missing')}"
                   for name, refs in edges.items() for bound, ref in refs)
    for line in graph:
        h.update(line.encode())
    return h.hexdigest()[:16]


@functools.cache
def module_digest(module: str, scope: str | tuple[str, ...] | None = None) -> str:
    """:func:`scope_digest` of an installed module, cached for the life of the process."""
    return scope_digest(module, scope=scope)
