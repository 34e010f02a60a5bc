"""Models trained in d2l's chapter "The Bahdanau Attention Mechanism" (English to French), behind
the decoding interface.

What the student saves at the end of the chapter (docs/own-model.md):

    torch.save(model.state_dict(), "model.pt")
    json.dump({"source": data.src_vocab.idx_to_token, "target": data.tgt_vocab.idx_to_token,
               "num_steps": data.num_steps}, open("vocab.json", "w"))

The network, as the chapter describes it (L layers, H hidden units):

- ``Seq2SeqEncoder``: embeddings E x_j and an L-layer GRU over the whole padded source (it reads
  the padding too); the top layer's outputs are the annotations h_j, and all layers' final
  states, taken after the padding, start the decoder.
- ``AdditiveAttention``: e_ij = w_v^T tanh(W_q s_{i-1} + W_k h_j) (no biases), softmax over the
  first ``valid_len`` positions (the rest set to -10^6 first), c_i = Σ_j α_ij h_j.
- ``Seq2SeqAttentionDecoder``: the query s_{i-1} is the top layer's state; an L-layer GRU reads
  [c_i; E y_{i-1}]; p(y_i) = softmax(W_dense s_i + b) from the top layer.

Its text handling and decoding, reproduced here: non-breaking spaces become spaces, lower-case,
a space before each of ``,.!?`` that does not follow a space, split on spaces, <eos> appended,
then padded with <pad> or trimmed to ``num_steps`` (trimming drops <eos>); unknown words read as
<unk>. Greedy decoding from <bos> runs ``num_steps`` steps and is cut at the first <eos>. The
vocabulary is sorted, so its special tokens are looked up by their strings.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn

from model.core.decodable import AlphaFn, ModelDescription, Step
from model.foreign.tutorials.tutorial_model import TutorialModel
from model.corpus.vocab import PAD
from model.foreign.tutorials.tutorial_vocab import TutorialVocab, special_ids

KIND = "d2l"
TITLE = "d2l.ai chapter \"The Bahdanau Attention Mechanism\""
LICENCE = "MIT (code) and CC BY-SA 4.0 (text) (d2l-ai/d2l-en)"
SPECIALS = {"pad": "<pad>", "unk": "<unk>", "bos": "<bos>", "eos": "<eos>"}
LANGS = ("en", "fr")
MASKED = -1e6  # what d2l's masked_softmax puts at positions past valid_len


def preprocess(text: str) -> str:
    """d2l's ``MTFraEng._preprocess`` of one line."""
    text = text.replace("\u202f", " ").replace("\xa0", " ")
    return "".join(" " + c if i > 0 and c in ",.!?" and text[i - 1] != " " else c for i, c in enumerate(text.lower()))


def target_tokens(text: str) -> list[str]:
    return [t for t in preprocess(text).split(" ") if t]


def source_tokens(text: str, num_steps: int) -> list[str]:
    tokens = target_tokens(text) + ["<eos>"]
    return tokens[:num_steps] if len(tokens) > num_steps else tokens + ["<pad>"] * (num_steps - len(tokens))


def vocabularies(source: list[str], target: list[str], where: str, num_steps: int) -> tuple[TutorialVocab, TutorialVocab]:
    source_specials = dict(SPECIALS, bos=None)  # a d2l source never holds <bos> (its vocabulary may lack it)
    return (TutorialVocab(source, special_ids(source, source_specials, where, "source"),
                          lambda text: source_tokens(text, num_steps)),
            TutorialVocab(target, special_ids(target, SPECIALS, where, "target"), target_tokens))


class GRU(nn.Module):
    """d2l's ``GRU`` wrapper: an ``nn.GRU`` kept as ``rnn`` (so the encoder's weights are ``rnn.rnn.*``)."""

    def __init__(self, num_inputs: int, num_hiddens: int, num_layers: int):
        super().__init__()
        self.rnn = nn.GRU(num_inputs, num_hiddens, num_layers)


class Seq2SeqEncoder(nn.Module):
    def __init__(self, vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(embed_size, num_hiddens, num_layers)


class AdditiveAttention(nn.Module):
    def __init__(self, key_size: int, query_size: int, num_hiddens: int):
        super().__init__()
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)


class Seq2SeqAttentionDecoder(nn.Module):
    def __init__(self, vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int, align: int):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, align)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers)
        self.dense = nn.Linear(num_hiddens, vocab_size)


@dataclass
class Memory:
    annotations: torch.Tensor  # (batch, src_len, H) the top layer's outputs h_j (padding positions too)
    keys: torch.Tensor  # (batch, src_len, A) W_k h_j, once per sentence
    final: torch.Tensor  # (batch, L*H) every layer's final state, layers side by side
    mask: torch.Tensor  # (batch, src_len) True at the first valid_len positions

    def select(self, index: torch.Tensor) -> "Memory":
        return Memory(*(t.index_select(0, index) for t in (self.annotations, self.keys, self.final, self.mask)))


def sizes_of(state: dict[str, torch.Tensor]) -> dict:
    layers = 0
    while f"encoder.rnn.rnn.weight_hh_l{layers}" in state:
        layers += 1
    return {"src_vocab": state["encoder.embedding.weight"].shape[0], "tgt_vocab": state["decoder.dense.weight"].shape[0],
            "embedding": state["encoder.embedding.weight"].shape[1], "tgt_embedding": state["decoder.embedding.weight"].shape[1],
            "hidden": state["encoder.rnn.rnn.weight_hh_l0"].shape[1], "layers": layers,
            "align": state["decoder.attention.w_v.weight"].shape[1]}


class D2lModel(TutorialModel):
    """d2l's ``Seq2SeqEncoder`` and ``Seq2SeqAttentionDecoder`` behind the decoding interface. The
    decoder state is every layer's state side by side, (batch, L*H), so that it is one vector."""

    def __init__(self, src_vocab: int, tgt_vocab: int, embedding: int, hidden: int, layers: int, align: int,
                 num_steps: int, vocabs: tuple[TutorialVocab, TutorialVocab], tgt_embedding: Optional[int] = None):
        super().__init__(vocabs, num_steps)
        self.encoder = Seq2SeqEncoder(src_vocab, embedding, hidden, layers)
        self.decoder = Seq2SeqAttentionDecoder(tgt_vocab, tgt_embedding or embedding, hidden, layers, align)
        self.layers, self.hidden, self.num_steps = layers, hidden, num_steps

    @property
    def description(self) -> ModelDescription:
        return describe(self.layers, self.num_steps)

    def encode(self, src: torch.Tensor, src_len: torch.Tensor, embedded: Optional[torch.Tensor] = None) -> Memory:
        emb = self.embed_source(src) if embedded is None else embedded
        out, final = self.encoder.rnn.rnn(emb.transpose(0, 1))  # (src_len, batch, H), (L, batch, H): pads read too
        annotations = out.transpose(0, 1)
        valid = ((src != PAD) & (torch.arange(src.size(1), device=src.device) < src_len.unsqueeze(1))).sum(1)
        mask = torch.arange(src.size(1), device=src.device) < valid.unsqueeze(1)  # d2l masks past valid_len
        return Memory(annotations, self.decoder.attention.W_k(annotations), final.transpose(0, 1).flatten(1), mask)

    def init_state(self, memory: Memory) -> torch.Tensor:
        return memory.final  # (batch, L*H)

    def _layers(self, state: torch.Tensor) -> torch.Tensor:
        return state.view(state.size(0), self.layers, self.hidden).transpose(0, 1).contiguous()  # (L, batch, H)

    def energies(self, state: torch.Tensor, memory: Memory) -> torch.Tensor:
        attention = self.decoder.attention
        query = attention.W_q(self._layers(state)[-1].unsqueeze(1))  # (batch, 1, A) from the top layer
        return attention.w_v(torch.tanh(query + memory.keys)).squeeze(2)  # (batch, src_len)

    def step(self, y_prev: torch.Tensor, state: torch.Tensor, memory: Memory,
             alpha_override: Optional[torch.Tensor] = None, alpha_fn: Optional[AlphaFn] = None) -> Step:
        emb = self.decoder.embedding(self.tgt_ids[y_prev])  # (batch, E)
        energies = self.energies(state, memory)
        alpha = torch.softmax(energies.masked_fill(~memory.mask, MASKED), dim=-1)  # (batch, src_len)
        alpha = alpha_fn(alpha) if alpha_fn is not None else alpha
        alpha = alpha_override if alpha_override is not None else alpha
        context = torch.bmm(alpha.unsqueeze(1).to(memory.annotations.dtype), memory.annotations)  # (batch, 1, H)
        x = torch.cat((context, emb.unsqueeze(1)), dim=-1).transpose(0, 1)  # (1, batch, H+E)
        out, hidden = self.decoder.rnn(x, self._layers(state))
        logits = self.decoder.dense(out[0])  # (batch, V) in d2l's ids
        return Step(self.logprobs(logits), hidden.transpose(0, 1).flatten(1), alpha, energies)


def describe(layers: int = 2, num_steps: int = 9) -> ModelDescription:
    return ModelDescription(
        "d2l", True, "additive", origin=f"{TITLE} (imported)",
        summary=f"{layers}-layer unidirectional GRU encoder, {layers}-layer GRU decoder, additive attention on the "
                "top layer's s_{i-1}, word vocabularies",
        differences=(
            f"The encoder is a {layers}-layer unidirectional GRU: h_j (its top layer) summarises x_1..x_j only "
            "(RNNsearch: one bidirectional layer, h_j = [→h_j; ←h_j]).",
            f"The source is padded to num_steps = {num_steps} tokens and the encoder reads the padding too: "
            "s_0 is every layer's final state after the padding, with no projection (RNNsearch: s_0 = tanh(W_s ←h_1)).",
            "Score: e_ij = w_v^T tanh(W_q s_{i-1} + W_k h_j), no biases, on the top layer's state; positions past the "
            "source's length get -10^6 before the softmax.",
            "The decoder GRU reads [c_i; E y_{i-1}] as its input (RNNsearch: c_i enters every gate through C, C_z, C_r).",
            "Output: p(y_i) = softmax(W_dense s_i + b) from the top layer: one layer, no maxout and no E y_{i-1} or "
            "c_i (RNNsearch: maxout over U_o s_{i-1} + V_o E y_{i-1} + C_o c_i).",
            "The source ends with <eos> (unless trimmed to num_steps), which attention can look at.",
            f"Decoding: greedy, always {num_steps} steps (num_steps), cut at the first <eos>; an output still going "
            "at the cap stops there without <eos>.",
            "Words, not subwords; unknown words read as <unk>.",
        ))
