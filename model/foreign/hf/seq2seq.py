"""Hugging Face encoder-decoders (Marian first) through the decoding interface, and their one-time import.

    pip install -e ".[hf]"
    python -m model.checkpoint import-hf HF_FOLDER OUT_DIR [--langs en-de]

``HF_FOLDER`` is what ``save_pretrained`` writes (``config.json``, ``model.safetensors`` or a
``pytorch_model.bin``, ``generation_config.json`` and the tokenizer's files). The import reads
and checks it, without a network and without running code from it, and writes a checkpoint
folder: ``config.json`` (``"family": "hf-seq2seq"`` and the checked settings), ``card.json``, and
``hf/``, the model's own files with its weights as safetensors. Every page and command opens
that folder (model/checkpoints/families.py). It is an import, not a folder passed straight to
``--checkpoint``, so that a pickled ``pytorch_model.bin`` is read once, by PyTorch's restricted
loader, and never again, and so that the app lists the model with a card like every other one.

The computation is the model's own ``forward`` with its key/value cache; the adapter adds the
interface's boundary (model/core/decodable.py):

- ids: this project's 0 <pad>, 1 <unk>, 2 <s>, 3 </s>, then Hugging Face id h as h + 4. <s> is
  the model's ``decoder_start_token_id`` (Marian's is its pad token); the model's own unknown
  and end tokens are ids 1 and 3, and their places among the h + 4 are never chosen;
- decoding: the model's ``generation_config.json`` is its default. Its output cap
  (``max_length``/``max_new_tokens``), forced first and last tokens, minimum length and banned
  tokens act in ``step`` as ``generate``'s logits processors do; its ``length_penalty``,
  ``early_stopping`` and ``num_beams`` are the model's ``BeamRule`` and card, so
  ``python -m model.translate --checkpoint OUT --beam 1|5`` gives ``generate(num_beams=1|5)``'s tokens;
- attention: every decoder layer's cross-attention, every head (``Step.cross_attention``);
  ``Step.alpha`` is the last layer's mean over heads (Marian and CTranslate2 show the last
  layer's first head; the layer × head grid of the Alignment page shows which aligns).

Supported: Marian, BART, mBART, T5 and M2M100 (NLLB's architecture) configurations as
``transformers`` builds them; anything else, or a decoding setting ``step`` cannot reproduce
(sampling, repetition penalties, n-gram blocking), is refused with one line naming it.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Optional

import torch
from torch import nn

from model.core.config import MAX_HEADS, MAX_LAYERS, MAX_PARAMETERS, MAX_UNITS
from model.core.decodable import (STOP_HEURISTIC, STOP_NEVER, STOP_WHEN_FULL, AlphaFn, BeamRule, Decodable,
                                  EncoderStates, ModelDescription, OutputLength, Step)
from model.core.errors import CheckpointError, ConfigError
from model.corpus.vocab import BOS, EOS, PAD, UNK
from model.foreign.installed import installed_version
from model.foreign.json_files import read_json_object
from model.foreign.restricted_load import load_restricted

FAMILY = "hf-seq2seq"
HF_DIR = "hf"  # the model's own files inside an imported checkpoint folder
SHIFT = 4  # Hugging Face id h is this project's id h + SHIFT
INSTALL_HINT = 'Hugging Face transformers is not installed: pip install -e ".[hf]"'
ARCHITECTURES = {"marian": "Marian", "bart": "BART", "mbart": "mBART", "t5": "T5", "m2m_100": "M2M100"}
# each architecture's size fields in config.json, checked before anything is built
SIZE_KEYS = {"t5": ("d_model", "d_ff", "d_kv", "num_layers", "num_heads", "vocab_size")}
SEQ2SEQ_SIZES = ("d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads", "decoder_attention_heads",
                 "encoder_ffn_dim", "decoder_ffn_dim", "vocab_size", "max_position_embeddings")
MAX_HF_VOCAB = 300_000  # Hugging Face vocabularies run larger than this project's MAX_VOCAB
MAX_JSON_BYTES = 20 * 2**20  # config, generation config, tokenizer.json
MAX_WEIGHTS_BYTES = 4 * 2**30
MAX_OUTPUT_TOKENS = 1024  # a larger output cap is refused (search runs that many steps at most)
TOKENIZER_FILES = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "tokenizer.json",
                   "vocab.json", "merges.txt", "source.spm", "target.spm", "spiece.model", "sentencepiece.bpe.model",
                   "sentencepiece.model")
# generate() settings this adapter cannot reproduce, with the value that leaves them off
UNSUPPORTED_GENERATION = {"do_sample": False, "repetition_penalty": 1.0, "no_repeat_ngram_size": 0,
                          "encoder_no_repeat_ngram_size": 0, "encoder_repetition_penalty": 1.0, "num_beam_groups": 1,
                          "diversity_penalty": 0.0, "renormalize_logits": False, "sequence_bias": None,
                          "exponential_decay_length_penalty": None, "constraints": None, "force_words_ids": None,
                          "epsilon_cutoff": 0.0, "eta_cutoff": 0.0}


def transformers_version() -> str:
    """The installed transformers' version, or CheckpointError with the install command."""
    return installed_version("transformers", INSTALL_HINT)


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class Decoding:
    """The model's own decoding settings, from its generation config (``generate``'s defaults)."""

    max_tokens: int  # output tokens at most, </s> counted (max_length - 1, or max_new_tokens)
    min_tokens: int  # </s> is not chosen before this many tokens
    forced_eos: bool  # the last allowed token is forced to </s> (log-probability 0, as generate does)
    forced_bos: Optional[int]  # Hugging Face id forced as the first token (log-probability 0), or None
    banned: tuple[int, ...]  # Hugging Face ids never chosen (bad_words_ids of one token, suppress_tokens)
    banned_first: tuple[int, ...]  # ... not chosen as the first token (begin_suppress_tokens)
    num_beams: int
    length_penalty: float
    early_stopping: str  # "full" / "heuristic" / "never" (a BeamRule's stopping)

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class HFSettings:
    """What this project reads from a Hugging Face folder, checked (``read_hf_settings``)."""

    model_type: str
    sizes: dict  # d_model, layers, heads, feed-forward, vocabulary
    specials: dict  # Hugging Face ids: pad, eos, unk, decoder_start
    decoding: Decoding
    src_lang: str
    tgt_lang: str

    def as_dict(self) -> dict:
        return {"model_type": self.model_type, "sizes": self.sizes, "specials": self.specials,
                "decoding": self.decoding.as_dict(), "src_lang": self.src_lang, "tgt_lang": self.tgt_lang}


def read_json_file(path: Path, what: str) -> dict:
    """A JSON object from ``path`` (model/foreign/json_files.py), capped at MAX_JSON_BYTES."""
    return read_json_object(path, MAX_JSON_BYTES, what)


def _int(cfg: dict, key: str, where: str, low: int, high: int, default: Any = None) -> int:
    value = cfg.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise CheckpointError(f"{where}: {key}={str(value)[:40]!r} must be a whole number in {low}..{high}")
    return value


def _sizes(cfg: dict, where: str) -> dict:
    """The architecture's sizes, each checked to be a sane whole number."""
    t = cfg["model_type"]
    limits = {"vocab_size": MAX_HF_VOCAB, "max_position_embeddings": 100_000}
    if t == "t5":
        out = {k: _int(cfg, k, where, 1, limits.get(k, MAX_UNITS)) for k in SIZE_KEYS["t5"]}
        out["num_decoder_layers"] = _int(cfg, "num_decoder_layers", where, 1, MAX_LAYERS, out["num_layers"])
        for key in ("num_layers", "num_decoder_layers"):
            _int(out, key, where, 1, MAX_LAYERS)
        _int(out, "num_heads", where, 1, MAX_HEADS)
        return out
    out = {k: _int(cfg, k, where, 1, limits.get(k, MAX_UNITS)) for k in SEQ2SEQ_SIZES}
    for key in ("encoder_layers", "decoder_layers"):
        _int(out, key, where, 1, MAX_LAYERS)
    for key in ("encoder_attention_heads", "decoder_attention_heads"):
        _int(out, key, where, 1, MAX_HEADS)
        if out["d_model"] % out[key]:
            raise CheckpointError(f"{where}: {key}={out[key]} does not divide d_model={out['d_model']}")
    return out


def decoder_layers(sizes: dict) -> int:
    return sizes.get("decoder_layers") or sizes["num_decoder_layers"]


def _token_list(value: Any, where: str, vocab: int) -> tuple[int, ...]:
    """Token ids from a list of ids (or of one-id lists, as bad_words_ids holds them)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise CheckpointError(f"{where} must be a list of token ids")
    out = []
    for item in value:
        if isinstance(item, list):
            if len(item) != 1:
                raise CheckpointError(f"{where}: banned sequences of several tokens are not supported "
                                      f"({str(item)[:40]}); only single tokens")
            item = item[0]
        if not isinstance(item, int) or isinstance(item, bool) or not 0 <= item < vocab:
            raise CheckpointError(f"{where}: {str(item)[:20]!r} is not a token id below {vocab}")
        out.append(item)
    return tuple(sorted(set(out)))


def _one_id(value: Any, where: str, vocab: int, required: bool = True) -> Optional[int]:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if value is None and not required:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < vocab:
        raise CheckpointError(f"{where} must be one token id below {vocab}, got {str(value)[:40]!r}")
    return value


def read_decoding(gen: dict, cfg: dict, where: str, vocab: int) -> Decoding:
    """``generate``'s defaults for this model: its generation config over the model config's
    own decoding fields (what ``GenerationConfig.from_model_config`` reads), each checked."""
    merged = {**{k: cfg[k] for k in ("max_length", "min_length", "num_beams", "length_penalty", "early_stopping",
                                      "bad_words_ids", "forced_bos_token_id", "forced_eos_token_id",
                                      "no_repeat_ngram_size", "repetition_penalty", "do_sample") if k in cfg}, **gen}
    for key, off in UNSUPPORTED_GENERATION.items():
        value = merged.get(key, off)
        if value not in (off, None) and not (off is None and value in ([], {})):
            raise CheckpointError(f"{where}: {key}={str(value)[:40]} is not supported: this tool decodes with greedy "
                                  f"and beam search as generate does without it (set {key} to {off} to import)")
    new = merged.get("max_new_tokens")
    if new is not None:
        max_tokens = _int(merged, "max_new_tokens", where, 1, MAX_OUTPUT_TOKENS)
    else:
        max_tokens = _int(merged, "max_length", where, 2, MAX_OUTPUT_TOKENS + 1, 20) - 1
    min_new = merged.get("min_new_tokens")
    min_tokens = (_int(merged, "min_new_tokens", where, 0, MAX_OUTPUT_TOKENS) if min_new is not None
                  else max(_int(merged, "min_length", where, 0, MAX_OUTPUT_TOKENS + 1, 0) - 1, 0))
    stopping = merged.get("early_stopping", False)
    if stopping not in (True, False, "never"):
        raise CheckpointError(f"{where}: early_stopping={str(stopping)[:20]!r} must be true, false or \"never\"")
    penalty = merged.get("length_penalty", 1.0)
    if not isinstance(penalty, (int, float)) or isinstance(penalty, bool) or not -10 <= penalty <= 10:
        raise CheckpointError(f"{where}: length_penalty={str(penalty)[:20]!r} must be a number in -10..10")
    eos = _one_id(merged.get("eos_token_id", cfg.get("eos_token_id")), f"{where}: eos_token_id", vocab)
    forced_eos = merged.get("forced_eos_token_id")
    if forced_eos is not None and _one_id(forced_eos, f"{where}: forced_eos_token_id", vocab) != eos:
        raise CheckpointError(f"{where}: forced_eos_token_id differs from eos_token_id; not supported")
    return Decoding(max_tokens=max_tokens, min_tokens=min(min_tokens, max_tokens), forced_eos=forced_eos is not None,
                    forced_bos=_one_id(merged.get("forced_bos_token_id"), f"{where}: forced_bos_token_id", vocab, False),
                    banned=tuple(sorted(set(_token_list(merged.get("bad_words_ids"), f"{where}: bad_words_ids", vocab))
                                        | set(_token_list(merged.get("suppress_tokens"), f"{where}: suppress_tokens",
                                                          vocab)))),
                    banned_first=_token_list(merged.get("begin_suppress_tokens"), f"{where}: begin_suppress_tokens",
                                             vocab),
                    num_beams=_int(merged, "num_beams", where, 1, 64, 1), length_penalty=float(penalty),
                    early_stopping={True: STOP_WHEN_FULL, False: STOP_HEURISTIC, "never": STOP_NEVER}[stopping])


def read_hf_settings(folder: Path, langs: Optional[tuple[str, str]] = None) -> HFSettings:
    """Check a Hugging Face folder's config.json and generation_config.json: a supported
    encoder-decoder, sane sizes, decoding settings this adapter reproduces. Nothing is built."""
    where = str(folder / "config.json")
    cfg = read_json_file(folder / "config.json", "Hugging Face model config")
    if "auto_map" in cfg:
        why = "only transformers' built-in architectures are opened, and no code from a folder is run"
        raise CheckpointError(f"{where}: names its own code (auto_map); {why}")
    model_type = cfg.get("model_type")
    if model_type not in ARCHITECTURES:
        raise CheckpointError("{where}: model_type={found} is not supported (supported: {known})", where=where,
                              found=repr(str(model_type)[:40]), known=", ".join(sorted(ARCHITECTURES)))
    sizes = _sizes(cfg, where)
    vocab = sizes["vocab_size"]
    gen_path = folder / "generation_config.json"
    gen = read_json_file(gen_path, "generation config") if gen_path.exists() else {}
    decoding = read_decoding(gen, cfg, str(gen_path if gen else folder / "config.json"), vocab)
    source = {**cfg, **gen}
    specials = {"pad": _one_id(source.get("pad_token_id"), f"{where}: pad_token_id", vocab),
                "eos": _one_id(source.get("eos_token_id"), f"{where}: eos_token_id", vocab),
                "decoder_start": _one_id(source.get("decoder_start_token_id"), f"{where}: decoder_start_token_id", vocab)}
    src_lang, tgt_lang = langs or _languages(folder)
    return HFSettings(model_type, sizes, specials, decoding, src_lang, tgt_lang)


def _languages(folder: Path) -> tuple[str, str]:
    """The languages a tokenizer config names (Marian's source_lang/target_lang, mBART's and
    M2M100's src_lang/tgt_lang), cut to their language code; else CheckpointError asking for --langs."""
    path = folder / "tokenizer_config.json"
    tok = read_json_file(path, "tokenizer config") if path.exists() else {}
    for a, b in (("source_lang", "target_lang"), ("src_lang", "tgt_lang")):
        found = [tok.get(a), tok.get(b)]
        if all(isinstance(x, str) and x for x in found):
            codes = [x.strip("_").split("_")[0][:10] for x in found]
            if all(codes) and codes[0] != codes[1]:
                return codes[0], codes[1]
    ask = "give them: --langs SRC-TGT (e.g. --langs en-de)"
    raise CheckpointError(f"{folder}: its tokenizer config names no source and target language; {ask}")


# ---------------------------------------------------------------- building and checking


def _meta_model(folder: Path):
    """The model's structure from its config, on the meta device (no memory, no weights)."""
    from transformers import AutoConfig, AutoModelForSeq2SeqLM

    try:
        config = AutoConfig.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
        with torch.device("meta"):
            return AutoModelForSeq2SeqLM.from_config(config, attn_implementation="eager")
    except Exception as exc:  # transformers' ValueError/TypeError on odd configs
        raise CheckpointError(f"{folder / 'config.json'}: transformers could not build this model "
                              f"({type(exc).__name__}: {str(exc)[:200]})") from None


def _check_size(meta, where: str) -> int:
    size = sum(p.numel() for p in meta.parameters())
    if size > MAX_PARAMETERS:
        raise CheckpointError(f"{where}: asks for {size:,} parameters, more than the {MAX_PARAMETERS:,} this loader allows")
    return size


def _read_weights(folder: Path) -> tuple[dict[str, torch.Tensor], str]:
    """The weights of a Hugging Face folder: model.safetensors, else a pickled pytorch_model.bin
    read with PyTorch's restricted loader (``weights_only=True``: tensors only, nothing run)."""
    from safetensors.torch import load_file

    safe, pickled = folder / "model.safetensors", folder / "pytorch_model.bin"
    if safe.is_file():
        if safe.stat().st_size > MAX_WEIGHTS_BYTES:
            raise CheckpointError(f"{safe}: larger than {MAX_WEIGHTS_BYTES // 2**30} GiB")
        try:
            return load_file(str(safe)), safe.name
        except Exception as exc:  # safetensors' SafetensorError on a damaged file
            raise CheckpointError(f"{safe}: not a readable safetensors file ({str(exc)[:120]})") from None
    if pickled.is_file():
        state = load_restricted(pickled, MAX_WEIGHTS_BYTES, "a PyTorch state_dict such as pytorch_model.bin")
        if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                  for k, v in state.items()):
            raise CheckpointError(f"{pickled}: not a state_dict of named tensors")
        return state, pickled.name
    if any(folder.glob("*.index.json")):
        fix = "save_pretrained with a larger max_shard_size writes one file"
        raise CheckpointError(f"{folder}: weights split into shards are not supported; {fix}")
    raise CheckpointError(f"{folder}: no model.safetensors or pytorch_model.bin (the model's weights)")


def _check_weights(state: dict[str, torch.Tensor], meta, where: str) -> None:
    """Every tensor named as the config's model names it, with its shape, finite floating point."""
    expected = {k: tuple(v.shape) for k, v in meta.state_dict().items()}
    unexpected = sorted(set(state) - set(expected))
    if unexpected:
        raise CheckpointError(f"{where}: tensors the config's model does not have: {unexpected[:3]}")
    for name, tensor in state.items():
        if tuple(tensor.shape) != expected[name]:
            raise CheckpointError(f"{where}: tensor {name} has shape {tuple(tensor.shape)}, the config implies "
                                  f"{expected[name]}")
        if not tensor.is_floating_point() or not torch.isfinite(tensor).all():
            raise CheckpointError(f"{where}: tensor {name} is not finite floating point")


def _tokenizer(folder: Path, settings: HFSettings):
    """The model's own tokenizer, from its files in ``folder`` (never a hub)."""
    from transformers import AutoTokenizer

    present = [n for n in TOKENIZER_FILES if (folder / n).is_file()]
    if settings.model_type == "marian":
        missing = [n for n in ("source.spm", "target.spm", "vocab.json") if n not in present]
        if missing:
            what = "Marian's SentencePiece models and vocabulary"
            raise CheckpointError(f"{folder}: missing tokenizer file(s) {', '.join(missing)} ({what})")
    elif not any(n in present for n in ("tokenizer.json", "spiece.model", "sentencepiece.bpe.model", "vocab.json")):
        what = "tokenizer.json, or the model's SentencePiece or vocabulary files"
        raise CheckpointError(f"{folder}: no tokenizer files ({what})")
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    except Exception as exc:
        raise CheckpointError(f"{folder}: transformers could not read its tokenizer ({type(exc).__name__}: "
                              f"{str(exc)[:200]})") from None
    if len(tokenizer) > settings.sizes["vocab_size"]:
        raise CheckpointError(f"{folder}: the tokenizer has {len(tokenizer):,} tokens, the model "
                              f"{settings.sizes['vocab_size']:,}")
    return tokenizer


@dataclass(frozen=True)
class HFImport:
    """A checked Hugging Face folder, ready to be written as a checkpoint folder."""

    settings: HFSettings
    state: dict  # tensor name -> tensor, as the folder names them
    weights_file: str  # which file they came from
    files: tuple  # tokenizer and config files to copy into hf/
    parameters: int
    version: str


def read_hf_dir(folder: str | Path, langs: Optional[tuple[str, str]] = None) -> HFImport:
    """Read and check a Hugging Face folder: settings, structure and size (on the meta device,
    before any memory is used), weights against the structure, and its tokenizer."""
    version = transformers_version()
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder}: not a Hugging Face model folder (no such directory)")
    settings = read_hf_settings(folder, langs)
    meta = _meta_model(folder)
    parameters = _check_size(meta, str(folder / "config.json"))
    _tokenizer(folder, settings)
    state, weights_file = _read_weights(folder)
    _check_weights(state, meta, str(folder / weights_file))
    files = tuple(n for n in ("config.json", "generation_config.json", *TOKENIZER_FILES) if (folder / n).is_file())
    return HFImport(settings, state, weights_file, files, parameters, version)


def write_hf_files(found: HFImport, source: Path, target: Path) -> None:
    """The model's own files in ``target`` (hf/ of a checkpoint folder): its config and
    tokenizer files copied, its weights as model.safetensors."""
    from safetensors.torch import save_file

    target.mkdir(parents=True, exist_ok=True)
    for name in found.files:
        shutil.copyfile(source / name, target / name)
    save_file({k: v.detach().contiguous() for k, v in found.state.items()}, str(target / "model.safetensors"))


def import_card(name: str, settings: HFSettings, found: HFImport, source: Path) -> dict:
    """The card of an imported model: what it is, where it came from, its licence when its
    folder states one, its default decoding (no scores: run ``python -m model.evaluate``)."""
    description = describe(settings, found.version)
    d = settings.decoding
    licence = _licence(source)
    return {"name": name, "arch": description.arch, "origin": description.origin, "summary": description.summary,
            "parameters": found.parameters,
            "trained_on": f"a Hugging Face {ARCHITECTURES[settings.model_type]} model, imported from {source.name}",
            "deviations": list(description.differences), "imported_from": f"{source.name}/{found.weights_file}",
            "licence": licence, "decoding": {"beam": d.num_beams, "length_norm": d.length_penalty,
                                             "chosen_on": "the model's generation config"},
            "how_trained": f"Trained outside this project; imported from {source.name} with python -m model.checkpoint "
                           f"import-hf (transformers {found.version})."}


def _licence(folder: Path) -> str:
    """The licence a model card (README.md front matter) or config states, or ""."""
    readme = folder / "README.md"
    if readme.is_file() and readme.stat().st_size < 2**20:
        text = readme.read_bytes().decode("utf-8", "replace")
        if text.startswith("---"):
            for line in text.split("---", 2)[1].splitlines():
                if line.strip().lower().startswith("license:"):
                    return line.split(":", 1)[1].strip()[:60]
    return ""


# ---------------------------------------------------------------- the adapter


def describe(settings: HFSettings, version: str) -> ModelDescription:
    s, d = settings.sizes, settings.decoding
    name = ARCHITECTURES[settings.model_type]
    layers = decoder_layers(s)
    heads = s.get("decoder_attention_heads") or s["num_heads"]
    enc = s.get("encoder_layers") or s["num_layers"]
    summary = (f"{name} Transformer (Hugging Face): {enc} encoder and {layers} decoder layers, {heads} heads, "
               f"d_model {s['d_model']}; one attention matrix = layer {layers}'s mean over heads")
    differences = (
        "A Transformer: self-attention layers instead of the paper's recurrent encoder and decoder, and "
        f"{layers} cross-attentions of {heads} heads each (scaled dot products), not one additive alignment model.",
        "Views that take one attention matrix show the last decoder layer's mean over heads.",
        f"Decoded as its generation config says: at most {d.max_tokens} output tokens"
        + (", the last one </s>" if d.forced_eos else "") + f", length penalty {d.length_penalty:g}, "
        + {STOP_WHEN_FULL: "a sentence done once the beam is full of finished outputs",
           STOP_HEURISTIC: "a sentence done when no open hypothesis can beat the finished ones (generate's default)",
           STOP_NEVER: "a sentence done only when no open hypothesis can beat them at the longest length"}[d.early_stopping]
        + ".",
    )
    return ModelDescription(f"hf-{settings.model_type}", True, "multi-head dot-product",
                            origin=f"Hugging Face transformers {version} (imported)", summary=summary,
                            differences=differences)


@dataclass
class HFState:
    """The decoder's key/value cache (transformers' own, filled by ``step`` and reordered in
    place by ``reorder``: a state is used once) and the number of tokens read so far."""

    cache: Any
    position: int


class HFSeq2Seq(nn.Module, Decodable):
    """A Hugging Face ``AutoModelForSeq2SeqLM`` behind the decoding interface (module docstring)."""

    def __init__(self, hf_model: nn.Module, settings: HFSettings, version: str):
        """``settings.specials`` names the model's pad, eos, decoder start and (from its tokenizer,
        ``load_hf``) unk ids."""
        super().__init__()
        self.hf, self.settings, self.version = hf_model, settings, version
        sp = settings.specials
        vocab = hf_model.get_output_embeddings().weight.size(0)
        self.hf_vocab = vocab
        # this project's id -> the model's: <pad>, <unk>, <s>, </s>, then h + SHIFT -> h
        to_hf = torch.cat([torch.tensor([sp["pad"], sp["unk"], sp["decoder_start"], sp["eos"]]),
                           torch.arange(vocab)])
        self.register_buffer("to_hf", to_hf, persistent=False)
        self._embed_scale = _embed_scale(hf_model)
        d = settings.decoding
        # what generate bans at every step, at the first step too, and where ids 1 and 3 stand for
        # the model's own unknown and end tokens (their places among the h + 4 are never chosen)
        for name, ids in (("banned", d.banned), ("banned_at_start", d.banned + d.banned_first),
                          ("aliases", (sp["unk"], sp["eos"]))):
            mask = torch.zeros(vocab, dtype=torch.bool)
            mask[list(ids)] = True
            self.register_buffer(name, mask, persistent=False)

    # ---- what the model is

    @property
    def description(self) -> ModelDescription:
        return describe(self.settings, self.version)

    @property
    def attention_layers(self) -> int:
        return decoder_layers(self.settings.sizes)

    @property
    def output_length(self) -> OutputLength:
        d = self.settings.decoding
        return OutputLength(0.0, d.max_tokens, cut_at_cap=not d.forced_eos, min_tokens=d.min_tokens)

    @property
    def beam_rule(self) -> BeamRule:
        d = self.settings.decoding
        return BeamRule(d.length_penalty, d.early_stopping)

    @property
    def target_embedding(self) -> nn.Module:
        return self.hf.get_decoder().get_input_embeddings()

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.hf.parameters())

    # ---- ids at the boundary

    def hf_ids(self, ids: torch.Tensor) -> torch.Tensor:
        return self.to_hf[ids]

    def our_logprobs(self, logits: torch.Tensor, position: int) -> torch.Tensor:
        """(rows, V_hf) logits at output position ``position`` -> (rows, V_hf + 4) log-probabilities
        in this project's ids, with generate's logits processors applied (module docstring)."""
        lp = torch.log_softmax(logits.float(), dim=-1)  # (rows, V_hf); no in-place edits: saliency differentiates it
        d, sp = self.settings.decoding, self.settings.specials
        unk, eos = sp["unk"], sp["eos"]
        forced = d.forced_bos if position == 0 and d.forced_bos is not None else \
            eos if d.forced_eos and position == d.max_tokens - 1 else None
        if forced is not None:  # generate's forced first or last token: log-probability 0, the rest -inf
            lp = torch.full_like(lp, float("-inf")).index_fill(1, torch.tensor([forced], device=lp.device), 0.0)
        else:
            banned = self.banned_at_start if position == 0 else self.banned
            if position < d.min_tokens:
                banned = banned.index_fill(0, torch.tensor([eos], device=lp.device), True)
            lp = lp.masked_fill(banned, float("-inf"))
        never = lp.new_full((lp.size(0), 1), float("-inf"))
        return torch.cat([never, lp[:, unk:unk + 1], never, lp[:, eos:eos + 1], lp.masked_fill(self.aliases, float("-inf"))],
                         1)

    # ---- encoder

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        encoder = self.hf.get_encoder()
        return encoder.get_input_embeddings()(self.hf_ids(src)) * self._embed_scale  # (batch, src_len, d_model)

    def encode(self, src: torch.Tensor, src_len: torch.Tensor, embedded: Optional[torch.Tensor] = None) -> EncoderStates:
        src_len = src_len.to(src.device)
        mask = torch.arange(src.size(1), device=src.device).unsqueeze(0) < src_len.unsqueeze(1)  # (batch, src_len)
        encoder = self.hf.get_encoder()
        if embedded is None:
            states = encoder(input_ids=self.hf_ids(src), attention_mask=mask.long()).last_hidden_state
        else:
            states = encoder(inputs_embeds=embedded, attention_mask=mask.long()).last_hidden_state
        return EncoderStates(states, mask)

    # ---- decoder

    def _decoder(self, memory: EncoderStates, tgt_hf: torch.Tensor, cache=None, use_cache: bool = False):
        from transformers.modeling_outputs import BaseModelOutput

        return self.hf(encoder_outputs=BaseModelOutput(last_hidden_state=memory.states),
                       attention_mask=memory.mask.long(), decoder_input_ids=tgt_hf, cache=cache, use_cache=use_cache,
                       output_attentions=True, return_dict=True)

    def init_state(self, memory: EncoderStates) -> HFState:
        from transformers import DynamicCache, EncoderDecoderCache

        # made here, empty: a cache the model makes itself is sized from its config's layer count,
        # which for T5 is the encoder's (num_layers), not the decoder's
        return HFState(EncoderDecoderCache(DynamicCache(), DynamicCache()), 0)

    def step(self, y_prev: torch.Tensor, state: HFState, memory: EncoderStates, alpha_override: Optional[torch.Tensor] = None,
             alpha_fn: Optional[AlphaFn] = None) -> Step:
        """One output token. The attention's weights cannot be replaced (``alpha_override``,
        ``alpha_fn``): they are computed and used inside the model's own code
        (``supports_attention_edit`` is False), and asking is a ConfigError."""
        if alpha_override is not None or alpha_fn is not None:
            raise ConfigError("this model's attention weights cannot be replaced: they are computed and used inside "
                              "the Hugging Face model's own code")
        out = self._decoder(memory, self.hf_ids(y_prev).unsqueeze(1), state.cache, use_cache=True)
        cross = torch.stack([a[:, :, 0] for a in out.cross_attentions], 1).float()  # (batch, layers, heads, src_len)
        return Step(self.our_logprobs(out.logits[:, -1], state.position), HFState(out.cache, state.position + 1),
                    self.default_attention(cross), None, cross)

    supports_attention_edit = False  # Decodable's contract: step() refuses alpha_override and alpha_fn

    def reorder(self, state: HFState, index: torch.Tensor) -> HFState:
        if state.cache is not None:
            state.cache.reorder_cache(index)
        return state

    def forced_cross_attention(self, memory: EncoderStates, tgt_in: torch.Tensor) -> torch.Tensor:
        """Every layer's and head's cross-attention reading tgt_in (batch, T) at once:
        (batch, layers, heads, T, src_len)."""
        out = self._decoder(memory, self.hf_ids(tgt_in))
        return torch.stack(out.cross_attentions, 1).float()

    def teacher_forced(self, memory: EncoderStates, tgt_in: torch.Tensor, input_scale: Optional[torch.Tensor] = None):
        if input_scale is not None:
            return super().teacher_forced(memory, tgt_in, input_scale)
        out = self._decoder(memory, self.hf_ids(tgt_in))
        logprobs = torch.stack([self.our_logprobs(out.logits[:, t], t) for t in range(tgt_in.size(1))], 1)
        cross = torch.stack(out.cross_attentions, 1).float()  # (batch, layers, heads, T, src_len)
        return logprobs, self.default_attention(cross)


def _embed_scale(hf_model) -> float:
    """The factor the encoder multiplies its token embeddings by before the first layer
    (sqrt(d_model) for Marian and BART with scale_embedding, else 1), so that ``embed_source``
    gives what ``encode(..., embedded=...)`` must be handed."""
    encoder = hf_model.get_encoder()
    scale = getattr(encoder, "embed_scale", None)
    embedding = encoder.get_input_embeddings()
    if scale is not None and not hasattr(embedding, "embed_scale"):
        return float(scale)
    return 1.0


# ---------------------------------------------------------------- vocabularies


class HFVocab:
    """One side of the model's own tokenizer, with this project's ids (module docstring)."""

    def __init__(self, tokenizer, specials: dict, source: bool, vocab: int, max_source: int):
        self.tokenizer, self.source, self.vocab, self.max_source = tokenizer, source, vocab, max_source
        self.eos, self.unk, self.pad = specials["eos"], specials["unk"], specials["pad"]
        self.known = len(tokenizer)  # ids the tokenizer can name; a model may have more (unused) rows
        self.to_ours = {self.eos: EOS, self.unk: UNK, self.pad: PAD}  # the model's specials -> this project's ids
        self.to_hf_ids = {PAD: self.pad, UNK: self.unk, EOS: self.eos}
        self.special_names = [str(tokenizer.convert_ids_to_tokens(h)) if h < len(tokenizer) else name for name, h in
                              (("<pad>", specials["pad"]), ("<unk>", specials["unk"]), ("<s>", specials["decoder_start"]),
                               ("</s>", specials["eos"]))]

    def __len__(self) -> int:
        return self.vocab + SHIFT

    def _ours(self, h: int) -> int:
        return self.to_ours.get(h, h + SHIFT)

    def encode(self, text: str) -> list[int]:
        """The tokenizer's ids for ``text`` (its end token included, cut to the model's longest
        input keeping that end), in this project's ids; none for blank text."""
        if not text.strip():
            return []
        ids = self.tokenizer(text)["input_ids"] if self.source else self.tokenizer(text_target=text)["input_ids"]
        if len(ids) > self.max_source:
            ids = ids[: self.max_source - 1] + ids[-1:]
        return [self._ours(int(h)) for h in ids]

    def hf_of(self, ids: Iterable[int]) -> list[int]:
        return [self.to_hf_ids.get(int(i), int(i) - SHIFT) for i in ids if int(i) != BOS]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        out = []
        for i in ids:
            i = int(i)
            h = i - SHIFT
            out.append(self.special_names[i] if i < SHIFT else
                       str(self.tokenizer.convert_ids_to_tokens(h)) if h < self.known else f"<id {h}>")
        return out

    def decode(self, ids: Iterable[int]) -> str:
        kept = [h for h in self.hf_of(int(i) for i in ids if int(i) not in (PAD, BOS, EOS)) if h < self.known]
        return self.tokenizer.decode(kept, skip_special_tokens=True) if kept else ""


# ---------------------------------------------------------------- opening an imported folder


def settings_of(raw: dict, where: Path) -> HFSettings:
    """The checked settings an imported folder's config.json holds (written by the import)."""
    hf = raw.get("hf") if isinstance(raw.get("hf"), dict) else None
    if hf is None:
        raise CheckpointError(f"{where}: no \"hf\" settings")
    try:
        sizes, specials, decoding = hf["sizes"], hf["specials"], dict(hf["decoding"])
        for key in ("banned", "banned_first"):
            decoding[key] = tuple(decoding[key])
        settings = HFSettings(hf["model_type"], dict(sizes), dict(specials), Decoding(**decoding), hf["src_lang"],
                              hf["tgt_lang"])
    except (KeyError, TypeError) as exc:
        raise CheckpointError(f"{where}: malformed \"hf\" settings ({type(exc).__name__}: {exc})") from None
    if settings.model_type not in ARCHITECTURES:
        raise CheckpointError(f"{where}: model_type {str(settings.model_type)[:40]!r} is not supported")
    return settings


def describe_raw(raw: dict, where: Path) -> tuple[ModelDescription, str, str]:
    """(description, source language, target language) without transformers installed."""
    settings = settings_of(raw, where)
    return describe(settings, str(raw.get("transformers_version", "5.x"))[:20]), settings.src_lang, settings.tgt_lang


def load_hf(folder: Path, raw: dict) -> tuple[HFSeq2Seq, HFVocab, HFVocab]:
    """The model and vocabularies of an imported folder (its hf/ files, read locally)."""
    version = transformers_version()
    from transformers import AutoModelForSeq2SeqLM

    settings = settings_of(raw, folder / "config.json")
    files = folder / HF_DIR
    on_disk = read_hf_settings(files, (settings.src_lang, settings.tgt_lang))
    if on_disk.as_dict() != settings.as_dict():
        raise CheckpointError(f"{folder / 'config.json'}: its settings no longer match {files}; import the model again")
    meta = _meta_model(files)
    _check_size(meta, str(files / "config.json"))
    try:
        model, info = AutoModelForSeq2SeqLM.from_pretrained(
            str(files), local_files_only=True, trust_remote_code=False, use_safetensors=True,
            attn_implementation="eager", dtype=torch.float32, output_loading_info=True)
    except Exception as exc:
        raise CheckpointError(f"{files}: transformers could not load the model ({type(exc).__name__}: "
                              f"{str(exc)[:200]})") from None
    if info.get("missing_keys") or info.get("mismatched_keys"):
        raise CheckpointError(f"{files}: weights missing or mis-shaped: "
                              f"{sorted(info.get('missing_keys') or info.get('mismatched_keys'))[:3]}")
    tokenizer = _tokenizer(files, settings)
    specials = dict(settings.specials, unk=_tokenizer_unk(tokenizer, settings))
    settings = replace(settings, specials=specials)
    adapter = HFSeq2Seq(model.eval(), settings, version)
    max_source = settings.sizes.get("max_position_embeddings", 512)
    vocab = adapter.hf_vocab
    return (adapter, HFVocab(tokenizer, specials, True, vocab, max_source),
            HFVocab(tokenizer, specials, False, vocab, max_source))


def _tokenizer_unk(tokenizer, settings: HFSettings) -> int:
    unk = tokenizer.unk_token_id
    if not isinstance(unk, int) or not 0 <= unk < settings.sizes["vocab_size"]:
        raise CheckpointError(f"{settings.model_type}: the tokenizer has no unknown token id inside the model's vocabulary")
    return unk
