"""The copy task: a small RNNsearch learns to copy random strings of 3-7 symbols.

    python bench/copy_task.py [--steps 350] [--attention additive dot general concat location] [--layer-norm]

Trains one small model per attention variant for ``--steps`` batches of 32 on one thread and
prints each one's greedy sequence accuracy on 200 new strings. What a model learns depends on
the CPU's floating-point kernels, so this is a demonstration with printed figures, not a test;
the tests check each variant's invariants and that teacher forcing equals the step loop.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from model.core.config import ModelConfig  # noqa: E402
from model.corpus.parallel import make_batch  # noqa: E402
from model.corpus.vocab import EOS, PAD  # noqa: E402
from model.decoding.search import SearchConfig, greedy_search  # noqa: E402
from model.network.attention import ATTENTIONS  # noqa: E402
from model.network.nmt_model import NMTModel  # noqa: E402


def copy_task_accuracy(steps: int = 300, **config) -> float:
    """Train a small model on copying 3-7 symbols for ``steps`` batches; greedy sequence accuracy."""
    torch.manual_seed(0)
    rng = random.Random(0)

    def sample(n):
        return [[rng.randrange(4, 14) for _ in range(rng.randint(3, 7))] for _ in range(n)]

    model = NMTModel(ModelConfig(src_vocab_size=14, tgt_vocab_size=14, emb_dim=16, hidden=32, align_dim=32,
                                 maxout=16, dropout=0.0, **config))
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    for _ in range(steps):
        seqs = sample(32)
        batch = make_batch(seqs, seqs, list(range(32)))
        logits, _ = model(batch.src, batch.src_len, batch.tgt_in)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    test = sample(200)
    outputs = greedy_search(model.eval(), test, SearchConfig(beam=1, trace=False))
    return sum(out.ids == seq + [EOS] for out, seq in zip(outputs, test)) / len(test)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=350)
    parser.add_argument("--attention", nargs="+", default=list(ATTENTIONS), choices=list(ATTENTIONS))
    parser.add_argument("--layer-norm", action="store_true", help="layer-normalised GRUs")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"copy task, {args.steps} batches of 32, RNNsearch{' with layer norm' if args.layer_norm else ''}, "
          f"torch {torch.__version__}")
    for kind in args.attention:
        start = time.perf_counter()
        accuracy = copy_task_accuracy(args.steps, arch="rnnsearch", attention=kind, layer_norm=args.layer_norm)
        print(f"{kind:>9}: sequence accuracy {accuracy:.3f} ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
