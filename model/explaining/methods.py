"""The explanation methods, each over the decoding interface, so every model gets them
(this project's, Joey NMT's, the tutorials'):

- ``attention``: α_ij itself (RNNsearch and imports with attention); it says nothing about the prefix.
- ``attention_norm``: ‖α_ij h_j‖, the size of what each annotation actually adds to c_i
  (Kobayashi et al. 2020), renormalised per output token.
- ``gradient_x_input``: ∂ log p(y_i) / ∂e · e for each source embedding and each embedding of a word
  already written.
- ``integrated_gradients`` (Sundararajan et al. 2017): the same embeddings scaled from a zero
  baseline to themselves (midpoint rule, more points where a token needs them), gradients
  averaged, times the input; the completeness gap says how far their sum is from
  log p(y_i | x) - log p(y_i | baseline).
- ``occlusion``: log p(y_i) minus its value with one source embedding, or one embedding of a
  word already written, set to zero (the same baseline).
- ``attention_layer_K`` (a model with several attentions, a Transformer): decoder layer K's
  cross-attention averaged over its heads, read as ``attention`` is; ``layer_methods`` names them.

The table of these methods (what each needs, how ``explain`` runs them) is
model/explaining/registry.py. Every method explains log p(y_i) of the given output, read with
teacher forcing; ``contrast``
(a token id per output position) explains log p(y_i) - log p(contrast_i) instead ("why this word
and not that one", Yin & Neubig 2022).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

from model.core.decodable import Decodable
from model.corpus.vocab import BOS
from model.decoding.cross_attention import has_heads
from model.decoding.device import device_of
from model.explaining.explanation import LAYERS, Explanation, layer_method, layer_of
from model.explaining.forced_scoring import (attention_read, averaged_gradients, objective_gradients_many,
                                             output_logprobs)

IG_STEPS = 16  # midpoints per output token to start with
IG_TOLERANCE = 0.02  # an output token whose completeness gap is larger gets twice the midpoints ...
IG_MAX_STEPS = 1024  # ... up to this many


def _prefix_matrix(per_row: np.ndarray, positions: np.ndarray, T: int) -> np.ndarray:
    """(T, T) prefix scores from rows of decoder-input scores (rows, T): the word y_k sits at
    decoder input k+1; only k < i counts for output i."""
    out = np.zeros((T, T))
    for row, i in zip(per_row, positions):
        out[i, :i] = row[1:i + 1]
    return out


def gradient_x_input(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                     contrast: Optional[Sequence[int]] = None) -> Explanation:
    return gradient_x_input_many(model, [(src_ids, out_ids)], None if contrast is None else [contrast])[0]


def gradient_x_input_many(model: Decodable, pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
                          contrasts: Optional[Sequence[Sequence[int]]] = None) -> list[Explanation]:
    """``gradient_x_input`` of several sentence pairs, their output tokens sharing batches."""
    pair_of = [p for p, (_, out) in enumerate(pairs) for _ in out]
    positions = [i for _, out in pairs for i in range(len(out))]
    found = objective_gradients_many(model, pairs, pair_of, positions, [1.0] * len(positions), contrasts)
    return [Explanation("gradient_x_input", g.source, _prefix_matrix(g.decoder_inputs, np.arange(len(out)), len(out)))
            for g, (_, out) in zip(found, pairs)]


def integrated_gradients(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                         contrast: Optional[Sequence[int]] = None, steps: int = IG_STEPS,
                         tolerance: float = IG_TOLERANCE, max_steps: int = IG_MAX_STEPS) -> Explanation:
    """Integrated gradients from the zero-embedding baseline (every source embedding and every
    word written set to zero), by the midpoint rule: ``steps`` points per output token, doubled
    for each output token whose completeness gap |Σ attributions − (f(x) − f(baseline))| /
    |f(x) − f(baseline)| is above ``tolerance``, up to ``max_steps`` (a kink in the model, such
    as maxout's, makes the integrand jump, and the midpoint sum then converges slowly). The
    explanation carries the largest gap left and the most points any token took. All tokens
    still to do share each round's points, so one forward pass per point serves them all
    (``forced_scoring.averaged_gradients``).

    A rule of higher order does not pay here: Gauss-Legendre panels (2-4 nodes) split wherever a
    panel's sum missed f(right) - f(left) needed about as many gradient passes on the shipped
    everyday pair (tried on a 25-word sentence and 15 captions), because the integrand is only
    piecewise smooth: each maxout unit switches pieces somewhere along the path."""
    S, T = len(src_ids), len(out_ids)
    ends = _objective_at_ends(model, src_ids, out_ids, contrast)  # (T, 2): f(x), f(baseline)
    change = ends[:, 0] - ends[:, 1]
    source, inputs, gaps = np.zeros((T, S)), np.zeros((T, T)), np.zeros(T)
    todo, n = list(range(T)), steps  # every token still to do has n points: they all doubled together
    while todo:
        found = averaged_gradients(model, src_ids, out_ids, todo, [(s + 0.5) / n for s in range(n)], contrast)
        for row, i in enumerate(todo):
            source[i], inputs[i] = found.source[row], found.decoder_inputs[row]
            total = source[i].sum() + inputs[i, 1:i + 1].sum()
            gaps[i] = abs(total - change[i]) / max(abs(change[i]), 1e-9)
        todo, most = [i for i in todo if gaps[i] > tolerance and 2 * n <= max_steps], n
        n *= 2
    prefix = _prefix_matrix(inputs, np.arange(T), T)
    return Explanation("integrated_gradients", source, prefix, float(gaps.max()) if T else 0.0, most if T else 0)


def _objective_at_ends(model, src_ids, out_ids, contrast) -> np.ndarray:
    """(T, 2) the objective at each output token with the inputs as they are, and at the baseline
    (every source embedding and every word written set to zero): two forward re-scorings."""
    S, T = len(src_ids), len(out_ids)
    scale = torch.tensor([[1.0], [0.0]])
    return output_logprobs(model, src_ids, out_ids, scale.expand(2, S), scale.expand(2, T), contrast).numpy().T


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
    logp = output_logprobs(model, src_ids, out_ids, source_scale, target_scale, contrast).numpy()  # (rows, T)
    base = logp[0]
    source = (base[None, :] - logp[1:1 + S]).T  # (T, S)
    prefix = np.zeros((T, T))
    for k in range(T - 1):
        prefix[k + 1:, k] = (base - logp[1 + S + k])[k + 1:]
    return Explanation("occlusion", source, prefix)


def attention(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
              norm: bool = False) -> Optional[Explanation]:
    """α_ij read with teacher forcing (``norm``: ‖α_ij h_j‖ renormalised); None without attention."""
    return attention_many(model, [(src_ids, out_ids)])[0].get("attention_norm" if norm else "attention")


def layer_methods(model: Decodable) -> tuple[str, ...]:
    """The ``attention_layer_K`` methods of a model with several attentions (none for one)."""
    if not has_heads(model):
        return ()
    return tuple(layer_method(k + 1) for k in range(model.attention_layers))


def expand_methods(model: Decodable, methods: Sequence[str]) -> list[str]:
    """``methods`` with ``LAYERS`` replaced by the model's ``layer_methods`` (nothing for a model
    with one attention), and layer methods it does not have left out."""
    out = []
    for method in methods:
        if method == LAYERS:
            out += [m for m in layer_methods(model) if m not in out]
        elif (not layer_of(method) or method in layer_methods(model)) and method not in out:
            out.append(method)
    return out


@torch.inference_mode()
def layer_attentions(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int],
                     layers: Sequence[int]) -> dict[str, Explanation]:
    """Each of the 1-based decoder ``layers``' cross-attention averaged over its heads, read with
    teacher forcing in one pass (row i: the step that outputs y_i), by method name."""
    dev = device_of(model)
    memory = model.encode(torch.tensor([list(src_ids)], device=dev), torch.tensor([len(src_ids)], device=dev))
    tgt_in = torch.tensor([[BOS, *out_ids[:-1]]], device=dev)
    cross = model.forced_cross_attention(memory, tgt_in)[0].mean(1).float().cpu().numpy()  # (layers, T, S)
    T = len(out_ids)
    return {layer_method(k): Explanation(layer_method(k), cross[k - 1], np.zeros((T, T))) for k in layers}


ATTENTION_BATCH = 64  # pairs whose attention is read in one batch


def attention_many(model: Decodable, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]
                   ) -> list[dict[str, Explanation]]:
    """``attention`` and its norm-weighted form of each pair ({} without attention), the pairs
    read together, ``ATTENTION_BATCH`` at a time."""
    if not model.has_attention:
        return [{} for _ in pairs]
    out = []
    for start in range(0, len(pairs), ATTENTION_BATCH):
        chunk = pairs[start:start + ATTENTION_BATCH]
        for (_, out_ids), (alpha, norms) in zip(chunk, attention_read(model, chunk)):
            T = len(out_ids)
            found = {"attention": Explanation("attention", alpha, np.zeros((T, T)))}
            if norms is not None:
                found["attention_norm"] = Explanation("attention_norm", alpha * norms[None, :], np.zeros((T, T)))
            out.append(found)
    return out
