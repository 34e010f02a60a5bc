"""Joey NMT 2.x Transformers through the decoding interface, with every layer's and head's cross-attention.

model/foreign/joey/joey.py reads and checks a Joey folder and builds Joey's own ``Model``; for a config
whose encoder and decoder are Transformers it wraps the model in ``JoeyTransformerModel``. The
computation is Joey's own modules, called as Joey's search calls them:

- each step runs Joey's ``TransformerDecoder`` over the whole prefix <s> y_1 .. y_{i-1} (Joey
  keeps no key/value cache) and reads the last position's logits, so the numbers are Joey's;
- Joey's decoder returns only the last layer's cross-attention averaged over heads. A forward
  hook on every layer's ``src_trg_att`` (one per call, on the calling thread only) re-forms each
  head's weights from the module's own layers and inputs, exactly as its ``forward`` computes
  them: softmax(q k^T / sqrt(d_k)) with padding masked (Vaswani et al. 2017, eq. 1);
- the what-if replaces the weights of one layer (``alignment_layer``, the last) the same way:
  the hook returns the module's output recomputed from the replaced weights.

Joey's search forbids <s> and <pad> as outputs (its greedy search for Transformers forbids <s>
only; a trained model gives <pad> next to no probability), and stops where its
``testing`` settings say (``JoeySettings.output_length``).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Callable, Optional

import torch
from torch import nn

from model.core.decodable import (AlphaFn, BeamRule, Decodable, EncoderStates, ModelDescription, OutputLength, Step,
                                  own_thread_hook)
from model.core.anatomy import CROSS, DECODER_SELF, ENCODER, Anatomy, HeadMask
from model.corpus.vocab import BOS, PAD
from model.foreign.joey.anatomy import UNSUPPORTED_POST_NORM, pre_norm, switch_heads_off, take_apart


@dataclass
class JoeyPrefix:
    """The decoder state: the tokens read so far, in Joey's ids (batch, i) (Joey recomputes them all)."""

    ids: torch.Tensor

    def select(self, index: torch.Tensor) -> "JoeyPrefix":
        return JoeyPrefix(self.ids.index_select(0, index))


def head_weights(module: nn.Module, k: torch.Tensor, q: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
    """Each head's attention weights (batch, heads, query_len, key_len) of Joey's
    ``MultiHeadedAttention`` ``module`` for its inputs, formed as its ``forward`` forms them."""
    batch, heads, size = k.size(0), module.num_heads, module.head_size
    keys = module.k_layer(k).view(batch, -1, heads, size).transpose(1, 2)
    queries = module.q_layer(q).view(batch, -1, heads, size).transpose(1, 2) / math.sqrt(size)
    scores = torch.matmul(queries, keys.transpose(2, 3))
    if mask is not None:
        scores = scores.masked_fill(~mask.unsqueeze(1), float("-inf"))
    return module.softmax(scores)


def output_from_weights(module: nn.Module, v: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """The module's output (batch, query_len, d_model) for given weights (batch, heads, query_len, key_len)."""
    batch, heads, size = v.size(0), module.num_heads, module.head_size
    values = module.v_layer(v).view(batch, -1, heads, size).transpose(1, 2)
    context = torch.matmul(weights.to(values.dtype), values).transpose(1, 2).contiguous()
    return module.output_layer(context.view(batch, -1, heads * size))


class JoeyTransformerModel(nn.Module, Decodable):
    """A Joey NMT ``Model`` with Transformer encoder and decoder behind the decoding interface."""

    def __init__(self, joey: nn.Module, description: ModelDescription, output_length: OutputLength,
                 beam_rule: BeamRule, src_map: torch.Tensor, tgt_map: torch.Tensor):
        """``src_map`` / ``tgt_map``: this project's ids -> Joey's (and back: each is its own inverse)."""
        super().__init__()
        self.joey, self._description, self._output_length, self._beam_rule = joey, description, output_length, beam_rule
        self.register_buffer("src_map", src_map, persistent=False)
        self.register_buffer("tgt_map", tgt_map, persistent=False)
        never = torch.zeros(tgt_map.numel(), dtype=torch.bool)
        never[[BOS, PAD]] = True  # Joey's beam search never emits <s> or <pad>
        self.register_buffer("never_emitted", never, persistent=False)

    @property
    def description(self) -> ModelDescription:
        return self._description

    @property
    def output_length(self) -> OutputLength:
        return self._output_length

    @property
    def beam_rule(self) -> BeamRule:
        return self._beam_rule  # Joey's own beam search and length penalty

    @property
    def attention_layers(self) -> int:
        return len(self.joey.decoder.layers)

    @property
    def target_embedding(self) -> nn.Module:
        return self.joey.trg_embed

    # ---- encoder

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        return self.joey.src_embed(self.src_map[src])  # (batch, src_len, d_model), Joey's scale included

    def encode(self, src: torch.Tensor, src_len: torch.Tensor, embedded: Optional[torch.Tensor] = None
               ) -> EncoderStates:
        mask = src != PAD  # (batch, src_len)
        emb = self.embed_source(src) if embedded is None else embedded
        states, _ = self.joey.encoder(emb, src_len, mask.unsqueeze(1))
        return EncoderStates(states, mask)

    # ---- decoder

    def _run(self, ids: torch.Tensor, memory: EncoderStates, edit: Optional[Callable] = None
             ) -> tuple[torch.Tensor, torch.Tensor]:
        """Joey's decoder over ``ids`` (batch, T) in Joey's ids, as its search runs it: logits
        (batch, T, V) in Joey's ids and every layer's heads' cross-attention (batch, layers, heads,
        T, src_len). ``edit(weights) -> weights`` replaces the alignment layer's weights."""
        layers, found = self.joey.decoder.layers, {}
        handles = []
        for index, layer in enumerate(layers):
            record = self._recorder(index, found, edit if index == self.alignment_layer else None)
            handles.append(own_thread_hook(layer.src_trg_att, record, with_kwargs=True))
        try:
            trg_mask = memory.mask.new_ones([1, 1, 1])  # Joey's search: the decoder adds the causal mask
            logits, _, _, _ = self.joey.decoder(trg_embed=self.joey.trg_embed(ids), encoder_output=memory.states,
                                                encoder_hidden=None, src_mask=memory.mask.unsqueeze(1),
                                                unroll_steps=None, hidden=None, trg_mask=trg_mask)
        finally:
            for handle in handles:
                handle.remove()
        return logits, torch.stack([found[i] for i in range(len(layers))], 1)

    @staticmethod
    def _recorder(index: int, found: dict, edit: Optional[Callable]):
        """A forward hook (with the module's keyword inputs) keeping layer ``index``'s head weights
        in ``found``, and, with ``edit``, returning the output of the edited weights."""

        def hook(module, args, kwargs, output):
            k, v, q = (list(args) + [kwargs.get(n) for n in ("k", "v", "q")][len(args):])[:3]
            weights = head_weights(module, k, q, kwargs.get("mask", args[3] if len(args) > 3 else None))
            if edit is None:
                found[index] = weights
                return None
            weights = edit(weights)
            found[index] = weights
            return output_from_weights(module, v, weights), output[1]

        return hook

    # ---- taken apart (model/core/anatomy.py): the layer-wise explanations, pre-norm models only

    @property
    def supports_anatomy(self) -> bool:
        return pre_norm(self.joey)

    @property
    def attention_heads(self) -> dict:
        enc, dec = self.joey.encoder.layers, self.joey.decoder.layers
        return {ENCODER: (len(enc), enc[0].src_src_att.num_heads), DECODER_SELF: (len(dec), dec[0].trg_trg_att.num_heads),
                CROSS: (len(dec), dec[0].src_trg_att.num_heads)}

    def anatomy(self, src: torch.Tensor, tgt_in: torch.Tensor) -> Anatomy:
        if not self.supports_anatomy:
            raise NotImplementedError(UNSUPPORTED_POST_NORM)
        return take_apart(self.joey, self.src_map[src], self.tgt_map[tgt_in], self._read_out)

    def _read_out(self, z: torch.Tensor) -> torch.Tensor:
        """A decoder state (..., d_model) read as Joey's last layer is: this project's log-probabilities."""
        decoder = self.joey.decoder
        with torch.inference_mode():
            x = decoder.layer_norm(z) if decoder.layer_norm is not None else z
            logprobs = torch.log_softmax(decoder.output_layer(x).float(), dim=-1).index_select(-1, self.tgt_map)
            return logprobs.masked_fill(self.never_emitted, float("-inf"))

    def with_heads_masked(self, mask: HeadMask) -> "JoeyTransformerModel":
        if not self.supports_anatomy:
            raise NotImplementedError(UNSUPPORTED_POST_NORM)
        twin = copy.deepcopy(self)
        mask.switch_off({ENCODER: (twin.joey.encoder.layers, "src_src_att"),
                         DECODER_SELF: (twin.joey.decoder.layers, "trg_trg_att"),
                         CROSS: (twin.joey.decoder.layers, "src_trg_att")}, switch_heads_off)
        return twin

    def init_state(self, memory: EncoderStates) -> JoeyPrefix:
        return JoeyPrefix(memory.mask.new_zeros((memory.mask.size(0), 0), dtype=torch.long))

    def step(self, y_prev: torch.Tensor, state: JoeyPrefix, memory: EncoderStates,
             alpha_override: Optional[torch.Tensor] = None, alpha_fn: Optional[AlphaFn] = None) -> Step:
        """The next token after the prefix and y_prev (batch,). ``alpha_override`` (batch, src_len)
        replaces every head's weights of the alignment layer at this step; ``alpha_fn`` maps them
        at every position of the prefix (the decoder recomputes them all each step)."""
        ids = torch.cat([state.ids, self.tgt_map[y_prev].unsqueeze(1)], 1)  # (batch, i + 1) Joey's ids
        logits, cross = self._run(ids, memory, _edit(alpha_override, alpha_fn))
        logprobs = torch.log_softmax(logits[:, -1].float(), dim=-1).index_select(1, self.tgt_map)
        last = cross[:, :, :, -1].float()  # (batch, layers, heads, src_len)
        return Step(logprobs.masked_fill(self.never_emitted, float("-inf")), JoeyPrefix(ids),
                    self.default_attention(last), None, last)  # Joey's own choice, Decodable's default: the last layer

    def reorder(self, state: JoeyPrefix, index: torch.Tensor) -> JoeyPrefix:
        return state.select(index)

    def forced_cross_attention(self, memory: EncoderStates, tgt_in: torch.Tensor) -> torch.Tensor:
        """(batch, layers, heads, T, src_len): every layer's and head's cross-attention reading tgt_in."""
        return self._run(self.tgt_map[tgt_in], memory)[1].float()


def _edit(alpha_override: Optional[torch.Tensor], alpha_fn: Optional[AlphaFn]) -> Optional[Callable]:
    """The what-if's edit of a layer's weights (batch, heads, T, src_len), or None."""
    if alpha_override is None and alpha_fn is None:
        return None

    def edit(weights: torch.Tensor) -> torch.Tensor:
        if alpha_override is not None:  # this step only: the last query position
            weights = weights.clone()
            weights[:, :, -1] = alpha_override.to(weights.dtype).unsqueeze(1)
            return weights
        rows = [alpha_fn(weights[:, h, t]) for h in range(weights.size(1)) for t in range(weights.size(2))]
        return torch.stack(rows, 1).view_as(weights)

    return edit
