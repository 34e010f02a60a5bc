"""GRU decoder with a context vector at every gate, and the maxout deep output (Appendix A.2.2).

RNNsearch forms a new context c_i at each step by attention; RNNencdec uses one fixed
context c (the encoder summary) at every step. Everything else is shared.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple, Optional

import torch
from torch import nn

from model.corpus.vocab import PAD
from model.core.decodable import Step, whole_beams
from model.network.attention import make_attention
from model.network.embedding import embedding
from model.network.gru import gru_update
from model.network.layernorm_gru import BlockLayerNorm
from model.speed.bf16 import autocast, pad_rows
from model.speed.rand_dropout import Dropout


@dataclass
class EncoderState:
    """What the decoder needs from the encoder, row-aligned with the decoder's batch, or, with
    ``beam`` k > 1, one row for each k consecutive decoder rows (``for_beams``)."""

    annotations: torch.Tensor  # (batch, src_len, 2n) h_j, zeros at padding
    mask: torch.Tensor  # (batch, src_len) True at real source tokens
    summary: torch.Tensor  # (batch, 2n) [forward h_Tx ; backward h_1]
    keys: Optional[torch.Tensor]  # (batch, src_len, n') U_a h_j, RNNsearch only
    fixed_gates: Optional[torch.Tensor]  # (batch, 3n) C c for RNNencdec's fixed context
    # C c_i and C_o c_i from C h_j and C_o h_j (``Decoder.context``): RNNsearch, where no gradient flows
    context_gates: Optional[torch.Tensor] = None  # (batch, src_len, 3n) C h_j
    context_out: Optional[torch.Tensor] = None  # (batch, src_len, 2l) C_o h_j
    fixed_out: Optional[torch.Tensor] = None  # (batch, 2l) C_o c, RNNencdec, where no gradient flows
    beam: int = 1  # decoder rows reading each row: a beam search's k hypotheses of one sentence

    def map(self, fn) -> "EncoderState":
        """``fn`` applied to every tensor (fields that are None stay None)."""
        apply = lambda t: None if t is None else fn(t)  # noqa: E731
        return replace(self, annotations=apply(self.annotations), mask=apply(self.mask), summary=apply(self.summary),
                       keys=apply(self.keys), fixed_gates=apply(self.fixed_gates),
                       context_gates=apply(self.context_gates), context_out=apply(self.context_out),
                       fixed_out=apply(self.fixed_out))

    def select(self, index: torch.Tensor) -> "EncoderState":
        """The state for decoder rows ``index`` (to drop finished sentences, or to copy a sentence
        for each beam hypothesis). With ``beam`` k > 1, ``index`` must take whole beams (k rows
        k * b .. k * b + k - 1 together, in order): sentence b's row serves them."""
        if self.beam > 1:
            index = whole_beams(index, self.beam)
        return self.map(lambda t: t.index_select(0, index))

    def for_beams(self, k: int) -> "EncoderState":
        """The state for k decoder rows per sentence (a beam search's hypotheses, sentence-major),
        without copying: each row is read by its k hypotheses (``Decoder.context``), and dropping
        a finished sentence copies one row instead of k."""
        if self.beam != 1:
            raise ValueError("this state already serves several beam rows per sentence")
        return replace(self, beam=k)

    def float(self) -> "EncoderState":
        """Every floating-point tensor in fp32 (after a bf16 encoder); the mask stays bool."""
        return self.map(lambda t: t.float() if t.is_floating_point() else t)

    def head(self, k: int) -> "EncoderState":
        """The first ``k`` rows, as views (no copy): the sentences still decoding at a step
        (teacher forcing, one decoder row per row)."""
        if self.beam != 1:
            raise ValueError("a state shared by beam rows has no first rows of its own to keep")
        return self.map(lambda t: t[:k])


class Decoder(nn.Module):
    """s_i = GRU(s_{i-1}, E y_{i-1}, c_i); p(y_i) from the maxout deep output of (s_i, E y_{i-1}, c_i).

    Gates (paper A.2.2): r = sigma(W_r Ey + U_r s + C_r c), z = sigma(W_z Ey + U_z s + C_z c),
    s~ = tanh(W Ey + U [r o s] + C c), s_i = (1 - z) o s_{i-1} + z o s~.
    Deep output: t~_i = U_o s_i + V_o E y_{i-1} + C_o c_i, t_i = maxout over pairs, logits = W_o t_i.
    The paper's appendix writes s_{i-1} in t~_i but its Section 3.1 writes g(y_{i-1}, s_i, c_i);
    we feed s_i, as most implementations do.
    """

    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, align_dim: int, maxout: int,
                 dropout: float, attention: Optional[str], layer_norm: bool = False, initialise: bool = True):
        super().__init__()
        n, ctx = hidden, 2 * hidden
        self.hidden, self.maxout = hidden, maxout
        self.embed = embedding(vocab_size, emb_dim, initialise)
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
        self.dropout = Dropout(dropout)

    def init_state(self, summary: torch.Tensor) -> torch.Tensor:
        """summary (batch, 2n) -> s_0 (batch, n) from the backward half (backward h_1)."""
        return torch.tanh(self.W_s(summary[:, self.hidden:]))

    def prepare(self, annotations, mask, summary) -> EncoderState:
        """Per-sentence work done once: U_a h_j for RNNsearch; C c for RNNencdec (and C_o c where no
        gradient flows).

        Where no gradient flows (decoding, re-scoring), RNNsearch also gets C h_j and C_o h_j.
        c_i = sum_j alpha_ij h_j, so C c_i = sum_j alpha_ij C h_j, and the same for C_o: each step
        then weighs src_len precomputed rows instead of multiplying by C (3n x 2n) and C_o
        (2l x 2n). They are formed once per sentence (a beam search's k hypotheses share them,
        ``EncoderState.for_beams``), and a step reads them instead of both matrices, about a
        third of the weights a step reads.
        Where gradients flow (training, gradient explanations) the products stay: there each row
        has annotations of its own, so forming its rows costs as many products as S steps, about
        what the row's own steps cost (gradient x input stops each row at its own output word),
        and training learns C and C_o through the products."""
        if self.attention is not None:
            annotations = self.dropout(annotations)  # RNNencdec never reads them: no dropout to pay
            keys = self.attention.keys(annotations)
            if annotations.requires_grad:
                return EncoderState(annotations, mask, summary, keys, None)
            return EncoderState(annotations, mask, summary, keys, None, self.C(annotations), self.C_o(annotations))
        fixed_out = None if summary.requires_grad else self.C_o(summary)  # as C h_j above: only without gradients
        return EncoderState(annotations, mask, summary, None, self.C(summary), fixed_out=fixed_out)

    def context(self, s_prev: torch.Tensor, enc: EncoderState, alpha_override=None, alpha_fn=None,
                with_c: bool = True) -> "Context":
        """What step i reads from the source (``Context``). ``with_c=False``: c_i itself only where
        its projections need it (the search reads C c_i and C_o c_i alone).

        s_prev has one row per decoder row (batch * k with ``enc.beam`` k); so has everything
        returned. ``alpha_override`` (rows, src_len) replaces the attention weights (the app's
        what-if); ``alpha_fn`` maps the computed weights to the ones used
        (model/explaining/attention_ablation.py).
        """
        k = enc.beam
        if self.attention is None:
            rows = lambda t: t if t is None or k == 1 else t.repeat_interleave(k, 0)  # noqa: E731
            return Context(rows(enc.summary), rows(enc.fixed_gates), rows(enc.fixed_out), None, None)
        energies, alpha = self.attention(s_prev.unflatten(0, (-1, k)), enc.keys, enc.mask)  # (batch, k, src_len)
        energies, alpha = energies.flatten(0, 1), alpha.flatten(0, 1)  # (rows, src_len)
        if alpha_fn is not None:
            alpha = alpha_fn(alpha)
        if alpha_override is not None:
            alpha = alpha_override
        weights = alpha.unflatten(0, (-1, k))  # (batch, k, src_len): a sentence's k rows weigh its h_j at once
        projected = enc.context_gates is not None
        c = torch.bmm(weights, enc.annotations).flatten(0, 1) if with_c or not projected else None  # (rows, 2n)
        if not projected:
            return Context(c, self.C(c), None, alpha, energies)
        gates = torch.bmm(weights, enc.context_gates).flatten(0, 1)  # sum_j alpha_ij C h_j = C c_i
        out = torch.bmm(weights, enc.context_out).flatten(0, 1)  # sum_j alpha_ij C_o h_j = C_o c_i
        return Context(c, gates, out, alpha, energies)

    def gru(self, input_gates: torch.Tensor, s_prev: torch.Tensor) -> torch.Tensor:
        """input_gates = W E y + C c (batch, 3n), s_prev (batch, n) -> s_i (batch, n)."""
        r, z, candidate = self.gates(input_gates, s_prev)
        return gru_update(s_prev, z, candidate)

    def gates(self, input_gates: torch.Tensor, s_prev: torch.Tensor):
        """-> reset r_i, update z_i and candidate s~_i (each (batch, n)); the reset gate acts
        before the recurrent product, U [r o s_{i-1}], as in the paper."""
        n = self.hidden
        norm = (lambda ln, x: ln(x)) if self.ln_input is not None else (lambda ln, x: x)  # noqa: E731
        input_gates = norm(self.ln_input, input_gates)
        r, z = torch.sigmoid(input_gates[:, : 2 * n] + norm(self.ln_rz, self.U_rz(s_prev))).chunk(2, dim=-1)
        candidate = torch.tanh(input_gates[:, 2 * n:] + norm(self.ln_u, self.U(r * s_prev)))
        return r, z, candidate

    def readout(self, s: torch.Tensor, emb: torch.Tensor, c_out: torch.Tensor) -> torch.Tensor:
        """Deep output for any leading shape: s (..., n), E y (..., m), c_out = C_o c (..., 2l)
        -> logits (..., V). The caller forms C_o c so RNNencdec can do it once per sentence."""
        return self.W_o(self.maxout_features(s, emb, c_out))

    def maxout_features(self, s: torch.Tensor, emb: torch.Tensor, c_out: torch.Tensor) -> torch.Tensor:
        """t_i (..., l), after dropout: the deep output up to W_o (training fuses W_o with the loss)."""
        t_tilde = self.U_o(s) + self.V_o(emb) + c_out  # (..., 2l)
        return self.dropout(t_tilde.unflatten(-1, (self.maxout, 2)).amax(-1))  # maxout over pairs

    def step(self, y_prev: torch.Tensor, s_prev: torch.Tensor, enc: EncoderState,
             alpha_override=None, alpha_fn=None) -> Step:
        """One decoding step: y_prev (batch,) ids, s_prev (batch, n)."""
        s, features, alpha, energies = self.recur(y_prev, s_prev, enc, alpha_override, alpha_fn)
        return Step(self.output_logprobs(features, None), s, alpha, energies)

    def recur(self, y_prev: torch.Tensor, s_prev: torch.Tensor, enc: EncoderState, alpha_override=None,
              alpha_fn=None):
        """The step up to the deep output: -> s_i (batch, n), what the deep output reads
        (s_i, E y_{i-1}, the step's ``Context``), alpha | None, energies | None."""
        emb = self.embed(y_prev)  # (batch, m)
        ctx = self.context(s_prev, enc, alpha_override, alpha_fn, with_c=False)
        s = self.gru(self.W(emb) + ctx.gates, s_prev)
        return s, (s, emb, ctx), ctx.alpha, ctx.energies

    def output_logprobs(self, features: tuple, rows: Optional[torch.Tensor]) -> torch.Tensor:
        """log p(y_i) (len(rows), V) from ``recur``'s (s_i, E y_{i-1}, the step's ``Context``), for
        rows ``rows`` (None: every row): C_o c_i is formed for those rows only."""
        s, emb, ctx = features
        if rows is not None:
            s, emb, ctx = s.index_select(0, rows), emb.index_select(0, rows), ctx.rows(rows)
        return torch.log_softmax(self.readout(s, emb, ctx.output(self.C_o)).float(), dim=-1)

    def forward(self, tgt_in: torch.Tensor, enc: EncoderState, input_scale: Optional[torch.Tensor] = None):
        """Teacher forcing, the fast path of ``step``. tgt_in (batch, T): each row's real tokens
        first, then PAD. Returns logits (batch, T, V) and alpha (batch, T, src_len) | None,
        zeros at padding. ``input_scale`` (batch, T) scales each E y_{i-1} (explanations'
        variants). Training uses ``packed``, which skips the scatter."""
        features, alpha, positions = self.packed(tgt_in, enc, input_scale=input_scale)
        logits = self.W_o(features)  # (N, V)
        batch, T = tgt_in.shape
        scatter = lambda x: x.new_zeros(batch * T, x.size(-1)).index_copy(0, positions, x).unflatten(0, (batch, T))  # noqa: E731
        return scatter(logits), None if alpha is None else scatter(alpha)

    def packed(self, tgt_in: torch.Tensor, enc: EncoderState, bf16: bool = False,
               input_scale: Optional[torch.Tensor] = None):
        """Teacher forcing on real positions only -> maxout features t_i (N, l) (logits are
        ``W_o(t)``), alpha (N, src_len) | None and positions (N,) into the flattened (batch * T)
        grid, for the N non-PAD tokens of tgt_in.

        Rows are sorted by length, so step t runs the recurrence on just the k_t sentences
        still going (a prefix of rows, no copies) and no FLOP is spent on padding. E y, W E y
        and the deep output are one product each over all N tokens, outside the loop; ``bf16``
        runs those under bf16 autocast (the loop stays fp32).
        """
        plan = TimeMajor.of(tgt_in)
        enc = enc.select(plan.order)
        emb = self.embed(plan.tokens(tgt_in))  # (N, m)
        if input_scale is not None:
            emb = emb * plan.tokens(input_scale).to(emb.dtype).unsqueeze(-1)
        emb = pad_rows(self.dropout(emb), bf16)  # rows rounded up in bf16
        with autocast(tgt_in.device, bf16):
            input_gates = self.W(emb)[: plan.n_tokens].float()  # (N, 3n) W E y of every step at once
        states, contexts, alphas = self.recurrence(input_gates, plan.active, enc)
        features = self.packed_output(states, contexts, emb, enc, plan, bf16)
        return features, None if self.attention is None else torch.cat(alphas), plan.positions

    def recurrence(self, input_gates: torch.Tensor, active: list[int], enc: EncoderState):
        """The step-by-step part of ``packed``: s_i from s_{i-1}, c_i and W E y_{i-1} for the k_t
        sentences still going at each step (rows sorted longest first). Returns the per-step
        lists of s_i (k_t, n), the contexts as ``Context`` and alpha_i (k_t, src_len) | None."""
        states, contexts, alphas = [], [], []
        s = self.init_state(enc.summary)  # (batch, n)
        going = enc
        for gates, k in zip(input_gates.split(active), active):  # gates (k_t, 3n)
            if k < going.mask.size(0):  # slice only when k changes: each slice's backward
                going = enc.head(k)  # zero-fills a full-size gradient once, not once per step
            s = s[:k]
            ctx = self.context(s, going, with_c=False)
            s = self.gru(gates + ctx.gates, s)
            states.append(s)
            contexts.append(ctx)
            alphas.append(ctx.alpha)
        return states, contexts, alphas

    def packed_output(self, states: list, contexts: list, emb: torch.Tensor, enc: EncoderState,
                      plan: "TimeMajor", bf16: bool) -> torch.Tensor:
        """The deep output of every real token in one product: maxout features t_i (N, l).
        RNNencdec's context is fixed, so its C_o c is formed once per sentence; RNNsearch's C_o
        c_i is formed from every step's c_i in one product, or read from each step's ``Context``
        where ``prepare`` formed C_o h_j."""
        with autocast(emb.device, bf16):
            if self.attention is None:  # C_o c as prepare formed it, or formed here
                fixed = enc.fixed_out if enc.fixed_out is not None else self.C_o(enc.summary)
                c_out = fixed[pad_rows(plan.sorted_rows, bf16)]  # (N, 2l) from (batch, 2l)
            elif contexts and contexts[0].out is not None:
                c_out = pad_rows(torch.cat([ctx.out for ctx in contexts]), bf16)
            else:
                c_out = self.C_o(pad_rows(torch.cat([ctx.c for ctx in contexts]), bf16))
            features = self.maxout_features(pad_rows(torch.cat(states), bf16), emb, c_out)
        return features[: plan.n_tokens].float()


class Context(NamedTuple):
    """What decoder step i reads from the source (``Decoder.context``)."""

    c: Optional[torch.Tensor]  # (batch, 2n) c_i; None where only its projections were asked for
    gates: torch.Tensor  # (batch, 3n) C c_i
    out: Optional[torch.Tensor]  # (batch, 2l) C_o c_i where ``prepare`` formed C_o h_j (or RNNencdec's C_o c)
    alpha: Optional[torch.Tensor]  # (batch, src_len); None for RNNencdec
    energies: Optional[torch.Tensor]  # (batch, src_len) e_ij before the softmax; None for RNNencdec

    def output(self, C_o: nn.Module) -> torch.Tensor:
        """C_o c_i (batch, 2l): read, or formed from c_i by ``C_o``."""
        return self.out if self.out is not None else C_o(self.c)

    def rows(self, index: torch.Tensor) -> "Context":
        """The rows ``index`` of what the deep output reads (c_i, C_o c_i)."""
        pick = lambda t: None if t is None else t.index_select(0, index)  # noqa: E731
        return self._replace(c=pick(self.c), out=pick(self.out))


@dataclass
class TimeMajor:
    """Where a teacher-forced batch's N real target tokens go when rows are sorted longest
    first and tokens are read step by step: step t's tokens are sorted rows 0..k_t-1."""

    order: torch.Tensor  # (batch,) original row of each sorted row
    real: torch.Tensor  # (T, batch) True where sorted row b has a token at step t
    step_rows: torch.Tensor  # (N, 2) [t, sorted row] of each real token, time-major
    active: list[int]  # k_t, sentences still going at each step (non-zero only)

    @classmethod
    def of(cls, tgt_in: torch.Tensor) -> "TimeMajor":
        """The plan for tgt_in (batch, T): real tokens first in each row, then PAD."""
        T = tgt_in.size(1)
        lengths = (tgt_in != PAD).sum(1)  # (batch,)
        order = torch.argsort(lengths, descending=True, stable=True)
        real = torch.arange(T, device=tgt_in.device).unsqueeze(1) < lengths[order].unsqueeze(0)  # (T, batch)
        return cls(order, real, real.nonzero(), [k for k in real.sum(1).tolist() if k])

    @property
    def n_tokens(self) -> int:
        return self.step_rows.size(0)

    @property
    def sorted_rows(self) -> torch.Tensor:
        """(N,) sorted row of each token."""
        return self.step_rows[:, 1]

    @property
    def positions(self) -> torch.Tensor:
        """(N,) each token's index in the original flattened (batch * T) grid."""
        return self.order[self.sorted_rows] * self.real.size(0) + self.step_rows[:, 0]

    def tokens(self, tgt_in: torch.Tensor) -> torch.Tensor:
        """(N,) the real tokens of tgt_in (batch, T), time-major in sorted row order."""
        return tgt_in.index_select(0, self.order).t()[self.real]
