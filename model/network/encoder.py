"""Bidirectional GRU encoder (paper Appendix A.2.1)."""
from __future__ import annotations

import threading

import torch
from torch import nn

from model.network.embedding import embedding
from model.network.layernorm_gru import LayerNormBiGRU
from model.speed.rand_dropout import Dropout

_PER_THREAD = threading.local()


def one_way_gru(m: int, n: int) -> nn.GRU:
    """A one-way GRU's structure (m inputs, n units) without weights of its own (meta device),
    for ``torch.func.functional_call`` to run with borrowed weights. One per thread:
    functional_call swaps the weights into the module while it runs, so threads decoding at once
    (a server's sessions) must not share it."""
    cache = _PER_THREAD.__dict__.setdefault("grus", {})
    if (m, n) not in cache:
        cache[m, n] = nn.GRU(m, n, batch_first=True, device="meta")
    return cache[m, n]


class Encoder(nn.Module):
    """Reads the source both ways; annotation h_j = [forward h_j ; backward h_j].

    Deviation from the paper (Appendix A.2.1): its GRU applies the reset gate before the
    recurrent product, h~ = tanh(W x + U [r o h]). This encoder runs PyTorch's fused GRU
    kernel, which applies it after: h~ = tanh(W x + b_in + r o (U h + b_hn)) (Cho et al.'s
    other variant, as in cuDNN). Both gate the previous state per unit; the kernel is several
    times faster than a Python loop, and the decoder (decoder.py, ``Decoder.gru``) and the
    layer-normalised GRU (layernorm_gru.py) do follow the paper. Model cards say so too.

    Padding never enters either direction: the backward GRU reads each sentence reversed
    within its own length, so it starts at the sentence's last word, not at the batch's
    longest. (Both directions run on padded batches rather than a PackedSequence: on CPU
    the packed GRU's backward re-zeroes a whole (tokens, 3n) gradient at every time step.)
    """

    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, dropout: float, layer_norm: bool = False,
                 initialise: bool = True):
        super().__init__()
        self.embed = embedding(vocab_size, emb_dim, initialise)
        # nn.GRU is fused and fast; the layer-normalised GRU is a Python loop over time.
        self.rnn = LayerNormBiGRU(emb_dim, hidden) if layer_norm else nn.GRU(emb_dim, hidden, batch_first=True,
                                                                            bidirectional=True)
        self.dropout = Dropout(dropout)

    def forward(self, src: torch.Tensor, src_len: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """src (batch, src_len) ids, src_len (batch,) -> annotations (batch, src_len, 2n)
        with zeros at padding, and final (batch, 2n) = [forward h_Tx ; backward h_1]."""
        return self.encode_embedded(self.dropout(self.embed(src)), src_len)

    def encode_embedded(self, x: torch.Tensor, src_len: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The same from embeddings x (batch, src_len, m); saliency differentiates through this."""
        src_len = src_len.to(x.device)
        mask = torch.arange(x.size(1), device=x.device).unsqueeze(0) < src_len.unsqueeze(1)  # (batch, src_len)
        if isinstance(self.rnn, LayerNormBiGRU):
            return self.rnn(x, mask)
        forward = self.direction(x, "")  # (batch, src_len, n)
        backward = reverse_within(self.direction(reverse_within(x, src_len), "_reverse"), src_len)
        annotations = torch.cat([forward, backward], dim=-1) * mask.unsqueeze(-1)  # (batch, src_len, 2n)
        last = forward[torch.arange(x.size(0), device=x.device), src_len - 1]  # forward h_Tx (batch, n)
        return annotations, torch.cat([last, backward[:, 0]], dim=-1)

    def direction(self, x: torch.Tensor, suffix: str) -> torch.Tensor:
        """One direction of the bidirectional nn.GRU (its ``_l0`` or ``_l0_reverse`` weights)
        run forward over x (batch, len, m) -> (batch, len, n): a one-way nn.GRU called with
        those weights (``torch.func.functional_call``), so the parameters keep nn.GRU's names
        and every checkpoint loads as it is."""
        weights = {f"{name}_l0": getattr(self.rnn, f"{name}_l0{suffix}")
                   for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
        out, _ = torch.func.functional_call(one_way_gru(self.rnn.input_size, self.rnn.hidden_size), weights, (x,))
        return out


def reverse_within(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row's first lengths[b] positions of x (batch, len, d); padding stays put.
    Its own inverse."""
    steps = torch.arange(x.size(1), device=x.device).unsqueeze(0)  # (1, len)
    flipped = lengths.unsqueeze(1) - 1 - steps  # (batch, len)
    index = torch.where(flipped >= 0, flipped, steps)
    return x.gather(1, index.unsqueeze(-1).expand(-1, -1, x.size(2)))
