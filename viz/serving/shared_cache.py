"""Functions whose results every session of a server shares: a thread-safe, bounded memo.

``@shared(max_entries=16)`` keeps a function's results by its arguments for the whole process:
one Translator per checkpoint folder, one listing of a checkpoint's card, and so on. Each key
is computed once however many sessions ask at the same time (the others wait for it), the
least recently used entry goes when there are more than ``max_entries``, and with ``ttl_s``
an entry older than that is computed again. A call that raises stores nothing. The values are
shared, so callers never mutate them.
"""
from __future__ import annotations

import functools
import threading
import time
from collections import OrderedDict
from typing import Callable, Generic, Hashable, Optional, TypeVar

T = TypeVar("T")
_MISSING = object()


class SharedCache(Generic[T]):
    """``compute`` with its results kept by ``key(*args, **kwargs)`` (default: the arguments)."""

    def __init__(self, compute: Callable[..., T], max_entries: Optional[int] = None, ttl_s: Optional[float] = None,
                 key: Optional[Callable[..., Hashable]] = None, clock: Callable[[], float] = time.monotonic):
        if max_entries is not None and max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        if ttl_s is not None and ttl_s <= 0:
            raise ValueError(f"ttl_s must be positive, got {ttl_s}")
        functools.update_wrapper(self, compute)
        self._compute, self.max_entries, self.ttl_s, self._clock = compute, max_entries, ttl_s, clock
        self._key = key or (lambda *args, **kwargs: (args, tuple(sorted(kwargs.items()))))
        self._items: OrderedDict = OrderedDict()  # key -> (value, time stored)
        self._computing: dict = {}  # key -> [lock held while computing it, callers using the lock]
        self._lock = threading.Condition()  # guards the two dicts; notified when ``computing`` changes

    def __call__(self, *args, **kwargs) -> T:
        key = self._key(*args, **kwargs)
        found = self._get(key)
        if found is not _MISSING:
            return found
        with self._lock:
            entry = self._computing.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
            self._lock.notify_all()
        try:
            with entry[0]:  # one caller computes; the others wait here, then find its result
                found = self._get(key)
                if found is _MISSING:
                    found = self._compute(*args, **kwargs)
                    self._put(key, found)
        finally:
            with self._lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._computing[key]
                self._lock.notify_all()
        return found

    def _get(self, key):
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return _MISSING
            if self.ttl_s is not None and self._clock() - item[1] >= self.ttl_s:
                del self._items[key]
                return _MISSING
            self._items.move_to_end(key)
            return item[0]

    def _put(self, key, value) -> None:
        with self._lock:
            self._items[key] = (value, self._clock())
            self._items.move_to_end(key)
            while self.max_entries is not None and len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    @property
    def size(self) -> int:
        """Results stored now."""
        with self._lock:
            return len(self._items)

    @property
    def computing(self) -> int:
        """Callers computing a result or waiting for another caller's computation of it."""
        with self._lock:
            return sum(users for _, users in self._computing.values())

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until ``predicate()`` holds (re-checked whenever a caller starts or stops
        computing), at most ``timeout`` seconds; whether it held. For tests and monitors."""
        with self._lock:
            return self._lock.wait_for(predicate, timeout)

    def clear(self) -> None:
        """Forget every stored result."""
        with self._lock:
            self._items.clear()


def shared(max_entries: Optional[int] = None, ttl_s: Optional[float] = None,
           key: Optional[Callable[..., Hashable]] = None) -> Callable[[Callable[..., T]], SharedCache[T]]:
    """Decorator: the function's results shared by every session of the process (``SharedCache``)."""
    return lambda compute: SharedCache(compute, max_entries, ttl_s, key)
