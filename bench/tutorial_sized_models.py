"""Two imported tutorial models of the shipped models' size, for timing the app with them.

    python bench/tutorial_sized_models.py OUT_DIR
    python bench/page_speed.py --checkpoints OUT_DIR      # beside the same command on checkpoints/

Writes ``OUT_DIR/tutorial-a`` and ``OUT_DIR/tutorial-b``: bentrevett's network with 256-unit
embeddings and GRUs (the notebook's GRUs have 512 units; 256 brings the parameter count near the
shipped RNNsearch's)
with word vocabularies of Multi30k's English and French training text (words seen twice), its
weights drawn as the notebook initialises them (normal, standard deviation 0.01), saved as a
student saves them and imported with ``import-tutorial bentrevett --langs en-fr``. Untrained:
only their speed matters here, and an untrained model runs to its 25-token cap, about the
length of the shipped models' outputs for the page benchmark's 22-30-word captions.
"""
from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import corpus  # noqa: E402
from model.foreign.tutorials.family import import_tutorial  # noqa: E402
from model.foreign.tutorials import bentrevett  # noqa: E402
from model.foreign.tutorials.tutorials import KINDS  # noqa: E402

SIZES = {"embedding": 256, "tgt_embedding": 256, "encoder_hidden": 256, "decoder_hidden": 256}
SPECIALS = ["<unk>", "<pad>", "<sos>", "<eos>"]


def words(lines: list[str], lang: str) -> list[str]:
    counts = Counter(t for line in lines for t in bentrevett.target_tokens(line, lang))
    return SPECIALS + sorted(w for w, n in counts.items() if n >= 2 and w not in SPECIALS)


def main() -> None:
    out = Path(sys.argv[1])
    english, french, _ = corpus("train")
    vocab = {"source": words(english, "en"), "target": words(french, "fr")}
    sizes = dict(SIZES, src_vocab=len(vocab["source"]), tgt_vocab=len(vocab["target"]))
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "vocab.json").write_text(json.dumps(vocab))
        for name, seed in (("tutorial-a", 1), ("tutorial-b", 2)):
            torch.manual_seed(seed)
            model = KINDS["bentrevett"].build(sizes, bentrevett.vocabularies(vocab["source"], vocab["target"], tmp))
            for param_name, param in model.named_parameters():
                torch.nn.init.normal_(param, 0, 0.01) if "weight" in param_name else torch.nn.init.zeros_(param)
            torch.save(model.state_dict(), Path(tmp) / "tut3-model.pt")
            folder = import_tutorial("bentrevett", Path(tmp) / "tut3-model.pt", Path(tmp) / "vocab.json", out / name,
                                     ("en", "fr"))
            parameters = sum(p.numel() for p in model.parameters())
            print(json.dumps({"wrote": str(folder), "parameters": parameters, **sizes}))


if __name__ == "__main__":
    main()
