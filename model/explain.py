"""``python -m model.explain`` (``nmt-explain``): which explanation of a translation can you trust?

    python -m model.explain --checkpoint checkpoints/everyday-rnnsearch-en-fr \\
        --checkpoint checkpoints/everyday-rnnencdec-en-fr --text "She has a white cat." [--json out.jsonl]

Each model translates the sentence (beam 5) and its own output is explained by every method
that applies to it (model/explaining/methods.py: attention, attention_norm, gradient_x_input,
integrated_gradients, occlusion, and for a Transformer each decoder layer's attention; ``--methods``
picks some): for each output token, a score for
each source token and each word already written, and how the whole splits between the two.
Each method's faithfulness is then measured (model/explaining/faithfulness.py): source words
removed most important first (the deletion curve's area: lower is better), added most important
first (insertion: higher is better), comprehensiveness and sufficiency, beside a random order's,
and the methods are ranked by their deletion area.

``--contrast WORD --step N`` explains log p(y_N) - log p(WORD) at output step N ("why this word
and not that one"); the other steps then explain nothing (each is contrasted with itself).

``--src FILE`` explains every line of a test set instead (at most ``--max-sentences``) and prints,
per model and method, the mean of each figure over the sentences with its 95% interval (normal
approximation), beside random orders' (by default one per sentence, each sentence its own); with ``--json``, one object per model: ``model``,
``sentences``, ``methods`` {name: {figure: {``mean``, ``ci95``}}}, ``random`` (the same). Progress
goes to stderr.

``--json OUT`` writes one JSON object per model: ``model``, ``source_tokens``, ``output_tokens``,
``methods`` {name: {``source`` and ``prefix`` rows (one per output token, together summing to
1), ``source_share``, ``deletion_area``, ``insertion_area``, ``comprehensiveness``,
``sufficiency``}}, ``random`` {the same four for random orders} and
``integrated_gradients_completeness_gap``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Optional, Sequence

import torch

from model.argtypes import int_range, run_command
from model.core.errors import ConfigError
from model.corpus.textfile import read_text
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from model.explaining import registry
from model.explaining.explanation import LAYERS
from model.explaining.faithfulness import SEEDS, measure
from model.explaining.methods import expand_methods
from model.explaining.registry import explain
from model.explaining.test_set import FIGURES, FaithfulnessTable, faithfulness_table
from model.explaining.test_set import SEEDS as TEST_SET_SEEDS

MAX_TEXT_CHARS = 2000


def contrast_ids(translator: Translator, out_ids: list[int], word: str, step: int) -> list[int]:
    """The output's ids with step ``step`` (1-based) replaced by ``word``'s one id; ConfigError
    for a word the vocabulary does not hold as one token, or a step outside the output."""
    if not 1 <= step <= len(out_ids):
        raise ConfigError(f"--step must be 1..{len(out_ids)} (the output has {len(out_ids)} tokens), got {step}")
    ids = translator.tgt_vocab.encode(word)
    if len(ids) != 1:
        shown = repr(word[:40])
        raise ConfigError(f"--contrast {shown}: the target vocabulary reads it as {len(ids)} tokens; give one token "
                          f"(e.g. one of this step's candidates)")
    return out_ids[:step - 1] + ids + out_ids[step:]


def report(translator: Translator, text: str, names: Sequence[str], contrast: Optional[tuple[str, int]],
           seeds: int) -> dict:
    trace = translator.translate([text], SearchConfig(beam=5))[0]
    src, out = trace.source_ids, trace.target_ids
    if not out:
        raise ConfigError("nothing to explain: the sentence is blank")
    other = contrast_ids(translator, out, *contrast) if contrast else None
    found = explain(translator.model, src, out, names, other)
    measured = measure(translator.model, src, out, found, seeds)
    rows = {}
    for name, explanation in found.items():
        source, prefix = explanation.normalised()
        rows[name] = {"source": source.round(5).tolist(), "prefix": prefix.round(5).tolist(),
                      "source_share": round(float(explanation.shares()[:, 0].mean()), 5),
                      **measured.methods[name].to_json()}
    gap = found["integrated_gradients"].completeness_gap if "integrated_gradients" in found else None
    return {"model": translator.name, "source_tokens": trace.source_tokens, "output_tokens": trace.target_tokens,
            "contrast": None if contrast is None else {"word": contrast[0], "step": contrast[1]},
            "methods": rows, "random": measured.random.to_json(),
            "integrated_gradients_completeness_gap": None if gap is None or math.isnan(gap) else round(gap, 5)}


def test_set_report(translator: Translator, lines: Sequence[str], names: Sequence[str], seeds: int) -> FaithfulnessTable:
    """The mean of each figure over ``lines`` with a 95% interval, per method and for random orders."""
    traces = translator.translate(list(lines), SearchConfig(beam=5))
    return faithfulness_table(translator.model, translator.name, [(t.source_ids, t.target_ids) for t in traces], names,
                              seeds, lambda done, total: print(f"{translator.name}: {done}/{total} sentences",
                                                               file=sys.stderr, flush=True))


def test_set_table(found: FaithfulnessTable) -> str:
    lines = [f"{found.model}: {found.sentences} sentences, mean ± 95% interval",
             f"{'method':<22}" + "".join(f"{k:>22}" for k in FIGURES)]
    for name, row in found.ranked() + [("random order", found.random)]:
        lines.append(f"{name:<22}" + "".join(f"{row[k].mean:>13.3f} ± {row[k].ci95:<6.3f}" if k in row else f"{'':>22}"
                                            for k in FIGURES))
    if found.completeness_gaps:
        gaps = found.to_json()["integrated_gradients_completeness_gap"]
        lines.append(f"integrated gradients' completeness gap, largest in a sentence: {gaps['largest']:.2%} at most, "
                     f"{gaps['median']:.2%} in the median sentence")
    verdict = found.best_beats_random()
    if verdict is not None:
        lines.append(f"the best method's deletion interval is {'wholly below' if verdict else 'not wholly below'} "
                     "the random order's")
    return "\n".join(lines) + "\n"


def table(found: dict) -> str:
    lines = [f"{found['model']}: {' '.join(found['output_tokens'])}",
             f"{'method':<22}{'source share':>13}{'deletion':>10}{'insertion':>11}{'compr.':>8}{'suff.':>8}"]
    ranked = sorted(found["methods"].items(), key=lambda kv: kv[1]["deletion_area"])
    for name, row in ranked + [("random order", dict(found["random"], source_share=float("nan")))]:
        share = "" if math.isnan(row["source_share"]) else f"{row['source_share']:.3f}"
        lines.append(f"{name:<22}{share:>13}{row['deletion_area']:>10.3f}{row['insertion_area']:>11.3f}"
                     f"{row['comprehensiveness']:>8.3f}{row['sufficiency']:>8.3f}")
    gap = found["integrated_gradients_completeness_gap"]
    if gap is not None:
        lines.append(f"integrated gradients' completeness gap: {gap:.2%} (largest over the output tokens)")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.explain", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", action="append", required=True, help="a model folder (repeatable)")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--text", help="the sentence to translate and explain")
    given.add_argument("--src", help="a test set, one sentence per line: the mean of each figure over it")
    parser.add_argument("--max-sentences", type=int_range(1), default=500, help="lines of --src explained at most")
    parser.add_argument("--methods", default=",".join((*registry.names(), LAYERS)),
                        help=f"comma-separated, of {', '.join((*registry.names(), LAYERS))} ({LAYERS}: a Transformer's "
                             "cross-attention of each decoder layer, averaged over its heads; default: all)")
    parser.add_argument("--contrast", metavar="WORD", help="explain log p(output) - log p(WORD) at --step")
    parser.add_argument("--step", type=int_range(1), default=1, help="the output step --contrast applies to (1-based)")
    parser.add_argument("--seeds", type=int_range(1, 100), help=f"random orders averaged per sentence (default {SEEDS} "
                        f"for --text, {TEST_SET_SEEDS} for --src: there each sentence takes its own)")
    parser.add_argument("--json", metavar="OUT", help="write one JSON object per model, one per line")
    parser.add_argument("--threads", type=int_range(0), default=0, help="torch threads (0: default)")
    args = parser.parse_args(argv)
    names = [m for m in args.methods.split(",") if m]
    unknown = [m for m in names if m not in (*registry.names(), LAYERS)]
    if unknown or not names:
        parser.error(f"unknown method {', '.join(repr(m[:30]) for m in unknown) or '(none given)'}; "
                     f"choose from {', '.join((*registry.names(), LAYERS))}")
    if args.text is not None and (len(args.text) > MAX_TEXT_CHARS or not args.text.strip()):
        parser.error(f"--text must be 1..{MAX_TEXT_CHARS} characters of text")
    if args.threads:
        torch.set_num_threads(args.threads)
    def work() -> str:
        results = []
        lines = None if args.src is None else read_text(args.src, "test set").splitlines()[:args.max_sentences]
        for folder in args.checkpoint:
            translator = Translator.from_checkpoint(folder)
            methods = expand_methods(translator.model, names)
            if lines is not None:
                table_found = test_set_report(translator, lines, methods, args.seeds or TEST_SET_SEEDS)
                print(test_set_table(table_found))
                found = table_found.to_json()
            else:
                found = report(translator, args.text, methods, (args.contrast, args.step) if args.contrast else None,
                               args.seeds or SEEDS)
                print(table(found))
            results.append(found)
        if args.json:
            Path(args.json).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results),
                                       encoding="utf-8")
            return f"wrote {args.json}"
        return f"explained {len(results)} model(s)"

    return run_command(work)

if __name__ == "__main__":
    raise SystemExit(main())
