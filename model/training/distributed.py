"""Training on many processes: ``torchrun --nproc_per_node N -m model.train ...``.

torchrun sets RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT; ``setup`` reads
them and joins the process group (``nccl`` on GPUs, ``gloo`` on CPU). Every rank builds the
same global batches (data order is a function of seed and epoch) and trains on its own
disjoint slice of each; DDP averages the gradients. Only rank 0 writes logs and checkpoints.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import timedelta

import torch
import torch.distributed as dist


@dataclass
class Runtime:
    """Where this process trains."""

    rank: int = 0  # global rank of this process
    world: int = 1  # number of processes
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))  # this rank's device

    @property
    def main(self) -> bool:
        return self.rank == 0


def setup(device: str = "auto") -> Runtime:
    """Join the torchrun process group if launched by torchrun; pick the device."""
    use_cuda = torch.cuda.is_available() if device == "auto" else device == "cuda"
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Runtime(device=torch.device("cuda" if use_cuda else "cpu"))
    if not dist.is_initialized():
        # generous timeout: the other ranks wait while rank 0 trains SentencePiece on a big corpus
        dist.init_process_group("nccl" if use_cuda else "gloo", timeout=timedelta(hours=2))
    local = int(os.environ.get("LOCAL_RANK", dist.get_rank()))
    if use_cuda:
        torch.cuda.set_device(local)
    return Runtime(dist.get_rank(), dist.get_world_size(), torch.device("cuda", local) if use_cuda else torch.device("cpu"))


def shard(index: list[int], rt: Runtime) -> tuple[list[int], bool]:
    """This rank's disjoint slice of a global batch. A rank left with nothing gets one example
    to run with zero weight (DDP needs every rank in every backward): (slice, is_dummy)."""
    part = index[rt.rank::rt.world]
    return (part, False) if part else (index[:1], True)


def all_sum(values: list[float], rt: Runtime) -> list[float]:
    """Element-wise sum of ``values`` over all ranks."""
    if rt.world == 1:
        return values
    tensor = torch.tensor(values, dtype=torch.float64, device=rt.device)
    dist.all_reduce(tensor)
    return tensor.tolist()


def broadcast(obj, rt: Runtime):
    """Rank 0's ``obj`` on every rank (small Python objects: vocabularies, validation scores)."""
    if rt.world == 1:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def cleanup(rt: Runtime) -> None:
    """Leave the process group at the end of training. The ranks first wait for each other, so
    none tears down its side of a connection while another still uses it (rank 0 is the last
    to finish: it writes the checkpoints)."""
    if rt.world > 1 and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
