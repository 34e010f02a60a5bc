"""bench/products.py: the matrix products a piece of work runs, counted and replayed by shape."""
import pytest
import torch

from bench.products import record


@pytest.mark.parametrize("rows, inner, out", [(3, 5, 7), (7, 3, 5)])
def test_a_linear_layer_forward_and_backward(rows, inner, out):
    layer = torch.nn.Linear(inner, out)
    x = torch.randn(rows, inner, requires_grad=True)
    found = record(lambda: layer(x).sum().backward())
    forward = 2 * rows * inner * out
    # forward: x W^T; backward: d x = g W and d W = g^T x, each as many FLOPs as the forward
    assert found.gflop * 1e9 == pytest.approx(3 * forward)
    assert len(found.calls) == 3


def test_inference_mode_keeps_linear_and_gru_whole():
    gru, layer = torch.nn.GRU(5, 7, batch_first=True), torch.nn.Linear(7, 3)
    x = torch.randn(3, 4, 5)  # (batch, steps, features)
    with torch.inference_mode():
        found = record(lambda: layer(gru(x)[0]))
    ops = [str(op) for op, _ in found.calls]
    assert ops == ["aten.gru.input", "aten.linear.default"]
    gru_flop = 2 * 3 * 4 * (21 * 5 + 21 * 7)  # every step of every row through W_ih (3h, in) and W_hh (3h, h)
    assert found.gflop * 1e9 == pytest.approx(gru_flop + 2 * 3 * 4 * 7 * 3)


def test_replay_runs_the_products_on_tensors_laid_out_alike():
    weight = torch.randn(7, 5)
    x = torch.randn(3, 5)
    found = record(lambda: torch.mm(x, weight.t()))  # a transposed factor: its strides are kept
    (op, (a, b)), = found.calls
    assert a == ((3, 5), (5, 1), torch.float32) and b == ((5, 7), (1, 5), torch.float32)
    again = record(found.replay)  # the replay runs the same products, shapes and strides included
    assert again.calls == found.calls and again.gflop == found.gflop


def test_a_replay_of_gradients_runs_what_the_backward_ran():
    gru = torch.nn.GRU(5, 7, batch_first=True)
    x = torch.randn(3, 4, 5, requires_grad=True)
    found = record(lambda: gru(x)[0].sum().backward())
    again = record(found.replay)
    assert again.calls == found.calls and found.gflop > 0


def test_other_operations_are_not_products():
    x = torch.randn(3, 5)
    found = record(lambda: (x.tanh() + x).sum())
    assert found.calls == [] and found.gflop == 0.0
