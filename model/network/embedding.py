"""Word embeddings: the paper's E, one matrix per language (Appendix A: m-dimensional)."""
from __future__ import annotations

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
