"""Toy translation tasks made on the fly, seeded: what a student trains RNNencdec and RNNsearch on
in a minute to test the paper's claims on their own experiment (model/experiments/lab_run.py).

Each task makes (source tokens, target tokens) pairs whose source has a length in a given range:

- ``reverse``: integers 0-49, written backwards (Joey NMT's tutorial task): an anti-diagonal
  alignment, the hardest for one fixed vector;
- ``copy``: the same integers again: a diagonal alignment;
- ``sort``: the integers in ascending order: each output reads one input found anywhere;
- ``shift``: every integer plus one, modulo 50: a diagonal alignment that also changes each token;
- ``dates``: a date in one of several English surface forms, character by character ("the 29th of
  August 1958", "Aug 29, 1958", "29/08/1958", ...) into ISO 8601 ("1958-08-29"): the classic
  attention exercise; lengths count the source's characters;
- ``everyday``: short English-French pairs read from a Tatoeba file (when the server has one),
  words as tokens, lowercased.

Nothing here reads the clock or global random state: the same task, lengths and seed give the
same pairs on every machine.
"""
from __future__ import annotations

import calendar
import datetime
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Sequence

from model.core.errors import UserError
from model.corpus.parallel import read_pair_file
from model.experiments.token_vocab import SPACE

NUMBERS = tuple(str(n) for n in range(50))  # the integer tasks' tokens
MONTHS = tuple(calendar.month_name[m] for m in range(1, 13))
ISO_CHARS = tuple("0123456789-")
DATE_CHARS = tuple(sorted(set("".join(MONTHS).lower() + "".join(MONTHS)) | set("0123456789,/-") | {SPACE}
                          | set("thndrs")))  # ordinals' endings: 1st 2nd 3rd 4th
FIRST_YEAR, LAST_YEAR = 1900, 2099
MAX_LENGTH = 60  # the longest source a lab task makes (tokens)
MAX_EVERYDAY_WORDS = 12  # everyday pairs longer than this, either side, are left out
EVERYDAY_PAIRS = 20_000  # at most this many everyday pairs are read


class LabError(UserError):
    """A lab setting that cannot be used (an unknown task, lengths no source has, missing data)."""


@dataclass(frozen=True)
class Lengths:
    """An inclusive range of source lengths, in tokens (characters for ``dates``)."""

    low: int
    high: int

    @classmethod
    def parse(cls, text: str) -> "Lengths":
        """"1-10" (or "7", one length); LabError for anything else or lengths outside 1..MAX_LENGTH."""
        found = re.fullmatch(r"\s*(\d{1,3})\s*(?:-\s*(\d{1,3})\s*)?", str(text))
        if not found:
            raise LabError(f"lengths must look like 1-10, got {str(text)[:20]!r}")
        low, high = int(found[1]), int(found[2] or found[1])
        if not 1 <= low <= high <= MAX_LENGTH:
            raise LabError(f"lengths must satisfy 1 <= low <= high <= {MAX_LENGTH}, got {low}-{high}")
        return cls(low, high)

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"

    def __contains__(self, n: int) -> bool:
        return self.low <= n <= self.high

    def values(self) -> range:
        return range(self.low, self.high + 1)


Pair = tuple[tuple[str, ...], tuple[str, ...]]


class Task:
    """A task's vocabulary and its pairs; ``pair(rng, length)`` makes one of a given length."""

    name = ""
    source_symbols: tuple[str, ...] = NUMBERS
    target_symbols: tuple[str, ...] = NUMBERS
    text_task = False  # scored with BLEU as well as exact match

    def pair(self, rng: random.Random, length: int) -> Optional[Pair]:
        """A pair whose source has ``length`` tokens, or None when this task has none that long."""
        raise NotImplementedError

    def lengths_made(self, lengths: Lengths) -> list[int]:
        """The lengths of ``lengths`` this task can make (all, for the integer tasks)."""
        return list(lengths.values())

    def pairs(self, rng: random.Random, lengths: Lengths, n: int) -> list[Pair]:
        """``n`` pairs with source lengths drawn uniformly from the lengths the task makes."""
        made = self.lengths_made(lengths)
        if not made:
            raise LabError(f"the {self.name} task has no source of {lengths} tokens")
        out = []
        while len(out) < n:
            found = self.pair(rng, rng.choice(made))
            if found is not None:
                out.append(found)
        return out

    def stream(self, seed: int, lengths: Lengths, batch: int) -> Iterator[list[Pair]]:
        """Training batches without end, each of ``batch`` fresh pairs, seeded."""
        rng = random.Random(seed)
        while True:
            yield self.pairs(rng, lengths, batch)


class Reverse(Task):
    name = "reverse"

    def pair(self, rng, length):
        src = tuple(rng.choice(NUMBERS) for _ in range(length))
        return src, src[::-1]


class Copy(Task):
    name = "copy"

    def pair(self, rng, length):
        src = tuple(rng.choice(NUMBERS) for _ in range(length))
        return src, src


class Sort(Task):
    name = "sort"

    def pair(self, rng, length):
        src = tuple(rng.choice(NUMBERS) for _ in range(length))
        return src, tuple(sorted(src, key=int))


class Shift(Task):
    name = "shift"

    def pair(self, rng, length):
        src = tuple(rng.choice(NUMBERS) for _ in range(length))
        return src, tuple(str((int(x) + 1) % len(NUMBERS)) for x in src)


def ordinal(day: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st, 22nd, 23rd, ..."""
    ending = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{ending}"


DATE_FORMS = (  # surface forms of a date, written from (day, month name, month number, year)
    lambda d, name, m, y: f"the {ordinal(d)} of {name} {y}",
    lambda d, name, m, y: f"{name} {d}, {y}",
    lambda d, name, m, y: f"{d} {name} {y}",
    lambda d, name, m, y: f"{name[:3]} {d}, {y}",
    lambda d, name, m, y: f"{d:02d}/{m:02d}/{y}",
    lambda d, name, m, y: f"{name.lower()} {ordinal(d)} {y}",
    lambda d, name, m, y: f"{d} {name[:3].lower()} {y}",
)


class Dates(Task):
    """Date normalisation, character by character (spaces as ``SPACE``)."""

    name = "dates"
    source_symbols = DATE_CHARS
    target_symbols = ISO_CHARS

    def pair(self, rng, length):
        for _ in range(200):  # a form and a date of that many characters, if there are any
            day = datetime.date(rng.randint(FIRST_YEAR, LAST_YEAR), 1, 1) + datetime.timedelta(days=rng.randint(0, 364))
            text = rng.choice(DATE_FORMS)(day.day, MONTHS[day.month - 1], day.month, day.year)
            if len(text) == length:
                return tuple(SPACE if c == " " else c for c in text), tuple(day.isoformat())
        return None

    def lengths_made(self, lengths):
        return [n for n in lengths.values() if 10 <= n <= 26]  # "1 May 1958" .. "the 30th of September 1958"


class Everyday(Task):
    """Short English-French pairs of a Tatoeba file, words as tokens."""

    name = "everyday"
    text_task = True

    def __init__(self, path: Path):
        self.by_length = _everyday_pairs(path)
        words = lambda side: tuple(sorted({w for pairs in self.by_length.values() for p in pairs  # noqa: E731
                                           for w in p[side]}))
        self.source_symbols, self.target_symbols = words(0), words(1)

    def pair(self, rng, length):
        pairs = self.by_length.get(length)
        return rng.choice(pairs) if pairs else None

    def lengths_made(self, lengths):
        return [n for n in lengths.values() if self.by_length.get(n)]


def _everyday_pairs(path: Path) -> dict[int, list[Pair]]:
    """The first ``EVERYDAY_PAIRS`` short pairs of a Tatoeba file (English, French tab-separated),
    by English length in words."""
    if not Path(path).is_file():
        raise LabError(f"the everyday task needs Tatoeba's English-French pairs; {path} is not on this machine")
    by_length: dict[int, list[Pair]] = {}
    kept = 0
    corpus = read_pair_file(path)
    for english, french in zip(corpus.src, corpus.tgt):
        src, tgt = (tuple(re.findall(r"\w+|[^\w\s]", side.lower())) for side in (english, french))
        if 0 < len(src) <= MAX_EVERYDAY_WORDS and 0 < len(tgt) <= MAX_EVERYDAY_WORDS:
            by_length.setdefault(len(src), []).append((src, tgt))
            kept += 1
            if kept >= EVERYDAY_PAIRS:
                break
    return by_length


TASKS = {"reverse": Reverse, "copy": Copy, "sort": Sort, "shift": Shift, "dates": Dates, "everyday": Everyday}


def make_task(name: str, everyday_path: Optional[Path] = None) -> Task:
    """The task called ``name``; ``everyday`` reads ``everyday_path``."""
    if name not in TASKS:
        raise LabError(f"unknown task {str(name)[:30]!r}; choose one of {', '.join(TASKS)}")
    if name == "everyday":
        return Everyday(everyday_path or Path("data/tatoeba/eng-fra.tsv.gz"))
    return TASKS[name]()


def held_out_pairs(task: Task, lengths: Lengths, per_length: int, seed: int) -> dict[int, list[Pair]]:
    """``per_length`` test pairs of every length the task makes in ``lengths``, seeded apart from
    training (the seed's own stream, offset)."""
    rng = random.Random(seed * 7919 + 1)
    return {n: [p for p in (task.pair(rng, n) for _ in range(per_length)) if p is not None]
            for n in task.lengths_made(lengths)}


def source_text(task_name: str, tokens: Sequence[str]) -> str:
    """The text a user types for a source of ``task_name``: characters joined (``SPACE`` a space)
    for ``dates``, tokens separated by spaces for the others."""
    if task_name == "dates":
        return "".join(" " if t == SPACE else t for t in tokens)
    return " ".join(tokens)

