"""Configuration dataclasses and presets.

Every field has a default and a comment saying what it controls. A checkpoint
stores ``ModelConfig`` in ``config.json`` so it can rebuild its own model.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace

from model.core.errors import ConfigError
ARCHS = ("rnnsearch", "rnnencdec", "transformer")
# RNNsearch's alignment models by config name, the default first: the paper's additive one and
# Luong et al.'s variants. model/network/attention.py · ATTENTIONS maps each to its class.
ATTENTION_KINDS = ("additive", "dot", "general", "concat", "location")

# Hard limits checked before any tensor is allocated, so a hostile config.json
# (say, a 10^9-unit layer) is refused instead of exhausting memory: the same for every model read
# from a file, whoever made it (this project, Joey NMT, Hugging Face, the tutorials).
MAX_UNITS = 8192
MAX_VOCAB = 200_000
MAX_PARAMETERS = 400_000_000  # a loader refuses configs that would allocate more (~1.6 GB fp32)
MAX_LAYERS = 64  # layers per stack (encoder or decoder)
MAX_HEADS = 128  # attention heads per layer


@dataclass
class ModelConfig:
    """Architecture of one model (paper Appendix A; names follow the paper)."""

    arch: str = "rnnsearch"  # "rnnsearch" (attention), "rnnencdec" (one fixed context vector) or "transformer"
    src_vocab_size: int = 6000  # source SentencePiece vocabulary size (set from the trained model)
    tgt_vocab_size: int = 6000  # target SentencePiece vocabulary size (set from the trained model)
    emb_dim: int = 256  # m: word embedding size, source and target (the Transformer's d_model)
    hidden: int = 512  # n: GRU units in the decoder and in each encoder direction
    align_dim: int = 512  # n': units of the alignment model's hidden layer
    maxout: int = 256  # l: maxout units in the deep output (t~_i has 2l units)
    dropout: float = 0.3  # dropout on embeddings, annotations and the maxout output (training only)
    attention: str = "additive"  # RNNsearch's alignment model: one of ATTENTION_KINDS
    layer_norm: bool = False  # layer-normalised GRU gates in encoder and decoder (Ba et al. 2016)
    # The Transformer's own sizes (model/network/transformer.py); the RNNs ignore them, and the
    # Transformer ignores hidden, align_dim, maxout, attention and layer_norm.
    enc_layers: int = 6  # encoder layers
    dec_layers: int = 2  # decoder layers, each with its own cross-attention over the source
    heads: int = 8  # attention heads per layer; they must divide emb_dim
    ff_dim: int = 1280  # inner units of each position-wise feed-forward network
    alignment_layer: int = 0  # decoder layer (1..dec_layers; 0: the last) whose heads' mean views show as "the" attention

    def validate(self) -> None:
        """Raise ConfigError on values that are malformed or too large to allocate safely."""
        if self.arch not in ARCHS:
            raise ConfigError(f"arch must be one of {ARCHS}, got {self.arch!r}")
        for name in ("emb_dim", "hidden", "align_dim", "maxout"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 1 <= value <= MAX_UNITS:
                raise ConfigError(f"{name}={value!r} is outside 1..{MAX_UNITS}")
        for name in ("src_vocab_size", "tgt_vocab_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 5 <= value <= MAX_VOCAB:
                raise ConfigError(f"{name}={value!r} is outside 5..{MAX_VOCAB}")
        if self.attention not in ATTENTION_KINDS:
            raise ConfigError(f"attention must be one of {', '.join(ATTENTION_KINDS)}, got {self.attention!r}")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise ConfigError(f"dropout={self.dropout!r} must be in [0, 1)")
        if self.arch == "transformer":
            self._validate_transformer()

    def _validate_transformer(self) -> None:
        for name, most in (("enc_layers", MAX_LAYERS), ("dec_layers", MAX_LAYERS), ("heads", MAX_HEADS),
                           ("ff_dim", 4 * MAX_UNITS)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
                raise ConfigError(f"{name}={value!r} is outside 1..{most}")
        if self.emb_dim % self.heads:
            raise ConfigError(f"heads={self.heads} must divide emb_dim={self.emb_dim} (each head has emb_dim / heads "
                              "units)")
        if not isinstance(self.alignment_layer, int) or not 0 <= self.alignment_layer <= self.dec_layers:
            raise ConfigError(f"alignment_layer={self.alignment_layer!r} is outside 0..{self.dec_layers} (0: the last "
                              "layer)")


@dataclass
class CorpusSpec:
    """One training corpus of a mixture (``TrainConfig.corpora``)."""

    name: str = ""  # label in logs and cards, e.g. "tatoeba" or "multi30k"
    path: str = ""  # a folder of {prefix}.{lang}[.gz] files, or a tab-separated pair file (.tsv / .tsv.gz)
    weight: float = 1.0  # upsampling: an epoch holds weight x this corpus' training pairs (0.5: a random half)
    columns: str = "en-fr"  # pair files only: the languages of their first and second column


@dataclass
class TrainConfig:
    """Everything about data, vocabulary and optimisation for ``python -m model.train``."""

    data_dir: str = "data/multi30k"  # folder with {train,val}.{src,tgt}[.gz] (when corpora is empty); where
    # ``python -m model.data download-multi30k data/multi30k`` writes Multi30k
    corpora: list = field(default_factory=list)  # CorpusSpec list to train on together; empty: data_dir alone
    vocab_dir: str = ""  # reuse src.spm.model / tgt.spm.model from this folder (a pair shares vocabularies)
    src_lang: str = "en"  # source language suffix of the data files
    tgt_lang: str = "fr"  # target language suffix of the data files
    train_prefix: str = "train"  # file stem of the training split
    val_prefix: str = "val"  # file stem of the validation split (model selection)
    out_dir: str = "runs/rnnsearch"  # where best/, last/ and log.jsonl are written
    src_vocab: int = 6000  # requested SentencePiece size, source side
    tgt_vocab: int = 6000  # requested SentencePiece size, target side
    spm_sample_lines: int = 2_000_000  # SentencePiece trains on at most this many sampled lines
    max_corpus_mb: int = 512  # refuse training files larger than this (decompressed), a guard against mistakes
    streaming: bool = False  # read training pairs lazily, pool by pool, for corpora too big for memory
    max_len: int = 80  # pairs with more subword tokens on either side are dropped from training
    join_prob: float = 0.0  # length augmentation: chance an example is 2-4 pairs joined
    join_max: int = 4  # most training pairs joined into one augmented example
    batch_size: int = 80  # training pairs per batch (the paper used 80); a joined example counts its pairs
    pool_batches: int = 20  # batches sorted by length together, as in the paper (Appendix B)
    epochs: int = 15  # maximum number of passes over the training data
    optimizer: str = "adam"  # "adam" or "adadelta" (the paper's: rho 0.95, eps 1e-6)
    lr: float = 1e-3  # learning rate (Adadelta ignores it and uses 1.0)
    lr_decay: float = 0.5  # multiply the learning rate by this after each validation that is not a new best
    clip: float = 1.0  # gradient L2-norm clipping threshold (paper: 1)
    label_smoothing: float = 0.1  # cross-entropy label smoothing (0 disables)
    patience: int = 4  # stop after this many validations without a better validation BLEU
    val_max_sentences: int = 1014  # validation sentences decoded greedily each epoch
    save_every: int = 500  # steps between "last" checkpoints for resuming mid-epoch
    val_every: int = 0  # also validate every this many updates, not only at epoch ends (0: epochs only)
    keep_last: int = 0  # keep the checkpoints of the last this many validations (for weight averaging)
    seed: int = 1  # seeds weights, data order and dropout
    threads: int = 0  # torch intra-op threads (0: leave torch's default)
    bf16: bool = False  # bfloat16 products over whole sentences (NMTModel.forward); for AMX / AVX-512 bf16 CPUs, GPUs
    device: str = "auto"  # "auto" (CUDA when available), "cuda" or "cpu"
    max_steps: int = 0  # stop after this many updates (0: no limit; for smoke runs)
    init_from: str = ""  # continue from this checkpoint folder: its weights, vocabularies, update count and log, a fresh optimizer
    warmup: int = 0  # raise the learning rate linearly over this run's first updates (a fresh Adam on trained weights)
    time_limit_min: float = 0.0  # stop when another epoch would pass this many minutes (0: no limit)
    probes: list = field(default_factory=list)  # sentences decoded at update 0 and every validation (the
    # training replay, model/training/replay.py); empty: the language pair's defaults


@dataclass
class Config:
    """A model and how to train it; what a config file and ``--set`` overrides describe."""

    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Config":
        return cls(model=dataclass_from_dict(ModelConfig, data.get("model", {})),
                   train=dataclass_from_dict(TrainConfig, data.get("train", {})))


def dataclass_from_dict(kind, data: dict):
    """Build dataclass ``kind`` from ``data``, refusing unknown keys and wrong types."""
    if not isinstance(data, dict):
        raise ConfigError(f"{kind.__name__} must be a JSON object, got {type(data).__name__}")
    known = {f.name: f for f in fields(kind)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConfigError(f"unknown {kind.__name__} field(s): {', '.join(unknown)}")
    defaults = kind()
    values = {}
    for name, value in data.items():
        default = getattr(defaults, name)
        values[name] = _coerce(name, value, type(default))
    return replace(defaults, **values)


# List fields and the type of their items: a JSON list (of objects for a dataclass), a JSON string from --set.
LIST_ITEMS = {"corpora": CorpusSpec, "probes": str}


def _coerce(name: str, value, kind):
    if kind is list:
        return _coerce_list(name, value)
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        raise ConfigError(f"{name} must be true/false, got {value!r}")
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            raise ConfigError(f"{name} must be a {kind.__name__}, got {value!r}") from None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{name} must be a {kind.__name__}, got {value!r}")
    return value


def _coerce_list(name: str, value) -> list:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{name} must be a JSON list ({exc})") from None
    if not isinstance(value, list):
        raise ConfigError(f"{name} must be a list, got {type(value).__name__}")
    item = LIST_ITEMS[name]
    if item is str:
        if not all(isinstance(x, str) for x in value):
            raise ConfigError(f"{name} must be a list of strings")
        return list(value)
    return [x if isinstance(x, item) else dataclass_from_dict(item, x) for x in value]


PRESETS: dict[str, Config] = {
    # Paper sizes (Appendix A): far too slow for a laptop CPU, meant for GPUs.
    "paper": Config(
        model=ModelConfig(emb_dim=620, hidden=1000, align_dim=1000, maxout=500,
                          src_vocab_size=30000, tgt_vocab_size=30000, dropout=0.0),
        train=TrainConfig(src_vocab=30000, tgt_vocab=30000, optimizer="adadelta",
                          label_smoothing=0.0, max_len=50, epochs=10),
    ),
    # Sized for a 2-core CPU: trains on Multi30k to good quality in about an hour.
    "cpu": Config(
        model=ModelConfig(emb_dim=256, hidden=512, align_dim=512, maxout=256, dropout=0.3),
        train=TrainConfig(src_vocab=6000, tgt_vocab=6000, batch_size=80, join_prob=0.25, epochs=12),
    ),
    # The Transformer beside the "cpu" RNNs: about as many parameters (11.0M with 6,000-piece
    # vocabularies), the same data and training settings, plus the learning-rate warm-up
    # Transformers need (model/network/transformer.py) and their usual dropout of 0.1. A deep
    # encoder and a shallow decoder (Kasai et al. 2021): the encoder runs once per sentence, the
    # decoder once per output word and beam row, so 6 + 2 layers decode about as fast as RNNsearch
    # where 4 + 4 layers of the same size took twice as long (bench/decode_speed.py --models).
    "transformer": Config(
        model=ModelConfig(arch="transformer", emb_dim=256, enc_layers=6, dec_layers=2, heads=8, ff_dim=1280,
                          dropout=0.1),
        train=TrainConfig(src_vocab=6000, tgt_vocab=6000, batch_size=80, join_prob=0.25, epochs=12, warmup=1000),
    ),
    # Minutes-long smoke runs and tests.
    "tiny": Config(
        model=ModelConfig(emb_dim=32, hidden=48, align_dim=40, maxout=24, dropout=0.0),
        train=TrainConfig(src_vocab=200, tgt_vocab=200, batch_size=16, epochs=2,
                          label_smoothing=0.0, save_every=50),
    ),
}


def preset(name: str) -> Config:
    """A fresh copy of a named preset."""
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; choose from {', '.join(PRESETS)}")
    return Config.from_dict(PRESETS[name].to_dict())
