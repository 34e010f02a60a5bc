"""Where a model loses ground on long inputs: the length stress test's joined items, by source length.

    python bench/long_inputs.py [--models everyday-rnnsearch-en-fr,everyday-transformer-en-fr]
                                [--test test_2016_flickr] [--k 4] [--lines 1000]

Each model translates the test set's sentences one by one and joined k at a time (the length
stress test's items, ``model.corpus.test_sets.join_consecutive``), beam 5. For each bucket of
joined items by source length (SentencePiece pieces), it prints one JSON line per model: the BLEU
of its own sentence-by-sentence outputs joined the same way, the BLEU of the joined items'
outputs, their ratio, and how many words the joined outputs have per word of the one-by-one
outputs. A model that translates a long input as well as its parts keeps 100% in every bucket.

Then, from the first model's card, the share of one training epoch's sources (after the
recipe's length augmentation) at least as long as each bucket's lower bound: how often training
showed the model inputs of that length. Needs the corpora the card names (skipped if absent).
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sacrebleu  # noqa: E402
import torch  # noqa: E402

from bench.common import CHECKPOINTS, SHARED  # noqa: E402
from model.checkpoints.folder import read_config  # noqa: E402
from model.core.config import Config  # noqa: E402
from model.corpus.parallel import find_split  # noqa: E402
from model.corpus.test_sets import build_eval_set, join_consecutive  # noqa: E402
from model.corpus.textfile import read_text  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402

BUCKETS = ((0, 50), (50, 60), (60, 10_000))  # source pieces of a joined item


def bucket_rows(name: str, pieces: list[int], joined_hyps: list[str], parts_hyps: list[str],
                refs: list[str]) -> list[dict]:
    rows = []
    for lo, hi in BUCKETS:
        pick = [i for i, n in enumerate(pieces) if lo <= n < hi]
        if not pick:
            continue
        whole = sacrebleu.corpus_bleu([joined_hyps[i] for i in pick], [[refs[i] for i in pick]]).score
        parts = sacrebleu.corpus_bleu([parts_hyps[i] for i in pick], [[refs[i] for i in pick]]).score
        words = sum(len(joined_hyps[i].split()) for i in pick) / max(1, sum(len(parts_hyps[i].split()) for i in pick))
        rows.append({"model": name, "source_pieces": f"{lo}-{hi}" if hi < 10_000 else f">={lo}", "items": len(pick),
                     "bleu_one_by_one": round(parts, 2), "bleu_joined": round(whole, 2),
                     "joined_vs_one_by_one": round(whole / parts, 3) if parts else None,
                     "words_joined_per_one_by_one": round(words, 3)})
    return rows


def training_shares(checkpoint: Path) -> dict:
    """{lower bound: share of one epoch's training sources at least that many pieces long}."""
    from model.training.data import Data

    model_cfg, train_cfg, _ = read_config(checkpoint)
    if train_cfg is None:
        return {}
    data = Data(Config(model_cfg, train_cfg), log=lambda *_: None)
    lengths: collections.Counter = collections.Counter()
    batches, _ = data.epoch(1)
    for src, _tgt, index in batches:
        lengths.update(len(src[i]) for i in index)
    total = sum(lengths.values())
    return {lo: round(sum(n for length, n in lengths.items() if length >= lo) / total, 4) for lo, _ in BUCKETS if lo}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="everyday-rnnsearch-en-fr,everyday-transformer-en-fr")
    parser.add_argument("--test", default="test_2016_flickr")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if not SHARED.is_dir():
        sys.exit(f"needs Multi30k in {SHARED} (set NMT_SHARED_DATA)")
    paths = [Path(m) if Path(m).is_dir() else CHECKPOINTS / m for m in args.models.split(",")]
    translators = [Translator.from_checkpoint(p) for p in paths]
    train_cfg = read_config(paths[0])[1]
    src_lang, tgt_lang = (train_cfg.src_lang, train_cfg.tgt_lang) if train_cfg else ("en", "fr")
    test = build_eval_set(read_text(find_split(SHARED, args.test, src_lang)).splitlines()[:args.lines],
                          read_text(find_split(SHARED, args.test, tgt_lang)).splitlines()[:args.lines], args.test)
    joined = join_consecutive(test, args.k)
    cfg = SearchConfig(beam=5, trace=False)
    k = args.k
    for t in translators:
        one = [tr.translation for tr in t.translate(test.src, cfg)]
        parts = [" ".join(one[i:i + k]) for i in range(0, len(joined.src) * k, k)]
        whole = [tr.translation for tr in t.translate(joined.src, cfg)]
        pieces = [len(t.src_vocab.encode(s)) for s in joined.src]
        for row in bucket_rows(t.name, pieces, whole, parts, joined.ref):
            print(json.dumps({"bench": "long_inputs", "test": args.test, "k": k, **row}), flush=True)
    try:
        shares = training_shares(paths[0])
    except (OSError, ValueError) as err:  # the card's corpora are not on this machine
        print(json.dumps({"bench": "training_source_lengths", "skipped": str(err)}))
        return
    print(json.dumps({"bench": "training_source_lengths", "model": translators[0].name,
                      "share_at_least_pieces": shares}))


if __name__ == "__main__":
    main()
