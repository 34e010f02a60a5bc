"""Which heads matter: every head of every attention switched off in turn on a test set.

Voita et al. (ACL 2019) and Michel et al. (NeurIPS 2019) found that most of a Transformer's heads
can be removed with little loss. Here each head h of each attention (the encoder's
self-attention, the decoder's self-attention, the cross-attention) is switched off alone (its
output multiplied by 0 before W^O, Michel et al.'s ξ_h = 0; model/core/anatomy.py ``HeadMask``) on
a copy of the model, and two things are measured on the test sentences:

- the change in mean log-probability per token of the model's own greedy output (and of the
  references, where given), read with teacher forcing: how much the head mattered to what the
  model said;
- BLEU of the greedy decode with the head off, against the references, or, without them, against
  the model's own output with every head on (100 = nothing changed).

Then Michel et al.'s pruning curve: the heads taken off together, least important first (by the
log-probability change on the model's own output), and BLEU after each group.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

import numpy as np
import torch
from sacrebleu.metrics import BLEU

from model.core.anatomy import KINDS, HeadMask
from model.core.decodable import Decodable
from model.core.errors import ConfigError
from model.corpus.parallel import pad
from model.corpus.vocab import BOS, EOS, PAD
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator

BATCH = 64  # sentences teacher-forced together


@dataclass(frozen=True)
class HeadScore:
    kind: str  # model/core/anatomy.py KINDS
    layer: int  # 1-based
    head: int  # 1-based
    logprob_change: float  # mean log p per token of the model's own output, head off minus all on
    reference_change: Optional[float]  # the same on the references; None without them
    bleu: float  # greedy decode with the head off

    @property
    def key(self) -> tuple[str, int, int]:
        return self.kind, self.layer - 1, self.head - 1


@dataclass(frozen=True)
class HeadImportance:
    shape: dict  # {kind: (layers, heads)}
    sentences: int
    bleu_against: str  # "references" or "own output"
    base_logprob: float  # mean log p per token of the own output, every head on
    base_bleu: float
    scores: tuple[HeadScore, ...]
    pruning: tuple[tuple[int, float], ...]  # (heads off, BLEU), least important first

    def grid(self, kind: str, what: str = "logprob_change") -> np.ndarray:
        """(layers, heads) of one attention: ``what`` is a HeadScore field."""
        layers, heads = self.shape[kind]
        out = np.full((layers, heads), np.nan)
        for s in self.scores:
            if s.kind == kind:
                value = getattr(s, what)
                out[s.layer - 1, s.head - 1] = np.nan if value is None else value
        return out

    def order(self) -> list[HeadScore]:
        """Least important first: the smallest loss of log-probability when switched off."""
        return sorted(self.scores, key=lambda s: -s.logprob_change)

    def to_json(self) -> dict:
        return {"sentences": self.sentences, "bleu_against": self.bleu_against,
                "base_logprob": round(self.base_logprob, 5), "base_bleu": round(self.base_bleu, 2),
                "heads": [{"kind": s.kind, "layer": s.layer, "head": s.head,
                           "logprob_change": round(s.logprob_change, 5),
                           "reference_change": None if s.reference_change is None else round(s.reference_change, 5),
                           "bleu": round(s.bleu, 2)} for s in self.scores],
                "pruning": [{"heads_off": n, "bleu": round(b, 2)} for n, b in self.pruning]}


@torch.inference_mode()
def mean_logprob(model: Decodable, src: Sequence[Sequence[int]], out: Sequence[Sequence[int]]) -> float:
    """Mean log p per token of the outputs ``out`` (each ending with </s>) read with teacher forcing."""
    total, tokens = 0.0, 0
    device = next(model.parameters()).device
    for start in range(0, len(src), BATCH):
        s, o = src[start:start + BATCH], out[start:start + BATCH]
        memory = model.encode(pad(s).to(device), torch.tensor([len(x) for x in s], device=device))
        tgt_in = pad([[BOS, *x[:-1]] for x in o]).to(device)
        picks = pad(list(o)).to(device)
        logp = model.forced_logprobs(memory, tgt_in, picks.unsqueeze(-1))[..., 0]  # (batch, T)
        total += float(logp.masked_fill(picks == PAD, 0.0).sum())
        tokens += int((picks != PAD).sum())
    return total / max(tokens, 1)


def head_importance(translator: Translator, sources: Sequence[str], references: Optional[Sequence[str]] = None,
                    prune_steps: int = 8, progress: Callable[[str], None] = lambda _: None) -> HeadImportance:
    """Every head switched off in turn on ``sources`` (module docstring); the pruning curve at
    ``prune_steps`` + 1 points from no head off to all but one off."""
    model = translator.model
    if not model.supports_anatomy:
        raise ConfigError(f"{translator.name} cannot switch its heads off: only Transformers that can be taken apart "
                          "(this project's, pre-norm Joey NMT ones) can")
    if references is not None and len(references) != len(sources):
        raise ConfigError(f"{len(references)} references for {len(sources)} sentences")
    cfg = SearchConfig(beam=1, trace=False)
    src = [translator.source_ids(s)[0] for s in sources]
    keep = [i for i, ids in enumerate(src) if ids]
    src, sources = [src[i] for i in keep], [sources[i] for i in keep]
    refs = None if references is None else [references[i] for i in keep]
    own = translator.translate(sources, cfg)
    own_ids = [t.target_ids for t in own]
    ref_ids = None if refs is None else [translator.tgt_vocab.encode(r) + [EOS] for r in refs]
    against = refs if refs is not None else [t.translation for t in own]
    bleu = lambda hyps: BLEU().corpus_score(hyps, [against]).score  # noqa: E731
    base_logprob = mean_logprob(model, src, own_ids)
    base_ref = None if ref_ids is None else mean_logprob(model, src, ref_ids)

    def decode_bleu(masked: Decodable) -> float:
        twin = Translator(masked, translator.src_vocab, translator.tgt_vocab, translator.name)
        return bleu([t.translation for t in twin.translate(sources, cfg)])

    scores = []
    heads = [(kind, layer, head) for kind in KINDS if kind in model.attention_heads
             for layer in range(model.attention_heads[kind][0]) for head in range(model.attention_heads[kind][1])]
    for n, (kind, layer, head) in enumerate(heads):
        progress(f"head {n + 1} of {len(heads)}: {kind} layer {layer + 1} head {head + 1}")
        masked = model.with_heads_masked(HeadMask(frozenset({(kind, layer, head)})))
        ref_change = None if ref_ids is None else mean_logprob(masked, src, ref_ids) - base_ref
        scores.append(HeadScore(kind, layer + 1, head + 1, mean_logprob(masked, src, own_ids) - base_logprob,
                                ref_change, decode_bleu(masked)))
    found = HeadImportance(dict(model.attention_heads), len(src), "references" if refs is not None else "own output",
                           base_logprob, bleu([t.translation for t in own]), tuple(scores), ())
    order = [s.key for s in found.order()]
    counts = sorted({round(k * (len(order) - 1) / prune_steps) for k in range(prune_steps + 1)})
    pruning = []
    for count in counts:
        progress(f"pruning: {count} heads off")
        score = found.base_bleu if count == 0 else decode_bleu(model.with_heads_masked(HeadMask(frozenset(order[:count]))))
        pruning.append((count, score))
    return replace(found, pruning=tuple(pruning))


def correlation(importance: HeadImportance, aer: np.ndarray, what: str = "logprob_change") -> float:
    """Spearman's rank correlation between the cross-attention's importance (``what``) and its AER
    grid (layers, heads), over the heads both have; NaN with fewer than 3."""
    grid = importance.grid("cross", what)
    ok = ~(np.isnan(grid) | np.isnan(aer))
    if ok.sum() < 3:
        return float("nan")
    rank = lambda x: np.argsort(np.argsort(x)).astype(float)  # noqa: E731  (no ties expected in real numbers)
    a, b = rank(grid[ok]), rank(aer[ok])
    return float(np.corrcoef(a, b)[0, 1])
