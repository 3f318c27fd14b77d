"""The browsable HTML page of results: ``fsbench html`` and ``fsbench report --html``.

Owns the page, not the numbers: every value shown is computed by the report layer's own
functions (:mod:`fsbench.report.tables`, :mod:`fsbench.report.statistics`,
:mod:`fsbench.report.cd_diagram`) and handed to the page as JSON, which a script renders into
sortable, filterable tables and plotly figures, switching the metric without regenerating.

- :mod:`fsbench.report.html.data`: the JSON-ready values (per dataset, across datasets,
  stability, cost);
- :mod:`fsbench.report.html.page`: the page, its template (the package data files
  ``page.css`` and ``page.js``) and the files written beside it (``plotly.min.js``, figures,
  downloads);
- :mod:`fsbench.report.html.results_page`: the page of results folders (``fsbench html``);
- :mod:`fsbench.report.html.papers_page`: the page of the papers' reproduction, from the
  tables the papers layer computes (``fsbench report --html``).

plotly's bundled JavaScript comes from the ``plotly`` package (the ``html`` extra); nothing on
the page refers to another host.

May import: errors, fixed_order, code_identity, storage, datasets, selectors, plugins, evaluation,
configuration, engine and stats.
"""

from fsbench.report.html.page import Page, write_page
from fsbench.report.html.results_page import HTML_DIR, default_out, results_page, write_results_page

__all__ = ["HTML_DIR", "Page", "default_out", "results_page", "write_page", "write_results_page"]
