"""A toy task's vocabulary: its tokens (or characters) with this project's ids at the boundary."""
from __future__ import annotations

from typing import Iterable, Sequence

from model.corpus.vocab import BOS, EOS, PAD, UNK

SPECIALS = ("<pad>", "<unk>", "<s>", "</s>")  # ids 0..3, as model/corpus/vocab.py numbers them
SPACE = "▁"  # a space, as a character vocabulary's token


class TokenVocab:
    """Text <-> ids for one side of a toy task (the decoding interface's ``Vocabulary``): tokens
    separated by spaces, or, with ``chars``, every character a token (a space is ``SPACE``)."""

    def __init__(self, symbols: Sequence[str], chars: bool = False):
        self.symbols = tuple(SPECIALS) + tuple(s for s in dict.fromkeys(symbols) if s not in SPECIALS)
        self.chars = chars
        self.ids = {s: i for i, s in enumerate(self.symbols)}

    def __len__(self) -> int:
        return len(self.symbols)

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text``."""
        if self.chars:
            return [SPACE if c == " " else c for c in " ".join(text.split())]
        return text.split()

    def encode(self, text: str) -> list[int]:
        """Ids of ``text``'s tokens, <unk> for a token the task never makes; no </s>."""
        return [self.ids.get(t, UNK) for t in self.tokens(text)]

    def encode_tokens(self, tokens: Iterable[str]) -> list[int]:
        return [self.ids.get(t, UNK) for t in tokens]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.symbols[i] if 0 <= i < len(self.symbols) else SPECIALS[UNK] for i in ids]

    def decode(self, ids: Iterable[int]) -> str:
        kept = [self.symbols[i] for i in ids if i not in (PAD, BOS, EOS) and 0 <= i < len(self.symbols)]
        if self.chars:
            return "".join(" " if t == SPACE else t for t in kept)
        return " ".join(kept)
