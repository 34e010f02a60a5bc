"""Training speed of two checkouts side by side, so both see the same machine.

    python bench/train_ab.py --repo OTHER_CHECKOUT [--steps 15] [--rounds 3] [--pairs 12000]

On a shared or noisy machine two runs of ``train_speed.py`` taken minutes apart can differ by
20-30%. Here both checkouts train at the same time, one thread each (the ``cpu`` preset with
length augmentation, RNNencdec then RNNsearch, on the first ``--pairs`` Multi30k pairs), so a
change in speed is not mistaken for a change in the machine. Prints one JSON line per checkout
and model, then the relative difference of this checkout against the other.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKER = """
import json, sys
sys.path.insert(0, {repo!r})
import torch
torch.set_num_threads(1)
from bench.train_speed import measure
from bench.common import corpus

from model.core.config import ModelConfig, preset
from model.corpus.vocab import train_vocab
en, fr, origin = corpus("train")
en, fr = en[:{pairs}], fr[:{pairs}]
sv, tv = train_vocab(en, 6000), train_vocab(fr, 6000)
src, tgt = sv.encode_batch(en), tv.encode_batch(fr)
cpu = preset("cpu").model
for arch in ("rnnencdec", "rnnsearch"):
    cfg = ModelConfig(**{{**cpu.__dict__, "arch": arch, "src_vocab_size": len(sv), "tgt_vocab_size": len(tv)}})
    r = measure(cfg, src, tgt, {steps}, {rounds}, False, 0.25, {{"fp32": 1.0, "bf16": 1.0}})
    print(json.dumps({{"repo": {repo!r}, "arch": arch, "target_tokens_per_s": r["target_tokens_per_s"],
                      "slowest_round": r["slowest_round"], "fastest_round": r["fastest_round"], "data": origin}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", required=True, help="the other checkout (e.g. a worktree of an older commit)")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=12000)
    args = parser.parse_args()
    repos = [str(REPO), str(Path(args.repo).resolve())]
    workers = [subprocess.Popen([sys.executable, "-c", WORKER.format(repo=repo, pairs=args.pairs, steps=args.steps,
                                                                    rounds=args.rounds)],
                                stdout=subprocess.PIPE, text=True, cwd=repo) for repo in repos]
    results = [[json.loads(line) for line in worker.communicate()[0].splitlines()] for worker in workers]
    if any(worker.returncode for worker in workers):
        sys.exit("a worker failed")
    for rows in results:
        for row in rows:
            print(json.dumps(row))
    for ours, theirs in zip(*results):
        change = ours["target_tokens_per_s"] / theirs["target_tokens_per_s"] - 1
        print(json.dumps({"arch": ours["arch"], "this_vs_other": f"{100 * change:+.1f}%"}))


if __name__ == "__main__":
    main()
