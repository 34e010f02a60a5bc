"""One output re-scored under many variants of its inputs, in batches: the measurement every
explanation method and every faithfulness curve makes.

A variant is the sentence pair (``src_ids``, ``out_ids``) with some source embeddings and some
embeddings of the words already written changed: scaled (integrated gradients), set to zero
(occlusion, deletion and insertion curves), or differentiated (gradient x input). The model
reads each variant with teacher forcing, so the output is the same in every variant and only
its log-probabilities move.

The words already written reach the model through its target embedding
(``Decodable.target_embedding``): ``Decodable.teacher_forced(..., input_scale)`` scales them for
re-scoring, and a forward hook there for gradients. The decoder's
first input, <s>, is not a word written and is never changed.

Two paths, each doing no more arithmetic than its answer needs:

- ``output_logprobs`` (forward only, every output position): identical variants are scored once,
  the encoder runs once per distinct source, and every variant takes the model's own
  whole-sentence teacher forcing, reading just the output's log-probabilities
  (``Decodable.forced_logprobs``, which scales the words written);
- ``objective_gradients_many`` (one output position per variant, gradient x input): variants are
  sorted by that position, each stops there (the batch shrinks as they finish), and the output
  layer runs only where a variant's objective is read (``Decodable.advance`` / ``read_out``);
- ``averaged_gradients`` (integrated gradients: every output position at the same scales): one
  forward pass per scale serves every position, then each position's backward pass runs through
  the steps up to it, several positions in one batched pass.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Optional, Sequence

import numpy as np
import torch

from model.core.decodable import Decodable, own_thread_hook
from model.corpus.vocab import BOS, PAD
from model.decoding.device import device_of
from model.speed.activations import fast_tanh

MAX_ROWS = 128  # variants scored in one batch
SHRINK = 0.75  # a batch drops its finished variants once at most this share of it is still going


@dataclass
class _TargetControl:
    """What the target-embedding hook does at the current step: scale each row's embedding by
    ``scale`` (rows,) (None: unchanged); with ``leaves``, hand the model a leaf to differentiate
    (appended there) and keep the unscaled embedding in ``raw``."""

    scale: Optional[torch.Tensor] = None
    leaves: Optional[list] = None
    raw: list = field(default_factory=list)


@contextmanager
def _target_hook(model: Decodable, control: _TargetControl) -> Iterator[bool]:
    """While inside, the model's target embedding obeys ``control``; yields False when the model
    has none (only the source can then be weighed)."""
    module = model.target_embedding
    if module is None:
        yield False
        return

    def hook(_module, _inputs, output):
        if control.scale is None and control.leaves is None:
            return None
        raw = output
        if control.scale is not None:  # rows first, whatever else the model's embedding shape holds
            output = output * control.scale.view(-1, *([1] * (output.dim() - 1))).to(output.dtype)
        if control.leaves is not None:
            output = output.detach().requires_grad_(True)
            control.leaves.append(output)
            control.raw.append(raw.detach())
        return output

    handle = own_thread_hook(module, hook)  # another session's decode with this model is left alone
    try:
        yield True
    finally:
        handle.remove()


def batch_inputs(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], rows: int):
    """``rows`` copies of the pair on the model's device: src (rows, S), src_len (rows,) and the
    decoder's inputs tgt_in (rows, T): <s> y_1 .. y_{T-1}."""
    dev = device_of(model)
    src = torch.tensor([list(src_ids)] * rows, device=dev)
    tgt_in = torch.tensor([[BOS] + list(out_ids[:-1])] * rows, device=dev)
    return src, torch.full((rows,), len(src_ids), device=dev), tgt_in


def attention_read(model: Decodable, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[tuple]:
    """Each pair read once as it is, all in one padded batch: (alpha (T, S) | None, the
    annotations' norms ‖h_j‖ (S,) | None) per pair, as numpy arrays."""
    src, src_len, tgt_in = pair_inputs(pairs, max(len(o) for _, o in pairs), device_of(model))
    with torch.inference_mode():
        memory = model.encode(src, src_len)
        _, alpha = model.teacher_forced(memory, tgt_in)  # (k, T, S) | None
    # what each source word adds to the context when attended: a memory's ``values`` (a Joey NMT
    # model's, a Transformer's W^O V W^V of the layer its attention comes from), else its annotations h_j
    values = getattr(memory, "values", None)
    values = getattr(memory, "annotations", None) if values is None else values
    alpha = None if alpha is None else alpha.float().cpu().numpy()
    norms = None if values is None else values.float().norm(dim=-1).cpu().numpy()  # (k, S)
    return [(None if alpha is None else alpha[row, :len(o), :len(s)], None if norms is None else norms[row, :len(s)])
            for row, (s, o) in enumerate(pairs)]


def _objective(logprobs: torch.Tensor, tokens: torch.Tensor, contrast: Optional[torch.Tensor]) -> torch.Tensor:
    """log p(token) (minus log p(contrast)) from log-probabilities (..., V) and ids (...)."""
    value = logprobs.gather(-1, tokens.unsqueeze(-1))[..., 0]
    return value if contrast is None else value - logprobs.gather(-1, contrast.unsqueeze(-1))[..., 0]


def output_logprobs(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                    source_scale: torch.Tensor, target_scale: torch.Tensor,
                    contrast: Optional[Sequence[int]] = None) -> torch.Tensor:
    """(rows, T) log p(y_i | y_<i, x) of each variant: source embeddings scaled by
    ``source_scale`` (rows, S), the embeddings of the words already written by ``target_scale``
    (rows, T; column 0, the decoder's <s>, is kept at 1). With ``contrast`` (an id per output
    position), log p(y_i) - log p(contrast_i) instead."""
    dev, S, T = device_of(model), len(src_ids), len(out_ids)
    t_scale = target_scale.float().clone()
    t_scale[:, 0] = 1.0
    variants, inverse = torch.unique(torch.cat([source_scale.float(), t_scale], 1), dim=0, return_inverse=True)
    tokens = torch.tensor(list(out_ids), device=dev)
    other = None if contrast is None else torch.tensor(list(contrast), device=dev)
    picks = (tokens if other is None else torch.stack([tokens, other], 1)).view(1, T, -1)  # (1, T, K) ids to read
    out = torch.zeros(variants.size(0), T)
    with torch.inference_mode(), fast_tanh():  # only log-probabilities are read: tanh may take its faster form
        for index in torch.arange(variants.size(0)).split(MAX_ROWS):  # every kind of variant in one batch:
            chunk = variants[index]  # each decoder step reads the weights once for all of them
            sources, source_of = torch.unique(chunk[:, :S], dim=0, return_inverse=True)
            src, src_len, _ = batch_inputs(model, src_ids, out_ids, sources.size(0))
            emb = model.embed_source(src) * sources.to(dev)[..., None]  # one encoder run per distinct source
            memory = model.encode(src, src_len, embedded=emb).select(source_of.to(dev))
            _, _, tgt_in = batch_inputs(model, src_ids, out_ids, chunk.size(0))
            written = chunk[:, S:]
            scale = None if bool((written == 1).all()) else written.to(dev)  # None: the words written as they are
            found = model.forced_logprobs(memory, tgt_in, picks.expand(chunk.size(0), -1, -1), scale).float()
            out[index] = (found[..., 0] if other is None else found[..., 0] - found[..., 1]).cpu()  # (k, T)
    return out[inverse.cpu()]


@dataclass(frozen=True)
class Gradients:
    """Gradient x input of each variant's objective (log p(y_i), or minus a contrast's, at the
    variant's output position i), the embeddings scaled by the variant's factor a and the
    gradient taken there times the unscaled input (a = 1: plain gradient x input; averaged over
    a: integrated gradients)."""

    source: np.ndarray  # (rows, S) one score per source token
    decoder_inputs: np.ndarray  # (rows, T) one score per decoder input (<s> y_1 .. y_{T-1}; 0 for <s>)
    values: np.ndarray  # (rows,) the objective


def objective_gradients_many(model: Decodable, pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
                             pair_of: Sequence[int], positions: Sequence[int], scales: Sequence[float],
                             contrasts: Optional[Sequence[Sequence[int]]] = None) -> list[Gradients]:
    """``Gradients`` of the variants (output position ``positions[r]``, scale ``scales[r]``) of
    several sentence pairs at once: variant r is of
    ``pairs[pair_of[r]]`` (with ``contrasts[pair_of[r]]``, when given). Batches mix sentences, so
    the variants of short ones still fill a batch (on 2 cores a gradient row in a batch of 24
    costs about twice one in a batch of 120). One ``Gradients`` per pair, its variants in the
    order given."""
    dev, rows = device_of(model), len(positions)
    longest_src, longest_out = max((len(s) for s, _ in pairs), default=0), max((len(o) for _, o in pairs), default=0)
    order = sorted(range(rows), key=lambda r: -positions[r])  # longest first: the batch shrinks from its end
    source, inputs, values = np.zeros((rows, longest_src)), np.zeros((rows, longest_out)), np.zeros(rows)
    for start in range(0, rows, MAX_ROWS):
        chunk = order[start:start + MAX_ROWS]
        found = _chunk_gradients(model, [pairs[pair_of[r]] for r in chunk],
                                 None if contrasts is None else [contrasts[pair_of[r]] for r in chunk],
                                 torch.tensor([positions[r] for r in chunk], device=dev),
                                 torch.tensor([float(scales[r]) for r in chunk], device=dev))
        source[chunk, :found[0].shape[1]], inputs[chunk, :found[1].shape[1]], values[chunk] = found
    mine: list[list[int]] = [[] for _ in pairs]  # each pair's variants, in the order given
    for r, p in enumerate(pair_of):
        mine[p].append(r)
    return [Gradients(source[m, :len(s)], inputs[m, :len(o)], values[m]) for m, (s, o) in zip(mine, pairs)]


def padded(rows: Sequence[Sequence[int]], width: int, dev) -> torch.Tensor:
    """(len(rows), width) ids, each row cut or padded with <pad> to ``width``."""
    return torch.tensor([list(r[:width]) + [PAD] * (width - len(r[:width])) for r in rows], device=dev)


def pair_inputs(pairs: Sequence[tuple[Sequence[int], Sequence[int]]], width: int, dev):
    """Several pairs in one padded batch on ``dev``: src (k, S), src_len (k,) and the decoder's
    inputs tgt_in (k, width): <s> y_1 .. y_{T-1}, cut or padded to ``width``."""
    src = padded([s for s, _ in pairs], max(len(s) for s, _ in pairs), dev)
    src_len = torch.tensor([len(s) for s, _ in pairs], device=dev)
    return src, src_len, padded([[BOS] + list(o[:-1]) for _, o in pairs], width, dev)


def _chunk_gradients(model, pairs, contrasts, pos, a):
    """One batch of ``objective_gradients_many``: the pair (and contrast) of each variant, its
    position ``pos`` (k,) descending and its scale ``a`` (k,)."""
    k, dev = pos.numel(), pos.device
    width = int(pos[0]) + 1  # no variant reads further
    src, src_len, tgt_in = pair_inputs(pairs, width, dev)  # (k, S), (k,), (k, width)
    tokens = padded([o for _, o in pairs], width, dev)  # (k, width) the output token at each position
    other = None if contrasts is None else padded(contrasts, width, dev)
    control = _TargetControl(leaves=[])
    with torch.enable_grad(), _target_hook(model, control) as has_target:
        full = model.embed_source(src).detach()  # (k, S, m)
        emb = (full * a[:, None, None]).requires_grad_(True)
        memory = model.encode(src, src_len, embedded=emb)
        state, going, live = model.init_state(memory), k, memory
        read, read_at = [], []
        for t in range(width):
            still = int((pos >= t).sum())  # variants still reading (a prefix: sorted by position)
            if still <= SHRINK * going:
                keep = torch.arange(still, device=dev)
                live, state, going = memory.select(keep), model.reorder(state, keep), still
            control.scale = a[:going] if t > 0 else torch.ones(going, device=dev)  # <s> stays whole
            state, readout = model.advance(tgt_in[:going, t], state, live)
            ending = torch.nonzero(pos[:going] == t)[:, 0]
            if ending.numel():
                logprobs = model.read_out(readout, ending).float()  # the output layer only where it is read
                read.append(_objective(logprobs, tokens[ending, t], None if other is None else other[ending, t]))
                read_at.append(ending)
        value = torch.cat(read)
        grads = torch.autograd.grad(value.sum(), [emb] + control.leaves, allow_unused=True)
    order = torch.cat(read_at)
    values = torch.empty(k)
    values[order.cpu()] = value.detach().float().cpu()
    source = (grads[0] * full).sum(-1).detach().float().cpu().numpy()  # gradient at the scaled point x the input
    inputs = np.zeros((k, width))
    if has_target:
        for t, (grad, raw) in enumerate(zip(grads[1:], control.raw)):
            if grad is not None and t > 0:
                score = (grad * raw).reshape(raw.size(0), -1).sum(-1).float().cpu().numpy()
                inputs[:score.shape[0], t] = score
    return source, inputs, values.numpy()


BACKWARD_ROWS = 128  # rows one batched backward pass of ``averaged_gradients`` takes: positions x scales


@dataclass(frozen=True)
class AveragedGradients:
    """The objective's gradient at each scaled point times the unscaled input, for each of several
    output positions, averaged over the scales: integrated gradients' midpoint sum."""

    source: np.ndarray  # (P, S) one score per source token
    decoder_inputs: np.ndarray  # (P, T) one score per decoder input (<s> y_1 .. y_{T-1}; 0 for <s>)


def averaged_gradients(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], positions: Sequence[int],
                       scales: Sequence[float], contrast: Optional[Sequence[int]] = None) -> AveragedGradients:
    """For each output position i in ``positions`` (distinct, ascending), the gradient of its
    objective (log p(y_i), minus log p(contrast_i) with ``contrast``) with every source embedding
    and every word written scaled by a, times the unscaled input, averaged over a in ``scales``.

    Every position reads the same scaled inputs, so the forward pass runs once per scale for all
    positions (``MAX_ROWS`` scales at a time), up to the last position, reading the output layer
    only at the positions. Each position's backward pass then runs through the steps up to it:
    ``BACKWARD_ROWS // scales`` consecutive positions share one pass, their objectives'
    gradients batched (``is_grads_batched``), so a pass has about as many rows as a batch of
    ``objective_gradients_many``. Equal to one variant per position and scale, within float
    rounding (tests/model/test_explanations.py)."""
    dev, S, T, P = device_of(model), len(src_ids), len(out_ids), len(positions)
    source, inputs = np.zeros((P, S)), np.zeros((P, T))
    if not P or not len(scales):
        return AveragedGradients(source, inputs)
    width = positions[-1] + 1  # no objective reads further
    tokens = torch.tensor(list(out_ids), device=dev)
    other = None if contrast is None else torch.tensor(list(contrast), device=dev)
    read = set(positions)
    for a in torch.tensor([float(x) for x in scales]).split(MAX_ROWS):
        a, n = a.to(dev), a.numel()
        src, src_len, tgt_in = batch_inputs(model, src_ids, out_ids, n)
        rows = torch.arange(n, device=dev)
        control = _TargetControl(leaves=[])
        with torch.enable_grad(), _target_hook(model, control) as has_target:
            full = model.embed_source(src).detach()  # (n, S, m)
            emb = (full * a[:, None, None]).requires_grad_(True)
            memory = model.encode(src, src_len, embedded=emb)
            state, values = model.init_state(memory), []
            for t in range(width):
                control.scale = a if t > 0 else torch.ones(n, device=dev)  # <s> stays whole
                state, readout = model.advance(tgt_in[:, t], state, memory)
                if t in read:  # the output layer only where an objective is read
                    logprobs = model.read_out(readout, rows).float()  # (n, V)
                    values.append(_objective(logprobs, tokens[t].expand(n), None if other is None else other[t].expand(n)))
            block = max(1, BACKWARD_ROWS // n)
            for start in range(0, P, block):
                found = values[start:start + block]  # (n,) each
                k, last = len(found), positions[start + len(found) - 1]
                wanted = [emb] + (control.leaves[1:last + 1] if has_target else [])
                picks = torch.eye(k, device=dev)[:, :, None].expand(k, k, n)  # (k, k, n) row j: position j's objective
                grads = torch.autograd.grad(torch.stack(found), wanted, grad_outputs=picks, is_grads_batched=True,
                                            retain_graph=start + k < P, allow_unused=True)  # each (k, ...)
                source[start:start + k] += (grads[0] * full).sum(-1).sum(1).detach().float().cpu().numpy()
                for t, (grad, raw) in enumerate(zip(grads[1:], control.raw[1:last + 1]), start=1):
                    if grad is not None:
                        inputs[start:start + k, t] += (grad * raw).reshape(k, n, -1).sum(-1).sum(1).float().cpu().numpy()
    return AveragedGradients(source / len(scales), inputs / len(scales))
