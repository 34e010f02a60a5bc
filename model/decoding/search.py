"""Batched greedy and beam search; beam search returns complete ``trace.Trace``s.

Beam search keeps ``beam`` hypotheses per sentence for a whole batch at once, as one
(sentences x beam) tensor; pruning is a top-k over (beam x vocabulary) per sentence, with
no Python loop over tokens. Sentences whose search ended leave the batch, so results
do not depend on which other sentences share it.

Search runs on any model with the decoding interface (model/core/decodable.py), on the device
its weights are on (``device.device_of``): every tensor it hands the model is made there. It is split into
start / step (``Decodable.step``) / prune (``_prune``) / finish
(``_finish``). With ``SearchConfig.trace`` a ``_TreeRecorder`` adds every candidate to its
sentence's beam tree as it is scored, and keeps each step's attention, energies and top-k;
``_make_trace`` then reads the chosen hypothesis's evidence off the tree in one place.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch

from model.corpus.parallel import pad
from model.corpus.vocab import BOS, EOS, UNK, Vocab
from model.decoding.device import device_of
from model.core.decodable import STOP_JOEY, STOP_NEVER, STOP_WHEN_FULL, BeamRule, Decodable, ModelDescription, OutputLength, Step
from model.decoding.trace import BeamNode, Candidate, Trace
from model.core.errors import NoHypothesisError
from model.speed.activations import fast_tanh

KEPT, PRUNED, FINISHED = 0, 1, 2

# the weights used at a step from those the model computed: (alpha (batch, src_len),
# mask (batch, src_len), 0-based step) -> (batch, src_len); hashable, as SearchConfig is
AlphaEdit = Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]
STATUS_NAMES = ("kept", "pruned", "finished")


@dataclass(frozen=True)
class SearchConfig:
    """Decoding settings; frozen, so one value is also the cache key of its decode."""

    beam: int = 5  # hypotheses kept per sentence (1: greedy)
    length_norm: float = 1.0  # lambda: score = logprob / length**lambda (0: none); alpha names attention
    max_len_ratio: float = 2.0  # output may have at most ratio * source length + max_len_extra tokens
    max_len_extra: int = 10  # constant added to the output length cap
    # (a model that states its own cap, ``Decodable.output_length``, is decoded with that one instead)
    forbid_unk: bool = False  # never emit <unk> (as the paper's "no UNK" decoding)
    topk: int = 5  # candidate tokens recorded per step in traces
    trace: bool = True  # record attention, energies, top-k and the beam history
    # replace the attention weights while decoding: called as ablation(alpha, mask, step) at every
    # step (an ``Ablation`` of model/explaining/attention_ablation.py); None: the model's own
    ablation: Optional[AlphaEdit] = None


@dataclass
class Hypothesis:
    """A finished output: ids end with </s>, or not where the model's cap cuts them
    (``OutputLength.cut_at_cap``)."""

    ids: list[int]
    logprob: float
    norm_score: float
    node: Optional[int] = None  # its last node in the sentence's beam tree (traced beam search)


@dataclass
class Candidates:
    """One step's top 2k continuations of each of A active sentences, best first, and what
    pruning made of them (``_prune``)."""

    score: torch.Tensor  # (A, 2k) cumulative log-probability
    parent: torch.Tensor  # (A, 2k) beam slot each candidate extends
    token: torch.Tensor  # (A, 2k) token id it appends
    status: torch.Tensor  # (A, 2k) KEPT, PRUNED or FINISHED
    new_slot: torch.Tensor  # (A, 2k) beam slot a kept candidate moves to; -1 for the others
    kept: torch.Tensor  # (A, k) which candidates fill beam slots 0..k-1

    def kept_values(self, values: torch.Tensor) -> torch.Tensor:
        """(A, k) of ``values`` (A, 2k) for the candidates that stay in the beam, in slot order."""
        return values.gather(1, self.kept)


def _norm(logprob, length: int, length_norm: float):
    return logprob / (length ** length_norm) if length_norm else logprob


def output_length(model: Decodable, cfg: SearchConfig) -> OutputLength:
    """The length limits ``model`` is decoded with: its own when it states them, else the
    search settings' cap, whose last allowed token is </s>."""
    return model.output_length or OutputLength(cfg.max_len_ratio, cfg.max_len_extra)


@torch.inference_mode()
def beam_search(model: Decodable, vocabs: tuple[Vocab, Vocab], src: Sequence[Sequence[int]], cfg: SearchConfig,
                prefixes: Optional[Sequence[Sequence[int]]] = None,
                attend: Optional[dict[int, int]] = None) -> list[Trace]:
    """Decode a batch of source id lists (``vocabs``: source and target); one Trace each.

    ``prefixes``: forced output prefix per sentence (what-if). ``attend``: {step: source
    position} puts all attention weight on that position at that step (what-if, RNNsearch).
    """
    with fast_tanh(not cfg.trace):  # no trace records the energies: tanh may take its faster form
        return _beam_search(model, vocabs, src, cfg, prefixes, attend)


@dataclass
class _Beams:
    """A beam search's rows as they stand between steps: every active sentence's ``k``
    hypotheses, what the model keeps of them, and what has finished (``_beams`` starts them)."""

    model: Decodable
    k: int
    enc: Any  # the model's memory, for the active sentences' beam rows (one row each before the first step)
    limits: OutputLength
    caps: torch.Tensor  # (n,) each sentence's output cap, on the CPU
    state: Any  # the decoder state of the active rows (one row per sentence before the first step)
    y: torch.Tensor  # (A*k,) the last token of each row ((n,) <s> before the first step)
    scores: torch.Tensor  # (A, k) cumulative log-probabilities
    hyps: torch.Tensor  # (A*k, t) tokens so far
    active: torch.Tensor  # (A,) original index of each active sentence
    finished: list  # per sentence: its finished Hypothesis list
    recorder: Optional["_TreeRecorder"]

    def step(self, t: int, attend: Optional[dict[int, int]], ablation: Optional[AlphaEdit]) -> Step:
        """The model's step t for every beam row. Before the first step a sentence's k hypotheses
        are the same <s> on the same state: the model takes that step once per sentence, its
        outputs are copied to the sentence's k rows, and the memory becomes ``beam_memory``'s."""
        rows = self.y.numel()
        out = self.model.step(self.y, self.state, self.enc, _attend_override(attend, t, self.enc, rows),
                              _ablation(ablation, t, self.enc, rows))
        if rows == self.hyps.size(0):
            return out
        spread = torch.arange(rows, device=self.y.device).repeat_interleave(self.k)  # (n*k,) each sentence's row k times
        self.enc = self.model.beam_memory(self.enc, self.k)
        copy = lambda x: None if x is None else x.index_select(0, spread)  # noqa: E731
        return replace(out, logprobs=copy(out.logprobs), state=self.model.reorder(out.state, spread),
                       alpha=copy(out.alpha), energies=copy(out.energies), cross_attention=copy(out.cross_attention))

    def keep(self, alive: torch.Tensor) -> None:
        """Only the active sentences ``alive`` (indices into ``active``) go on."""
        rows = ((alive * self.k).unsqueeze(1) + torch.arange(self.k, device=alive.device)).view(-1)
        self.enc, self.state = self.enc.select(rows), self.model.reorder(self.state, rows)
        self.y, self.hyps = self.y.index_select(0, rows), self.hyps.index_select(0, rows)
        self.scores, self.active = self.scores.index_select(0, alive), self.active.index_select(0, alive)

    def traces(self, vocabs: tuple[Vocab, Vocab], src: Sequence[Sequence[int]]) -> list[Trace]:
        """Each sentence's best finished output as a Trace."""
        if not all(self.finished):  # only when every continuation had probability 0 (e.g. a forced p=0 token)
            raise NoHypothesisError("no output with non-zero probability: the forced prefix or bans rule out every "
                                    "hypothesis")
        best = [max(f, key=lambda h: h.norm_score) for f in self.finished]
        described = self.model.description
        traces = [_make_trace(described, vocabs, ids, hyp, self.recorder, sent)
                  for sent, (ids, hyp) in enumerate(zip(src, best))]
        for trace in traces:
            if trace.cross_attention is not None:
                trace.alignment_layer = self.model.alignment_layer  # the layer ``attention`` is the heads' mean of
        return traces


def _beams(model: Decodable, vocabs: tuple[Vocab, Vocab], src: Sequence[Sequence[int]], cfg: SearchConfig) -> _Beams:
    """The source encoded once and the decoder before its first step, one row per sentence
    (``_Beams.step`` spreads it to the ``beam`` rows, which then share the sentence's memory:
    ``beam_memory``); only slot 0 of each sentence may expand at the first step."""
    model.eval()
    n, k, dev = len(src), cfg.beam, device_of(model)
    src_len = torch.tensor([len(s) for s in src], device=dev)  # (n,)
    enc = model.encode(pad(src).to(dev), src_len)  # pad: (n, max src_len)
    limits = output_length(model, cfg)
    scores = torch.full((n, k), float("-inf"), device=dev)
    scores[:, 0] = 0.0  # all beams start identical: only slot 0 may expand at step 1
    return _Beams(model, k, enc, limits, limits.caps(torch.tensor([len(s) for s in src])), model.init_state(enc),
                  torch.full((n,), BOS, dtype=torch.long, device=dev), scores,
                  torch.zeros((n * k, 0), dtype=torch.long, device=dev), torch.arange(n, device=dev),
                  [[] for _ in range(n)], _TreeRecorder([len(s) for s in src], vocabs[1], cfg) if cfg.trace else None)


def _beam_search(model: Decodable, vocabs: tuple[Vocab, Vocab], src: Sequence[Sequence[int]], cfg: SearchConfig,
                 prefixes: Optional[Sequence[Sequence[int]]], attend: Optional[dict[int, int]]) -> list[Trace]:
    rule = model.beam_rule
    if rule is not None and rule.stopping == STOP_JOEY and cfg.beam > 1:
        return joey_beam(model, vocabs, src, cfg, prefixes, attend)
    b, k = _beams(model, vocabs, src, cfg), cfg.beam
    dev, max_len = b.y.device, b.caps.to(b.y.device)  # (n,)
    for t in range(int(b.caps.max())):
        out = b.step(t, attend, cfg.ablation)
        at_cap = t + 1 >= max_len.index_select(0, b.active)  # (A,) sentences whose last allowed token this is
        logprobs = _constrain(out.logprobs, t, b.active, k, at_cap, cfg, prefixes, b.limits)
        cand = _prune(b.scores, logprobs, k, at_cap if b.limits.cut_at_cap else None)
        nodes = b.recorder.record(t, cand, out, b.active, logprobs) if b.recorder else None
        _finish(cand, b.hyps, b.active, t, b.finished, cfg, nodes)
        keep_rows = ((torch.arange(b.active.numel(), device=dev) * k).unsqueeze(1) + cand.kept_values(cand.parent)).view(-1)
        b.hyps = torch.cat([b.hyps.index_select(0, keep_rows), cand.kept_values(cand.token).view(-1, 1)], dim=1)
        b.state, b.y = model.reorder(out.state, keep_rows), cand.kept_values(cand.token).view(-1)
        b.scores = cand.kept_values(cand.score)
        done = torch.tensor(_done(b.finished, b.active.tolist(), b.scores[:, 0].tolist(), t, k, cfg, rule, b.caps),
                            device=dev) | at_cap
        if done.all():
            break
        if done.any():  # drop finished sentences from the batch
            b.keep((~done).nonzero().squeeze(1))
    return b.traces(vocabs, src)


def _done(finished: list[list[Hypothesis]], active: list[int], best_open: list[float], t: int, k: int,
          cfg: SearchConfig, rule: Optional[BeamRule], caps: torch.Tensor) -> list[bool]:
    """Whether each active sentence's search is over after step t: ``k`` outputs finished and,
    under a model's own ``BeamRule`` other than "full" (beam > 1), its best open hypothesis
    (cumulative log-probability ``best_open``) normalised by its length, t + 1 tokens (by the
    longest allowed under "never" with λ > 0), is no better than the k-th best finished one."""
    if rule is None or rule.stopping == STOP_WHEN_FULL or k == 1:
        return [len(finished[s]) >= k for s in active]
    lam, out = cfg.length_norm, []
    for s, best in zip(active, best_open):
        if len(finished[s]) < k:
            out.append(False)
            continue
        length = int(caps[s]) if rule.stopping == STOP_NEVER and lam > 0 else t + 1
        kth = sorted((h.norm_score for h in finished[s]), reverse=True)[k - 1]
        out.append(_norm(best, length, lam) <= kth)
    return out


def joey_beam(model: Decodable, vocabs: tuple[Vocab, Vocab], src: Sequence[Sequence[int]], cfg: SearchConfig,
              prefixes: Optional[Sequence[Sequence[int]]] = None, attend: Optional[dict[int, int]] = None) -> list[Trace]:
    """Joey NMT 2.3's beam search (``joeynmt.search.beam_search``), step for step, for models
    whose ``BeamRule`` says "joey" (an imported Joey model): each step keeps the ``beam`` best
    continuations of every slot, ended ones too (Joey keeps them in its beam and extends them);
    a slot that took </s> counts as done from then on, whatever it holds later, and a sentence
    ends once every slot has, or at its cap. An output joins the finished ones the step its
    first </s> is chosen (or at the cap, without one), scored by logprob / ((5 + length) / 6)**λ
    when λ = ``cfg.length_norm`` > 0, else by its log-probability; the best of them is the
    translation."""
    b, k = _beams(model, vocabs, src, cfg), cfg.beam
    dev, caps = b.y.device, b.caps.to(b.y.device)
    done_slots = torch.zeros((len(src), k), dtype=torch.bool, device=dev)  # Joey's is_finished: by slot, and it stays
    slots = torch.arange(k, device=dev)
    for t in range(int(b.caps.max())):
        out = b.step(t, attend, cfg.ablation)
        at_cap = t + 1 >= caps.index_select(0, b.active)  # (A,)
        logprobs = _constrain(out.logprobs, t, b.active, k, at_cap, cfg, prefixes, b.limits)
        vocab = logprobs.size(1)
        penalty = ((5.0 + t + 1) / 6.0) ** cfg.length_norm if cfg.length_norm > 0 else 1.0
        total = (b.scores.view(-1, 1) + logprobs).view(b.active.numel(), k * vocab) / penalty  # (A, k*V)
        top_norm, top_index = total.topk(k, dim=1)  # (A, k)
        parent, token = top_index // vocab, top_index % vocab
        top_score = top_norm * penalty if cfg.length_norm > 0 else top_norm
        rows = ((torch.arange(b.active.numel(), device=dev) * k).unsqueeze(1) + parent).view(-1)
        b.hyps = torch.cat([b.hyps.index_select(0, rows), token.view(-1, 1)], dim=1)  # (A*k, t + 1)
        done_slots = done_slots | (token == EOS) | ~torch.isfinite(top_norm) | at_cap.unsqueeze(1)
        eos_count = (b.hyps == EOS).sum(1).view(-1, k)  # (A, k)
        joins = ((eos_count == 1) & (token == EOS)) | ((eos_count == 0) & at_cap.unsqueeze(1))
        joins &= torch.isfinite(top_norm)
        cand = Candidates(top_score, parent, token, torch.where(joins, FINISHED, KEPT), slots.expand_as(token).clone(),
                          slots.expand_as(token).clone())
        nodes = b.recorder.record(t, cand, out, b.active, logprobs) if b.recorder else None
        for a, r in joins.nonzero().tolist():
            b.finished[int(b.active[a])].append(Hypothesis(b.hyps[a * k + r].tolist(), float(top_score[a, r]),
                                                           float(top_norm[a, r]), None if nodes is None else nodes[a][r]))
        b.state, b.y, b.scores = model.reorder(out.state, rows), token.view(-1), top_score
        over = done_slots.all(1)  # (A,)
        if over.all():
            break
        if over.any():
            alive = (~over).nonzero().squeeze(1)
            b.keep(alive)
            done_slots = done_slots[alive]
    return b.traces(vocabs, src)


def _row_mask(enc, rows: int) -> torch.Tensor:
    """(rows, src_len) the source mask of each of the ``rows`` beam rows: the memory's own, or
    repeated for each hypothesis where the model's memory shares one row among them."""
    return enc.mask.repeat_interleave(rows // enc.mask.size(0), 0)


def _ablation(edit: Optional[AlphaEdit], t: int, enc, rows: int):
    """``edit`` at step t as the model's ``alpha_fn`` for ``rows`` beam rows."""
    if edit is None:
        return None
    mask = _row_mask(enc, rows)
    return lambda alpha: edit(alpha, mask, t)


def _attend_override(attend, t: int, enc, rows: int):
    """All weight on ``attend[t]`` for each of the ``rows`` beam rows, or None."""
    if not attend or t not in attend:
        return None
    mask = _row_mask(enc, rows)
    alpha = torch.zeros(mask.shape, dtype=torch.float, device=mask.device)
    alpha[:, attend[t]] = 1.0
    return alpha


def _constrain(logprobs, t, active, k, at_cap, cfg: SearchConfig, prefixes, limits: OutputLength):
    """Apply <unk> ban, forced prefixes and the length limits: no </s> before
    ``limits.min_tokens``, and </s> forced at the last allowed step (``at_cap`` (A,): the
    sentences at it) unless the cap cuts. Returns ``logprobs`` (A*k rows) itself where none
    applies at this step, else an edited copy."""
    capped = not limits.cut_at_cap and bool(at_cap.any())
    if not (cfg.forbid_unk or t < limits.min_tokens or prefixes is not None or capped):
        return logprobs
    logprobs = logprobs.clone()
    if cfg.forbid_unk:
        logprobs[:, UNK] = float("-inf")
    if t < limits.min_tokens:
        logprobs[:, EOS] = float("-inf")
    if prefixes is not None:
        for row, sent in enumerate(active.repeat_interleave(k).tolist()):
            if t < len(prefixes[sent]):
                forced = prefixes[sent][t]
                keep = logprobs[row, forced].clone()
                logprobs[row] = float("-inf")
                logprobs[row, forced] = keep
    if capped:
        rows = at_cap.repeat_interleave(k)  # (A*k,)
        eos = logprobs[:, EOS].clone()
        logprobs[rows] = float("-inf")
        logprobs[rows, EOS] = eos[rows]
    return logprobs


def _prune(scores: torch.Tensor, logprobs: torch.Tensor, k: int, cut: Optional[torch.Tensor] = None) -> Candidates:
    """Top 2k candidates per sentence over (beam x vocab); the first k without </s> stay
    in the beam, </s> candidates ranked within the top k finish, the rest are pruned.
    ``cut`` (A,) bool: sentences at a cap that cuts outputs, whose top k candidates all finish,
    with </s> or without."""
    n_active, vocab = scores.size(0), logprobs.size(1)
    total = (scores.view(-1, 1) + logprobs).view(n_active, k * vocab)  # (A, k*V)
    top_score, top_index = total.topk(min(2 * k, total.size(1)), dim=1)  # (A, 2k)
    parent, token = top_index // vocab, top_index % vocab
    is_eos = token == EOS
    rank = torch.arange(top_score.size(1), device=token.device).unsqueeze(0)
    finish = is_eos & (rank < k) & torch.isfinite(top_score)
    in_beam = ~is_eos & ((~is_eos).cumsum(dim=1) <= k)  # the k best that do not end: they fill the beam
    if cut is not None:
        finish |= cut.unsqueeze(1) & (rank < k) & torch.isfinite(top_score)
        in_beam &= ~cut.unsqueeze(1)
    order = torch.argsort((~in_beam).int(), dim=1, stable=True)[:, :k]  # their ranks, best first
    new_slot = torch.full_like(token, -1)
    new_slot.scatter_(1, order, torch.arange(k, device=token.device).expand(n_active, k).contiguous())
    status = torch.full_like(token, PRUNED)
    status[in_beam] = KEPT
    status[finish] = FINISHED
    return Candidates(top_score, parent, token, status, new_slot, order)


def _finish(cand: Candidates, hyps, active, t: int, finished, cfg: SearchConfig, nodes) -> None:
    """Add the candidates that finish (with </s>, or cut at the cap) to their sentences'
    finished hypotheses."""
    k = cfg.beam
    for a, r in (cand.status == FINISHED).nonzero().tolist():
        sent = int(active[a])
        prefix = hyps[a * k + int(cand.parent[a, r])].tolist()
        logprob = float(cand.score[a, r])
        node = None if nodes is None else nodes[a][r]
        ids = prefix + [int(cand.token[a, r])]
        finished[sent].append(Hypothesis(ids, logprob, _norm(logprob, t + 1, cfg.length_norm), node))


@dataclass
class _StepEvidence:
    """What one search step saw, on the CPU, for the A sentences active at it (numpy arrays: a
    node reads its row of them as a view)."""

    sent: list[int]  # (A,) original sentence index of each row
    alpha: Optional[np.ndarray]  # (A, k, src_len) attention of each parent slot; None for RNNencdec
    energies: Optional[np.ndarray]  # (A, k, src_len) energies e_ij before the softmax
    cross: Optional[np.ndarray]  # (A, k, layers, heads, src_len) every layer's and head's attention (a Transformer)
    topk_p: np.ndarray  # (A, k, topk) most likely next tokens' probabilities
    topk_i: np.ndarray  # (A, k, topk) and their ids


class _TreeRecorder:
    """Grows every sentence's beam tree while search runs, and keeps each step's evidence
    so a node's attention, energies and top-k can be read back."""

    def __init__(self, src_lens: list[int], tgt_vocab: Vocab, cfg: SearchConfig):
        self.src_lens, self.vocab, self.cfg = src_lens, tgt_vocab, cfg
        self.steps: list[_StepEvidence] = []
        self.trees = [[BeamNode(id=0, parent=None, step=0, token="<s>", token_id=BOS, score=0.0, norm_score=0.0,
                                status="kept")] for _ in src_lens]
        self.slot_node = [{0: 0} for _ in src_lens]  # beam slot -> node id, per sentence
        self.origin: list[dict[int, tuple[int, int, int]]] = [{} for _ in src_lens]  # node -> (step, row, slot)

    def record(self, t: int, cand: Candidates, out: Step, active: torch.Tensor,
               logprobs: torch.Tensor) -> list[list[Optional[int]]]:
        """Add step ``t``'s candidates as nodes; returns their node ids (A, 2k), None where the
        candidate had probability 0."""
        n_active = active.numel()
        top_lp, top_i = logprobs.topk(self.cfg.topk, dim=-1)  # (A*k, topk)
        top_p = top_lp.exp()  # exp keeps the order: only the kept few are exponentiated
        shaped = lambda x: None if x is None else x.view(n_active, self.cfg.beam, -1).float().cpu().numpy()  # noqa: E731
        cross = None if out.cross_attention is None else \
            out.cross_attention.view(n_active, self.cfg.beam, *out.cross_attention.shape[1:]).float().cpu().numpy()
        evidence = _StepEvidence(active.tolist(), shaped(out.alpha), shaped(out.energies), cross, shaped(top_p),
                                 top_i.view(n_active, self.cfg.beam, -1).cpu().numpy())
        self.steps.append(evidence)
        score, parent, token = cand.score.cpu().tolist(), cand.parent.cpu().tolist(), cand.token.cpu().tolist()
        status, new_slot = cand.status.cpu().tolist(), cand.new_slot.cpu().tolist()
        pieces = self.vocab.pieces([i for row in token for i in row])  # every candidate's, in one call
        width = len(token[0]) if token else 0
        ids = []
        for a, sent in enumerate(evidence.sent):
            row_ids, slots = [], {}
            for r in range(width):
                if not np.isfinite(score[a][r]):
                    row_ids.append(None)
                    continue
                node = self._add(sent, t, a, parent[a][r], token[a][r], pieces[a * width + r], score[a][r],
                                 status[a][r])
                row_ids.append(node.id)
                if new_slot[a][r] >= 0:
                    slots[new_slot[a][r]] = node.id
            self.slot_node[sent] = slots
            ids.append(row_ids)
        return ids

    def _add(self, sent: int, t: int, row: int, slot: int, token: int, piece: str, score: float,
             status: int) -> BeamNode:
        tree = self.trees[sent]
        alpha = self.steps[t].alpha
        node = BeamNode(id=len(tree), parent=self.slot_node[sent].get(slot, 0), step=t + 1, token=piece,
                        token_id=token, score=score, norm_score=_norm(score, t + 1, self.cfg.length_norm),
                        status=STATUS_NAMES[status],
                        attention=None if alpha is None else alpha[row, slot, : self.src_lens[sent]])
        tree.append(node)
        self.origin[sent][node.id] = (t, row, slot)
        return node

    def energies(self, sent: int, node: BeamNode) -> Optional[np.ndarray]:
        """(src_len,) energies of the step that made ``node``, None without attention."""
        t, row, slot = self.origin[sent][node.id]
        energies = self.steps[t].energies
        return None if energies is None else energies[row, slot, : self.src_lens[sent]]

    def cross_attention(self, sent: int, node: BeamNode) -> Optional[np.ndarray]:
        """(layers, heads, src_len) every layer's and head's attention at the step that made
        ``node``, None for a model with one attention."""
        t, row, slot = self.origin[sent][node.id]
        cross = self.steps[t].cross
        return None if cross is None else cross[row, slot, :, :, : self.src_lens[sent]]

    def topk(self, sent: int, node: BeamNode) -> list[Candidate]:
        """The most likely tokens at the step that made ``node``, most likely first."""
        t, row, slot = self.origin[sent][node.id]
        step = self.steps[t]
        return candidates(self.vocab, step.topk_p[row, slot].tolist(), step.topk_i[row, slot].tolist())


def candidates(vocab: Vocab, probs: Sequence[float], ids: Sequence[int]) -> list[Candidate]:
    """Candidate tokens from parallel lists of probabilities and ids (in that order)."""
    return [Candidate(piece, int(i), round(float(p), 6)) for p, i, piece in zip(probs, ids, vocab.pieces(ids))]


def _make_trace(described: ModelDescription, vocabs: tuple[Vocab, Vocab], src_ids: Sequence[int], hyp: Hypothesis,
                recorder: Optional[_TreeRecorder], sent: int) -> Trace:
    """The Trace of one sentence: what decoded it, its text and tokens, and, from the
    recorder's tree, the chosen hypothesis's path (marked "best"), per-step log-probabilities,
    attention, energies and top-k."""
    src_vocab, tgt_vocab = vocabs
    trace = Trace(model=described.arch, source=src_vocab.decode(src_ids), source_tokens=src_vocab.pieces(src_ids),
                  source_ids=list(src_ids), target_ids=hyp.ids, target_tokens=tgt_vocab.pieces(hyp.ids),
                  translation=tgt_vocab.decode(hyp.ids), score=hyp.norm_score, logprob=hyp.logprob,
                  step_logprobs=[], attention=None, energies=None, alignment_model=described.attention,
                  origin=described.origin)
    if recorder is None:
        return trace
    trace.beam = recorder.trees[sent]
    path = trace.path(hyp.node)
    for node in path:
        node.status = "best"
    path = path[1:]  # without the root: one node per output token
    scores = [0.0] + [node.score for node in path]
    trace.step_logprobs = [b - a for a, b in zip(scores, scores[1:])]
    trace.topk = [recorder.topk(sent, node) for node in path]
    if path and path[0].attention is not None:
        trace.attention = np.stack([node.attention for node in path])  # (tgt_len, src_len)
        energies = [recorder.energies(sent, node) for node in path]
        trace.energies = None if energies[0] is None else np.stack(energies)  # None: the model has no energies
        cross = [recorder.cross_attention(sent, node) for node in path]
        if cross[0] is not None:
            trace.cross_attention = np.stack(cross, axis=2)  # (layers, heads, tgt_len, src_len)
    return trace


def greedy_traces(model: Decodable, vocabs: tuple[Vocab, Vocab], src: Sequence[Sequence[int]],
                  cfg: SearchConfig) -> list[Trace]:
    """Greedy decoding's outputs as Traces without evidence (the fast path for plain text)."""
    described = model.description
    return [_make_trace(described, vocabs, ids, hyp, None, i)
            for i, (ids, hyp) in enumerate(zip(src, greedy_search(model, src, cfg)))]


@torch.inference_mode()
@fast_tanh()  # no trace: tanh may take its faster form
def greedy_search(model: Decodable, src: Sequence[Sequence[int]], cfg: SearchConfig) -> list[Hypothesis]:
    """Argmax decoding of a batch (the reference beam size 1 must match)."""
    model.eval()
    n, dev = len(src), device_of(model)
    src_len = torch.tensor([len(s) for s in src], device=dev)  # (n,)
    enc = model.encode(pad(src).to(dev), src_len)
    limits = output_length(model, cfg)
    caps = limits.caps(torch.tensor([len(s) for s in src]))  # (n,) on the CPU: the loop reads its max
    state = model.init_state(enc)
    y = torch.full((n,), BOS, dtype=torch.long, device=dev)
    max_len = caps.to(dev)  # (n,)
    out_ids = [[] for _ in range(n)]
    logprob = [0.0] * n
    active = torch.arange(n, device=dev)
    for t in range(int(caps.max())):
        out = model.step(y, state, enc)
        at_cap = t + 1 >= max_len.index_select(0, active)  # (A,) sentences whose last allowed token this is
        lp = _constrain(out.logprobs, t, active, 1, at_cap, cfg, None, limits)
        best_lp, y = lp.max(dim=-1)
        for sent, tok, lp_value in zip(active.tolist(), y.tolist(), best_lp.tolist()):
            out_ids[sent].append(tok)
            logprob[sent] += lp_value
        alive = ((y != EOS) & ~at_cap).nonzero().squeeze(1)
        state = out.state
        if alive.numel() == 0:
            break
        if alive.numel() < y.numel():  # drop finished sentences from the batch (none ended: nothing to copy)
            enc, state, y, active = enc.select(alive), model.reorder(state, alive), y[alive], active[alive]
    return [Hypothesis(ids, lp, _norm(lp, len(ids), cfg.length_norm)) for ids, lp in zip(out_ids, logprob)]
