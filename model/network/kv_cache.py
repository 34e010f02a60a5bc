"""One attention layer's keys and values of the positions read so far, for incremental decoding
(``TransformerModel.step``): what lets a decoder step cost one token's work.

What it buys: the keys and values live in buffers with room for more positions than are
read, so a step writes its token's key and value in place instead of copying every earlier
position into a new tensor (``torch.cat``, a copy of the whole cache at every step). A beam
search's reordering (``select``) gathers whole buffers, room included, in one pass. Two guards
keep a cache a value, as a freshly concatenated tensor would be:

- a second step from the same cache (two continuations of one prefix) finds the position
  already written by the first, and copies the buffers instead of overwriting the first's token;
- where gradients flow (explanations differentiate through decoding), nothing is written in
  place: autograd keeps each step's keys for the backward pass, so each step forms new tensors.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch

ROOM = 8  # positions a buffer gains when it is full: a reorder gathers at most this many unread ones


class _Written:
    """How many positions of one pair of buffers hold keys and values, shared by every cache on
    those buffers: a cache may write in place only where no other has written."""

    __slots__ = ("length",)

    def __init__(self, length: int):
        self.length = length


@dataclass(frozen=True)
class KeyValueCache:
    """Keys and values of positions 0 .. length - 1 (``keys``, ``values``: each (batch, heads,
    length, d_k)), held in buffers of ``capacity`` positions."""

    key_buffer: torch.Tensor  # (batch, heads, capacity, d_k)
    value_buffer: torch.Tensor  # (batch, heads, capacity, d_k)
    length: int  # positions read so far
    written: _Written  # how far the buffers are written, by this cache or by one appended to it

    @staticmethod
    def empty(batch: int, heads: int, d_k: int, like: torch.Tensor) -> "KeyValueCache":
        """No positions yet, room for ``ROOM``; dtype and device of ``like``."""
        keys = like.new_empty(batch, heads, ROOM, d_k)
        return KeyValueCache(keys, torch.empty_like(keys), 0, _Written(0))

    @property
    def capacity(self) -> int:
        return self.key_buffer.size(2)

    @property
    def keys(self) -> torch.Tensor:
        return self.key_buffer[:, :, : self.length]  # (batch, heads, length, d_k), a view

    @property
    def values(self) -> torch.Tensor:
        return self.value_buffer[:, :, : self.length]  # (batch, heads, length, d_k), a view

    def append(self, keys: torch.Tensor, values: torch.Tensor) -> "KeyValueCache":
        """This cache and keys, values (batch, heads, q_len, d_k) of the next q_len positions."""
        end = self.length + keys.size(2)
        if torch.is_grad_enabled() and (keys.requires_grad or values.requires_grad or self.key_buffer.requires_grad):
            keys, values = torch.cat([self.keys, keys], 2), torch.cat([self.values, values], 2)
            return KeyValueCache(keys, values, end, _Written(end))
        in_place = self.written.length == self.length and end <= self.capacity
        cache = self if in_place else self._moved(end + ROOM)
        cache.key_buffer[:, :, self.length:end] = keys
        cache.value_buffer[:, :, self.length:end] = values
        cache.written.length = end
        return replace(cache, length=end)

    def _moved(self, capacity: int) -> "KeyValueCache":
        """The positions read, copied into new buffers of ``capacity`` positions."""
        batch, heads, _, d_k = self.key_buffer.shape
        keys = self.key_buffer.new_empty(batch, heads, capacity, d_k)
        values = torch.empty_like(keys)
        keys[:, :, : self.length], values[:, :, : self.length] = self.keys, self.values
        return KeyValueCache(keys, values, self.length, _Written(self.length))

    def select(self, index: torch.Tensor) -> "KeyValueCache":
        """The cache of rows ``index`` (batch',): each buffer gathered whole, in one pass."""
        return KeyValueCache(self.key_buffer.index_select(0, index), self.value_buffer.index_select(0, index),
                             self.length, _Written(self.length))
