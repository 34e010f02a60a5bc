"""How much of the layer-wise methods' alignment error comes from following the source through the
encoder: ALTI+, value zeroing and rollout scored against gold word alignments twice, as shipped
(composed through every encoder layer, model/explaining/contributions.py) and with the encoder's
mixing left out (each encoder output counted as its own source word, R_enc = I).

    python bench/through_encoder.py --gold ../shared/data/alignments/golden100 \\
        [--checkpoint checkpoints/everyday-transformer-en-fr]

Prints ``python -m model.align``'s table for each way.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model import align  # noqa: E402
from model.explaining import contributions  # noqa: E402

METHODS = "alti_plus,value_zeroing,rollout"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", required=True, help="the gold set's path without .en/.fr/.wa")
    parser.add_argument("--checkpoint", default="checkpoints/everyday-transformer-en-fr")
    args = parser.parse_args()
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
