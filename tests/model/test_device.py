"""A device passes through: a Translator moves its model once, and search and saliency hand the
model tensors on the device of its weights. No GPU needed: the ``meta`` device (shapes without
data) stands for one, and a spy model records the device of every tensor it is handed."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from model.decoding.device import device_of, pick_device
from model.explaining.saliency import saliency
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from model.core.errors import ConfigError
from tests.model.test_decodable import doc_namespace

META, CPU = torch.device("meta"), torch.device("cpu")
SENTENCES = ["the dog runs", "a cat sits on the dog", "dog"]  # 3, 6 and 1 words


class OnlyBuffer(nn.Module):
    def __init__(self, device: str):
        super().__init__()
        self.register_buffer("table", torch.zeros(3, 5, device=device))


@pytest.mark.parametrize("module, expected", [
    (nn.Linear(3, 5), CPU),
    (nn.Linear(3, 5, device="meta"), META),
    (nn.Sequential(nn.Linear(5, 7, device="meta")), META),  # a parameter of a submodule
    (OnlyBuffer("meta"), META),  # no parameters: its buffers say
    (nn.Module(), CPU),  # neither: the CPU
], ids=["linear on the cpu", "linear on meta", "inside a container", "a buffer only", "nothing"])
def test_device_of_is_where_the_weights_are(module, expected):
    assert device_of(module) == expected


@pytest.mark.parametrize("name, has_cuda, expected", [
    ("cpu", True, CPU),
    ("auto", False, CPU),
    ("auto", True, torch.device("cuda")),
    ("cuda", True, torch.device("cuda")),
    ("cuda:1", True, torch.device("cuda", 1)),
    ("meta", False, META),
    (META, False, META),
])
def test_pick_device_reads_a_name(monkeypatch, name, has_cuda, expected):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: has_cuda)
    assert pick_device(name) == expected


@pytest.mark.parametrize("name, message", [("cuda", "no CUDA device"), ("cuda:1", "no CUDA device"),
                                           ("gpu", "unknown device 'gpu'")])
def test_pick_device_refuses_what_it_cannot_give(monkeypatch, name, message):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match=message):
        pick_device(name)


class Stop(Exception):
    """The spy has seen what it is there to see (a meta model's outputs hold no data to go on with)."""


def spy_translator(stop_at: str = "", device=None) -> tuple[Translator, list[tuple[str, torch.device]]]:
    """The docs/own-model.md model, recording (method, device) for every tensor it is handed,
    raising Stop once ``stop_at`` has been called."""
    ns = doc_namespace()
    seen: list[tuple[str, torch.device]] = []

    def see(method: str, *tensors: torch.Tensor) -> None:
        seen.extend((method, t.device) for t in tensors)
        if method == stop_at:
            raise Stop

    class SpyMemory(ns["Memory"]):
        def select(self, index):
            see("select", index)
            picked = super().select(index)
            return SpyMemory(picked.values, picked.mask)

    class Spy(ns["TinyAttention"]):
        def embed_source(self, src):
            see("embed_source", src)
            return super().embed_source(src)

        def encode(self, src, src_len, embedded=None):
            see("encode", src, src_len, *([] if embedded is None else [embedded]))
            memory = super().encode(src, src_len, embedded)
            return SpyMemory(memory.values, memory.mask)

        def step(self, y_prev, state, memory, alpha_override=None, alpha_fn=None):
            see("step", y_prev, state, memory.mask)
            return super().step(y_prev, state, memory, alpha_override, alpha_fn)

        def reorder(self, state, index):
            see("reorder", index)
            return super().reorder(state, index)

        def teacher_forced(self, memory, tgt_in):
            see("teacher_forced", memory.mask, tgt_in)
            return super().teacher_forced(memory, tgt_in)

    torch.manual_seed(5)
    src, tgt = ns["WordVocab"]("a the dog cat runs sits".split()), ns["WordVocab"]("un le chien chat court".split())
    return Translator(Spy(len(src), len(tgt), hidden=7), src, tgt, name="spy", device=device), seen


def test_a_translator_moves_its_model_once_to_the_device_it_is_given():
    translator, _ = spy_translator(device="meta")
    assert translator.device == META
    assert all(t.device == META for t in [*translator.model.parameters(), *translator.model.buffers()])
    stays, _ = spy_translator()  # no device: where the weights already are
    assert stays.device == CPU


def _beam(t: Translator):
    return t.translate(SENTENCES, SearchConfig(beam=3))


def _greedy(t: Translator):
    return t.translate(SENTENCES, SearchConfig(beam=1, trace=False))


def _saliency(t: Translator):
    return saliency(t.model, t.src_vocab.encode(SENTENCES[1]), [5, 6, 7, 3])


RUNS = {  # what runs, and the model methods it reaches before it needs data back
    "beam search": (_beam, "select", {"encode", "embed_source", "step", "select"}),  # select: after the first step
    "greedy search": (_greedy, "step", {"encode", "embed_source", "step"}),
    "saliency": (_saliency, "teacher_forced", {"embed_source", "encode", "teacher_forced"}),
}


@pytest.mark.parametrize("run", RUNS)
def test_every_tensor_handed_to_a_model_on_meta_is_on_meta(run):
    decode, stop_at, reached = RUNS[run]
    translator, seen = spy_translator(stop_at, device="meta")
    with pytest.raises(Stop):
        decode(translator)
    assert {method for method, _ in seen} == reached
    assert [(method, device) for method, device in seen if device != META] == []


@pytest.mark.parametrize("run", RUNS)
def test_on_the_cpu_named_explicitly_nothing_changes(run):
    decode = RUNS[run][0]
    named, seen = spy_translator(device="cpu")
    default, _ = spy_translator()
    explicit, implicit = decode(named), decode(default)
    assert seen and {device for _, device in seen} == {CPU}
    if run == "saliency":
        np.testing.assert_array_equal(explicit, implicit)
    else:
        assert [t.target_ids for t in explicit] == [t.target_ids for t in implicit]
        assert [t.score for t in explicit] == [t.score for t in implicit]
