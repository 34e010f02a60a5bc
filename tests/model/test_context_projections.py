"""Decoder.prepare's C h_j and C_o h_j: where no gradient flows, RNNsearch reads C c_i and C_o c_i
as sum_j alpha_ij C h_j and sum_j alpha_ij C_o h_j instead of multiplying c_i by C and C_o at
every step (and RNNencdec forms C_o c once). The same values within 1e-5 on every path that
reads them: a search step, teacher forcing and the step-by-step anatomy."""
import dataclasses

import pytest
import torch

from model.core.config import ModelConfig
from model.corpus.parallel import pad
from model.corpus.vocab import BOS
from model.decoding.step_by_step import dissect
from model.network.attention import ATTENTIONS
from model.network.nmt_model import NMTModel

SIZES = dict(src_vocab_size=23, tgt_vocab_size=29, emb_dim=5, hidden=7, align_dim=9, maxout=3, dropout=0.0)
SRC = [[5, 6, 7, 8, 9], [10, 11, 12], [13]]
TGT_IN = torch.tensor([[BOS, 4, 0, 0], [BOS, 7, 8, 6], [BOS, 9, 5, 0]])  # rows of 2, 4 and 3 tokens
CASES = [("rnnsearch", kind, False) for kind in ATTENTIONS] + [("rnnsearch", "additive", True),
                                                              ("rnnencdec", "additive", False)]


def model(arch: str, attention: str, layer_norm: bool) -> NMTModel:
    torch.manual_seed(3)
    m = NMTModel(ModelConfig(arch=arch, attention=attention, layer_norm=layer_norm, **SIZES)).eval()
    for p in m.parameters():  # away from the paper's near-zero attention start, so alpha is not uniform
        torch.nn.init.normal_(p, std=0.5)
    return m


def without_projections(enc):
    """The same encoder state with c_i multiplied by C and C_o at each step (as in training)."""
    return dataclasses.replace(enc, context_gates=None, context_out=None, fixed_out=None)


def encode(m):
    return m.encode(pad(SRC), torch.tensor([len(s) for s in SRC]))


@pytest.mark.parametrize("arch, attention, layer_norm", CASES)
def test_search_steps_read_the_same_distribution(arch, attention, layer_norm):
    m = model(arch, attention, layer_norm)
    with torch.inference_mode():
        enc = encode(m)
        state, bare_state = m.init_state(enc), m.init_state(without_projections(enc))
        y = torch.tensor([BOS] * len(SRC))
        for t in range(3):  # a few steps, each from its own state
            out = m.step(y, state, enc)
            bare = m.step(y, bare_state, without_projections(enc))
            assert torch.allclose(out.logprobs, bare.logprobs, atol=1e-5)
            assert torch.allclose(out.state, bare.state, atol=1e-5)
            if out.alpha is not None:
                assert torch.allclose(out.alpha, bare.alpha, atol=1e-5)
            state, bare_state, y = out.state, bare.state, out.logprobs.argmax(-1)


@pytest.mark.parametrize("arch, attention, layer_norm", CASES)
def test_teacher_forcing_reads_the_same_distribution(arch, attention, layer_norm):
    m = model(arch, attention, layer_norm)
    with torch.inference_mode():
        enc = encode(m)
        found, alpha = m.teacher_forced(enc, TGT_IN)
        bare, bare_alpha = m.teacher_forced(without_projections(enc), TGT_IN)
    assert torch.allclose(found, bare, atol=1e-5)
    assert (alpha is None) == (bare_alpha is None)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_only_work_without_gradients_prepares_them(arch):
    m = model(arch, "additive", False)
    with torch.no_grad():
        enc = encode(m)
    assert (enc.context_gates is not None) == (enc.context_out is not None) == (arch == "rnnsearch")
    assert (enc.fixed_out is not None) == (arch == "rnnencdec")
    graded = encode(m)  # a gradient explanation: eval mode, gradients on
    m.train()
    trained = encode(m)
    for found in (graded, trained):
        assert found.context_gates is None and found.context_out is None and found.fixed_out is None


def test_the_anatomy_reads_the_decode_s_distribution():
    """The Paper page's step-by-step values (dissect) take C_o c_i the way the decode does."""
    m = model("rnnsearch", "additive", False)
    anatomy = dissect(m, SRC[0], [4, 7, 8])
    with torch.inference_mode():
        enc = encode(m)
        tgt_in = torch.tensor([[BOS, 4, 7]])
        logprobs, _ = m.teacher_forced(enc.select(torch.tensor([0])), tgt_in)
    for i, step in enumerate(anatomy.steps):
        assert torch.allclose(torch.tensor(step.probs).log(), logprobs[0, i], atol=1e-5)
