"""Running the papers' experiments: ``fsbench reproduce`` and ``fsbench check``.

The layers run one way: :mod:`fsbench.papers` holds the papers' facts (printed tables, where
their configs and results live), :mod:`fsbench.report` renders results beside them, and this
package, above both, runs the configs, writes the tables and figures and checks a subset.
"""
