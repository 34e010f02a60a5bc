"""Gradient x input saliency: which source tokens most influence each output token.

For output token y_i, saliency_ij = |grad_{E x_j} log p(y_i | y_<i, x) . E x_j| (the dot
product over embedding dimensions), then each row is normalised to sum to 1 so it can
be drawn on the same scale as attention. Works for any model with the decoding interface
(model/core/decodable.py), so RNNencdec, which has no attention, still gets a "what matters" map,
on whichever device the model's weights are on.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from model.corpus.vocab import BOS, PAD
from model.decoding.device import device_of
from model.core.decodable import Decodable

MAX_COPIES = 128  # output tokens explained in one batch (each is one copy of its sentence); 64-256 are about as fast


def saliency(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int]) -> np.ndarray:
    """(len(out_ids), len(src_ids)) row-normalised gradient x input for one sentence pair.

    ``out_ids`` are the output tokens to explain (typically a trace's ``target_ids``,
    including </s>). Uses only local tensors, so shared models stay untouched.
    """
    return saliency_many(model, [(src_ids, out_ids)])[0]


def saliency_many(model: Decodable, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[np.ndarray]:
    """``saliency`` of many sentence pairs, batched: every output token to explain gets its own
    copy of its sentence, decoded up to that token, and the copies of several sentences share
    one forward and one backward pass (copies share no computation, so the gradient of the sum
    of their log-probabilities holds each copy's own gradient)."""
    out: list[np.ndarray] = [np.zeros((len(o), len(s))) for s, o in pairs]
    todo = sorted((k for k, (s, o) in enumerate(pairs) if len(s) and len(o)), key=lambda k: len(pairs[k][0]))  # less padding
    batch: list[int] = []
    for k in todo + [None]:
        if batch and (k is None or sum(len(pairs[b][1]) for b in batch) + len(pairs[k][1]) > MAX_COPIES):
            for b, rows in zip(batch, _saliency_batch(model, [pairs[b] for b in batch])):
                out[b] = rows
            batch = []
        if k is not None:
            batch.append(k)
    return out


def _saliency_batch(model: Decodable, pairs) -> list[np.ndarray]:
    """The rows of several sentence pairs, one copy of its sentence per output token, every
    tensor made on the model's device."""
    srcs, tgts, picks = [], [], []
    width = max(len(o) for _, o in pairs)
    for src_ids, out_ids in pairs:
        prefix = [BOS] + list(out_ids[:-1])
        for i, token in enumerate(out_ids):  # copy i stops at output token i
            srcs.append(list(src_ids))
            tgts.append(prefix[:i + 1] + [PAD] * (width - i - 1))
            picks.append((i, token))
    dev = device_of(model)
    longest = max(len(s) for s in srcs)
    src_len = torch.tensor([len(s) for s in srcs], device=dev)  # (copies,)
    src = torch.tensor([s + [PAD] * (longest - len(s)) for s in srcs], device=dev)  # (copies, src_len)
    tgt_in = torch.tensor(tgts, device=dev)  # (copies, width)
    rows = torch.arange(len(picks), device=dev)  # (copies,)
    steps, tokens = (torch.tensor(x, device=dev) for x in zip(*picks))  # (copies,) each
    with torch.enable_grad():
        emb = model.embed_source(src).detach().requires_grad_(True)  # (copies, src_len, m)
        logprobs, _ = model.teacher_forced(model.encode(src, src_len, embedded=emb), tgt_in)  # (copies, width, V)
        logp = logprobs[rows, steps, tokens]  # (copies,)
        (grad,) = torch.autograd.grad(logp.sum(), emb)
    scores = (grad * emb).sum(-1).abs().detach().float().cpu().numpy()  # (copies, src_len)
    out, start = [], 0
    for src_ids, out_ids in pairs:  # each sentence's copies are consecutive
        mine = scores[start:start + len(out_ids), :len(src_ids)]
        out.append(mine / np.maximum(mine.sum(1, keepdims=True), 1e-12))
        start += len(out_ids)
    return out
