"""Tutorial models through this project against the tutorials' own decoding, token for token.

    python bench/tutorial_parity.py --bentrevett-notebook "PATH/3 - Neural Machine Translation by Jointly Learning to Align and Translate.ipynb" \\
        [--pairs 6000] [--epochs 2] [--sentences 200]
    python bench/tutorial_parity.py --fixtures [--sentences 200]

``--bentrevett-notebook``: the notebook of bentrevett/pytorch-seq2seq on this paper, as you
downloaded it (nothing of it is in this repository). Its own code cells run here: the
``Encoder``, ``Attention``, ``Decoder`` and ``Seq2Seq`` classes, ``init_weights``,
``train_fn`` (teacher forcing ratio 0.5, Adam, clip 1.0) and ``translate_sentence``. The model
is trained on the first ``--pairs`` German-English pairs of Multi30k (``$NMT_SHARED_DATA/multi30k``)
with smaller sizes than the notebook's (128-unit embeddings, 256-unit GRUs) so that it trains on
a CPU, saved as docs/own-model.md tells a student to, imported with ``import_tutorial``, and
both decode the first ``--sentences`` raw sentences of test_2016_flickr: the notebook with its
``translate_sentence``, this project with ``Translator.translate`` at beam 1. Two stand-ins are
unavoidable offline and are the same on both sides: spaCy's blank German and English tokenizer
rules for ``spacy.load("de_core_news_sm")`` (its rules are the language's; pip install spacy)
and a small class for torchtext's vocabulary (``build_vocab_from_iterator``'s order: specials,
then words by falling frequency, ties alphabetical).

``--d2l-package DIR --d2l-decoder FILE``: d2l's own code: the ``d2l`` package (a folder holding it,
e.g. the unpacked wheel of ``pip download --no-deps d2l``; torchvision, which d2l imports but this
chapter does not use, is stubbed where it does not import) and the chapter's ``%%tab pytorch``
block defining ``Seq2SeqAttentionDecoder``, saved as FILE. The chapter's recipe runs as written
(``MTFraEng(batch_size=128)``: num_steps 9, 512 training pairs; 256-unit embeddings and GRUs, 2
layers, dropout 0.2; ``Trainer(max_epochs=30, gradient_clip_val=1)``), with the English-French
pairs read from Tatoeba (``$NMT_SHARED_DATA/tatoeba/eng-fra.tsv.gz``, the corpus d2l downloads,
in its order) instead of d2l's download; then ``predict_step`` and the chapter's loop that stops
at <eos> on ``--sentences`` raw English sentences that follow the training pairs.

``--fixtures``: the committed tiny models of all three tutorials (tests/fixtures/tutorials)
against the reference loops written from the tutorials' descriptions
(tests/model/tutorial_references.py), on ``--sentences`` toy sentences.

Prints one JSON line per model: sentences, identical outputs (token for token, the end token
included), the share identical, and the largest attention difference over identical outputs.
"""
from __future__ import annotations

import argparse
import ast
import gzip
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import SHARED  # noqa: E402
from model.checkpoints.imports import import_tutorial  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402

NOTEBOOK_NAMES = ("Encoder", "Attention", "Decoder", "Seq2Seq", "init_weights", "train_fn", "translate_sentence")
SIZES = {"embedding": 128, "hidden": 256, "dropout": 0.5}


def notebook_definitions(path: Path) -> dict:
    """The notebook's own classes and functions named NOTEBOOK_NAMES, run from its code cells."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    tree = ast.parse(source)
    kept = [node for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in NOTEBOOK_NAMES]
    missing = set(NOTEBOOK_NAMES) - {n.name for n in kept}
    if missing:
        raise SystemExit(f"{path}: no {', '.join(sorted(missing))}; is this the notebook on this paper?")
    namespace = {"torch": torch, "nn": torch.nn, "random": random, "np": np}
    exec(compile(ast.Module(body=kept, type_ignores=[]), str(path), "exec"), namespace)  # noqa: S102 (the user's file)
    return namespace


class Vocab:
    """The part of torchtext's Vocab the notebook uses."""

    def __init__(self, sentences, specials, min_freq=2):
        counts = Counter(t for s in sentences for t in s if t not in specials)
        ordered = sorted(counts.items(), key=lambda kv: kv[0])
        ordered.sort(key=lambda kv: kv[1], reverse=True)
        self.itos = list(specials) + [w for w, n in ordered if n >= min_freq]
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.default = None

    def __len__(self):
        return len(self.itos)

    def __getitem__(self, token):
        return self.stoi.get(token, self.default)

    def set_default_index(self, index):
        self.default = index

    def lookup_indices(self, tokens):
        return [self[t] for t in tokens]

    def lookup_tokens(self, ids):
        return [self.itos[i] for i in ids]

    def get_itos(self):
        return list(self.itos)


class Tokenizer:
    """``nlp.tokenizer(text)`` for the notebook: spaCy's blank pipeline's tokenizer rules."""

    def __init__(self, lang):
        import spacy

        self.tokenizer = spacy.blank(lang).tokenizer


def read_gz(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


def bentrevett(notebook: Path, pairs: int, epochs: int, n: int, out: Path) -> dict:
    ns = notebook_definitions(notebook)
    de_nlp, en_nlp = Tokenizer("de"), Tokenizer("en")
    train_de, train_en = read_gz(SHARED / "train.de.gz")[:pairs], read_gz(SHARED / "train.en.gz")[:pairs]
    specials = ["<unk>", "<pad>", "<sos>", "<eos>"]

    def tokens(nlp, text):
        return ["<sos>"] + [t.text.lower() for t in nlp.tokenizer(text)] + ["<eos>"]

    de_tok, en_tok = [tokens(de_nlp, s) for s in train_de], [tokens(en_nlp, s) for s in train_en]
    de_vocab, en_vocab = Vocab(de_tok, specials), Vocab(en_tok, specials)
    de_vocab.set_default_index(0)
    en_vocab.set_default_index(0)
    torch.manual_seed(1234)
    random.seed(1234)
    attention = ns["Attention"](SIZES["hidden"], SIZES["hidden"])
    model = ns["Seq2Seq"](ns["Encoder"](len(de_vocab), SIZES["embedding"], SIZES["hidden"], SIZES["hidden"], SIZES["dropout"]),
                          ns["Decoder"](len(en_vocab), SIZES["embedding"], SIZES["hidden"], SIZES["hidden"],
                                        SIZES["dropout"], attention), "cpu")
    model.apply(ns["init_weights"])
    order = sorted(range(pairs), key=lambda i: len(de_tok[i]))  # batches of similar lengths: less padding to train on
    batches = [order[i:i + 128] for i in range(0, pairs, 128)]
    pad = torch.nn.utils.rnn.pad_sequence
    loader = lambda: [{"de_ids": pad([torch.tensor(de_vocab.lookup_indices(de_tok[i])) for i in b], padding_value=1),  # noqa: E731
                       "en_ids": pad([torch.tensor(en_vocab.lookup_indices(en_tok[i])) for i in b], padding_value=1)}
                      for b in random.sample(batches, len(batches))]
    optimizer, criterion = torch.optim.Adam(model.parameters()), torch.nn.CrossEntropyLoss(ignore_index=1)
    start = time.perf_counter()
    for _ in range(epochs):
        ns["train_fn"](model, loader(), optimizer, criterion, 1.0, 0.5, "cpu")
    trained = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out / "tut3-model.pt")  # the notebook's own save; then the contract's vocab.json
    json.dump({"source": de_vocab.get_itos(), "target": en_vocab.get_itos()}, open(out / "vocab.json", "w"))
    start = time.perf_counter()
    folder = import_tutorial("bentrevett", out / "tut3-model.pt", out / "vocab.json", out / "imported")
    imported_in = time.perf_counter() - start
    sentences = read_gz(SHARED / "test_2016_flickr.de.gz")[:n]
    model.eval()
    theirs = [ns["translate_sentence"](s, model, en_nlp, de_nlp, en_vocab, de_vocab, True, "<sos>", "<eos>", "cpu")
              for s in sentences]
    ours = Translator.from_checkpoint(folder).translate(sentences, SearchConfig(beam=1, trace=True))
    same, worst = 0, 0.0
    for (tokens_, _, attention_), trace in zip(theirs, ours):
        expected = ["</s>" if t == "<eos>" else t for t in tokens_[1:]]
        if expected == trace.target_tokens:
            same += 1
            worst = max(worst, float(np.abs(attention_[:, 0].numpy() - trace.attention).max()))
    return {"model": "bentrevett notebook 3, trained here with its own code", "pairs": pairs, "epochs": epochs,
            "train_seconds": round(trained, 1), "import_seconds": round(imported_in, 2), "sentences": n,
            "identical": same, "share": round(same / n, 4), "max_attention_difference": worst}


def d2l_own(package: Path, decoder_file: Path, n: int, out: Path) -> dict:
    import types

    sys.path.insert(0, str(package))
    try:
        import torchvision  # noqa: F401
    except Exception:  # d2l imports it for its vision chapters; this one does not use it
        stub = types.ModuleType("torchvision")
        stub.transforms = types.ModuleType("torchvision.transforms")
        sys.modules.update({"torchvision": stub, "torchvision.transforms": stub.transforms})
    from d2l import torch as d2l

    namespace: dict = {}
    exec(compile(decoder_file.read_text(encoding="utf-8"), str(decoder_file), "exec"), namespace)  # noqa: S102 (the user's file)
    pairs = gzip.decompress((SHARED.parent / "tatoeba" / "eng-fra.tsv.gz").read_bytes()).decode("utf-8").splitlines()

    class Tatoeba(d2l.MTFraEng):
        def _download(self):
            return "\n".join(pairs)

    torch.manual_seed(0)
    data = Tatoeba(batch_size=128)
    embed_size, num_hiddens, num_layers, dropout = 256, 256, 2, 0.2
    encoder = d2l.Seq2SeqEncoder(len(data.src_vocab), embed_size, num_hiddens, num_layers, dropout)
    decoder = namespace["Seq2SeqAttentionDecoder"](len(data.tgt_vocab), embed_size, num_hiddens, num_layers, dropout)
    model = d2l.Seq2Seq(encoder, decoder, tgt_pad=data.tgt_vocab["<pad>"], lr=0.005)
    model.board.display = False
    start = time.perf_counter()
    d2l.Trainer(max_epochs=30, gradient_clip_val=1, num_gpus=0).fit(model, data)
    trained = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out / "model.pt")  # the contract
    json.dump({"source": data.src_vocab.idx_to_token, "target": data.tgt_vocab.idx_to_token,
               "num_steps": data.num_steps}, open(out / "vocab.json", "w"))
    folder = import_tutorial("d2l", out / "model.pt", out / "vocab.json", out / "imported")
    held_out = [line.split("\t") for line in pairs[data.num_train + data.num_val:] if line.count("\t") == 1][:n]
    engs, fras = [e for e, _ in held_out], [f for _, f in held_out]
    model.eval()
    with torch.no_grad():
        preds, attention = model.predict_step(data.build(engs, fras), d2l.cpu(), data.num_steps, True)
    ours = Translator.from_checkpoint(folder).translate(engs, SearchConfig(beam=1, trace=True))
    same, worst = 0, 0.0
    for row, (p, trace) in enumerate(zip(preds, ours)):
        tokens = []
        for token in data.tgt_vocab.to_tokens(p):  # the chapter's loop
            if token == "<eos>":
                tokens.append("</s>")  # where its decode ended, as a trace marks it
                break
            tokens.append(token)
        if tokens == trace.target_tokens:
            same += 1
            theirs = np.stack([attention[t][0][row, 0].numpy() for t in range(len(tokens))])
            worst = max(worst, float(np.abs(theirs - trace.attention).max()))
    return {"model": "d2l chapter, trained here with its own code", "train_seconds": round(trained, 1),
            "sentences": n, "identical": same, "share": round(same / n, 4), "max_attention_difference": worst}


def fixtures(n: int) -> list[dict]:
    from tests.model import test_tutorials as t

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in t.WEIGHTS:
            start = time.perf_counter()
            folder = import_tutorial(kind, *t.files(kind), Path(tmp) / kind)
            imported_in = time.perf_counter() - start
            reference, texts = t.REFERENCES[kind](), t.sentences(kind, n)
            traces = Translator.from_checkpoint(folder).translate(texts, SearchConfig(beam=1, trace=True))
            same, worst = 0, 0.0
            for text, trace in zip(texts, traces):
                tokens, attention = t.tutorial_tokens(kind, reference, text)
                if tokens == trace.target_tokens:
                    same += 1
                    worst = max(worst, float(np.abs(attention.numpy() - trace.attention).max()))
            rows.append({"model": f"{kind} fixture against the reference loop", "import_seconds": round(imported_in, 3),
                         "sentences": n, "identical": same, "share": round(same / n, 4),
                         "max_attention_difference": worst})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bentrevett-notebook", type=Path)
    parser.add_argument("--fixtures", action="store_true")
    parser.add_argument("--d2l-package", type=Path)
    parser.add_argument("--d2l-decoder", type=Path)
    parser.add_argument("--pairs", type=int, default=6000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.fixtures:
        for row in fixtures(args.sentences):
            print(json.dumps(row))
    if args.d2l_package and args.d2l_decoder:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(d2l_own(args.d2l_package, args.d2l_decoder, args.sentences, Path(tmp))))
    if args.bentrevett_notebook:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(bentrevett(args.bentrevett_notebook, args.pairs, args.epochs, args.sentences, Path(tmp))))


if __name__ == "__main__":
    main()
