"""Joey NMT models through this project against Joey's own decoding, output for output.

    python bench/joey_parity.py [--joey-dir JOEY_MODEL_DIR ...] [--multi30k DATA_DIR] [--sentences N]

Models: each ``--joey-dir``; with ``--multi30k`` (a folder of Multi30k's gzipped files), a GRU +
Bahdanau model trained here with Joey's own training function (800 updates on the first 3,000
English-French training pairs, 1,000-piece SentencePiece vocabularies; MULTI30K below), twice:
with its config's ``testing.max_output_length`` 30 and with that setting absent (Joey's
default, 1.5 x the source length), decoding the first N test_2016_flickr sentences; with
neither option, the tiny models of tests/model/joey_fixtures.py on N sentences of their task.

Each model is imported (``model.checkpoints.folder.import_joey``) and decoded greedily and with
beam 5 (no length penalty: Joey's default beam_alpha -1), then compared with

- ``search``: Joey's search on the same weights (``joeynmt.search.search``: its length cap and
  minimum from the model's testing settings), one sentence at a time: output ids;
- ``translate``: Joey's translate path (``joeynmt.prediction.translate``, what ``python -m
  joeynmt translate CONFIG < input`` runs) with the model's config, beam_size set: output text.
  When the cap is Joey's default, Joey computes it from the longest source of each batch
  (testing.batch_size sentences, 64 by default), so this runs twice: ``translate`` with the
  config's batches and ``translate-alone`` with one sentence per batch (Joey's interactive mode).

``identical`` counts outputs equal to Joey's with the model's own length limits (what an import
decodes with); ``identical_search_cap`` with the search settings' cap instead (2 x source + 10,
ending with </s>: what imports decoded with before they carried Joey's limits); ``joey_at_cap``
counts Joey outputs that stopped at the cap without </s>. One JSON line per model, beam and
comparison; ``search`` lines add the largest per-token log-probability and attention
differences (greedy) or sentence log-probability difference (beam) over identical outputs.
"""
from __future__ import annotations

import argparse
import copy
import gzip
import io
import json
import shutil
import sys
import tempfile
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

import numpy as np
import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.checkpoints.imports import import_joey  # noqa: E402
from model.foreign.joey.joey import JoeyModel, quiet_joey_logs  # noqa: E402
from model.corpus.vocab import EOS  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from tests.conftest import make_pairs  # noqa: E402
from tests.model.joey_fixtures import SETTINGS, joey_decode, joey_testing, train_joey  # noqa: E402

BEAMS = (1, 5)
# The Multi30k model: Joey's own training on a slice of Multi30k, small enough for a CPU.
MULTI30K = {"pairs": 3000, "updates": 800, "pieces": 1000, "dev": 100, "embedding": 128, "hidden": 256,
            "max_output_length": 30}


class SearchCap(JoeyModel):
    """An imported model decoded with the search settings' cap (ending with </s>) instead of
    Joey's limits: what imports decoded with before they carried them."""

    output_length = None


def search_cap(translator: Translator) -> Translator:
    model = copy.copy(translator.model)  # shares the weights
    model.__class__ = SearchCap
    return Translator(model, translator.src_vocab, translator.tgt_vocab, translator.name)


@contextmanager
def sentencepiece_for_joey():
    """Joey 2.3 calls SentencePieceProcessor.SetVocabulary, which sentencepiece 0.2.1 and later
    lack; while Joey runs it gets a no-op one, so Joey segments as the import does
    (model/foreign/joey/joey.py ``_set_vocab``)."""
    import sentencepiece

    cls = sentencepiece.SentencePieceProcessor
    added = not hasattr(cls, "SetVocabulary")
    if added:
        cls.SetVocabulary = lambda self, pieces: None
    try:
        yield
    finally:
        if added:
            del cls.SetVocabulary


def joey_translate(joey_dir: Path, sentences: list[str], beam: int, batch_size: int | None) -> list[str]:
    """Joey's translate path on ``sentences`` with the model folder's config, beam_size ``beam``
    and, if given, ``batch_size`` sentences per batch: one output line each."""
    from joeynmt.config import load_config
    from joeynmt.prediction import translate

    cfg = load_config(joey_dir / "config.yaml")
    cfg["model_dir"] = str(joey_dir)
    testing = dict(cfg.get("testing") or {}, beam_size=beam, load_model=str(checkpoint_of(joey_dir)))
    if batch_size is not None:
        testing.update(batch_size=batch_size, batch_type="sentence")
    cfg["testing"] = testing
    cfg.setdefault("training", {})["use_cuda"] = False
    for side in ("src", "trg"):  # the token lists and tokenizer files Joey copied into its model folder
        data = cfg["data"][side]
        data["voc_file"] = str(joey_dir / f"{side}_vocab.txt")
        tok = data.get("tokenizer_cfg") or {}
        for key in ("model_file", "codes"):
            if key in tok:
                tok[key] = str(joey_dir / Path(tok[key]).name)
    stdin, printed = sys.stdin, io.StringIO()
    try:
        sys.stdin = io.StringIO("".join(s + "\n" for s in sentences))
        with sentencepiece_for_joey(), redirect_stdout(printed):
            translate(cfg)  # prints one line per sentence (Joey 2.3's --output-path fails: args.n_best)
    finally:
        sys.stdin = stdin
    quiet_joey_logs()
    return printed.getvalue().splitlines()


def checkpoint_of(joey_dir: Path) -> Path:
    return next(p for p in (joey_dir / "best.ckpt", joey_dir / "latest.ckpt") if p.is_file())


def compare_search(translator: Translator, testing, sentences: list[str], beam: int) -> dict:
    cfg = SearchConfig(beam=beam, length_norm=0.0)
    ours, before = translator.translate(sentences, cfg), search_cap(translator).translate(sentences, cfg)
    same = same_before = at_cap = 0
    logp = alpha = 0.0
    parted = []
    for sentence, trace, old in zip(sentences, ours, before):
        ids, scores, att = joey_decode(translator.model.joey, trace.source_ids, beam, testing)
        at_cap += EOS not in ids
        same_before += old.target_ids == ids
        if ids != trace.target_ids:
            parted.append(sentence)
            continue
        same += 1
        if beam == 1:
            logp = max(logp, float(np.abs(np.array(trace.step_logprobs) - scores[0][:len(ids)]).max()))
            alpha = max(alpha, float(np.abs(trace.attention - att[0][:len(ids)]).max()))
        else:
            logp = max(logp, abs(trace.logprob - float(scores[0][0])))
    return {"identical": same, "identical_search_cap": same_before, "joey_at_cap": at_cap,
            "max_abs_logprob_diff": logp, "max_abs_attention_diff": alpha if beam == 1 else None, "differing": parted}


def compare_translate(translator: Translator, joey_dir: Path, sentences: list[str], beam: int,
                      batch_size: int | None) -> dict:
    cfg = SearchConfig(beam=beam, length_norm=0.0)
    joey = joey_translate(joey_dir, sentences, beam, batch_size)
    ours = [t.translation for t in translator.translate(sentences, cfg)]
    before = [t.translation for t in search_cap(translator).translate(sentences, cfg)]
    return {"identical": sum(a == b for a, b in zip(ours, joey)),
            "identical_search_cap": sum(a == b for a, b in zip(before, joey)),
            "differing": [{"source": s, "ours": a, "joey": b} for s, a, b in zip(sentences, ours, joey) if a != b]}


def train_multi30k(data_dir: Path, folder: Path, sizes: dict = MULTI30K) -> Path:
    """A GRU + Bahdanau model trained by Joey's training function on the first ``sizes["pairs"]``
    English-French pairs of Multi30k (SentencePiece models trained on them first); ``sizes`` as
    MULTI30K."""
    import sentencepiece as spm
    from joeynmt.helpers import make_model_dir
    from joeynmt.training import train

    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", sizes["pairs"]), ("val", sizes["dev"])):
        for lang in ("en", "fr"):
            with gzip.open(data_dir / f"{split}.{lang}.gz", "rt", encoding="utf-8") as handle:
                lines = [next(handle).rstrip("\n") for _ in range(n)]
            (folder / f"{split}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for lang in ("en", "fr"):
        spm.SentencePieceTrainer.train(input=str(folder / f"train.{lang}"), model_prefix=str(folder / f"spm.{lang}"),
                                       vocab_size=sizes["pieces"], model_type="unigram", character_coverage=1.0,
                                       minloglevel=2)
    side = {"level": "bpe", "tokenizer_type": "sentencepiece", "lowercase": False, "max_length": 100,
            "voc_min_freq": 1, "voc_limit": sizes["pieces"] + 4}
    model_dir = folder / "model"
    emb, hidden = {"embedding_dim": sizes["embedding"]}, sizes["hidden"]
    cfg = {
        "name": "multi30k-gru-bahdanau", "model_dir": str(model_dir), "use_cuda": False,
        "data": {"train": str(folder / "train"), "dev": str(folder / "val"), "dataset_type": "plain",
                 "src": dict(side, lang="en", tokenizer_cfg={"model_file": str(folder / "spm.en.model")}),
                 "trg": dict(side, lang="fr", tokenizer_cfg={"model_file": str(folder / "spm.fr.model")})},
        "training": {"random_seed": 42, "optimizer": "adam", "learning_rate": 0.001, "scheduling": "exponential", "decrease_factor": 1.0,
                     "batch_size": 32,
                     "batch_type": "sentence", "epochs": 100, "updates": sizes["updates"],
                     "validation_freq": sizes["updates"], "logging_freq": next(f for f in (100, 50, 20, 10, 5, 2, 1) if f < sizes["updates"] and sizes["updates"] % f == 0), "model_dir": str(model_dir),
                     "overwrite": True, "shuffle": True, "use_cuda": False, "print_valid_sents": [],
                     "keep_best_ckpts": 1, "eval_metrics": ["bleu"]},
        "testing": {"beam_size": 1, "max_output_length": sizes["max_output_length"]},
        "model": {"initializer": "xavier_uniform", "bias_initializer": "zeros",
                  "encoder": {"type": "recurrent", "rnn_type": "gru", "embeddings": emb, "hidden_size": hidden,
                              "bidirectional": True, "num_layers": 1, "dropout": 0.2},
                  "decoder": {"type": "recurrent", "rnn_type": "gru", "embeddings": emb, "hidden_size": hidden,
                              "attention": "bahdanau", "num_layers": 1, "dropout": 0.2, "hidden_dropout": 0.2}},
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    make_model_dir(model_dir, overwrite=True)
    shutil.copy(folder / "config.yaml", model_dir / "config.yaml")
    with sentencepiece_for_joey():
        train(rank=0, world_size=None, cfg=copy.deepcopy(cfg), skip_test=True)
    return model_dir


def with_joey_default_cap(joey_dir: Path, out: Path) -> Path:
    """A copy of a Joey model folder whose config leaves max_output_length to Joey's default."""
    shutil.copytree(joey_dir, out, ignore=shutil.ignore_patterns("tensorboard", "*.log"))
    cfg = yaml.safe_load((out / "config.yaml").read_text())
    cfg.setdefault("testing", {}).pop("max_output_length", None)
    (out / "config.yaml").write_text(yaml.safe_dump(cfg))
    return out


def first_lines(path: Path, n: int) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [next(handle).rstrip("\n") for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--joey-dir", action="append", default=[], help="a trained Joey model folder (repeatable)")
    parser.add_argument("--multi30k", type=Path, help="Multi30k folder (train/val/test_2016_flickr .en/.fr .gz)")
    parser.add_argument("--sentences", type=int, default=40, help="source sentences decoded per model")
    args = parser.parse_args()
    torch.set_num_threads(1)
    import joeynmt.prediction  # noqa: F401 (its loggers exist now, and are quietened)
    import joeynmt.training  # noqa: F401

    quiet_joey_logs()
    work = Path(tempfile.mkdtemp(prefix="joey-parity-"))
    models = [(Path(d), None) for d in args.joey_dir]  # (Joey model folder, sentences: None = the fixture task's)
    if args.multi30k:
        trained = train_multi30k(args.multi30k, work / "multi30k")
        test = first_lines(args.multi30k / "test_2016_flickr.en.gz", args.sentences)
        models += [(trained, test), (with_joey_default_cap(trained, work / "multi30k-joey-default-cap"), test)]
    if not models:
        models = [(train_joey(work / name, name), None) for name in sorted(SETTINGS)]
    fixture_sentences = [p[0] for p in make_pairs(args.sentences, seed=9)]
    for n, (joey_dir, sentences) in enumerate(models):
        sentences = sentences or fixture_sentences
        translator = Translator.from_checkpoint(import_joey(joey_dir, work / f"imported-{n}"))
        testing = joey_testing(joey_dir)
        head = {"model": str(joey_dir), "summary": translator.model.description.summary,
                "max_output_length": testing.max_output_length, "min_output_length": testing.min_output_length,
                "sentences": len(sentences)}
        for beam in BEAMS:
            print(json.dumps({**head, "beam": beam, "against": "search",
                              **compare_search(translator, testing, sentences, beam)}, ensure_ascii=False), flush=True)
            batches = [("translate", None)] + ([("translate-alone", 1)] if testing.max_output_length < 0 else [])
            for against, batch_size in batches:
                print(json.dumps({**head, "beam": beam, "against": against,
                                  **compare_translate(translator, joey_dir, sentences, beam, batch_size)},
                                 ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
