"""Does attention matter? Decoding with the attention weights alpha_ij (paper eq. 6) replaced.

Each ablation keeps the trained model and changes only the weights c_i is built from, at
every decoding step, so BLEU against the unmodified model measures what the learnt weights
are worth:

- ``uniform``: every real source position gets 1 / T_x (the average annotation);
- ``diagonal``: all weight on source position min(i, T_x - 1) at output step i;
- ``argmax``: all weight on the model's own highest-weighted position (a hard alignment);
- ``last``: all weight on the last annotation h_Tx, one vector for the whole sentence
  as an encoder-decoder without attention reads it.

An ``Ablation`` is the value a ``SearchConfig`` carries (``ablation=Ablation("uniform")``): the
decoder calls it at every step (model/decoding/search.py) and knows nothing of the kinds.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from model.core.errors import ConfigError

ABLATIONS = {
    "uniform": "uniform α (the mean annotation)",
    "diagonal": "diagonal α (step i reads source position i)",
    "argmax": "one-hot argmax of α",
    "last": "last annotation only",
}


def ablated_alpha(kind: str, alpha: torch.Tensor, mask: torch.Tensor, step: int) -> torch.Tensor:
    """alpha (batch, src_len) as the model computed it at output step ``step`` (0-based),
    mask (batch, src_len) True at real source positions -> the weights ``kind`` uses instead
    (each row sums to 1 over real positions)."""
    lengths = mask.sum(1)  # (batch,)
    if kind == "uniform":
        return mask.to(alpha.dtype) / lengths.unsqueeze(1).to(alpha.dtype)
    if kind == "argmax":
        position = alpha.masked_fill(~mask, float("-inf")).argmax(1)
    elif kind == "diagonal":
        position = torch.clamp(lengths - 1, max=step)
    elif kind == "last":
        position = lengths - 1
    else:
        raise unknown(kind)
    return torch.nn.functional.one_hot(position, alpha.size(1)).to(alpha.dtype)


def unknown(kind: str) -> ConfigError:
    return ConfigError(f"unknown ablation {kind!r}; choose from {', '.join(ABLATIONS)}")


@dataclass(frozen=True)
class Ablation:
    """One kind of replaced attention, as a search setting: frozen (part of a decode's cache key)
    and called by the search at every output step with alpha (batch, src_len), the mask
    (batch, src_len) and the 0-based step."""

    kind: str

    def __post_init__(self) -> None:
        if self.kind not in ABLATIONS:
            raise unknown(self.kind)

    def __call__(self, alpha: torch.Tensor, mask: torch.Tensor, step: int) -> torch.Tensor:
        return ablated_alpha(self.kind, alpha, mask, step)
