"""Gradient x input saliency: which source tokens most influence each output token.

For output token y_i, saliency_ij = |grad_{E x_j} log p(y_i | y_<i, x) . E x_j| (the dot
product over embedding dimensions), then each row is normalised to sum to 1 so it can
be drawn on the same scale as attention. Works for both models, so RNNencdec, which has
no attention, still gets a "what matters" map.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from .seq2seq import NMTModel
from .vocab import BOS, PAD


def saliency(model: NMTModel, src_ids: Sequence[int], out_ids: Sequence[int]) -> np.ndarray:
    """(len(out_ids), len(src_ids)) row-normalised gradient x input for one sentence pair.

    ``out_ids`` are the output tokens to explain (typically a trace's ``target_ids``,
    including </s>). Uses only local tensors, so shared models stay untouched.
    """
    if not src_ids or not out_ids:
        return np.zeros((len(out_ids), len(src_ids)))
    T = len(out_ids)
    src = torch.tensor([list(src_ids)] * T)  # one copy of the sentence per output token to explain
    prefix = [BOS] + list(out_ids[:-1])
    tgt_in = torch.tensor([prefix[:i + 1] + [PAD] * (T - i - 1) for i in range(T)])  # copy i stops at token i
    with torch.enable_grad():
        emb = model.encoder.embed(src).detach().requires_grad_(True)  # (T, src_len, m)
        annotations, summary = model.encoder.encode_embedded(emb, torch.tensor([len(src_ids)] * T))
        enc = model.decoder.prepare(annotations, src != PAD, summary)
        logits, _ = model.decoder(tgt_in, enc)  # (T, T, V)
        steps = torch.arange(T)
        # copy i explains output token i: the copies share no computation, so one backward
        # pass of the sum gives each copy's gradient of its own log-probability
        logp = torch.log_softmax(logits[steps, steps], dim=-1)[steps, torch.tensor(list(out_ids))]  # (T,)
        (grad,) = torch.autograd.grad(logp.sum(), emb)
    rows = (grad * emb).sum(-1).abs().detach()  # (T, src_len)
    scores = rows.numpy()
    return scores / np.maximum(scores.sum(1, keepdims=True), 1e-12)
