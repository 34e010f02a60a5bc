"""How a Transformer's shape sets its decoding cost beside RNNsearch's, at about the same size.

    python bench/transformer_shapes.py [--rounds 5] [--threads 1]

Random-weight Transformers of 11-11.5M parameters (6,000-piece vocabularies, d_model 256) in
several encoder + decoder layer splits, and the shipped RNNsearch, each run 33 decoder steps on
beam 5 for one 31-piece source (a 27-word sentence's interactive decode) and 18 steps on 64
sentences x beam 5 (a command-line batch), argmax-fed so every model does the same work. Models
take turns round by round (``bench.common.alternate``); prints one JSON line per shape with the
median milliseconds and the ratio to RNNsearch's. The encoder runs once per sentence, the decoder
once per output word and beam row: the split decides the decoding cost.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import CHECKPOINTS, alternate  # noqa: E402
from model.checkpoints.folder import load_checkpoint  # noqa: E402
from model.core.config import ModelConfig  # noqa: E402
from model.network.architectures import build_model  # noqa: E402

SHAPES = {  # name: (encoder layers, decoder layers, heads, feed-forward units)
    "4+4 ff1280": (4, 4, 4, 1280),
    "5+3 ff1280": (5, 3, 8, 1280),
    "6+3 ff1024": (6, 3, 8, 1024),
    "6+2 ff1280": (6, 2, 8, 1280),
}


@torch.inference_mode()
def decode_steps(model, sentences: int, source: int, steps: int, beam: int = 5) -> float:
    """Seconds for ``steps`` decoder steps of ``sentences`` x ``beam`` rows, argmax-fed."""
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(4, 6000, (sentences, source), generator=generator)
    memory = model.beam_memory(model.encode(src, torch.full((sentences,), source)), beam)
    state, y = model.init_state(memory), torch.full((sentences * beam,), 2)
    start = time.perf_counter()
    for _ in range(steps):
        out = model.step(y, state, memory)
        state, y = out.state, out.logprobs.argmax(-1)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    models = {"rnnsearch (shipped)": load_checkpoint(CHECKPOINTS / "everyday-rnnsearch-en-fr")[0]}
    for name, (enc, dec, heads, ff) in SHAPES.items():
        torch.manual_seed(0)
        models[name] = build_model(ModelConfig(arch="transformer", src_vocab_size=6000, tgt_vocab_size=6000,
                                               emb_dim=256, enc_layers=enc, dec_layers=dec, heads=heads, ff_dim=ff,
                                               dropout=0.0)).eval()
    works = {"interactive": lambda name: decode_steps(models[name], 1, 31, 33),
             "batch": lambda name: decode_steps(models[name], 64, 16, 18)}
    found = alternate({name: lambda: None for name in models}, works, args.rounds)
    base = "rnnsearch (shipped)"
    for name, model in models.items():
        print(json.dumps({"model": name, "parameters": model.num_parameters(), "threads": args.threads,
                          "rounds": args.rounds,
                          "interactive_33_steps_beam5_ms": round(found["interactive"][name] * 1000, 1),
                          "batch_64x5_18_steps_ms": round(found["batch"][name] * 1000, 1),
                          "interactive_vs_rnnsearch": round(found["interactive"][name] / found["interactive"][base], 2),
                          "batch_vs_rnnsearch": round(found["batch"][name] / found["batch"][base], 2)}), flush=True)


if __name__ == "__main__":
    main()
