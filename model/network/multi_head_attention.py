"""Multi-head scaled dot-product attention (Vaswani et al. 2017, Sections 3.2.1-3.2.2).

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V                         (eq. 1)
    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,
        head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

The h heads' projections W_i^Q (d_model x d_k) are stacked into one d_model x d_model layer
``W_Q`` (likewise ``W_K``, ``W_V``), so one product forms every head's queries; ``split_heads``
then views them per head. Unlike ``torch.nn.MultiheadAttention``, this returns every head's
weights (batch, heads, q_len, k_len): the app shows each of them.
"""
from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    """h heads of width d_k = d_model / h over the same queries and keys."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        if d_model % heads:
            raise ValueError(f"{heads} heads do not divide a width of {d_model}")
        self.heads, self.d_k = heads, d_model // heads
        self.W_Q = nn.Linear(d_model, d_model)  # [W_1^Q ... W_h^Q]
        self.W_K = nn.Linear(d_model, d_model)  # [W_1^K ... W_h^K]
        self.W_V = nn.Linear(d_model, d_model)  # [W_1^V ... W_h^V]
        self.W_O = nn.Linear(d_model, d_model)  # W^O
        # (heads,) each head's output multiplied by its gate before W^O, None: all on (Michel et al.
        # 2019's ξ_h; set only on a copy, ``TransformerModel.with_heads_masked``)
        self.head_gate: Optional[torch.Tensor] = None

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(batch, len, d_model) -> (batch, heads, len, d_k)."""
        return x.unflatten(-1, (self.heads, self.d_k)).transpose(1, 2)

    def keys_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """K W^K and V W^V of x (batch, len, d_model), each (batch, heads, len, d_k): formed once
        per sentence for the cross-attention, once per token for a decoder's cache."""
        return self.split_heads(self.W_K(x)), self.split_heads(self.W_V(x))

    def attend(self, query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
               mask: Optional[torch.Tensor], need_weights: bool = True,
               weights_fn=None) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        """query (batch, q_len, d_model) against projected keys and values (batch, heads,
        k_len, d_k); ``mask`` (batch, 1 | q_len, k_len) True where a key may be read.

        Returns the output (batch, q_len, d_model) and the weights used (batch, heads, q_len,
        k_len), None without ``need_weights`` (then PyTorch's fused kernel computes the same output).
        ``weights_fn`` maps the computed weights to the ones used (the app's what-if)."""
        q = self.split_heads(self.W_Q(query))  # (batch, heads, q_len, d_k)
        attn_mask = None if mask is None else mask.unsqueeze(1)  # (batch, 1, q_len | 1, k_len)
        if not need_weights and weights_fn is None:
            out = F.scaled_dot_product_attention(q, keys, values, attn_mask=attn_mask)
            weights = None
        else:
            scores = q @ keys.transpose(-1, -2) / math.sqrt(self.d_k)  # (batch, heads, q_len, k_len), eq. 1
            if attn_mask is not None:
                scores = scores.masked_fill(~attn_mask, float("-inf"))
            weights = torch.softmax(scores, dim=-1)
            if weights_fn is not None:
                weights = weights_fn(weights)
            out = weights @ values  # (batch, heads, q_len, d_k)
        if self.head_gate is not None:
            out = out * self.head_gate.to(out.dtype).view(1, -1, 1, 1)
        merged = out.transpose(1, 2).flatten(2)  # Concat(head_1 .. head_h): (batch, q_len, d_model)
        return self.W_O(merged), weights
