"""One output re-scored under many variants of its inputs, in batches: the measurement every
explanation method and every faithfulness curve makes.

A variant is the sentence pair (``src_ids``, ``out_ids``) with some source embeddings and some
embeddings of the words already written changed: scaled (integrated gradients), set to zero
(occlusion, deletion and insertion curves), or left as leaves to differentiate (gradient x
input). The model reads each variant with teacher forcing (``Decodable.teacher_forced``'s step
loop), so the output is the same in every variant and only its log-probabilities move.

The words already written reach the model through its target embedding
(``Decodable.target_embedding``); a forward hook there scales each variant's rows. The decoder's
first input, <s>, is not a word written and is never changed.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional, Sequence

import torch

from model.core.decodable import Decodable
from model.corpus.vocab import BOS
from model.decoding.device import device_of

MAX_ROWS = 128  # variants scored in one batch


@contextmanager
def target_scaled(model: Decodable, scale: Optional[torch.Tensor], leaves: Optional[list] = None) -> Iterator[None]:
    """While inside, the model's target embeddings of row r at decoder input position t are
    multiplied by ``scale[r, t]`` (rows, T) (None: unchanged); with ``leaves``, each embedding the
    model computes is replaced by a leaf that requires grad and appended there."""
    module = model.target_embedding
    if module is None or (scale is None and leaves is None):
        yield
        return
    calls = []

    def hook(_module, _inputs, output):
        t = len(calls)
        calls.append(output)
        if scale is not None:
            if output.dim() == 3:  # the whole (rows, T, m) at once
                output = output * scale[:, :output.size(1), None].to(output.dtype)
            else:  # one step, (rows, m)
                output = output * scale[:, t, None].to(output.dtype)
        if leaves is not None:
            output = output.detach().requires_grad_(True)
            leaves.append(output)
        return output

    handle = module.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def stack_steps(leaves: list[torch.Tensor], width: int) -> torch.Tensor:
    """The target-embedding leaves of one forward pass as (rows, T, m)."""
    if len(leaves) == 1 and leaves[0].dim() == 3:
        return leaves[0][:, :width]
    return torch.stack(leaves[:width], dim=1)


def batch_inputs(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], rows: int):
    """``rows`` copies of the pair on the model's device: src (rows, S), src_len (rows,) and the
    decoder's inputs tgt_in (rows, T): <s> y_1 .. y_{T-1}."""
    dev = device_of(model)
    src = torch.tensor([list(src_ids)] * rows, device=dev)
    tgt_in = torch.tensor([[BOS] + list(out_ids[:-1])] * rows, device=dev)
    return src, torch.full((rows,), len(src_ids), device=dev), tgt_in


def output_logprobs(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                    source_scale: torch.Tensor, target_scale: torch.Tensor,
                    gather: Optional[Sequence[int]] = None) -> torch.Tensor:
    """(rows, T) log p(y_i | y_<i, x) of each variant: source embeddings scaled by
    ``source_scale`` (rows, S), the embeddings of the words already written by ``target_scale``
    (rows, T; column 0, the decoder's <s>, is kept at 1). ``gather``: read the log-probability of
    these ids at each position instead of the output's own (the prefix read is still ``out_ids``)."""
    out = []
    tokens = torch.tensor(list(gather if gather is not None else out_ids), device=device_of(model))
    for start in range(0, source_scale.size(0), MAX_ROWS):
        s_scale, t_scale = source_scale[start:start + MAX_ROWS], target_scale[start:start + MAX_ROWS].clone()
        t_scale[:, 0] = 1.0
        src, src_len, tgt_in = batch_inputs(model, src_ids, out_ids, s_scale.size(0))
        with torch.inference_mode():
            emb = model.embed_source(src) * s_scale[..., None].to(device_of(model))
            with target_scaled(model, t_scale.to(device_of(model))):
                logprobs, _ = stepwise(model, model.encode(src, src_len, embedded=emb), tgt_in)
        out.append(logprobs.float().gather(2, tokens.view(1, -1, 1).expand(logprobs.size(0), -1, 1))[..., 0].cpu())
    return torch.cat(out)


def stepwise(model: Decodable, memory, tgt_in: torch.Tensor):
    """Teacher forcing one ``step`` at a time (``Decodable.teacher_forced``'s own loop, not a
    model's faster whole-sentence path): the target embedding sees y_{i-1} step by step, as
    ``target_scaled`` expects."""
    return Decodable.teacher_forced(model, memory, tgt_in)
