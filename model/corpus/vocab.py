"""Subword vocabularies: one SentencePiece model per language.

Ids 0-3 are fixed for every model this project trains: <pad>=0, <unk>=1, <s>=2, </s>=3.
Character coverage is 1.0 so accented letters never become <unk>.
"""
from __future__ import annotations

import io
import random
from functools import cached_property
from pathlib import Path
from typing import Iterable, Sequence

import sentencepiece as spm

PAD, UNK, BOS, EOS = 0, 1, 2, 3


class Vocab:
    """A loaded SentencePiece model with the project's id conventions."""

    def __init__(self, model_proto: bytes):
        self.proto = model_proto
        self.sp = spm.SentencePieceProcessor()
        try:
            self.sp.LoadFromSerializedProto(model_proto)
        except Exception as exc:  # sentencepiece raises RuntimeError/OSError variants
            raise ValueError(f"not a SentencePiece model ({exc})") from None
        specials = (self.sp.pad_id(), self.sp.unk_id(), self.sp.bos_id(), self.sp.eos_id())
        if specials != (PAD, UNK, BOS, EOS):
            raise ValueError(f"SentencePiece model has special ids {specials}, expected (0, 1, 2, 3)")

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        return cls(Path(path).read_bytes())

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self.proto)

    def __len__(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, text: str) -> list[int]:
        return self.sp.encode(text, out_type=int)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self.sp.encode(list(texts), out_type=int)

    def pieces(self, ids: Iterable[int]) -> list[str]:
        table = self._pieces
        return [table[i] if 0 <= i < len(table) else self.sp.id_to_piece(i) for i in map(int, ids)]

    @cached_property
    def _pieces(self) -> tuple[str, ...]:
        """Every id's piece, read once: a traced beam search names each of its candidates."""
        return tuple(self.sp.id_to_piece(i) for i in range(len(self)))

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ``ids``; <pad>, <s> and </s> are dropped, <unk> shows as SentencePiece's ⁇."""
        return self.sp.decode([int(i) for i in ids if int(i) not in (PAD, BOS, EOS)])


def train_vocab(sentences: Sequence[str], vocab_size: int, sample_lines: int = 2_000_000,
                seed: int = 1) -> Vocab:
    """Train a unigram SentencePiece model on ``sentences`` (sampled down to ``sample_lines``).

    ``hard_vocab_limit`` is off so that tiny corpora yield a smaller vocabulary
    instead of an error; read the real size with ``len(vocab)``.
    """
    lines = [s for s in sentences if s.strip()]
    if not lines:
        raise ValueError("cannot train a vocabulary on an empty corpus")
    if len(lines) > sample_lines:
        lines = random.Random(seed).sample(lines, sample_lines)
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buffer, vocab_size=vocab_size,
        model_type="unigram", character_coverage=1.0, hard_vocab_limit=False,
        pad_id=PAD, unk_id=UNK, bos_id=BOS, eos_id=EOS, num_threads=2,
        max_sentence_length=100_000, minloglevel=2,
    )
    return Vocab(buffer.getvalue())
