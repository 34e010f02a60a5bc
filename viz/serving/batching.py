"""Requests that arrive together, decoded together.

When a class types at once, many sessions ask the same model for a decode with the same
settings. A batched beam search costs far less per sentence than one sentence at a time (30
Multi30k sentences on one thread: 4.31 s one by one, 1.48 s in one batch), so a ``Batcher``
gathers the requests for one model and one set of decoding settings that arrive while that
model is busy (or waiting for a decode slot) and decodes them as one batch:

- the first waiting request leads: it waits for a decode slot (``admitted``), then takes the
  waiting requests in arrival order, as many as ``max_tokens`` allows (source tokens times beam,
  so that one long sentence does not make short ones wait for memory; always at least one);
- the others wait for the leader's result, or lead the next batch when theirs was not taken;
- equal requests in one batch are decoded once;
- when a batch fails, each of its requests is decoded alone, so one request's error reaches only
  that request;
- when the session leading a batch stops in the middle of it (its user closed the page), the
  batch's other requests go back to the front of the line and one of them leads them.
"""
from __future__ import annotations

import contextlib
import threading
from collections import deque
from typing import Callable, ContextManager, Generic, Hashable, Optional, Sequence, TypeVar

I = TypeVar("I", bound=Hashable)  # noqa: E741  a request
R = TypeVar("R")  # its result

MAX_BATCH_TOKENS = 4096  # source tokens x beam in one batch: 16 sentences of 50 pieces at beam 5


class _Entry:
    """One request waiting in a Batcher (compared by identity)."""

    __slots__ = ("item", "tokens", "done", "value", "error")

    def __init__(self, item, tokens: int):
        self.item, self.tokens = item, tokens
        self.done, self.value, self.error = False, None, None


class Batcher(Generic[I, R]):
    """Decodes ``run(items) -> results`` (one result per item, in order) over the requests that
    wait together; thread-safe."""

    def __init__(self, run: Callable[[list[I]], list[R]], max_tokens: int = MAX_BATCH_TOKENS, history: int = 1000):
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        self._run, self.max_tokens = run, max_tokens
        self._cond = threading.Condition()
        self._pending: deque[_Entry] = deque()  # arrival order
        self._leading = False
        self.batches: deque[tuple[I, ...]] = deque(maxlen=history)  # what each batch decoded (tests, monitors)

    def decode(self, item: I, tokens: int, admitted: Callable[[], ContextManager] = contextlib.nullcontext,
               on_wait: Optional[Callable[[], None]] = None) -> R:
        """``item``'s result, decoded in a batch with the requests waiting beside it. ``admitted()``
        is held while a batch this call leads decodes (the server's decode slot); ``on_wait()`` is
        called once if the call waits for a batch another call leads. Raises what decoding
        ``item`` alone raises."""
        return self.decode_many([item], [tokens], admitted, on_wait)[0]

    def decode_many(self, items: Sequence[I], tokens: Sequence[int],
                    admitted: Callable[[], ContextManager] = contextlib.nullcontext,
                    on_wait: Optional[Callable[[], None]] = None) -> list[R]:
        """``decode`` for several items that join the line together, in order (a test set's
        sentences): they fill batches as requests that arrived one by one would. Raises the first
        error among them."""
        entries = [_Entry(item, max(1, n)) for item, n in zip(items, tokens, strict=True)]
        with self._cond:
            self._pending.extend(entries)
            self._cond.notify_all()
        try:
            for k, entry in enumerate(entries):
                self._until_done(entry, admitted, on_wait if k == 0 else None)
        except BaseException:  # a session stopped meanwhile: its requests leave the line
            for entry in entries:
                self._leave(entry)
            raise
        for entry in entries:
            if entry.error is not None:
                raise entry.error
        return [entry.value for entry in entries]

    def _until_done(self, entry: _Entry, admitted, on_wait) -> None:
        """Wait while another call leads; lead whenever no one does, until ``entry`` is decoded."""
        told = False
        while True:
            with self._cond:
                if self._leading and not entry.done and not told and on_wait is not None:
                    told = True
                    self._cond.release()  # a page's callback runs outside the lock
                    try:
                        on_wait()
                    finally:
                        self._cond.acquire()
                while self._leading and not entry.done:
                    self._cond.wait()
                if entry.done:
                    return
                self._leading = True
            try:
                self._lead(admitted)
            except BaseException:  # out of the line before another call may lead and take it
                self._leave(entry)
                raise
            finally:
                with self._cond:
                    self._leading = False
                    self._cond.notify_all()

    def _leave(self, entry: _Entry) -> None:
        with self._cond:
            if entry in self._pending:
                self._pending.remove(entry)

    @property
    def waiting(self) -> int:
        """Requests waiting to be taken into a batch."""
        with self._cond:
            return len(self._pending)

    def wait_until(self, predicate: Callable[["Batcher"], bool], timeout: float = 30.0) -> bool:
        """Block until ``predicate(self)`` holds (re-checked at every change), at most ``timeout``
        seconds; whether it held. For tests and monitors."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self), timeout)

    def _lead(self, admitted: Callable[[], ContextManager]) -> None:
        with admitted():
            with self._cond:
                batch = self._take()
            try:
                self._decode(batch)
            except BaseException:  # the leading session stopped mid-decode (its user left): the batch's
                with self._cond:   # other requests go back to the front of the line, and another leads them
                    for entry in reversed(batch):
                        if not entry.done:
                            self._pending.appendleft(entry)
                    self._cond.notify_all()
                raise

    def _take(self) -> list[_Entry]:
        """The waiting entries in arrival order, up to ``max_tokens`` (at least one)."""
        batch, tokens = [], 0
        while self._pending and (not batch or tokens + self._pending[0].tokens <= self.max_tokens):
            entry = self._pending.popleft()
            batch.append(entry)
            tokens += entry.tokens
        return batch

    def _decode(self, batch: list[_Entry]) -> None:
        unique = list(dict.fromkeys(e.item for e in batch))
        self.batches.append(tuple(unique))
        try:
            results = dict(zip(unique, self._checked(unique)))
            outcome = {item: (results[item], None) for item in unique}
        except Exception:  # noqa: BLE001  each alone, so that an error reaches only its own request
            outcome = {item: self._alone(item) for item in unique}
        with self._cond:
            for entry in batch:
                entry.value, entry.error = outcome[entry.item]
                entry.done = True
            self._cond.notify_all()

    def _checked(self, items: Sequence[I]) -> list[R]:
        results = list(self._run(list(items)))
        if len(results) != len(items):
            raise RuntimeError(f"a batch of {len(items)} gave {len(results)} results")
        return results

    def _alone(self, item: I) -> tuple[Optional[R], Optional[Exception]]:
        try:
            return self._checked([item])[0], None
        except Exception as exc:  # noqa: BLE001  handed to the request's own caller
            return None, exc
