"""Inverted dropout with its mask drawn by ``torch.rand``.

Same distribution as ``nn.Dropout`` (each unit kept with probability 1 - p and scaled by
1 / (1 - p)), but ``nn.Dropout`` draws its mask with ``bernoulli_``, which on CPU costs about
three times as much as ``rand`` (13 ms against 5 ms forward and backward for an (80, 17, 1024)
batch of annotations, 2 threads): at four dropout sites per batch that was 7% of a training step.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class Dropout(nn.Module):
    """``nn.Dropout(p)`` for 0 <= p < 1 (training only; identity in eval mode)."""

    def __init__(self, p: float):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        if x.device.type != "cpu":  # GPUs have one fused dropout kernel
            return F.dropout(x, self.p, training=True)
        # drawn in fp32 even under bf16 autocast, whose coarse uniforms would bias p
        keep = torch.rand(x.shape, device=x.device).ge_(self.p).mul_(1.0 / (1.0 - self.p))  # 0 or 1 / (1 - p)
        return x * keep.to(x.dtype)

    def extra_repr(self) -> str:
        return f"p={self.p}"
