"""What sharing a sentence's encoder state among its beam hypotheses saves, in one process.

    python bench/beam_memory.py [--threads 2] [--rounds 6] [--sentences 256]

A beam search keeps k hypotheses of every sentence. The shipped models' ``beam_memory``
(``EncoderState.for_beams``) lets the k read their sentence's annotations, keys and precomputed
C h_j rows once (a sentence's k attention queries and k context sums each one batched product),
and dropping a finished sentence copies one row of them instead of k. The other way, the
decoding interface's default (``Decodable.beam_memory``), copies each sentence's state k times
before the search and again whenever sentences leave the batch. Both ways run here in the same
process, alternating round by round (``bench.common.alternate``).

With the shipped everyday English-French pair:
- an interactive decode: one 27-word sentence, beam 5, full traces (the median of 5 a round);
- a batch decode: the first ``--sentences`` test_2016_flickr captions, beam 5, 64 a batch, no
  traces (the command line's work), and whether both ways wrote the same outputs;
- the same captions traced, 32 a batch (the Evaluate page's work).
Each figure is the median over ``--rounds`` rounds. Prints one JSON object per model.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import CHECKPOINTS, alternate, corpus, seconds  # noqa: E402
from bench.decode_speed import PRODUCT_SENTENCE  # noqa: E402
from model.core.decodable import Decodable  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from model.network.nmt_model import NMTModel  # noqa: E402

MODELS = ("everyday-rnnsearch-en-fr", "everyday-rnnencdec-en-fr")
WAYS = {"shared": NMTModel.beam_memory, "copied": Decodable.beam_memory}


def compare(tr: Translator, captions: list[str], rounds: int) -> dict:
    traced, plain = SearchConfig(beam=5, trace=True), SearchConfig(beam=5, trace=False)
    outputs: dict = {}  # way -> the batch decode's translations

    def batch(way: str) -> None:
        outputs[way] = [t.translation for t in tr.translate(captions, plain, batch_size=64)]

    works = {"interactive_decode": lambda way: statistics.median(
                 seconds(lambda: tr.translate([PRODUCT_SENTENCE], traced)) for _ in range(5)),
             "batch_decode": lambda way: seconds(lambda: batch(way)),
             "traced_batch_decode": lambda way: seconds(lambda: tr.translate(captions, traced, batch_size=32))}
    try:
        found = alternate({way: partial(setattr, NMTModel, "beam_memory", fn) for way, fn in WAYS.items()},
                          works, rounds)
    finally:
        NMTModel.beam_memory = WAYS["shared"]
    for name, row in found.items():
        row["saved"] = f"{1 - row['shared'] / row['copied']:.0%}"
    same = sum(a == b for a, b in zip(outputs["shared"], outputs["copied"]))
    return {"seconds": found, "batch_outputs_identical": f"{same} of {len(captions)}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--sentences", type=int, default=256)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    captions, _, origin = corpus("test_2016_flickr")
    for name in MODELS:
        tr = Translator.from_checkpoint(CHECKPOINTS / name)
        tr.translate(captions[:64], SearchConfig(beam=5, trace=False), batch_size=64)  # warm
        print(json.dumps({"model": name, "threads": args.threads, "rounds": args.rounds, "data": origin,
                          **compare(tr, captions[:args.sentences], args.rounds)}), flush=True)


if __name__ == "__main__":
    main()
