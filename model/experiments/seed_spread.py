"""How a Lab experiment's result spreads over seeds: the same task, models and budget trained with
several seeds, exact match by length summarised as a mean and a band (lowest to highest).

    tables = [{1: 1.0, 2: 0.97}, {1: 1.0, 2: 0.83}]     # one {length: exact} per seed
    spread(tables)[2]                                   # Band(mean=0.9, low=0.83, high=0.97, seeds=2)

A seed fixes the data a model sees, its first weights and their order, so two seeds are two
students running the same experiment. A claim about the models holds for a task when it holds
across the band, not on one lucky seed (docs/lab.md, "Why runs differ").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from model.experiments.tasks import LabError


@dataclass(frozen=True)
class Band:
    """One length's exact match over seeds."""

    mean: float
    low: float  # the worst seed
    high: float  # the best seed
    seeds: int  # how many seeds scored this length


def spread(tables: Sequence[Mapping[int, float]]) -> dict[int, Band]:
    """{length: Band} over per-seed tables ({length: exact}); a length some seeds lack is
    summarised over the seeds that have it. LabError for no tables."""
    if not tables:
        raise LabError("a spread needs at least one seed's results")
    lengths = sorted({n for table in tables for n in table})
    out = {}
    for n in lengths:
        values = [float(table[n]) for table in tables if n in table]
        out[n] = Band(sum(values) / len(values), min(values), max(values), len(values))
    return out


def mean_over(table: Mapping[int, float], lengths: Sequence[int]) -> float:
    """The mean of ``table`` ({length: exact}) over the ``lengths`` it has; LabError when it has none."""
    values = [float(table[n]) for n in lengths if n in table]
    if not values:
        raise LabError("none of the lengths asked for were scored")
    return sum(values) / len(values)
