"""A Lab experiment: RNNencdec and RNNsearch (and the Transformer) trained on a toy task for a time
budget, then tested by input length: the paper's Figure 2 on a student's own experiment.

    settings = LabSettings(task="reverse", archs=("rnnsearch", "rnnencdec"), seconds=60)
    result = run_lab(settings)
    result.models["rnnsearch"].by_length[20].exact       # share of 20-token inputs reversed exactly

Every model is this project's own network (model/network/architectures.py · ``build_model``) on
its own loss (model/training/trainer.py · ``loss_fn``), trained on one thread with Adam on fresh
pairs of the task (model/experiments/tasks.py), each model for the same seconds. Training time
is read from ``clock`` (a test passes one that counts calls), and ``stop`` ends a training early
keeping what it learnt. Greedy decoding scores the test inputs: ``exact`` is the share of a
length's inputs whose output is exactly right.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

import torch

from model.core.config import ModelConfig
from model.corpus.parallel import make_batch
from model.corpus.vocab import EOS
from model.decoding.search import SearchConfig, greedy_search
from model.decoding.translator import Translator
from model.experiments.tasks import TASKS, LabError, Lengths, make_task, held_out_pairs
from model.experiments.token_vocab import TokenVocab
from model.network.architectures import build_model
from model.scoring.metrics import bleu
from model.training.trainer import loss_fn

ARCHS = ("rnnsearch", "rnnencdec", "transformer")
MAX_SECONDS = 600.0  # the longest training a lab run may ask for, per model
MAX_UNITS = 256  # the largest embedding or hidden size a lab model may have
TEST_PER_LENGTH = 30  # test inputs of each length
BATCH = 64  # training pairs per update
CURVE_EVERY = 10  # updates between two points of a loss curve


@dataclass(frozen=True)
class LabSettings:
    """One experiment; frozen, so it is its own cache key (``key``)."""

    task: str = "reverse"  # one of model/experiments/tasks.py · TASKS
    archs: tuple[str, ...] = ("rnnsearch", "rnnencdec")  # the models trained, each for ``seconds``
    seconds: float = 60.0  # training time per model
    train_lengths: str = "1-20"  # source lengths trained on
    test_lengths: str = "1-30"  # source lengths tested on (beyond training's: extrapolation)
    seed: int = 1  # data, weights and their order
    emb: int = 32  # embedding size
    hidden: int = 64  # GRU units (the Transformer's d_model is ``hidden`` too)
    lr: float = 3e-3  # Adam's learning rate

    def check(self) -> tuple[Lengths, Lengths]:
        """The lengths; LabError for a setting out of range, before anything is allocated."""
        if self.task not in TASKS:
            raise LabError(f"unknown task {str(self.task)[:30]!r}; choose one of {', '.join(TASKS)}")
        if not self.archs or len(set(self.archs)) != len(self.archs) or not set(self.archs) <= set(ARCHS):
            raise LabError(f"architectures must be distinct ones of {', '.join(ARCHS)}, got {list(self.archs)[:5]}")
        if not 0 < float(self.seconds) <= MAX_SECONDS:
            raise LabError(f"seconds must be in (0, {MAX_SECONDS:.0f}], got {self.seconds}")
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
    stopped: bool = False  # ended by ``stop`` before its time was up

    def to_json(self) -> dict:
        return {"parameters": self.parameters, "seconds": round(self.seconds, 2), "updates": self.updates,
                "curve": self.curve, "stopped": self.stopped,
                "by_length": {str(n): {"n": s.n, "exact": round(s.exact, 4),
                                       **({} if s.bleu is None else {"bleu": round(s.bleu, 2)})}
                              for n, s in sorted(self.by_length.items())}}


@dataclass
class LabResult:
    settings: LabSettings
    models: dict  # arch -> TrainedModel, in the order trained

    def to_json(self) -> dict:
        s = self.settings
        return {"task": s.task, "seed": s.seed, "train_lengths": s.train_lengths, "test_lengths": s.test_lengths,
                "seconds": s.seconds, "sizes": {"emb": s.emb, "hidden": s.hidden}, "lr": s.lr,
                "models": {arch: m.to_json() for arch, m in self.models.items()}}


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


def train_one(arch: str, settings: LabSettings, task, vocabs: tuple[TokenVocab, TokenVocab], lengths: Lengths,
              clock: Callable[[], float] = time.perf_counter, stop: Callable[[], bool] = lambda: False,
              progress: Optional[Progress] = None) -> TrainedModel:
    """Train one model for ``settings.seconds`` of ``clock`` (or until ``stop()``), one thread."""
    torch.manual_seed(settings.seed)
    src_vocab, tgt_vocab = vocabs
    model = build_model(model_config(arch, settings, len(src_vocab), len(tgt_vocab)))
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    trained = TrainedModel(arch, Translator(model, src_vocab, tgt_vocab, arch), model.num_parameters())
    model.train()
    stream = task.stream(settings.seed, lengths, BATCH)
    start, total, count = clock(), 0.0, 0
    while True:
        elapsed = clock() - start
        if elapsed >= settings.seconds or stop():
            trained.stopped = elapsed < settings.seconds
            break
        pairs = next(stream)
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
    """Train every model of ``settings`` in turn, each for the same time, and test them by length,
    on ``threads`` torch threads (None: leave the setting alone). With PyTorch's OpenMP backend
    the setting belongs to the calling thread (and threads it starts later): a server's training
    thread pins itself to one without changing the threads that translate."""
    train_lengths, test_lengths = settings.check()
    task = make_task(settings.task, everyday_path)
    vocabs = (TokenVocab(task.source_symbols, chars=settings.task == "dates"),
              TokenVocab(task.target_symbols, chars=settings.task == "dates"))
    tests = held_out_pairs(task, test_lengths, TEST_PER_LENGTH, settings.seed)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads or previous)
    try:
        models = {}
        for arch in settings.archs:
            trained = train_one(arch, settings, task, vocabs, train_lengths, clock, stop, progress)
            trained.by_length = score_by_length(trained, tests, task.text_task)
            models[arch] = trained
    finally:
        torch.set_num_threads(previous)
    return LabResult(settings, models)
