"""Checkpoints made from checkpoints of this project: an fp16 copy for shipping (``export``), and
the mean of the weights of several checkpoints of one model (``average``: the last few of a run,
as well-run NMT systems ship)."""
from __future__ import annotations

import shutil
from pathlib import Path

import torch

from model.checkpoints.folder import CARD, load_checkpoint, save_checkpoint
from model.core.config import TrainConfig, dataclass_from_dict
from model.core.errors import CheckpointError
from model.network.architectures import build_model


def export(src: str | Path, dst: str | Path, dtype: torch.dtype = torch.float16) -> Path:
    """Copy a checkpoint with weights cast to ``dtype`` (fp16 halves the shipped size)."""
    model, src_vocab, tgt_vocab, raw = load_checkpoint(src)
    train = dataclass_from_dict(TrainConfig, raw["train"]) if raw.get("train") else None
    out = save_checkpoint(dst, model, src_vocab, tgt_vocab, train, dtype=dtype)
    if (Path(src) / CARD).is_file():
        shutil.copy(Path(src) / CARD, out / CARD)
    return out


def average(paths: list[str | Path], out: str | Path) -> Path:
    """Write the element-wise mean of the weights of ``paths`` (same config and vocabularies,
    else CheckpointError) to ``out``, with the first one's vocabularies and the last one's
    training config."""
    if not paths:
        raise CheckpointError("average needs at least one checkpoint")
    total, first, raw = None, None, None
    for path in paths:
        model, src_vocab, tgt_vocab, raw = load_checkpoint(path)
        if first is None:
            first = (model.config, src_vocab, tgt_vocab, path)
            total = {k: v.double() for k, v in model.state_dict().items()}
            continue
        if model.config != first[0]:
            raise CheckpointError("{path}: its model config differs from {first}'s; only checkpoints of one model "
                                  "can be averaged", path=str(path), first=str(first[3]))
        if (src_vocab.proto, tgt_vocab.proto) != (first[1].proto, first[2].proto):
            raise CheckpointError(f"{path}: its vocabularies differ from {first[3]}'s")
        for k, v in model.state_dict().items():
            total[k] += v.double()
    mean = build_model(first[0])
    mean.load_state_dict({k: (v / len(paths)).float() for k, v in total.items()})
    train = dataclass_from_dict(TrainConfig, raw["train"]) if raw.get("train") else None
    return save_checkpoint(out, mean, first[1], first[2], train)

