"""Models trained in bentrevett/pytorch-seq2seq's notebook on this paper ("Neural Machine
Translation by Jointly Learning to Align and Translate", German to English on Multi30k), behind
the decoding interface.

What the student saves at the end of the notebook (docs/own-model.md):

    torch.save(model.state_dict(), "tut3-model.pt")          # the notebook already does this
    json.dump({"source": de_vocab.get_itos(), "target": en_vocab.get_itos()}, open("vocab.json", "w"))

The network, as the notebook describes it:

- ``Encoder``: embeddings E x_j, a one-layer bidirectional GRU whose outputs are the annotations
  h_j = [→h_j; ←h_j], and s_0 = tanh(W_fc [→h_Tx; ←h_1]) from both directions' final states.
- ``Attention``: e_ij = v^T tanh(W_attn [s_{i-1}; h_j] + b) (one layer over the concatenation;
  v without a bias), α_ij = softmax_j(e_ij), c_i = Σ_j α_ij h_j.
- ``Decoder``: a GRU reads [E y_{i-1}; c_i] with state s_{i-1}; p(y_i) = softmax(W_out [s_i; c_i; E y_{i-1}] + b).

Its text handling and decoding, reproduced here: spaCy's German tokenizer rules (``spacy.blank("de")``
where spaCy is installed; without it, a split into words and punctuation, which gives the same
tokens for sentences of words and punctuation marks, hyphenated words kept whole as spaCy's German
rules keep them), each token lower-cased, wrapped in <sos> ... <eos>; unknown words read as <unk>;
greedy decoding from <sos> stops after <eos> or at 25 tokens (the notebook's ``max_output_length``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from model.core.decodable import AlphaFn, ModelDescription, Step
from model.foreign.tutorials.tutorial_model import TutorialModel
from model.foreign.tutorials.tutorial_vocab import TutorialVocab, special_ids

KIND = "bentrevett"
MAX_OUTPUT = 25  # the notebook's max_output_length
TITLE = "bentrevett/pytorch-seq2seq notebook \"Neural Machine Translation by Jointly Learning to Align and Translate\""
LICENCE = "MIT (bentrevett/pytorch-seq2seq)"
SPECIALS = {"pad": "<pad>", "unk": "<unk>", "bos": "<sos>", "eos": "<eos>"}
LANGS = ("de", "en")
WORDS_AND_PUNCTUATION = re.compile(r"\w+(?:[-'’.]\w+)*|[^\w\s]")


@lru_cache(maxsize=4)
def tokenizer(lang: str) -> Callable[[str], list[str]]:
    """spaCy's tokenizer rules for ``lang`` (a blank pipeline: its rules, no trained model), or
    the split into words and punctuation when spaCy is not installed."""
    try:
        import spacy
    except ImportError:
        return WORDS_AND_PUNCTUATION.findall
    rules = spacy.blank(lang).tokenizer
    return lambda text: [t.text for t in rules(text) if not t.is_space]


def source_tokens(text: str, lang: str = "de") -> list[str]:
    return ["<sos>"] + [t.lower() for t in tokenizer(lang)(text)] + ["<eos>"]


def target_tokens(text: str, lang: str = "en") -> list[str]:
    return [t.lower() for t in tokenizer(lang)(text)]


def vocabularies(source: list[str], target: list[str], where: str,
                 langs: tuple[str, str] = LANGS) -> tuple[TutorialVocab, TutorialVocab]:
    return (TutorialVocab(source, special_ids(source, SPECIALS, where, "source"),
                          lambda text: source_tokens(text, langs[0])),
            TutorialVocab(target, special_ids(target, SPECIALS, where, "target"),
                          lambda text: target_tokens(text, langs[1])))


class Encoder(nn.Module):
    def __init__(self, input_dim: int, embedding_dim: int, encoder_hidden_dim: int, decoder_hidden_dim: int):
        super().__init__()
        self.embedding = nn.Embedding(input_dim, embedding_dim)
        self.rnn = nn.GRU(embedding_dim, encoder_hidden_dim, bidirectional=True)
        self.fc = nn.Linear(encoder_hidden_dim * 2, decoder_hidden_dim)


class Attention(nn.Module):
    def __init__(self, encoder_hidden_dim: int, decoder_hidden_dim: int):
        super().__init__()
        self.attn_fc = nn.Linear(encoder_hidden_dim * 2 + decoder_hidden_dim, decoder_hidden_dim)
        self.v_fc = nn.Linear(decoder_hidden_dim, 1, bias=False)


class Decoder(nn.Module):
    def __init__(self, output_dim: int, embedding_dim: int, encoder_hidden_dim: int, decoder_hidden_dim: int):
        super().__init__()
        self.attention = Attention(encoder_hidden_dim, decoder_hidden_dim)
        self.embedding = nn.Embedding(output_dim, embedding_dim)
        self.rnn = nn.GRU(encoder_hidden_dim * 2 + embedding_dim, decoder_hidden_dim)
        self.fc_out = nn.Linear(encoder_hidden_dim * 2 + decoder_hidden_dim + embedding_dim, output_dim)


@dataclass
class Memory:
    annotations: torch.Tensor  # (batch, src_len, 2He) h_j, zeros at padding
    first: torch.Tensor  # (batch, Hd) s_0
    mask: torch.Tensor  # (batch, src_len) True at real source tokens

    def select(self, index: torch.Tensor) -> "Memory":
        return Memory(*(t.index_select(0, index) for t in (self.annotations, self.first, self.mask)))


def sizes_of(state: dict[str, torch.Tensor]) -> dict:
    return {"src_vocab": state["encoder.embedding.weight"].shape[0], "tgt_vocab": state["decoder.fc_out.weight"].shape[0],
            "embedding": state["encoder.embedding.weight"].shape[1],
            "encoder_hidden": state["encoder.rnn.weight_hh_l0"].shape[1],
            "decoder_hidden": state["decoder.rnn.weight_hh_l0"].shape[1],
            "tgt_embedding": state["decoder.embedding.weight"].shape[1]}


class BentrevettModel(TutorialModel):
    """The notebook's ``Seq2Seq`` (``Encoder``, ``Attention``, ``Decoder``) behind the decoding interface."""

    def __init__(self, src_vocab: int, tgt_vocab: int, embedding: int, encoder_hidden: int, decoder_hidden: int,
                 vocabs: tuple[TutorialVocab, TutorialVocab], tgt_embedding: Optional[int] = None):
        super().__init__(vocabs, MAX_OUTPUT)
        self.encoder = Encoder(src_vocab, embedding, encoder_hidden, decoder_hidden)
        self.decoder = Decoder(tgt_vocab, tgt_embedding or embedding, encoder_hidden, decoder_hidden)

    @property
    def description(self) -> ModelDescription:
        return describe()

    def encode(self, src: torch.Tensor, src_len: torch.Tensor, embedded: Optional[torch.Tensor] = None) -> Memory:
        emb = (self.embed_source(src) if embedded is None else embedded).transpose(0, 1)  # (src_len, batch, E)
        packed = pack_padded_sequence(emb, src_len.cpu(), enforce_sorted=False)
        out, hidden = self.encoder.rnn(packed)  # hidden (2, batch, He): →h_Tx, ←h_1
        out, _ = pad_packed_sequence(out, total_length=src.size(1))  # (src_len, batch, 2He)
        first = torch.tanh(self.encoder.fc(torch.cat((hidden[-2], hidden[-1]), dim=1)))  # (batch, Hd)
        mask = torch.arange(src.size(1), device=src.device) < src_len.unsqueeze(1)
        return Memory(out.transpose(0, 1), first, mask)

    def init_state(self, memory: Memory) -> torch.Tensor:
        return memory.first

    def energies(self, state: torch.Tensor, memory: Memory) -> torch.Tensor:
        attention = self.decoder.attention
        repeated = state.unsqueeze(1).expand(-1, memory.annotations.size(1), -1)  # (batch, src_len, Hd)
        energy = torch.tanh(attention.attn_fc(torch.cat((repeated, memory.annotations), dim=2)))
        return attention.v_fc(energy).squeeze(2)  # (batch, src_len)

    def step(self, y_prev: torch.Tensor, state: torch.Tensor, memory: Memory,
             alpha_override: Optional[torch.Tensor] = None, alpha_fn: Optional[AlphaFn] = None) -> Step:
        emb = self.decoder.embedding(self.tgt_ids[y_prev])  # (batch, E)
        energies = self.energies(state, memory)
        alpha = torch.softmax(energies.masked_fill(~memory.mask, float("-inf")), dim=-1)
        alpha = alpha_fn(alpha) if alpha_fn is not None else alpha
        alpha = alpha_override if alpha_override is not None else alpha
        weighted = torch.bmm(alpha.unsqueeze(1).to(memory.annotations.dtype), memory.annotations).squeeze(1)  # (batch, 2He)
        out, hidden = self.decoder.rnn(torch.cat((emb, weighted), dim=1).unsqueeze(0), state.unsqueeze(0).contiguous())
        logits = self.decoder.fc_out(torch.cat((out[0], weighted, emb), dim=1))  # (batch, V) in the notebook's ids
        return Step(self.logprobs(logits), hidden[0], alpha, energies)


def describe() -> ModelDescription:
    return ModelDescription(
        "bentrevett", True, "additive", origin=f"{TITLE} (imported)",
        summary="one-layer bidirectional GRU encoder, one-layer GRU decoder, additive attention on s_{i-1}, "
                "word vocabularies",
        differences=(
            "s_0 = tanh(W_fc [→h_Tx; ←h_1]) from both directions' final states (RNNsearch: tanh(W_s ←h_1)).",
            "Score: e_ij = v^T tanh(W_attn [s_{i-1}; h_j] + b), one layer over the concatenation: the paper's "
            "W_a s_{i-1} + U_a h_j written as one matrix, with a bias.",
            "The decoder GRU reads [E y_{i-1}; c_i] as its input (RNNsearch: c_i enters every gate through C, C_z, C_r: "
            "the same sum, written apart).",
            "Output: p(y_i) = softmax(W_out [s_i; c_i; E y_{i-1}] + b): one layer, no maxout (RNNsearch: maxout over "
            "U_o s_{i-1} + V_o E y_{i-1} + C_o c_i).",
            "The source is wrapped in <sos> ... <eos>, which attention can look at.",
            f"Decoding: greedy, stops after <eos> or at {MAX_OUTPUT} tokens (the notebook's max_output_length); "
            "an output still going at the cap stops there without <eos>.",
            "Words (spaCy's tokens, lower-cased), not subwords; unknown words read as <unk>.",
        ))
