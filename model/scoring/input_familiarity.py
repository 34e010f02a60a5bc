"""Is an input far from what a model was trained on? Cheap signals read off a trace.

A model that meets words it rarely saw, or that is unsure of every token it writes, produces
translations and attention maps that mean little; the app says so in one line (its wording is
the page's) rather than leaving users to guess. Three signals, each from one decode:

- ``<unk>`` pieces: characters the source vocabulary does not have at all;
- fragmented words: SentencePiece splits rare words into many short pieces, so a large share
  of words cut into 3+ pieces means vocabulary the model saw little of;
- a low mean log-probability per output token (the model's own uncertainty).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from model.corpus.vocab import UNK
from model.core.decodable import Vocabulary
from model.decoding.trace import Trace

FRAGMENTED_PIECES = 3  # a word cut into at least this many pieces counts as rare
FRAGMENTED_SHARE = 0.34  # warn when more than this share of the words (and at least 2) are rare
# Mean log p per output token (beam 5) below which the model is unsure. Measured with the caption
# RNNsearch on 300 validation sentences each: captions (its own domain) p10 -0.55, median -0.25;
# Tatoeba's everyday sentences (not its domain) median -0.98; technical sentences median -1.35.
UNSURE_LOGPROB = -0.8


def fragmented_words(pieces: list[str]) -> tuple[int, int]:
    """(words cut into FRAGMENTED_PIECES or more pieces, all words) of a SentencePiece sequence;
    a word starts at a piece beginning with "▁"."""
    lengths: list[int] = []
    for piece in pieces:
        if piece.startswith("\u2581") or not lengths:
            lengths.append(0)
        lengths[-1] += 1
    return sum(n >= FRAGMENTED_PIECES for n in lengths), len(lengths)


@dataclass(frozen=True)
class Unfamiliar:
    """The first signal that fired, with what the page's sentence about it needs."""

    signal: str  # "unknown", "fragmented" or "unsure"
    unknown: int = 0  # source pieces that are <unk>
    rare: int = 0  # words cut into FRAGMENTED_PIECES or more pieces ...
    words: int = 0  # ... of this many words
    per_token: float = 0.0  # mean log p per output token


def familiarity(trace: Trace, src_vocab: Vocabulary) -> Optional[Unfamiliar]:
    """What makes ``trace``'s input look unlike the model's training data, or None."""
    if not trace.source_ids or not trace.target_ids:
        return None
    unknown = sum(i == UNK for i in trace.source_ids)
    if unknown:
        return Unfamiliar("unknown", unknown=unknown)
    rare, words = fragmented_words(trace.source_tokens)
    if rare >= 2 and rare / words > FRAGMENTED_SHARE:
        return Unfamiliar("fragmented", rare=rare, words=words)
    per_token = trace.logprob / len(trace.target_ids)
    if per_token < UNSURE_LOGPROB:
        return Unfamiliar("unsure", per_token=per_token)
    return None
