"""What a piece of work's matrix products alone cost on this machine: its arithmetic floor.

``record(work)`` runs ``work()`` once and keeps the shape and layout of every matrix product
PyTorch's dispatcher runs for it, forward and backward: ``mm``, ``addmm``, ``bmm`` and
``baddbmm``, which linear layers and GRUs come down to where gradients are taken. In inference
mode the dispatcher sees ``linear`` and ``gru`` whole, and they are kept whole. It watches through
a ``TorchDispatchMode``, the mode PyTorch's "Extending PyTorch" notes document for seeing every
operation, backward ones included (it lives in ``torch.utils._python_dispatch``).

``Products.replay()`` then runs the same products, in the same order, on random tensors of those
shapes and strides, and returns the seconds they took: what the work would cost if nothing but
its arithmetic took time. ``Products.gflop`` counts their floating-point operations (a multiply
and an add each). Only shapes are kept, not tensors, so work with a backward pass over thousands
of rows fits in memory.

Used by ``bench/explain_speed.py --products`` and ``bench/decode_speed.py``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _product(first: int, second: int):
    """FLOPs of a product whose factors are arguments ``first`` and ``second``: 2 x rows x inner x
    columns, per matrix of a batch."""
    return lambda args: 2 * args[first].numel() * args[second].shape[-1]


def _linear(args) -> int:
    x, w = args[0], args[1]  # (..., in), (out, in)
    return 2 * x.numel() * w.shape[0]


def _gru(args) -> int:
    """input, hx, params, has_biases, layers, dropout, train, bidirectional, batch_first: every
    weight matrix times every step of every row."""
    x, params = args[0], args[2]
    steps_rows = x.numel() // x.shape[-1]
    return sum(2 * steps_rows * w.shape[0] * w.shape[1] for w in params if w.dim() == 2)


FLOPS = {aten.mm.default: _product(0, 1), aten.addmm.default: _product(1, 2), aten.bmm.default: _product(0, 1),
         aten.baddbmm.default: _product(1, 2), aten.linear.default: _linear, aten.gru.input: _gru}


def _layout(value):
    """A tensor's (shape, stride, dtype), a list's layouts, anything else as it is."""
    if isinstance(value, torch.Tensor):
        return tuple(value.shape), tuple(value.stride()), value.dtype
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return [_layout(v) for v in value]
    return value


@dataclass
class Products:
    """The matrix products a piece of work ran: (op, the layout of each tensor argument)."""

    calls: list = field(default_factory=list)
    gflop: float = 0.0

    def replay(self) -> float:
        """Seconds to run every product once more, in order, on random tensors laid out alike."""
        made: dict = {}

        def tensor(layout):
            if isinstance(layout, list):
                return [tensor(one) for one in layout]
            if not (isinstance(layout, tuple) and len(layout) == 3 and isinstance(layout[2], torch.dtype)):
                return layout
            if layout not in made:
                shape, stride, dtype = layout
                made[layout] = torch.empty_strided(shape, stride, dtype=dtype).normal_()
            return made[layout]

        calls = [(op, [tensor(a) for a in args]) for op, args in self.calls]
        with torch.inference_mode():
            start = time.perf_counter()
            for op, args in calls:
                op(*args)
            return time.perf_counter() - start


class _Recorder(TorchDispatchMode):
    def __init__(self, found: Products):
        super().__init__()
        self.found = found

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FLOPS and not kwargs:
            self.found.calls.append((func, [_layout(a) for a in args]))
            self.found.gflop += FLOPS[func](args) / 1e9
        return func(*args, **kwargs)


def record(work: Callable[[], object]) -> Products:
    """Run ``work()`` once and return the products it ran."""
    found = Products()
    with _Recorder(found):
        work()
    return found
