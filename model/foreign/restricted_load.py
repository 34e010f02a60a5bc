"""The one way a file another tool pickled is read: PyTorch's restricted unpickler
(``torch.load(..., weights_only=True)``), which builds tensors and plain containers only and
refuses anything else (a class, a function, a whole pickled model) without running it."""
from __future__ import annotations

from pathlib import Path

import torch

from model.core.errors import CheckpointError


def load_restricted(path: Path, max_bytes: int, what: str, hint: str = "") -> object:
    """The contents of ``path`` (``what`` it should be, for the messages), at most ``max_bytes``
    long; CheckpointError naming the file when it is missing, too large or refused (``hint``
    added to the refusal: what to save instead)."""
    if not path.is_file():
        raise CheckpointError(f"{path}: missing ({what})")
    if path.stat().st_size > max_bytes:
        raise CheckpointError(f"{path}: larger than {max_bytes // 2**30} GiB; not {what}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError (a class, a whole model), RuntimeError, EOFError: all refused
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"{path}: refused by PyTorch's restricted loader (weights_only=True{hint}): "
                              f"{first[:300]}") from None
