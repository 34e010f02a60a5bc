"""The decoding interface, driven by the model written in docs/own-model.md: the page's code
runs as printed, and search, traces and saliency work for a model this project did not write."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from model.explaining.saliency import saliency
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator

DOC = Path(__file__).resolve().parents[2] / "docs" / "own-model.md"


def doc_namespace() -> dict:
    """The names the first three Python blocks of the page's "The interface" section define (the
    model, the vocabulary and the usage example), run in order as a reader would."""
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text[text.index("## The interface"):], flags=re.S)
    namespace: dict = {}
    for block in blocks[:3]:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 (the project's own documentation)
    return namespace


@pytest.fixture(scope="module")
def ns() -> dict:
    return doc_namespace()


@pytest.fixture(scope="module")
def translator(ns) -> Translator:
    torch.manual_seed(3)
    src = ns["WordVocab"]("a the dog cat runs sits".split())  # 10 ids: 3, 5 and 7 stay distinct sizes
    tgt = ns["WordVocab"]("un le chien chat court".split())
    return Translator(ns["TinyAttention"](len(src), len(tgt), hidden=7), src, tgt, name="tiny-doc")


SENTENCES = ["the dog runs", "a cat sits on the dog", "dog", "the cat runs and the dog sits"]


def test_the_usage_example_runs_as_printed(ns):
    trace = ns["trace"]
    assert trace.attention.shape == (len(trace.target_ids), len(trace.source_ids))


@pytest.mark.parametrize("beam", [1, 3, 5])
def test_traces_are_complete(translator, beam):
    for trace in translator.translate(SENTENCES, SearchConfig(beam=beam)):
        n_out, n_src = len(trace.target_ids), len(trace.source_ids)
        assert trace.attention.shape == (n_out, n_src) and trace.energies.shape == (n_out, n_src)
        np.testing.assert_allclose(trace.attention.sum(1), 1.0, atol=1e-5)
        assert len(trace.step_logprobs) == n_out == len(trace.topk)
        assert trace.beam[0].parent is None and sum(node.status == "best" for node in trace.beam) == n_out + 1
        assert trace.model == "tiny-attention"


def test_beam_one_equals_greedy(translator):
    greedy = translator.translate(SENTENCES, SearchConfig(beam=1, trace=False))
    beam = translator.translate(SENTENCES, SearchConfig(beam=1))
    assert [t.target_ids for t in greedy] == [t.target_ids for t in beam]


def test_batch_size_does_not_change_results(translator):
    cfg = SearchConfig(beam=3)
    alone = [translator.translate([s], cfg)[0] for s in SENTENCES]
    together = translator.translate(SENTENCES, cfg, batch_size=3)
    assert [t.target_ids for t in alone] == [t.target_ids for t in together]
    for a, b in zip(alone, together):
        np.testing.assert_allclose(a.attention, b.attention, atol=1e-5)


def test_what_if_and_saliency(translator):
    pinned = translator.translate([SENTENCES[1]], SearchConfig(beam=3), attend={0: 2})[0]
    assert pinned.attention[0, 2] == pytest.approx(1.0)
    forced = translator.translate([SENTENCES[1]], SearchConfig(beam=3), prefixes=[[5, 6]])[0]
    assert forced.target_ids[:2] == [5, 6]
    sal = saliency(translator.model, forced.source_ids, forced.target_ids)
    assert sal.shape == (len(forced.target_ids), len(forced.source_ids))
    np.testing.assert_allclose(sal.sum(1), 1.0, atol=1e-5)


def assert_teacher_forcing_is_the_step_loop(translator: Translator, source: str, tgt_in: list[int]) -> None:
    """``teacher_forced`` (what saliency and alignment use) gives what ``step`` gives one token at a time."""
    model = translator.model
    src = torch.tensor([translator.src_vocab.encode(source)])
    tgt = torch.tensor([tgt_in])
    with torch.inference_mode():
        memory = model.encode(src, torch.tensor([src.size(1)]))
        logprobs, alpha = model.teacher_forced(memory, tgt)
        state = model.init_state(memory)
        for t in range(tgt.size(1)):
            out = model.step(tgt[:, t], state, memory)
            state = out.state
            torch.testing.assert_close(out.logprobs, logprobs[:, t])
            torch.testing.assert_close(out.alpha, alpha[:, t])


def test_teacher_forcing_default_equals_the_steps(translator):
    assert_teacher_forcing_is_the_step_loop(translator, SENTENCES[3], [2, 4, 5, 6])


def test_a_hook_of_one_thread_leaves_other_threads_forward_passes_alone():
    """Explanations hook a model that a server shares between sessions (own_thread_hook)."""
    import threading

    from torch import nn

    from model.core.decodable import own_thread_hook

    layer, x = nn.Linear(3, 5), torch.randn(7, 3)
    with torch.no_grad():
        plain = layer(x)
        handle = own_thread_hook(layer, lambda _m, _i, output: output * 2)
        seen = []
        thread = threading.Thread(target=lambda: seen.append(layer(x)))
        thread.start()
        thread.join()
        mine = layer(x)
        handle.remove()
    assert torch.equal(seen[0], plain) and torch.equal(mine, 2 * plain)
