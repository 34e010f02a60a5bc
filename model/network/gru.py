"""The GRU's state update (paper Appendix A.2.2), one function for every GRU that follows the
paper: the decoder (``Decoder.gru``), the Paper page's step-by-step anatomy, and the
layer-normalised cell (``layernorm_gru.py``)."""
from __future__ import annotations

import torch


def gru_update(s_prev: torch.Tensor, z: torch.Tensor, candidate: torch.Tensor) -> torch.Tensor:
    """s_i = (1 - z_i) o s_{i-1} + z_i o s~_i, written as s_{i-1} + z_i o (s~_i - s_{i-1})
    (one product fewer); every argument (batch, n)."""
    return s_prev + z * (candidate - s_prev)
