"""A task: one selector fitted on one outer split of one dataset, and its identity on disk."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from fsbench.experiment import Experiment, SelectorConfig
from fsbench.protocol import Split, derive_seed


@dataclass(frozen=True)
class Task:
    dataset: str
    split: Split
    selector: SelectorConfig

    @property
    def id(self) -> str:
        """The task's file name: readable, and distinct for distinct tasks.

        Dataset and label are shortened to safe characters for reading; the hash of the exact
        (dataset, repeat, fold, label) keeps ids of labels like ``x/y`` and ``x_y`` (or ``A`` and
        ``a`` on a case-insensitive file system) apart.
        """
        exact = json.dumps([self.dataset, self.split.repeat, self.split.fold, self.selector.label])
        digest = hashlib.sha256(exact.encode()).hexdigest()[:12]
        return (f"{_readable(self.dataset)}__r{self.split.repeat:03d}f{self.split.fold:02d}__"
                f"{_readable(self.selector.label)}__{digest}")


def _readable(text: str) -> str:
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-.") else "_" for ch in text)[:48]


def selection_seed(experiment: Experiment, task: Task) -> int:
    """The seed of a task's selector fit (recorded as the row's ``seed``)."""
    if experiment.protocol.select_on == "all":
        return derive_seed(experiment.seed, "task", task.dataset, "all", task.selector.label)
    return derive_seed(experiment.seed, "task", task.dataset, task.split.repeat, task.split.fold,
                       task.selector.label)
