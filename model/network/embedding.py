"""Word embeddings: the paper's E, one matrix per language (Appendix A: m-dimensional), and the
Transformer's sinusoidal position encodings (Vaswani et al. 2017, Section 3.5)."""
from __future__ import annotations

import math

import torch
from torch import nn

from model.corpus.vocab import PAD


def embedding(vocab_size: int, dim: int, initialise: bool = True) -> nn.Embedding:
    """An embedding matrix (vocab_size, dim) whose <pad> row stays zero and gets no gradient.
    ``initialise=False`` leaves its values unset, for weights about to be loaded: it never runs
    normal_, which on the meta device imports torch._dynamo (1.4 s, a quarter of the app's
    cold start)."""
    if initialise:
        return nn.Embedding(vocab_size, dim, padding_idx=PAD)
    return nn.Embedding.from_pretrained(torch.empty(vocab_size, dim), freeze=False, padding_idx=PAD)


def sinusoids(length: int, d_model: int, device: torch.device, start: int = 0) -> torch.Tensor:
    """PE (length, d_model) for positions start .. start + length - 1 (Section 3.5): sines in the
    even dimensions, cosines in the odd ones. Formed where needed (it is a few hundred numbers a
    position), so it has no buffer to go missing when weights load onto the meta device."""
    position = torch.arange(start, start + length, device=device, dtype=torch.float).unsqueeze(1)  # (length, 1)
    rate = torch.exp(torch.arange(0, d_model, 2, device=device, dtype=torch.float) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(length, d_model, device=device)
    pe[:, 0::2] = torch.sin(position * rate)
    pe[:, 1::2] = torch.cos(position * rate[: d_model // 2])
    return pe
