"""Which explanation is faithful over a whole test set: each method's faithfulness figures
(model/explaining/faithfulness.py) and a random order's, averaged over the sentences with a 95%
interval (normal approximation: 1.96 standard errors), methods ranked by their deletion area.
The random yardstick takes ``seeds`` orders per sentence (default one), each sentence its own.

The command line's test-set mode (``python -m model.explain --src``) and the Evaluate page both
read it; each sentence is explained as the model translated it (its own output).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from model.core.decodable import Decodable
from model.core.errors import ConfigError
from model.explaining.faithfulness import Faithfulness, measure
from model.explaining.registry import explain_many

GROUP = 16  # sentences explained together: gradient rows and attention reads share batches (methods.explain_many)
SEEDS = 1  # random orders per sentence: each sentence gets its own, so a test set averages hundreds
FIGURES = ("source_share", "deletion_area", "insertion_area", "comprehensiveness", "sufficiency")


@dataclass(frozen=True)
class Interval:
    mean: float
    ci95: float  # half-width of the 95% interval

    @classmethod
    def of(cls, values: Sequence[float]) -> "Interval":
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1))
        return cls(mean, 1.96 * spread / math.sqrt(len(values)))

    def overlaps(self, other: "Interval") -> bool:
        return abs(self.mean - other.mean) <= self.ci95 + other.ci95

    def to_json(self) -> dict:
        return {"mean": round(self.mean, 5), "ci95": round(self.ci95, 5)}


@dataclass(frozen=True)
class FaithfulnessTable:
    """One model's means over ``sentences`` sentences: per method (figure -> Interval, the
    ``FIGURES``), and for random orders (the same, without a source share)."""

    model: str
    sentences: int
    methods: dict  # name -> {figure: Interval}
    random: dict  # figure -> Interval
    completeness_gaps: tuple = ()  # integrated gradients' largest gap in each sentence, when they were asked for

    def ranked(self) -> list[tuple[str, dict]]:
        """(method, figures), lowest (best) deletion area first."""
        return sorted(self.methods.items(), key=lambda kv: kv[1]["deletion_area"].mean)

    def best_beats_random(self) -> Optional[bool]:
        """Whether the best method's deletion interval lies wholly below the random order's
        (None without methods)."""
        if not self.methods:
            return None
        best = self.ranked()[0][1]["deletion_area"]
        return best.mean < self.random["deletion_area"].mean and not best.overlaps(self.random["deletion_area"])

    def to_json(self) -> dict:
        found = {"model": self.model, "sentences": self.sentences,
                 "methods": {name: {k: v.to_json() for k, v in row.items()} for name, row in self.methods.items()},
                 "random": {k: v.to_json() for k, v in self.random.items()}}
        if self.completeness_gaps:
            gaps = sorted(self.completeness_gaps)
            found["integrated_gradients_completeness_gap"] = {"largest": round(gaps[-1], 5),
                                                              "median": round(gaps[len(gaps) // 2], 5)}
        return found


def faithfulness_table(model: Decodable, name: str, pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
                       methods: Sequence[str], seeds: int = SEEDS,
                       progress: Optional[Callable[[int, int], None]] = None) -> FaithfulnessTable:
    """The table over ``pairs`` (source ids, the model's output ids); pairs with nothing to
    explain (a blank source or an empty output) are left out. ``progress(done, total)`` after
    each sentence. ConfigError when no pair is left."""
    todo = [(list(s), list(o)) for s, o in pairs if len(s) and len(o)]
    if not todo:
        raise ConfigError("nothing to explain: every line is blank")
    per_method: dict[str, dict[str, list[float]]] = {}
    randoms: dict[str, list[float]] = {k: [] for k in FIGURES[1:]}
    gaps = []
    done = 0
    for first in range(0, len(todo), GROUP):
        group = todo[first:first + GROUP]
        for (src, out), found in zip(group, explain_many(model, group, methods)):
            done += 1
            if "integrated_gradients" in found:
                gaps.append(found["integrated_gradients"].completeness_gap)
            measured = measure(model, src, out, found, seeds, first_seed=(done - 1) * seeds)
            for method, explanation in found.items():
                row = per_method.setdefault(method, {k: [] for k in FIGURES})
                row["source_share"].append(float(explanation.shares()[:, 0].mean()))
                _add(row, measured.methods[method])
            _add(randoms, measured.random)
            if progress is not None:
                progress(done, len(todo))
    return FaithfulnessTable(name, len(todo),
                             {m: {k: Interval.of(v) for k, v in row.items()} for m, row in per_method.items()},
                             {k: Interval.of(v) for k, v in randoms.items()}, tuple(gaps))


def _add(row: dict, found: Faithfulness) -> None:
    for key, value in found.to_json().items():
        row[key].append(value)
