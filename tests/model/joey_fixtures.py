"""Tiny Joey NMT models trained by Joey's own training entry point, for the adapter tests.

Needs PyYAML and joeynmt (the ``joey`` extra); importers skip without them."""
from __future__ import annotations

import copy
import shutil
from pathlib import Path

import numpy as np
import torch
import yaml

from model.foreign.joey.joey import swap_specials
from model.corpus.vocab import EOS
from tests.conftest import make_pairs

# Two settings far apart: GRU + Bahdanau without input feeding, and a 2-layer LSTM + Luong with it.
SETTINGS = {
    "gru-bahdanau": {"rnn_type": "gru", "attention": "bahdanau", "input_feeding": False, "init_hidden": "bridge",
                     "layers": 1, "emb": (16, 14), "hidden": (24, 22)},
    "lstm-luong": {"rnn_type": "lstm", "attention": "luong", "input_feeding": True, "init_hidden": "zero",
                   "layers": 2, "emb": (12, 10), "hidden": (18, 20)},
    # s_0 copied from the encoder ("last": 2 x 11 encoder units = 22 decoder units)
    "gru-luong-last": {"rnn_type": "gru", "attention": "luong", "input_feeding": True, "init_hidden": "last",
                       "layers": 1, "emb": (9, 13), "hidden": (11, 22)},
}
# Transformers: pre-norm with a tied output layer, and post-norm untied; heads, layers and
# widths all different (d_model 12 = 3 x 4 = 4 x 3)
TRANSFORMERS = {
    "transformer-pre": {"layers": (2, 3), "heads": (3, 4), "ff": (20, 28), "layer_norm": "pre", "tied_softmax": True},
    "transformer-post": {"layers": (3, 2), "heads": (4, 3), "ff": (28, 20), "layer_norm": "post", "tied_softmax": False},
}


def _transformer_model(name: str) -> dict:
    t = TRANSFORMERS[name]
    part = lambda i: {"type": "transformer", "num_layers": t["layers"][i], "num_heads": t["heads"][i],  # noqa: E731
                      "hidden_size": 12, "ff_size": t["ff"][i], "dropout": 0.1, "layer_norm": t["layer_norm"],
                      "embeddings": {"embedding_dim": 12, "scale": True}}
    return {"initializer": "xavier_uniform", "bias_initializer": "zeros", "tied_softmax": t["tied_softmax"],
            "encoder": part(0), "decoder": part(1)}


def joey_config(folder: Path, name: str, epochs: int = 8, tokens: dict | None = None) -> dict:
    """``tokens``: the data sides' tokenization (default: whole words)."""
    s = SETTINGS.get(name)
    side = {"level": "word", "lowercase": False, "max_length": 30, "voc_min_freq": 1, "voc_limit": 100,
            "tokenizer_type": "none"} if tokens is None else dict(tokens, max_length=60, voc_min_freq=1, voc_limit=300)
    return {
        "name": name, "model_dir": str(folder / "model"),
        "data": {"train": str(folder / "train"), "dev": str(folder / "dev"), "dataset_type": "plain",
                 "src": dict(side, lang="en"), "trg": dict(side, lang="fr")},
        "training": {"random_seed": 3, "optimizer": "adam", "scheduling": "exponential", "decrease_factor": 1.0, "learning_rate": 0.01,
                     "batch_size": 20, "batch_type": "sentence", "eval_batch_size": 20, "epochs": epochs,
                     "validation_freq": 120, "logging_freq": 30, "model_dir": str(folder / "model"),
                     "overwrite": True, "shuffle": True, "use_cuda": False, "print_valid_sents": [],
                     "keep_best_ckpts": 1, "eval_metric": ["bleu"]},
        "testing": {"beam_size": 1, "max_output_length": 30},
        "model": _transformer_model(name) if name in TRANSFORMERS else {
            "initializer": "xavier_uniform", "bias_initializer": "zeros",
            "encoder": {"type": "recurrent", "rnn_type": s["rnn_type"], "embeddings": {"embedding_dim": s["emb"][0]},
                        "hidden_size": s["hidden"][0], "bidirectional": True, "num_layers": s["layers"]},
            "decoder": {"type": "recurrent", "rnn_type": s["rnn_type"], "embeddings": {"embedding_dim": s["emb"][1]},
                        "hidden_size": s["hidden"][1], "attention": s["attention"],
                        "input_feeding": s["input_feeding"], "init_hidden": s["init_hidden"],
                        "num_layers": s["layers"]},
        },
    }


def write_corpus(folder: Path) -> None:
    """The fixture task's train and dev files, as Joey's plain datasets read them."""
    folder.mkdir(parents=True, exist_ok=True)
    for split, n, seed in (("train", 600, 1), ("dev", 20, 2)):
        pairs = make_pairs(n, seed)
        (folder / f"{split}.en").write_text("\n".join(p[0] for p in pairs) + "\n")
        (folder / f"{split}.fr").write_text("\n".join(p[1] for p in pairs) + "\n")


def train_joey(folder: Path, name: str, tokens: dict | None = None, epochs: int = 8) -> Path:
    """Train one tiny Joey model with ``joeynmt.training.train`` (what ``python -m joeynmt train``
    runs) and return its model folder, with config.yaml copied in as Joey's CLI does. Joey keeps
    the checkpoint of a validation round (every 120 updates, 4 epochs)."""
    from joeynmt.helpers import make_model_dir
    from joeynmt.training import train

    write_corpus(folder)
    cfg = joey_config(folder, name, epochs, tokens)
    if tokens is not None:  # each side reads its own tokenizer file
        for side, lang in (("src", "en"), ("trg", "fr")):
            cfg["data"][side]["tokenizer_cfg"] = {k: v.format(lang=lang) for k, v in tokens["tokenizer_cfg"].items()}
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    model_dir = Path(cfg["training"]["model_dir"])
    make_model_dir(model_dir, overwrite=True)
    shutil.copy(folder / "config.yaml", model_dir / "config.yaml")
    train(rank=0, world_size=None, cfg=copy.deepcopy(cfg), skip_test=True)
    return model_dir


def joey_testing(joey_dir: Path):
    """The "testing" settings of a Joey model folder's config.yaml as Joey itself parses them
    (``joeynmt.config.parse_test_args``: its defaults where a setting is absent)."""
    from joeynmt.config import parse_test_args

    cfg = yaml.safe_load((Path(joey_dir) / "config.yaml").read_text())
    return parse_test_args(cfg.get("testing") or {})


def joey_decode(joey, src_ids: list[int], beam: int, testing, alpha: float = -1) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Joey's own search (``joeynmt.search.search``: its output length cap, minimum length and
    greedy or beam search, length penalty ``alpha``, -1 none) on one sentence given in this project's ids:
    (output ids in this project's ids, ending with </s> where Joey emitted it; Joey's scores:
    per token (greedy) or of the sentence (beam); Joey's attention (greedy), else None).
    ``testing``: Joey's parsed "testing" settings (``joey_testing``)."""
    from joeynmt.batch import Batch
    from joeynmt.search import search

    src = swap_specials(joey.src_embed.lut.num_embeddings)[torch.tensor([src_ids])]
    batch = Batch(src, torch.tensor([len(src_ids)]), None, None, None, torch.tensor([0]), torch.device("cpu"),
                  pad_index=joey.pad_index, eos_index=joey.eos_index, is_train=False)
    with torch.no_grad():
        out, scores, att = search(joey, batch, testing.max_output_length, beam, beam_alpha=alpha, n_best=1,
                                  min_output_length=testing.min_output_length, return_prob="hyp",
                                  return_attention=True)
    ids = swap_specials(joey.decoder.output_layer.out_features)[torch.as_tensor(out[0]).long()].tolist()
    return (ids[:ids.index(EOS) + 1] if EOS in ids else ids), scores, att
