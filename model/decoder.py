"""GRU decoder with a context vector at every gate, and the maxout deep output (Appendix A.2.2).

RNNsearch forms a new context c_i at each step by attention; RNNencdec uses one fixed
context c (the encoder summary) at every step. Everything else is shared.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import torch
from torch import nn

from .attention import make_attention
from .layernorm_gru import BlockLayerNorm
from .vocab import PAD


@dataclass
class EncoderState:
    """What the decoder needs from the encoder, row-aligned with the decoder's batch."""

    annotations: torch.Tensor  # (batch, src_len, 2n) h_j, zeros at padding
    mask: torch.Tensor  # (batch, src_len) True at real source tokens
    summary: torch.Tensor  # (batch, 2n) [forward h_Tx ; backward h_1]
    keys: Optional[torch.Tensor]  # (batch, src_len, n') U_a h_j, RNNsearch only
    fixed_gates: Optional[torch.Tensor]  # (batch, 3n) C c for RNNencdec's fixed context

    def select(self, index: torch.Tensor) -> "EncoderState":
        """Rows ``index`` of every tensor (to expand for beams or drop finished sentences)."""
        pick = lambda t: None if t is None else t.index_select(0, index)  # noqa: E731
        return replace(self, annotations=pick(self.annotations), mask=pick(self.mask),
                       summary=pick(self.summary), keys=pick(self.keys),
                       fixed_gates=pick(self.fixed_gates))


@dataclass
class Step:
    """One decoder step's outputs (batch rows as in the input)."""

    logprobs: torch.Tensor  # (batch, tgt_vocab) log p(y_i | y_<i, x)
    state: torch.Tensor  # (batch, n) s_i
    alpha: Optional[torch.Tensor]  # (batch, src_len) attention, None for RNNencdec
    energies: Optional[torch.Tensor]  # (batch, src_len) e_ij before the softmax, None for RNNencdec


class Decoder(nn.Module):
    """s_i = GRU(s_{i-1}, E y_{i-1}, c_i); p(y_i) from the maxout deep output of (s_i, E y_{i-1}, c_i).

    Gates (paper A.2.2): r = sigma(W_r Ey + U_r s + C_r c), z = sigma(W_z Ey + U_z s + C_z c),
    s~ = tanh(W Ey + U [r o s] + C c), s_i = (1 - z) o s_{i-1} + z o s~.
    Deep output: t~_i = U_o s_i + V_o E y_{i-1} + C_o c_i, t_i = maxout over pairs, logits = W_o t_i.
    The paper's appendix writes s_{i-1} in t~_i but its Section 3.1 writes g(y_{i-1}, s_i, c_i);
    we feed s_i, as most implementations do.
    """

    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, align_dim: int, maxout: int,
                 dropout: float, attention: Optional[str], layer_norm: bool = False):
        super().__init__()
        n, ctx = hidden, 2 * hidden
        self.hidden, self.maxout = hidden, maxout
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        self.W_s = nn.Linear(n, n)  # s_0 = tanh(W_s backward h_1)
        self.attention = make_attention(attention, n, ctx, align_dim) if attention else None
        self.W = nn.Linear(emb_dim, 3 * n)  # [W_r; W_z; W] E y_{i-1} (+ gate biases)
        self.U_rz = nn.Linear(n, 2 * n, bias=False)  # [U_r; U_z] s_{i-1}
        self.U = nn.Linear(n, n, bias=False)  # U [r o s_{i-1}]
        self.C = nn.Linear(ctx, 3 * n, bias=False)  # [C_r; C_z; C] c_i
        # Optional layer normalisation of each gate's pre-activation (Ba et al. 2016; layernorm_gru.py)
        self.ln_input = BlockLayerNorm(3, n) if layer_norm else None  # LN(W E y + C c), per gate
        self.ln_rz = BlockLayerNorm(2, n) if layer_norm else None  # LN(U_rz s)
        self.ln_u = BlockLayerNorm(1, n) if layer_norm else None  # LN(U [r o s])
        self.U_o = nn.Linear(n, 2 * maxout)
        self.V_o = nn.Linear(emb_dim, 2 * maxout, bias=False)
        self.C_o = nn.Linear(ctx, 2 * maxout, bias=False)
        self.W_o = nn.Linear(maxout, vocab_size)
        self.dropout = nn.Dropout(dropout)

    def init_state(self, summary: torch.Tensor) -> torch.Tensor:
        """summary (batch, 2n) -> s_0 (batch, n) from the backward half (backward h_1)."""
        return torch.tanh(self.W_s(summary[:, self.hidden:]))

    def prepare(self, annotations, mask, summary) -> EncoderState:
        """Per-sentence work done once: U_a h_j for RNNsearch, C c for RNNencdec."""
        annotations = self.dropout(annotations)
        if self.attention is not None:
            return EncoderState(annotations, mask, summary, self.attention.keys(annotations), None)
        return EncoderState(annotations, mask, summary, None, self.C(summary))

    def context(self, s_prev: torch.Tensor, enc: EncoderState, alpha_override=None):
        """-> (c_i (batch, 2n), C c_i (batch, 3n), alpha (batch, src_len) | None, energies | None).

        ``alpha_override`` (batch, src_len) replaces the attention weights (the app's what-if).
        """
        if self.attention is None:
            return enc.summary, enc.fixed_gates, None, None
        energies, alpha = self.attention(s_prev, enc.keys, enc.mask)
        if alpha_override is not None:
            alpha = alpha_override
        c = torch.bmm(alpha.unsqueeze(1), enc.annotations).squeeze(1)  # (batch, 2n)
        return c, self.C(c), alpha, energies

    def gru(self, input_gates: torch.Tensor, s_prev: torch.Tensor) -> torch.Tensor:
        """input_gates = W E y + C c (batch, 3n), s_prev (batch, n) -> s_i (batch, n)."""
        n = self.hidden
        norm = (lambda ln, x: ln(x)) if self.ln_input is not None else (lambda ln, x: x)  # noqa: E731
        input_gates = norm(self.ln_input, input_gates)
        r, z = torch.sigmoid(input_gates[:, : 2 * n] + norm(self.ln_rz, self.U_rz(s_prev))).chunk(2, dim=-1)
        candidate = torch.tanh(input_gates[:, 2 * n:] + norm(self.ln_u, self.U(r * s_prev)))
        return s_prev + z * (candidate - s_prev)  # = (1 - z) s_prev + z candidate

    def readout(self, s: torch.Tensor, emb: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """Deep output for any leading shape (..., n), (..., m), (..., 2n) -> logits (..., V)."""
        t_tilde = self.U_o(s) + self.V_o(emb) + self.C_o(c)  # (..., 2l)
        t = t_tilde.unflatten(-1, (self.maxout, 2)).amax(-1)  # (..., l) maxout over pairs
        return self.W_o(self.dropout(t))

    def step(self, y_prev: torch.Tensor, s_prev: torch.Tensor, enc: EncoderState,
             alpha_override=None) -> Step:
        """One decoding step: y_prev (batch,) ids, s_prev (batch, n)."""
        emb = self.embed(y_prev)  # (batch, m)
        c, c_gates, alpha, energies = self.context(s_prev, enc, alpha_override)
        s = self.gru(self.W(emb) + c_gates, s_prev)
        logprobs = torch.log_softmax(self.readout(s, emb, c).float(), dim=-1)
        return Step(logprobs, s, alpha, energies)

    def forward(self, tgt_in: torch.Tensor, enc: EncoderState):
        """Teacher forcing. tgt_in (batch, T) -> logits (batch, T, V), alpha (batch, T, src_len) | None.

        The fast path of ``step``: E y and W E y for all steps in one product each, the
        deep output for all steps after the loop; only the recurrence stays per step.
        """
        emb = self.dropout(self.embed(tgt_in))  # (batch, T, m)
        # unbind, not input_gates[:, i]: the backward of indexing would allocate and add a
        # full (batch, T, 3n) gradient at every step, O(T^2) memory traffic.
        input_gates = self.W(emb).unbind(1)  # T x (batch, 3n)
        s = self.init_state(enc.summary)
        states, contexts, alphas = [], [], []
        for gates in input_gates:
            c, c_gates, alpha, _ = self.context(s, enc)
            s = self.gru(gates + c_gates, s)
            states.append(s)
            contexts.append(c)
            alphas.append(alpha)
        states = torch.stack(states, dim=1)  # (batch, T, n)
        if self.attention is None:
            contexts = enc.summary.unsqueeze(1).expand(-1, tgt_in.size(1), -1)  # (batch, T, 2n)
            return self.readout(states, emb, contexts), None
        return self.readout(states, emb, torch.stack(contexts, dim=1)), torch.stack(alphas, dim=1)
