"""model/speed/rand_dropout.py: nn.Dropout's distribution with a cheaper mask."""
import pytest
import torch

from model.speed.rand_dropout import Dropout


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5])
def test_keeps_one_minus_p_and_preserves_the_mean(p):
    torch.manual_seed(0)
    x = torch.ones(300, 500)
    y = Dropout(p).train()(x)
    kept = y != 0
    assert abs(kept.float().mean().item() - (1 - p)) < 0.01
    torch.testing.assert_close(y[kept], torch.full_like(y[kept], 1 / (1 - p)))
    assert abs(y.mean().item() - 1.0) < 0.02


def test_gradient_flows_through_kept_units_only():
    x = torch.randn(3, 5, 7, requires_grad=True)
    y = Dropout(0.3).train()(x)
    y.sum().backward()
    torch.testing.assert_close(x.grad, (y != 0).float() / 0.7)


def test_identity_in_eval_mode_and_at_zero():
    x = torch.randn(3, 5)
    assert Dropout(0.3).eval()(x) is x
    assert Dropout(0.0).train()(x) is x


@pytest.mark.parametrize("p", [-0.1, 1.0])
def test_refuses_probabilities_outside_0_1(p):
    with pytest.raises(ValueError, match="dropout"):
        Dropout(p)


def test_mask_is_fp32_under_bf16():
    torch.manual_seed(0)
    y = Dropout(0.3).train()(torch.ones(400, 500, dtype=torch.bfloat16))
    assert y.dtype == torch.bfloat16
    assert abs((y != 0).float().mean().item() - 0.7) < 0.005
