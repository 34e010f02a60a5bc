"""How long scoring alignments takes, and the scores: the two English-French gold sets plus a
silver set (the first 310 Multi30k test_2016_flickr sentences, eflomal's own symmetrised links
as the answer), 447 sentences, with the everyday pair and all four sources in one run.

    python bench/align_speed.py [--threads 2] [--silver-tokens spaces] [--methods attention,diagonal]

Reads ``$NMT_SHARED_DATA`` (default ``../shared/data``): ``alignments/`` and ``multi30k/``.
Prints the time of each source and AER per set and source.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from model.corpus.parallel import find_split  # noqa: E402
from model.corpus.textfile import read_text  # noqa: E402
from model.scoring.attention_alignment import align_report, training_corpus  # noqa: E402
from model.scoring.statistical_aligner import TOKEN, eflomal_links  # noqa: E402
from model.scoring.word_alignment import Counts, GoldSentence, GoldSet, read_gold  # noqa: E402

SHARED_DATA = Path(os.environ.get("NMT_SHARED_DATA") or REPO.parent / "shared" / "data")
MODELS = [REPO / "checkpoints" / "everyday-rnnsearch-en-fr", REPO / "checkpoints" / "everyday-rnnencdec-en-fr"]
SILVER = 310


def silver_set(tokens: str) -> GoldSet:
    """Multi30k test sentences, tokenised, with eflomal's links (trained on the models' corpora)
    as sure links: a silver standard for text like the training data."""
    folder = SHARED_DATA / "multi30k"
    en, fr = (read_text(find_split(folder, "test_2016_flickr", lang)).splitlines()[:SILVER] for lang in ("en", "fr"))
    # the models read the sentences in their own case; eflomal lowercases what it reads itself
    split = TOKEN.findall if tokens == "punctuation" else str.split
    src, tgt = [tuple(split(s)) for s in en], [tuple(split(t)) for t in fr]
    corpus, _ = training_corpus(MODELS[:1], [], "en", "fr", root=REPO)
    links = eflomal_links(src, tgt, corpus)
    return GoldSet("multi30k-silver", tuple(GoldSentence(s, t, frozenset(a), frozenset(a)) for s, t, a in zip(src, tgt, links)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--silver-tokens", choices=("punctuation", "spaces"), default="spaces",
                        help="tokenise the silver set's sentences into words and punctuation, or split at spaces")
    parser.add_argument("--methods", default="attention,saliency,eflomal,diagonal")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gold_dir = SHARED_DATA / "alignments"
    sets = [read_gold(gold_dir / f"{n}.en", gold_dir / f"{n}.fr", gold_dir / f"{n}.wa") for n in ("wpt03-trial", "golden100")]
    start = time.perf_counter()
    sets.append(silver_set(args.silver_tokens))
    silver_s = time.perf_counter() - start
    joined = GoldSet("all", tuple(s for g in sets for s in g.sentences))
    start = time.perf_counter()
    report = align_report(joined, MODELS, args.methods.split(","), log=lambda m: print(m, flush=True))
    total = time.perf_counter() - start
    print(f"\n{len(joined.sentences)} sentences, 2 models, {args.methods}: {total:.1f} s with {args.threads} torch "
          f"thread(s) ({report.seconds}); building the silver set took {silver_s:.1f} s")
    print(f"{'source':<44}" + "".join(f"{g.name:>18}" for g in sets))
    for row in report.rows:
        cells, start_k = [], 0
        for g in sets:
            part = [c for c in row.per_sentence[start_k:start_k + len(g.sentences)] if c is not None]
            cells.append(sum(part, Counts()).aer)
            start_k += len(g.sentences)
        label = f"{row.model or '-'} {row.method} ({row.extraction})"
        print(f"{label:<44}" + "".join(f"{aer:18.3f}" for aer in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
