"""The fused output layer + cross-entropy against the straightforward F.linear + F.cross_entropy."""
import pytest
import torch
import torch.nn.functional as F

from model.speed import fused_loss as loss
from model.speed.bf16 import ROW_BUCKET
from model.speed.fused_loss import linear_cross_entropy


def reference(features, output, targets, smoothing):
    return F.cross_entropy(F.linear(features, output.weight, output.bias), targets,
                           label_smoothing=smoothing, reduction="sum")


def leaves(n_rows: int, features: int = 5, vocab: int = 11, seed: int = 0):
    torch.manual_seed(seed)
    output = torch.nn.Linear(features, vocab)
    x = torch.randn(n_rows, features, requires_grad=True)
    return x, output, torch.randint(0, vocab, (n_rows,))


@pytest.mark.parametrize("n_rows,chunk,smoothing", [(7, 3, 0.0), (7, 3, 0.1), (3, 5, 0.1), (9, 9, 0.3), (1, 2, 0.0)])
def test_fp32_loss_and_gradients_equal_the_reference(monkeypatch, n_rows, chunk, smoothing):
    monkeypatch.setattr(loss, "CHUNK_ROWS", chunk)  # rows split over chunks, one partial
    results = []
    for fn in (linear_cross_entropy, reference):
        x, output, targets = leaves(n_rows)
        value = fn(x, output, targets, smoothing)
        (value * 0.37).backward()  # a non-unit upstream gradient must scale every gradient
        results.append((value, x.grad, output.weight.grad, output.bias.grad))
    for ours, theirs in zip(*results):
        torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("n_rows", [7, ROW_BUCKET + 3])  # one partial bucket; rows padded past a bucket
def test_bf16_gradients_stay_close_to_fp32(monkeypatch, n_rows):
    monkeypatch.setattr(loss, "CHUNK_ROWS", 50)  # several chunks
    results = []
    for bf16 in (False, True):
        x, output, targets = leaves(n_rows, features=32, vocab=13)
        value = linear_cross_entropy(x, output, targets, 0.1, bf16=bf16)
        value.backward()
        results.append((value, x.grad, output.weight.grad, output.bias.grad))
    assert all(t.dtype == torch.float32 for t in results[1])
    torch.testing.assert_close(results[1][0], results[0][0])  # logits and loss are fp32 in both modes
    for ours, theirs in zip(results[1][1:], results[0][1:]):  # sums over rows cancel: compare norms
        assert ours.shape == theirs.shape
        assert (ours - theirs).norm() < 1e-2 * theirs.norm()


def test_no_gradient_work_without_grad_mode():
    x, output, targets = leaves(5)
    with torch.no_grad():
        value = linear_cross_entropy(x, output, targets)
    assert not value.requires_grad
    torch.testing.assert_close(value, reference(x, output, targets, 0.0).detach())
