"""Checks of the explanation methods that every kind of model must pass (this project's, Joey
NMT's, the tutorials'): the test modules of each kind run them on their own models."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from model.explaining import forced_scoring


def assert_shared_forward_equals_one_variant_each(model, src: Sequence[int], out: Sequence[int],
                                                  contrast: Optional[Sequence[int]] = None, n: int = 5) -> None:
    """``averaged_gradients`` (one forward pass per scale for every position, positions' backward
    passes batched) equals the mean over one variant per position and scale
    (``objective_gradients_many``), for every position and for a few, at ``n`` midpoints."""
    scales = [(s + 0.5) / n for s in range(n)]
    for positions in (list(range(len(out))), list(range(1, len(out), 2))):
        variants = forced_scoring.objective_gradients_many(
            model, [(src, out)], [0] * (n * len(positions)), [i for i in positions for _ in scales],
            scales * len(positions), None if contrast is None else [contrast])[0]
        shared = forced_scoring.averaged_gradients(model, src, out, positions, scales, contrast)
        S, T = len(src), len(out)
        assert shared.source.shape == (len(positions), S) and shared.decoder_inputs.shape == (len(positions), T)
        np.testing.assert_allclose(shared.source, variants.source.reshape(len(positions), n, S).mean(1), atol=1e-5)
        np.testing.assert_allclose(shared.decoder_inputs, variants.decoder_inputs.reshape(len(positions), n, T).mean(1),
                                   atol=1e-5)
