"""fsbench.evaluation."""
