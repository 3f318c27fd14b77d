"""Reporting, apart from computing: tables, plots and statistics reports that read
``runs.csv.gz`` (and ``rankings.csv.gz``) only.

- :mod:`fsbench.report.results`: a results folder as the reports read it;
  :mod:`fsbench.report.tables`: mean ± std per dataset x selector at one k;
  :mod:`fsbench.report.plots`: accuracy (or another metric) against the number of features;
- :mod:`fsbench.report.statistics`, :mod:`fsbench.report.stats_summary`,
  :mod:`fsbench.report.stats_figures`, :mod:`fsbench.report.cd_diagram` and
  :mod:`fsbench.report.stats_command`: what ``fsbench stats`` computes, prints and draws, from
  the pure functions of :mod:`fsbench.stats`;
- :mod:`fsbench.report.markdown` and :mod:`fsbench.report.output_set`: formatting, and replacing
  a set of output files as a whole.

The papers' own tables and report are :mod:`fsbench.papers`, above this package.

May import: errors, fixed_order, code_identity, storage, datasets, selectors, plugins, evaluation,
configuration, engine and stats.
"""

from fsbench.report.plots import plot_curves
from fsbench.report.tables import FORMATS, format_table, summarize

__all__ = ["FORMATS", "format_table", "plot_curves", "summarize"]
