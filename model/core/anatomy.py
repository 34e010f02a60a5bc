"""A Transformer's teacher-forced pass taken apart: what the layer-wise explanation methods read.

Every attention sub-layer ("block") of a pre-norm Transformer adds to its input x_i what its heads
read, so its output is a sum of one vector per input token plus a bias:

    y_i = x_i + Σ_h Σ_j w^h_ij W^O_h (W^V_h LN(x_j) + b^V_h) + b^O
        = x_i + Σ_j T_i(x_j) + b^O                   (Ferrando et al. 2022, "Measuring the mixing
                                                      of contextual information", eq. 5-6)

(``head_values[h, j]`` is W^O_h (W^V_h LN(x_j) + b^V_h): what key j adds per unit of head h's
weight). A ``Block`` holds these terms; ``Anatomy`` holds every block of one sentence pair, the
residual stream after each decoder layer (the logit lens reads it) and the functions that carry a
changed block output through the rest of its layer (value zeroing) or the decoder's states to
log-probabilities.

A model that can take itself apart says so with ``Decodable.supports_anatomy``
(model/core/decodable.py); model/explaining/contributions.py and logit_lens.py read it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

ENCODER, DECODER_SELF, CROSS = "encoder", "decoder_self", "cross"
KINDS = (ENCODER, DECODER_SELF, CROSS)  # the three attentions of an encoder-decoder Transformer


@dataclass(frozen=True)
class Block:
    """One attention sub-layer of one sentence pair: y = residual + Σ_h weights_h @ head_values_h + bias."""

    kind: str  # ENCODER, DECODER_SELF or CROSS
    layer: int  # 0-based layer of its stack
    weights: torch.Tensor  # (heads, q_len, k_len) each head's attention, rows summing to 1
    head_values: torch.Tensor  # (heads, k_len, d_model) what key j adds per unit weight of head h
    residual: torch.Tensor  # (q_len, d_model) x_i, the block's input, carried past it
    bias: torch.Tensor  # (d_model,) b^O
    # the rest of the block's layer from changed outputs: (n, q_len, d_model) -> (n, q_len, d_model),
    # the layer's output (the feed-forward sub-layer, and for DECODER_SELF the cross-attention too)
    rest: Callable[[torch.Tensor], torch.Tensor]

    @property
    def terms(self) -> torch.Tensor:
        """(q_len, k_len, d_model) T_i(x_j) = Σ_h w^h_ij head_values[h, j]: what each key adds to each query."""
        return torch.einsum("hqk,hkd->qkd", self.weights, self.head_values)

    @property
    def output(self) -> torch.Tensor:
        """(q_len, d_model) y_i, the block's output (the sum of its terms, residual and bias)."""
        return self.residual + self.terms.sum(1) + self.bias


@dataclass(frozen=True)
class Anatomy:
    """One teacher-forced pass of a sentence pair (S source tokens, T decoder inputs <s> y_1 ..
    y_{T-1}), every attention block in the order computed."""

    encoder: tuple[Block, ...]  # one per encoder layer: queries and keys the S source tokens
    decoder_self: tuple[Block, ...]  # one per decoder layer: T queries, T keys (causal)
    cross: tuple[Block, ...]  # one per decoder layer: T queries, S keys
    decoder_states: torch.Tensor  # (layers + 1, T, d_model) the residual stream: embeddings, then after each layer
    # the model's read-out from a decoder state: (..., d_model) -> (..., V) log-probabilities (final norm,
    # output layer, log-softmax); of the last state, the model's own distribution
    read_out: Callable[[torch.Tensor], torch.Tensor]

    def blocks(self, kind: str) -> tuple[Block, ...]:
        return {ENCODER: self.encoder, DECODER_SELF: self.decoder_self, CROSS: self.cross}[kind]


@dataclass(frozen=True)
class HeadMask:
    """Heads switched off: their output multiplied by 0 before W^O (Michel et al. 2019's ξ_h = 0),
    as (kind, 0-based layer, 0-based head) triples."""

    off: frozenset = frozenset()

    def heads(self, kind: str, layer: int) -> tuple[int, ...]:
        return tuple(sorted(h for k, l, h in self.off if k == kind and l == layer))

    def switch_off(self, stacks: dict, switch: Callable) -> None:
        """``switch(attention, heads)`` for each attention module with heads in this mask:
        ``stacks`` {kind: (the layers, the name of each layer's attention module of that kind)}."""
        for kind, (layers, name) in stacks.items():
            for index, layer in enumerate(layers):
                off = self.heads(kind, index)
                if off:
                    switch(getattr(layer, name), off)
