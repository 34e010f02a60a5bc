"""How long explaining a translation takes, and how complete integrated gradients are.

    python bench/explain_speed.py [--threads 2] [--repeats 3] [--sentences 20] [--completeness 0] [--products]

With the shipped everyday English-French RNNsearch and RNNencdec, each translating a 25-word
sentence (beam 5) and explaining its own output:

- each method's time (the median of ``--repeats``), and the four methods beside attention
  (norm-weighted attention, gradient x input, integrated gradients, occlusion) for both models;
  with attention, the faithfulness check drawn under its heatmap;
- the faithfulness curves of one sentence: every method's and five random orders', per model;
- a test-set faithfulness table's pace: ``--sentences`` lines of Multi30k test_2016_flickr
  (or synthetic stand-ins) with the default methods (no integrated gradients), and that pace
  for 500 sentences;
- ``--completeness N``: integrated gradients on the first N test_2016_flickr lines per model,
  every output token's completeness gap (|sum of attributions - (f(x) - f(baseline))| /
  |f(x) - f(baseline)|), how many midpoints the tokens took, and the time;
- ``--transformer``: the shipped everyday English-French Transformer explaining the same sentence
  by every method of the table that applies to it (the layer-wise ALTI+, value zeroing and
  rollout among them) and the logit lens, each time beside integrated gradients' (the ratio);
- ``--products``: the arithmetic floor of each of those (``bench/products.py``): the same work's
  matrix products, forward and backward, replayed alone on tensors of the same shapes, beside the
  work's own time, with their GFLOP and the rate the products ran at.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench.common import CHECKPOINTS, corpus  # noqa: E402
from bench.products import record  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from model.explaining import methods, registry  # noqa: E402
from model.explaining.faithfulness import attention_check, measure  # noqa: E402
from model.explaining.test_set import faithfulness_table  # noqa: E402

MODELS = ("everyday-rnnsearch-en-fr", "everyday-rnnencdec-en-fr")
TRANSFORMER = "everyday-transformer-en-fr"
SENTENCE = ("The man in the red jacket is standing next to the old stone wall while his friends are "
            "waiting for the bus in the rain.")  # 25 words
FOUR = ("attention_norm", "gradient_x_input", "integrated_gradients", "occlusion")
TABLE_METHODS = ("attention", "attention_norm", "gradient_x_input", "occlusion")


def applicable(model, names) -> list[str]:
    """``names`` without the attention methods where ``model`` has no attention."""
    return [m for m in names if model.has_attention or not registry.needs_attention(m)]


def timed(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def one_sentence(translators: dict, repeats: int) -> None:
    print(f"one sentence of {len(SENTENCE.split())} words, median of {repeats}:")
    totals = {"four": 0.0, "without_ig": 0.0, "curves": 0.0}
    for name, tr in translators.items():
        trace = tr.translate([SENTENCE], SearchConfig(beam=5))[0]
        src, out = trace.source_ids, trace.target_ids
        row = []
        for method in applicable(tr.model, ("attention",) + FOUR):
            seconds = timed(lambda: registry.explain(tr.model, src, out, [method]), repeats)
            row.append(f"{method} {seconds:.2f} s")
            if method in FOUR:
                totals["four"] += seconds
                totals["without_ig"] += 0 if method == "integrated_gradients" else seconds
        found = registry.explain(tr.model, src, out, ("attention",) + FOUR)
        curves = timed(lambda: measure(tr.model, src, out, found), repeats)
        if trace.attention is not None:  # the check under the heatmap (model/explaining/faithfulness.py)
            check = timed(lambda: attention_check(tr.model, trace), repeats)
            row.append(f"the heatmap's faithfulness check {check:.2f} s")
        totals["curves"] = max(totals["curves"], curves)
        print(f"  {name}: {len(src)} source tokens, {len(out)} output tokens; " + ", ".join(row)
              + f"; faithfulness curves of all {len(found)} methods and 5 random orders {curves:.2f} s")
    print(f"  the four methods ({', '.join(FOUR)}), both models: {totals['four']:.2f} s; "
          f"without integrated gradients: {totals['without_ig']:.2f} s")
    print(f"  faithfulness curves of one sentence, the slower model: {totals['curves']:.2f} s")


def test_set_pace(translators: dict, n: int) -> None:
    lines = corpus("test_2016_flickr")[0][:n]
    for name, tr in translators.items():
        traces = tr.translate(lines, SearchConfig(beam=5))
        pairs = [(t.source_ids, t.target_ids) for t in traces]
        start = time.perf_counter()
        faithfulness_table(tr.model, name, pairs, TABLE_METHODS)
        seconds = time.perf_counter() - start
        print(f"  {name}: test-set table of {n} sentences ({', '.join(TABLE_METHODS)}) {seconds:.1f} s, "
              f"{seconds / n:.2f} s per sentence: {500 * seconds / n / 60:.1f} min for 500")


def completeness(translators: dict, n: int) -> None:
    lines = corpus("test_2016_flickr")[0][:n]
    for name, tr in translators.items():
        traces = tr.translate(lines, SearchConfig(beam=5))
        gaps, steps, tokens, start = [], [], 0, time.perf_counter()
        for trace in traces:
            if not trace.target_ids:
                continue
            found = methods.integrated_gradients(tr.model, trace.source_ids, trace.target_ids)
            gaps.append(found.completeness_gap)
            steps.append(found.steps)
            tokens += len(trace.target_ids)
        seconds = time.perf_counter() - start
        gaps = np.array(gaps)
        print(f"  {name}: {len(gaps)} sentences, {tokens} output tokens; largest gap per sentence: max "
              f"{gaps.max():.2%}, median {np.median(gaps):.2%}; sentences whose every token is within "
              f"{methods.IG_TOLERANCE:.0%}: {(gaps <= methods.IG_TOLERANCE).sum()}/{len(gaps)}; most midpoints a token "
              f"took: " + ", ".join(f"{s}: {steps.count(s)} sentences" for s in sorted(set(steps)))
              + f"; {seconds:.0f} s ({seconds / len(gaps):.2f} s per sentence)")


def floor(label: str, work, repeats: int) -> tuple[float, float]:
    """Print ``work``'s time (the median of ``repeats``) beside its products alone; return both."""
    seconds = timed(work, repeats)
    products = record(work)
    alone = statistics.median(products.replay() for _ in range(repeats))
    print(f"    {label}: {seconds:.2f} s; its products alone {alone:.2f} s ({products.gflop:.1f} GFLOP at "
          f"{products.gflop / alone:.0f} GFLOP/s), {seconds / alone:.2f} times")
    return seconds, alone


def arithmetic_floor(translators: dict, repeats: int, n: int) -> None:
    """Each method on the sentence, and a test-set table's sentences, beside their products alone."""
    totals = [0.0, 0.0]
    lines = corpus("test_2016_flickr")[0][:n]
    for name, tr in translators.items():
        print(f"  {name}:")
        trace = tr.translate([SENTENCE], SearchConfig(beam=5))[0]
        src, out = trace.source_ids, trace.target_ids
        for method in applicable(tr.model, FOUR):
            found = floor(method, lambda: registry.explain(tr.model, src, out, [method]), repeats)
            totals = [t + f for t, f in zip(totals, found)]
        if n:
            pairs = [(t.source_ids, t.target_ids) for t in tr.translate(lines, SearchConfig(beam=5))]
            seconds, alone = floor(f"test-set table of {n} sentences",
                                   lambda: faithfulness_table(tr.model, name, pairs, TABLE_METHODS), 1)
            print(f"    for 500 sentences: {500 * seconds / n / 60:.1f} min; its products alone "
                  f"{500 * alone / n / 60:.1f} min")
    print(f"  the four methods, both models: {totals[0]:.2f} s; their products alone {totals[1]:.2f} s")


def transformer_methods(repeats: int) -> None:
    """Every method of the table on the sentence with the shipped Transformer, beside integrated gradients."""
    from model.explaining.logit_lens import logit_lens

    tr = Translator.from_checkpoint(CHECKPOINTS / TRANSFORMER)
    trace = tr.translate([SENTENCE], SearchConfig(beam=5))[0]
    src, out = trace.source_ids, trace.target_ids
    names = [m for m in registry.names() if registry.applies(tr.model, m)]
    times = {m: timed(lambda: registry.explain(tr.model, src, out, [m]), repeats) for m in names}
    times["logit lens"] = timed(lambda: logit_lens(tr.model, src, out), repeats)
    ig = times["integrated_gradients"]
    print(f"{TRANSFORMER}, {len(src)} source and {len(out)} output tokens, median of {repeats}:")
    for name, seconds in times.items():
        print(f"  {name}: {seconds:.3f} s, {seconds / ig:.3f} times integrated gradients'")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=20, help="test-set pace over this many sentences (0: skip)")
    parser.add_argument("--completeness", type=int, default=0, help="integrated gradients on this many sentences")
    parser.add_argument("--products", action="store_true", help="each part beside its matrix products alone")
    parser.add_argument("--transformer", action="store_true",
                        help="only: every method with the shipped Transformer, beside integrated gradients")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"{platform.machine()} {platform.processor() or ''}, torch {torch.__version__}, {args.threads} threads")
    if args.transformer:
        transformer_methods(args.repeats)
        return
    translators = {name: Translator.from_checkpoint(CHECKPOINTS / name) for name in MODELS}
    one_sentence(translators, args.repeats)
    if args.sentences:
        print("test-set pace:")
        test_set_pace(translators, args.sentences)
    if args.completeness:
        print(f"integrated gradients' completeness (default {methods.IG_STEPS} midpoints, doubled per token "
              f"up to {methods.IG_MAX_STEPS} until within {methods.IG_TOLERANCE:.0%}):")
        completeness(translators, args.completeness)
    if args.products:
        print("beside their matrix products alone (bench/products.py):")
        arithmetic_floor(translators, args.repeats, args.sentences)


if __name__ == "__main__":
    main()
