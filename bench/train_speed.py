"""Training throughput: target tokens/s, end to end (bucketed batches, forward, backward,
clipping, Adam step), and the fraction of this CPU's matmul peak it reaches.

    python bench/train_speed.py [--steps 20] [--rounds 3] [--threads 2] [--bf16]

Prints the matmul peak measured here (a 2048^3 product, fp32 and bf16), then one JSON
object per configuration: the reference size (256-dim embeddings, 512 GRU units,
6k vocabularies, batches of 80) and the shipped `cpu` preset. Shared machines are noisy, so
each configuration is timed over ``--rounds`` rounds of ``--steps`` batches; the figure is
the median round and the slowest and fastest are printed too.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import corpus  # noqa: E402
from model.core.config import ModelConfig, preset  # noqa: E402
from model.corpus.parallel import epoch_batches, make_batch  # noqa: E402
from model.corpus.vocab import train_vocab  # noqa: E402
from model.network.nmt_model import NMTModel  # noqa: E402
from model.training.trainer import loss_fn, make_optimizer  # noqa: E402


def matmul_peak(dtype: torch.dtype, size: int = 2048, reps: int = 10) -> float:
    """GFLOP/s of a size^3 matrix product in ``dtype``, the best of ``reps``."""
    a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
    a @ b  # warm-up
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def step(model, optimizer, batch, bf16: bool) -> None:
    loss = loss_fn(model, batch, 0.1, bf16)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()


def measure(cfg: ModelConfig, src, tgt, steps: int, rounds: int, bf16: bool, join_prob: float,
            peaks: dict) -> dict:
    """Tokens/s of one configuration, and its FLOP rate as a fraction of each matmul peak
    (in bf16 mode the decoder's recurrence stays fp32, so the truth lies between the two)."""
    torch.manual_seed(0)
    model = NMTModel(cfg).train()
    optimizer = make_optimizer(model, preset("cpu"))  # as model.train builds it
    ex_src, ex_tgt, batches = epoch_batches(src, tgt, 0, 1, 80, 20, join_prob)
    for index in batches[:3]:  # warm-up
        step(model, optimizer, make_batch(ex_src, ex_tgt, index), bf16)
    with FlopCounterMode(display=False) as counter:
        step(model, optimizer, make_batch(ex_src, ex_tgt, batches[3]), bf16)
    flops_per_token = counter.get_total_flops() / make_batch(ex_src, ex_tgt, batches[3]).n_tgt_tokens
    rates = []
    for r in range(rounds):
        tokens, start = 0, time.perf_counter()
        for index in batches[4 + r * steps:4 + (r + 1) * steps]:
            batch = make_batch(ex_src, ex_tgt, index)  # batch building is part of the measured loop
            step(model, optimizer, batch, bf16)
            tokens += batch.n_tgt_tokens
        rates.append(tokens / (time.perf_counter() - start))
    rate = statistics.median(rates)
    return {"arch": cfg.arch, "hidden": cfg.hidden, "emb": cfg.emb_dim, "precision": "bf16" if bf16 else "fp32",
            "join_prob": join_prob, "target_tokens_per_s": round(rate), "slowest_round": round(min(rates)),
            "fastest_round": round(max(rates)), "steps": steps, "rounds": rounds,
            "gflop_per_s": round(rate * flops_per_token / 1e9, 1),
            "fraction_of_peak": {k: round(rate * flops_per_token / 1e9 / v, 3) for k, v in peaks.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bf16", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    peaks = {"fp32": matmul_peak(torch.float32), "bf16": matmul_peak(torch.bfloat16)}
    print(json.dumps({"matmul_peak_gflop_per_s": {k: round(v) for k, v in peaks.items()}, "threads": args.threads}))
    en, fr, origin = corpus("train")
    sv, tv = train_vocab(en, 6000), train_vocab(fr, 6000)
    src, tgt = sv.encode_batch(en), tv.encode_batch(fr)
    cpu = preset("cpu").model
    for arch in ("rnnsearch", "rnnencdec"):
        reference = ModelConfig(arch=arch, src_vocab_size=len(sv), tgt_vocab_size=len(tv), emb_dim=256, hidden=512,
                                align_dim=512, maxout=256, dropout=0.3)
        shipped = ModelConfig(**{**cpu.__dict__, "arch": arch, "src_vocab_size": len(sv), "tgt_vocab_size": len(tv)})
        for name, cfg, join in (("reference", reference, 0.0), ("cpu preset", shipped, 0.25)):
            result = measure(cfg, src, tgt, args.steps, args.rounds, args.bf16, join, peaks)
            print(json.dumps({"config": name, "data": origin, "threads": args.threads, **result}), flush=True)


if __name__ == "__main__":
    main()
