"""Teacher forcing made visible: what a model predicts given the reference's prefix (what
training showed it: every tutorial, and this project's trainer, trains this way) beside what it
predicts given its own prefix (what greedy decoding feeds it), step by step, for one sentence
and its reference.

Both come from the model's own ``step``: the forced side reads <s> y*_1 .. y*_{i-1} of the
reference (``Decodable.teacher_forced``), the free side is the model's greedy decode with a full
trace. Until the outputs first differ (``diverges_at``) the two prefixes are the same, and so are
the two sides' distributions; after it, the free side conditions on its own mistakes, which
training never showed it (exposure bias).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from model.core.errors import DataError
from model.corpus.vocab import BOS, EOS
from model.decoding.device import device_of
from model.decoding.search import SearchConfig, candidates
from model.decoding.trace import Candidate, Trace
from model.decoding.translator import Translator

TOP_K = 5


@dataclass(frozen=True)
class PrefixStep:
    """Output position i, seen from both prefixes."""

    reference: Optional[str]  # y*_i, the reference's token (None past the reference's end)
    forced: list[Candidate]  # the top candidates given the reference's prefix y*_<i
    forced_attention: Optional[np.ndarray]  # (src_len,) α_i given the reference's prefix; None without attention
    free: Optional[str]  # y_i the greedy decode chose (None past its end)
    free_candidates: list[Candidate]  # the top candidates given the decode's own prefix y_<i
    free_attention: Optional[np.ndarray]

    @property
    def forced_agrees(self) -> bool:
        """Given the reference's prefix, the model's first choice is the reference's token."""
        return bool(self.forced) and self.reference is not None and self.forced[0].token == self.reference


@dataclass(frozen=True)
class TeacherForcing:
    """One sentence and its reference through both prefixes."""

    source_tokens: list[str]
    reference_tokens: list[str]  # the reference as the model reads it, ending with </s>
    free: Trace  # the greedy decode (beam 1), with its attention and top candidates
    steps: list[PrefixStep]  # one per position of the longer of the reference and the decode
    diverges_at: Optional[int]  # the first position where the decode's token is not the reference's; None if none
    reference_ids: tuple[int, ...] = ()  # the reference's ids, as reference_tokens

    @property
    def forced_accuracy(self) -> float:
        """Share of the reference's tokens the model ranks first given the reference's prefix."""
        scored = [s for s in self.steps if s.reference is not None]
        return sum(s.forced_agrees for s in scored) / len(scored) if scored else 0.0

    def to_json(self) -> dict:
        def rows(cands):
            return [c.to_json() for c in cands]

        def vector(a):
            return None if a is None else [round(float(x), 6) for x in a]

        return {"source_tokens": self.source_tokens, "reference_tokens": self.reference_tokens,
                "output_tokens": self.free.target_tokens, "diverges_at": self.diverges_at,
                "forced_accuracy": round(self.forced_accuracy, 4),
                "steps": [{"reference": s.reference, "forced": rows(s.forced), "forced_attention": vector(s.forced_attention),
                           "free": s.free, "free_candidates": rows(s.free_candidates),
                           "free_attention": vector(s.free_attention)} for s in self.steps]}


def teacher_forcing(translator: Translator, source: str, reference: str, k: int = TOP_K) -> TeacherForcing:
    """``source`` decoded greedily beside the model forced through ``reference`` (DataError for
    a blank source or reference, or one the vocabulary cannot read)."""
    if not source.strip() or not reference.strip():
        raise DataError("type a sentence and its reference translation")
    src_ids, _ = translator.source_ids(source)
    ref_ids = translator.tgt_vocab.encode(reference) + [EOS]
    free = translator.translate([source], SearchConfig(beam=1, trace=True, topk=k))[0]
    model, dev = translator.model, device_of(translator.model)
    with torch.inference_mode():
        memory = model.encode(torch.tensor([src_ids], device=dev), torch.tensor([len(src_ids)], device=dev))
        logprobs, alpha = model.teacher_forced(memory, torch.tensor([[BOS] + ref_ids[:-1]], device=dev))
    probs = logprobs[0].float().exp().cpu()  # (len(ref), V)
    top = probs.topk(min(k, probs.size(1)), dim=-1)
    alpha = None if alpha is None else alpha[0].float().cpu().numpy()  # (len(ref), src_len)
    pieces = translator.tgt_vocab.pieces
    steps = []
    for i in range(max(len(ref_ids), len(free.target_ids))):
        in_ref, in_free = i < len(ref_ids), i < len(free.target_ids)
        steps.append(PrefixStep(
            reference=pieces([ref_ids[i]])[0] if in_ref else None,
            forced=candidates(translator.tgt_vocab, top.values[i].tolist(), top.indices[i].tolist()) if in_ref else [],
            forced_attention=alpha[i] if in_ref and alpha is not None else None,
            free=free.target_tokens[i] if in_free else None,
            free_candidates=free.topk[i] if in_free else [],
            free_attention=free.attention[i] if in_free and free.attention is not None else None))
    diverges = next((i for i in range(len(steps)) if not (i < len(ref_ids) and i < len(free.target_ids)
                                                          and ref_ids[i] == free.target_ids[i])), None)
    return TeacherForcing(free.source_tokens, pieces(ref_ids), free, steps, diverges, tuple(ref_ids))
