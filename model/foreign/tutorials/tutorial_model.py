"""What the three tutorials' models share behind the decoding interface: the id maps at the
boundary (model/foreign/tutorials/tutorial_vocab.py), the tutorial's own output cap, the source
embedding saliency differentiates against, and the last step from the tutorial's logits to this
project's log-probabilities."""
from __future__ import annotations

import torch
from torch import nn

from model.core.decodable import Decodable, OutputLength
from model.foreign.tutorials.tutorial_vocab import TutorialVocab


class TutorialModel(nn.Module, Decodable):
    """A tutorial's network (its modules as ``encoder`` and ``decoder``, the source embedding as
    ``encoder.embedding``) whose decoder states are one tensor per row, and whose greedy decode
    stops after ``cap`` tokens without an end token (``OutputLength.cut_at_cap``)."""

    def __init__(self, vocabs: tuple[TutorialVocab, TutorialVocab], cap: int):
        super().__init__()
        self.cap = cap
        self.register_buffer("src_ids", vocabs[0].map.tensor(), persistent=False)  # project id -> tutorial id
        self.register_buffer("tgt_ids", vocabs[1].map.tensor(), persistent=False)
        self.register_buffer("never", vocabs[1].map.missing_mask(), persistent=False)  # roles the tutorial lacks

    @property
    def output_length(self) -> OutputLength:
        return OutputLength(0.0, self.cap, cut_at_cap=True)

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        return self.encoder.embedding(self.src_ids[src])  # (batch, src_len, E)

    def logprobs(self, logits: torch.Tensor) -> torch.Tensor:
        """The tutorial's logits (batch, V) in its ids -> log-probabilities (batch, V') in this
        project's ids: a plain log-softmax over the tutorial's whole vocabulary (no token masked),
        probability 0 for the roles it lacks."""
        out = torch.log_softmax(logits.float(), dim=-1).index_select(1, self.tgt_ids)
        return out.masked_fill(self.never, float("-inf"))

    def reorder(self, state: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return state.index_select(0, index)

    @property
    def target_embedding(self) -> nn.Module:
        return self.decoder.embedding
