"""Alignment models: how the decoder scores source annotations at each step.

``additive`` is RNNsearch's (Bahdanau et al. 2015, Section 3.1 and Appendix A.1.2); ``dot``,
``general``, ``concat`` and ``location`` follow Luong, Pham & Manning (2015), Section 3.1,
with the query being the previous decoder state s_{i-1} (RNNsearch's order of computation).
All implement ``Attention``; ``ATTENTIONS`` at the end is the one registry (``ModelConfig``
validates ``model.attention`` against it), so a new variant is one class and one entry here.
Costs below are per decoder step and sentence (S source tokens, n decoder units, 2n
annotation units, n' alignment units).
"""
from __future__ import annotations

import torch
from torch import nn

from model.core.errors import ConfigError
from model.speed.activations import tanh_of_sum


class Attention(nn.Module):
    """The interface every alignment model implements.

    Built as ``Kind(query_dim=n, key_dim=2n, align_dim=n')``. A variant implements ``keys``,
    run once per sentence, and ``energies``, run at every decoder step; ``forward`` masks
    padding before the softmax for all of them, so traces look the same for every variant.
    """

    def reset_parameters(self) -> None:
        """Initialisation of its own after NMTModel's defaults (Xavier matrices, zero biases);
        none unless a variant needs it."""

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """annotations h_j (batch, src_len, 2n) -> whatever ``energies`` reads per step,
        (batch, src_len, d): the part of e_ij that does not depend on the step."""
        raise NotImplementedError

    def forward(self, query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """query s_{i-1} (batch, n), keys from ``keys`` (batch, src_len, d), mask (batch, src_len)
        True at real tokens -> (energies e_i, alpha_i), each (batch, src_len): energies -inf and
        alpha 0 at padding, alpha summing to 1 over real positions.

        A query (batch, k, n) holds k queries for each row of keys (a beam search's k hypotheses
        of one sentence read that sentence's keys once); energies and alpha are then
        (batch, k, src_len)."""
        grouped = query.dim() == 3
        queries = query if grouped else query.unsqueeze(1)  # (batch, k, n)
        energies = self.energies(queries, keys).masked_fill(~mask.unsqueeze(1), float("-inf"))  # (batch, k, S)
        alpha = torch.softmax(energies, dim=-1)
        return (energies, alpha) if grouped else (energies.squeeze(1), alpha.squeeze(1))

    def energies(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """queries (batch, k, n), keys (batch, src_len, d) -> e_ij (batch, k, src_len), before
        masking and the softmax (``forward`` does both)."""
        raise NotImplementedError


class AdditiveAttention(Attention):
    """e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j);  alpha_ij = softmax_j(e_ij) over real positions.

    ``U_a h_j`` does not depend on the decoder step, so ``keys`` computes it once per
    sentence; each step then costs one (n x n') product plus O(src_len * n') work.
    Initialised as in Appendix B: W_a, U_a ~ N(0, 0.001^2), v_a = 0, so attention
    starts uniform. In untraced decodes tanh is computed as 2σ(2x) − 1 (model/speed/activations.py).
    """

    def __init__(self, query_dim: int, key_dim: int, align_dim: int):
        super().__init__()
        self.W_a = nn.Linear(query_dim, align_dim, bias=False)
        self.U_a = nn.Linear(key_dim, align_dim, bias=True)
        self.v_a = nn.Linear(align_dim, 1, bias=False)

    def reset_parameters(self) -> None:
        nn.init.normal_(self.W_a.weight, std=0.001)
        nn.init.normal_(self.U_a.weight, std=0.001)
        nn.init.zeros_(self.U_a.bias)
        nn.init.zeros_(self.v_a.weight)

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """annotations (batch, src_len, 2n) -> U_a h_j (batch, src_len, n')."""
        return self.U_a(annotations)

    def energies(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """keys are U_a h_j (batch, src_len, n')."""
        hidden = tanh_of_sum(self.W_a(queries).unsqueeze(2), keys.unsqueeze(1))  # (batch, k, src_len, n')
        return self.v_a(hidden).squeeze(-1)


class GeneralAttention(Attention):
    """Luong "general": e_ij = s_{i-1}^T W_a h_j. W_a h_j is precomputed (keys), so a step
    costs O(S * n)."""

    def __init__(self, query_dim: int, key_dim: int, align_dim: int):
        super().__init__()
        self.W_a = nn.Linear(key_dim, query_dim, bias=False)

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """-> W_a h_j (batch, src_len, n)."""
        return self.W_a(annotations)

    def energies(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """e_ij = s_{i-1} . (W_a h_j): one batched product (batch, src_len, n) x (batch, n, k)."""
        return torch.bmm(keys, queries.transpose(1, 2)).transpose(1, 2)


class DotAttention(Attention):
    """Luong "dot": e_ij = s_{i-1}^T h_j. Our annotations (2n) and states (n) differ in size,
    so the query is first projected, P s_{i-1} (n -> 2n): a step costs O(n * 2n + S * 2n).
    (Luong's dot needs equal sizes and has no parameters; with a projection it is a
    bilinear form like ``general``, parametrised on the query side.)"""

    def __init__(self, query_dim: int, key_dim: int, align_dim: int):
        super().__init__()
        self.P = nn.Linear(query_dim, key_dim, bias=False) if query_dim != key_dim else nn.Identity()

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """-> h_j itself (batch, src_len, 2n)."""
        return annotations

    def energies(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """e_ij = (P s_{i-1}) . h_j."""
        return torch.bmm(keys, self.P(queries).transpose(1, 2)).transpose(1, 2)


class ConcatAttention(Attention):
    """Luong "concat": e_ij = v_a^T tanh(W_a [s_{i-1}; h_j]). The same function class as
    ``additive`` but applied to the concatenation at every step, nothing precomputed:
    a step costs O(S * (n + 2n) * n'), the most expensive variant."""

    def __init__(self, query_dim: int, key_dim: int, align_dim: int):
        super().__init__()
        self.W_a = nn.Linear(query_dim + key_dim, align_dim)
        self.v_a = nn.Linear(align_dim, 1, bias=False)

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """-> h_j itself (batch, src_len, 2n): nothing can be precomputed."""
        return annotations

    def energies(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """e_ij = v_a . tanh(W_a [s_{i-1}; h_j]) over every (query, position) pair."""
        k, S = queries.size(1), keys.size(1)
        pairs = torch.cat([queries.unsqueeze(2).expand(-1, -1, S, -1), keys.unsqueeze(1).expand(-1, k, -1, -1)],
                          dim=-1)  # (batch, k, S, n+2n)
        return self.v_a(torch.tanh(self.W_a(pairs))).squeeze(-1)


class LocationAttention(Attention):
    """Luong "location": a_i = softmax(W_a s_{i-1}) over positions only, never looking at the
    annotations. W_a has one row per position up to ``max_positions`` (512: above the 4 x 80
    tokens of the longest joined training example); a step costs
    O(n * max_positions)."""

    def __init__(self, query_dim: int, key_dim: int, align_dim: int, max_positions: int = 512):
        super().__init__()
        self.W_a = nn.Linear(query_dim, max_positions)

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """-> h_j itself (batch, src_len, 2n); only its length is read."""
        return annotations

    def energies(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """e_i = the first src_len entries of W_a s_{i-1}."""
        if keys.size(1) > self.W_a.out_features:
            raise ValueError(f"location attention covers {self.W_a.out_features} positions, got {keys.size(1)}")
        return self.W_a(queries)[..., : keys.size(1)]


# The registry: config name (model.core.config.ATTENTION_KINDS, in its order) -> class.
ATTENTIONS: dict[str, type[Attention]] = {"additive": AdditiveAttention, "dot": DotAttention,
                                          "general": GeneralAttention, "concat": ConcatAttention,
                                          "location": LocationAttention}


def make_attention(kind: str, query_dim: int, key_dim: int, align_dim: int) -> Attention:
    """The alignment model named ``kind`` (a key of ATTENTIONS)."""
    if kind not in ATTENTIONS:
        raise ConfigError(f"unknown attention {kind!r}; choose from {', '.join(ATTENTIONS)}")
    return ATTENTIONS[kind](query_dim, key_dim, align_dim)
