"""How much of the layer-wise methods' alignment error comes from following the source through the
encoder: ALTI+, value zeroing and rollout scored against gold word alignments twice, as shipped
(composed through every encoder layer, model/explaining/contributions.py) and with the encoder's
mixing left out (each encoder output counted as its own source word, R_enc = I).

    python bench/through_encoder.py --gold ../shared/data/alignments/golden100 \\
        [--checkpoint checkpoints/everyday-transformer-en-fr]

Prints ``python -m model.align``'s table for each way. ``--own-share SENTENCE`` prints instead,
for that sentence translated by the model, how much of each source word's share each encoder
layer keeps on the word itself (the mean of each block's diagonal) and what is left after all of
them, by method.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from model import align  # noqa: E402
from model.corpus.vocab import BOS  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from model.explaining import contributions  # noqa: E402

METHODS = "alti_plus,value_zeroing,rollout"


@torch.inference_mode()
def own_share(checkpoint: str, sentence: str) -> None:
    translator = Translator.from_checkpoint(checkpoint)
    trace = translator.translate([sentence])[0]
    anatomy = translator.model.anatomy(torch.tensor(trace.source_ids), torch.tensor([BOS, *trace.target_ids[:-1]]))
    for name, matrix in contributions.MATRICES.items():
        kept, composed = [], torch.eye(len(trace.source_ids))
        for block in anatomy.encoder:
            mixing = matrix(block)
            kept.append(float(torch.diagonal(mixing).mean()))
            composed = mixing @ composed
        print(f"{name}: own share per encoder layer " + ", ".join(f"{k:.2f}" for k in kept)
              + f"; after all {len(kept)}: {float(torch.diagonal(composed).mean()):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", help="the gold set's path without .en/.fr/.wa")
    parser.add_argument("--checkpoint", default="checkpoints/everyday-transformer-en-fr")
    parser.add_argument("--own-share", metavar="SENTENCE", help="the encoder's own shares for this sentence instead")
    args = parser.parse_args()
    if args.own_share:
        own_share(args.checkpoint, args.own_share)
        return
    if not args.gold:
        parser.error("--gold or --own-share")
    files = ["--src", f"{args.gold}.en", "--tgt", f"{args.gold}.fr", "--gold", f"{args.gold}.wa"]
    command = [*files, "--checkpoint", args.checkpoint, "--methods", METHODS, "--extractions", "target"]
    print("composed through the encoder (as shipped):")
    align.main(command)
    shipped = contributions.compose
    contributions.compose = lambda anatomy, matrix: shipped(dataclasses.replace(anatomy, encoder=()), matrix)
    try:
        print("the encoder's mixing left out:")
        align.main(command)
    finally:
        contributions.compose = shipped


if __name__ == "__main__":
    main()
