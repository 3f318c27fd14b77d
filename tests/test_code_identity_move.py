"""The move into role packages changed where code lives, not what it does: proven from version
control, module by module.

Commit 7d999f9 moved the modules that sat flat under ``fsbench/`` into role packages. Both commits'
files are read from git (never from the working tree, so the proof stays about those two commits
after later edits), and for every module of the commit before, its canonical syntax tree
(:func:`fsbench.code_identity.canonical_dump`: no docstrings, no module paths in imports, imports
unordered) must equal its moved counterpart's. The few modules whose code names a module path or
a command in a string (an error message, a scope) are listed with what changed. The row identities
(every registered selector's ``code`` and ``protocol_code``) computed from either commit are equal,
so rows computed before the move stay current after it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fsbench.code_identity import MappedSources, canonical_dump, scope_digest

BEFORE = "80a153e02c343f7c854966556806cd78f9737704"
AFTER = "7d999f9e738bca6ca033b879ac459236c9c06ef7"
ROOT = Path(__file__).resolve().parents[1]

#: old dotted name -> new one (modules not listed kept their name)
MOVES = {
    "fsbench.cli": "fsbench.cli",
    "fsbench.console": "fsbench.engine.console",
    "fsbench.config": "fsbench.configuration.parse",
    "fsbench.experiment": "fsbench.configuration.experiment",
    "fsbench.entries": "fsbench.configuration.entries",
    "fsbench.yamlio": "fsbench.configuration.yamlio",
    "fsbench.tasks": "fsbench.engine.tasks",
    "fsbench.fitting": "fsbench.engine.fitting",
    "fsbench.resume": "fsbench.engine.resume",
    "fsbench.cluster": "fsbench.engine.cluster",
    "fsbench.workers": "fsbench.engine.workers",
    "fsbench.runner": "fsbench.engine.runner",
    "fsbench.traces": "fsbench.engine.traces",
    "fsbench.rankings": "fsbench.engine.regenerate_rankings",
    "fsbench.rankings_check": "fsbench.engine.check_rankings",
    "fsbench.store": "fsbench.storage",
    "fsbench.digests": "fsbench.storage.digests",
    "fsbench.csvread": "fsbench.storage.csvread",
    "fsbench.protocol": "fsbench.evaluation.protocol",
    "fsbench.classifiers": "fsbench.evaluation.classifiers",
    "fsbench.linear_libsvm": "fsbench.evaluation.linear_libsvm",
    "fsbench.linear_liblinear": "fsbench.evaluation.linear_liblinear",
    "fsbench.metrics": "fsbench.evaluation.metrics",
    "fsbench.workflows.check": "fsbench.papers.check",
    "fsbench.workflows.reproduce": "fsbench.papers.reproduce",
    "fsbench.report.paper": "fsbench.papers.tables",
    "fsbench.report.claims": "fsbench.papers.claims",
    "fsbench.report.reproduction": "fsbench.papers.report",
    "fsbench.report.paper_stats": "fsbench.papers.statistics",
    "fsbench.report.figures": "fsbench.papers.figures",
}
#: modules whose code changed in the move, and how (strings only; none computes a row)
CHANGED = {
    "fsbench.code_identity": "imports are compared unordered (the change that made the move keep digests)",
    "fsbench.selectors": "PROTOCOL_SCOPE names the evaluation package",
    "fsbench.report.figures": "an error message names fsbench.engine.traces",
    "fsbench.report.reproduction": "REPORT.md's text names fsbench.papers.claims",
    "fsbench.report.stats_command": "a message names 'fsbench rankings regenerate'",
    "fsbench.resume": "a message names 'fsbench rankings regenerate'",
    "fsbench.runner": "a message names 'fsbench rankings regenerate'",
    "fsbench.store": "messages name 'fsbench rankings regenerate'",
}
#: the package that held nothing but a docstring
REMOVED = {"fsbench.workflows"}
OLD_PROTOCOL_SCOPE = ("fsbench.protocol", "fsbench.classifiers", "fsbench.linear_libsvm", "fsbench.linear_liblinear",
                      "fsbench.fixed_order")
NEW_PROTOCOL_SCOPE = ("fsbench.evaluation.", "fsbench.fixed_order")
SELECTOR_SCOPE = ("fsbench.selectors.", "fsbench.fixed_order")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _sources(commit: str) -> dict[str, str]:
    out = {}
    for path in _git("ls-tree", "-r", "--name-only", commit, "fsbench").split():
        if path.endswith(".py"):
            name = path[:-3].replace("/", ".").removesuffix(".__init__")
            out[name] = _git("show", f"{commit}:{path}")
    return out


@pytest.fixture(scope="module")
def commits() -> tuple[dict[str, str], dict[str, str]]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the repository's history (git and a clone with .git)")
    try:
        return _sources(BEFORE), _sources(AFTER)
    except subprocess.CalledProcessError:
        pytest.skip(f"commits {BEFORE[:7]} and {AFTER[:7]} are not in this clone's history (a shallow clone)")


def test_every_module_moved_keeps_its_canonical_tree(commits):
    before, after = commits
    assert set(MOVES) - REMOVED <= set(before) | {"fsbench.metrics"}
    compared = 0
    for old in sorted(set(before) - REMOVED):
        new = MOVES.get(old, old)
        assert new in after, f"{old} has no counterpart {new}"
        same = canonical_dump(old, sources=MappedSources(before)) == canonical_dump(new, sources=MappedSources(after))
        if old in CHANGED:
            assert not same, f"{old} is listed as changed but is not: drop it from CHANGED"
        else:
            assert same, f"{old} -> {new}: its code changed in the move"
            compared += 1
    assert compared >= 60


def test_row_identities_are_the_same_before_and_after(commits):
    before, after = commits
    old, new = MappedSources(before), MappedSources(after)
    assert (scope_digest("fsbench.protocol", scope=OLD_PROTOCOL_SCOPE, sources=old)
            == scope_digest("fsbench.evaluation.protocol", scope=NEW_PROTOCOL_SCOPE, sources=new))
    selector_modules = sorted(m for m in before if m.startswith("fsbench.selectors.") and
                              not m.rpartition(".")[2].startswith("_") and not m.endswith(".base"))
    assert len(selector_modules) >= 10
    for module in selector_modules:
        assert (scope_digest(module, scope=SELECTOR_SCOPE, sources=old)
                == scope_digest(module, scope=SELECTOR_SCOPE, sources=new)), module


def test_the_proof_can_fail(commits):
    # a one-token change of a helper every selector module imports is seen through the closure
    before, after = commits
    edited = dict(after)
    edited["fsbench.fixed_order"] = edited["fsbench.fixed_order"].replace("return", "return -1 *", 1)
    assert "return -1 *" in edited["fsbench.fixed_order"]
    assert (scope_digest("fsbench.protocol", scope=OLD_PROTOCOL_SCOPE, sources=MappedSources(before))
            != scope_digest("fsbench.evaluation.protocol", scope=NEW_PROTOCOL_SCOPE, sources=MappedSources(edited)))
