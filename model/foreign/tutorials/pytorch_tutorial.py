"""Models trained in PyTorch's tutorial "NLP From Scratch: Translation with a Sequence to
Sequence Network and Attention" (French to English), behind the decoding interface.

What the student saves at the end of the tutorial (docs/own-model.md):

    torch.save({"encoder": encoder.state_dict(), "decoder": decoder.state_dict()}, "model.pt")
    json.dump({"source": input_lang.index2word, "target": output_lang.index2word}, open("vocab.json", "w"))

The network, as the tutorial describes it (H hidden units, one size for everything):

- ``EncoderRNN``: an embedding E x_j (H) and a one-layer unidirectional GRU over the source, whose
  outputs h_j are the annotations and whose last state starts the decoder: s_0 = h_Tx.
- ``BahdanauAttention``: e_ij = V_a^T tanh(W_a s_{i-1} + U_a h_j), α_ij = softmax_j(e_ij),
  c_i = Σ_j α_ij h_j (each of W_a, U_a, V_a with a bias).
- ``AttnDecoderRNN``: a GRU reads [E y_{i-1}; c_i] (2H) with state s_{i-1}; p(y_i) = softmax(W_out s_i + b).

Its text handling and decoding, reproduced here so a student sees what the notebook printed:
lower-case, strip, accents removed (NFD, combining marks dropped), a space before ``.!?``, every
run of characters outside ``a-zA-Z!?`` a space; words split on spaces; EOS appended. The
vocabulary has no unknown-word entry: a sentence with a word outside it is refused, naming the
words. Greedy decoding starts from SOS, always runs ``MAX_LENGTH`` (10) steps and is cut at the
first EOS: ``output_length`` states that cap, so this project's search stops where it does.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from model.core.decodable import AlphaFn, ModelDescription, Step
from model.foreign.tutorials.tutorial_model import TutorialModel
from model.foreign.tutorials.tutorial_vocab import TutorialVocab, special_ids

KIND = "pytorch"
MAX_LENGTH = 10  # the tutorial's MAX_LENGTH: decoding runs this many steps
TITLE = "PyTorch tutorial \"Translation with a Sequence to Sequence Network and Attention\""
LICENCE = "BSD-3-Clause (the PyTorch tutorials repository)"
SPECIALS = {"pad": None, "unk": None, "bos": "SOS", "eos": "EOS"}
LANGS = ("fr", "en")


def normalise(text: str) -> str:
    """The tutorial's ``normalizeString``: lower-case, strip, accents removed, a space before
    ``.!?``, every run of characters outside ``a-zA-Z!?`` one space."""
    text = "".join(c for c in unicodedata.normalize("NFD", text.lower().strip()) if unicodedata.category(c) != "Mn")
    text = re.sub(r"([.!?])", r" \1", text)
    return re.sub(r"[^a-zA-Z!?]+", " ", text).strip()


def source_tokens(text: str) -> list[str]:
    words = normalise(text)
    return (words.split(" ") if words else []) + ["EOS"]


def target_tokens(text: str) -> list[str]:
    words = normalise(text)
    return words.split(" ") if words else []


def vocabularies(source: list[str], target: list[str], where: str) -> tuple[TutorialVocab, TutorialVocab]:
    return (TutorialVocab(source, special_ids(source, SPECIALS, where, "source"), source_tokens, "refuse"),
            TutorialVocab(target, special_ids(target, SPECIALS, where, "target"), target_tokens, "refuse"))


class EncoderRNN(nn.Module):
    """The tutorial's encoder, with its layer names (its state dict loads as it is)."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size: int):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size: int, output_size: int):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)


@dataclass
class Memory:
    annotations: torch.Tensor  # (batch, src_len, H) the encoder's outputs h_j, zeros at padding
    keys: torch.Tensor  # (batch, src_len, H) U_a h_j, once per sentence
    last: torch.Tensor  # (batch, H) the encoder's last state
    mask: torch.Tensor  # (batch, src_len) True at real source tokens

    def select(self, index: torch.Tensor) -> "Memory":
        return Memory(*(t.index_select(0, index) for t in (self.annotations, self.keys, self.last, self.mask)))


def sizes_of(state: dict[str, torch.Tensor]) -> dict:
    """The sizes a state dict implies (checked against the vocabularies and shapes elsewhere)."""
    return {"src_vocab": state["encoder.embedding.weight"].shape[0], "tgt_vocab": state["decoder.out.weight"].shape[0],
            "hidden": state["encoder.embedding.weight"].shape[1]}


class PytorchTutorialModel(TutorialModel):
    """The tutorial's ``EncoderRNN`` and ``AttnDecoderRNN`` behind the decoding interface."""

    def __init__(self, src_vocab: int, tgt_vocab: int, hidden: int, vocabs: tuple[TutorialVocab, TutorialVocab],
                 max_length: int = MAX_LENGTH):
        super().__init__(vocabs, max_length)
        self.encoder, self.decoder = EncoderRNN(src_vocab, hidden), AttnDecoderRNN(hidden, tgt_vocab)

    @property
    def description(self) -> ModelDescription:
        return describe(self.cap)

    def encode(self, src: torch.Tensor, src_len: torch.Tensor, embedded: Optional[torch.Tensor] = None) -> Memory:
        emb = self.embed_source(src) if embedded is None else embedded
        packed = pack_padded_sequence(emb, src_len.cpu(), batch_first=True, enforce_sorted=False)
        out, last = self.encoder.gru(packed)  # each sentence read without its padding, as the tutorial reads one
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))  # (batch, src_len, H)
        mask = torch.arange(src.size(1), device=src.device) < src_len.unsqueeze(1)
        return Memory(out, self.decoder.attention.Ua(out), last[0], mask)

    def init_state(self, memory: Memory) -> torch.Tensor:
        return memory.last  # (batch, H): s_0 = the encoder's last state

    def energies(self, state: torch.Tensor, memory: Memory) -> torch.Tensor:
        attention = self.decoder.attention
        query = attention.Wa(state.unsqueeze(1))  # (batch, 1, H)
        return attention.Va(torch.tanh(query + memory.keys)).squeeze(2)  # (batch, src_len)

    def step(self, y_prev: torch.Tensor, state: torch.Tensor, memory: Memory,
             alpha_override: Optional[torch.Tensor] = None, alpha_fn: Optional[AlphaFn] = None) -> Step:
        emb = self.decoder.embedding(self.tgt_ids[y_prev]).unsqueeze(1)  # (batch, 1, H)
        energies = self.energies(state, memory)
        alpha = torch.softmax(energies.masked_fill(~memory.mask, float("-inf")), dim=-1)  # (batch, src_len)
        alpha = alpha_fn(alpha) if alpha_fn is not None else alpha
        alpha = alpha_override if alpha_override is not None else alpha
        context = torch.bmm(alpha.unsqueeze(1).to(memory.annotations.dtype), memory.annotations)  # (batch, 1, H)
        out, hidden = self.decoder.gru(torch.cat((emb, context), dim=2), state.unsqueeze(0).contiguous())
        logits = self.decoder.out(out.squeeze(1))  # (batch, V) in the tutorial's ids
        return Step(self.logprobs(logits), hidden[0], alpha, energies)


def describe(max_length: int = MAX_LENGTH) -> ModelDescription:
    return ModelDescription(
        "pytorch-tutorial", True, "additive", origin=f"{TITLE} (imported)",
        summary="one-layer unidirectional GRU encoder, one-layer GRU decoder, Bahdanau attention on s_{i-1}, "
                "word vocabularies",
        differences=(
            "The encoder is one unidirectional GRU: h_j summarises x_1..x_j only (RNNsearch: a bidirectional "
            "GRU, h_j = [→h_j; ←h_j]).",
            "s_0 is the encoder's last state h_Tx, with no projection (RNNsearch: s_0 = tanh(W_s ←h_1)).",
            "Embeddings, encoder, decoder and attention all have one size H.",
            "The decoder GRU reads [E y_{i-1}; c_i] as its input (RNNsearch: c_i enters every gate through C, C_z, C_r: "
            "the same sum, written apart).",
            "Output: p(y_i) = softmax(W_out s_i + b): one layer on the new state, no maxout and no E y_{i-1} or c_i "
            "(RNNsearch: maxout over U_o s_{i-1} + V_o E y_{i-1} + C_o c_i).",
            "The source ends with EOS, which attention can look at.",
            f"Decoding: greedy, always {max_length} steps (the tutorial's MAX_LENGTH), cut at the first EOS; "
            "an output still going at the cap stops there without EOS.",
            "Words, not subwords, and no entry for unknown words: a sentence with a word outside the vocabulary "
            "cannot be translated.",
        ))
