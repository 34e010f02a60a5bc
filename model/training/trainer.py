"""Train RNNsearch or RNNencdec: ``python -m model.train --preset cpu --set model.arch=rnnencdec``.

Writes to ``train.out_dir``:
    best/        checkpoint with the best validation BLEU so far
    last/        latest checkpoint plus optimizer and data-order state (``--resume`` continues it)
    log.jsonl    one JSON object per validation (loss, val loss, val BLEU, time, tokens/s)
    probes.jsonl the probe sentences' greedy outputs and attention at update 0 and at every
                 validation: the training replay (model/training/replay.py)
"""
from __future__ import annotations

import json
import math
import platform
import shutil
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Callable, Optional

import torch
from safetensors.torch import load_file, save_file
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from model.checkpoints.folder import SRC_VOCAB, TGT_VOCAB, CheckpointError, load_checkpoint, read_card, read_json, save_checkpoint
from model.core.config import Config, TrainConfig
from model.corpus.parallel import (
    iter_chunks,
    make_batch,
)
from model.corpus.vocab import EOS
from model.decoding.search import SearchConfig, greedy_search
from model.core.errors import ConfigError
from model.network.architectures import OwnModel, build_model
from model.scoring.metrics import bleu
from model.speed.fused_loss import linear_cross_entropy
from model.training.distributed import Runtime, all_sum, broadcast, cleanup, setup, shard
from model.training.data import Data
from model.training.replay import (
    append_snapshot,
    parse_snapshots,
    probe_sentences,
    read_probe_log,
    snapshot_to_json,
    take_snapshot,
    truncate_probe_log,
    write_probe_log,
)

STATE_JSON, STATE_TENSORS = "train_state.json", "train_state.safetensors"


def loss_fn(model, batch, label_smoothing: float, bf16: bool, normaliser: Optional[float] = None) -> torch.Tensor:
    """Summed token cross-entropy of a teacher-forced batch divided by ``normaliser``
    (default: its own token count, i.e. the mean). Under DDP each rank divides by the global
    token count / world size, so averaged gradients equal those of one process."""
    features, positions = model(batch.src, batch.src_len, batch.tgt_in, packed=True, bf16=bf16)  # (N, l), (N,)
    # "module": the model inside DDP. W_o is used outside DDP's forward, which is fine while
    # DDP runs with find_unused_parameters=False (the default): it waits for every gradient.
    output = getattr(model, "module", model).decoder.W_o
    total = linear_cross_entropy(features, output, batch.tgt_out.flatten()[positions], label_smoothing, bf16)
    return total / (normaliser or batch.n_tgt_tokens)


@torch.no_grad()
def validate(model: OwnModel, data: Data, batch_size: int = 100) -> dict:
    """Validation loss (teacher-forced, no smoothing) and greedy-decoded BLEU (sacrebleu)."""
    model.eval()
    total, tokens = 0.0, 0
    for index in iter_chunks(list(range(len(data.val_src))), batch_size):
        batch = make_batch(data.val_src, data.val_tgt, list(index)).to(next(model.parameters()).device)
        n = batch.n_tgt_tokens
        total += float(loss_fn(model, batch, 0.0, False)) * n
        tokens += n
    order = sorted(range(len(data.val_src)), key=lambda i: len(data.val_src[i]))
    hyps = [""] * len(order)
    for index in iter_chunks(order, batch_size):
        outs = greedy_search(model, [data.val_src[i] for i in index], SearchConfig(beam=1, trace=False))
        for i, out in zip(index, outs):
            hyps[i] = data.tgt_vocab.decode([t for t in out.ids if t != EOS])
    score, signature = bleu(hyps, data.val_ref)
    by_corpus = {name: bleu(hyps[a:b], data.val_ref[a:b])[0] for name, (a, b) in data.val_slices.items()}
    model.train()
    return {"val_loss": total / tokens, "val_bleu": score, "val_bleu_signature": signature,
            "val_example": hyps[0], **({"val_bleu_by_corpus": by_corpus} if len(by_corpus) > 1 else {})}


@dataclass
class Progress:
    """Where a run is; saved in last/train_state.json as it is, and read back to resume."""

    epoch: int = 0  # epochs finished
    batch: int = 0  # batches done in the current epoch
    step: int = 0  # updates done
    best_bleu: float = -1.0  # the best validation BLEU so far
    bad_rounds: int = 0  # validations since the last new best
    elapsed_s: float = 0.0  # training and validation wall time so far
    first_step: int = 0  # the update this run started from (train.init_from), where the warm-up counts from

    @classmethod
    def from_json(cls, data: dict) -> "Progress":
        data = dict(data)
        data.setdefault("bad_rounds", data.pop("bad_epochs", 0))  # runs saved before validation rounds
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass(frozen=True)
class RoundStats:
    """What ``train_round`` measured over one round of training, summed over ranks."""

    loss_sum: float  # training loss summed over target tokens
    tokens: int  # target tokens trained on
    seconds: float  # training time (per rank)
    epoch_done: bool  # the round ended with its epoch
    fraction: float  # how much of the epoch was done when it ended


@dataclass(frozen=True)
class Run:
    """What every part of a training run works with."""

    model: OwnModel  # the model itself (``net`` in train_round may wrap it for torchrun)
    data: "Data"
    cfg: Config
    optimizer: torch.optim.Optimizer
    out: Path  # the run folder
    log: Callable[[str], None]  # report lines (rank 0 only)
    rt: Runtime


def make_optimizer(model: OwnModel, cfg: Config) -> torch.optim.Optimizer:
    if cfg.train.optimizer == "adam":  # fused: one kernel for all tensors, not ~10 ops per tensor
        return torch.optim.Adam(model.parameters(), lr=cfg.train.lr, fused=True)
    if cfg.train.optimizer == "adadelta":  # the paper's settings (Appendix B)
        return torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-6)
    raise ConfigError(f"unknown optimizer {cfg.train.optimizer!r}; use adam or adadelta")


def save_state(run: Run, folder: Path, progress: Progress) -> None:
    """Checkpoint plus what resuming needs: optimizer tensors, RNG state, data position."""
    save_checkpoint(folder, run.model, run.data.src_vocab, run.data.tgt_vocab, run.cfg.train)
    opt = run.optimizer.state_dict()
    tensors = {f"state.{i}.{k}": torch.as_tensor(v).clone() for i, st in opt["state"].items() for k, v in st.items()}
    tensors["rng"] = torch.get_rng_state()
    save_file(tensors, str(folder / STATE_TENSORS))
    (folder / STATE_JSON).write_text(json.dumps({"progress": asdict(progress), "param_groups": opt["param_groups"]},
                                                indent=2))


def load_state(folder: Path, model, optimizer) -> Progress:
    """Restore weights, optimizer and RNG from ``folder``; returns the saved progress."""
    loaded, _, _, _ = load_checkpoint(folder)
    model.load_state_dict(loaded.state_dict())
    meta = read_json(folder / STATE_JSON)
    tensors = load_file(str(folder / STATE_TENSORS))
    torch.set_rng_state(tensors.pop("rng"))
    state: dict = {}
    for key, value in tensors.items():
        _, index, name = key.split(".", 2)
        state.setdefault(int(index), {})[name] = value
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    return Progress.from_json(meta["progress"])


class ProgressReport:
    """Training progress: a tqdm bar on a terminal; under nohup or in a log file, one plain
    line every ``interval`` seconds instead of a bar redrawn per batch."""

    def __init__(self, progress: Progress, total: Optional[int], enabled: bool, interval: float = 10.0):
        self.enabled, self.interval, self.last = enabled, interval, time.perf_counter()
        self.epoch, self.total = progress.epoch + 1, total
        self.tty = enabled and sys.stderr.isatty()
        self.bar = tqdm(initial=progress.batch, total=total, desc=f"epoch {self.epoch}", unit="batch",
                        dynamic_ncols=True, mininterval=2.0) if self.tty else None

    def update(self, progress: Progress, loss: float, tokens_per_s: float) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{tokens_per_s:.0f}")
        elif self.enabled and time.perf_counter() - self.last >= self.interval:
            self.last = time.perf_counter()
            print(f"epoch {self.epoch} batch {progress.batch}/{self.total or '?'} step {progress.step}: "
                  f"loss {loss:.3f}, {tokens_per_s:.0f} tok/s", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def train_round(run: Run, net, progress: Progress, show_bar: bool = True) -> RoundStats:
    """Train until the epoch ends, or ``val_every`` updates pass, or ``max_steps`` is reached
    (when resuming, from the saved batch); returns loss, tokens and seconds summed over ranks
    and whether the epoch ended. Each rank trains ``net`` (``model``, DDP-wrapped under
    torchrun) on its own slice of every global batch."""
    model, data, optimizer, rt, t = run.model, run.data, run.optimizer, run.rt, run.cfg.train
    batches, total = data.batches_from(progress.epoch, progress.batch)
    net.train()
    loss_sum, tokens, seconds, epoch_done = 0.0, 0, 0.0, True
    report = ProgressReport(progress, total, show_bar and rt.main)
    for src, tgt, index in batches:
        start = time.perf_counter()
        part, dummy = shard(index, rt)
        batch = make_batch(src, tgt, part).to(rt.device)
        global_tokens = sum(len(tgt[i]) + 1 for i in index)  # +1: </s>
        loss = loss_fn(net, batch, t.label_smoothing, t.bf16, global_tokens / rt.world)
        optimizer.zero_grad(set_to_none=True)
        (loss * (0.0 if dummy else 1.0)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), t.clip)
        warm_lr(optimizer, t, progress)
        optimizer.step()
        seconds += time.perf_counter() - start
        if not dummy:
            tokens += batch.n_tgt_tokens
            loss_sum += float(loss.detach()) * global_tokens / rt.world
        progress.batch += 1
        progress.step += 1
        report.update(progress, loss_sum / max(tokens, 1), tokens * rt.world / seconds)
        if progress.step % t.save_every == 0 and rt.main:
            save_state(run, run.out / "last", progress)
        if (t.max_steps and progress.step >= t.max_steps) or (t.val_every and progress.step % t.val_every == 0):
            epoch_done = total is not None and progress.batch >= total
            data.pause(progress.epoch, progress.batch, batches, total)
            break
    report.close()
    loss_sum, tokens, seconds = all_sum([loss_sum, tokens, seconds], rt)
    return RoundStats(loss_sum, int(tokens), seconds / rt.world, epoch_done,
                      1.0 if epoch_done or not total else progress.batch / total)


def end_round(run: Run, progress: Progress, stats: RoundStats) -> bool:
    """After an epoch or ``val_every`` updates: validate (rank 0), log, keep the best, adjust
    the learning rate; True to stop training."""
    t = run.cfg.train
    val_start = time.perf_counter()
    val = broadcast(validate(run.model, run.data) if run.rt.main else None, run.rt)
    val_seconds = time.perf_counter() - val_start
    improved = val["val_bleu"] > progress.best_bleu
    progress.bad_rounds = 0 if improved else progress.bad_rounds + 1
    epoch = progress.epoch + 1 if stats.epoch_done else round(progress.epoch + stats.fraction, 3)
    record = {"epoch": epoch, "step": progress.step,
              "train_loss": stats.loss_sum / max(stats.tokens, 1), **val,
              "tokens_per_s": stats.tokens / max(stats.seconds, 1e-9),
              "epoch_seconds": stats.seconds, "lr": run.optimizer.param_groups[0]["lr"],
              "val_seconds": val_seconds, "elapsed_s": progress.elapsed_s + stats.seconds + val_seconds}
    progress.elapsed_s = record["elapsed_s"]
    if stats.epoch_done:
        progress.epoch, progress.batch = progress.epoch + 1, 0
    if improved:
        progress.best_bleu = val["val_bleu"]
    if not improved and t.optimizer == "adam":  # before last/ is written, so resuming keeps it
        for group in run.optimizer.param_groups:
            group["lr"] *= t.lr_decay
    if run.rt.main:
        record_probes(run, progress.step, epoch, val["val_bleu"])
        write_round(run, progress, record, improved)
    out_of_time = t.time_limit_min and (record["elapsed_s"] + stats.seconds + val_seconds) / 60 > t.time_limit_min
    if out_of_time:
        run.log(f"stopping: another round would pass the {t.time_limit_min} minute limit")
    stop_early = progress.bad_rounds >= t.patience
    return bool(stop_early or out_of_time or (t.max_steps and progress.step >= t.max_steps))


def record_probes(run: Run, step: int, epoch: float, val_bleu: Optional[float]) -> None:
    """Decode the run's probe sentences and add the snapshot to the run's probes.jsonl."""
    t = run.cfg.train
    sources = probe_sentences(t.src_lang, t.tgt_lang, t.probes)
    if sources:
        vocabs = (run.data.src_vocab, run.data.tgt_vocab)
        append_snapshot(run.out, take_snapshot(run.model, vocabs, sources, step, epoch, val_bleu))


def write_round(run: Run, progress: Progress, record: dict, improved: bool) -> None:
    """Rank 0's writes after a validation: the log line, best/ when improved, step-N/ when
    ``keep_last`` asks for it (dropping the oldest), and last/."""
    model, data, cfg, out = run.model, run.data, run.cfg, run.out
    with open(out / "log.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    card = {"arch": cfg.model.arch, "training": record, "config": cfg.to_dict(), "parameters": model.num_parameters()}
    if improved:
        log_records = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
        replay = {"snapshots": [snapshot_to_json(snap) for snap in read_probe_log(out)]}
        save_checkpoint(out / "best", model, data.src_vocab, data.tgt_vocab, cfg.train,
                        card={**card, "log": log_records, "replay": replay})
    if cfg.train.keep_last:
        save_checkpoint(out / f"step-{progress.step:07d}", model, data.src_vocab, data.tgt_vocab, cfg.train,
                        card=card)
        for old in sorted(out.glob("step-*"))[:-cfg.train.keep_last]:
            shutil.rmtree(old)
    by_corpus = ", ".join(f"{k} {v:.2f}" for k, v in record.get("val_bleu_by_corpus", {}).items())
    run.log(f"epoch {record['epoch']} step {record['step']}: train loss {record['train_loss']:.3f}, "
            f"val loss {record['val_loss']:.3f}, val BLEU {record['val_bleu']:.2f}"
            f"{f' ({by_corpus})' if by_corpus else ''}{' (best)' if improved else ''}, "
            f"{record['tokens_per_s']:.0f} tok/s")
    save_state(run, out / "last", progress)


def train(cfg: Config, resume: bool = False, log=print, show_bar: bool = True) -> Path:
    """Run training as configured (one process, or every rank of a torchrun launch); returns
    the folder of the best checkpoint. ``log`` receives report lines (rank 0 only);
    ``show_bar`` draws the tqdm progress bar (loss, target tokens/s)."""
    t = cfg.train
    probe_sentences(t.src_lang, t.tgt_lang, t.probes)  # a bad probe list fails now, not at the first validation
    rt = setup(t.device)
    log = log if rt.main else (lambda *_: None)
    torch.manual_seed(t.seed)
    if t.threads:
        torch.set_num_threads(t.threads)
    out, last = Path(t.out_dir), Path(t.out_dir) / "last"
    resuming = resume and (last / STATE_JSON).is_file()
    start = load_checkpoint(last) if resuming else load_checkpoint(t.init_from) if t.init_from else None
    data = Data(cfg, start[1:3] if start else None, log, rt)
    cfg.model.src_vocab_size, cfg.model.tgt_vocab_size = len(data.src_vocab), len(data.tgt_vocab)
    model = build_model(cfg.model).to(rt.device)
    optimizer = make_optimizer(model, cfg)
    progress = Progress()
    if resuming:
        progress = load_state(last, model, optimizer)
        log(f"resuming from {last}: epoch {progress.epoch + 1}, batch {progress.batch}, step {progress.step}")
    elif t.init_from:
        progress = warm_start(Path(t.init_from), start[0], model, out if rt.main else None)
        log(f"continuing {t.init_from} from update {progress.step} with a fresh optimizer, at epoch "
            f"{progress.epoch + 1}")
    run = Run(model, data, cfg, optimizer, out, log, rt)
    if rt.main:  # the vocabularies too, so a second model can share them (train.vocab_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")
        data.src_vocab.save(out / SRC_VOCAB)
        data.tgt_vocab.save(out / TGT_VOCAB)
        (out / "host.json").write_text(json.dumps(host_description(rt, t.threads), indent=2) + "\n")
        if resuming:
            truncate_probe_log(out, progress.step)
        elif progress.step == 0:
            record_probes(run, 0, 0.0, None)
    log(f"config: {json.dumps(cfg.to_dict())}")
    log(f"model: {cfg.model.arch}, {model.num_parameters():,} parameters; {rt.world} process(es) on {rt.device}")
    net = DistributedDataParallel(model) if rt.world > 1 else model
    while progress.epoch < t.epochs:
        stats = train_round(run, net, progress, show_bar)
        if stats.tokens == 0 and stats.epoch_done:  # a stream that ended right after a validation
            progress.epoch, progress.batch = progress.epoch + 1, 0
            continue
        if end_round(run, progress, stats):
            break
    cleanup(rt)
    return out / "best"


def warm_start(folder: Path, loaded: OwnModel, model: OwnModel, out: Optional[Path]) -> Progress:
    """Start this run from a finished checkpoint (``train.init_from``): its weights, and its
    card's update count, wall time and log (written to ``out``/log.jsonl when ``out`` is given),
    so curves and update counts run on. Training resumes at the start of the epoch after the
    checkpoint's; the optimizer is new, which ``train.warmup`` eases in. This run's ``best/`` is
    the best of its own validations: the first one writes it, even if the log it carries on has
    a higher score (the checkpoint it started from is still where it was)."""
    if loaded.config != model.config:
        raise CheckpointError(f"train.init_from={folder}: its model config {loaded.config} differs from this "
                              f"run's {model.config}")
    model.load_state_dict(loaded.state_dict())
    records = read_card(folder).get("log") or []
    if not records:
        raise CheckpointError(f"train.init_from={folder}: its card.json has no training log to continue")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "log.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        write_probe_log(out, parse_snapshots((read_card(folder).get("replay") or {}).get("snapshots", []),
                                             f"{folder}/card.json replay"))
    last = records[-1]
    return Progress(epoch=math.ceil(last["epoch"]), step=last["step"], first_step=last["step"],
                    elapsed_s=last["elapsed_s"])


def warm_lr(optimizer, t: TrainConfig, progress: Progress) -> None:
    """Linear warm-up over this run's first ``t.warmup`` updates, ending at ``t.lr``."""
    done = progress.step - progress.first_step
    if done < t.warmup:
        for group in optimizer.param_groups:
            group["lr"] = t.lr * (done + 1) / t.warmup


def host_description(rt: Runtime, threads: int) -> dict:
    """Where this run trains, for the model card: device, processor, threads, processes."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").is_file() else \
        platform.processor()
    gpu = torch.cuda.get_device_name(rt.device) if rt.device.type == "cuda" else None
    return {"device": rt.device.type, "gpu": gpu, "cpu": cpu or "unknown", "threads": threads or torch.get_num_threads(),
            "processes": rt.world, "torch": torch.__version__}
