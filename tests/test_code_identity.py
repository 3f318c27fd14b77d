"""Code identity follows what code does, not where it lives (fsbench.code_identity).

Each case builds small packages as source texts and compares digests; the expectations are
the definition's: a module moved or renamed unchanged (its importers' import lines updated)
keeps its digest, documentation and layout do not count, and any edit of code in scope does.
"""

from __future__ import annotations

import pytest

from fsbench.code_identity import MappedSources, canonical_dump, module_digest, scope_digest

HELPER = '"""Helper."""\n\n\ndef scale(x):\n    return 2 * x\n\n\nFACTOR = 3\n'
SELECTOR = ('"""A selector."""\nfrom pkg.tools.helper import FACTOR, scale\n\n\n'
            'def fit(x):\n    """Fit."""\n    return scale(x) * FACTOR\n')
BASE = {"pkg": "", "pkg.tools": "", "pkg.tools.helper": HELPER, "pkg.sel": SELECTOR}


def digest(texts: dict[str, str], module: str = "pkg.sel", scope=("pkg",)) -> str:
    return scope_digest(module, scope=scope, sources=MappedSources(texts))


def test_a_module_moved_unchanged_keeps_its_digest_and_its_importers_too():
    base = digest(BASE)
    moved = {"pkg": "", "pkg.numeric": "", "pkg.numeric.scaling": HELPER,
             "pkg.sel": SELECTOR.replace("pkg.tools.helper", "pkg.numeric.scaling")}
    assert digest(moved) == base
    # the moved module's own digest is unchanged too
    assert digest(BASE, "pkg.tools.helper") == digest(moved, "pkg.numeric.scaling")
    # and so is the importer moved in turn
    renamed = {**moved, "pkg.selectors": "", "pkg.selectors.mine": moved["pkg.sel"]}
    del renamed["pkg.sel"]
    assert digest(renamed, "pkg.selectors.mine") == base


def test_a_name_imported_through_a_reexport_is_the_same_import():
    reexport = {**BASE, "pkg.tools": "from pkg.tools.helper import FACTOR, scale\n",
                "pkg.sel": SELECTOR.replace("from pkg.tools.helper import", "from pkg.tools import")}
    assert digest(reexport) == digest(BASE)
    relative = {**BASE, "pkg.sel": SELECTOR.replace("from pkg.tools.helper import", "from .tools.helper import")}
    assert digest(relative) == digest(BASE)


@pytest.mark.parametrize("module, before, after", [
    ("pkg.sel", "* FACTOR", "+ FACTOR"),            # one operator of the module itself
    ("pkg.tools.helper", "2 * x", "3 * x"),          # a constant of an imported helper
    ("pkg.tools.helper", "FACTOR = 3", "FACTOR = 4"),  # a module-level value it imports
    ("pkg.sel", "return scale(x)", "return abs(x)"),  # a call
])
def test_a_one_token_edit_changes_the_digest(module, before, after):
    edited = dict(BASE)
    assert before in edited[module]
    edited[module] = edited[module].replace(before, after)
    assert digest(edited) != digest(BASE)


def test_documentation_comments_and_layout_do_not_count():
    documented = {**BASE,
                  "pkg.sel": SELECTOR.replace('"""Fit."""', '"""Fit it, better said."""\n    # a comment')
                  .replace('"""A selector."""', '"""A selector, documented at length.\n\nMore."""'),
                  "pkg.tools.helper": "# comment\n" + HELPER.replace("return 2 * x", "return (2\n            * x)")}
    assert digest(documented) == digest(BASE)


def test_which_module_a_name_comes_from_counts():
    # two helpers with different code: importing `scale` from the other one is another computation
    other = HELPER.replace("2 * x", "5 * x")
    texts = {**BASE, "pkg.other": other}
    swapped = {**texts, "pkg.sel": SELECTOR.replace("from pkg.tools.helper import FACTOR, scale",
                                                    "from pkg.tools.helper import FACTOR\nfrom pkg.other import scale")}
    assert digest(swapped) != digest(texts)


def test_code_outside_the_scope_counts_by_name_only():
    texts = {**BASE, "pkg.errors": "class Bad(Exception):\n    pass\n",
             "pkg.sel": SELECTOR + "from pkg.errors import Bad\n"}
    scope = ("pkg.sel", "pkg.tools")
    base = digest(texts, scope=scope)
    edited = {**texts, "pkg.errors": "class Bad(ValueError):\n    pass\n"}
    assert digest(edited, scope=scope) == base
    assert digest(edited, scope=("pkg",)) != digest(texts, scope=("pkg",))
    moved = {**texts, "pkg.core": "", "pkg.core.errors": texts["pkg.errors"],
             "pkg.sel": texts["pkg.sel"].replace("pkg.errors", "pkg.core.errors")}
    assert digest(moved, scope=scope) == base


def test_a_trailing_dot_leaves_the_package_init_out():
    texts = {**BASE, "pkg.tools": "def register(cls):\n    return cls\n",
             "pkg.sel": "from pkg.tools import register\n" + SELECTOR}
    base = digest(texts, scope=("pkg.tools.", "pkg.sel"))
    edited = {**texts, "pkg.tools": "def register(cls):\n    cls.x = 1\n    return cls\n"}
    assert digest(edited, scope=("pkg.tools.", "pkg.sel")) == base
    assert digest(edited, scope=("pkg",)) != digest(texts, scope=("pkg",))


def test_import_cycles_terminate_and_count_both_sides():
    texts = {"pkg": "", "pkg.a": "from pkg.b import g\n\n\ndef f():\n    return g() + 1\n",
             "pkg.b": "def g():\n    from pkg.a import f\n    return 2\n"}
    base = digest(texts, "pkg.a")
    assert digest({**texts, "pkg.b": texts["pkg.b"].replace("2", "3")}, "pkg.a") != base
    moved = {"pkg": "", "pkg.x": texts["pkg.a"], "pkg.b": texts["pkg.b"].replace("pkg.a", "pkg.x")}
    assert digest(moved, "pkg.x") == base


def test_canonical_form_names_no_module_path():
    dump = canonical_dump("pkg.sel", scope=("pkg",), sources=MappedSources(BASE))
    assert "pkg.tools" not in dump and "helper" not in dump and "scale" in dump


def test_installed_modules_have_digests_and_a_missing_one_is_an_error():
    assert len(module_digest("fsbench.evaluation.protocol", ("fsbench.evaluation.protocol",))) == 16
    with pytest.raises(ModuleNotFoundError):
        scope_digest("pkg.absent", sources=MappedSources(BASE))
