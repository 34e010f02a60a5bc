"""Checkpoints: a folder that rebuilds its own model. No pickle anywhere.

    model.safetensors   weights (fp32, or fp16 for shipping)
    config.json         format version, ModelConfig, TrainConfig, vocabulary file names
    src.spm.model       source SentencePiece model
    tgt.spm.model       target SentencePiece model
    card.json           training summary and test scores (optional)

Loading validates everything before trusting it and raises CheckpointError naming the
file and the problem. A folder whose config.json says ``"family": "joey-rnn"`` holds a Joey NMT
model imported with ``python -m model.checkpoint import-joey JOEY_DIR OUT`` (model/foreign/joey.py);
it loads through the decoding interface like the project's own models. ``python -m model.checkpoint export SRC DST`` writes an fp16 copy;
``python -m model.checkpoint average OUT IN [IN ...]`` writes the mean of the weights of
checkpoints of one model (the last few of a run, as well-run NMT systems ship).
"""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Optional

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from model.foreign.joey import FAMILY as JOEY_FAMILY
from model.foreign.joey import build_joey, describe_raw, read_joey_dir
from model.core.config import MAX_PARAMETERS, ModelConfig, TrainConfig, dataclass_from_dict
from model.corpus.vocab import Vocab
from model.core.decodable import Decodable, ModelDescription, Vocabulary
from model.core.errors import CheckpointError, ConfigError
from model.network.nmt_model import NMTModel

FORMAT = "bahdanau-nmt-checkpoint"
FORMAT_VERSION = 1
WEIGHTS, CONFIG, CARD = "model.safetensors", "config.json", "card.json"
SRC_VOCAB, TGT_VOCAB = "src.spm.model", "tgt.spm.model"
MAX_JSON_BYTES = 10 * 2**20
MAX_VOCAB_BYTES = 50 * 2**20  # a 200k-piece SentencePiece model is about 5 MB


def save_checkpoint(path: str | Path, model: NMTModel, src_vocab: Vocab, tgt_vocab: Vocab,
                    train: Optional[TrainConfig] = None, card: Optional[dict] = None,
                    dtype: torch.dtype = torch.float32) -> Path:
    """Write a complete checkpoint folder (atomically replaced files) and return its path."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()}
    save_file(tensors, str(path / (WEIGHTS + ".tmp")))
    (path / (WEIGHTS + ".tmp")).replace(path / WEIGHTS)
    src_vocab.save(path / SRC_VOCAB)
    tgt_vocab.save(path / TGT_VOCAB)
    config = {"format": FORMAT, "format_version": FORMAT_VERSION, "model": asdict(model.config),
              "train": asdict(train) if train else None, "src_vocab": SRC_VOCAB, "tgt_vocab": TGT_VOCAB,
              "dtype": str(dtype).replace("torch.", "")}
    (path / CONFIG).write_text(json.dumps(config, indent=2) + "\n")
    if card is not None:
        (path / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    return path


def read_json(path: Path) -> dict:
    """Parse a small JSON object file or raise CheckpointError."""
    if not path.is_file():
        raise CheckpointError("{path}: missing", path=str(path))
    if path.stat().st_size > MAX_JSON_BYTES:
        raise CheckpointError("{path}: larger than {mib} MiB; not a config", path=str(path),
                              mib=MAX_JSON_BYTES // 2**20)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError("{path}: not valid JSON ({error})", path=str(path), error=str(exc)) from None
    if not isinstance(data, dict):
        raise CheckpointError("{path}: expected a JSON object", path=str(path))
    return data


OWN_FAMILY = "bahdanau"  # config.json without "family": a model of this project


def read_header(folder: Path) -> dict:
    """config.json of a checkpoint folder, with its format and version checked."""
    raw = read_json(folder / CONFIG)
    if raw.get("format") != FORMAT:
        raise CheckpointError("{path}: not a {format} config (format={found})", path=str(folder / CONFIG),
                              format=FORMAT, found=repr(raw.get("format"))[:40])
    if raw.get("format_version") != FORMAT_VERSION:
        raise CheckpointError("{path}: unknown format_version {found}; this code reads version {version}",
                              path=str(folder / CONFIG), found=repr(raw.get("format_version"))[:40],
                              version=FORMAT_VERSION)
    if not isinstance(raw.get("family", OWN_FAMILY), str) or raw.get("family", OWN_FAMILY) not in FAMILIES:
        raise CheckpointError("{path}: unknown model family {found} (known: {known})", path=str(folder / CONFIG),
                              found=repr(str(raw.get("family"))[:40]), known=", ".join(sorted(FAMILIES)))
    return raw


def is_imported(raw: dict) -> bool:
    """Whether config.json ``raw`` describes a model imported from another toolkit."""
    return raw.get("family", OWN_FAMILY) != OWN_FAMILY


def read_config(folder: Path) -> tuple[ModelConfig, Optional[TrainConfig], dict]:
    """The model and training configs of one of this project's checkpoints (CheckpointError
    for an imported model, which has neither)."""
    raw = read_header(folder)
    if is_imported(raw):
        raise CheckpointError("{path}: an imported {family} model, not one trained by this project", path=str(folder),
                              family=str(raw.get("family")))
    try:
        model_cfg = dataclass_from_dict(ModelConfig, raw.get("model"))
        model_cfg.validate()
        train_cfg = dataclass_from_dict(TrainConfig, raw["train"]) if raw.get("train") else None
    except ConfigError as exc:
        raise CheckpointError(f"{folder / CONFIG}: {exc}") from None
    return model_cfg, train_cfg, raw


def _meta_model(config: ModelConfig) -> NMTModel:
    """The model's structure on the meta device: no memory, and not initialised (the paper's
    N(0, 0.001^2) for the alignment model would run normal_ on meta, whose first call imports
    torch._dynamo: 1.4 s per process, a quarter of the app's cold start)."""
    with torch.device("meta"):
        return NMTModel(config, initialise=False)


def _checked_meta_model(config: ModelConfig, where: Path) -> NMTModel:
    """``_meta_model``, refused when the config asks for more than MAX_PARAMETERS."""
    model = _meta_model(config)
    if model.num_parameters() > MAX_PARAMETERS:
        raise CheckpointError("{path}: config asks for {n:,} parameters, more than the {limit:,} this loader allows",
                              path=str(where), n=model.num_parameters(), limit=MAX_PARAMETERS)
    return model


def _read_weights(path: Path, expected: dict[str, tuple]) -> dict[str, torch.Tensor]:
    if not path.is_file():
        raise CheckpointError("{path}: missing", path=str(path))
    try:
        with safe_open(str(path), framework="pt") as handle:
            names = set(handle.keys())
            missing, unexpected = sorted(set(expected) - names), sorted(names - set(expected))
            if missing or unexpected:
                raise CheckpointError("{path}: tensor names do not match the config (missing {missing}, unexpected "
                                      "{unexpected})", path=str(path), missing=str(missing[:5]),
                                      unexpected=str(unexpected[:5]))
            for name in expected:
                shape = tuple(handle.get_slice(name).get_shape())
                if shape != expected[name]:
                    raise CheckpointError("{path}: tensor {name} has shape {shape}, config implies {expected}",
                                          path=str(path), name=name, shape=str(shape), expected=str(expected[name]))
            tensors = {name: handle.get_tensor(name) for name in expected}
    except (SafetensorError, OSError, RuntimeError, ValueError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError("{path}: not a readable safetensors file ({error})", path=str(path),
                              error=str(exc)) from None
    for name, tensor in tensors.items():
        if not tensor.is_floating_point():
            raise CheckpointError("{path}: tensor {name} has dtype {dtype}, expected floating point", path=str(path),
                                  name=name, dtype=str(tensor.dtype))
        if not torch.isfinite(tensor).all():
            raise CheckpointError("{path}: tensor {name} contains NaN or infinite values", path=str(path), name=name)
    return tensors


def _read_vocab(path: Path, size: int, side: str) -> Vocab:
    if not path.is_file():
        raise CheckpointError("{path}: missing", path=str(path))
    if path.stat().st_size > MAX_VOCAB_BYTES:
        raise CheckpointError("{path}: larger than {mib} MiB; not a vocabulary of this project", path=str(path),
                              mib=MAX_VOCAB_BYTES // 2**20)
    try:
        vocab = Vocab.load(path)
    except ValueError as exc:
        raise CheckpointError(f"{path}: {exc}") from None
    if len(vocab) != size:
        raise CheckpointError("{path}: has {n} pieces but config.json says {setting}={size}", path=str(path),
                              n=len(vocab), setting=f"{side}_vocab_size", size=size)
    return vocab


@dataclass(frozen=True)
class FolderSummary:
    """What a checkpoint folder holds, from its config.json alone (no weights loaded)."""

    description: ModelDescription
    src_lang: str
    tgt_lang: str
    train: Optional[TrainConfig]  # this project's models: how they were trained; None for imports
    imported: bool  # config.json names another family than this project's


def describe_folder(folder: Path) -> FolderSummary:
    """The pickers, the alignment command and the results page read this for every folder."""
    raw = read_header(folder)
    family = raw.get("family", OWN_FAMILY)
    if family == OWN_FAMILY:
        model_cfg, train_cfg, _ = read_config(folder)
        langs = (train_cfg.src_lang, train_cfg.tgt_lang) if train_cfg else ("en", "fr")
        has_attention = model_cfg.arch == "rnnsearch"
        description = ModelDescription(model_cfg.arch, has_attention, model_cfg.attention if has_attention else "")
        return FolderSummary(description, *langs, train_cfg, False)
    description, src, tgt = FAMILIES[family].describe(folder, raw)
    return FolderSummary(description, src, tgt, None, True)


def load_model(path: str | Path) -> tuple[Decodable, Vocabulary, Vocabulary, dict]:
    """Any checkpoint folder, this project's, imported or of a registered family: (model in
    eval mode, source vocabulary, target vocabulary, config.json dict)."""
    folder = Path(path)
    if not folder.is_dir():
        raise CheckpointError("{path}: not a checkpoint folder (no such directory)", path=str(folder))
    raw = read_header(folder)
    model, src_vocab, tgt_vocab = FAMILIES[raw.get("family", OWN_FAMILY)].load(folder, raw)
    return model.eval(), src_vocab, tgt_vocab, raw


@dataclass(frozen=True)
class Family:
    """How to open checkpoint folders whose config.json says ``"family": <name>``."""

    load: Callable[[Path, dict], tuple[Decodable, Vocabulary, Vocabulary]]  # (folder, config.json) -> model, vocabularies
    describe: Callable[[Path, dict], tuple[ModelDescription, str, str]]  # -> description, source and target language


def _load_own(folder: Path, raw: dict):
    return load_checkpoint(folder)[:3]


def _load_joey(folder: Path, raw: dict):
    model, src_vocab, tgt_vocab = build_joey(folder, raw)
    tensors = _read_weights(folder / WEIGHTS, {k: tuple(v.shape) for k, v in model.joey.state_dict().items()})
    model.joey.load_state_dict({k: v.float() for k, v in tensors.items()})
    return model, src_vocab, tgt_vocab


def _describe_own(folder: Path, raw: dict) -> tuple[ModelDescription, str, str]:
    summary = describe_folder(folder)
    return summary.description, summary.src_lang, summary.tgt_lang


FAMILIES: dict[str, Family] = {OWN_FAMILY: Family(_load_own, _describe_own),
                               JOEY_FAMILY: Family(_load_joey, lambda folder, raw: describe_raw(raw, folder / CONFIG))}


def register_family(name: str, family: Family) -> None:
    """Open folders whose config.json says ``"family": name`` with ``family``: how a model of
    one's own reaches the app and Python code (``load_model``, ``Translator.from_checkpoint``;
    docs/own-model.md); the command lines know the built-in families. A config.json may only
    name a registered family, so no file can make the server import code."""
    if name in (OWN_FAMILY, JOEY_FAMILY):
        raise ValueError(f"{name!r} is built in")
    FAMILIES[name] = family


def import_joey(joey_dir: str | Path, out: str | Path, ckpt: str = "") -> Path:
    """Convert a Joey NMT 2.x recurrent model folder into a checkpoint folder (model/foreign/joey.py):
    Joey's parameters as safetensors, its settings in config.json, its token lists and
    tokenizer files, and a card saying where it came from."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CheckpointError(f"{out}: exists and is not an empty folder; choose a new one")
    found = read_joey_dir(joey_dir, ckpt, name=out.name)
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().float().clone().contiguous() for k, v in found.state.items()},  # clone: tied weights
              str(out / (WEIGHTS + ".tmp")))
    (out / (WEIGHTS + ".tmp")).replace(out / WEIGHTS)
    for side in ("src", "trg"):
        (out / found.data[side]["voc_file"]).write_text("\n".join(found.tokens[side]) + "\n", encoding="utf-8")
    for name, source in found.files.items():
        shutil.copyfile(source, out / name)
    config = {"format": FORMAT, "format_version": FORMAT_VERSION, "family": JOEY_FAMILY,
              "joeynmt_version": found.version, "train": None,
              "joey": {"model": found.settings.model, "data": found.data,
                       "special_symbols": found.settings.special_symbols, "testing": found.settings.testing}}
    (out / CONFIG).write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / CARD).write_text(json.dumps(found.card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def load_checkpoint(path: str | Path) -> tuple[NMTModel, Vocab, Vocab, dict]:
    """Rebuild one of this project's models (in eval mode), its source and target vocabularies
    and config.json from a folder; ``load_model`` also opens imported ones."""
    folder = Path(path)
    if not folder.is_dir():
        raise CheckpointError("{path}: not a checkpoint folder (no such directory)", path=str(folder))
    model_cfg, _, raw = read_config(folder)
    model = _checked_meta_model(model_cfg, folder / CONFIG)  # no initialisation of weights about to be replaced
    src_vocab = _read_vocab(folder / SRC_VOCAB, model_cfg.src_vocab_size, "src")
    tgt_vocab = _read_vocab(folder / TGT_VOCAB, model_cfg.tgt_vocab_size, "tgt")
    tensors = _read_weights(folder / WEIGHTS, {k: tuple(v.shape) for k, v in model.state_dict().items()})
    model.load_state_dict({k: v.float() for k, v in tensors.items()}, assign=True)
    return model.eval(), src_vocab, tgt_vocab, raw


def read_card(path: str | Path) -> dict:
    """The card.json of a checkpoint folder as raw JSON, or {} when there is none (training
    continues a run from it; everything else reads cards with model.model_card)."""
    card = Path(path) / CARD
    return read_json(card) if card.is_file() else {}


def export(src: str | Path, dst: str | Path, dtype: torch.dtype = torch.float16) -> Path:
    """Copy a checkpoint with weights cast to ``dtype`` (fp16 halves the shipped size)."""
    model, src_vocab, tgt_vocab, raw = load_checkpoint(src)
    train = dataclass_from_dict(TrainConfig, raw["train"]) if raw.get("train") else None
    out = save_checkpoint(dst, model, src_vocab, tgt_vocab, train, dtype=dtype)
    if (Path(src) / CARD).is_file():
        shutil.copy(Path(src) / CARD, out / CARD)
    return out


def average(paths: list[str | Path], out: str | Path) -> Path:
    """Write the element-wise mean of the weights of ``paths`` (same config and vocabularies,
    else CheckpointError) to ``out``, with the first one's vocabularies and the last one's
    training config."""
    if not paths:
        raise CheckpointError("average needs at least one checkpoint")
    total, first, raw = None, None, None
    for path in paths:
        model, src_vocab, tgt_vocab, raw = load_checkpoint(path)
        if first is None:
            first = (model.config, src_vocab, tgt_vocab, path)
            total = {k: v.double() for k, v in model.state_dict().items()}
            continue
        if model.config != first[0]:
            raise CheckpointError("{path}: its model config differs from {first}'s; only checkpoints of one model "
                                  "can be averaged", path=str(path), first=str(first[3]))
        if (src_vocab.proto, tgt_vocab.proto) != (first[1].proto, first[2].proto):
            raise CheckpointError(f"{path}: its vocabularies differ from {first[3]}'s")
        for k, v in model.state_dict().items():
            total[k] += v.double()
    mean = NMTModel(first[0])
    mean.load_state_dict({k: (v / len(paths)).float() for k, v in total.items()})
    train = dataclass_from_dict(TrainConfig, raw["train"]) if raw.get("train") else None
    return save_checkpoint(out, mean, first[1], first[2], train)
