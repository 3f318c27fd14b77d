"""The ``fsbench`` command line: parse, call the library, print. Nothing else lives here.

:data:`main` is the click group (``fsbench = "fsbench.cli:main"``; ``python -m fsbench.cli``),
defined with its error handling and shared options in :mod:`fsbench.cli.group`; each module
below registers one command group's commands on it:

- :mod:`fsbench.cli.run`: ``run``;
- :mod:`fsbench.cli.results`: ``table``, ``plot``, ``discard``;
- :mod:`fsbench.cli.stats`: ``stats``;
- :mod:`fsbench.cli.html`: ``html``;
- :mod:`fsbench.cli.papers`: ``reproduce``, ``check``, ``report`` and ``table --paper``;
- :mod:`fsbench.cli.datasets`: ``datasets list|info|fetch``;
- :mod:`fsbench.cli.selectors`: ``selectors``;
- :mod:`fsbench.cli.rankings`: ``rankings regenerate|check``.

Every command turns bad input into one sentence and exit status 2; the work itself is the
library's, in the packages below.

May import: errors, fixed_order, code_identity, storage, datasets, selectors, plugins, evaluation,
configuration, engine, stats, report and papers.
"""

from __future__ import annotations

from fsbench.cli import datasets, html, papers, rankings, results, run, selectors, stats  # noqa: F401  (register)
from fsbench.cli.group import EXIT_INTERRUPTED, EXIT_TASKS_FAILED, EXIT_USER_ERROR, main

__all__ = ["EXIT_INTERRUPTED", "EXIT_TASKS_FAILED", "EXIT_USER_ERROR", "main"]
