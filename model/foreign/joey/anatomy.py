"""A Joey NMT 2.x Transformer taken apart for one sentence pair (model/core/anatomy.py), from Joey's
own modules in the order its encoder and decoder run them, dropout off: the layer-wise
explanations (ALTI+, value zeroing, rollout, the logit lens) read it as they read this project's
Transformer (model/network/transformer_anatomy.py).

Only pre-norm Joey Transformers (``layer_norm: pre``) can be taken apart so. In a post-norm layer
the LayerNorm comes after the residual sum; ALTI's papers split it linearly over the sum's terms,
which is not done here, and such a model is told so (``UNSUPPORTED_POST_NORM``).

Joey scales the residual by ``alpha`` (1 unless its config says otherwise): a block's residual
is alpha x.
"""
from __future__ import annotations

from typing import Callable

import torch

from model.core.anatomy import CROSS, DECODER_SELF, ENCODER, Anatomy
from model.network.transformer_anatomy import Projections, attention_block

UNSUPPORTED_POST_NORM = ("this Joey NMT Transformer is post-norm (its LayerNorm comes after each residual sum), "
                         "and only pre-norm layers are taken apart here")


def joey_projections(attention) -> Projections:
    """Joey's ``MultiHeadedAttention``: its q/k/v layers and output layer (and the heads a copy
    switched off, ``switch_heads_off``)."""
    return Projections(attention.q_layer, attention.k_layer, attention.v_layer, attention.output_layer,
                       attention.num_heads, attention.head_size, getattr(attention, "head_gate", None))


def switch_heads_off(attention, heads) -> None:
    """Joey's ``attention`` (on a copy of a model) with ``heads`` switched off: its output layer
    reads their part of the context as 0 (a forward pre-hook), as this project's head gate does."""
    gate = torch.ones(attention.num_heads, device=attention.output_layer.weight.device)
    gate[list(heads)] = 0.0
    attention.head_gate = gate
    per_unit = gate.repeat_interleave(attention.head_size)  # (heads * head_size,)

    def hook(_module, args):
        return (args[0] * per_unit.to(args[0].dtype),) + tuple(args[1:])

    attention.output_layer.register_forward_pre_hook(hook)


def pre_norm(joey) -> bool:
    """Whether every layer of the Joey model normalises before its sub-layers."""
    layers = [*joey.encoder.layers, *joey.decoder.layers]
    return bool(layers) and all(getattr(layer, "_layer_norm_position", "post") == "pre" for layer in layers)


@torch.inference_mode()
def take_apart(joey, src_joey: torch.Tensor, tgt_in_joey: torch.Tensor,
               read_out: Callable[[torch.Tensor], torch.Tensor]) -> Anatomy:
    """src_joey (S,) and tgt_in_joey (T,) in Joey's ids -> the pair's ``Anatomy``; ``read_out``
    maps a decoder state (..., d_model) to this project's log-probabilities."""
    x = joey.encoder.pe(joey.src_embed(src_joey.unsqueeze(0)))[0]  # (S, d_model): Joey's scale and positions
    encoder = []
    for index, layer in enumerate(joey.encoder.layers):
        h = layer.layer_norm(x)
        block = attention_block(ENCODER, index, joey_projections(layer.src_src_att), h, h, layer.alpha * x, None,
                                _feed_forward(layer))
        encoder.append(block)
        x = block.rest(block.output.unsqueeze(0))[0]
    states = joey.encoder.layer_norm(x) if joey.encoder.layer_norm is not None else x  # (S, d_model)

    y = joey.decoder.pe(joey.trg_embed(tgt_in_joey.unsqueeze(0)))[0]  # (T, d_model)
    T = tgt_in_joey.size(0)
    causal = torch.ones(T, T, dtype=torch.bool, device=y.device).tril()
    decoder_self, cross, stream = [], [], [y]
    for index, layer in enumerate(joey.decoder.layers):
        h = layer.x_layer_norm(y)
        self_block = attention_block(DECODER_SELF, index, joey_projections(layer.trg_trg_att), h, h, layer.alpha * y,
                                     causal, _cross_then_ffn(layer, states))
        after_self = self_block.output
        cross_block = attention_block(CROSS, index, joey_projections(layer.src_trg_att), layer.dec_layer_norm(after_self),
                                      states, layer.alpha * after_self, None, _feed_forward(layer))
        decoder_self.append(self_block)
        cross.append(cross_block)
        y = cross_block.rest(cross_block.output.unsqueeze(0))[0]
        stream.append(y)
    return Anatomy(tuple(encoder), tuple(decoder_self), tuple(cross), torch.stack(stream), read_out)


def _feed_forward(layer) -> Callable[[torch.Tensor], torch.Tensor]:
    """Joey's position-wise feed-forward sub-layer (its own LayerNorm and residual inside)."""

    def rest(x: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return layer.feed_forward(x)

    return rest


def _cross_then_ffn(layer, states: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """A Joey decoder layer after its self-attention: (n, T, d_model) -> (n, T, d_model)."""

    def rest(y: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            memory = states.unsqueeze(0).expand(y.size(0), -1, -1)
            out, _ = layer.src_trg_att(memory, memory, layer.dec_layer_norm(y), mask=None)
            return layer.feed_forward(out + layer.alpha * y)

    return rest
