"""What an explanation method says about one translation, and how it is compared.

For each output token y_i a method gives a score to every source token x_j (``source``) and to
every word already written, y_k with k < i (``prefix``). Scores may be signed (occlusion,
integrated gradients); ``normalised`` takes their magnitudes and divides each output token's row
by its total, so that, as with attention, source and prefix together sum to 1 per output token,
and ``shares`` splits that 1 into the part on the source sentence and the part on the prefix.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LAYERS = "layers"  # asks for every decoder layer's attention of a model with several (a Transformer)
LAYER_PREFIX = "attention_layer_"  # "attention_layer_K": decoder layer K's cross-attention, mean over heads


def layer_method(layer: int) -> str:
    """The method name of 1-based decoder ``layer``'s mean attention."""
    return f"{LAYER_PREFIX}{layer}"


def layer_of(method: str) -> int:
    """The 1-based layer of a ``layer_method`` name, 0 for any other method."""
    tail = method[len(LAYER_PREFIX):] if method.startswith(LAYER_PREFIX) else ""
    return int(tail) if tail.isdigit() and len(tail) <= 2 else 0


@dataclass(frozen=True)
class Explanation:
    method: str  # a name in model/explaining/registry.py's table, or a layer_method
    source: np.ndarray  # (T, S) score of source token j for output token i
    prefix: np.ndarray  # (T, T) score of output token k for output token i; 0 where k >= i
    completeness_gap: float = float("nan")  # integrated gradients only: the largest relative gap over output tokens
    steps: int = 0  # integrated gradients only: the most interpolation points an output token took

    def __post_init__(self):
        T = self.source.shape[0]
        if self.prefix.shape != (T, T):
            raise ValueError(f"prefix scores {self.prefix.shape} for {T} output tokens")
        if np.any(np.triu(self.prefix) != 0):
            raise ValueError("a prefix score on or after its own output token")

    def normalised(self) -> tuple[np.ndarray, np.ndarray]:
        """(source (T, S), prefix (T, T)) magnitudes, each row of the two together summing to 1
        (an all-zero row stays zero)."""
        source, prefix = np.abs(self.source), np.abs(self.prefix)
        total = source.sum(1, keepdims=True) + prefix.sum(1, keepdims=True)
        total = np.where(total > 0, total, 1.0)
        return source / total, prefix / total

    def shares(self) -> np.ndarray:
        """(T, 2): for each output token, the share of its explanation on the source sentence
        and on the words already written."""
        source, prefix = self.normalised()
        return np.stack([source.sum(1), prefix.sum(1)], axis=1)

    def source_importance(self) -> np.ndarray:
        """(S,) each source token's share summed over the output: the order faithfulness curves remove them in."""
        return self.normalised()[0].sum(0)
