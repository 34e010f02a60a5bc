"""The alignment model of RNNsearch (paper Section 3.1 and Appendix A.1.2)."""
from __future__ import annotations

import torch
from torch import nn


class AdditiveAttention(nn.Module):
    """e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j);  alpha_ij = softmax_j(e_ij) over real positions.

    ``U_a h_j`` does not depend on the decoder step, so ``keys`` computes it once per
    sentence; each step then costs one (n x n') product plus O(src_len * n') work.
    Initialised as in Appendix B: W_a, U_a ~ N(0, 0.001^2), v_a = 0, so attention
    starts uniform.
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

    def forward(self, query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """query s_{i-1} (batch, n), keys (batch, src_len, n'), mask (batch, src_len) True at
        real tokens -> (energies e_i, alpha_i), each (batch, src_len); padding gets alpha 0
        and energy -inf."""
        hidden = torch.tanh(self.W_a(query).unsqueeze(1) + keys)  # (batch, src_len, n')
        energies = self.v_a(hidden).squeeze(-1).masked_fill(~mask, float("-inf"))  # (batch, src_len)
        return energies, torch.softmax(energies, dim=-1)
