"""model/speed/bf16.py: row padding for cached bf16 kernel shapes."""
import pytest
import torch

from model.speed.bf16 import ROW_BUCKET, pad_rows


@pytest.mark.parametrize("rows", [1, 3, ROW_BUCKET - 1, ROW_BUCKET, ROW_BUCKET + 5])
def test_pads_rows_with_zeros_to_a_multiple_of_the_bucket(rows):
    x = torch.randn(rows, 5, 7)
    padded = pad_rows(x)
    assert padded.shape[1:] == (5, 7) and padded.size(0) % ROW_BUCKET == 0
    assert padded.size(0) - rows < ROW_BUCKET
    torch.testing.assert_close(padded[:rows], x)
    assert (padded[rows:] == 0).all()


def test_padding_is_differentiable_and_off_when_disabled():
    x = torch.randn(3, 5, requires_grad=True)
    assert pad_rows(x, enabled=False) is x
    pad_rows(x).sum().backward()
    torch.testing.assert_close(x.grad, torch.ones(3, 5))


def test_index_vectors_pad_with_row_zero():
    rows = torch.tensor([4, 2, 7])
    padded = pad_rows(rows)
    assert padded.dtype == rows.dtype and padded[:3].tolist() == [4, 2, 7] and (padded[3:] == 0).all()


def test_autocast_context_when_disabled_keeps_an_enclosing_autocast():
    from model.speed.bf16 import autocast

    layer = torch.nn.Linear(5, 3)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with autocast(torch.device("cpu"), enabled=False):
            assert layer(torch.randn(2, 5)).dtype == torch.bfloat16
        with autocast(torch.device("cpu"), enabled=True):
            assert layer(torch.randn(2, 5)).dtype == torch.bfloat16
    assert layer(torch.randn(2, 5)).dtype == torch.float32
