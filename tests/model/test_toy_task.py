"""RNNsearch learns to copy random symbol strings (the annotated encoder-decoder's toy task)."""
import random

import torch
import torch.nn.functional as F

from model.config import ModelConfig
from model.corpus.parallel import make_batch
from model.corpus.vocab import EOS, PAD
from model.decoding.search import SearchConfig, greedy_search
from model.network.nmt_model import NMTModel


def copy_task_accuracy(steps: int = 300, **config) -> float:
    """Train a small model on copying 3-7 symbols for ``steps`` batches; greedy sequence accuracy."""
    torch.manual_seed(0)
    rng = random.Random(0)

    def sample(n):
        return [[rng.randrange(4, 14) for _ in range(rng.randint(3, 7))] for _ in range(n)]

    model = NMTModel(ModelConfig(src_vocab_size=14, tgt_vocab_size=14, emb_dim=16, hidden=32, align_dim=32,
                                 maxout=16, dropout=0.0, **config))
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    for _ in range(steps):
        seqs = sample(32)
        batch = make_batch(seqs, seqs, list(range(32)))
        logits, _ = model(batch.src, batch.src_len, batch.tgt_in)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    test = sample(200)
    outputs = greedy_search(model, test, SearchConfig(beam=1, trace=False))
    return sum(out.ids == seq + [EOS] for out, seq in zip(outputs, test)) / len(test)


def test_rnnsearch_learns_copy_task():
    accuracy = copy_task_accuracy(arch="rnnsearch")
    assert accuracy >= 0.95, f"sequence accuracy {accuracy:.2f}"
