"""What sharing a sentence's encoder state among its beam hypotheses saves, in one process.

    python bench/beam_memory.py [--threads 2] [--rounds 6] [--sentences 256] [--models everyday-transformer-en-fr]

A beam search keeps k hypotheses of every sentence. The shipped models' ``beam_memory``
(``EncoderState.for_beams``) lets the k read their sentence's annotations, keys and precomputed
C h_j rows once (a sentence's k attention queries and k context sums each one batched product),
and dropping a finished sentence copies one row of them instead of k; the Transformer's
(``TransformerMemory.for_beams``) does the same with every decoder layer's cross-attention keys
and values (a sentence's k queries read them as one row of k queries). The other way, the
decoding interface's default (``Decodable.beam_memory``), copies each sentence's state k times
before the search and again whenever sentences leave the batch. Both ways run here in the same
process, alternating round by round (``bench.common.alternate``).

With the shipped everyday English-French models (``--models``: some of them):
- an interactive decode: one 27-word sentence, beam 5, full traces (the median of 5 a round);
- a batch decode: the first ``--sentences`` test_2016_flickr captions, beam 5, 64 a batch, no
  traces (the command line's work), and whether both ways wrote the same outputs;
- the same captions traced, 32 a batch (the Evaluate page's work).
Each figure is the median over ``--rounds`` rounds. Prints one JSON object per model.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import alternate_settings, compare_on_models, seconds  # noqa: E402
from bench.decode_speed import decode_works  # noqa: E402
from model.core.decodable import Decodable  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402

MODELS = ("everyday-rnnsearch-en-fr", "everyday-rnnencdec-en-fr", "everyday-transformer-en-fr")


def compare(tr: Translator, captions: list[str], rounds: int) -> dict:
    outputs: dict = {}  # way -> the batch decode's translations
    traced = SearchConfig(beam=5, trace=True)
    works = {**decode_works(tr, captions, outputs),
             "traced_batch_decode": lambda way: seconds(lambda: tr.translate(captions, traced, batch_size=32))}
    owner = type(tr.model)  # NMTModel or TransformerModel: the class whose beam_memory each way sets
    ways = {"shared": owner.beam_memory, "copied": Decodable.beam_memory}
    return alternate_settings(owner, "beam_memory", ways, works, rounds, outputs)


def main() -> None:
    compare_on_models(__doc__, MODELS, 256, compare)


if __name__ == "__main__":
    main()
