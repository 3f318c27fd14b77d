"""fsbench.configuration."""
