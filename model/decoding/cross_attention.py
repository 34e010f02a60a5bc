"""Reading a model's several attentions: one head, a layer's mean, and the shifted reading.

A Transformer has a cross-attention in every decoder layer, each with several heads, so "the
attention" of a sentence is a choice. A trace keeps all of them (``Trace.cross_attention``,
(layers, heads, tgt_len, src_len)); row i of each is read at the step that **outputs** target
word i. The other common reading takes the step where word i is the decoder's **input**, one step
later (Garg et al. 2019 and the transformer-contributions-nmt study of alignment find it aligns
better in some layers): ``shifted_cross_attention`` re-reads the output with the model to get it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import torch

from model.core.decodable import Decodable
from model.corpus.parallel import pad
from model.corpus.vocab import BOS
from model.decoding.device import device_of


@dataclass(frozen=True)
class HeadChoice:
    """Which of a model's attentions a view shows."""

    layer: int  # 0-based decoder layer
    head: Optional[int] = None  # 0-based head; None: the mean over the layer's heads
    shifted: bool = False  # read at the step where the word is the decoder's input, not its output

    def label(self, words: "ChoiceWords" = None) -> str:
        """"layer 2, head 3" / "layer 2 (mean of heads)", 1-based as the pages show them, in
        ``words`` (the pages pass them in the reader's language; English by default)."""
        words = words or ChoiceWords()
        what = words.head.format(layer=self.layer + 1, head=(self.head or 0) + 1) if self.head is not None else \
            words.mean.format(layer=self.layer + 1)
        return what + (words.shifted if self.shifted else "")


@dataclass(frozen=True)
class ChoiceWords:
    """The words of a ``HeadChoice.label``: templates with {layer} and {head}, 1-based."""

    head: str = "layer {layer}, head {head}"
    mean: str = "layer {layer} (mean of heads)"
    shifted: str = ", shifted"


def reading(cross: np.ndarray, choice: HeadChoice) -> np.ndarray:
    """(tgt_len, src_len): one head, or a layer's mean over heads, of ``cross`` (layers, heads,
    tgt_len, src_len). Every row still sums to 1."""
    if not 0 <= choice.layer < cross.shape[0]:
        raise ValueError(f"layer {choice.layer + 1} is not one of the model's {cross.shape[0]} layers")
    if choice.head is not None and not 0 <= choice.head < cross.shape[1]:
        raise ValueError(f"head {choice.head + 1} is not one of the layer's {cross.shape[1]} heads")
    layer = cross[choice.layer]
    return layer.mean(0) if choice.head is None else layer[choice.head]


def has_heads(model: Decodable) -> bool:
    """Whether ``model`` keeps several attentions per step (``Decodable.attention_layers``)."""
    return model.attention_layers > 0


def default_choice(trace) -> HeadChoice:
    """The choice a trace's ``attention`` is: the mean over heads of its model's alignment layer."""
    return HeadChoice(trace.alignment_layer if trace.alignment_layer is not None else trace.cross_attention.shape[0] - 1)


def view_matrix(trace, choice: Optional[HeadChoice] = None, model: Optional[Decodable] = None,
                shifted: Optional[np.ndarray] = None) -> np.ndarray:
    """The matrix (tgt_len, src_len) a view of ``trace`` draws: its ``attention`` for no choice,
    else ``choice`` of its cross-attention; the shifted reading is ``shifted`` when the caller
    kept it, else read again with ``model`` (``shifted_cross_attention``). The pages, the
    notebook and ``viz.commands.figures`` all draw through this."""
    if choice is None:
        return trace.attention
    if trace.cross_attention is None:
        raise ValueError("this model has one attention, not layers and heads")
    if choice.shifted and shifted is None:
        shifted = shifted_cross_attention(model, trace.source_ids, trace.target_ids)
    return reading(shifted if choice.shifted else trace.cross_attention, choice)


def every_head(cross: np.ndarray, layer: Optional[int] = None, shifted: bool = False
               ) -> list[tuple[HeadChoice, np.ndarray]]:
    """Each head's choice and matrix: of 0-based ``layer``, or of every layer (None), layer by
    layer; ``cross`` (layers, heads, tgt_len, src_len), read as ``shifted`` says."""
    layers = range(cross.shape[0]) if layer is None else [layer]
    return [(HeadChoice(k, h, shifted), cross[k, h]) for k in layers for h in range(cross.shape[1])]


@torch.inference_mode()
def shifted_cross_attention(model, src_ids: Sequence[int], tgt_ids: Sequence[int]) -> np.ndarray:
    """(layers, heads, tgt_len, src_len): row i is every layer's and head's cross-attention at the
    step whose **input** is target word i (the step after the one that output it), from one
    teacher-forced pass over <s> y_1 .. y_n (its rows 1 .. n)."""
    if not tgt_ids:
        raise ValueError("no output words to read")
    model.eval()
    dev = device_of(model)
    memory = model.encode(pad([list(src_ids)]).to(dev), torch.tensor([len(src_ids)], device=dev))
    tgt_in = torch.tensor([[BOS, *tgt_ids]], device=dev)  # (1, n + 1)
    cross = model.forced_cross_attention(memory, tgt_in)  # (1, layers, heads, n + 1, src_len)
    return cross[0, :, :, 1:].float().cpu().numpy()
