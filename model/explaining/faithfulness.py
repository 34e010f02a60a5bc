"""How faithful an explanation is to the model: remove the source words it ranks first and see
whether the output's probability falls (ERASER, DeYoung et al. 2020; the deletion and insertion
curves of Petsiuk et al. 2018).

The output is the same throughout (re-scored with teacher forcing); a word is removed by setting
its embedding to zero, the baseline integrated gradients and occlusion use. Each curve point is
the output's mean log-probability per token, read at every tenth of the sentence's source tokens
(0%, 10%, ..., 100%, rounded, and the counts the bins below need; every count for a sentence of
ten tokens or fewer). A curve's area is its mean over the share removed (trapezoids over 0..1):

- deletion: words removed most important first, from none to all; its area is low when the
  method found what mattered;
- insertion: words added most important first, from none to all; its area is high when it did;
- comprehensiveness: log-probability lost when the top 10%, 20% and 50% of the words are
  removed (their mean; higher is better);
- sufficiency: log-probability lost when only those words are kept (lower is better).

A random order (``random_order``, several seeds) is the yardstick.

``comprehensiveness_check`` reads only the points comprehensiveness needs (the whole source, and
the top 10%, 20% and 50% removed): a picture's own faithfulness in a few variants, cheap enough to
go under every heatmap.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import torch

from model.core.decodable import Decodable
from model.decoding.trace import Trace
from model.explaining.forced_scoring import output_logprobs

BINS = (0.1, 0.2, 0.5)
SEEDS = 5
MARGIN = 0.01  # a check "beats random" when it loses at least this much more log-probability per token


@dataclass(frozen=True)
class Faithfulness:
    deletion_area: float
    insertion_area: float
    comprehensiveness: float
    sufficiency: float

    def to_json(self) -> dict:
        return {k: round(float(v), 5) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Curves:
    """The deletion and insertion curves of one order, read at ``counts`` words (K,)."""

    counts: np.ndarray  # (K,) words removed (deletion) or kept (insertion), 0 .. S, ascending
    deletion: np.ndarray  # (K,) mean log-probability per output token
    insertion: np.ndarray  # (K,)


def read_at(S: int) -> np.ndarray:
    """The word counts a curve over S source tokens is read at (module docstring)."""
    counts = {round(f * S / 10) for f in range(11)} | {min(S, max(1, math.ceil(q * S))) for q in BINS}
    return np.array(sorted(counts))


def curves(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], order: Sequence[int]) -> Curves:
    """The deletion and insertion curves of ``order`` (most important first)."""
    return _all_curves(model, src_ids, out_ids, [order])[0]


def _all_curves(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                orders: Sequence[Sequence[int]]) -> list[Curves]:
    """``curves`` of several orders, scored together (a variant two orders share is scored once:
    every curve starts and ends at the same two)."""
    S, T = len(src_ids), len(out_ids)
    counts = read_at(S)
    scales = []
    for order in orders:
        deletion, insertion = torch.ones(len(counts), S), torch.zeros(len(counts), S)
        for row, r in enumerate(counts):
            deletion[row, list(order[:r])] = 0.0
            insertion[row, list(order[:r])] = 1.0
        scales += [deletion, insertion]
    source = torch.cat(scales)
    means = output_logprobs(model, src_ids, out_ids, source, torch.ones(source.size(0), T)).mean(1).numpy()
    means = means.reshape(len(orders), 2, len(counts))
    return [Curves(counts, m[0], m[1]) for m in means]


def _order(importance: Sequence[float]) -> list[int]:
    """Most important first; ties by position."""
    return [int(j) for j in np.lexsort((np.arange(len(importance)), -np.asarray(importance, dtype=float)))]


def _random_orders(S: int, seeds: int, first: int = 0) -> list[list[int]]:
    return [list(np.random.default_rng(seed).permutation(S)) for seed in range(first, first + seeds)]


def faithfulness(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                 importance: Sequence[float]) -> Faithfulness:
    """The curves' areas, comprehensiveness and sufficiency of the order ``importance`` (S,) gives
    (most important first; ties by position)."""
    return _summary(curves(model, src_ids, out_ids, _order(importance)))


def random_order(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], seeds: int = SEEDS) -> Faithfulness:
    """The same figures for random orders, averaged over ``seeds`` orders."""
    return _mean([_summary(c) for c in _all_curves(model, src_ids, out_ids, _random_orders(len(src_ids), seeds))])


@dataclass(frozen=True)
class Comprehensiveness:
    """How much the output's mean log-probability per token falls when the source words an
    order ranks first are removed (the top 10%, 20% and 50%; the mean of the three), for one
    explanation and for random orders (their mean)."""

    method: float
    random: float
    removed: tuple[int, ...]  # how many source tokens each of the three removes

    @property
    def beats_random(self) -> bool:
        """By more than ``MARGIN``: two figures a rounding apart do not say which is better."""
        return self.method - self.random > MARGIN


def comprehensiveness_check(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                            importance: Sequence[float], seeds: int = SEEDS) -> Comprehensiveness:
    """``faithfulness(...).comprehensiveness`` of ``importance`` (S,) and ``random_order``'s (the
    same seeds), from 1 + 3 x (1 + ``seeds``) variants instead of whole curves."""
    S, T = len(src_ids), len(out_ids)
    removed = tuple(min(S, max(1, math.ceil(q * S))) for q in BINS)
    orders = [_order(importance)] + _random_orders(S, seeds)
    scale = torch.ones(1 + len(orders) * len(removed), S)
    for o, order in enumerate(orders):
        for b, r in enumerate(removed):
            scale[1 + o * len(removed) + b, list(order[:r])] = 0.0
    means = output_logprobs(model, src_ids, out_ids, scale, torch.ones(scale.size(0), T)).mean(1).numpy()
    drops = (means[0] - means[1:]).reshape(len(orders), len(removed)).mean(1)  # (orders,)
    return Comprehensiveness(float(drops[0]), float(drops[1:].mean()), removed)


def checkable(trace: Trace) -> bool:
    """Whether ``trace`` has an attention heatmap to check: attention, a source and an output."""
    return trace.attention is not None and bool(trace.target_ids) and bool(trace.source_ids)


def heatmap_check(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                  matrix: np.ndarray) -> Optional[Comprehensiveness]:
    """``comprehensiveness_check`` of the order a heatmap ``matrix`` (len(out_ids), len(src_ids))
    over this pair gives (source tokens ranked by their column's total over the output: the
    attention, say, they got), re-scored by ``model``; None with an empty source or output."""
    if not len(src_ids) or not len(out_ids):
        return None
    return comprehensiveness_check(model, src_ids, out_ids, np.asarray(matrix, dtype=float).sum(0))


def attention_check(model: Decodable, trace: Trace) -> Optional[Comprehensiveness]:
    """``heatmap_check`` of ``trace``'s attention heatmap, re-scored by ``model``, which made it;
    None without attention or with an empty output."""
    if not checkable(trace):
        return None
    return heatmap_check(model, trace.source_ids, trace.target_ids, trace.attention)


@dataclass(frozen=True)
class Measured:
    """Each explanation's faithfulness and curves, and a random order's (the yardstick: the mean
    of its seeds' figures and of their curves)."""

    methods: dict  # name -> Faithfulness
    random: Faithfulness
    curves: dict  # name -> Curves
    random_curves: Curves


def measure(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], explanations: dict,
            seeds: int = SEEDS, first_seed: int = 0) -> Measured:
    """``faithfulness`` of every explanation (name -> Explanation) and ``random_order`` (seeds
    ``first_seed`` onwards), all curves scored in one set of batches."""
    names = list(explanations)
    orders = [_order(explanations[n].source_importance()) for n in names] + _random_orders(len(src_ids), seeds,
                                                                                             first_seed)
    scored = _all_curves(model, src_ids, out_ids, orders)
    found = [_summary(c) for c in scored]
    randoms = scored[len(names):]
    mean_curve = Curves(randoms[0].counts, np.mean([c.deletion for c in randoms], axis=0),
                        np.mean([c.insertion for c in randoms], axis=0))  # one S: every order is read at the same counts
    return Measured(dict(zip(names, found[:len(names)])), _mean(found[len(names):]),
                    dict(zip(names, scored[:len(names)])), mean_curve)


def measure_methods(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                    explanations: dict) -> tuple[dict, dict]:
    """``measure``'s figures and curves of the explanations alone, without the random orders:
    ({name: Faithfulness}, {name: Curves}) (a method measured as soon as it is computed)."""
    names = list(explanations)
    if not names:
        return {}, {}
    scored = _all_curves(model, src_ids, out_ids, [_order(explanations[n].source_importance()) for n in names])
    return {n: _summary(c) for n, c in zip(names, scored)}, dict(zip(names, scored))


def measure_random(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], seeds: int = SEEDS,
                   first_seed: int = 0) -> tuple[Faithfulness, Curves]:
    """``measure``'s random-order yardstick alone: the mean of ``seeds`` orders' figures and curves."""
    scored = _all_curves(model, src_ids, out_ids, _random_orders(len(src_ids), seeds, first_seed))
    mean_curve = Curves(scored[0].counts, np.mean([c.deletion for c in scored], axis=0),
                        np.mean([c.insertion for c in scored], axis=0))
    return _mean([_summary(c) for c in scored]), mean_curve


def _mean(found: list[Faithfulness]) -> Faithfulness:
    return Faithfulness(*(float(np.mean([getattr(f, k) for f in found])) for k in Faithfulness.__dataclass_fields__))


def _summary(curve: Curves) -> Faithfulness:
    S = int(curve.counts[-1])
    at = {int(r): i for i, r in enumerate(curve.counts)}
    full = curve.deletion[0]
    ks = [at[min(S, max(1, math.ceil(q * S)))] for q in BINS]
    return Faithfulness(_area(curve.counts / S, curve.deletion), _area(curve.counts / S, curve.insertion),
                        float(np.mean([full - curve.deletion[k] for k in ks])),
                        float(np.mean([full - curve.insertion[k] for k in ks])))


def _area(x: np.ndarray, y: np.ndarray) -> float:
    """The mean of y over x in 0..1 (trapezoids)."""
    return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(x)))
