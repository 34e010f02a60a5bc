"""The logit lens (nostalgebraist 2020): each decoder layer's state read out as if it were the last.

After decoder layer l the residual stream x^l_i is passed through the model's final LayerNorm and
output layer, p^l(y) = softmax(W_o LN(x^l_i) + b_o). At the last layer this is the model's own
distribution; at earlier layers it says how far the model already "knows" the word it writes:
the word's rank (1 = the layer's first choice) and probability at every layer, and each layer's
own first choices. The intermediate layers were never trained to be read this way, so a low rank
early is evidence, and a high one is not proof of ignorance.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from model.core.decodable import Decodable
from model.corpus.vocab import BOS
from model.decoding.device import device_of

TOP = 5  # each layer's first choices kept per output word


@dataclass(frozen=True)
class LogitLens:
    """One output read at every decoder layer (L layers, T output tokens)."""

    out_ids: tuple[int, ...]  # (T,) the words written
    ranks: np.ndarray  # (L, T) the written word's rank at each layer, 1 its first choice
    probs: np.ndarray  # (L, T) its probability there
    top_ids: np.ndarray  # (L, T, TOP) each layer's first choices
    top_probs: np.ndarray  # (L, T, TOP) and their probabilities

    @property
    def layers(self) -> int:
        return self.ranks.shape[0]

    def first_layer(self) -> np.ndarray:
        """(T,) the first 1-based layer from which the written word stays the first choice (0: never)."""
        top = self.ranks == 1  # (L, T)
        stays = np.flip(np.logical_and.accumulate(np.flip(top, 0), 0), 0)  # (L, T): first choice here and after
        return np.where(stays.any(0), stays.argmax(0) + 1, 0)


@torch.inference_mode()
def logit_lens(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], top: int = TOP) -> LogitLens:
    """``out_ids`` read with teacher forcing, every decoder layer's state read out
    (``Decodable.supports_anatomy`` models only: NotImplementedError otherwise)."""
    dev = device_of(model)
    anatomy = model.anatomy(torch.tensor(list(src_ids), device=dev), torch.tensor([BOS, *out_ids[:-1]], device=dev))
    logprobs = anatomy.read_out(anatomy.decoder_states[1:])  # (L, T, V)
    picks = torch.tensor(list(out_ids), device=dev)
    written = logprobs.gather(-1, picks.view(1, -1, 1).expand(logprobs.size(0), -1, 1))  # (L, T, 1)
    ranks = (logprobs > written).sum(-1) + 1  # (L, T)
    best = logprobs.topk(min(top, logprobs.size(-1)), dim=-1)
    return LogitLens(tuple(int(x) for x in out_ids), ranks.cpu().numpy(), written[..., 0].exp().cpu().numpy(),
                     best.indices.cpu().numpy(), best.values.exp().cpu().numpy())
