"""The Transformer encoder-decoder (Vaswani et al. 2017, Section 3), through the decoding interface.

After Bahdanau et al., attention stopped being an add-on to recurrent networks and became the
whole network: every layer of the encoder reads every source position at once (self-attention),
and every decoder layer reads the words already written (masked self-attention) and the
source (cross-attention, the descendant of RNNsearch's alignment model), each with h heads.

    encoder layer:  x <- x + SelfAttention(LN(x));     x <- x + FFN(LN(x))
    decoder layer:  x <- x + MaskedSelfAttention(LN(x));  x <- x + CrossAttention(LN(x), enc);
                    x <- x + FFN(LN(x))
    FFN(x) = W_2 max(0, W_1 x + b_1) + b_2                                      (Section 3.3, eq. 2)
    input = sqrt(d_model) E x + PE,  PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),
                                      PE(pos, 2i+1) = cos(...)                (Sections 3.4-3.5)
    p(y_i) = softmax(W_o LN(x_i) + b_o), W_o tied to the target embedding E   (Section 3.4)

Deviations from the paper, said here, in the README and in every card:
- Pre-norm: each sub-layer reads LN(x) and adds its output to x, with one more LN after each
  stack (Wang et al. 2019; what Joey NMT and tensor2tensor default to). The paper's post-norm
  LN(x + Sublayer(x)) needs a long learning-rate warm-up; pre-norm trains with the project's
  recipe and a short one.
- The source and target embeddings are not shared: the everyday pairs have one SentencePiece
  vocabulary per language. The target embedding and the output layer are (``TiedOutput``).
- No dropout on the attention weights, only on the embeddings and each sub-layer's output.

What the app reads: ``step`` returns every decoder layer's cross-attention, each head's weights
over the source, as ``Step.cross_attention`` (batch, layers, heads, src_len). Views that take one
matrix read ``Step.alpha``: the mean over heads of layer ``ModelConfig.alignment_layer`` (the
card says which layer and why). Incremental decoding keeps each layer's self-attention keys and
values of the tokens written so far (``DecoderCache``), so a step costs one token's work. A beam
search's k hypotheses of a sentence read its one copy of the cross-attention keys and values
(``TransformerMemory.for_beams``, ``DecoderLayer.cross``).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace
from typing import Optional

import torch
from torch import nn

from model.core.anatomy import CROSS, DECODER_SELF, ENCODER, Anatomy, HeadMask
from model.core.config import ModelConfig
from model.core.decodable import AlphaFn, Decodable, ModelDescription, Step, whole_beams
from model.corpus.vocab import PAD
from model.network.embedding import embedding, sinusoids  # noqa: F401  (sinusoids: also read from here)
from model.network.kv_cache import KeyValueCache
from model.network.multi_head_attention import MultiHeadAttention
from model.network.transformer_anatomy import take_apart
from model.speed.bf16 import autocast
from model.speed.rand_dropout import Dropout

NORM = "pre"  # where LayerNorm sits (module docstring)


class FeedForward(nn.Module):
    """FFN(x) = W_2 max(0, W_1 x + b_1) + b_2, applied to each position alike (eq. 2)."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.W_2(torch.relu(self.W_1(x)))


class EncoderLayer(nn.Module):
    """Self-attention over the source, then the feed-forward network, each pre-normed."""

    def __init__(self, d_model: int, heads: int, d_ff: int, dropout: float):
        super().__init__()
        self.ln_self, self.self_attention = nn.LayerNorm(d_model), MultiHeadAttention(d_model, heads)
        self.ln_ff, self.ff = nn.LayerNorm(d_model), FeedForward(d_model, d_ff)
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x (batch, src_len, d_model), mask (batch, 1, src_len) -> (batch, src_len, d_model)."""
        h = self.ln_self(x)
        k, v = self.self_attention.keys_values(h)
        x = x + self.dropout(self.self_attention.attend(h, k, v, mask, need_weights=False)[0])
        return x + self.dropout(self.ff(self.ln_ff(x)))


class DecoderLayer(nn.Module):
    """Masked self-attention over the words written so far, cross-attention over the source,
    then the feed-forward network, each pre-normed."""

    def __init__(self, d_model: int, heads: int, d_ff: int, dropout: float):
        super().__init__()
        self.ln_self, self.self_attention = nn.LayerNorm(d_model), MultiHeadAttention(d_model, heads)
        self.ln_cross, self.cross_attention = nn.LayerNorm(d_model), MultiHeadAttention(d_model, heads)
        self.ln_ff, self.ff = nn.LayerNorm(d_model), FeedForward(d_model, d_ff)
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor, cache: Optional[KeyValueCache],
                self_mask: Optional[torch.Tensor], cross_kv: tuple[torch.Tensor, torch.Tensor], src_mask: torch.Tensor,
                need_weights: bool, weights_fn=None, beam: int = 1):
        """x (batch, q_len, d_model): the q_len newest target positions. Self-attention reads
        the keys and values in ``cache`` (the t positions before, None for none) and x's own,
        under ``self_mask`` (q_len, t + q_len) | None; cross-attention reads the source's
        ``cross_kv`` (each (batch / beam, heads, src_len, d_k), each row read by ``beam`` rows of
        x) under ``src_mask`` (batch / beam, 1, src_len). Returns x, the cross-attention weights
        (batch, heads, q_len, src_len) | None without ``need_weights``, and the cache with x's
        keys and values appended (the next step's; None without a cache)."""
        h = self.ln_self(x)
        keys, values = self.self_attention.keys_values(h)  # (batch, heads, q_len, d_k) each
        if cache is not None:
            cache = cache.append(keys, values)
            keys, values = cache.keys, cache.values  # (batch, heads, t + q_len, d_k) each
        mask = None if self_mask is None else self_mask.unsqueeze(0)  # (1, q_len, t + q_len)
        x = x + self.dropout(self.self_attention.attend(h, keys, values, mask, need_weights=False)[0])
        out, weights = self.cross(self.ln_cross(x), cross_kv, src_mask, need_weights, weights_fn, beam)
        x = x + self.dropout(out)
        return x + self.dropout(self.ff(self.ln_ff(x))), weights, cache

    def cross(self, h: torch.Tensor, cross_kv: tuple[torch.Tensor, torch.Tensor], src_mask: torch.Tensor,
              need_weights: bool, weights_fn, beam: int):
        """Cross-attention of h (rows, q_len, d_model) over the source. With ``beam`` k > 1 each
        row of ``cross_kv`` (rows / k, heads, src_len, d_k) serves k consecutive rows (a beam
        search's hypotheses of one sentence): a sentence's k rows are read as one row of k * q_len
        queries, so its keys and values are read once instead of copied per hypothesis. Returns
        (rows, q_len, d_model) and the weights (rows, heads, q_len, src_len) | None."""
        attention = self.cross_attention
        if beam == 1:
            return attention.attend(h, *cross_kv, src_mask, need_weights, weights_fn)
        rows, q_len = h.shape[:2]
        edit = None if weights_fn is None else lambda w: _by_sentence(weights_fn(_by_row(w, beam)), beam)  # noqa: E731
        out, weights = attention.attend(h.reshape(rows // beam, beam * q_len, -1), *cross_kv, src_mask, need_weights, edit)
        return out.reshape(rows, q_len, -1), None if weights is None else _by_row(weights, beam)


def _by_row(weights: torch.Tensor, beam: int) -> torch.Tensor:
    """(sentences, heads, beam * q_len, src_len) -> each hypothesis's (sentences * beam, heads, q_len, src_len)."""
    return weights.unflatten(2, (beam, -1)).transpose(1, 2).flatten(0, 1)


def _by_sentence(weights: torch.Tensor, beam: int) -> torch.Tensor:
    """``_by_row``'s inverse: (sentences * beam, heads, q_len, src_len) -> (sentences, heads, beam * q_len, src_len)."""
    return weights.unflatten(0, (-1, beam)).transpose(1, 2).flatten(2, 3)


class TiedOutput(nn.Module):
    """p(y) = softmax(W_o x + b_o) with W_o the target embedding matrix E (Section 3.4, Press &
    Wolf 2017). Only b_o is a parameter of its own, so the weights file holds E once; ``weight``
    reads the embedding's current matrix (also after a checkpoint assigns a new one)."""

    def __init__(self, embed: nn.Embedding):
        super().__init__()
        object.__setattr__(self, "_embed", embed)  # not a submodule: E is the embedding's parameter
        self.bias = nn.Parameter(torch.zeros(embed.num_embeddings, device=embed.weight.device))

    @property
    def weight(self) -> torch.Tensor:
        return self._embed.weight  # (V, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.weight, self.bias)


@dataclass
class TransformerMemory:
    """The encoded source, row-aligned with the decoder's batch, or, with ``beam`` k > 1, one row
    for each k consecutive decoder rows (``for_beams``): what every decoder layer's
    cross-attention reads (``Memory`` of the decoding interface)."""

    states: torch.Tensor  # (batch, src_len, d_model) the encoder stack's output
    mask: torch.Tensor  # (batch, src_len) True at real source tokens
    cross_kv: tuple  # per decoder layer: (K W^K, V W^V) of the states, each (batch, heads, src_len, d_k)
    # (batch, src_len, d_model) W^O [V W^V] of ``alignment_layer``: what each source word adds to that
    # layer's output when its weight is 1 (norm-weighted attention, Kobayashi et al. 2020, reads its norm)
    values: torch.Tensor
    beam: int = 1  # decoder rows reading each row: a beam search's k hypotheses of one sentence

    def select(self, index: torch.Tensor) -> "TransformerMemory":
        """The memory of decoder rows ``index``. With ``beam`` k > 1, ``index`` must take whole
        beams (``whole_beams``): sentence b's row serves its k rows."""
        if self.beam > 1:
            index = whole_beams(index, self.beam)
        pick = lambda t: t.index_select(0, index)  # noqa: E731
        return replace(self, states=pick(self.states), mask=pick(self.mask),
                       cross_kv=tuple((pick(k), pick(v)) for k, v in self.cross_kv), values=pick(self.values))

    def for_beams(self, k: int) -> "TransformerMemory":
        """The memory for k decoder rows per sentence (a beam search's hypotheses, sentence-major),
        without copying: each row's keys and values are read by its k hypotheses
        (``DecoderLayer.cross``), and dropping a finished sentence copies one row instead of k."""
        if self.beam != 1:
            raise ValueError("this memory already serves several beam rows per sentence")
        return replace(self, beam=k)

    @property
    def rows(self) -> int:
        """Decoder rows the memory serves."""
        return self.mask.size(0) * self.beam

    @property
    def src_mask(self) -> torch.Tensor:
        """(batch, 1, src_len): the keys attention may read, for every query."""
        return self.mask.unsqueeze(1)

    @property
    def annotations(self) -> torch.Tensor:
        """(batch, src_len, d_model): the encoder's output for each source word, zeros at padding:
        what the cross-attention reads, the Transformer's counterpart of RNNsearch's h_j (the
        sentence space's words in context, norm-weighted attention's values)."""
        return self.states * self.mask.unsqueeze(-1)

    @property
    def summary(self) -> torch.Tensor:
        """(batch, d_model): the mean of the encoder's outputs over the real source words. A
        Transformer has no one vector its decoder reads; the sentence space stands for the
        sentence with this one."""
        mask = self.mask.unsqueeze(-1).to(self.states.dtype)  # (batch, src_len, 1)
        return (self.states * mask).sum(1) / mask.sum(1)


@dataclass
class DecoderCache:
    """The decoder state: each layer's self-attention keys and values of the tokens read so far
    (y_0 = <s> .. y_{i-1}), each (batch, heads, i, d_k), in buffers written in place
    (model/network/kv_cache.py)."""

    self_kv: tuple  # per decoder layer: its KeyValueCache
    position: int  # i: tokens read so far, the next input's position

    def select(self, index: torch.Tensor) -> "DecoderCache":
        return replace(self, self_kv=tuple(cache.select(index) for cache in self.self_kv))


class TransformerModel(nn.Module, Decodable):
    """Encoder-decoder Transformer sized by ``ModelConfig``: ``emb_dim`` is d_model, ``enc_layers``
    encoder and ``dec_layers`` decoder layers, ``heads`` heads each, ``ff_dim`` inner units of each FFN."""

    def __init__(self, config: ModelConfig, initialise: bool = True):
        super().__init__()
        config.validate()
        if config.arch != "transformer":
            raise ValueError(f"TransformerModel builds arch 'transformer', not {config.arch!r}")
        self.config = config
        d, h, f = config.emb_dim, config.heads, config.ff_dim
        self.d_model = d
        self.encoder = nn.Module()
        self.encoder.embed = embedding(config.src_vocab_size, d, initialise)
        self.encoder.layers = nn.ModuleList(EncoderLayer(d, h, f, config.dropout) for _ in range(config.enc_layers))
        self.encoder.norm = nn.LayerNorm(d)
        self.decoder = nn.Module()
        self.decoder.embed = embedding(config.tgt_vocab_size, d, initialise)
        self.decoder.layers = nn.ModuleList(DecoderLayer(d, h, f, config.dropout) for _ in range(config.dec_layers))
        self.decoder.norm = nn.LayerNorm(d)
        self.decoder.W_o = TiedOutput(self.decoder.embed)
        self.dropout = Dropout(config.dropout)
        if initialise:
            self.reset_parameters()

    def reset_parameters(self) -> None:
        """Matrices Xavier-uniform, embeddings N(0, 1/d_model) (so sqrt(d_model) E x has unit
        scale, as the tied output layer expects), biases zero, LayerNorm gains one."""
        for name, param in self.named_parameters():
            if name.endswith("embed.weight"):
                nn.init.normal_(param, std=self.d_model ** -0.5)
                with torch.no_grad():
                    param[PAD].zero_()
            elif param.dim() >= 2:
                nn.init.xavier_uniform_(param)
            elif ".ln_" in name or ".norm." in name:
                nn.init.ones_(param) if name.endswith("weight") else nn.init.zeros_(param)
            else:
                nn.init.zeros_(param)

    @property
    def attention_layers(self) -> int:
        """Decoder layers, each with its own cross-attention (``Step.cross_attention``'s second axis)."""
        return self.config.dec_layers

    @property
    def alignment_layer(self) -> int:
        """0-based decoder layer whose heads' mean is ``Step.alpha`` (config: 1-based, 0 the last)."""
        return (self.config.alignment_layer or self.config.dec_layers) - 1

    @property
    def description(self) -> ModelDescription:
        cfg = self.config
        summary = (f"Transformer ({NORM}-norm): {cfg.enc_layers} encoder and {cfg.dec_layers} decoder layers, "
                   f"{cfg.heads} heads, d_model {cfg.emb_dim}, feed-forward {cfg.ff_dim}; one attention matrix = layer "
                   f"{self.alignment_layer + 1}'s mean over heads")
        differences = (
            "No recurrence: the encoder's annotations come from self-attention layers over all source words at once, "
            "with sinusoidal position encodings instead of reading order.",
            f"Each of the {cfg.dec_layers} decoder layers has its own cross-attention with {cfg.heads} heads: scaled "
            "dot products softmax(q k / sqrt(d_k)) (Vaswani et al. 2017, eq. 1), not the paper's additive e_ij.",
            "There is no decoder state s_i carried from step to step: each step re-reads every word written so far "
            "(masked self-attention, kept as a cache of keys and values).",
            f"Views that take one attention matrix show layer {self.alignment_layer + 1}'s cross-attention averaged "
            "over its heads.",
        )
        return ModelDescription("transformer", True, "multi-head dot-product", summary=summary, differences=differences)

    # ---- encoder

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        return self.encoder.embed(src)  # (batch, src_len, d_model), E x before the sqrt(d_model) scale

    def _inputs(self, embedded: torch.Tensor, start: int = 0) -> torch.Tensor:
        """sqrt(d_model) E x + PE (Sections 3.4-3.5), dropped out: (batch, len, d_model)."""
        pe = sinusoids(embedded.size(1), self.d_model, embedded.device, start)
        return self.dropout(embedded * math.sqrt(self.d_model) + pe.to(embedded.dtype))

    def encode(self, src: torch.Tensor, src_len: torch.Tensor, embedded: Optional[torch.Tensor] = None,
               bf16: bool = False) -> TransformerMemory:
        """src (batch, src_len), src_len (batch,) -> the encoded source and every decoder layer's
        cross-attention keys and values (formed once per sentence). ``embedded`` (batch,
        src_len, d_model) replaces E x (saliency differentiates through it)."""
        src_len = src_len.to(src.device)
        mask = torch.arange(src.size(1), device=src.device).unsqueeze(0) < src_len.unsqueeze(1)  # (batch, src_len)
        with autocast(src.device, bf16):
            x = self._inputs(self.embed_source(src) if embedded is None else embedded)
            for layer in self.encoder.layers:
                x = layer(x, mask.unsqueeze(1))
            states = self.encoder.norm(x)  # (batch, src_len, d_model)
            cross_kv = tuple(layer.cross_attention.keys_values(states) for layer in self.decoder.layers)
        if bf16:
            states, cross_kv = states.float(), tuple((k.float(), v.float()) for k, v in cross_kv)
        attention = self.decoder.layers[self.alignment_layer].cross_attention
        merged = cross_kv[self.alignment_layer][1].transpose(1, 2).flatten(2)  # (batch, src_len, d_model)
        values = (merged @ attention.W_O.weight.t()) * mask.unsqueeze(-1)  # W^O without its bias
        return TransformerMemory(states, mask, cross_kv, values)

    # ---- whole-sentence decoding (training, teacher forcing)

    def decode(self, tgt_in: torch.Tensor, memory: TransformerMemory, need_weights: bool = False,
               input_scale: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Every position of tgt_in (batch, T) at once, each reading only earlier ones (the
        causal mask) -> the decoder's output LN(x) (batch, T, d_model) and, with
        ``need_weights``, the cross-attention (batch, layers, heads, T, src_len).
        ``input_scale`` (batch, T) scales each E y_{i-1} (explanations' variants)."""
        T = tgt_in.size(1)
        emb = self.decoder.embed(tgt_in)  # (batch, T, d_model)
        if input_scale is not None:
            emb = emb * input_scale.to(emb.dtype).unsqueeze(-1)
        x = self._inputs(emb)
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt_in.device).tril()  # (T, T) position i reads j <= i
        weights = []
        for layer, cross_kv in zip(self.decoder.layers, memory.cross_kv):
            x, w, _ = layer(x, None, causal, cross_kv, memory.src_mask, need_weights)
            weights.append(w)
        return self.decoder.norm(x), torch.stack(weights, 1) if need_weights else None

    def forward(self, src, src_len, tgt_in, packed: bool = False, bf16: bool = False):
        """Teacher-forced logits (batch, T, V) and attention (batch, T, src_len), zeros at padding;
        ``packed=True`` (training): the output features (N, d_model) of the N real target
        positions, whose logits are ``decoder.W_o(features)``, and their positions (N,) in the
        flattened (batch * T) grid (model/training/trainer.py · loss_fn)."""
        memory = self.encode(src, src_len, bf16=bf16)
        real = (tgt_in != PAD).flatten()  # (batch * T,)
        if packed:
            with autocast(src.device, bf16):
                out, _ = self.decode(tgt_in, memory)
            positions = real.nonzero().squeeze(1)
            return out.flatten(0, 1).index_select(0, positions).float(), positions
        out, weights = self.decode(tgt_in, memory, need_weights=True)
        keep = (tgt_in != PAD).unsqueeze(-1)
        return self.decoder.W_o(out) * keep, self._alpha(weights) * keep

    def _alpha(self, weights: torch.Tensor) -> torch.Tensor:
        """The one matrix views show (``Decodable.default_attention``)."""
        return self.default_attention(weights)

    def teacher_forced(self, memory: TransformerMemory, tgt_in: torch.Tensor,
                       input_scale: Optional[torch.Tensor] = None):
        """Log-probabilities (batch, T, V) and alpha (batch, T, src_len) of reading tgt_in, all
        positions at once (equal to ``step`` one token at a time)."""
        out, weights = self.decode(tgt_in, memory, need_weights=True, input_scale=input_scale)
        return torch.log_softmax(self.decoder.W_o(out).float(), dim=-1), self._alpha(weights)

    def forced_cross_attention(self, memory: TransformerMemory, tgt_in: torch.Tensor) -> torch.Tensor:
        """Every layer's and head's cross-attention while reading tgt_in (batch, T):
        (batch, layers, heads, T, src_len). Row i is the step whose input is tgt_in[:, i] and
        whose output is the word after it."""
        return self.decode(tgt_in, memory, need_weights=True)[1]

    # ---- the decoding interface (model/core/decodable.py), one token at a time

    def beam_memory(self, memory: TransformerMemory, beam: int) -> TransformerMemory:
        """Each sentence's memory, read by its ``beam`` hypotheses without being copied
        (``TransformerMemory.for_beams``)."""
        return memory.for_beams(beam)

    def init_state(self, memory: TransformerMemory) -> DecoderCache:
        heads, d_k = self.config.heads, self.d_model // self.config.heads
        return DecoderCache(tuple(KeyValueCache.empty(memory.rows, heads, d_k, memory.states)
                                  for _ in self.decoder.layers), 0)

    def step(self, y_prev: torch.Tensor, state: DecoderCache, memory: TransformerMemory,
             alpha_override: Optional[torch.Tensor] = None, alpha_fn: Optional[AlphaFn] = None) -> Step:
        """One output token from y_prev (batch,): each layer reads the cached keys and values of
        the tokens before and adds y_prev's. ``alpha_override`` (batch, src_len) replaces every
        head's cross-attention weights in layer ``alignment_layer``; ``alpha_fn`` maps each of
        that layer's heads' weights (batch, src_len) to the ones used."""
        x = self._inputs(self.decoder.embed(y_prev).unsqueeze(1), start=state.position)  # (batch, 1, d_model)
        caches, weights = [], []
        for index, (layer, cross_kv, cache) in enumerate(zip(self.decoder.layers, memory.cross_kv, state.self_kv)):
            edit = _weights_edit(alpha_override, alpha_fn) if index == self.alignment_layer else None
            x, w, cache = layer(x, cache, None, cross_kv, memory.src_mask, True, edit, memory.beam)  # i + 1 positions
            caches.append(cache)
            weights.append(w[:, :, 0])  # (batch, heads, src_len)
        cross = torch.stack(weights, 1)  # (batch, layers, heads, src_len)
        logits = self.decoder.W_o(self.decoder.norm(x[:, 0]))  # (batch, V)
        return Step(torch.log_softmax(logits.float(), dim=-1), DecoderCache(tuple(caches), state.position + 1),
                    self.default_attention(cross), None, cross)

    def reorder(self, state: DecoderCache, index: torch.Tensor) -> DecoderCache:
        return state.select(index)

    @property
    def target_embedding(self) -> nn.Module:
        return self.decoder.embed  # E y_{i-1} in ``step`` and ``decode``

    # ---- taken apart (model/core/anatomy.py): the layer-wise explanations

    @property
    def supports_anatomy(self) -> bool:
        return True

    @property
    def attention_heads(self) -> dict:
        cfg = self.config
        return {ENCODER: (cfg.enc_layers, cfg.heads), DECODER_SELF: (cfg.dec_layers, cfg.heads),
                CROSS: (cfg.dec_layers, cfg.heads)}

    def anatomy(self, src: torch.Tensor, tgt_in: torch.Tensor) -> Anatomy:
        return take_apart(self, src, tgt_in)

    def with_heads_masked(self, mask: HeadMask) -> "TransformerModel":
        twin = copy.deepcopy(self)

        def switch(attention: MultiHeadAttention, off: tuple[int, ...]) -> None:
            gate = torch.ones(self.config.heads, device=self.decoder.W_o.bias.device)
            gate[list(off)] = 0.0
            attention.head_gate = gate

        mask.switch_off({ENCODER: (twin.encoder.layers, "self_attention"),
                         DECODER_SELF: (twin.decoder.layers, "self_attention"),
                         CROSS: (twin.decoder.layers, "cross_attention")}, switch)
        return twin

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def _weights_edit(alpha_override: Optional[torch.Tensor], alpha_fn: Optional[AlphaFn]):
    """The what-if's edit of one layer's cross-attention weights (batch, heads, 1, src_len), or None."""
    if alpha_override is None and alpha_fn is None:
        return None

    def edit(weights: torch.Tensor) -> torch.Tensor:
        if alpha_override is not None:
            return alpha_override.to(weights.dtype)[:, None, None, :].expand_as(weights)
        heads = [alpha_fn(weights[:, h, 0]) for h in range(weights.size(1))]  # each (batch, src_len)
        return torch.stack(heads, 1).unsqueeze(2)

    return edit
