"""A per-process limit on decoding work that runs at once, first come first served.

When a whole class presses Translate together on a 2-core server, running every beam search
at once makes each of them as slow as all of them together. ``DecodeGate`` lets ``limit``
decodes run and queues the rest in arrival order, telling each waiting caller how many are
ahead of it so the page can say so instead of freezing.
"""
from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from typing import Callable, Iterator, Optional


class DecodeGate:
    """At most ``limit`` holders at once; the others wait in arrival order."""

    def __init__(self, limit: int, poll_s: float = 0.25):
        if limit < 1:
            raise ValueError(f"the decode limit must be at least 1, got {limit}")
        self.limit, self.poll_s = limit, poll_s
        self._cond = threading.Condition()
        self._running = 0
        self._queue: deque = deque()

    @contextlib.contextmanager
    def slot(self, on_wait: Optional[Callable[[int], None]] = None) -> Iterator[float]:
        """Hold one of the ``limit`` places for the ``with`` block; yields the seconds spent
        waiting. ``on_wait(n_ahead)`` is called (outside the lock) while queued, each time
        the number of requests ahead changes."""
        ticket, start, told = object(), time.perf_counter(), None
        with self._cond:
            self._queue.append(ticket)
        try:
            while True:
                with self._cond:
                    ahead = self._queue.index(ticket)
                    if ahead == 0 and self._running < self.limit:
                        self._queue.popleft()
                        self._running += 1
                        break
                    waiting_for = ahead + self._running - self.limit + 1  # requests to finish before ours starts
                if on_wait is not None and waiting_for != told:
                    on_wait(waiting_for)
                    told = waiting_for
                with self._cond:
                    self._cond.wait(timeout=self.poll_s)
        except BaseException:
            with self._cond:
                if ticket in self._queue:  # a rerun stopped us while queued: give the place up
                    self._queue.remove(ticket)
                    self._cond.notify_all()
            raise
        try:
            yield time.perf_counter() - start
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    @property
    def queued(self) -> int:
        with self._cond:
            return len(self._queue)
