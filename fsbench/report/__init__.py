"""Reporting, apart from computing: tables and plots read ``runs.csv.gz`` only."""

from fsbench.report.plots import plot_curves
from fsbench.report.tables import FORMATS, format_table, summarize

__all__ = ["FORMATS", "format_table", "plot_curves", "summarize"]
