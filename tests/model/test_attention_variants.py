"""Luong et al. (2015) score functions beside Bahdanau's: same interface, same invariants."""
import math

import pytest
import torch

from model.core.config import ModelConfig
from model.core.errors import ConfigError
from model.network.attention import ATTENTIONS, make_attention


KINDS = list(ATTENTIONS)


@pytest.mark.parametrize("kind", KINDS)
def test_shapes_masking_and_rows_sum_to_one(kind):
    torch.manual_seed(0)
    att = make_attention(kind, query_dim=7, key_dim=6, align_dim=5)
    annotations = torch.randn(3, 4, 6)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    energies, alpha = att(torch.randn(3, 7), att.keys(annotations), mask)
    assert energies.shape == alpha.shape == (3, 4)
    torch.testing.assert_close(alpha.sum(-1), torch.ones(3))
    assert (alpha[~mask] == 0).all() and torch.isinf(energies[~mask]).all()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [1, 3])
def test_k_queries_per_row_of_keys_equal_the_keys_copied_k_times(kind, k):
    """A query (batch, k, n) (a beam's k hypotheses reading one sentence's keys) gives what the
    same k queries give one by one against a copy of those keys each."""
    torch.manual_seed(1)
    att = make_attention(kind, query_dim=7, key_dim=6, align_dim=5)
    for p in att.parameters():
        torch.nn.init.normal_(p)
    keys = att.keys(torch.randn(2, 5, 6))
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], dtype=torch.bool)
    queries = torch.randn(2, k, 7)
    energies, alpha = att(queries, keys, mask)
    assert energies.shape == alpha.shape == (2, k, 5)
    copied = lambda t: t.repeat_interleave(k, 0)  # noqa: E731
    one_by_one = att(queries.flatten(0, 1), copied(keys), copied(mask))
    torch.testing.assert_close(energies.flatten(0, 1), one_by_one[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(alpha.flatten(0, 1), one_by_one[1], rtol=1e-5, atol=1e-6)


def hand_example(kind):
    """Query s (size 1), annotations h = [[1, 0], [0, 2], [1, 1]] (3 positions x 2), weights set by hand."""
    att = make_attention(kind, query_dim=1, key_dim=2, align_dim=2)
    s, h = torch.tensor([[2.0]]), torch.tensor([[[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]])
    with torch.no_grad():
        for p in att.parameters():
            p.zero_()
        if kind == "additive":
            att.W_a.weight.copy_(torch.tensor([[1.0], [0.0]]))
            att.U_a.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
            att.v_a.weight.copy_(torch.tensor([[1.0, 1.0]]))
            expected = [math.tanh(2 + hj[0]) + math.tanh(hj[1]) for hj in h[0].tolist()]
        elif kind == "dot":
            att.P.weight.copy_(torch.tensor([[1.0], [0.5]]))  # P s = [2, 1]
            expected = [2 * a + 1 * b for a, b in h[0].tolist()]
        elif kind == "general":
            att.W_a.weight.copy_(torch.tensor([[3.0, -1.0]]))  # s^T W_a h = 2 (3a - b)
            expected = [2 * (3 * a - b) for a, b in h[0].tolist()]
        elif kind == "concat":
            att.W_a.weight.copy_(torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
            att.v_a.weight.copy_(torch.tensor([[1.0, -1.0]]))
            expected = [math.tanh(2 + a) - math.tanh(b) for a, b in h[0].tolist()]
        else:  # location: W_a s gives one score per position, whatever h holds
            att.W_a.weight[:3, 0] = torch.tensor([0.5, -1.0, 0.0])
            expected = [1.0, -2.0, 0.0]
    return att, s, h, expected


@pytest.mark.parametrize("kind", KINDS)
def test_hand_computed_example(kind):
    att, s, h, expected = hand_example(kind)
    energies, alpha = att(s, att.keys(h), torch.ones(1, 3, dtype=torch.bool))
    torch.testing.assert_close(energies[0], torch.tensor(expected))
    z = torch.tensor(expected).exp()
    torch.testing.assert_close(alpha[0], z / z.sum())


@pytest.mark.parametrize("kind,layer_norm", [(k, False) for k in KINDS] + [("additive", True)])
def test_each_variant_trains_end_to_end(kind, layer_norm):
    """In a whole RNNsearch, one teacher-forced loss reaches every attention parameter (a finite,
    non-zero gradient), and teacher forcing equals the step loop that search runs
    (``python bench/copy_task.py`` shows each variant learning the copy task)."""
    from model.corpus.parallel import make_batch
    from model.corpus.vocab import PAD
    from model.network.nmt_model import NMTModel

    torch.manual_seed(3)
    model = NMTModel(ModelConfig(src_vocab_size=11, tgt_vocab_size=13, emb_dim=5, hidden=7, align_dim=3, maxout=4,
                                 dropout=0.0, attention=kind, layer_norm=layer_norm))
    with torch.no_grad():  # the paper starts v_a at zero, which leaves W_a and U_a no gradient at update 1
        for p in model.decoder.attention.parameters():
            p.normal_()
    src, tgt = [[4, 5, 6, 7, 8], [9, 10, 4], [5, 6, 7, 8, 9, 10, 4]], [[4, 5, 6], [7, 8, 9, 10, 11], [12, 4]]
    batch = make_batch(src, tgt, [0, 1, 2])
    logits, alpha = model(batch.src, batch.src_len, batch.tgt_in)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD)
    loss.backward()
    for name, p in model.decoder.attention.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, name
    real = batch.tgt_in != PAD
    torch.testing.assert_close(alpha[real].sum(-1), torch.ones(int(real.sum())))
    with torch.no_grad():
        enc = model.encode(batch.src, batch.src_len)
        state = model.decoder.init_state(enc.summary)
        for i in range(batch.tgt_in.size(1)):
            step = model.decoder.step(batch.tgt_in[:, i], state, enc)
            rows = real[:, i]
            torch.testing.assert_close(torch.log_softmax(logits[rows, i].detach(), -1), step.logprobs[rows],
                                       atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(alpha[rows, i].detach(), step.alpha[rows], atol=1e-5, rtol=1e-5)
            state = step.state


def test_unknown_attention_is_refused():
    with pytest.raises(ConfigError, match="attention must be one of"):
        ModelConfig(attention="magic").validate()


def test_one_registry_and_one_interface():
    """Every registered variant implements the Attention interface and is accepted by the config;
    a name outside the registry is refused."""
    from model.network.attention import Attention

    for kind, cls in ATTENTIONS.items():
        assert issubclass(cls, Attention) and cls.keys is not Attention.keys and cls.energies is not Attention.energies
        ModelConfig(attention=kind).validate()
    with pytest.raises(ConfigError, match="attention must be one of additive, dot"):
        ModelConfig(attention="multiplicative").validate()


def test_every_configurable_attention_has_a_class():
    """ModelConfig validates against the names in model.core; each names a class here, in order."""
    from model.core.config import ATTENTION_KINDS

    assert tuple(ATTENTIONS) == ATTENTION_KINDS
