"""Token cross-entropy fused with the output layer W_o (the paper's p(y_i) = softmax(W_o t_i)).

On a CPU the output layer's cost is less its matmuls than the passes over the (N, V) logits
around them: for a batch of N = 2,000 target tokens and V = 6,000 words that is 12M floats
(48 MB), written and read by log-softmax, its backward, label smoothing and casts, each a trip
to main memory. Here the forward pass takes a few rows at a time, so their logits stay in
cache: logits, log-softmax, loss and d loss / d logits are done there, and only the gradient
of the logits (N, V) leaves the chunk, once. Two large matmuls then give the gradients of the
features and of W_o, and backward only scales them. In fp32 the results equal
``F.cross_entropy(F.linear(t, W_o, b_o), y, label_smoothing=eps, reduction="sum")`` (tests).
"""
from __future__ import annotations

import torch

from model.speed.bf16 import pad_rows, padded_size

CHUNK_ROWS = 128  # rows of logits per chunk: 128 x 6k fp32 = 3 MB, about one core's L2


class LinearCrossEntropy(torch.autograd.Function):
    """Summed label-smoothed cross-entropy of logits = features W^T + bias (see module doc)."""

    @staticmethod
    def forward(ctx, features, weight, bias, targets, smoothing: float, bf16: bool, need_grad: bool):
        """features (N, l), weight (V, l), bias (V,), targets (N,) ids -> summed loss ().

        Logits and softmax are fp32 either way: bf16 logits would be off by up to 0.03 at
        magnitude 10. With ``bf16`` the two gradient matmuls take d loss / d logits, the
        features and W_o rounded to bf16, and return bf16 results (then stored as fp32)."""
        n, vocab = features.size(0), weight.size(0)
        rows = padded_size(n, features.device, bf16)  # see precision.py
        grad_logits = None  # (rows, V), zero past row n
        if need_grad:
            grad_logits = features.new_empty(rows, vocab, dtype=torch.bfloat16 if bf16 else features.dtype)
            grad_logits[n:] = 0
        # fp32 training writes each chunk's logits straight into its rows of grad_logits, where
        # they become the gradient in place; otherwise a chunk-sized scratch buffer holds them
        scratch = None if need_grad and not bf16 else features.new_empty(min(n, CHUNK_ROWS), vocab)
        total, grad_bias = features.new_zeros(()), torch.zeros_like(bias)
        for start in range(0, n, CHUNK_ROWS):
            x, gold = features[start:start + CHUNK_ROWS], targets[start:start + CHUNK_ROWS].unsqueeze(1)
            out = scratch[:len(x)] if scratch is not None else grad_logits[start:start + len(x)]
            logp = torch.addmm(bias, x, weight.t(), out=out)  # (c, V) logits, then in place:
            logp.sub_(torch.logsumexp(logp, dim=-1, keepdim=True))  # log-softmax
            # (1 - eps) * -log p(gold) + eps * mean over the vocabulary of -log p (PyTorch's smoothing)
            total -= (1 - smoothing) * logp.gather(1, gold).sum() + smoothing / vocab * logp.sum()
            if need_grad:  # d loss / d logits = softmax - (1 - eps) onehot(gold) - eps / V
                grad = logp.exp_().sub_(smoothing / vocab)
                grad.scatter_add_(1, gold, grad.new_full(gold.shape, smoothing - 1))
                grad_bias += grad.sum(0)
                if bf16:
                    grad_logits[start:start + len(x)] = grad
        if need_grad:
            x, w = (pad_rows(features.bfloat16()), weight.bfloat16()) if bf16 else (features, weight)
            ctx.save_for_backward((grad_logits @ w)[:n].to(features.dtype), (grad_logits.t() @ x).to(weight.dtype),
                                  grad_bias)
        return total

    @staticmethod
    @torch.autograd.function.once_differentiable  # the saved gradients are constants
    def backward(ctx, grad_total):
        grad_features, grad_weight, grad_bias = ctx.saved_tensors
        return grad_features * grad_total, grad_weight * grad_total, grad_bias * grad_total, None, None, None, None


def linear_cross_entropy(features: torch.Tensor, output: torch.nn.Linear, targets: torch.Tensor,
                         smoothing: float = 0.0, bf16: bool = False) -> torch.Tensor:
    """Summed cross-entropy of ``output(features)`` against ``targets``: features (N, l),
    targets (N,) -> (). ``bf16`` runs the output layer's two gradient matmuls in
    bfloat16; logits, log-softmax and the loss stay fp32. ``output`` must have a bias."""
    need_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (features, output.weight, output.bias))
    return LinearCrossEntropy.apply(features, output.weight, output.bias, targets, float(smoothing), bf16, need_grad)
