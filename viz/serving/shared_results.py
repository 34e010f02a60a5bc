"""Results shared by every session of a server: a bounded store of finished work.

A class opening the same example, or two pages running the same decode, should pay for it
once. Unlike a memo (``shared_cache.py``), where a second caller waits silently for the first
one's result, the store leaves a miss to its caller: a decode waits in line at the decode
queue, telling the user so, and looks again once admitted. Stored values are never mutated.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Hashable, TypeVar

from viz.serving.shared_cache import shared

T = TypeVar("T")


class ResultStore:
    """A thread-safe LRU of finished results, at most ``max_entries`` of them."""

    def __init__(self, max_entries: int):
        self.max_entries, self._items, self._lock = max_entries, OrderedDict(), threading.Lock()

    def get(self, key: Hashable):
        """The result stored under ``key``, or None."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def items(self) -> list[tuple[Hashable, object]]:
        """What is stored, least recently used first."""
        with self._lock:
            return list(self._items.items())

    def discard(self, drop: Callable[[Hashable], bool]) -> None:
        """Forget every result whose key ``drop`` is true of (results of a model replaced since)."""
        with self._lock:
            for key in [k for k in self._items if drop(k)]:
                del self._items[key]

    def put(self, key: Hashable, value) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    def get_or_compute(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The stored result for ``key``, else ``compute()``'s, stored. Two sessions asking at
        once may both compute; the decode gate (``decodes.py``) makes the second one find the
        first one's result when it queued behind it."""
        found = self.get(key)
        if found is None:
            found = compute()
            self.put(key, found)
        return found


@dataclass(frozen=True)
class ResultKind:
    """One kind of shared result: what it is, and how many the server keeps."""

    purpose: str
    max_entries: int


# Every kind of result a server shares between sessions, declared once.
TRANSLATIONS = ResultKind("translations", 256)  # a trace with its beam tree is up to a few MB at beam 16
EVALUATIONS = ResultKind("evaluations", 32)  # a test set's decodes by one model, beams dropped
SCORES = ResultKind("scores", 128)  # a test set's scores, significance, length buckets and stress rows
PAPER_RUNS = ResultKind("paper runs", 64)  # the Paper page's decodes of joined test sentences
ALIGNMENTS = ResultKind("alignments", 8)  # a gold set's measurement, with every sentence's matrices
STATISTICAL_LINKS = ResultKind("statistical links", 128)  # eflomal's links for one translation
EXPLANATIONS = ResultKind("explanations", 512)  # one method's explanation of one decode, with its faithfulness
ATTENTION_CHECKS = ResultKind("attention checks", 256)  # how faithful one heatmap is: three numbers
FAITHFULNESS_TABLES = ResultKind("faithfulness tables", 32)  # a test set's mean faithfulness per method, one model
ANATOMIES = ResultKind("anatomies", 64)  # the paper's quantities of one decode, step by step
LOGIT_LENSES = ResultKind("logit lenses", 64)  # one decode read at every decoder layer: (L, T, 5) words
TEACHER_FORCING = ResultKind("teacher forcing", 64)  # one sentence and its reference through both prefixes


@shared()
def result_store(kind: ResultKind) -> ResultStore:
    """The process's ResultStore for ``kind``."""
    return ResultStore(kind.max_entries)
