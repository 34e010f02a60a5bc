"""A Lab experiment: RNNencdec and RNNsearch (and the Transformer) trained on a toy task for the
same budget, then tested by input length: the paper's Figure 2 on a student's own experiment.

    settings = LabSettings(task="reverse", archs=("rnnsearch", "rnnencdec"), updates=1000, seconds=60)
    result = run_lab(settings)
    result.models["rnnsearch"].by_length[20].exact       # share of 20-token inputs reversed exactly
    result.models["rnnsearch"].ended_by                  # "updates" or "seconds": which limit came first

Every model is this project's own network (model/network/architectures.py · ``build_model``) on
its own loss (model/training/trainer.py · ``loss_fn``), trained on one thread with Adam on fresh
pairs of the task (model/experiments/tasks.py), bucketed by length, with a warm-up and a cosine
decay of the learning rate. Each model stops at ``updates`` updates or ``seconds`` seconds,
whichever comes first, so on a fast enough machine every model sees the same batches and a seed
gives the same models every time. Training time is read from ``clock`` (a test passes one that
counts calls), and ``stop`` ends a training early keeping what it learnt. Greedy decoding scores
the test inputs: ``exact`` is the share of a length's inputs whose output is exactly right.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

import torch

from model.core.config import ModelConfig
from model.corpus.parallel import make_batch
from model.corpus.vocab import EOS
from model.decoding.search import SearchConfig, greedy_search
from model.decoding.translator import Translator
from model.experiments.seed_spread import spread
from model.experiments.tasks import TASKS, LabError, Lengths, make_task, held_out_pairs
from model.experiments.token_vocab import TokenVocab
from model.network.architectures import build_model
from model.scoring.metrics import bleu
from model.training.trainer import loss_fn

ARCHS = ("rnnsearch", "rnnencdec", "transformer")
MAX_SECONDS = 600.0  # the longest training a lab run may ask for, per model
MAX_UPDATES = 100_000  # the most updates a lab run may ask for, per model
MAX_SEEDS = 10  # the most seeds one experiment may train
MAX_UNITS = 256  # the largest embedding or hidden size a lab model may have
TEST_PER_LENGTH = 30  # test inputs of each length
BATCH = 64  # training pairs per update
POOL = 8  # batches drawn at once and cut by length (bucketing: little padding, so more updates a second)
WARMUP = 100  # updates over which the learning rate rises from 0 to ``lr``
FINAL_LR = 0.05  # the learning rate at the end of the budget, as a share of ``lr`` (cosine decay)
CURVE_EVERY = 10  # updates between two points of a loss curve


@dataclass(frozen=True)
class LabSettings:
    """One experiment; frozen, so it is its own cache key (``key``)."""

    task: str = "reverse"  # one of model/experiments/tasks.py · TASKS
    archs: tuple[str, ...] = ("rnnsearch", "rnnencdec")  # the models trained, each for ``seconds``
    seconds: float = 60.0  # training time per model, at most: the run ends at ``updates`` if that comes first
    updates: int = 1000  # updates per model, at most: the run ends at ``seconds`` if that comes first
    train_lengths: str = "1-20"  # source lengths trained on
    test_lengths: str = "1-30"  # source lengths tested on (beyond training's: extrapolation)
    seed: int = 1  # data, weights and their order
    seeds: int = 1  # how many seeds to train, from ``seed`` on (more than one: the spread over seeds)
    emb: int = 32  # embedding size
    hidden: int = 64  # GRU units (the Transformer's d_model is ``hidden`` too)
    lr: float = 5e-3  # Adam's peak learning rate (warm-up, then cosine decay: learning_rate)

    def check(self) -> tuple[Lengths, Lengths]:
        """The lengths; LabError for a setting out of range, before anything is allocated."""
        if self.task not in TASKS:
            raise LabError(f"unknown task {str(self.task)[:30]!r}; choose one of {', '.join(TASKS)}")
        if not self.archs or len(set(self.archs)) != len(self.archs) or not set(self.archs) <= set(ARCHS):
            raise LabError(f"architectures must be distinct ones of {', '.join(ARCHS)}, got {list(self.archs)[:5]}")
        if not 0 < float(self.seconds) <= MAX_SECONDS:
            raise LabError(f"seconds must be in (0, {MAX_SECONDS:.0f}], got {self.seconds}")
        if not 1 <= int(self.updates) <= MAX_UPDATES or int(self.updates) != self.updates:
            raise LabError(f"updates must be a whole number in 1..{MAX_UPDATES}, got {self.updates}")
        if not 1 <= int(self.seeds) <= MAX_SEEDS or int(self.seeds) != self.seeds:
            raise LabError(f"seeds must be a whole number in 1..{MAX_SEEDS}, got {self.seeds}")
        for name in ("emb", "hidden"):
            if not 4 <= getattr(self, name) <= MAX_UNITS:
                raise LabError(f"{name} must be 4..{MAX_UNITS}, got {getattr(self, name)}")
        if not 1e-5 <= self.lr <= 0.1:
            raise LabError(f"lr must be in [1e-5, 0.1], got {self.lr}")
        return Lengths.parse(self.train_lengths), Lengths.parse(self.test_lengths)

    def key(self) -> str:
        """A digest of every setting: the same experiment has the same key."""
        values = dict(asdict(self), seconds=float(self.seconds), lr=float(self.lr))  # 12 and 12.0: one experiment
        return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class LengthScore:
    """How one model did on the test inputs of one length."""

    n: int  # test inputs of that length
    exact: float  # share whose greedy output is exactly right
    bleu: Optional[float] = None  # text tasks: corpus BLEU of those outputs


@dataclass
class TrainedModel:
    """One model of an experiment: what it learnt and how it did."""

    arch: str
    translator: Translator
    parameters: int
    seconds: float = 0.0  # training time spent
    updates: int = 0
    curve: list = field(default_factory=list)  # [[seconds, loss], ...], the loss averaged since the last point
    by_length: dict = field(default_factory=dict)  # {length: LengthScore}
    ended_by: str = ""  # what ended the training: "updates", "seconds" or "stop"
    seed: int = 0  # the seed it was trained with

    @property
    def stopped(self) -> bool:
        """Ended by ``stop`` before its budget was spent."""
        return self.ended_by == "stop"

    def to_json(self) -> dict:
        return {"parameters": self.parameters, "seconds": round(self.seconds, 2), "updates": self.updates,
                "curve": self.curve, "stopped": self.stopped,
                "ended_by": self.ended_by,
                "by_length": {str(n): {"n": s.n, "exact": round(s.exact, 4),
                                       **({} if s.bleu is None else {"bleu": round(s.bleu, 2)})}
                              for n, s in sorted(self.by_length.items())}}


@dataclass
class LabResult:
    settings: LabSettings
    models: dict  # arch -> TrainedModel of the first seed, in the order trained
    by_seed: dict = field(default_factory=dict)  # seed -> {arch: TrainedModel}, every seed trained (the first too)

    def exact_by_seed(self, arch: str) -> list[dict]:
        """One {length: exact} table per seed trained, for model/experiments/seed_spread.py · spread."""
        return [{n: score.exact for n, score in models[arch].by_length.items()}
                for models in self.by_seed.values() if arch in models]

    def spread(self, arch: str) -> dict:
        """{length: Band} of ``arch`` over the seeds trained ({} when none trained it)."""
        tables = self.exact_by_seed(arch)
        return spread(tables) if tables else {}

    def to_json(self) -> dict:
        s = self.settings
        out = {"task": s.task, "seed": s.seed, "train_lengths": s.train_lengths, "test_lengths": s.test_lengths,
               "seconds": s.seconds, "updates": s.updates, "sizes": {"emb": s.emb, "hidden": s.hidden}, "lr": s.lr,
               "models": {arch: m.to_json() for arch, m in self.models.items()}}
        if s.seeds > 1:
            out["seeds"] = {str(seed): {arch: m.to_json() for arch, m in models.items()}
                            for seed, models in self.by_seed.items()}
            bands = {arch: self.spread(arch) for arch in s.archs}
            out["spread"] = {arch: {str(n): {"mean": round(b.mean, 4), "low": round(b.low, 4), "high": round(b.high, 4)}
                                    for n, b in found.items()}
                             for arch, found in bands.items() if found}
        return out


Progress = Callable[[str, TrainedModel], None]


def model_config(arch: str, settings: LabSettings, src_size: int, tgt_size: int) -> ModelConfig:
    """A small model of ``arch`` with the lab's sizes, no dropout."""
    if arch == "transformer":
        heads = 4 if settings.hidden % 4 == 0 else 1
        return ModelConfig(arch="transformer", src_vocab_size=src_size, tgt_vocab_size=tgt_size,
                           emb_dim=settings.hidden, enc_layers=2, dec_layers=2, heads=heads,
                           ff_dim=2 * settings.hidden, dropout=0.0)
    return ModelConfig(arch=arch, src_vocab_size=src_size, tgt_vocab_size=tgt_size, emb_dim=settings.emb,
                       hidden=settings.hidden, align_dim=settings.hidden, maxout=max(settings.hidden // 2, 1),
                       dropout=0.0)


def start_attention(model) -> None:
    """The Lab's one deviation from the paper's initialisation: the alignment model's W_a, U_a
    and v_a (eq. 6) drawn as Glorot & Bengio's uniform, not Appendix B's N(0, 0.001^2) with
    v_a = 0. The paper's start makes attention uniform and its gradient vanishingly small until
    v_a grows, which a model trained for days outgrows; in a one-minute Lab run the moment
    attention starts to align came at a different update on every seed, and on some seeds after
    the minute was over (docs/lab.md, "Why runs differ")."""
    attention = model.decoder.attention
    for layer in (attention.W_a, attention.U_a, attention.v_a):
        torch.nn.init.xavier_uniform_(layer.weight)


def learning_rate(settings: LabSettings, updates: int, progress: float) -> float:
    """The rate for the next update: a linear warm-up over the first ``WARMUP`` updates (at most a
    tenth of the budget), then a cosine decay to ``FINAL_LR`` of ``settings.lr`` as ``progress``
    (the share of the updates made, 0 to 1) reaches 1. Without it a constant rate of 3e-3 sends the
    loss up from 0.5 to near 3 on some seeds, and the run ends before it comes back."""
    warmup = max(1, min(WARMUP, settings.updates // 10))
    if updates < warmup:
        return settings.lr * (updates + 1) / warmup
    cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return settings.lr * (FINAL_LR + (1 - FINAL_LR) * cosine)


def bucketed(stream, batch: int, rng: random.Random):
    """Batches of ``batch`` pairs from a stream of pools (lists of pairs): each pool sorted by source
    length, cut into batches of like lengths, and the batches taken in an order drawn from ``rng``.
    Like lengths pad little, so an update costs less."""
    while True:
        pool = sorted(next(stream), key=lambda pair: len(pair[0]))
        cuts = [pool[i:i + batch] for i in range(0, len(pool), batch)]
        for i in rng.sample(range(len(cuts)), len(cuts)):
            yield cuts[i]


def train_one(arch: str, settings: LabSettings, task, vocabs: tuple[TokenVocab, TokenVocab], lengths: Lengths,
              clock: Callable[[], float] = time.perf_counter, stop: Callable[[], bool] = lambda: False,
              progress: Optional[Progress] = None) -> TrainedModel:
    """Train one model until ``settings.updates`` updates or ``settings.seconds`` of ``clock``,
    whichever comes first (or until ``stop()``), on the current torch threads. The learning rate
    follows the updates alone (``learning_rate``), never the clock: the same seed and updates give
    the same weights on the same machine, however busy it is. A run whose seconds end first stops
    before its rate has fallen all the way (the page says the machine is too slow)."""
    torch.manual_seed(settings.seed)
    src_vocab, tgt_vocab = vocabs
    model = build_model(model_config(arch, settings, len(src_vocab), len(tgt_vocab)))
    if arch == "rnnsearch":
        start_attention(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    trained = TrainedModel(arch, Translator(model, src_vocab, tgt_vocab, arch), model.num_parameters(),
                           seed=settings.seed)
    model.train()
    batches = bucketed(task.stream(settings.seed, lengths, POOL * BATCH), BATCH, random.Random(settings.seed))
    start, total, count = clock(), 0.0, 0
    while True:
        elapsed = clock() - start
        if trained.updates >= settings.updates:
            trained.ended_by = "updates"
            break
        if elapsed >= settings.seconds:
            trained.ended_by = "seconds"
            break
        if stop():
            trained.ended_by = "stop"
            break
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(settings, trained.updates, trained.updates / settings.updates)
        pairs = next(batches)
        batch = make_batch([src_vocab.encode_tokens(s) for s, _ in pairs],
                           [tgt_vocab.encode_tokens(t) for _, t in pairs], list(range(len(pairs))))
        loss = loss_fn(model, batch, 0.0, False)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        trained.updates += 1
        total, count = total + float(loss.detach()), count + 1
        if trained.updates % CURVE_EVERY == 0:
            trained.curve.append([round(clock() - start, 3), round(total / count, 4)])
            total, count = 0.0, 0
            if progress is not None:
                progress(arch, trained)
    trained.seconds = clock() - start
    model.eval()
    return trained


def score_by_length(trained: TrainedModel, tests: dict, text_task: bool) -> dict:
    """{length: LengthScore} of greedy outputs of the test pairs ``tests`` ({length: pairs})."""
    translator = trained.translator
    src_vocab, tgt_vocab = translator.src_vocab, translator.tgt_vocab
    out = {}
    for length, pairs in tests.items():
        if not pairs:
            continue
        sources = [src_vocab.encode_tokens(s) for s, _ in pairs]
        hyps = greedy_search(translator.model, sources, SearchConfig(beam=1, trace=False, max_len_ratio=2.0,
                                                                     max_len_extra=10))
        got = [[i for i in h.ids if i != EOS] for h in hyps]
        wanted = [tgt_vocab.encode_tokens(t) for _, t in pairs]
        exact = sum(g == w for g, w in zip(got, wanted)) / len(pairs)
        score = None
        if text_task:
            score = bleu([tgt_vocab.decode(g) for g in got], [" ".join(t) for _, t in pairs])[0]
        out[length] = LengthScore(len(pairs), exact, score)
    return out


def run_lab(settings: LabSettings, clock: Callable[[], float] = time.perf_counter,
            stop: Callable[[], bool] = lambda: False, progress: Optional[Progress] = None,
            everyday_path: Optional[Path] = None, threads: Optional[int] = 1) -> LabResult:
    """Train every model of ``settings`` in turn, each on the same budget, and test them by length,
    for each of ``settings.seeds`` seeds from ``settings.seed`` on (``LabResult.by_seed``: after a
    Stop, the seeds it did not cut short, or the one it did when there is no other), on
    ``threads`` torch threads (None: leave the setting alone). With PyTorch's OpenMP backend
    the setting belongs to the calling thread (and threads it starts later): a server's training
    thread pins itself to one without changing the threads that translate."""
    train_lengths, test_lengths = settings.check()
    task = make_task(settings.task, everyday_path)
    vocabs = (TokenVocab(task.source_symbols, chars=settings.task == "dates"),
              TokenVocab(task.target_symbols, chars=settings.task == "dates"))
    previous = torch.get_num_threads()
    torch.set_num_threads(threads or previous)
    by_seed: dict = {}
    try:
        for seed in range(settings.seed, settings.seed + settings.seeds):
            one = replace(settings, seed=seed, seeds=1)
            tests = held_out_pairs(task, test_lengths, TEST_PER_LENGTH, seed)
            models = by_seed[seed] = {}
            for arch in settings.archs:  # each stops at once after a Stop, and is still scored
                trained = train_one(arch, one, task, vocabs, train_lengths, clock, stop, progress)
                trained.by_length = score_by_length(trained, tests, task.text_task)
                models[arch] = trained
            if stop():
                break  # the seeds not begun are left out
    finally:
        torch.set_num_threads(previous)
    by_seed = {seed: models for seed, models in by_seed.items() if models}
    if settings.seeds > 1:  # a seed Stop cut short would put half-trained models in the spread
        by_seed = {seed: models for seed, models in by_seed.items()
                   if not any(m.stopped for m in models.values())} or by_seed
    return LabResult(settings, by_seed[min(by_seed)] if by_seed else {}, by_seed)
