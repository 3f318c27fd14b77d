"""fsbench.engine."""
