"""Batched greedy and beam search that return their evidence (``trace.Trace``).

Beam search keeps ``beam`` hypotheses per sentence for a whole batch at once, as one
(sentences x beam) tensor; pruning is a top-k over (beam x vocabulary) per sentence, with
no Python loop over tokens. Sentences whose search ended leave the batch, so results
do not depend on which other sentences share it.

Search is split into start / step / prune / finish; ``_Recorder`` keeps what traces need.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import torch

from .data import pad
from .seq2seq import NMTModel
from .trace import BeamNode
from .vocab import BOS, EOS, UNK, Vocab

KEPT, PRUNED, FINISHED = 0, 1, 2


@dataclass
class SearchConfig:
    """Decoding settings."""

    beam: int = 5  # hypotheses kept per sentence (1: greedy)
    alpha: float = 1.0  # length normalisation: score = logprob / length**alpha (0: none)
    max_len_ratio: float = 2.0  # output may have at most ratio * source length + max_len_extra tokens
    max_len_extra: int = 10  # constant added to the output length cap
    forbid_unk: bool = False  # never emit <unk> (as the paper's "no UNK" decoding)
    topk: int = 5  # candidate tokens recorded per step in traces
    trace: bool = True  # record attention, energies, top-k and the beam history


@dataclass
class Hypothesis:
    """A finished output (ids include the final </s>)."""

    ids: list[int]
    logprob: float
    norm_score: float


def _norm(logprob, length: int, alpha: float):
    return logprob / (length ** alpha) if alpha else logprob


def _max_lengths(src_len: torch.Tensor, cfg: SearchConfig) -> torch.Tensor:
    return (src_len.float() * cfg.max_len_ratio).long() + cfg.max_len_extra


class _Recorder:
    """Collects per-step tensors (CPU) and turns them into beam trees and traces."""

    def __init__(self, src_lens: list[int]):
        self.steps: list[dict] = []
        self.src_lens = src_lens  # real source length per sentence: evidence is cut to it
        self.n_sent = len(src_lens)

    def record(self, **tensors) -> None:
        self.steps.append({k: (v.detach().float().cpu() if v is not None and v.is_floating_point()
                               else (None if v is None else v.cpu())) for k, v in tensors.items()})

    def trees(self, vocab: Vocab, alpha: float) -> list[list[BeamNode]]:
        """Build every sentence's node list; records refer to sentences by original index."""
        nodes = [[BeamNode(0, None, 0, "<s>", BOS, 0.0, 0.0, "kept")] for _ in range(self.n_sent)]
        slot_node = [dict() for _ in range(self.n_sent)]  # current beam slot -> node id
        for t, rec in enumerate(self.steps):
            for a, sent in enumerate(rec["sent"].tolist()):
                new_slots = {}
                for r in range(rec["token"].size(1)):
                    score = float(rec["score"][a, r])
                    if not np.isfinite(score):
                        continue
                    parent_slot = int(rec["parent"][a, r])
                    tok = int(rec["token"][a, r])
                    node = BeamNode(len(nodes[sent]), slot_node[sent].get(parent_slot, 0), t + 1,
                                    vocab.pieces([tok])[0], tok, score, _norm(score, t + 1, alpha),
                                    ("kept", "pruned", "finished")[int(rec["status"][a, r])],
                                    None if rec["alpha"] is None else
                                    rec["alpha"][a, parent_slot, : self.src_lens[sent]].numpy(),
                                    (t, a, parent_slot))
                    nodes[sent].append(node)
                    if int(rec["new_slot"][a, r]) >= 0:
                        new_slots[int(rec["new_slot"][a, r])] = node.id
                slot_node[sent] = new_slots
        return nodes

    def evidence(self, node: BeamNode, vocab: Vocab):
        """(energies (src_len,) | None, top-k candidate list) of the step that made ``node``."""
        t, a, slot = node.origin
        rec = self.steps[t]
        src_len = self.src_lens[int(rec["sent"][a])]
        energies = None if rec["energies"] is None else rec["energies"][a, slot, :src_len].numpy()
        topk = [{"token": vocab.pieces([i])[0], "id": i, "prob": round(p, 6)}
                for p, i in zip(rec["topk_p"][a, slot].tolist(), rec["topk_i"][a, slot].tolist())]
        return energies, topk


@torch.inference_mode()
def beam_search(model: NMTModel, src: Sequence[Sequence[int]], cfg: SearchConfig,
                prefixes: Optional[Sequence[Sequence[int]]] = None,
                attend: Optional[dict[int, int]] = None):
    """Decode a batch of source id lists. Returns (best Hypothesis per sentence, recorder|None).

    ``prefixes``: forced output prefix per sentence (what-if). ``attend``: {step: source
    position} puts all attention weight on that position at that step (what-if, RNNsearch).
    """
    model.eval()
    n, k, dev = len(src), cfg.beam, next(model.parameters()).device
    src_len = torch.tensor([len(s) for s in src])
    enc = model.encode(pad(src).to(dev), src_len)
    rows = torch.arange(n, device=dev).repeat_interleave(k)  # (n*k,) sentence of each beam row
    enc = enc.select(rows)
    state = model.decoder.init_state(enc.summary)  # (n*k, hidden)
    y = torch.full((n * k,), BOS, dtype=torch.long, device=dev)
    scores = torch.full((n, k), float("-inf"), device=dev)
    scores[:, 0] = 0.0  # all beams start identical: only slot 0 may expand at step 1
    hyps = torch.zeros((n * k, 0), dtype=torch.long, device=dev)
    active = torch.arange(n, device=dev)  # original index of each active sentence
    max_len = _max_lengths(src_len, cfg).to(dev)
    finished: list[list[Hypothesis]] = [[] for _ in range(n)]
    recorder = _Recorder(src_len.tolist()) if cfg.trace else None
    for t in range(int(max_len.max())):
        alpha_override = _attend_override(attend, t, enc)
        out = model.decoder.step(y, state, enc, alpha_override)
        logprobs = _constrain(out.logprobs, t, active, k, max_len, cfg, prefixes)
        cand = _prune(scores, logprobs, k)
        _finish(cand, hyps, active, t, finished, cfg)
        if recorder is not None:
            _record(recorder, cand, out, active, k, logprobs, cfg.topk)
        keep_rows = (torch.arange(active.numel(), device=dev) * k).unsqueeze(1) + cand["kept_parent"]  # (A, k)
        keep_rows = keep_rows.view(-1)
        hyps = torch.cat([hyps.index_select(0, keep_rows), cand["kept_token"].view(-1, 1)], dim=1)
        state, y, scores = out.state.index_select(0, keep_rows), cand["kept_token"].view(-1), cand["kept_score"]
        done = torch.tensor([len(finished[s]) >= k for s in active.tolist()], device=dev)
        if done.all():
            break
        if done.any():  # drop finished sentences from the batch
            alive = (~done).nonzero().squeeze(1)
            alive_rows = ((alive * k).unsqueeze(1) + torch.arange(k, device=dev)).view(-1)
            enc, state, y, hyps = (enc.select(alive_rows), state.index_select(0, alive_rows),
                                   y.index_select(0, alive_rows), hyps.index_select(0, alive_rows))
            scores, active = scores.index_select(0, alive), active.index_select(0, alive)
    if not all(finished):  # only when every continuation had probability 0 (e.g. a forced p=0 token)
        raise ValueError("no output with non-zero probability: the forced prefix or bans rule out every hypothesis")
    best = [max(f, key=lambda h: h.norm_score) for f in finished]
    return best, recorder


def _attend_override(attend, t: int, enc):
    if not attend or t not in attend:
        return None
    alpha = torch.zeros(enc.mask.shape, dtype=enc.annotations.dtype, device=enc.mask.device)
    alpha[:, attend[t]] = 1.0
    return alpha


def _constrain(logprobs, t, active, k, max_len, cfg: SearchConfig, prefixes):
    """Apply <unk> ban, forced prefixes and the length cap (forcing </s> at the last step)."""
    logprobs = logprobs.clone()
    if cfg.forbid_unk:
        logprobs[:, UNK] = float("-inf")
    row_sent = active.repeat_interleave(k)
    if prefixes is not None:
        for row, sent in enumerate(row_sent.tolist()):
            if t < len(prefixes[sent]):
                forced = prefixes[sent][t]
                keep = logprobs[row, forced].clone()
                logprobs[row] = float("-inf")
                logprobs[row, forced] = keep
    at_cap = (t + 1 >= max_len.index_select(0, row_sent))  # (rows,)
    if at_cap.any():
        eos = logprobs[:, EOS].clone()
        logprobs[at_cap] = float("-inf")
        logprobs[at_cap, EOS] = eos[at_cap]
    return logprobs


def _prune(scores, logprobs, k: int) -> dict:
    """Top 2k candidates per sentence over (beam x vocab); the first k without </s> stay
    in the beam, </s> candidates ranked within the top k finish, the rest are pruned."""
    n_active, vocab = scores.size(0), logprobs.size(1)
    total = (scores.view(-1, 1) + logprobs).view(n_active, k * vocab)  # (A, k*V)
    top_score, top_index = total.topk(min(2 * k, total.size(1)), dim=1)  # (A, 2k)
    parent, token = top_index // vocab, top_index % vocab
    is_eos = token == EOS
    rank = torch.arange(top_score.size(1), device=token.device).unsqueeze(0)
    finish = is_eos & (rank < k) & torch.isfinite(top_score)
    kept = ~is_eos & ((~is_eos).cumsum(dim=1) <= k)
    order = torch.argsort((~kept).int(), dim=1, stable=True)[:, :k]  # kept ranks, best first
    new_slot = torch.full_like(token, -1)
    new_slot.scatter_(1, order, torch.arange(k, device=token.device).expand(n_active, k).contiguous())
    status = torch.full_like(token, PRUNED)
    status[kept] = KEPT
    status[finish] = FINISHED
    return {"score": top_score, "parent": parent, "token": token, "status": status, "new_slot": new_slot,
            "finish": finish, "kept_parent": parent.gather(1, order),
            "kept_token": token.gather(1, order), "kept_score": top_score.gather(1, order)}


def _finish(cand, hyps, active, t, finished, cfg: SearchConfig) -> None:
    k = cfg.beam
    for a, r in cand["finish"].nonzero().tolist():
        sent = int(active[a])
        prefix = hyps[a * k + int(cand["parent"][a, r])].tolist()
        logprob = float(cand["score"][a, r])
        finished[sent].append(Hypothesis(prefix + [EOS], logprob, _norm(logprob, t + 1, cfg.alpha)))


def _record(recorder: _Recorder, cand, out, active, k: int, logprobs, topk: int) -> None:
    n_active = active.numel()
    top_p, top_i = logprobs.exp().topk(topk, dim=-1)  # (A*k, topk)
    alpha = None if out.alpha is None else out.alpha.view(n_active, k, -1)
    energies = None if out.energies is None else out.energies.view(n_active, k, -1)
    recorder.record(sent=active, parent=cand["parent"], token=cand["token"], score=cand["score"],
                    status=cand["status"], new_slot=cand["new_slot"], alpha=alpha, energies=energies,
                    topk_p=top_p.view(n_active, k, -1), topk_i=top_i.view(n_active, k, -1))


@torch.inference_mode()
def greedy_search(model: NMTModel, src: Sequence[Sequence[int]], cfg: SearchConfig) -> list[Hypothesis]:
    """Argmax decoding of a batch (the reference beam size 1 must match)."""
    model.eval()
    n, dev = len(src), next(model.parameters()).device
    src_len = torch.tensor([len(s) for s in src])
    enc = model.encode(pad(src).to(dev), src_len)
    state = model.decoder.init_state(enc.summary)
    y = torch.full((n,), BOS, dtype=torch.long, device=dev)
    max_len = _max_lengths(src_len, cfg).to(dev)
    out_ids = [[] for _ in range(n)]
    logprob = [0.0] * n
    active = torch.arange(n, device=dev)
    for t in range(int(max_len.max())):
        out = model.decoder.step(y, state, enc)
        lp = _constrain(out.logprobs, t, active, 1, max_len, cfg, None)
        best_lp, y = lp.max(dim=-1)
        for sent, tok, lp_value in zip(active.tolist(), y.tolist(), best_lp.tolist()):
            out_ids[sent].append(tok)
            logprob[sent] += lp_value
        alive = (y != EOS).nonzero().squeeze(1)
        if alive.numel() == 0:
            break
        enc, state, y, active = enc.select(alive), out.state.index_select(0, alive), y[alive], active[alive]
    return [Hypothesis(ids, lp, _norm(lp, len(ids), cfg.alpha)) for ids, lp in zip(out_ids, logprob)]
