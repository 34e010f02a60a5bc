"""Encoder, decoder and model invariants on small, all-different sizes."""
import numpy as np
import pytest
import torch

from model.core.config import ModelConfig
from model.corpus.parallel import pad
from model.corpus.vocab import BOS
from model.core.errors import ConfigError
from model.network.nmt_model import NMTModel

SIZES = dict(src_vocab_size=23, tgt_vocab_size=29, emb_dim=5, hidden=7, align_dim=9, maxout=3, dropout=0.0)
SRC = [[5, 6, 7, 8, 9], [10, 11, 12], [13]]
PACKED_TGT_IN = torch.tensor([[BOS, 4, 0, 0], [BOS, 7, 8, 6], [BOS, 9, 5, 0]])  # rows of 2, 4 and 3 tokens


def model(arch, seed=0):
    torch.manual_seed(seed)
    m = NMTModel(ModelConfig(arch=arch, **SIZES)).eval()
    if arch == "rnnsearch":  # move attention away from uniform so tests see real weights
        torch.nn.init.normal_(m.decoder.attention.v_a.weight)
        torch.nn.init.normal_(m.decoder.attention.W_a.weight)
    return m


def encode(m, seqs):
    return m.encoder(pad(seqs), torch.tensor([len(s) for s in seqs]))


def test_annotations_shape_and_zero_padding():
    annotations, summary = encode(model("rnnsearch"), SRC)
    assert annotations.shape == (3, 5, 14) and summary.shape == (3, 14)
    assert (annotations[1, 3:] == 0).all() and (annotations[2, 1:] == 0).all()



def test_encoder_equals_packed_bidirectional_gru_reference():
    """The per-direction padded fast path equals nn.GRU on a PackedSequence, values and
    gradients, with rows in no particular length order."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    m = model("rnnsearch")
    seqs = [[10, 11, 12], [5, 6, 7, 8, 9], [13]]
    lengths = torch.tensor([len(s) for s in seqs])
    x = m.encoder.embed(pad(seqs)).detach().requires_grad_(True)
    fast, fast_summary = m.encoder.encode_embedded(x, lengths)
    ref_x = x.detach().clone().requires_grad_(True)
    out, h_n = m.encoder.rnn(pack_padded_sequence(ref_x, lengths, batch_first=True, enforce_sorted=False))
    ref, _ = pad_packed_sequence(out, batch_first=True, total_length=5)
    torch.testing.assert_close(fast, ref, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(fast_summary, torch.cat([h_n[0], h_n[1]], dim=-1), atol=1e-6, rtol=1e-5)
    weights = torch.randn_like(fast)
    (fast * weights).sum().backward()
    (ref * weights).sum().backward()
    torch.testing.assert_close(x.grad, ref_x.grad, atol=1e-6, rtol=1e-5)

def test_summary_is_forward_last_and_backward_first():
    annotations, summary = encode(model("rnnsearch"), SRC)
    for row, seq in enumerate(SRC):
        torch.testing.assert_close(summary[row, :7], annotations[row, len(seq) - 1, :7])
        torch.testing.assert_close(summary[row, 7:], annotations[row, 0, 7:])


def test_padding_does_not_leak_into_encoder():
    m = model("rnnsearch")
    batched, _ = encode(m, SRC)
    for row, seq in enumerate(SRC):
        alone, _ = encode(m, [seq])
        torch.testing.assert_close(batched[row, : len(seq)], alone[0], atol=1e-6, rtol=1e-5)


def test_initial_state_uses_backward_first_annotation():
    m = model("rnnencdec")
    annotations, summary = encode(m, SRC)
    s0 = m.decoder.init_state(summary)
    torch.testing.assert_close(s0, torch.tanh(m.decoder.W_s(annotations[:, 0, 7:])))


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_teacher_forced_fast_path_equals_step_by_step(arch):
    """The fast path (precomputed input projections, shrinking batch, batched readout) equals
    ``step`` at every real position, whatever the order of row lengths; padding gets zeros."""
    m = model(arch)
    src, src_len = pad(SRC), torch.tensor([5, 3, 1])
    tgt_in = torch.tensor([[BOS, 4, 5, 0, 0], [BOS, 7, 8, 6, 5], [BOS, 9, 0, 0, 0]])
    real = tgt_in != 0
    with torch.no_grad():
        logits, alpha = m(src, src_len, tgt_in)
        enc = m.encode(src, src_len)
        state = m.decoder.init_state(enc.summary)
        for i in range(tgt_in.size(1)):
            step = m.decoder.step(tgt_in[:, i], state, enc)
            rows = real[:, i]
            torch.testing.assert_close(torch.log_softmax(logits[rows, i], -1), step.logprobs[rows],
                                       atol=1e-5, rtol=1e-5)
            if arch == "rnnsearch":
                torch.testing.assert_close(alpha[rows, i], step.alpha[rows], atol=1e-5, rtol=1e-5)
            state = step.state
    assert logits.shape == (3, 5, 29)
    assert (logits[~real] == 0).all()
    assert (alpha is None) == (arch == "rnnencdec")


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_packed_logits_are_the_real_positions_of_the_padded_ones(arch):
    m = model(arch)
    src, src_len, tgt_in = pad(SRC), torch.tensor([5, 3, 1]), PACKED_TGT_IN
    with torch.no_grad():
        padded, _ = m(src, src_len, tgt_in)
        features, positions = m(src, src_len, tgt_in, packed=True)
    assert features.shape == (9, m.config.maxout)
    assert sorted(positions.tolist()) == (tgt_in != 0).flatten().nonzero().squeeze(1).tolist()
    torch.testing.assert_close(m.decoder.W_o(features), padded.flatten(0, 1)[positions])


def test_rnnencdec_has_no_attention_parameters_and_fixed_context():
    search, encdec = model("rnnsearch"), model("rnnencdec")
    names = {n for n, _ in encdec.named_parameters()}
    assert not any("attention" in n for n in names)
    assert names < {n for n, _ in search.named_parameters()}
    enc = encdec.encode(pad(SRC), torch.tensor([5, 3, 1]))
    c1, *_ = encdec.decoder.context(torch.zeros(3, 7), enc)
    c2, *_ = encdec.decoder.context(torch.ones(3, 7), enc)
    torch.testing.assert_close(c1, c2)


def test_recurrent_matrices_are_orthogonal_blocks():
    m = model("rnnencdec")
    for block in m.decoder.U_rz.weight.split(7, dim=0):
        torch.testing.assert_close(block @ block.T, torch.eye(7), atol=1e-5, rtol=1e-5)


def test_config_refuses_oversized_layers_and_unknown_arch():
    with pytest.raises(ConfigError, match="hidden"):
        ModelConfig(hidden=10**9).validate()
    with pytest.raises(ConfigError, match="arch"):
        ModelConfig(arch="lstm").validate()


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_saliency_shape_rows_and_no_grad_leak(arch):
    from model.explaining.saliency import saliency

    m = model(arch)
    out = saliency(m, [5, 6, 7, 8, 9], [4, 5, 3])
    assert out.shape == (3, 5)
    np.testing.assert_allclose(out.sum(1), 1.0, rtol=1e-5)
    assert all(p.grad is None for p in m.parameters())


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_layer_norm_model_fast_path_padding_and_init(arch):
    torch.manual_seed(0)
    m = NMTModel(ModelConfig(arch=arch, layer_norm=True, **SIZES)).eval()
    assert (m.decoder.ln_rz.gain == 1).all() and (m.encoder.rnn.forward_cell.ln_u.bias == 0).all()
    batched, summary = encode(m, SRC)
    assert (batched[1, 3:] == 0).all()
    for row, seq in enumerate(SRC):  # padding does not leak, in either direction
        alone, alone_summary = encode(m, [seq])
        torch.testing.assert_close(batched[row, : len(seq)], alone[0], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(summary[row], alone_summary[0], atol=1e-6, rtol=1e-5)
    src, src_len = pad(SRC), torch.tensor([5, 3, 1])
    tgt_in = torch.tensor([[BOS, 4, 5], [BOS, 7, 8], [BOS, 9, 0]])
    with torch.no_grad():
        logits, _ = m(src, src_len, tgt_in)
        enc = m.encode(src, src_len)
        step = m.decoder.step(tgt_in[:, 0], m.decoder.init_state(enc.summary), enc)
    torch.testing.assert_close(torch.log_softmax(logits[:, 0], -1), step.logprobs, atol=1e-5, rtol=1e-5)


def test_block_layer_norm_normalises_each_gate_separately():
    from model.network.layernorm_gru import BlockLayerNorm

    ln = BlockLayerNorm(3, 7)
    x = torch.randn(5, 21) * torch.tensor([1.0] * 7 + [10.0] * 7 + [0.1] * 7) + 3.0
    out = ln(x).view(5, 3, 7)
    torch.testing.assert_close(out.mean(-1), torch.zeros(5, 3), atol=1e-5, rtol=0)
    torch.testing.assert_close(out.var(-1, unbiased=False), torch.ones(5, 3), atol=5e-3, rtol=0)  # eps=1e-5
    with torch.no_grad():
        ln.gain.fill_(2.0)
        ln.bias.fill_(0.5)
    out = ln(x).view(5, 3, 7)
    torch.testing.assert_close(out.mean(-1), torch.full((5, 3), 0.5), atol=1e-5, rtol=0)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_packed_bf16_features_are_fp32_and_track_the_fp32_ones(arch):
    m = model(arch)
    src, src_len, tgt_in = pad(SRC), torch.tensor([5, 3, 1]), PACKED_TGT_IN
    with torch.no_grad():
        fp32, positions = m(src, src_len, tgt_in, packed=True)
        bf16, same_positions = m(src, src_len, tgt_in, packed=True, bf16=True)
    assert bf16.dtype == torch.float32 and torch.equal(positions, same_positions)
    torch.testing.assert_close(bf16, fp32, atol=3e-2, rtol=3e-2)
