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


class _Ticket:
    """One request's place in line (compared by identity)."""

    __slots__ = ("places",)

    def __init__(self, places: int):
        self.places = places


class DecodeGate:
    """At most ``limit`` holders at once; the others wait in arrival order."""

    def __init__(self, limit: int, poll_s: float = 0.25):
        if limit < 1:
            raise ValueError(f"the decode limit must be at least 1, got {limit}")
        self.limit, self.poll_s = limit, poll_s
        self._cond = threading.Condition()
        self._running = 0
        self._queue: deque = deque()
        self._polls = 0  # times a waiting request looked again (tests count them instead of sleeping)

    @contextlib.contextmanager
    def slot(self, on_wait: Optional[Callable[[int], None]] = None, places: int = 1) -> Iterator[float]:
        """Hold ``places`` of the ``limit`` places for the ``with`` block; yields the seconds
        spent waiting. A page decoding two models side by side takes two at once: taking them one
        by one could leave two such pages each holding one and waiting for the other.
        While queued, ``on_wait(n)`` is called (outside the lock) whenever ``n``, the number of
        requests that must finish first, changes: the page redraws its "queued" line (only then:
        30 waiting sessions redrawing it at every poll kept their browsers busy), and a Streamlit
        session that was rerun or closed meanwhile stops there, giving its place up."""
        if not 1 <= places <= self.limit:
            raise ValueError(f"a request may take 1 to {self.limit} places, not {places}")
        ticket, start = _Ticket(places), time.perf_counter()
        with self._cond:
            self._queue.append(ticket)
        told = None
        try:
            while not self._admit(ticket):
                ahead = self._waiting_for(ticket)
                if on_wait is not None and ahead != told:
                    on_wait(ahead)
                    told = ahead
                with self._cond:
                    self._cond.wait(timeout=self.poll_s)
                    self._polls += 1
        except BaseException:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                    self._cond.notify_all()
            raise
        try:
            yield time.perf_counter() - start
        finally:
            with self._cond:
                self._running -= places
                self._cond.notify_all()

    def _admit(self, ticket) -> bool:
        """Take the ticket's places if it is first in line and they are free."""
        with self._cond:
            if self._queue[0] is not ticket or self._running + ticket.places > self.limit:
                return False
            self._queue.popleft()
            self._running += ticket.places
            self._cond.notify_all()  # the next in line may fit too
            return True

    def _waiting_for(self, ticket) -> int:
        """Requests that must finish before ``ticket`` starts (at least 1 while it waits)."""
        with self._cond:
            if ticket not in self._queue:
                return 1
            return max(1, self._queue.index(ticket) + self._running - self.limit + 1)

    @property
    def queued(self) -> int:
        """Requests waiting in line."""
        with self._cond:
            return len(self._queue)

    @property
    def running(self) -> int:
        """Places taken by requests that are running."""
        with self._cond:
            return self._running

    @property
    def polls(self) -> int:
        """How many times, in all, waiting requests have looked again."""
        with self._cond:
            return self._polls

    def wait_until(self, predicate, timeout: float) -> bool:
        """Block until ``predicate()`` holds (re-checked at every change of the gate and every
        poll period), at most ``timeout`` seconds; whether it held. For tests and monitors."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, self.poll_s))
        return True
