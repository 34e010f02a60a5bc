"""Does bf16 training (``train.bf16``) learn as well as fp32? It is worth its speed only if
validation BLEU after a fixed number of steps matches fp32 within 0.5.

    python bench/bf16_parity.py [--steps 726] [--seeds 1 2] [--threads 2] [--arch rnnsearch rnnencdec]

For each architecture and seed, trains the reference size (the ``cpu`` preset without
length augmentation) twice from the same seed and data order, once in fp32 and once with
``train.bf16``, for ``--steps`` updates (726 = two epochs of Multi30k at 80 sentences per
batch). Prints one JSON line per run pair (both greedy validation BLEUs, sacrebleu, and each
run's training tokens/s), then one per architecture with the means over seeds: the parity
test compares the means, and the fp32 spread across seeds shows how much of a difference is
noise. Needs ``$NMT_SHARED_DATA/multi30k`` (see bench/common.py) or ``--data-dir``. Runs go to
runs/bench/parity-<arch>-<precision>-seed<seed>/.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import SHARED  # noqa: E402
from model.core.config import preset  # noqa: E402
from model.training.trainer import train  # noqa: E402

TOLERANCE = 0.5  # BLEU: bf16 training may differ from fp32 by at most this on validation


def run(arch: str, bf16: bool, seed: int, steps: int, threads: int, data_dir: Path, out: Path) -> dict:
    """Train one configuration from scratch; return its last log record (val BLEU, tokens/s)."""
    cfg = preset("cpu")
    cfg.model.arch = arch
    t = cfg.train
    t.data_dir, t.out_dir, t.join_prob, t.bf16 = str(data_dir), str(out), 0.0, bf16
    t.max_steps, t.epochs, t.threads, t.seed, t.save_every, t.time_limit_min = steps, 10**6, threads, seed, 10**9, 0
    train(cfg, resume=False, log=lambda line: print(line, file=sys.stderr), show_bar=False)  # stdout: JSON only
    return json.loads((out / "log.jsonl").read_text().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=726)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--arch", nargs="+", default=["rnnsearch", "rnnencdec"])
    parser.add_argument("--data-dir", type=Path, default=SHARED)
    parser.add_argument("--out", type=Path, default=Path("runs/bench"))
    args = parser.parse_args()
    if not args.data_dir.is_dir():
        sys.exit(f"error: no Multi30k at {args.data_dir}; pass --data-dir")
    for arch in args.arch:
        bleu = {"fp32": [], "bf16": []}
        for seed in args.seeds:
            records = {p: run(arch, p == "bf16", seed, args.steps, args.threads, args.data_dir,
                              args.out / f"parity-{arch}-{p}-seed{seed}") for p in bleu}
            for p, r in records.items():
                bleu[p].append(r["val_bleu"])
            print(json.dumps({"arch": arch, "seed": seed, "steps": args.steps,
                              **{f"{p}_val_bleu": round(r["val_bleu"], 2) for p, r in records.items()},
                              **{f"{p}_tokens_per_s": round(r["tokens_per_s"]) for p, r in records.items()},
                              "signature": records["fp32"]["val_bleu_signature"]}), flush=True)
        diff = statistics.mean(bleu["bf16"]) - statistics.mean(bleu["fp32"])
        print(json.dumps({"arch": arch, "seeds": args.seeds, "steps": args.steps,
                          **{f"{p}_mean_val_bleu": round(statistics.mean(b), 2) for p, b in bleu.items()},
                          "fp32_spread_across_seeds": round(max(bleu["fp32"]) - min(bleu["fp32"]), 2),
                          "bf16_minus_fp32": round(diff, 2), "within_tolerance": abs(diff) <= TOLERANCE}), flush=True)


if __name__ == "__main__":
    main()
