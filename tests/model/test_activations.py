"""model/speed/activations.py: tanh(a + b) as 2σ(2x) − 1 inside ``fast_tanh`` without gradients,
torch's own tanh everywhere else."""
import threading

import pytest
import torch

from model.speed.activations import fast_tanh, tanh_of_sum

SHAPES = [((3, 1, 7), (3, 5, 7)), ((5, 7), (7,)), ((1,), (3, 5))]


@pytest.mark.parametrize("shape_a, shape_b", SHAPES)
@pytest.mark.parametrize("mode", ["inference_mode", "no_grad"])
def test_inside_the_switch_it_is_tanh_and_leaves_its_inputs_alone(shape_a, shape_b, mode):
    torch.manual_seed(5)
    a, b = 4 * torch.randn(shape_a), 4 * torch.randn(shape_b)  # far into both tails too
    kept_a, kept_b = a.clone(), b.clone()
    with getattr(torch, mode)(), fast_tanh():
        found = tanh_of_sum(a, b)
    torch.testing.assert_close(found, torch.tanh(a + b), atol=1e-6, rtol=0)
    assert torch.equal(a, kept_a) and torch.equal(b, kept_b)


def test_outside_the_switch_or_switched_off_it_is_torchs_tanh():
    torch.manual_seed(3)
    a, b = torch.randn(3, 1, 5), torch.randn(3, 7, 5)
    with torch.inference_mode():
        assert torch.equal(tanh_of_sum(a, b), torch.tanh(a + b))
        with fast_tanh(False):
            assert torch.equal(tanh_of_sum(a, b), torch.tanh(a + b))
        with fast_tanh():
            assert not torch.equal(tanh_of_sum(a, b), torch.tanh(a + b))  # the other form: rounding differs
        assert torch.equal(tanh_of_sum(a, b), torch.tanh(a + b))  # the switch is put back


def test_the_switch_is_each_threads_own():
    a, b = torch.randn(3, 1, 5), torch.randn(3, 7, 5)
    seen = []
    with torch.inference_mode(), fast_tanh():
        thread = threading.Thread(target=lambda: seen.append(torch.equal(tanh_of_sum(a, b), torch.tanh(a + b))))
        thread.start()
        thread.join()
    assert seen == [True]  # another thread's decode is untouched


def test_with_a_gradient_it_is_torchs_tanh_and_differentiates_as_tanh():
    torch.manual_seed(7)
    a, b = torch.randn(3, 1, 5, requires_grad=True), torch.randn(3, 7, 5)
    with fast_tanh():
        found = tanh_of_sum(a, b)
    assert torch.equal(found, torch.tanh(a + b))  # the very kernel: training is unchanged
    found.sum().backward()
    torch.testing.assert_close(a.grad, (1 - torch.tanh(a + b) ** 2).sum(1, keepdim=True))
