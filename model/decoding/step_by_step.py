"""The paper's quantities for one sentence, step by step: what the Paper page shows beside
each equation of Section 3 and Appendix A.

``dissect`` re-runs one decode along a given output with the decoder's own building blocks
(``Encoder.forward``, ``Decoder.init_state``, ``Decoder.context``, ``Decoder.gates``,
``Decoder.maxout_features``), in the order ``Decoder.step`` calls them, and keeps every
intermediate value instead of only the log-probabilities.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import torch

from model.corpus.vocab import BOS
from model.decoding.device import device_of
from model.network.gru import gru_update
from model.network.nmt_model import NMTModel


@dataclass
class StepAnatomy:
    """Decoder step i (1-based) for one sentence; vectors as numpy arrays."""

    step: int  # i
    token_id: int  # y_i, the output token this step produced (followed, not re-chosen)
    s_prev: np.ndarray  # (n,) s_{i-1}
    energies: Optional[np.ndarray]  # (src_len,) e_ij; None for RNNencdec
    alpha: Optional[np.ndarray]  # (src_len,) alpha_ij; None for RNNencdec
    context: np.ndarray  # (2n,) c_i, or RNNencdec's fixed c
    reset: np.ndarray  # (n,) r_i
    update: np.ndarray  # (n,) z_i
    state: np.ndarray  # (n,) s_i
    maxout: np.ndarray  # (l,) t_i
    probs: np.ndarray  # (V,) p(y | y_<i, x)


@dataclass
class Anatomy:
    """Everything the equations name, for one source sentence and one output."""

    annotations: np.ndarray  # (src_len, 2n) h_j
    summary: np.ndarray  # (2n,) [forward h_Tx ; backward h_1]
    s0: np.ndarray  # (n,) s_0
    steps: list[StepAnatomy]


@torch.inference_mode()
def dissect(model: NMTModel, src_ids: Sequence[int], out_ids: Sequence[int]) -> Anatomy:
    """Follow ``out_ids`` (e.g. a trace's target_ids) from <s> and record every step."""
    model.eval()
    dec, dev = model.decoder, device_of(model)
    enc = model.encode(torch.tensor([list(src_ids)], device=dev), torch.tensor([len(src_ids)], device=dev))
    s = dec.init_state(enc.summary)  # (1, n)
    y = torch.tensor([BOS], device=dev)
    first = lambda t: None if t is None else t[0].float().cpu().numpy()  # noqa: E731
    anatomy = Anatomy(first(enc.annotations), first(enc.summary), first(s), [])
    for i, token in enumerate(out_ids, start=1):
        emb = dec.embed(y)  # (1, m)
        ctx = dec.context(s, enc)
        c, alpha, energies = ctx.c, ctx.alpha, ctx.energies
        r, z, candidate = dec.gates(dec.W(emb) + ctx.gates, s)
        s_new = gru_update(s, z, candidate)  # as Decoder.gru
        t = dec.maxout_features(s_new, emb, ctx.output(dec.C_o))
        probs = torch.softmax(dec.W_o(t).float(), dim=-1)
        anatomy.steps.append(StepAnatomy(i, int(token), first(s), first(energies), first(alpha), first(c), first(r),
                                         first(z), first(s_new), first(t), first(probs)))
        s, y = s_new, torch.tensor([int(token)], device=dev)
    return anatomy
