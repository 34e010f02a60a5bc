"""How faithful an explanation is to the model: remove the source words it ranks first and see
whether the output's probability falls (ERASER, DeYoung et al. 2020; the deletion and insertion
curves of Petsiuk et al. 2018).

The output is the same throughout (re-scored with teacher forcing); a word is removed by setting
its embedding to zero, the baseline integrated gradients and occlusion use. Each curve point is
the output's mean log-probability per token:

- deletion: words removed most important first, from none to all; its area (the mean of the
  curve) is low when the method found what mattered;
- insertion: words added most important first, from none to all; its area is high when it did;
- comprehensiveness: log-probability lost when the top 10%, 20% and 50% of the words are
  removed (their mean; higher is better);
- sufficiency: log-probability lost when only those words are kept (lower is better).

A random order (``random_order``, several seeds) is the yardstick.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from model.core.decodable import Decodable
from model.explaining.forced_scoring import output_logprobs

BINS = (0.1, 0.2, 0.5)
SEEDS = 5


@dataclass(frozen=True)
class Faithfulness:
    deletion_area: float
    insertion_area: float
    comprehensiveness: float
    sufficiency: float

    def to_json(self) -> dict:
        return {k: round(float(v), 5) for k, v in self.__dict__.items()}


def curves(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], order: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(deletion, insertion), each (S+1,): the output's mean log-probability per token with the
    first r words of ``order`` removed (deletion) or alone kept (insertion), r = 0..S."""
    S, T = len(src_ids), len(out_ids)
    deletion, insertion = torch.ones(S + 1, S), torch.zeros(S + 1, S)
    for r in range(1, S + 1):
        deletion[r:, order[r - 1]] = 0.0
        insertion[r:, order[r - 1]] = 1.0
    both = output_logprobs(model, src_ids, out_ids, torch.cat([deletion, insertion]), torch.ones(2 * (S + 1), T))
    means = both.mean(1).numpy()
    return means[:S + 1], means[S + 1:]


def faithfulness(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                 importance: Sequence[float]) -> Faithfulness:
    """The curves' areas, comprehensiveness and sufficiency of the order ``importance`` (S,) gives
    (most important first; ties by position)."""
    order = [int(j) for j in np.lexsort((np.arange(len(importance)), -np.asarray(importance, dtype=float)))]
    return _summary(*curves(model, src_ids, out_ids, order))


def random_order(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], seeds: int = SEEDS) -> Faithfulness:
    """The same figures for random orders, averaged over ``seeds`` orders."""
    found = [_summary(*curves(model, src_ids, out_ids, list(np.random.default_rng(seed).permutation(len(src_ids)))))
             for seed in range(seeds)]
    return Faithfulness(*(float(np.mean([getattr(f, k) for f in found])) for k in Faithfulness.__dataclass_fields__))


def _summary(deletion: np.ndarray, insertion: np.ndarray) -> Faithfulness:
    S = len(deletion) - 1
    full = deletion[0]
    ks = [min(S, max(1, math.ceil(q * S))) for q in BINS]
    return Faithfulness(float(deletion.mean()), float(insertion.mean()),
                        float(np.mean([full - deletion[k] for k in ks])), float(np.mean([full - insertion[k] for k in ks])))
