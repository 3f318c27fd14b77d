"""The architecture of fsbench, declared here and checked on the source tree.

fsbench is a stack of role packages. The declared layer order, lowest first, is :data:`LAYERS`: a
package may import from the packages before it (and from itself), never from one after it. The
checks read the source files with :mod:`ast` only, never fsbench's own code, so they hold whatever
fsbench's import machinery does:

- the import graph between packages follows the layer order (imports under ``if TYPE_CHECKING:``
  only annotate and do not count; imports inside functions do count);
- no module imports a private name (``_x``) or a private module from another package (a package is
  a directory with an ``__init__.py``; a subpackage is another package);
- at most five modules sit directly under ``fsbench/`` (``__init__.py`` included);
- every package's ``__init__.py`` has a docstring saying what it owns, with a paragraph starting
  ``May import:`` that names exactly the packages the layer order allows it, and the package's
  own docstring states the layer order, so the docstrings cannot drift from this rule;
- the packages' import graph has no cycle.

Each check is a function of a source folder, and is shown to report a hand-made violation in a
small tree built under ``tmp_path``, so none of them passes vacuously.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "fsbench"

#: the layer order, lowest first; TOP (the modules directly under ``fsbench/``: errors,
#: fixed_order, code_identity) is the bottom, the package ``fsbench`` itself (its ``__init__``,
#: the public API) the top
TOP = "top-level modules"
LAYERS = (TOP, "storage", "datasets", "selectors", "plugins", "evaluation", "configuration", "engine",
          "stats", "report", "papers", "cli", "fsbench")

#: names any module may import from the package ``fsbench`` itself: constants its ``__init__``
#: defines before anything else, so importing them runs no code of a higher layer
ROOT_METADATA = frozenset({"__version__"})

MAX_TOP_MODULES = 5


@dataclass(frozen=True)
class Module:
    name: str  # dotted
    path: Path
    is_package: bool  # an __init__.py

    @property
    def package(self) -> str:
        """The package (a directory with an ``__init__.py``) this module belongs to."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


@dataclass(frozen=True)
class Import:
    importer: str
    line: int
    target: str  # the imported module, dotted
    name: str | None  # the imported name of ``from target import name``; None: the module itself


def modules(root: Path) -> dict[str, Module]:
    """Every module of the package at ``root``, by dotted name."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if not all((root.parent / Path(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts))):
            continue  # not inside a package (a data folder, a script)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = Module(".".join(parts), path, is_package)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _statements(tree: ast.AST):
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (its ``else`` counts)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending += [node.test, *node.orelse]
        else:
            pending += list(ast.iter_child_nodes(node))


def imports(module: Module, known: dict[str, Module]) -> list[Import]:
    """The imports of the root package that ``module`` makes at run time (module level, inside
    functions, ``importlib.import_module("...")`` with a constant), resolved to absolute names."""
    root = module.name.partition(".")[0]
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    out = []

    def add(line: int, target: str, name: str | None) -> None:
        if target == root or target.startswith(root + "."):
            out.append(Import(module.name, line, target, name))

    for node in _statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(node.lineno, alias.name, None)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in known:
                    add(node.lineno, sub, None)
                else:
                    add(node.lineno, source, None if alias.name == "*" else alias.name)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) \
                and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                     or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))):
            add(node.lineno, node.args[0].value, None)
    return sorted(out, key=lambda i: (i.line, i.target, i.name or ""))


def layer(name: str, known: dict[str, Module]) -> str:
    """The layer of a module: its role package, TOP for a module directly under the root, or the
    root package itself."""
    parts = name.split(".")
    if len(parts) == 1:
        return parts[0]
    package = ".".join(parts[:2])
    if package in known and known[package].is_package:
        return parts[1]
    return TOP


def allowed(layer_name: str, layers: tuple[str, ...] = LAYERS) -> tuple[str, ...]:
    """The layers ``layer_name`` may import from, besides itself."""
    return layers[:layers.index(layer_name)]


def layer_violations(root: Path, layers: tuple[str, ...] = LAYERS,
                     metadata: frozenset[str] = ROOT_METADATA) -> list[str]:
    known = modules(root)
    out = []
    for module in known.values():
        mine = layer(module.name, known)
        if mine not in layers:
            out.append(f"{module.name}: package {mine!r} is not in the declared layer order {layers}")
            continue
        for imp in imports(module, known):
            theirs = layer(imp.target, known)
            if imp.target == root.name and imp.name in metadata:
                continue
            if theirs == mine:
                continue
            if theirs not in layers or layers.index(theirs) > layers.index(mine):
                out.append(f"{module.name} (line {imp.line}) imports "
                           f"{imp.target}{'' if imp.name is None else ':' + imp.name}: the layer "
                           f"{mine!r} may import only from {', '.join(allowed(mine, layers)) or 'nothing'} "
                           f"(layer order, lowest first: {' < '.join(layers)})")
    return out


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def private_violations(root: Path) -> list[str]:
    known = modules(root)
    out = []
    for module in known.values():
        for imp in imports(module, known):
            target = known.get(imp.target)
            if target is None:
                continue  # not a module of the tree; the layer check names it if it matters
            if target.package == module.package:
                continue
            # the private parts: a private module, or a module of a private package, on the way
            # down from the importer's package's common ancestor; and a private name
            path = imp.target.split(".")
            common = 0
            for a, b in zip(path, module.package.split("."), strict=False):
                if a != b:
                    break
                common += 1
            private = [p for p in path[common:] if _private(p)]
            if imp.name is not None and _private(imp.name):
                private.append(imp.name)
            if private:
                what = imp.target + ("" if imp.name is None else f":{imp.name}")
                out.append(f"{module.name} (line {imp.line}) imports {what} from package {target.package}, "
                           f"private to it ({', '.join(private)}): make it public there or keep the code in "
                           f"{target.package}")
    return out


def top_modules(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob("*.py"))


def package_graph(root: Path) -> dict[str, set[str]]:
    """Package -> the packages it imports (a module directly under the root counts as its own
    node, apart from the root package's ``__init__``), self-imports left out."""
    known = modules(root)

    def node(name: str) -> str:
        m = known.get(name)
        if m is None:
            return name
        if m.package == root.name and not m.is_package:
            return m.name  # fsbench.errors
        return m.package

    graph: dict[str, set[str]] = {}
    for module in known.values():
        edges = graph.setdefault(node(module.name), set())
        for imp in imports(module, known):
            other = node(imp.target)
            if other != node(module.name):
                edges.add(other)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def expected_may_import(layer_name: str, root: Path, layers: tuple[str, ...] = LAYERS) -> list[str]:
    """What a package of ``layer_name`` may import, as its docstring names it: the top-level
    modules by name, then the role packages, in the layer order."""
    out = []
    for name in allowed(layer_name, layers):
        if name == TOP:
            out += [p.stem for p in sorted(root.glob("*.py")) if p.stem != "__init__"]
        else:
            out.append(name)
    return out


def _may_import(doc: str) -> list[str] | None:
    """The names of the docstring's paragraph that starts with ``May import:``; None without one."""
    for paragraph in re.split(r"\n\s*\n", doc):
        text = " ".join(paragraph.split())
        if text.startswith("May import:"):
            body = text[len("May import:"):].strip().rstrip(".")
            names = re.split(r",\s*|\s+and\s+", body)
            return [n.strip().removeprefix("fsbench.") for n in names if n.strip() and n.strip() != "nothing"]
    return None


def docstring_violations(root: Path, layers: tuple[str, ...] = LAYERS) -> list[str]:
    known = modules(root)
    out = []
    for module in known.values():
        if not module.is_package or module.name == root.name:
            continue
        doc = ast.get_docstring(ast.parse(module.path.read_text(encoding="utf-8"))) or ""
        mine = layer(module.name, known)
        names = _may_import(doc)
        want = expected_may_import(mine, root, layers) if mine in layers else None
        owns = [p for p in re.split(r"\n\s*\n", doc) if p.strip() and not p.strip().startswith("May import:")]
        where = module.path.relative_to(root.parent)
        if not owns:
            out.append(f"{where}: the docstring does not say what the package owns")
        if names is None:
            out.append(f"{where}: the docstring has no paragraph starting 'May import:' "
                       f"(expected: May import: {', '.join(want or []) or 'nothing'}.)")
        elif want is not None and sorted(names) != sorted(want):
            out.append(f"{where}: 'May import:' names {', '.join(names) or 'nothing'}, the layer order "
                       f"allows {', '.join(want) or 'nothing'}")
    root_doc = ast.get_docstring(ast.parse((root / "__init__.py").read_text(encoding="utf-8"))) or ""
    order = " < ".join(layers[:-1])
    if order not in " ".join(root_doc.split()):
        out.append(f"{root.name}/__init__.py: the docstring does not state the layer order {order!r}")
    return out


# --- the source tree ---------------------------------------------------------------------------


def test_the_imports_between_packages_follow_the_layer_order():
    assert layer_violations(ROOT) == []


def test_no_module_imports_a_private_name_of_another_package():
    assert private_violations(ROOT) == []


def test_at_most_five_modules_sit_directly_under_the_package():
    found = top_modules(ROOT)
    assert "__init__.py" in found and len(found) <= MAX_TOP_MODULES, found


def test_every_package_is_declared_in_the_layer_order():
    known = modules(ROOT)
    packages = {layer(m.name, known) for m in known.values()}
    assert packages <= set(LAYERS), sorted(packages - set(LAYERS))
    # every declared role package exists, so the order names no ghost
    assert set(LAYERS) - {TOP, ROOT.name} <= packages


def test_every_package_docstring_says_what_it_owns_and_may_import():
    assert docstring_violations(ROOT) == []


def test_no_import_cycle_between_packages():
    assert cycles(package_graph(ROOT)) == []


def test_the_graph_is_read_from_the_tree():
    # the real tree has edges the checks rely on seeing: one at module level, one inside a
    # function, and TYPE_CHECKING imports left out
    known = modules(ROOT)
    edges = {(i.importer, i.target) for m in known.values() for i in imports(m, known)}
    assert ("fsbench.evaluation.linear_libsvm", "fsbench.fixed_order") in edges
    assert ("fsbench.configuration.experiment", "fsbench.evaluation.classifiers") in edges  # in a function
    assert "fsbench.evaluation" in package_graph(ROOT)["fsbench.engine"]
    # the protocol imports the configuration's types for annotations only: present, not counted
    protocol = known["fsbench.evaluation.protocol"]
    written = {n.module for n in ast.walk(ast.parse(protocol.path.read_text(encoding="utf-8")))
               if isinstance(n, ast.ImportFrom)}
    assert "fsbench.configuration.experiment" in written
    assert not any(i.target.startswith("fsbench.configuration") for i in imports(protocol, known))
    assert len(known) > 100


# --- the checks find violations ----------------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


SMALL = (TOP, "low", "high", "pkg")


def _docs(low: str = "May import: errors.", high: str = "May import: errors, low.") -> dict[str, str]:
    return {
        "pkg/__init__.py": '"""The package.\n\nLayer order: top-level modules < low < high."""\n',
        "pkg/errors.py": "X = 1\n",
        "pkg/low/__init__.py": f'"""Low things.\n\n{low}\n"""\n',
        "pkg/high/__init__.py": f'"""High things.\n\n{high}\n"""\n',
    }


def test_a_layer_violation_names_importer_imported_and_rule(tmp_path):
    root = _tree(tmp_path, {**_docs(),
                            "pkg/low/a.py": "from pkg.errors import X\n\n\ndef f():\n    from pkg.high.b import g\n",
                            "pkg/low/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                            "    from pkg.high import b\nelse:\n    import pkg.high.b\n",
                            "pkg/low/d.py": "from ..high import b\nfrom pkg import __version__\nimport pkg\n",
                            "pkg/low/e.py": "import importlib\n\nimportlib.import_module('pkg.high.b')\n",
                            "pkg/high/b.py": "from pkg.low import a\n\n\ndef g():\n    pass\n"})
    found = layer_violations(root, SMALL)
    assert len(found) == 5, found
    assert any(v.startswith("pkg.low.e (line 3) imports pkg.high.b:") for v in found)  # by name, at run time
    assert found[0] == ("pkg.low.a (line 5) imports pkg.high.b:g: the layer 'low' may import only from top-level "
                        "modules (layer order, lowest first: top-level modules < low < high < pkg)")
    assert any(v.startswith("pkg.low.c (line 5) imports pkg.high.b:") for v in found)  # the else branch counts
    assert any(v.startswith("pkg.low.d (line 1) imports pkg.high.b:") for v in found)  # relative
    assert any(v.startswith("pkg.low.d (line 3) imports pkg:") for v in found)  # the root package itself
    # with the two packages' places swapped, high's import of low is the violation instead
    swapped = layer_violations(root, (TOP, "high", "low", "pkg"))
    assert [v.split(":")[0] for v in swapped] == ["pkg.high.b (line 1) imports pkg.low.a",
                                                  "pkg.low.d (line 3) imports pkg"]
    assert any("not in the declared layer order" in v for v in layer_violations(root, (TOP, "low", "pkg")))


def test_private_imports_from_another_package_are_listed(tmp_path):
    root = _tree(tmp_path, {**_docs(),
                            "pkg/low/_hidden.py": "def public(): pass\n",
                            "pkg/low/mod.py": "def _secret(): pass\n\n\ndef ok(): pass\n",
                            "pkg/low/same.py": "from pkg.low._hidden import public\nfrom .mod import _secret\n",
                            "pkg/low/sub/__init__.py": '"""Sub."""\nfrom pkg.low.mod import _secret\n',
                            "pkg/high/b.py": "from pkg.low._hidden import public\nfrom pkg.low import _hidden\n"
                                             "from pkg.low.mod import ok, _secret\nimport pkg.low._hidden\n"
                                             "from pkg.low.mod import __doc__\n"})
    found = private_violations(root)
    assert [v.split(" from package")[0] for v in found] == [
        "pkg.high.b (line 1) imports pkg.low._hidden:public", "pkg.high.b (line 2) imports pkg.low._hidden",
        "pkg.high.b (line 3) imports pkg.low.mod:_secret", "pkg.high.b (line 4) imports pkg.low._hidden",
        "pkg.low.sub (line 2) imports pkg.low.mod:_secret"], found  # a subpackage is another package


def test_too_many_top_level_modules_and_cycles_are_found(tmp_path):
    root = _tree(tmp_path, {**_docs(), **{f"pkg/m{i}.py": "" for i in range(4)},
                            "pkg/low/a.py": "from pkg.high import b\n",
                            "pkg/high/b.py": "def f():\n    import pkg.low.a\n"})
    assert len(top_modules(root)) == 6 > MAX_TOP_MODULES
    assert cycles(package_graph(root)) == [["pkg.high", "pkg.low"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_package_docstrings_must_name_exactly_what_the_order_allows(tmp_path):
    assert docstring_violations(_tree(tmp_path / "good", _docs()), SMALL) == []
    found = docstring_violations(_tree(tmp_path / "bad", _docs(low="May import: errors, high.")), SMALL)
    assert found == ["pkg/low/__init__.py: 'May import:' names errors, high, the layer order allows errors"]
    found = docstring_violations(_tree(tmp_path / "none", _docs(high="Imports what it likes.")), SMALL)
    assert found == ["pkg/high/__init__.py: the docstring has no paragraph starting 'May import:' "
                     "(expected: May import: errors, low.)"]
    files = _docs()
    files["pkg/__init__.py"] = '"""The package."""\n'
    assert docstring_violations(_tree(tmp_path / "root", files), SMALL) == [
        "pkg/__init__.py: the docstring does not state the layer order 'top-level modules < low < high'"]
    # the names may wrap over lines and end with "and"
    assert _may_import("Owns x.\n\nMay import: errors,\n  fixed_order and storage.") == \
        ["errors", "fixed_order", "storage"]


@pytest.mark.parametrize("layer_name", LAYERS[1:-1])
def test_what_each_layer_may_import_is_derived_from_the_order(layer_name):
    want = expected_may_import(layer_name, ROOT)
    assert {"errors", "fixed_order", "code_identity"} <= set(want)
    assert layer_name not in want and all(LAYERS.index(w) < LAYERS.index(layer_name) for w in want
                                          if w in LAYERS)
