"""The Paper page's per-equation values agree with the decoder and with a beam-search trace."""
import numpy as np
import pytest
import torch

from model.decoding.search import SearchConfig
from model.decoding.step_by_step import dissect
from model.decoding.translator import Translator


@pytest.fixture(scope="module", params=["rnnsearch", "rnnencdec"])
def translator(request, tiny_checkpoints):
    return Translator.from_checkpoint(tiny_checkpoints[request.param])


def test_dissect_matches_the_trace_and_the_step_function(translator):
    trace = translator.translate(["the big dog sits in a small park"], SearchConfig(beam=3))[0]
    anatomy = dissect(translator.model, trace.source_ids, trace.target_ids)
    n, src_len = translator.model.config.hidden, len(trace.source_ids)
    assert anatomy.annotations.shape == (src_len, 2 * n) and anatomy.s0.shape == (n,)
    assert len(anatomy.steps) == len(trace.target_ids)
    for step, logp in zip(anatomy.steps, trace.step_logprobs):
        assert np.log(step.probs[step.token_id]) == pytest.approx(logp, abs=1e-4)
        assert step.probs.sum() == pytest.approx(1.0, abs=1e-5)
        assert ((step.reset > 0) & (step.reset < 1)).all() and ((step.update > 0) & (step.update < 1)).all()
    if translator.arch == "rnnencdec":
        assert all(s.alpha is None for s in anatomy.steps)
        np.testing.assert_allclose(anatomy.steps[2].context, anatomy.summary, atol=1e-6)  # c is fixed
        return
    alphas = np.stack([s.alpha for s in anatomy.steps])
    np.testing.assert_allclose(alphas, trace.attention, atol=1e-5)
    np.testing.assert_allclose(np.stack([s.energies for s in anatomy.steps]), trace.energies, atol=1e-4)
    for step in anatomy.steps:  # c_i = sum_j alpha_ij h_j
        np.testing.assert_allclose(step.context, step.alpha @ anatomy.annotations, atol=1e-5)


def test_states_chain_like_decoder_step(translator):
    trace = translator.translate(["a cat eats"], SearchConfig(beam=1))[0]
    anatomy = dissect(translator.model, trace.source_ids, trace.target_ids)
    for before, after in zip(anatomy.steps, anatomy.steps[1:]):
        np.testing.assert_array_equal(after.s_prev, before.state)
    with torch.no_grad():
        enc = translator.model.encode(torch.tensor([trace.source_ids]), torch.tensor([len(trace.source_ids)]))
        first = translator.model.decoder.step(torch.tensor([2]), translator.model.decoder.init_state(enc.summary), enc)
    np.testing.assert_allclose(anatomy.steps[0].state, first.state[0].numpy(), atol=1e-6)
