"""What the decoder's precomputed C h_j and C_o h_j save (``Decoder.prepare``), in one process.

    python bench/context_projections.py [--threads 2] [--rounds 6] [--sentences 192]

Where no gradient flows, RNNsearch reads C c_i and C_o c_i as sum_j alpha_ij C h_j and sum_j
alpha_ij C_o h_j, and RNNencdec forms C_o c once per sentence. The other way, which training and
gradient explanations keep, multiplies c_i by C and C_o at every step. Both ways run here in
the same process, alternating round by round (this machine's speed drifts by up to 1.5 times
within an hour, so two processes run apart would measure the drift). "products" strips the
precomputed rows from the encoder state, which sends the decoder down that other path.

With the shipped everyday English-French pair:
- an interactive decode: one 27-word sentence, beam 5, full traces (the median of 5 a round);
- a batch decode: the first ``--sentences`` test_2016_flickr captions, beam 5, 64 a batch, no
  traces, and whether both ways wrote the same outputs;
- re-scoring that 27-word sentence's output, as explanations do without gradients: occlusion,
  and the faithfulness curves of attention, gradient x input and occlusion with five random
  orders (gradient explanations keep the products either way).
Each figure is the median over ``--rounds`` rounds. Prints one JSON object per model.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import alternate_settings, compare_on_models, seconds  # noqa: E402
from bench.decode_speed import PRODUCT_SENTENCE, decode_works  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from model.explaining import methods, registry  # noqa: E402
from model.explaining.faithfulness import measure  # noqa: E402
from model.network.decoder import Decoder  # noqa: E402

MODELS = ("everyday-rnnsearch-en-fr", "everyday-rnnencdec-en-fr")
PREPARED = Decoder.prepare


def products_prepare(self, annotations, mask, summary):
    """``Decoder.prepare`` without the precomputed rows: c_i goes through C and C_o at each step."""
    return dataclasses.replace(PREPARED(self, annotations, mask, summary), context_gates=None, context_out=None,
                               fixed_out=None)


WAYS = {"precomputed": PREPARED, "products": products_prepare}


def compare(tr: Translator, captions: list[str], rounds: int) -> dict:
    trace = tr.translate([PRODUCT_SENTENCE], SearchConfig(beam=5, trace=True))[0]
    src, out = trace.source_ids, trace.target_ids
    explained = registry.explain(tr.model, src, out, ("attention", "gradient_x_input", "occlusion"))
    outputs: dict = {}  # way -> the batch decode's translations
    works = {**decode_works(tr, captions, outputs),
             "occlusion": lambda way: seconds(lambda: methods.occlusion(tr.model, src, out)),
             "faithfulness_curves": lambda way: seconds(lambda: measure(tr.model, src, out, explained))}
    return alternate_settings(Decoder, "prepare", WAYS, works, rounds, outputs)


def main() -> None:
    compare_on_models(__doc__, MODELS, 192, compare)


if __name__ == "__main__":
    main()
