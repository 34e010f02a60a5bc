import math

import pytest
import torch

from model.network.attention import AdditiveAttention


def make(batch=3, src=5, query=7, key=6, align=4, seed=0):
    torch.manual_seed(seed)
    att = AdditiveAttention(query, key, align)
    for p in att.parameters():
        torch.nn.init.normal_(p)
    keys = att.keys(torch.randn(batch, src, key))
    mask = torch.ones(batch, src, dtype=torch.bool)
    mask[1, 3:] = False  # second sentence has 3 real tokens
    mask[2, 1:] = False  # third has 1
    return att, torch.randn(batch, query), keys, mask


def test_shapes_rows_sum_to_one_and_padding_gets_zero():
    att, query, keys, mask = make()
    energies, alpha = att(query, keys, mask)
    assert energies.shape == alpha.shape == (3, 5)
    torch.testing.assert_close(alpha.sum(-1), torch.ones(3))
    assert (alpha[~mask] == 0).all()
    assert torch.isinf(energies[~mask]).all()
    assert alpha[2, 0] == 1.0


def test_hand_computed_example():
    """3 source positions, 2-unit alignment layer, weights chosen by hand."""
    att = AdditiveAttention(query_dim=1, key_dim=1, align_dim=2)
    with torch.no_grad():
        att.W_a.weight.copy_(torch.tensor([[1.0], [0.0]]))
        att.U_a.weight.copy_(torch.tensor([[1.0], [2.0]]))
        att.U_a.bias.zero_()
        att.v_a.weight.copy_(torch.tensor([[1.0, -1.0]]))
    h = torch.tensor([[[0.0], [1.0], [-1.0]]])  # (1, 3, 1)
    s = torch.tensor([[0.5]])
    energies, alpha = att(s, att.keys(h), torch.ones(1, 3, dtype=torch.bool))
    expected = [math.tanh(0.5 + hj) - math.tanh(2 * hj) for hj in (0.0, 1.0, -1.0)]
    torch.testing.assert_close(energies[0], torch.tensor(expected))
    z = [math.exp(e) for e in expected]
    torch.testing.assert_close(alpha[0], torch.tensor([v / sum(z) for v in z]))


def test_paper_initialisation_gives_uniform_attention():
    att = AdditiveAttention(7, 6, 4)
    att.reset_parameters()
    _, query, keys, mask = make()
    keys = att.keys(torch.randn(3, 5, 6))
    _, alpha = att(query, keys, mask)
    lengths = mask.sum(-1, keepdim=True).float()
    torch.testing.assert_close(alpha, mask.float() / lengths)


@pytest.mark.parametrize("batch,src", [(1, 1), (2, 7), (5, 3)])
def test_any_sizes(batch, src):
    att = AdditiveAttention(3, 5, 7)
    mask = torch.ones(batch, src, dtype=torch.bool)
    _, alpha = att(torch.randn(batch, 3), att.keys(torch.randn(batch, src, 5)), mask)
    torch.testing.assert_close(alpha.sum(-1), torch.ones(batch))
