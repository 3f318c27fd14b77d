"""fsbench: a reproducible benchmark of multi-class feature selection."""

__version__ = "0.1.0"
