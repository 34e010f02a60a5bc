"""The whole translation model: encoder + decoder, RNNsearch or RNNencdec by config."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from model.core.config import ModelConfig
from model.corpus.vocab import PAD
from model.core.decodable import AlphaFn, Decodable, ModelDescription, Step
from model.network.decoder import Decoder, EncoderState
from model.network.encoder import Encoder
from model.speed.bf16 import autocast

OUTPUT_ROWS = 256  # positions whose (rows, V) logits ``forced_logprobs`` forms at once: 6 MB, kept in cache


class NMTModel(nn.Module, Decodable):
    """RNNsearch (``arch="rnnsearch"``) or RNNencdec (``arch="rnnencdec"``), paper Appendix A.

    Implements the decoding interface (model/core/decodable.py): its Memory is an ``EncoderState``
    and its decoder state is s_i (batch, n).
    """

    def __init__(self, config: ModelConfig, initialise: bool = True):
        """``initialise=False`` leaves the weights as the layers made them, for a model whose
        weights are about to be replaced (a checkpoint being loaded)."""
        super().__init__()
        config.validate()
        self.config = config
        self.encoder = Encoder(config.src_vocab_size, config.emb_dim, config.hidden, config.dropout, config.layer_norm,
                               initialise)
        self.decoder = Decoder(config.tgt_vocab_size, config.emb_dim, config.hidden, config.align_dim,
                               config.maxout, config.dropout,
                               attention=config.attention if config.arch == "rnnsearch" else None,
                               layer_norm=config.layer_norm, initialise=initialise)
        if initialise:
            self.reset_parameters()

    @property
    def has_attention(self) -> bool:
        return self.decoder.attention is not None

    @property
    def description(self) -> ModelDescription:
        cfg = self.config
        if cfg.arch == "rnnencdec":
            summary = f"bidirectional GRU encoder ({cfg.hidden} units), GRU decoder on one fixed context vector"
        else:
            summary = (f"bidirectional GRU encoder ({cfg.hidden} units), GRU decoder, {cfg.attention} attention "
                       f"({cfg.align_dim} units)")
        return ModelDescription(cfg.arch, self.has_attention, cfg.attention if self.has_attention else "",
                                summary=summary)

    def reset_parameters(self) -> None:
        """Recurrent matrices orthogonal (per gate block) as in the paper; the alignment model as
        in the paper (near-uniform attention); other matrices Xavier-uniform rather than the
        paper's N(0, 0.01^2), which trains faster with Adam; biases zero."""
        recurrent = ("weight_hh_l0", "weight_hh_l0_reverse", "U_rz.weight", "U.weight")
        for name, param in self.named_parameters():
            if ".ln_" in name:  # layer-norm gain 1, bias 0
                nn.init.ones_(param) if name.endswith("gain") else nn.init.zeros_(param)
            elif name.endswith(recurrent):
                for block in param.data.split(self.config.hidden, dim=0):
                    nn.init.orthogonal_(block)
            elif param.dim() >= 2:
                nn.init.xavier_uniform_(param)
            else:
                nn.init.zeros_(param)
        if self.has_attention:
            self.decoder.attention.reset_parameters()  # additive: the paper's near-uniform start

    def encode(self, src: torch.Tensor, src_len: torch.Tensor, embedded: Optional[torch.Tensor] = None,
               bf16: bool = False) -> EncoderState:
        """src (batch, src_len), src_len (batch,) -> everything the decoder needs, in fp32.
        ``embedded`` (batch, src_len, m) replaces E x (saliency differentiates through it).
        ``bf16``: the per-sentence products run under bf16 autocast, and on CPU so do the
        encoder GRU's matrix products (its state and gates stay fp32). Not on CUDA, where
        autocast may hand cuDNN's GRU to fp16, which would need a gradient scaler."""
        with autocast(src.device, bf16 and src.device.type == "cpu"):
            if embedded is None:
                annotations, summary = self.encoder(src, src_len)
            else:
                annotations, summary = self.encoder.encode_embedded(embedded, src_len)
        with autocast(src.device, bf16):
            enc = self.decoder.prepare(annotations, src != PAD, summary)
        return enc.float() if bf16 else enc

    def forward(self, src, src_len, tgt_in, packed: bool = False, bf16: bool = False):
        """Teacher-forced logits (batch, T, V) and attention (batch, T, src_len) or None.

        ``packed=True`` (training): the maxout features t (N, l) of the N real target positions,
        whose logits are ``decoder.W_o(t)`` (model/speed/fused_loss.py fuses W_o with the loss), and their
        positions (N,) in the flattened (batch * T) grid; see ``Decoder.packed``.
        ``bf16`` (training, packed only): every product over whole sentences runs in bfloat16
        (the encoder GRU's products on CPU, U_a h, the decoder's input gates and deep output);
        the decoder's step-by-step recurrence stays fp32: there autocast's casts cost more
        than they save.
        """
        if packed:
            features, _, positions = self.decoder.packed(tgt_in, self.encode(src, src_len, bf16=bf16), bf16)
            return features, positions
        return self.decoder(tgt_in, self.encode(src, src_len))

    # ---- the decoding interface (model/core/decodable.py)

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        return self.encoder.embed(src)  # (batch, src_len, m)

    def init_state(self, memory: EncoderState) -> torch.Tensor:
        s0 = self.decoder.init_state(memory.summary)  # s_0 (batch, n)
        return s0 if memory.beam == 1 else s0.repeat_interleave(memory.beam, 0)  # (batch * k, n)

    def beam_memory(self, memory: EncoderState, beam: int) -> EncoderState:
        """Each sentence's encoder state, read by its ``beam`` hypotheses without being copied
        (``EncoderState.for_beams``)."""
        return memory.for_beams(beam)

    def step(self, y_prev: torch.Tensor, state: torch.Tensor, memory: EncoderState,
             alpha_override: Optional[torch.Tensor] = None, alpha_fn: Optional[AlphaFn] = None) -> Step:
        return self.decoder.step(y_prev, state, memory, alpha_override, alpha_fn)

    def reorder(self, state: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return state.index_select(0, index)

    def advance(self, y_prev: torch.Tensor, state: torch.Tensor, memory: EncoderState):
        s, features, _, _ = self.decoder.recur(y_prev, state, memory)
        return s, features  # the deep output waits until read_out asks for some rows

    def read_out(self, readout: tuple, rows: torch.Tensor) -> torch.Tensor:
        return self.decoder.output_logprobs(readout, rows)

    @property
    def target_embedding(self) -> nn.Module:
        return self.decoder.embed  # E y_{i-1} in Decoder.step

    def teacher_forced(self, memory: EncoderState, tgt_in: torch.Tensor, input_scale: Optional[torch.Tensor] = None):
        """The whole-sentence path (``Decoder.forward``): log-probabilities (batch, T, V) and
        alpha (batch, T, src_len) | None, zeros after each row's end; ``input_scale`` (batch, T)
        scales each E y_{i-1}."""
        logits, alpha = self.decoder(tgt_in, memory, input_scale)
        return torch.log_softmax(logits.float(), dim=-1), alpha

    def forced_logprobs(self, memory: EncoderState, tgt_in: torch.Tensor, picks: torch.Tensor,
                        input_scale: Optional[torch.Tensor] = None) -> torch.Tensor:
        """``Decodable.forced_logprobs`` on the real positions only: log p(id) = logit(id) -
        logsumexp(logits), without the (batch, T, V) distribution (its zero-fill, copy and
        log-softmax were a quarter of a re-scoring). Zeros after each row's end."""
        features, _, positions = self.decoder.packed(tgt_in, memory, input_scale=input_scale)
        rows = picks.flatten(0, 1).index_select(0, positions)  # (N, K)
        found = torch.cat([self._picked(f, r) for f, r in zip(features.split(OUTPUT_ROWS), rows.split(OUTPUT_ROWS))])
        batch, T = tgt_in.shape
        return found.new_zeros(batch * T, picks.size(-1)).index_copy(0, positions, found).unflatten(0, (batch, T))

    def _picked(self, features: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """log p of ``ids`` (n, K) from maxout features t_i (n, l), a few rows at a time so the
        (n, V) logits stay in cache."""
        logits = self.decoder.W_o(features).float()  # (n, V)
        return logits.gather(1, ids) - torch.logsumexp(logits, dim=-1, keepdim=True)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
