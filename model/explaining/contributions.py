"""How much each source word and each word already written contributes to every output word,
followed through all the layers of a Transformer: ALTI+, value zeroing and attention rollout.

The three methods share one frame and differ in one place. Each attention block (model/core/anatomy.py)
mixes its inputs; a method turns the block into a mixing matrix C whose row i says how much of
query i's output comes from each input (rows non-negative, summing to 1). The matrices are then
composed through the network (Abnar & Zuidema 2020's rollout; ALTI+'s eq. 9-11 in Ferrando et
al. 2022b, "Towards Opening the Black Box of Neural Machine Translation: Source and Target
Contributions in Transformers", EMNLP):

    encoder:  R_enc <- C_l R_enc, from R_enc = I (S x S), for each encoder layer l
    decoder:  R = [0 | I] (T x (S + T): source tokens, then the decoder inputs <s> y_1 .. y_{T-1})
              self-attention of layer l:   R <- C_self R
              cross-attention of layer l:  R_i <- c_i,res R_i + Σ_j c_ij [R_enc,j | 0]

so row i of the final R splits output y_i between the source and the prefix, non-negative and
summing to 1 (<s> is one of the decoder inputs; ``Explanation.prefix`` leaves it out, as every
method does). The feed-forward sub-layers act on each position alone and mix nothing.

How each method reads a block, with T_i(x_j) = Σ_h w^h_ij W^O_h (W^V_h LN(x_j) + b^V_h) and
y_i = x_i + Σ_j T_i(x_j) + b^O:

- ``rollout`` (Abnar & Zuidema 2020, ACL): C = 0.5 mean_h(A_h) + 0.5 I, the residual as half of
  every row; in the cross-attention, half on the residual and half on the source.
- ``alti_plus`` (Ferrando et al. 2022a eq. 7-8, 2022b): the residual x_i joins T_i(x_i) (in a
  cross-attention it is a term of its own), and c_ij = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁),
  normalised over j: a term close to the output it helps form contributes much.
- ``value_zeroing`` (Mohebbi et al. 2023, EACL): token j's value vector set to zero (its terms
  T_i(x_j) dropped from every query), the rest of the layer recomputed (the feed-forward
  sub-layer; after a decoder self-attention also the cross-attention), and c_ij the cosine
  distance between the layer's output for i as it was and as it becomes, normalised over j. In a
  cross-attention the residual's score is the distance when x_i is dropped from y_i instead.

Deviations from the papers, said here and in docs/explanations.md: ALTI's papers decompose
post-norm layers; these models are pre-norm, so each LayerNorm belongs to one token before its
block and no linear split of a LayerNorm is needed. Value zeroing was defined for encoders; its
composition through an encoder-decoder and the cross-attention's residual score are this
project's reading of it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from model.core.anatomy import CROSS, Anatomy, Block
from model.core.decodable import Decodable
from model.corpus.vocab import BOS
from model.decoding.device import device_of
from model.explaining.explanation import Explanation

ROLLOUT, ALTI_PLUS, VALUE_ZEROING = "rollout", "alti_plus", "value_zeroing"


@dataclass(frozen=True)
class Contributions:
    """Each output token's split over the source and the decoder inputs, rows summing to 1."""

    source: np.ndarray  # (T, S)
    inputs: np.ndarray  # (T, T) over the decoder inputs <s> y_1 .. y_{T-1}; 0 after position i

    def explanation(self, method: str) -> Explanation:
        T = self.inputs.shape[0]
        prefix = np.zeros((T, T))
        for i in range(T):
            prefix[i, :i] = self.inputs[i, 1:i + 1]  # the word y_k is the decoder input k + 1
        return Explanation(method, self.source, prefix)


def _rows(scores: torch.Tensor) -> torch.Tensor:
    """Each row divided by its sum; a row of zeros stays zero."""
    total = scores.sum(-1, keepdim=True)
    return scores / torch.where(total > 0, total, torch.ones_like(total))


def rollout_matrix(block: Block) -> torch.Tensor:
    """Self-attention: (q, k) 0.5 A + 0.5 I; cross-attention: (q, 1 + k), the residual first."""
    mean = block.weights.mean(0)  # (q_len, k_len)
    if block.kind == CROSS:
        return torch.cat([torch.full_like(mean[:, :1], 0.5), 0.5 * mean], dim=1)
    return 0.5 * mean + 0.5 * torch.eye(mean.size(0), mean.size(1), dtype=mean.dtype, device=mean.device)


def _with_residual(block: Block) -> torch.Tensor:
    """The vectors that sum to the block's output less its bias: self-attention (q, k, d) with
    x_i added to T_i(x_i); cross-attention (q, 1 + k, d), x_i first."""
    terms = block.terms
    if block.kind == CROSS:
        return torch.cat([block.residual.unsqueeze(1), terms], dim=1)
    q = terms.size(0)
    terms = terms.clone()
    terms[torch.arange(q), torch.arange(q)] += block.residual
    return terms


def alti_matrix(block: Block) -> torch.Tensor:
    """c_ij = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁), rows normalised (Ferrando et al. 2022a, eq. 7-8)."""
    y = block.output  # (q_len, d_model)
    terms = _with_residual(block)
    proximity = y.abs().sum(-1, keepdim=True) - (y.unsqueeze(1) - terms).abs().sum(-1)  # (q, k [+1])
    return _rows(proximity.clamp(min=0.0))


def value_zeroing_matrix(block: Block) -> torch.Tensor:
    """c_ij = 1 − cos(z_i, z_i^{¬j}), rows normalised, z the layer's output (Mohebbi et al. 2023)."""
    y = block.output  # (q_len, d_model)
    removed = _with_residual(block) if block.kind == CROSS else block.terms  # what each variant drops
    variants = y.unsqueeze(0) - removed.transpose(0, 1)  # (k [+1], q_len, d_model): variant j drops term j
    z = block.rest(y.unsqueeze(0))  # (1, q_len, d_model)
    z_zeroed = block.rest(variants)  # (k [+1], q_len, d_model)
    distance = 1.0 - torch.nn.functional.cosine_similarity(z, z_zeroed, dim=-1)  # (k [+1], q_len)
    distance = distance.T.clamp(min=0.0)  # (q_len, k [+1])
    read = block.weights.sum(0) > 0  # (q_len, k_len): a key no head of the query reads changes nothing,
    if block.kind == CROSS:          # exactly nothing rather than a rounding error
        read = torch.cat([torch.ones_like(read[:, :1]), read], dim=1)
    return _rows(distance * read)


MATRICES: dict[str, Callable[[Block], torch.Tensor]] = {
    ROLLOUT: rollout_matrix, ALTI_PLUS: alti_matrix, VALUE_ZEROING: value_zeroing_matrix}


def compose(anatomy: Anatomy, matrix: Callable[[Block], torch.Tensor]) -> Contributions:
    """The blocks' mixing matrices composed through the network (the module docstring)."""
    S = anatomy.encoder[0].weights.size(-1) if anatomy.encoder else anatomy.cross[0].weights.size(-1)
    T = anatomy.decoder_states.size(1)
    dtype, device = anatomy.decoder_states.dtype, anatomy.decoder_states.device
    r_enc = torch.eye(S, dtype=dtype, device=device)  # (S, S)
    for block in anatomy.encoder:
        r_enc = matrix(block) @ r_enc
    from_source = torch.cat([r_enc, torch.zeros(S, T, dtype=dtype, device=device)], dim=1)  # (S, S + T)
    r = torch.cat([torch.zeros(T, S, dtype=dtype, device=device), torch.eye(T, dtype=dtype, device=device)], dim=1)
    for self_block, cross_block in zip(anatomy.decoder_self, anatomy.cross):
        r = matrix(self_block) @ r  # (T, S + T)
        c = matrix(cross_block)  # (T, 1 + S)
        r = c[:, :1] * r + c[:, 1:] @ from_source
    r = r.double().cpu().numpy()
    return Contributions(r[:, :S], r[:, S:])


def contributions(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], method: str) -> Contributions:
    """``method``'s (one of ``MATRICES``) contributions of one sentence pair, read with teacher forcing."""
    dev = device_of(model)
    src = torch.tensor(list(src_ids), device=dev)
    tgt_in = torch.tensor([BOS, *out_ids[:-1]], device=dev)
    with torch.inference_mode():
        return compose(model.anatomy(src, tgt_in), MATRICES[method])


def method_of(name: str):
    """The explanation function of ``name`` for the table (model/explaining/registry.py)."""

    def compute(model: Decodable, src_ids, out_ids, contrast=None):
        if contrast is not None or not model.supports_anatomy:
            return None
        return contributions(model, src_ids, out_ids, name).explanation(name)

    return compute
