"""An evaluation set: line-aligned sources and references, validated, from two files, one
TSV/CSV table, or uploaded bytes; and the length stress test's joined versions of one."""
from __future__ import annotations

import csv
import io
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from model.corpus.textfile import Source, read_text
from model.core.errors import DataError

MAX_LINES = 10_000  # default cap on an evaluation set's size (UI and CLI)
MAX_EVAL_BYTES = 64 * 2**20  # files (decompressed) above this are refused; 10,000 lines need far less
MAX_LINE_CHARS = 1_000  # longer source lines are cut, and the cut lines counted


@dataclass
class EvalSet:
    """Validated source/reference pairs and what validation changed."""

    src: list[str]
    ref: list[str]
    name: str = "test set"
    cut_to: int = 0  # the number of lines kept when a longer file was cut to its first lines; 0: not cut
    long_lines: int = 0  # source lines longer than MAX_LINE_CHARS, cut to that length
    joined: int = 0  # k, when each item joins k consecutive lines of a test set (the length stress test)

    @property
    def notes(self) -> list[str]:
        """What validation changed, in words (the command line's; pages word it themselves)."""
        notes = []
        if self.cut_to:
            notes.append(f"evaluating the first {self.cut_to:,} lines only")
        if self.long_lines:
            notes.append(f"{self.long_lines} source line(s) longer than {MAX_LINE_CHARS} characters were cut")
        if self.joined:
            notes.append(f"{len(self.src)} items of {self.joined} joined lines")
        return notes


def split_lines(text: str, name: str, max_lines: int = MAX_LINES, take_first: bool = False) -> list[str]:
    """Lines of ``text``; more than ``max_lines`` are refused (or cut, with ``take_first``)
    before the whole text is split, so a huge upload never becomes millions of strings."""
    if text.count("\n", 0, len(text) - 1) + 1 <= max_lines:
        return text.splitlines()
    if not take_first:
        raise DataError("{name}: more than {limit:,} lines, the limit; evaluate the first {limit:,} instead", name=name,
                        limit=max_lines)
    # one line more than the cap, so build_eval_set sees the excess, cuts it, and says so
    return [line.rstrip("\r") for line in text.split("\n", max_lines + 1)[:max_lines + 1]]


def parse_table(text: str, name: str, max_lines: int = MAX_LINES, take_first: bool = False) -> tuple[list[str], list[str]]:
    """Source and reference columns of a TSV or CSV (tab if the first line has one). A header
    naming ``source``/``reference`` (or src/ref) picks columns; otherwise the first two."""
    if not text.strip():
        raise DataError("{name}: the file is empty", name=name)
    dialect = "excel-tab" if "\t" in text.split("\n", 1)[0] else "excel"
    rows = list(itertools.islice(csv.reader(io.StringIO(text), dialect=dialect), max_lines + 2))
    if len(rows) > max_lines + 1 and not take_first:
        raise DataError("{name}: more than {limit:,} rows, the limit; evaluate the first {limit:,} instead", name=name,
                        limit=max_lines)
    header = [cell.strip().lower() for cell in rows[0]]
    src_col = next((header.index(h) for h in ("source", "src") if h in header), None)
    ref_col = next((header.index(h) for h in ("reference", "ref", "target") if h in header), None)
    if src_col is not None and ref_col is not None:
        rows = rows[1:]
    else:
        src_col, ref_col = 0, 1
    for number, row in enumerate(rows, start=1):
        if len(row) <= max(src_col, ref_col):
            raise DataError("{name}: row {number} has {columns} column(s); need source and reference columns", name=name,
                            number=number, columns=len(row))
    return [r[src_col] for r in rows], [r[ref_col] for r in rows]


def build_eval_set(src: Sequence[str], ref: Sequence[str], name: str = "test set", src_name: str = "source",
                   ref_name: str = "reference", max_lines: int = MAX_LINES, take_first: bool = False) -> EvalSet:
    """Validate line-aligned texts: empty, mismatched, too many lines, over-long lines."""
    if not src or not any(s.strip() for s in src):
        raise DataError("{name}: the file is empty", name=src_name)
    if not ref or not any(r.strip() for r in ref):
        raise DataError("{name}: the file is empty", name=ref_name)
    if len(src) != len(ref):
        raise DataError("line counts differ: {src} has {src_lines} lines, {ref} has {ref_lines}", src=src_name,
                        src_lines=len(src), ref=ref_name, ref_lines=len(ref))
    cut_to = 0
    if len(src) > max_lines:
        if not take_first:
            raise DataError("{name}: {lines:,} lines, more than the limit of {limit:,}; evaluate the first "
                            "{limit:,} instead", name=src_name, lines=len(src), limit=max_lines)
        src, ref, cut_to = src[:max_lines], ref[:max_lines], max_lines
    long_lines = sum(len(s) > MAX_LINE_CHARS for s in src)
    return EvalSet([s[:MAX_LINE_CHARS].strip() for s in src], [r.strip() for r in ref], name, cut_to, long_lines)


def read_lines_of(source: Source, name: str, max_lines: int = MAX_LINES, take_first: bool = False) -> list[str]:
    """The lines of a file path or uploaded bytes (plain or gzip), within the size and line caps."""
    return split_lines(read_text(source, name, MAX_EVAL_BYTES), name, max_lines, take_first)


def eval_set_from_files(src: Source, ref: Source, src_name: str, ref_name: str, max_lines: int = MAX_LINES,
                        take_first: bool = False) -> EvalSet:
    """An EvalSet from two line-aligned files (paths or uploaded bytes), named after the source."""
    lines = [read_lines_of(source, name, max_lines, take_first) for source, name in ((src, src_name), (ref, ref_name))]
    return build_eval_set(*lines, name=Path(src_name).name, src_name=src_name, ref_name=ref_name,
                          max_lines=max_lines, take_first=take_first)


def eval_set_from_table(table: Source, name: str, max_lines: int = MAX_LINES, take_first: bool = False) -> EvalSet:
    """An EvalSet from one TSV/CSV file (path or uploaded bytes) with source and reference columns."""
    src, ref = parse_table(read_text(table, name, MAX_EVAL_BYTES), name, max_lines, take_first)
    return build_eval_set(src, ref, name, name, name, max_lines, take_first)


def join_consecutive(test: EvalSet, k: int) -> EvalSet:
    """Length stress test: items that join k consecutive lines, sources and references alike;
    a last group shorter than k is dropped."""
    if len(test.src) < k:  # no items at all: scoring nothing would fail far from here
        raise DataError("{name}: {lines} line(s), fewer than the {k} to join into one item", name=test.name,
                        lines=len(test.src), k=k)
    n = len(test.src) // k * k
    src = [" ".join(test.src[i:i + k]) for i in range(0, n, k)]
    ref = [" ".join(test.ref[i:i + k]) for i in range(0, n, k)]
    return EvalSet(src, ref, f"{test.name} (k={k})", joined=k)
