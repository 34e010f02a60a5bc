"""The word vocabularies of the tutorials' models (model/foreign/tutorials/pytorch_tutorial.py, bentrevett.py,
d2l.py), with this project's ids at the boundary.

A tutorial numbers its words its own way: the PyTorch tutorial has SOS 0 and EOS 1 and no padding
or unknown-word entry; bentrevett's torchtext vocabulary starts <unk>, <pad>, <sos>, <eos>; d2l's is
sorted, so its specials lie wherever the alphabet puts them. The decoding interface numbers
<pad> 0, <unk> 1, <s> 2, </s> 3 (model/core/decodable.py). ``IdMap`` maps between the two: the
project's ids are the tutorial's four specials (those it has) followed by its other words in
their own order; a role the tutorial lacks keeps its project id and is never produced
(probability 0, which changes no argmax over the tutorial's own words).

``TutorialVocab`` is one side's text to ids: the tutorial's own text handling (``split``, the
framing included: an appended end token, a start token, padding), the tutorial's strings for its
words, and ``</s>`` for the end token, so a trace ends with ``</s>`` exactly when the tutorial's
decode ended.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

import torch

from model.core.errors import CheckpointError, DataError
from model.corpus.vocab import BOS, EOS, PAD, UNK

ROLES = ("pad", "unk", "bos", "eos")  # in the order of the project's ids 0..3
PROJECT_ID = {"pad": PAD, "unk": UNK, "bos": BOS, "eos": EOS}
END = "</s>"  # how a trace shows the end token, whatever the tutorial calls it


@dataclass(frozen=True)
class IdMap:
    """Ids between a tutorial's vocabulary and this project's, for one side."""

    to_tutorial: tuple[int, ...]  # project id -> tutorial id (a role the tutorial lacks: its end token's id)
    missing: tuple[int, ...]  # project ids of roles the tutorial lacks: never produced

    @classmethod
    def of(cls, size: int, specials: dict[str, Optional[int]]) -> "IdMap":
        """``size`` tutorial ids, ``specials`` {role: tutorial id or None}."""
        placed = [specials.get(role) for role in ROLES]
        fallback = specials["eos"]  # any real id; only looked up where the input is masked or never produced
        others = [i for i in range(size) if i not in set(placed)]
        to_tutorial = tuple(fallback if t is None else t for t in placed) + tuple(others)
        return cls(to_tutorial, tuple(PROJECT_ID[r] for r, t in zip(ROLES, placed) if t is None))

    def __len__(self) -> int:
        return len(self.to_tutorial)

    def tensor(self) -> torch.Tensor:
        """(project size,) long: the tutorial id of each project id."""
        return torch.tensor(self.to_tutorial, dtype=torch.long)

    def missing_mask(self) -> torch.Tensor:
        """(project size,) bool: True at project ids the tutorial has no word for."""
        mask = torch.zeros(len(self), dtype=torch.bool)
        mask[list(self.missing)] = True
        return mask


class TutorialVocab:
    """One side of a tutorial model: its text handling and its words, with this project's ids."""

    def __init__(self, words: Sequence[str], specials: dict[str, Optional[int]], split: Callable[[str], list[str]],
                 unknown: str = "unk"):
        """``words`` in the tutorial's id order; ``specials`` {role: tutorial id or None};
        ``split(text)`` the tutorial's tokens of a sentence, framing included; ``unknown`` "unk"
        (an unknown word reads as the tutorial's unknown-word entry) or "refuse" (DataError naming
        the words: the PyTorch tutorial has no such entry); ``model`` names it in that error."""
        self.words, self.split, self.unknown = list(words), split, unknown
        self.map = IdMap.of(len(self.words), specials)
        back = {t: p for p, t in enumerate(self.map.to_tutorial) if p not in self.map.missing}
        self.to_project = [back[t] for t in range(len(self.words))]
        self.index = {w: self.to_project[t] for t, w in reversed(list(enumerate(self.words)))}
        self.strings = [self.words[t] for t in self.map.to_tutorial]
        self.strings[EOS] = END
        for role in ("pad", "unk"):
            if PROJECT_ID[role] in self.map.missing:
                self.strings[PROJECT_ID[role]] = f"<{role}>"

    def __len__(self) -> int:
        return len(self.map)

    def tokens(self, text: str) -> list[str]:
        """The tutorial's tokens of ``text`` (framing included); none for blank text."""
        return self.split(text) if text.strip() else []

    def encode(self, text: str) -> list[int]:
        tokens = self.tokens(text)
        unknown = [t for t in tokens if t not in self.index]
        if unknown and self.unknown == "refuse":
            shown = ", ".join(dict.fromkeys(unknown))
            raise DataError("not in this model's vocabulary: {words}. It has no entry for unknown words (as in "
                            "the PyTorch tutorial); use words its training data has", words=shown[:300])
        return [self.index.get(t, UNK) for t in tokens]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.strings[int(i)] for i in ids]

    def decode(self, ids: Iterable[int]) -> str:
        """The words of ``ids`` joined by spaces, as the tutorials print them; <pad>, <s> and
        </s> dropped."""
        return " ".join(self.strings[int(i)] for i in ids if int(i) not in (PAD, BOS, EOS))


def token_list(value, where: str, side: str) -> list[str]:
    """A side of a vocab.json: a list of strings, or the PyTorch tutorial's ``index2word``
    dictionary (JSON keys "0", "1", ... with no gap), as a list in id order."""
    if isinstance(value, dict):
        try:
            keyed = {int(k): v for k, v in value.items()}
        except (TypeError, ValueError):
            raise CheckpointError(f"{where}: {side!r} has keys that are not word ids") from None
        if sorted(keyed) != list(range(len(keyed))):
            raise CheckpointError(f"{where}: {side!r} ids are not 0..{len(keyed) - 1} without gaps")
        value = [keyed[i] for i in range(len(keyed))]
    if not isinstance(value, list) or not all(isinstance(w, str) for w in value):
        raise CheckpointError(f"{where}: {side!r} must be a list of words (or an index2word dictionary)")
    if not value:
        raise CheckpointError(f"{where}: {side!r} is empty")
    return value


def special_ids(words: Sequence[str], names: dict[str, Optional[str]], where: str, side: str) -> dict[str, Optional[int]]:
    """{role: tutorial id} of the special tokens named ``names`` {role: string or None}, looked
    up by their strings (the first occurrence), each required."""
    found = {}
    for role, name in names.items():
        if name is None:
            found[role] = None
            continue
        if name not in words:
            raise CheckpointError(f"{where}: the {side} vocabulary has no {name!r}; not this tutorial's vocabulary")
        found[role] = list(words).index(name)
    return found
