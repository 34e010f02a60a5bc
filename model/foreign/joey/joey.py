"""Joey NMT 2.x models through the decoding interface, and their one-time import.

    python -m model.checkpoint import-joey JOEY_MODEL_DIR OUT_DIR [--ckpt best.ckpt]

Joey NMT (github.com/joeynmt/joeynmt) saves checkpoints with pickle. The import reads one
with PyTorch's restricted loader (``weights_only=True``: tensors and plain containers only, no
code runs) and writes a folder in this project's format: ``model.safetensors`` (Joey's own
parameter names), ``config.json`` (``"family": "joey-rnn"`` and the Joey model and data
settings), Joey's token lists and tokenizer files, and ``card.json``. Serving never unpickles.

The computation is Joey's own modules (embeddings, encoder, decoder RNN, attention, output
layers), wired as Joey's ``RecurrentDecoder._forward_step`` wires them; the adapter adds the
interface's boundary (model/core/decodable.py):

- ids: Joey numbers <unk> 0, <pad> 1, <s> 2, </s> 3; this project <pad> 0, <unk> 1. The adapter
  swaps ids 0 and 1 on the way in and the log-probability columns on the way out;
- Joey's encoder wants rows sorted longest first; the adapter sorts and restores the order;
- Joey's attention modules keep their keys and query on the module and return only the
  weights; the adapter forms the energies from the same layers (``JoeyModel.energies``), so it
  shares no state between concurrent decodes and traces carry e_ij as well as α_ij;
- Joey's search never emits <s> or <pad>; the adapter gives them probability 0 as Joey does;
- Joey's search stops at its config's ``testing.max_output_length`` (default: 1.5 x the source
  length), without </s>, and emits no </s> before ``testing.min_output_length`` (default 1):
  the import keeps both and the adapter states them (``JoeyModel.output_length``), so this
  project's search stops where Joey's does.

Supported: a recurrent encoder (bidirectional) and decoder, GRU or LSTM, Bahdanau or Luong
attention, input feeding on or off, 1 to 8 layers; or a Transformer encoder and decoder (any
head count, pre- or post-norm, tied output layer or not: model/foreign/joey/transformer.py); word /
char / SentencePiece / subword-nmt tokenization. Anything else is refused with one line naming
the setting.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable, Optional

import torch
from torch import nn

from model.core.config import MAX_HEADS, MAX_LAYERS, MAX_PARAMETERS, MAX_UNITS, MAX_VOCAB
from model.corpus.vocab import BOS, EOS, PAD, UNK
from model.core.decodable import STOP_JOEY, AlphaFn, BeamRule, Decodable, ModelDescription, OutputLength, Step
from model.core.errors import CheckpointError
from model.foreign.installed import installed_version
from model.foreign.joey.transformer import JoeyTransformerModel
from model.foreign.restricted_load import load_restricted
from model.speed.activations import tanh_of_sum

FAMILY = "joey-rnn"
JOEY_SPECIALS = {"unk_token": "<unk>", "pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>"}
MAX_CKPT_BYTES = 2 * 2**30  # a Joey checkpoint larger than this is refused before reading
MAX_TEXT_BYTES = 50 * 2**20  # config.yaml, token lists, tokenizer files
INSTALL_HINT = ('Joey NMT is not installed: pip install -e ".[joey]" && pip install --no-deps joeynmt==2.3.0 '
                "(joeynmt pins an old protobuf that Streamlit cannot share, hence --no-deps)")
TOKENIZER_FILES = {"model_file": "spm.model", "codes": "bpe.codes"}  # tokenizer_cfg keys naming files


def joeynmt_version() -> str:
    """The installed joeynmt's version, or CheckpointError with the install command."""
    return installed_version("joeynmt", INSTALL_HINT)


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class JoeySettings:
    """The parts of a Joey config this project uses, validated (``read_settings``)."""

    model: dict  # Joey's "model" section, as Joey's build_model reads it
    data: dict  # {"src": {...}, "trg": {...}}: lang, level, lowercase, normalize, tokenizer_type, tokenizer_cfg
    special_symbols: dict  # Joey's special tokens (ids fixed by Joey: unk 0, pad 1, bos 2, eos 3)
    testing: dict  # {"max_output_length": int, "min_output_length": int}: where Joey's search stops

    @property
    def is_transformer(self) -> bool:
        return self.model["encoder"].get("type") == "transformer"

    @property
    def rnn_type(self) -> str:
        return self.model["decoder"].get("rnn_type", "gru")

    @property
    def attention(self) -> str:
        return self.model["decoder"].get("attention", "bahdanau")

    @property
    def beam_rule(self) -> BeamRule:
        """Joey 2.3's beam search (model/decoding/search.py · ``joey_beam``) with the config's
        ``testing.beam_alpha`` (Joey's default -1: no length penalty)."""
        return BeamRule(max(self.testing.get("beam_alpha", -1.0), 0.0), STOP_JOEY)

    @property
    def output_length(self) -> OutputLength:
        """Where Joey 2.3's search (joeynmt/search.py) stops, per sentence: at most
        ``max_output_length`` tokens, </s> counted, or, when that is negative (Joey's default
        -1), int(1.5 x source length, </s> included); an output still going at the cap stops
        there without </s>. </s> is not chosen before ``min_output_length`` tokens (default 1).
        (Joey computes its ratio cap from the longest source of a batch; here each sentence has its
        own, which is Joey's cap for a sentence decoded alone or the longest of its batch.)"""
        cap, floor = self.testing["max_output_length"], self.testing["min_output_length"]
        ratio, extra = (JOEY_LENGTH_RATIO, 0) if cap < 0 else (0.0, cap)
        return OutputLength(ratio, extra, cut_at_cap=True, min_tokens=floor)


def _section(cfg: dict, *keys: str) -> dict:
    node: Any = cfg
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            raise CheckpointError(f"config: {'.'.join(keys)} is missing or not a mapping")
    return node


# The settings kept from each part of Joey's "model" section, with their types and defaults;
# anything else (pretrained embedding files, initialisers: the weights come from the checkpoint)
# is dropped, so nothing a config names is opened and nothing it nests is copied.
RNN_KEYS = {"type": (str, "recurrent"), "rnn_type": (str, "gru"), "hidden_size": (int, None),
            "num_layers": (int, 1), "dropout": (float, 0.0)}
DECODER_KEYS = {**RNN_KEYS, "attention": (str, "bahdanau"), "input_feeding": (bool, True),
                "init_hidden": (str, "bridge"), "hidden_dropout": (float, 0.0), "activation": (str, "tanh")}
ENCODER_KEYS = {**RNN_KEYS, "bidirectional": (bool, True)}
EMBEDDING_KEYS = {"embedding_dim": (int, None), "scale": (bool, False), "dropout": (float, 0.0)}
TOP_KEYS = {"tied_embeddings": (bool, False), "tied_softmax": (bool, False)}
# a Transformer encoder's or decoder's settings; those without a default stay absent when the
# config leaves them out, so that Joey's own defaults (which differ between encoder and decoder) apply
TRANSFORMER_KEYS = {"type": (str, "transformer"), "num_layers": (int, 1), "num_heads": (int, None),
                    "hidden_size": (int, None), "ff_size": (int, None), "dropout": (float, 0.1),
                    "emb_dropout": (float, None), "layer_norm": (str, None), "activation": (str, None),
                    "alpha": (float, None)}
# Joey 2.3's output length settings (its config.py parse_test_args: "testing" section) and their
# defaults; a negative max_output_length means int(JOEY_LENGTH_RATIO x source length).
TESTING_KEYS = {"max_output_length": (int, -1), "min_output_length": (int, 1), "beam_alpha": (float, -1.0)}
JOEY_LENGTH_RATIO = 1.5
MAX_OUTPUT_LENGTH = 1000  # tokens; a larger cap is refused (search runs that many steps at most)
ACTIVATIONS = ("tanh", "relu", "gelu", "leakyrelu", "relu6", "silu")


def _kept(node: dict, keys: dict, where: str) -> dict:
    """The whitelisted settings of ``node``, each checked against its type (ints for sizes)."""
    out = {}
    for key, (kind, default) in keys.items():
        value = node.get(key, default)
        if value is None:
            if default is None and key in ("hidden_size", "embedding_dim"):
                raise CheckpointError(f"{where}.{key} is missing")
            continue
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise CheckpointError(f"{where}.{key}={str(value)[:40]!r} must be {kind.__name__}")
        out[key] = value
    for key in ("hidden_size", "embedding_dim"):
        if key in out and not 1 <= out[key] <= MAX_UNITS:
            raise CheckpointError(f"{where}.{key}={out[key]} is outside 1..{MAX_UNITS}")
    if not 1 <= out.get("num_layers", 1) <= MAX_LAYERS:
        raise CheckpointError(f"{where}.num_layers={out['num_layers']} is outside 1..{MAX_LAYERS}")
    return out


def _model_settings(cfg: dict) -> dict:
    model = {**_kept(_section(cfg, "model"), TOP_KEYS, "model")}
    types = {part: _section(cfg, "model", part).get("type", "recurrent" if part == "encoder" else "transformer")
             for part in ("encoder", "decoder")}  # Joey's build_model defaults
    for part, kind in types.items():
        if kind not in ("recurrent", "transformer"):
            raise CheckpointError(f"model.{part}.type={str(kind)[:40]!r} is not supported (recurrent or transformer)")
    if types["encoder"] != types["decoder"]:
        mixed = f"a {types['encoder']} encoder with a {types['decoder']} decoder"
        raise CheckpointError(f"model: {mixed} is not supported; both recurrent, or both transformer")
    if types["encoder"] == "transformer":
        return _transformer_settings(cfg, model)
    for part, keys in (("encoder", ENCODER_KEYS), ("decoder", DECODER_KEYS)):
        sub = _section(cfg, "model", part)
        kept = _kept(sub, keys, f"model.{part}")
        if kept["rnn_type"] not in ("gru", "lstm"):
            raise CheckpointError(f"model.{part}.rnn_type={kept['rnn_type'][:40]!r} is not supported (gru or lstm)")
        kept["embeddings"] = _kept(_section(cfg, "model", part, "embeddings"), EMBEDDING_KEYS, f"model.{part}.embeddings")
        model[part] = kept
    if model["encoder"]["bidirectional"] is not True:
        raise CheckpointError("model.encoder.bidirectional=false is not supported (Joey's recurrent encoder "
                              "reads both directions' final states)")
    dec = model["decoder"]
    for key, allowed in (("attention", ("bahdanau", "luong")), ("init_hidden", ("bridge", "zero", "last")),
                         ("activation", ACTIVATIONS)):
        if dec[key] not in allowed:
            raise CheckpointError(f"model.decoder.{key}={dec[key][:40]!r} is not supported ({', '.join(allowed)})")
    return model


def _transformer_settings(cfg: dict, model: dict) -> dict:
    """A Transformer model section: sizes checked, normalisation placement and activation named."""
    for part in ("encoder", "decoder"):
        kept = _kept(_section(cfg, "model", part), TRANSFORMER_KEYS, f"model.{part}")
        for key in ("hidden_size", "ff_size", "num_heads"):
            if key not in kept:
                raise CheckpointError(f"model.{part}.{key} is missing")
        if not 1 <= kept["ff_size"] <= 4 * MAX_UNITS or not 1 <= kept["num_heads"] <= MAX_HEADS:
            raise CheckpointError(f"model.{part}: ff_size {kept['ff_size']} or num_heads {kept['num_heads']} is outside "
                                  f"1..{4 * MAX_UNITS} or 1..{MAX_HEADS}")
        if kept["hidden_size"] % kept["num_heads"]:
            raise CheckpointError(f"model.{part}: num_heads={kept['num_heads']} does not divide "
                                  f"hidden_size={kept['hidden_size']}")
        if kept.get("layer_norm", "pre") not in ("pre", "post"):
            raise CheckpointError(f"model.{part}.layer_norm={kept['layer_norm'][:20]!r} is not supported (pre or post)")
        if kept.get("activation", "relu") not in ACTIVATIONS:
            raise CheckpointError(f"model.{part}.activation={kept['activation'][:20]!r} is not supported "
                                  f"({', '.join(ACTIVATIONS)})")
        kept["embeddings"] = _kept(_section(cfg, "model", part, "embeddings"), EMBEDDING_KEYS, f"model.{part}.embeddings")
        model[part] = kept
    return model


def _tokenizer_settings(tok_cfg: Any, where: str) -> dict:
    """A side's tokenizer_cfg: file names, and plain settings of safe types only."""
    if not isinstance(tok_cfg, dict):
        raise CheckpointError(f"{where} is not a mapping")
    out = {}
    for key, value in tok_cfg.items():
        if key in TOKENIZER_FILES:
            if not isinstance(value, str) or not value:
                raise CheckpointError(f"{where}.{key} must be a file name")
        elif key == "separator":
            if not isinstance(value, str) or not re.fullmatch(r"[^\s-][^\s]{0,7}", value):
                raise CheckpointError("{where}.separator={found} must be 1-8 characters, no space, not starting with '-'",
                                      where=where, found=repr(str(value)[:20]))
        elif key == "pretokenizer":
            if value not in ("none", "moses"):
                raise CheckpointError(f"{where}.pretokenizer={str(value)[:20]!r} is not supported (none or moses)")
        elif key in ("alpha", "dropout", "nbest_size"):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise CheckpointError(f"{where}.{key} must be a number")
        else:
            continue  # other keys (e.g. training-time options) are not needed to tokenize
        out[key] = value
    return out


def read_settings(cfg: Any) -> JoeySettings:
    """Validate a Joey config (its YAML as a dict): recurrent models only; one CheckpointError
    line naming the first unsupported or malformed setting. Only known settings of the right
    types are kept."""
    if not isinstance(cfg, dict):
        raise CheckpointError("config: not a mapping")
    model = _model_settings(cfg)
    data = _section(cfg, "data")
    specials = data.get("special_symbols") or {}
    if not isinstance(specials, dict):
        raise CheckpointError("data.special_symbols is not a mapping")
    for key in ("sep_token", "lang_tags"):
        if specials.get(key):
            raise CheckpointError(f"data.special_symbols.{key} is not supported (prompts and language tags)")
    kept = {}
    for key, default in JOEY_SPECIALS.items():
        value = specials.get(key, default)
        if not isinstance(value, str) or not value or len(value) > 40:
            raise CheckpointError(f"data.special_symbols.{key}={str(value)[:40]!r} must be a non-empty string")
        kept[key] = value
    if len(set(kept.values())) < len(kept):
        raise CheckpointError("data.special_symbols: the four special tokens must differ")
    sides = {}
    for side in ("src", "trg"):
        spec = _section(cfg, "data", side)
        level = spec.get("level", "word")
        if level not in ("word", "char", "bpe"):
            raise CheckpointError(f"data.{side}.level={str(level)[:40]!r} is not supported (word, char or bpe)")
        kind = spec.get("tokenizer_type", spec.get("bpe_type", "sentencepiece"))
        if level == "bpe" and kind not in ("sentencepiece", "subword-nmt"):
            raise CheckpointError("data.{side}.tokenizer_type={found} is not supported (sentencepiece or subword-nmt)",
                                  side=side, found=repr(str(kind)[:40]))
        lang = spec.get("lang", side)
        if not isinstance(lang, str) or not re.fullmatch(r"[A-Za-z_-]{1,20}", lang):
            raise CheckpointError(f"data.{side}.lang={str(lang)[:40]!r} must be a language code")
        voc_file = spec.get("voc_file")
        sides[side] = {"lang": lang, "level": level, "lowercase": bool(spec.get("lowercase", False)),
                       "normalize": bool(spec.get("normalize", False)), "tokenizer_type": str(kind),
                       "tokenizer_cfg": _tokenizer_settings(spec.get("tokenizer_cfg") or {}, f"data.{side}.tokenizer_cfg"),
                       "voc_file": voc_file if isinstance(voc_file, str) else None}
    if sides["src"]["lang"] == sides["trg"]["lang"]:
        raise CheckpointError("data.src.lang and data.trg.lang are the same; Joey keys its tokenizers by language")
    return JoeySettings(model, sides, kept, _testing_settings(cfg.get("testing")))


def _testing_settings(testing: Any) -> dict:
    """Joey's output length settings from its "testing" section, each absent one at Joey's
    default: max_output_length 1..MAX_OUTPUT_LENGTH tokens, or negative for Joey's ratio cap
    (kept as -1); min_output_length up to MAX_OUTPUT_LENGTH (a negative one bans nothing: kept as 0)."""
    if testing is None:
        testing = {}
    if not isinstance(testing, dict):
        raise CheckpointError("testing is not a mapping")
    kept = {**{key: default for key, (_, default) in TESTING_KEYS.items()}, **_kept(testing, TESTING_KEYS, "testing")}
    cap, floor = kept["max_output_length"], kept["min_output_length"]
    if cap == 0 or cap > MAX_OUTPUT_LENGTH:
        raise CheckpointError("testing.max_output_length={cap} must be 1..{limit} tokens, or negative for Joey's "
                              "1.5 x source length", cap=cap, limit=MAX_OUTPUT_LENGTH)
    if floor > MAX_OUTPUT_LENGTH:
        raise CheckpointError(f"testing.min_output_length={floor} is more than {MAX_OUTPUT_LENGTH} tokens")
    alpha = kept["beam_alpha"]
    if not -10 <= alpha <= 10:
        raise CheckpointError(f"testing.beam_alpha={alpha} is outside -10..10")
    return {"max_output_length": max(cap, -1), "min_output_length": max(floor, 0), "beam_alpha": alpha}


def _special_namespace(specials: dict) -> SimpleNamespace:
    """Joey's special-symbol settings as its Vocabulary reads them (ids fixed by its order)."""
    return SimpleNamespace(**specials, unk_id=0, pad_id=1, bos_id=2, eos_id=3, sep_token=None, sep_id=None,
                           lang_tags=[])


# ---------------------------------------------------------------- the interface


def swap_specials(size: int) -> torch.Tensor:
    """(size,) the id map between Joey and this project: 0 <-> 1 (<unk>, <pad>), others fixed.
    It is its own inverse."""
    perm = torch.arange(size)
    perm[0], perm[1] = 1, 0
    return perm


@dataclass
class JoeyMemory:
    """The encoded source, row-aligned with the decoder's batch."""

    values: torch.Tensor  # (batch, src_len, 2h) encoder outputs, zeros at padding
    final: torch.Tensor  # (batch, 2h) [forward; backward] final states of the top encoder layer
    keys: torch.Tensor  # (batch, src_len, a) the attention's key projection of ``values``
    mask: torch.Tensor  # (batch, src_len) True at real source tokens

    def select(self, index: torch.Tensor) -> "JoeyMemory":
        return JoeyMemory(*(t.index_select(0, index) for t in (self.values, self.final, self.keys, self.mask)))


@dataclass
class JoeyState:
    """Joey's decoder state: the RNN's hidden (and LSTM cell) state and the last attentional vector."""

    hidden: torch.Tensor  # (layers, batch, h)
    cell: Optional[torch.Tensor]  # (layers, batch, h) for LSTM, else None
    att_vector: torch.Tensor  # (batch, 1, h) ~h_{i-1}, fed back with input feeding

    def select(self, index: torch.Tensor) -> "JoeyState":
        return JoeyState(self.hidden.index_select(1, index),
                         None if self.cell is None else self.cell.index_select(1, index),
                         self.att_vector.index_select(0, index))


class JoeyModel(nn.Module, Decodable):
    """A Joey NMT recurrent ``joeynmt.model.Model`` behind the decoding interface."""

    def __init__(self, joey: nn.Module, settings: JoeySettings, version: str):
        super().__init__()
        self.joey, self.settings, self.version = joey, settings, version
        self.register_buffer("src_map", swap_specials(joey.src_embed.lut.num_embeddings), persistent=False)
        self.register_buffer("tgt_map", swap_specials(joey.decoder.output_layer.out_features), persistent=False)
        never = torch.zeros(joey.decoder.output_layer.out_features, dtype=torch.bool)
        never[[BOS, PAD]] = True  # Joey's search never emits <s> or <pad>
        self.register_buffer("never_emitted", never, persistent=False)
        self.register_buffer("never_ids", never.nonzero()[:, 0], persistent=False)  # the same, as ids

    @property
    def description(self) -> ModelDescription:
        return describe(self.settings, self.version)

    @property
    def output_length(self) -> OutputLength:
        """Joey's own length limits (``JoeySettings.output_length``), not the search settings' cap."""
        return self.settings.output_length

    @property
    def beam_rule(self) -> BeamRule:
        return self.settings.beam_rule

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        return self.joey.src_embed(self.src_map[src])  # (batch, src_len, e)

    def encode(self, src: torch.Tensor, src_len: torch.Tensor, embedded: Optional[torch.Tensor] = None) -> JoeyMemory:
        emb = self.embed_source(src) if embedded is None else embedded
        mask = src != PAD  # (batch, src_len)
        order = torch.argsort(src_len, descending=True, stable=True)  # Joey packs rows longest first
        back = torch.argsort(order)
        values, final = self.joey.encoder(emb[order], src_len[order].cpu(), mask[order].unsqueeze(1))
        values, final = values[back], final[back]  # (batch, src_len, 2h), (batch, 2h)
        return JoeyMemory(values, final, self.joey.decoder.attention.key_layer(values), mask)

    def init_state(self, memory: JoeyMemory) -> JoeyState:
        """Joey's ``RecurrentDecoder._init_hidden``: bridge (tanh of a projection of the final
        encoder states), last (their forward half when twice the decoder's size) or zero."""
        dec, batch = self.joey.decoder, memory.final.size(0)
        option = dec.init_hidden_option
        if option == "bridge":
            first = dec.activation(dec.bridge_layer(memory.final))  # (batch, h)
        elif option == "last":
            first = memory.final[:, :dec.hidden_size] if memory.final.size(1) == 2 * dec.hidden_size else memory.final
        else:
            first = memory.final.new_zeros(batch, dec.hidden_size)
        hidden = first.unsqueeze(0).repeat(dec.num_layers, 1, 1)  # (layers, batch, h)
        return JoeyState(hidden, hidden if isinstance(dec.rnn, nn.LSTM) else None,
                         memory.values.new_zeros(batch, 1, dec.hidden_size))

    def step(self, y_prev: torch.Tensor, state: JoeyState, memory: JoeyMemory,
             alpha_override: Optional[torch.Tensor] = None, alpha_fn: Optional[AlphaFn] = None) -> Step:
        """Joey's ``_forward_step`` and output layer: the RNN reads E y_{i-1} (and ~h_{i-1} with
        input feeding), its new top state s_i queries the attention, ~h_i = act(W [s_i; c_i]),
        p(y_i) = softmax(W_o ~h_i)."""
        dec = self.joey.decoder
        emb = self.joey.trg_embed(self.tgt_map[y_prev]).unsqueeze(1)  # (batch, 1, e)
        rnn_input = dec.emb_dropout(torch.cat([emb, state.att_vector], dim=2) if dec.input_feeding else emb)
        previous = state.hidden if state.cell is None else (state.hidden, state.cell)
        _, new = dec.rnn(rnn_input, previous)
        hidden, cell = (new, None) if state.cell is None else new  # (layers, batch, h)
        query = hidden[-1].unsqueeze(1)  # (batch, 1, h) the top layer's new state
        energies = self.energies(query, memory)  # (batch, src_len)
        alpha = torch.softmax(energies.masked_fill(~memory.mask, float("-inf")), dim=-1)
        alpha = alpha_fn(alpha) if alpha_fn is not None else alpha
        alpha = alpha_override if alpha_override is not None else alpha
        context = torch.bmm(alpha.unsqueeze(1).to(memory.values.dtype), memory.values)  # (batch, 1, 2h)
        att_vector = dec.activation(dec.att_vector_layer(dec.hidden_dropout(torch.cat([query, context], dim=2))))
        logits = dec.output_layer(att_vector).squeeze(1)  # (batch, V) in Joey's ids
        logprobs = self._our_ids(torch.log_softmax(logits.float(), dim=-1))
        return Step(logprobs, JoeyState(hidden, cell, att_vector), alpha, energies)

    def _our_ids(self, logprobs: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (batch, V) in Joey's ids -> this project's (``swap_specials``), with
        -inf where Joey's search never emits. Without gradients the two swapped columns are swapped
        in place: re-indexing every column cost 8% of a beam-5 decode, and masking every column 2%."""
        if torch.is_grad_enabled() and logprobs.requires_grad:
            return logprobs.index_select(1, self.tgt_map).masked_fill(self.never_emitted, float("-inf"))
        logprobs[:, :2] = logprobs[:, [1, 0]]  # the right side is a copy: <unk> and <pad> trade places
        return logprobs.index_fill_(1, self.never_ids, float("-inf"))  # two columns, not a (batch, V) mask

    def energies(self, query: torch.Tensor, memory: JoeyMemory) -> torch.Tensor:
        """e_ij (batch, src_len) from the query s_i (batch, 1, h), with the layers of Joey's attention
        module as its ``forward`` uses them (Joey's forward keeps keys and query on the module
        and returns only the weights): Bahdanau v^T tanh(W q + K), Luong q^T K."""
        att = self.joey.decoder.attention
        if self.settings.attention == "luong":
            return torch.bmm(query, memory.keys.transpose(1, 2)).squeeze(1)
        return att.energy_layer(tanh_of_sum(att.query_layer(query), memory.keys)).squeeze(2)

    def reorder(self, state: JoeyState, index: torch.Tensor) -> JoeyState:
        return state.select(index)

    @property
    def target_embedding(self) -> nn.Module:
        return self.joey.trg_embed


def _length_rule(testing: dict) -> str:
    """The Joey settings that stop its search, in a sentence (``JoeySettings.output_length``)."""
    cap, floor = testing["max_output_length"], testing["min_output_length"]
    most = (f"at most {cap} tokens (testing.max_output_length)" if cap > 0 else
            "at most int(1.5 x source tokens) tokens (Joey's default: testing.max_output_length not set)")
    least = ("" if not floor else "; </s> is never the first token (testing.min_output_length 1)" if floor == 1
             else f"; </s> is never among the first {floor} tokens (testing.min_output_length)")
    return (f"Decoding stops where Joey's search does: outputs of {most}, </s> counted, and one still going "
            f"at that cap stops there without </s> (this project's models end every output with </s>){least}.")


def describe(settings: JoeySettings, version: str) -> ModelDescription:
    """The imported model in a line, and how its equations differ from RNNsearch's."""
    if settings.is_transformer:
        return describe_transformer(settings, version)
    enc, dec = settings.model["encoder"], settings.model["decoder"]
    cells = settings.rnn_type.upper()
    luong = settings.attention == "luong"
    feeding = dec.get("input_feeding", True)
    init = dec.get("init_hidden", "bridge")
    summary = (f"{enc.get('num_layers', 1)}-layer bidirectional {enc.get('rnn_type', 'gru').upper()} encoder "
               f"({enc.get('hidden_size')} units), {dec.get('num_layers', 1)}-layer {cells} decoder "
               f"({dec.get('hidden_size')} units), {settings.attention} attention, "
               f"input feeding {'on' if feeding else 'off'}")
    differences = [
        "The decoder RNN runs first and its new state s_i asks where to look (Luong et al. 2015); "
        "RNNsearch's alignment model reads the previous state s_{i-1}.",
        "Score: e_ij = s_i^T W_a h_j (Luong's \"general\")." if luong else
        "Score: e_ij = v_a^T tanh(W_a s_i + U_a h_j) (Bahdanau's additive form, on s_i).",
        "Output: ~h_i = tanh(W_c [s_i; c_i]) and p(y_i) = softmax(W_o ~h_i): one layer, no maxout and no "
        "E y_{i-1} in the output (RNNsearch: maxout over U_o s_i + V_o E y_{i-1} + C_o c_i).",
        "Input feeding: the RNN reads [E y_{i-1}; ~h_{i-1}], so c_i reaches the recurrence one step later."
        if feeding else "No input feeding: the RNN reads E y_{i-1} only; c_i reaches the output, not the recurrence.",
        {"bridge": "s_0 = tanh(W_b [→h_Tx; ←h_1]) from both directions' final states (RNNsearch: ←h_1 only).",
         "zero": "s_0 = 0.", "last": "s_0 is the encoder's final forward state."}[init],
        "The source ends with </s>, which attention can look at.",
        _length_rule(settings.testing),
    ]
    if settings.rnn_type == "lstm":
        differences.insert(0, "LSTM cells instead of the paper's gated units (GRU).")
    return ModelDescription(FAMILY, True, settings.attention, origin=f"Joey NMT {version} (imported)", summary=summary,
                            differences=tuple(differences))


def describe_transformer(settings: JoeySettings, version: str) -> ModelDescription:
    """An imported Joey Transformer in a line, and how it differs from RNNsearch."""
    enc, dec = settings.model["encoder"], settings.model["decoder"]
    norms = {part: settings.model[part].get("layer_norm", "pre" if part == "encoder" else "post")
             for part in ("encoder", "decoder")}
    tied = [name for name in ("tied_embeddings", "tied_softmax") if settings.model.get(name)]
    summary = (f"Transformer (Joey NMT): {enc['num_layers']} encoder and {dec['num_layers']} decoder layers, "
               f"{dec['num_heads']} heads, d_model {dec['hidden_size']}, feed-forward {dec['ff_size']}; one attention "
               f"matrix = layer {dec['num_layers']}'s mean over heads (Joey's own)")
    differences = (
        "A Transformer: self-attention layers instead of the paper's recurrent encoder and decoder, and "
        f"{dec['num_layers']} cross-attentions of {dec['num_heads']} heads each (scaled dot products), not one "
        "additive alignment model.",
        f"Layer normalisation: {norms['encoder']}-norm encoder layers, {norms['decoder']}-norm decoder layers; "
        + ("tied: " + ", ".join(tied) + "." if tied else "no tied embeddings."),
        "Views that take one attention matrix show the last decoder layer's mean over heads, as Joey's own decoder "
        "returns it; every layer's and head's weights are read from the network.",
        "The source ends with </s>, which attention can look at.",
        _length_rule(settings.testing),
    )
    return ModelDescription("joey-transformer", True, "multi-head dot-product", origin=f"Joey NMT {version} (imported)",
                            summary=summary, differences=differences)


# ---------------------------------------------------------------- vocabularies


class JoeyVocab:
    """One side's Joey token list and tokenizer, with this project's ids (``swap_specials``)."""

    def __init__(self, tokens: list[str], tokenizer, source: bool):
        """``tokens`` in Joey's order (specials first: unk, pad, bos, eos); ``source``: encode()
        ends with </s>, as Joey's source sentences do."""
        self.tokens = [tokens[int(i)] for i in swap_specials(len(tokens))]  # this project's id order
        self.index = {t: i for i, t in reversed(list(enumerate(self.tokens)))}
        self.tokenizer, self.source = tokenizer, source

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, text: str) -> list[int]:
        """Ids of ``text``; none for text that Joey's pre-processing empties (blank, or only
        characters its normalisation removes), which Joey would refuse with an assertion."""
        if not text.strip():
            return []
        try:
            pieces = self.tokenizer(self.tokenizer.pre_process(text), is_train=False)
        except AssertionError:
            return []
        return [self.index.get(p, UNK) for p in pieces] + ([EOS] if self.source else [])

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.tokens[int(i)] for i in ids]

    def decode(self, ids: Iterable[int]) -> str:
        kept = self.pieces(i for i in ids if int(i) not in (PAD, BOS, EOS))
        try:
            return self.tokenizer.post_process(kept) if kept else ""
        except AssertionError:  # Joey asserts that detokenised text is not empty (e.g. only "▁")
            return ""


# ---------------------------------------------------------------- files


def _read_text(path: Path, what: str) -> str:
    if not path.is_file():
        raise CheckpointError(f"{path}: missing ({what})")
    if path.stat().st_size > MAX_TEXT_BYTES:
        raise CheckpointError(f"{path}: larger than {MAX_TEXT_BYTES // 2**20} MiB; not a {what}")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def read_tokens(path: Path) -> list[str]:
    """A Joey token list: one token per line (Joey writes its specials first)."""
    tokens = _read_text(path, "token list").splitlines()
    if not 5 <= len(tokens) <= MAX_VOCAB:
        raise CheckpointError(f"{path}: {len(tokens)} tokens; a Joey vocabulary has its 4 specials and more, "
                              f"at most {MAX_VOCAB:,}")
    return tokens


def read_joey_checkpoint(path: Path) -> dict[str, torch.Tensor]:
    """The ``model_state`` of a Joey .ckpt, read with PyTorch's restricted unpickler
    (``weights_only=True``): anything but tensors and plain containers is refused, unrun."""
    ckpt = load_restricted(path, MAX_CKPT_BYTES, "a Joey checkpoint such as best.ckpt")
    state = ckpt.get("model_state") if isinstance(ckpt, dict) else None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"{path}: no model_state of tensors; not a Joey NMT checkpoint")
    return state


def _build(settings: JoeySettings, src_tokens: list[str], tgt_tokens: list[str]):
    """Joey's own Vocabulary objects and (untrained) Model for ``settings``."""
    from joeynmt.model import build_model
    from joeynmt.tokenizers import build_tokenizer  # noqa: F401 (its logger, quietened below)
    from joeynmt.vocabulary import Vocabulary

    quiet_joey_logs()
    specials = _special_namespace(settings.special_symbols)
    try:
        src_vocab, tgt_vocab = Vocabulary(src_tokens, specials), Vocabulary(tgt_tokens, specials)
        with torch.device("meta"):  # the structure only: no memory, no initialisation, until its size is checked
            model = build_model(copy.deepcopy(settings.model), src_vocab=src_vocab, trg_vocab=tgt_vocab)
    except Exception as exc:  # Joey's ConfigurationError, AssertionError, TypeError on odd values
        raise CheckpointError(f"config: Joey could not build this model ({type(exc).__name__}: {exc})") from None
    size = sum(p.numel() for p in model.parameters())
    if size > MAX_PARAMETERS:
        raise CheckpointError(f"config: asks for {size:,} parameters, more than the {MAX_PARAMETERS:,} this loader allows")
    return model.to_empty(device="cpu"), src_vocab, tgt_vocab


def _all_tokens(vocab) -> list[str]:
    """A Joey Vocabulary's tokens in id order (its public array-to-tokens call)."""
    import numpy as np

    return vocab.arrays_to_sentences(np.arange(len(vocab))[None], cut_at_eos=False, skip_pad=False)[0]


def _check_state(state: dict[str, torch.Tensor], model: nn.Module, where: Path) -> None:
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    missing, unexpected = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or unexpected:
        raise CheckpointError(f"{where}: tensor names do not match the config (missing {missing[:3]}, "
                              f"unexpected {unexpected[:3]})")
    for name, shape in expected.items():
        if tuple(state[name].shape) != shape:
            raise CheckpointError(f"{where}: tensor {name} has shape {tuple(state[name].shape)}, config implies {shape}")
        if not state[name].is_floating_point() or not torch.isfinite(state[name]).all():
            raise CheckpointError(f"{where}: tensor {name} is not finite floating point")


@dataclass(frozen=True)
class JoeyImport:
    """Everything read from a Joey model folder, checked, ready to be written as a checkpoint
    folder (``model.checkpoints.folder.import_joey`` writes it)."""

    settings: JoeySettings
    state: dict  # parameter name -> tensor, Joey's names, shapes checked against the config
    tokens: dict  # "src" / "trg" -> Joey's token list (specials first)
    data: dict  # "src" / "trg" -> the side's settings, files named relative to the new folder
    files: dict  # file name in the new folder -> path to copy it from (tokenizer files)
    card: dict  # the imported model's card
    version: str  # the joeynmt that validated it


def read_joey_dir(model_dir: str | Path, ckpt: str = "", name: str = "") -> JoeyImport:
    """Read and check a Joey NMT model folder: config.yaml, src_vocab.txt, trg_vocab.txt,
    tokenizer files and a .ckpt (``ckpt``, else best.ckpt, else latest.ckpt)."""
    import yaml

    version = joeynmt_version()
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise CheckpointError(f"{model_dir}: not a Joey model folder (no such directory)")
    try:
        cfg = yaml.safe_load(_read_text(model_dir / "config.yaml", "Joey config"))
    except yaml.YAMLError as exc:
        raise CheckpointError(f"{model_dir / 'config.yaml'}: not valid YAML ({str(exc).splitlines()[0]})") from None
    try:
        settings = read_settings(cfg)
    except CheckpointError as exc:
        raise CheckpointError(f"{model_dir / 'config.yaml'}: {exc}") from None
    if ckpt and Path(ckpt).name != ckpt:
        raise CheckpointError(f"--ckpt {ckpt[:80]!r}: give a file name inside {model_dir}")
    ckpt_path = model_dir / ckpt if ckpt else next((model_dir / n for n in ("best.ckpt", "latest.ckpt")
                                                   if (model_dir / n).is_file()), model_dir / "best.ckpt")
    _build_tokenizers(settings, {side: settings.data[side]["tokenizer_cfg"] for side in ("src", "trg")},
                      lambda name: _tokenizer_file(model_dir, name))  # fails here, before anything is written
    state = read_joey_checkpoint(ckpt_path)
    tokens = {side: read_tokens(model_dir / f"{side}_vocab.txt") for side in ("src", "trg")}  # Joey writes these
    model, src_vocab, tgt_vocab = _build(settings, tokens["src"], tokens["trg"])
    _check_state(state, model, ckpt_path)
    data, files = {}, {}
    for side, vocab in (("src", src_vocab), ("trg", tgt_vocab)):
        tokens[side] = _all_tokens(vocab)  # as Joey's Vocabulary numbers them
        tok_cfg = dict(settings.data[side]["tokenizer_cfg"])
        for key, suffix in TOKENIZER_FILES.items():
            if key in tok_cfg:
                tok_cfg[key] = f"{side}.{suffix}"
                files[tok_cfg[key]] = _tokenizer_file(model_dir, settings.data[side]["tokenizer_cfg"][key])
        data[side] = dict(settings.data[side], voc_file=f"{side}_vocab.txt", tokenizer_cfg=tok_cfg)
    card = dict(import_card(name or model_dir.name, settings, version, model_dir, ckpt_path),
                parameters=sum(t.numel() for t in state.values()))
    return JoeyImport(settings, state, tokens, data, files, card, version)


def _tokenizer_file(model_dir: Path, given: str) -> Path:
    """A tokenizer file named in Joey's config, looked up by its name in the Joey model folder
    (Joey copies it there when it trains); nothing outside that folder is read."""
    found = model_dir / Path(given).name
    if not found.is_file():
        raise CheckpointError(f"{found}: missing; the config names {given[:80]!r} (copy that file into {model_dir})")
    if found.stat().st_size > MAX_TEXT_BYTES:
        raise CheckpointError(f"{found}: larger than {MAX_TEXT_BYTES // 2**20} MiB")
    return found


def import_card(name: str, settings: JoeySettings, version: str, model_dir: Path, ckpt_path: Path) -> dict:
    """The card of an imported model: where it came from and what it is (no scores: run
    ``python -m model.evaluate`` on it)."""
    description = describe(settings, version)
    return {"name": name, "arch": FAMILY, "origin": description.origin, "summary": description.summary,
            "trained_on": f"a Joey NMT model, imported from {model_dir.name}",
            "deviations": list(description.differences), "imported_from": f"{model_dir.name}/{ckpt_path.name}",
            "how_trained": f"Trained with Joey NMT outside this project; imported from {model_dir.name}/"
                           f"{ckpt_path.name} with python -m model.checkpoint import-joey (joeynmt {version})."}


def quiet_joey_logs() -> None:
    """Joey's module loggers print INFO lines to stderr; keep their warnings only."""
    import logging

    for name in list(logging.root.manager.loggerDict):
        if name.startswith("joeynmt"):
            logging.getLogger(name).setLevel(logging.WARNING)


def _settings_of(raw: dict, where: Path) -> JoeySettings:
    joey_cfg = raw.get("joey") if isinstance(raw.get("joey"), dict) else {}
    data = joey_cfg.get("data") if isinstance(joey_cfg.get("data"), dict) else {}
    try:
        return read_settings({"model": joey_cfg.get("model"), "data": dict(data, special_symbols=joey_cfg.get("special_symbols")),
                              "testing": joey_cfg.get("testing")})
    except CheckpointError as exc:
        raise CheckpointError(f"{where}: {exc}") from None


def describe_raw(raw: dict, where: Path) -> tuple[ModelDescription, str, str]:
    """(description, source language, target language) of an imported folder's config.json,
    without joeynmt installed."""
    settings = _settings_of(raw, where)
    return (describe(settings, str(raw.get("joeynmt_version", "2.x"))[:20]), settings.data["src"]["lang"],
            settings.data["trg"]["lang"])


def build_joey(folder: Path, raw: dict) -> tuple[Decodable, JoeyVocab, JoeyVocab]:
    """The model (weights not yet loaded: ``model.checkpoints.families.load_model`` reads them) and the
    vocabularies of an imported folder whose config.json is ``raw``."""
    version = joeynmt_version()
    settings = _settings_of(raw, folder / "config.json")
    tokens = {side: read_tokens(_inside(folder, settings.data[side].get("voc_file") or f"{side}_vocab.txt"))
              for side in ("src", "trg")}
    model, src_vocab, tgt_vocab = _build(settings, tokens["src"], tokens["trg"])
    src_tok, tgt_tok = _build_tokenizers(settings, {side: settings.data[side]["tokenizer_cfg"] for side in ("src", "trg")},
                                         lambda name: _inside(folder, name))
    _set_vocab(src_tok, src_vocab)
    _set_vocab(tgt_tok, tgt_vocab)
    adapter = (JoeyTransformerModel(model, describe(settings, version), settings.output_length, settings.beam_rule,
                                    swap_specials(model.src_embed.lut.num_embeddings),
                                    swap_specials(model.decoder.output_layer.out_features))
               if settings.is_transformer else JoeyModel(model, settings, version))
    return (adapter, JoeyVocab(_all_tokens(src_vocab), src_tok, source=True),
            JoeyVocab(_all_tokens(tgt_vocab), tgt_tok, source=False))


def _build_tokenizers(settings: JoeySettings, tok_cfgs: dict, locate) -> tuple:
    """Joey's tokenizers (source, target) for ``settings``, with each tokenizer file named in
    ``tok_cfgs`` found by ``locate(name) -> Path``."""
    from joeynmt.tokenizers import build_tokenizer

    data = {side: dict(settings.data[side], tokenizer_cfg={k: (str(locate(v)) if k in TOKENIZER_FILES else v)
                                                            for k, v in tok_cfgs[side].items()})
            for side in ("src", "trg")}
    try:
        tokenizers = build_tokenizer(data)
    except (Exception, SystemExit) as exc:  # Joey asserts; subword-nmt's argument parser exits
        raise CheckpointError(f"config: Joey could not build its tokenizers ({type(exc).__name__}: {exc})") from None
    return tokenizers[data["src"]["lang"]], tokenizers[data["trg"]["lang"]]


def _set_vocab(tokenizer, vocab) -> None:
    """Joey's ``set_vocab``. Joey 2.3's SentencePiece tokenizer also calls the processor's
    ``SetVocabulary``, which sentencepiece 0.2.1 and later no longer have; without it the
    special tokens are still set, and a piece outside the token list reads as <unk> (the
    SentencePiece model was usually trained with the same pieces, so this rarely differs)."""
    from joeynmt.tokenizers import BasicTokenizer

    try:
        tokenizer.set_vocab(vocab)
    except AttributeError:
        BasicTokenizer.set_vocab(tokenizer, vocab)


def _inside(folder: Path, name: Any) -> Path:
    """``folder / name`` for a plain file name; anything with a path in it is refused."""
    if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
        raise CheckpointError("{path}: file name {found} must be a plain name inside the checkpoint folder",
                              path=str(folder / "config.json"), found=repr(str(name)[:80]))
    return folder / name
