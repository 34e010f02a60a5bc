"""Bidirectional GRU encoder (paper Appendix A.2.1)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .layernorm_gru import LayerNormBiGRU
from .vocab import PAD


class Encoder(nn.Module):
    """Reads the source both ways; annotation h_j = [forward h_j ; backward h_j].

    Sequences are packed so padding never enters either direction: the backward
    GRU starts at each sentence's own last word, not at the batch's longest.
    """

    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, dropout: float, layer_norm: bool = False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        # nn.GRU is fused and fast; the layer-normalised GRU is a Python loop over time.
        self.rnn = LayerNormBiGRU(emb_dim, hidden) if layer_norm else nn.GRU(emb_dim, hidden, batch_first=True,
                                                                            bidirectional=True)
        self.dropout = nn.Dropout(dropout)

    def forward(self, src: torch.Tensor, src_len: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """src (batch, src_len) ids, src_len (batch,) -> annotations (batch, src_len, 2n)
        with zeros at padding, and final (batch, 2n) = [forward h_Tx ; backward h_1]."""
        return self.encode_embedded(self.dropout(self.embed(src)), src_len)

    def encode_embedded(self, x: torch.Tensor, src_len: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The same from embeddings x (batch, src_len, m); saliency differentiates through this."""
        if isinstance(self.rnn, LayerNormBiGRU):
            mask = torch.arange(x.size(1), device=x.device).unsqueeze(0) < src_len.to(x.device).unsqueeze(1)
            return self.rnn(x, mask)
        packed = pack_padded_sequence(x, src_len.cpu(), batch_first=True, enforce_sorted=False)
        out, h_n = self.rnn(packed)  # h_n: (2, batch, n), [forward last ; backward first]
        annotations, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return annotations, torch.cat([h_n[0], h_n[1]], dim=-1)
