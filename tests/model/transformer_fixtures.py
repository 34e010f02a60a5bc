"""Tiny Transformers for tests: random weights, sizes all different (3 heads of width 5, 3 encoder and 2 decoder layers)."""
from __future__ import annotations

from pathlib import Path

import torch

from model.checkpoints.folder import load_checkpoint, save_checkpoint
from model.core.config import ModelConfig
from model.network.transformer import TransformerModel

SIZES = dict(arch="transformer", src_vocab_size=23, tgt_vocab_size=29, emb_dim=15, heads=3, enc_layers=3, dec_layers=2, ff_dim=7,
             dropout=0.0)


def tiny_transformer(seed: int = 0, **changes) -> TransformerModel:
    """A Transformer with random weights, sharper attention than at initialisation (so tests see
    weights far from uniform), in eval mode."""
    torch.manual_seed(seed)
    model = TransformerModel(ModelConfig(**{**SIZES, **changes}))
    with torch.no_grad():
        for layer in model.decoder.layers:
            layer.cross_attention.W_Q.weight.mul_(4.0)
    return model.eval()


def save_tiny_transformer(rnn_checkpoint: Path, out: Path, seed: int = 0, **changes) -> Path:
    """A checkpoint folder of a tiny random Transformer with the vocabularies of ``rnn_checkpoint``
    (a tiny RNN checkpoint of the test fixtures), so it reads and writes the same text."""
    _, src_vocab, tgt_vocab, raw = load_checkpoint(rnn_checkpoint)
    model = tiny_transformer(seed, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab), **changes)
    from model.core.config import TrainConfig, dataclass_from_dict
    return save_checkpoint(out, model, src_vocab, tgt_vocab, dataclass_from_dict(TrainConfig, raw["train"]))


def assert_steps_equal_the_whole_sentence(model: TransformerModel, memory, tgt_in: torch.Tensor,
                                          padding: int = -1) -> tuple[torch.Tensor, torch.Tensor]:
    """Decoding ``tgt_in`` (batch, T) one cached step at a time gives the log-probabilities,
    attention and every layer's and head's cross-attention of the whole-sentence pass (to 1e-5),
    at every row whose input is not ``padding``; returns the whole pass's (alpha, cross)."""
    logprobs, alpha = model.teacher_forced(memory, tgt_in)
    cross = model.forced_cross_attention(memory, tgt_in)
    state = model.init_state(memory)
    for t in range(tgt_in.size(1)):
        out = model.step(tgt_in[:, t], state, memory)
        state = out.state
        real = tgt_in[:, t] != padding
        torch.testing.assert_close(out.logprobs[real], logprobs[real, t], atol=1e-5, rtol=0)
        torch.testing.assert_close(out.alpha[real], alpha[real, t], atol=1e-5, rtol=0)
        torch.testing.assert_close(out.cross_attention[real], cross[real, :, :, t], atol=1e-5, rtol=0)
    return alpha, cross
