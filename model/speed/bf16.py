"""bfloat16 helpers for training (``train.bf16``).

oneDNN, which runs PyTorch's bf16 matmuls on CPU, builds a kernel for every new matrix shape:
about 15 ms for a (1297, 4929) x (4929, 256) product that then takes 2 ms. A batch's target
token count N differs from batch to batch, so products over all N tokens would pay that at
every step. Padding N to a multiple of ``ROW_BUCKET`` leaves a few dozen shapes, all cached
after the first batches, for at most 127 zero rows of extra work.
"""
from __future__ import annotations

import contextlib

import torch

ROW_BUCKET = 128  # pad token rows to a multiple of this for bf16 products


def autocast(device: torch.device, enabled: bool):
    """bf16 autocast on ``device``; when not ``enabled``, a context that changes nothing (unlike
    ``torch.autocast(enabled=False)``, which would switch off an enclosing autocast)."""
    return torch.autocast(device.type, dtype=torch.bfloat16) if enabled else contextlib.nullcontext()


def padded_size(n: int, device: torch.device, enabled: bool = True) -> int:
    """n rounded up to a multiple of ``ROW_BUCKET``; n itself when not ``enabled`` or not on the
    CPU (oneDNN's kernel cache is a CPU matter)."""
    return n + -n % ROW_BUCKET if enabled and device.type == "cpu" else n


def pad_rows(x: torch.Tensor, enabled: bool = True) -> torch.Tensor:
    """x (N, ...) with zero rows appended up to ``padded_size`` (x itself when none are)."""
    extra = padded_size(x.size(0), x.device, enabled) - x.size(0)
    return torch.cat([x, x.new_zeros(extra, *x.shape[1:])]) if extra else x
