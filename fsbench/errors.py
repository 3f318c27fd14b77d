"""User-facing errors: one clear sentence naming the problem and its fix.

The CLI prints a `FsbenchError` as ``Error: <message>`` and exits with status 2; any other
exception is a bug and keeps its traceback.
"""


class FsbenchError(Exception):
    """A problem with the user's input (config, data, arguments), not a bug."""


class ConfigError(FsbenchError):
    """The experiment configuration is invalid."""


class DataError(FsbenchError):
    """A dataset is missing, corrupt, or not what the registry expects."""
