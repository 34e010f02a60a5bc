"""A beam search's k hypotheses of a sentence share its encoder state (``NMTModel.beam_memory``,
``EncoderState.for_beams``) instead of reading k copies of it (``Decodable.beam_memory``, the
default): the same decodes within 1e-5, whatever the settings."""
import dataclasses

import pytest
import torch

from model.core.config import ModelConfig
from model.core.decodable import Decodable
from model.corpus.parallel import pad
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from model.explaining.attention_ablation import Ablation
from model.network.attention import ATTENTIONS
from model.network.nmt_model import NMTModel

SIZES = dict(src_vocab_size=23, tgt_vocab_size=29, emb_dim=5, hidden=7, align_dim=9, maxout=3, dropout=0.0)
SRC = [[5, 6, 7, 8, 9], [10, 11, 12], [13]]
CASES = [("rnnsearch", kind, False) for kind in ATTENTIONS] + [("rnnsearch", "additive", True),
                                                              ("rnnencdec", "additive", False)]
SENTENCES = ["a dog runs in the park", "the small cat", "a man eats a red ball on the street", "child plays",
             "the big blue dog sits in a small park"]


def model(arch: str, attention: str, layer_norm: bool) -> NMTModel:
    torch.manual_seed(5)
    m = NMTModel(ModelConfig(arch=arch, attention=attention, layer_norm=layer_norm, **SIZES)).eval()
    for p in m.parameters():  # away from the paper's near-uniform attention start
        torch.nn.init.normal_(p, std=0.5)
    return m


def encode(m: NMTModel):
    return m.encode(pad(SRC), torch.tensor([len(s) for s in SRC]))


def copied(m: NMTModel, enc, k: int):
    """The default: each sentence's row copied for each of its k hypotheses."""
    return Decodable.beam_memory(m, enc, k)


def test_whole_beams_select_their_sentences():
    with torch.inference_mode():
        enc = encode(model("rnnsearch", "additive", False))
        shared = enc.for_beams(3).select(torch.tensor([3, 4, 5, 6, 7, 8]))  # sentences 1 and 2
    assert shared.beam == 3
    for field in ("annotations", "mask", "summary", "keys", "context_gates", "context_out"):
        assert torch.equal(getattr(shared, field), getattr(enc, field)[1:]), field


@pytest.mark.parametrize("rows", [[0, 1], [1, 2, 3], [0, 2, 1], [3, 4, 5, 0, 1, 1], [0, 1, 2, 3]])
def test_a_memory_shared_by_beams_refuses_rows_that_split_a_beam(rows):
    with torch.inference_mode():
        shared = encode(model("rnnsearch", "additive", False)).for_beams(3)
    with pytest.raises(ValueError, match="whole beams"):
        shared.select(torch.tensor(rows))


def test_a_shared_memory_is_not_shared_again_nor_cut_by_rows():
    with torch.inference_mode():
        shared = encode(model("rnnsearch", "additive", False)).for_beams(3)
    with pytest.raises(ValueError, match="already"):
        shared.for_beams(3)
    with pytest.raises(ValueError, match="first rows"):
        shared.head(2)  # teacher forcing's rows are decoder rows, not sentences


@pytest.mark.parametrize("arch, attention, layer_norm", CASES)
@pytest.mark.parametrize("k", [3, 5])
@pytest.mark.parametrize("projected", [True, False], ids=["rows", "products"])
def test_steps_read_a_shared_memory_as_its_copies(arch, attention, layer_norm, k, projected):
    """Three steps from the same start, with the decoder's precomputed C h_j rows and without."""
    m = model(arch, attention, layer_norm)
    with torch.inference_mode():
        enc = encode(m)
        if not projected:
            enc = dataclasses.replace(enc, context_gates=None, context_out=None, fixed_out=None)
        shared, copies = m.beam_memory(enc, k), copied(m, enc, k)
        state, copy_state = m.init_state(shared), m.init_state(copies)
        torch.testing.assert_close(state, copy_state, rtol=0, atol=1e-6)
        y = torch.arange(len(SRC) * k) % 20 + 4  # a different token in every row
        for _ in range(3):
            out, ref = m.step(y, state, shared), m.step(y, copy_state, copies)
            torch.testing.assert_close(out.logprobs, ref.logprobs, rtol=0, atol=1e-5)
            torch.testing.assert_close(out.state, ref.state, rtol=0, atol=1e-5)
            assert (out.alpha is None) == (ref.alpha is None) == (arch == "rnnencdec")
            if out.alpha is not None:
                torch.testing.assert_close(out.alpha, ref.alpha, rtol=0, atol=1e-5)
                torch.testing.assert_close(out.energies, ref.energies, rtol=1e-5, atol=1e-5)
            state, copy_state, y = out.state, ref.state, out.logprobs.argmax(-1)


SETTINGS = [  # (name, SearchConfig, translate()'s keyword arguments)
    ("greedy", SearchConfig(beam=1), {}),
    ("beam 3", SearchConfig(beam=3), {}),
    ("beam 5 untraced", SearchConfig(beam=5, trace=False), {}),
    ("beam 12", SearchConfig(beam=12), {}),
    ("beam 5 no <unk>, short cap", SearchConfig(beam=5, forbid_unk=True, max_len_ratio=0.5, max_len_extra=2), {}),
    ("beam 3 forced prefix", SearchConfig(beam=3), {"prefixes": [[5, 6]] * len(SENTENCES)}),
    ("beam 3 moved attention", SearchConfig(beam=3), {"attend": {1: 0, 2: 1}}),
    ("beam 5 ablation", SearchConfig(beam=5, ablation=Ablation("diagonal")), {}),
]


SEARCHES = [(arch, *setting) for arch in ("rnnsearch", "rnnencdec") for setting in SETTINGS
            if arch == "rnnsearch" or setting[1].ablation is None]  # RNNencdec has no attention to replace


@pytest.mark.parametrize("arch, name, cfg, extra", SEARCHES, ids=[f"{s[0]}-{s[1]}" for s in SEARCHES])
@pytest.mark.parametrize("batch_size", [2, 5])
def test_search_with_a_shared_memory_equals_search_with_copies(tiny_checkpoints, arch, name, cfg, extra, batch_size):
    t = Translator.from_checkpoint(tiny_checkpoints[arch])
    shared = t.translate(SENTENCES, cfg, batch_size=batch_size, **extra)
    t.model.beam_memory = lambda memory, beam: copied(t.model, memory, beam)  # this instance only
    copies = t.translate(SENTENCES, cfg, batch_size=batch_size, **extra)
    for a, b in zip(shared, copies):
        assert a.target_ids == b.target_ids
        assert a.score == pytest.approx(b.score, abs=1e-5) and a.logprob == pytest.approx(b.logprob, abs=1e-5)
        assert (a.attention is None) == (b.attention is None)
        if a.attention is not None:
            torch.testing.assert_close(torch.tensor(a.attention), torch.tensor(b.attention), rtol=0, atol=1e-5)
        if a.beam:
            assert [(n.token_id, n.parent, n.status) for n in a.beam] == [(n.token_id, n.parent, n.status) for n in b.beam]
