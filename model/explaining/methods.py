"""The explanation methods, each over the decoding interface, so every model gets them
(this project's, Joey NMT's, the tutorials'):

- ``attention``: α_ij itself (RNNsearch and imports with attention); it says nothing about the prefix.
- ``attention_norm``: ‖α_ij h_j‖, the size of what each annotation actually adds to c_i
  (Kobayashi et al. 2020), renormalised per output token.
- ``gradient_x_input``: ∂ log p(y_i) / ∂e · e for each source embedding and each embedding of a word
  already written.
- ``integrated_gradients`` (Sundararajan et al. 2017): the same embeddings scaled from a zero
  baseline to themselves in ``steps`` points (midpoint rule), gradients averaged, times the
  input; the completeness gap says how far their sum is from log p(y_i | x) - log p(y_i | baseline).
- ``occlusion``: log p(y_i) minus its value with one source embedding, or one embedding of a
  word already written, set to zero (the same baseline).

Every method explains log p(y_i) of the given output, read with teacher forcing; ``contrast``
(a token id per output position) explains log p(y_i) - log p(contrast_i) instead ("why this word
and not that one", Yin & Neubig 2022).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

from model.core.decodable import Decodable
from model.decoding.device import device_of
from model.explaining.explanation import Explanation
from model.explaining.forced_scoring import MAX_ROWS, batch_inputs, output_logprobs, stack_steps, stepwise, target_scaled

IG_STEPS = 32


def _objective(logprobs: torch.Tensor, positions: torch.Tensor, tokens: torch.Tensor,
               contrast: Optional[torch.Tensor]) -> torch.Tensor:
    """(rows,) log p(y_i) (minus log p(contrast_i)) at each row's output position."""
    rows = torch.arange(logprobs.size(0), device=logprobs.device)
    value = logprobs[rows, positions, tokens]
    return value if contrast is None else value - logprobs[rows, positions, contrast]


def _gradients(model: Decodable, src_ids, out_ids, positions: list[int], alphas: list[float],
               contrast: Optional[Sequence[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For rows (output position i, scale a): the gradient x input of the objective at i with every
    source embedding and every embedding of a word already written scaled by a (scale 1: plain
    gradient x input), as (rows, S), (rows, T) grad·e scores, and the objective (rows,)."""
    dev = device_of(model)
    source_scores, prefix_scores, values = [], [], []
    tokens_all = torch.tensor(list(out_ids), device=dev)
    contrast_all = None if contrast is None else torch.tensor(list(contrast), device=dev)
    T = len(out_ids)
    for start in range(0, len(positions), MAX_ROWS):
        pos = torch.tensor(positions[start:start + MAX_ROWS], device=dev)
        scale = torch.tensor(alphas[start:start + MAX_ROWS], device=dev)
        src, src_len, tgt_in = batch_inputs(model, src_ids, out_ids, pos.numel())
        tgt_in = tgt_in[:, :int(pos.max()) + 1]  # a batch reads the output only as far as its furthest position
        t_scale = scale[:, None].expand(-1, tgt_in.size(1)).clone()
        t_scale[:, 0] = 1.0  # <s> is not a word written
        with torch.enable_grad():
            full = model.embed_source(src).detach()
            emb = (full * scale[:, None, None]).requires_grad_(True)
            leaves: list = []
            with target_scaled(model, t_scale, leaves):
                logprobs, _ = stepwise(model, model.encode(src, src_len, embedded=emb), tgt_in)
            value = _objective(logprobs.float(), pos, tokens_all[pos],
                               None if contrast_all is None else contrast_all[pos])
            grads = torch.autograd.grad(value.sum(), [emb] + leaves, allow_unused=True)
        # gradient at the scaled point times the full input: a sum over points is integrated gradients
        source_scores.append((grads[0] * full).sum(-1).detach().float().cpu())
        if leaves:
            targets = stack_steps(leaves, tgt_in.size(1)).detach()  # (rows, T, m) as scaled
            step_grads = stack_steps([g if g is not None else torch.zeros_like(x) for g, x in zip(grads[1:], leaves)],
                                     tgt_in.size(1))
            unscaled = targets / t_scale[..., None].clamp_min(1e-12)
            scores = (step_grads * unscaled).sum(-1).float().cpu()  # (rows, width)
            prefix_scores.append(torch.nn.functional.pad(scores, (0, T - scores.size(1))))
        else:
            prefix_scores.append(torch.zeros(pos.numel(), T))
        values.append(value.detach().float().cpu())
    return (torch.cat(source_scores).numpy(), torch.cat(prefix_scores).numpy(), torch.cat(values).numpy(),
            np.asarray(positions))


def _prefix_matrix(per_row: np.ndarray, positions: np.ndarray, T: int) -> np.ndarray:
    """(T, T) prefix scores from rows of decoder-input scores (rows, T): the word y_k sits at
    decoder input k+1; only k < i counts for output i."""
    out = np.zeros((T, T))
    for row, i in zip(per_row, positions):
        out[i, :i] = row[1:i + 1]
    return out


def gradient_x_input(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                     contrast: Optional[Sequence[int]] = None) -> Explanation:
    T = len(out_ids)
    src, pre, _, pos = _gradients(model, src_ids, out_ids, list(range(T)), [1.0] * T, contrast)
    return Explanation("gradient_x_input", src, _prefix_matrix(pre, pos, T))


def integrated_gradients(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                         contrast: Optional[Sequence[int]] = None, steps: int = IG_STEPS) -> Explanation:
    """Integrated gradients from the zero-embedding baseline, ``steps`` midpoints per output token
    (all in batches), with the completeness gap (the largest over the output tokens of
    |Σ attributions − (f(x) − f(baseline))| / |f(x) − f(baseline)|)."""
    T = len(out_ids)
    positions = [i for i in range(T) for _ in range(steps)]
    alphas = [(s + 0.5) / steps for _ in range(T) for s in range(steps)]
    src, pre, _, _ = _gradients(model, src_ids, out_ids, positions, alphas, contrast)
    src = src.reshape(T, steps, -1).mean(1)
    pre_rows = pre.reshape(T, steps, -1).mean(1)
    prefix = _prefix_matrix(pre_rows, np.arange(T), T)
    ends = _objective_at_ends(model, src_ids, out_ids, contrast)  # (T, 2): f(x), f(baseline)
    change = ends[:, 0] - ends[:, 1]
    total = src.sum(1) + prefix.sum(1)
    gap = float(np.max(np.abs(total - change) / np.maximum(np.abs(change), 1e-9))) if T else 0.0
    return Explanation("integrated_gradients", src, prefix, gap)


def _objective_at_ends(model, src_ids, out_ids, contrast) -> np.ndarray:
    """(T, 2) the objective at each output token with the inputs as they are, and at the baseline
    (every source embedding and every word written set to zero): two forward re-scorings."""
    S, T = len(src_ids), len(out_ids)
    scale = torch.tensor([[1.0], [0.0]])
    values = output_logprobs(model, src_ids, out_ids, scale.expand(2, S), scale.expand(2, T)).numpy()
    if contrast is not None:
        values = values - output_logprobs(model, src_ids, out_ids, scale.expand(2, S), scale.expand(2, T),
                                          gather=contrast).numpy()
    return values.T


def occlusion(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
              contrast: Optional[Sequence[int]] = None) -> Explanation:
    """One variant per source token and per word written, that embedding set to zero, all in batches."""
    S, T = len(src_ids), len(out_ids)
    rows = 1 + S + max(T - 1, 0)
    source_scale, target_scale = torch.ones(rows, S), torch.ones(rows, T)
    for j in range(S):
        source_scale[1 + j, j] = 0.0
    for k in range(T - 1):  # the word y_k (0-based) is the decoder's input k+1
        target_scale[1 + S + k, k + 1] = 0.0
    logp = output_logprobs(model, src_ids, out_ids, source_scale, target_scale).numpy()  # (rows, T)
    if contrast is not None:
        logp = logp - output_logprobs(model, src_ids, out_ids, source_scale, target_scale, gather=contrast).numpy()
    base = logp[0]
    source = (base[None, :] - logp[1:1 + S]).T  # (T, S)
    prefix = np.zeros((T, T))
    for k in range(T - 1):
        prefix[k + 1:, k] = (base - logp[1 + S + k])[k + 1:]
    return Explanation("occlusion", source, prefix)


def attention(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
              norm: bool = False) -> Optional[Explanation]:
    """α_ij read with teacher forcing (``norm``: ‖α_ij h_j‖ renormalised); None without attention."""
    if not model.has_attention:
        return None
    src, src_len, tgt_in = batch_inputs(model, src_ids, out_ids, 1)
    with torch.inference_mode():
        memory = model.encode(src, src_len)
        _, alpha = stepwise(model, memory, tgt_in)
    alpha = alpha[0].float().cpu().numpy()  # (T, S)
    if norm:
        values = getattr(memory, "annotations", None)
        values = getattr(memory, "values", None) if values is None else values
        alpha = alpha * values[0].float().norm(dim=-1).cpu().numpy()[None, :]
    T = len(out_ids)
    return Explanation("attention_norm" if norm else "attention", alpha, np.zeros((T, T)))


def explain(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], methods: Sequence[str],
            contrast: Optional[Sequence[int]] = None) -> dict[str, Explanation]:
    """The explanations ``methods`` give (those that apply to the model: attention needs attention)."""
    makers = {"attention": lambda: attention(model, src_ids, out_ids) if contrast is None else None,
              "attention_norm": lambda: attention(model, src_ids, out_ids, True) if contrast is None else None,
              "gradient_x_input": lambda: gradient_x_input(model, src_ids, out_ids, contrast),
              "integrated_gradients": lambda: integrated_gradients(model, src_ids, out_ids, contrast),
              "occlusion": lambda: occlusion(model, src_ids, out_ids, contrast)}
    found = {name: makers[name]() for name in methods}
    return {name: e for name, e in found.items() if e is not None}
