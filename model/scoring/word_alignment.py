"""Word alignments measured: gold alignments read from files, word-level matrices from subword
ones, links extracted from a matrix, and the Alignment Error Rate of Och & Ney (2003).

A link is ``(i, j)``: source word i, target word j, both counted from 0. For the shared
English-French gold sets the source is English and the target French, as in the shipped
models. Matrices are (target words, source words), like attention: row j is what target word
j looked at.

AER = 1 - (|A & S| + |A & P|) / (|A| + |S|), precision = |A & P| / |A|, recall = |A & S| / |S|,
where A are the predicted links, S the sure gold links and P the possible ones (P includes S).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from model.corpus.textfile import read_text
from model.core.errors import DataError

WORD_START = "\u2581"  # SentencePiece's word-boundary mark
BPE_JOINER = "@@"  # subword-nmt's mark on a piece the next one continues (Joey NMT's BPE models)
MAX_GOLD_BYTES = 64 * 2**20  # a gold file larger than this is refused
MAX_GOLD_SENTENCES = 20_000
EXTRACTIONS = ("target", "source", "intersect", "union", "threshold")
DEFAULT_EXTRACTION = "target"  # each target word linked to its highest-weighted source word (the paper's reading)
THRESHOLD = 0.3  # "threshold": every cell with at least this weight is a link

Link = tuple[int, int]


class AlignmentFormatError(DataError):
    """A gold alignment file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class GoldSentence:
    """One sentence pair of a gold set, pre-tokenised, with its human links."""

    src: tuple[str, ...]  # source words (English for the shared sets)
    tgt: tuple[str, ...]  # target words
    sure: frozenset[Link]  # S
    possible: frozenset[Link]  # P, which includes S


@dataclass(frozen=True)
class GoldSet:
    name: str
    sentences: tuple[GoldSentence, ...]


@dataclass(frozen=True)
class Counts:
    """What AER, precision and recall are computed from; adds up over sentences."""

    predicted: int = 0  # |A|
    sure: int = 0  # |S|
    hit_sure: int = 0  # |A & S|
    hit_possible: int = 0  # |A & P|

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(self.predicted + other.predicted, self.sure + other.sure,
                      self.hit_sure + other.hit_sure, self.hit_possible + other.hit_possible)

    @property
    def aer(self) -> float:
        total = self.predicted + self.sure
        return 1.0 - (self.hit_sure + self.hit_possible) / total if total else 0.0

    @property
    def precision(self) -> float:
        return self.hit_possible / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.hit_sure / self.sure if self.sure else 0.0


def count(predicted: Iterable[Link], gold: GoldSentence) -> Counts:
    links = set(predicted)
    return Counts(len(links), len(gold.sure), len(links & gold.sure), len(links & gold.possible))


# ---------------------------------------------------------------- readers


def _lines(path: str | Path) -> list[str]:
    text = read_text(path, str(path), MAX_GOLD_BYTES)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > MAX_GOLD_SENTENCES and not str(path).endswith(".wa"):
        raise AlignmentFormatError("{path}: more than {limit:,} lines", path=str(path), limit=MAX_GOLD_SENTENCES)
    return lines


def read_tokenised(src_path: str | Path, tgt_path: str | Path) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Line-aligned, space-tokenised source and target files (trailing spaces ignored)."""
    src, tgt = _lines(src_path), _lines(tgt_path)
    if len(src) != len(tgt):
        raise AlignmentFormatError("line counts differ: {src} has {src_lines} lines, {tgt} has {tgt_lines}",
                                   src=str(src_path), src_lines=len(src), tgt=str(tgt_path), tgt_lines=len(tgt))
    return [(tuple(s.split()), tuple(t.split())) for s, t in zip(src, tgt)]


def _link(path, number: int, i: int, j: int, pair) -> Link:
    src, tgt = pair
    if not (0 <= i < len(src) and 0 <= j < len(tgt)):
        raise AlignmentFormatError("{path}, line {number}: position {i}-{j} is past the sentence ({source} source and "
                                   "{target} target words)", path=str(path), number=number, i=i + 1, j=j + 1,
                                   source=len(src), target=len(tgt))
    return i, j


def read_naacl(src_path: str | Path, tgt_path: str | Path, links_path: str | Path) -> GoldSet:
    """The NAACL 2003 format: ``SENT SRC_POS TGT_POS [S|P]`` per line, all counted from 1; a
    missing kind means S; P lines are the possible links beyond S."""
    pairs = read_tokenised(src_path, tgt_path)
    sure: dict[int, set] = {}
    possible: dict[int, set] = {}
    for number, line in enumerate(_lines(links_path), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) not in (3, 4) or not all(f.isdigit() for f in fields[:3]) or \
                (len(fields) == 4 and fields[3] not in ("S", "P")):
            raise AlignmentFormatError("{path}, line {number}: expected 'SENT SRC TGT [S|P]', got {got}",
                                       path=str(links_path), number=number, got=repr(line[:80]))
        sent, i, j = (int(f) for f in fields[:3])
        if not 1 <= sent <= len(pairs):
            raise AlignmentFormatError("{path}, line {number}: sentence {sent} has no text ({src} has {lines} lines)",
                                       path=str(links_path), number=number, sent=sent, src=str(src_path),
                                       lines=len(pairs))
        link = _link(links_path, number, i - 1, j - 1, pairs[sent - 1])
        (possible if len(fields) == 4 and fields[3] == "P" else sure).setdefault(sent - 1, set()).add(link)
    return GoldSet(Path(links_path).stem, tuple(
        GoldSentence(src, tgt, frozenset(sure.get(k, ())), frozenset(sure.get(k, set()) | possible.get(k, set())))
        for k, (src, tgt) in enumerate(pairs)))


def read_pharaoh(src_path: str | Path, tgt_path: str | Path, links_path: str | Path) -> GoldSet:
    """The Pharaoh format: one line per sentence of ``i-j`` (sure) and ``i?j`` (possible)
    links, counted from 0."""
    pairs = read_tokenised(src_path, tgt_path)
    lines = _lines(links_path)
    if len(lines) != len(pairs):
        raise AlignmentFormatError("line counts differ: {src} has {src_lines} lines, {tgt} has {tgt_lines}",
                                   src=str(links_path), src_lines=len(lines), tgt=str(src_path), tgt_lines=len(pairs))
    sentences = []
    for number, (line, pair) in enumerate(zip(lines, pairs), 1):
        sure, possible = set(), set()
        for item in line.split():
            sep = "-" if "-" in item else "?"
            left, _, right = item.partition(sep)
            if not left.isdigit() or not right.isdigit():
                raise AlignmentFormatError("{path}, line {number}: {item} is not an i-j or i?j link", path=str(links_path),
                                           number=number, item=repr(item[:40]))
            link = _link(links_path, number, int(left), int(right), pair)
            (sure if sep == "-" else possible).add(link)
        sentences.append(GoldSentence(*pair, frozenset(sure), frozenset(sure | possible)))
    return GoldSet(Path(links_path).stem, tuple(sentences))


def read_gold(src_path: str | Path, tgt_path: str | Path, links_path: str | Path) -> GoldSet:
    """A gold set in either format: ``.wa`` files are NAACL, anything else Pharaoh."""
    reader = read_naacl if str(links_path).endswith(".wa") else read_pharaoh
    return reader(src_path, tgt_path, links_path)


# ---------------------------------------------------------------- matrices and links


def word_spans(pieces: Sequence[str]) -> list[tuple[int, int]]:
    """[start, end) piece ranges of whole words. SentencePiece pieces: one starting with the
    boundary mark starts a word. Without any such mark, subword-nmt's convention: a piece
    continues the word when the one before ends with "@@" (a word-level vocabulary has no "@@",
    so every piece is a word). Special tokens such as </s> are words of their own."""
    spans: list[tuple[int, int]] = []
    sentencepiece = any(p.startswith(WORD_START) for p in pieces)
    for i, piece in enumerate(pieces):
        starts = piece.startswith(WORD_START) if sentencepiece else not pieces[i - 1].endswith(BPE_JOINER)
        if not spans or starts or _is_special(piece) or _is_special(pieces[i - 1]):
            spans.append((i, i + 1))
        else:
            spans[-1] = (spans[-1][0], i + 1)
    return spans


def _is_special(piece: str) -> bool:
    return piece.startswith("<") and piece.endswith(">")


def word_matrix(matrix: np.ndarray, src_spans: Sequence[tuple[int, int]],
                tgt_spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """(target words, source words) from a (target pieces, source pieces) score matrix: a
    source word's columns are summed (the weight given to a word is the weight given to its
    pieces), a target word's rows averaged (so rows that summed to 1 still do)."""
    cols = np.stack([matrix[:, a:b].sum(axis=1) for a, b in src_spans], axis=1)  # (tgt pieces, src words)
    return np.stack([cols[a:b].mean(axis=0) for a, b in tgt_spans], axis=0)  # (tgt words, src words)


def diagonal_matrix(n_tgt: int, n_src: int) -> np.ndarray:
    """(n_tgt, n_src) scores of the length-proportional diagonal: highest where a word's
    relative position in its sentence equals the other's."""
    tgt = (np.arange(n_tgt) + 0.5) / n_tgt
    src = (np.arange(n_src) + 0.5) / n_src
    return 1.0 - np.abs(tgt[:, None] - src[None, :])


def extract(matrix: np.ndarray, how: str = DEFAULT_EXTRACTION, threshold: float = THRESHOLD) -> set[Link]:
    """Links ``(source i, target j)`` from a (target words, source words) matrix:
    ``target`` each target word to its highest-scoring source word, ``source`` each source word
    to its highest-scoring target word, their ``intersect`` and ``union``, or every cell of at
    least ``threshold`` (``threshold``)."""
    if how not in EXTRACTIONS:
        raise ValueError(f"unknown extraction {how!r}; choose from {', '.join(EXTRACTIONS)}")
    if matrix.size == 0:
        return set()
    by_target = {(int(i), j) for j, i in enumerate(matrix.argmax(axis=1))}
    by_source = {(i, int(j)) for i, j in enumerate(matrix.argmax(axis=0))}
    if how == "target":
        return by_target
    if how == "source":
        return by_source
    if how == "intersect":
        return by_target & by_source
    if how == "union":
        return by_target | by_source
    return {(int(i), int(j)) for j, i in zip(*np.nonzero(matrix >= threshold))}


def grow_diag_final_and(forward: Iterable[Link], backward: Iterable[Link]) -> set[Link]:
    """Symmetrise two directional alignments (Koehn et al. 2003): start from their
    intersection, grow into neighbouring union links that align a so-far unaligned word,
    then add union links whose words are both unaligned."""
    forward, backward = set(forward), set(backward)
    union, links = forward | backward, forward & backward
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]
    grown = True
    while grown:
        grown = False
        for i, j in sorted(links):
            for di, dj in neighbours:
                cand = (i + di, j + dj)
                if cand in union and cand not in links and _unaligned(cand, links, either=True):
                    links.add(cand)
                    grown = True
    for directional in (forward, backward):
        for cand in sorted(directional):
            if cand not in links and _unaligned(cand, links, either=False):
                links.add(cand)
    return links


# Attention from both directions, symmetrised as statistical aligners are: a model translating
# the gold's source into its target links each target word to its best source word; a model of
# the opposite direction links each source word (its output) to its best target word.
BOTH_DIRECTIONS = ("both-intersect", "both-grow-diag-final-and")


def both_directions(forward: np.ndarray, backward: np.ndarray) -> dict[str, set[Link]]:
    """Links from two (target words, source words) matrices of one sentence: ``forward`` from a
    model translating source -> target, ``backward`` from one translating target -> source,
    transposed to the same (target, source) layout. Each direction keeps its own reading (the
    forward model's best source word per target word, the backward model's best target word per
    source word); they are combined by intersection and by grow-diag-final-and."""
    if forward.shape != backward.shape:
        raise ValueError(f"the two directions' matrices differ in shape: {forward.shape} vs {backward.shape}")
    ahead, back = extract(forward, "target"), extract(backward, "source")
    return {"both-intersect": ahead & back, "both-grow-diag-final-and": grow_diag_final_and(ahead, back)}


def _unaligned(link: Link, links: set[Link], either: bool) -> bool:
    src_free = all(i != link[0] for i, _ in links)
    tgt_free = all(j != link[1] for _, j in links)
    return (src_free or tgt_free) if either else (src_free and tgt_free)


def parse_links(text: str, where: str = "links") -> set[Link]:
    """``"0-0 2-1"`` -> {(0, 0), (2, 1)}: one line of Pharaoh links (an aligner's output)."""
    links = set()
    for item in text.split():
        left, sep, right = item.partition("-")
        if not sep or not left.isdigit() or not right.isdigit():
            raise AlignmentFormatError(f"{where}: {item[:40]!r} is not an i-j link")
        links.add((int(left), int(right)))
    return links


def score(predicted: Sequence[Optional[set[Link]]], gold: GoldSet) -> tuple[Counts, list[Optional[Counts]]]:
    """Corpus counts and per-sentence counts; None in ``predicted`` (a sentence that could
    not be scored) stays None and is left out of the corpus counts."""
    per_sentence = [None if links is None else count(links, g) for links, g in zip(predicted, gold.sentences)]
    total = sum((c for c in per_sentence if c is not None), Counts())
    return total, per_sentence
