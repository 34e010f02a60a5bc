"""This project's Transformer (model/network/transformer.py) taken apart for one sentence pair:
every attention block's weights, per-head value vectors, residual and bias
(model/core/anatomy.py), computed from the layers' own modules in the order ``encode`` and
``decode`` run them, with dropout off.

A block reads LN(x_j) (pre-norm): the paper of ALTI decomposes post-norm layers, whose LayerNorm
comes after the residual sum and is split linearly there; here each LN acts on one token before
the attention, so LN(x_j) belongs to token j alone and the block's output needs no split.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import torch
from torch import nn

from model.core.anatomy import CROSS, DECODER_SELF, ENCODER, Anatomy, Block
from model.network.multi_head_attention import MultiHeadAttention
from model.network.embedding import sinusoids


@dataclass(frozen=True)
class Projections:
    """What a block needs of a multi-head attention module, whichever library built it."""

    W_Q: nn.Module  # d_model -> heads * d_k
    W_K: nn.Module
    W_V: nn.Module
    W_O: nn.Linear  # heads * d_k -> d_model
    heads: int
    d_k: int
    gate: Optional[torch.Tensor] = None  # (heads,) heads switched off, or None


def projections(attention: MultiHeadAttention) -> Projections:
    return Projections(attention.W_Q, attention.W_K, attention.W_V, attention.W_O, attention.heads, attention.d_k,
                       attention.head_gate)


def attention_block(kind: str, layer: int, parts: Projections, query: torch.Tensor, keys_from: torch.Tensor,
                    residual: torch.Tensor, mask: Optional[torch.Tensor], rest: Callable) -> Block:
    """query (q_len, d_model) read by the attention ``parts`` (already normed), keys and values
    formed from keys_from (k_len, d_model) (already normed); mask (q_len, k_len) True where a key
    may be read; ``residual`` (q_len, d_model) what the block adds its output to."""
    heads, d_k = parts.heads, parts.d_k
    q = parts.W_Q(query).view(-1, heads, d_k).transpose(0, 1)  # (heads, q_len, d_k)
    k = parts.W_K(keys_from).view(-1, heads, d_k).transpose(0, 1)  # (heads, k_len, d_k)
    v = parts.W_V(keys_from).view(-1, heads, d_k)  # (k_len, heads, d_k)
    scores = q @ k.transpose(1, 2) / math.sqrt(d_k)  # (heads, q_len, k_len), Vaswani et al. eq. 1
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    W_O = parts.W_O.weight.view(-1, heads, d_k)  # (d_model, heads, d_k): W^O_h is its h-th slice
    head_values = torch.einsum("jhk,dhk->hjd", v, W_O)  # (heads, k_len, d_model)
    if parts.gate is not None:
        head_values = head_values * parts.gate.to(head_values.dtype).view(-1, 1, 1)
    bias = parts.W_O.bias if parts.W_O.bias is not None else torch.zeros_like(residual[0])
    return Block(kind, layer, weights, head_values, residual, bias, rest)


@torch.inference_mode()
def take_apart(model, src: torch.Tensor, tgt_in: torch.Tensor) -> Anatomy:
    """src (S,) and tgt_in (T,) long, on the model's device -> the pair's ``Anatomy``."""
    d = model.d_model
    scale = math.sqrt(d)
    x = model.encoder.embed(src) * scale + sinusoids(src.size(0), d, src.device)  # (S, d_model)
    encoder = []
    for index, layer in enumerate(model.encoder.layers):
        h = layer.ln_self(x)
        ffn = _feed_forward(layer)
        block = attention_block(ENCODER, index, projections(layer.self_attention), h, h, x, None, ffn)
        encoder.append(block)
        x = ffn(block.output.unsqueeze(0))[0]
    states = model.encoder.norm(x)  # (S, d_model) what every cross-attention reads

    y = model.decoder.embed(tgt_in) * scale + sinusoids(tgt_in.size(0), d, tgt_in.device)  # (T, d_model)
    T = tgt_in.size(0)
    causal = torch.ones(T, T, dtype=torch.bool, device=tgt_in.device).tril()  # (T, T)
    decoder_self, cross, stream = [], [], [y]
    for index, layer in enumerate(model.decoder.layers):
        h = layer.ln_self(y)
        ffn = _feed_forward(layer)
        self_block = attention_block(DECODER_SELF, index, projections(layer.self_attention), h, h, y, causal,
                                     _cross_then_ffn(layer, states, ffn))
        after_self = self_block.output
        cross_block = attention_block(CROSS, index, projections(layer.cross_attention), layer.ln_cross(after_self),
                                      states, after_self, None, ffn)
        decoder_self.append(self_block)
        cross.append(cross_block)
        y = ffn(cross_block.output.unsqueeze(0))[0]
        stream.append(y)

    def read_out(z: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return torch.log_softmax(model.decoder.W_o(model.decoder.norm(z)).float(), dim=-1)

    return Anatomy(tuple(encoder), tuple(decoder_self), tuple(cross), torch.stack(stream), read_out)


def _feed_forward(layer) -> Callable[[torch.Tensor], torch.Tensor]:
    """x + FFN(LN(x)) of ``layer``: (n, len, d_model) -> (n, len, d_model)."""

    def rest(x: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return x + layer.ff(layer.ln_ff(x))

    return rest


def _cross_then_ffn(layer, states: torch.Tensor, ffn: Callable) -> Callable[[torch.Tensor], torch.Tensor]:
    """The decoder layer after its self-attention: the cross-attention over ``states`` (S, d_model),
    then the feed-forward sub-layer: (n, T, d_model) -> (n, T, d_model)."""
    keys, values = layer.cross_attention.keys_values(states.unsqueeze(0))  # (1, heads, S, d_k) each

    def rest(y: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            n = y.size(0)
            out, _ = layer.cross_attention.attend(layer.ln_cross(y), keys.expand(n, -1, -1, -1),
                                                  values.expand(n, -1, -1, -1), None, need_weights=False)
            return ffn(y + out)

    return rest
