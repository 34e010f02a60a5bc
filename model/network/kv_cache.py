"""One attention layer's keys and values of the positions read so far, for incremental decoding
(``TransformerModel.step``): what lets a decoder step cost one token's work.

What it buys: the keys and values live in buffers with room for more positions than are
read, so a step writes its token's key and value in place instead of copying every earlier
position into a new tensor (``torch.cat``, a copy of the whole cache at every step). The
buffers are position-major, (capacity, batch, heads, d_k): the positions read so far are one
contiguous block, so a beam search's reordering (``select``) gathers exactly those, in one pass,
into the front of new buffers with room for the next position. ``keys`` and ``values`` are
views of that block in attention's (batch, heads, length, d_k) order. Two guards keep a cache a
value, as a freshly concatenated tensor would be:

- a second step from the same cache (two continuations of one prefix) finds the position
  already written by the first, and copies the buffers instead of overwriting the first's token;
- where gradients flow (explanations differentiate through decoding), nothing is written in
  place: autograd keeps each step's keys for the backward pass, so each step forms new tensors.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch

ROOM = 8  # positions a buffer gains when it is full


class _Written:
    """How many positions of one pair of buffers hold keys and values, shared by every cache on
    those buffers: a cache may write in place only where no other has written."""

    __slots__ = ("length",)

    def __init__(self, length: int):
        self.length = length


@dataclass(frozen=True)
class KeyValueCache:
    """Keys and values of positions 0 .. length - 1 (``keys``, ``values``: each (batch, heads,
    length, d_k)), held in position-major buffers of ``capacity`` positions."""

    key_buffer: torch.Tensor  # (capacity, batch, heads, d_k)
    value_buffer: torch.Tensor  # (capacity, batch, heads, d_k)
    length: int  # positions read so far
    written: _Written  # how far the buffers are written, by this cache or by one appended to it

    @staticmethod
    def empty(batch: int, heads: int, d_k: int, like: torch.Tensor) -> "KeyValueCache":
        """No positions yet, room for ``ROOM``; dtype and device of ``like``."""
        keys = like.new_empty(ROOM, batch, heads, d_k)
        return KeyValueCache(keys, torch.empty_like(keys), 0, _Written(0))

    @property
    def capacity(self) -> int:
        return self.key_buffer.size(0)

    @property
    def keys(self) -> torch.Tensor:
        return self.key_buffer[: self.length].permute(1, 2, 0, 3)  # (batch, heads, length, d_k), a view

    @property
    def values(self) -> torch.Tensor:
        return self.value_buffer[: self.length].permute(1, 2, 0, 3)  # (batch, heads, length, d_k), a view

    def append(self, keys: torch.Tensor, values: torch.Tensor) -> "KeyValueCache":
        """This cache and keys, values (batch, heads, q_len, d_k) of the next q_len positions."""
        end = self.length + keys.size(2)
        if torch.is_grad_enabled() and (keys.requires_grad or values.requires_grad or self.key_buffer.requires_grad):
            keys = torch.cat([self.key_buffer[: self.length], keys.permute(2, 0, 1, 3)])
            values = torch.cat([self.value_buffer[: self.length], values.permute(2, 0, 1, 3)])
            return KeyValueCache(keys, values, end, _Written(end))
        in_place = self.written.length == self.length and end <= self.capacity
        cache = self if in_place else self._moved(_rounded(end + 1))
        cache.key_buffer[self.length:end] = keys.permute(2, 0, 1, 3)  # (q_len, batch, heads, d_k)
        cache.value_buffer[self.length:end] = values.permute(2, 0, 1, 3)
        cache.written.length = end
        return replace(cache, length=end)

    def _moved(self, capacity: int) -> "KeyValueCache":
        """The positions read, copied into new buffers of ``capacity`` positions."""
        keys = self.key_buffer.new_empty(capacity, *self.key_buffer.shape[1:])
        values = torch.empty_like(keys)
        keys[: self.length], values[: self.length] = self.key_buffer[: self.length], self.value_buffer[: self.length]
        return KeyValueCache(keys, values, self.length, _Written(self.length))

    def select(self, index: torch.Tensor) -> "KeyValueCache":
        """The cache of rows ``index`` (batch',): the positions read, gathered in one pass into
        new buffers with room for one more (a beam search reorders after every step)."""
        rows, (_, _, heads, d_k), n = index.numel(), self.key_buffer.shape, self.length
        if torch.is_grad_enabled() and self.key_buffer.requires_grad:  # ``out=`` is not differentiable
            return KeyValueCache(self.key_buffer[:n].index_select(1, index), self.value_buffer[:n].index_select(1, index),
                                 n, _Written(n))
        keys = self.key_buffer.new_empty(_rounded(n + 1), rows, heads, d_k)
        values = torch.empty_like(keys)
        # position p of new row r is position p of old row index[r]: one gather over (n * batch) slabs
        batch = self.key_buffer.size(1)
        flat = (index.unsqueeze(0) + torch.arange(0, n * batch, batch, device=index.device).unsqueeze(1)).view(-1)
        for old, new in ((self.key_buffer, keys), (self.value_buffer, values)):
            torch.index_select(old[:n].view(n * batch, heads * d_k), 0, flat, out=new[:n].view(n * rows, heads * d_k))
        return KeyValueCache(keys, values, n, _Written(n))


def _rounded(positions: int) -> int:
    """A buffer's capacity for at least ``positions``: a multiple of ``ROOM``, so that the buffers
    a decode allocates step after step come in few sizes and the C library reuses the memory it
    freed (buffers of a new size each step are each mapped afresh, page by page)."""
    return -(-positions // ROOM) * ROOM
