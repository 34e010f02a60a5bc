"""How long the sentence space takes: first use (reading the training corpora, encoding the
sample, the 2-D map) and each new sentence afterwards (its vector, neighbours and place on the map);
with ``--bottleneck``, what the nearest training sentences of Multi30k's test_2016_flickr sentences
share with them, by source length (model/decoding/sentence_space.py · shared_parts).

    python bench/sentence_space.py [--names everyday-rnnsearch-en-fr,everyday-rnnencdec-en-fr] [--threads 2]
                                   [--bottleneck]

Needs the checkpoints' training corpora (``../shared/data`` beside the repository, or ``data/``).
Prints one JSON line per model (and one per length bucket with ``--bottleneck``).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from bench.common import CHECKPOINTS, corpus  # noqa: E402
from model.decoding.sentence_space import SAMPLE, WORD_SAMPLE, build_space, shared_parts, training_sentences  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402

QUERIES = ["A dog runs in the park.", "Two children are playing with a ball on the beach.",
           "I don't know what you want from me.", "Tom is fat.",
           "A man in a blue shirt is standing on a ladder cleaning windows while a woman watches from the street."]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", default="everyday-rnnsearch-en-fr,everyday-rnnencdec-en-fr")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bottleneck", action="store_true",
                        help="what the 5 nearest training sentences of each test sentence share with it")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name in args.names.split(","):
        folder = CHECKPOINTS / name
        start = time.perf_counter()
        pool = training_sentences(folder, REPO)
        read = time.perf_counter() - start
        translator = Translator.from_checkpoint(folder)
        start = time.perf_counter()
        space = build_space(translator, pool, SAMPLE, WORD_SAMPLE)
        build = time.perf_counter() - start
        times = []
        for text in QUERIES * 3:
            start = time.perf_counter()
            vector = space.embed(translator, text)
            space.nearest(vector, 10)
            space.project(vector)
            times.append(time.perf_counter() - start)
        print(json.dumps({"model": name, "vector": space.kind, "training_sentences": len(pool),
                          "sample": len(space.sentences), "word_pieces": 0 if space.words is None else len(space.words.pieces),
                          "memory_mb": round(space.nbytes / 2**20, 1), "read_corpora_s": round(read, 1),
                          "build_s": round(build, 1), "query_median_ms": round(statistics.median(times) * 1000, 1),
                          "query_max_ms": round(max(times) * 1000, 1), "threads": args.threads}))
        if args.bottleneck:
            test, _, source = corpus("test_2016_flickr")
            for row in shared_parts(space, translator, test, k=5):
                print(json.dumps({"model": name, "vector": space.kind, "test": source, **{
                    key: round(value, 3) if isinstance(value, float) else value for key, value in vars(row).items()}}))


if __name__ == "__main__":
    main()
