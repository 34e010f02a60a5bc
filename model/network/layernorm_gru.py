"""Layer-normalised GRU pieces (Ba, Kiros & Hinton 2016, "Layer Normalization", Section 3.1).

Each gate's pre-activation is normalised on its own, input side and recurrent side
separately: r, z = sigma(LN(W_rz x) + LN(U_rz h)), h~ = tanh(LN(W x) + LN(U [r o h])),
h' = (1 - z) o h + z o h~ (the paper's reset-before-U form, as in our decoder).

Why it is not "the plain GRU with identity gains": LN subtracts each vector's own mean and
divides by its own standard deviation before the gain and bias apply, so no fixed gain and
bias undo it for every input. The tests check the normalised statistics instead.
"""
from __future__ import annotations

import torch
from torch import nn

from model.network.gru import gru_update


class BlockLayerNorm(nn.Module):
    """LayerNorm applied separately to each of ``blocks`` consecutive chunks of ``size`` units,
    each with its own gain and bias: (..., blocks * size) -> same shape."""

    def __init__(self, blocks: int, size: int, eps: float = 1e-5):
        super().__init__()
        self.blocks, self.size, self.eps = blocks, size, eps
        self.gain = nn.Parameter(torch.ones(blocks, size))
        self.bias = nn.Parameter(torch.zeros(blocks, size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.unflatten(-1, (self.blocks, self.size))  # (..., blocks, size)
        normed = torch.nn.functional.layer_norm(x, (self.size,), eps=self.eps)
        return (normed * self.gain + self.bias).flatten(-2)


class LayerNormGRUCell(nn.Module):
    """One LN-GRU step: x (batch, input) and h (batch, hidden) -> h' (batch, hidden)."""

    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.W = nn.Linear(input_size, 3 * hidden)  # [W_r; W_z; W] x
        self.U_rz = nn.Linear(hidden, 2 * hidden, bias=False)
        self.U = nn.Linear(hidden, hidden, bias=False)
        self.ln_input, self.ln_rz, self.ln_u = BlockLayerNorm(3, hidden), BlockLayerNorm(2, hidden), BlockLayerNorm(1, hidden)

    def forward(self, x_gates: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """x_gates = W x (batch, 3 * hidden), precomputed for all steps by the caller."""
        n = self.hidden
        x_gates = self.ln_input(x_gates)
        r, z = torch.sigmoid(x_gates[:, : 2 * n] + self.ln_rz(self.U_rz(h))).chunk(2, dim=-1)
        candidate = torch.tanh(x_gates[:, 2 * n:] + self.ln_u(self.U(r * h)))
        return gru_update(h, z, candidate)


class LayerNormBiGRU(nn.Module):
    """Bidirectional LN-GRU over padded batches; padding never updates a state, so the
    backward direction starts at each sentence's own last token (as packing does for nn.GRU)."""

    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.forward_cell = LayerNormGRUCell(input_size, hidden)
        self.backward_cell = LayerNormGRUCell(input_size, hidden)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (batch, S, input), mask (batch, S) -> annotations (batch, S, 2 * hidden) with zeros
        at padding, and summary (batch, 2 * hidden) = [forward last ; backward first]."""
        outputs = []
        for cell, steps in ((self.forward_cell, range(x.size(1))), (self.backward_cell, reversed(range(x.size(1))))):
            gates = cell.W(x)  # (batch, S, 3 * hidden) in one product
            h = x.new_zeros(x.size(0), self.hidden)
            states = [None] * x.size(1)
            for t in steps:
                keep = mask[:, t].unsqueeze(1)
                h = torch.where(keep, cell(gates[:, t], h), h)
                states[t] = h * keep
            outputs.append(torch.stack(states, dim=1))
        annotations = torch.cat(outputs, dim=-1)  # (batch, S, 2 * hidden)
        return annotations, torch.cat([h_forward_last(outputs[0], mask), outputs[1][:, 0]], dim=-1)


def h_forward_last(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Forward state at each sentence's last real token: (batch, S, hidden) -> (batch, hidden)."""
    last = mask.sum(1).clamp(min=1) - 1
    return states[torch.arange(states.size(0)), last]
