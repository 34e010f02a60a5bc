"""Joey NMT Transformers imported: Joey's own tokens, and every layer's and head's cross-attention
read from the network (model/foreign/joey/transformer.py).

Tiny Joey Transformers (pre-norm with a tied output layer; post-norm untied; heads, layers and
widths all different) are trained here by Joey's own training function. The tests compare the
adapter with Joey's own search on the same weights, never with what a model learned."""
from __future__ import annotations

import threading

import pytest

yaml = pytest.importorskip("yaml", reason="the Joey NMT tests need PyYAML (the joey extra)")
pytest.importorskip("joeynmt", reason="the Joey NMT tests need joeynmt 2.3.0 (pip install --no-deps joeynmt==2.3.0)")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from model.foreign.joey.family import import_joey  # noqa: E402
from model.decoding.cross_attention import shifted_cross_attention  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from tests.conftest import make_pairs  # noqa: E402
from tests.model.joey_fixtures import TRANSFORMERS, joey_decode, joey_testing, train_joey  # noqa: E402
from tests.model.test_joey import assert_refused_by_name, copy_of, edit_config, same_as_joeys_search  # noqa: E402

SENTENCES = [p[0] for p in make_pairs(40, seed=9)]


@pytest.fixture(scope="module", params=sorted(TRANSFORMERS))
def joey_dir(request, tmp_path_factory):
    torch.set_num_threads(1)
    return train_joey(tmp_path_factory.mktemp(request.param), request.param)


@pytest.fixture(scope="module")
def imported(joey_dir, tmp_path_factory) -> Translator:
    return Translator.from_checkpoint(import_joey(joey_dir, tmp_path_factory.mktemp("imported") / "joey-transformer"))


@pytest.mark.parametrize("beam", [1, 5])
def test_translations_equal_joeys_own_search(imported, joey_dir, beam):
    """Joey's search (no length penalty, its default) on the same weights: greedy compared as the
    recurrent imports are (``same_as_joeys_search``: near-ties aside), beam 5 through Joey's own
    beam search (``joey_beam``): every output equal."""
    testing = joey_testing(joey_dir)
    traces = imported.translate(SENTENCES, SearchConfig(beam=beam, length_norm=0.0))
    assert all(same_as_joeys_search(imported, t, testing, beam) for t in traces)


@pytest.mark.parametrize("alpha", [1.0, 2.5])
def test_joeys_length_penalty_gives_joeys_beam_outputs(imported, joey_dir, alpha):
    """With ``testing.beam_alpha`` Joey divides by ((5 + length) / 6)**alpha; the import keeps it
    (``--length-norm`` defaults to it), and beam 5 gives Joey's outputs."""
    testing = joey_testing(joey_dir)
    traces = imported.translate(SENTENCES, SearchConfig(beam=5, length_norm=alpha))
    ours = [t.target_ids for t in traces]
    theirs = [joey_decode(imported.model.joey, t.source_ids, 5, testing, alpha)[0] for t in traces]
    assert ours == theirs


def test_the_import_keeps_the_configs_length_penalty(joey_dir, tmp_path):
    joey = copy_of(joey_dir, tmp_path)
    edit_config(joey, lambda c: c["testing"].update(beam_alpha=1.5))
    model = Translator.from_checkpoint(import_joey(joey, tmp_path / "out")).model
    assert (model.beam_rule.length_norm, model.beam_rule.stopping) == (1.5, "joey")


def test_every_layer_and_head_is_read_and_the_default_is_joeys_own(imported, joey_dir):
    name = joey_dir.parent.name.rstrip("0123456789")
    layers, heads = TRANSFORMERS[name]["layers"][1], TRANSFORMERS[name]["heads"][1]
    testing = joey_testing(joey_dir)
    for trace in imported.translate(SENTENCES[:8], SearchConfig(beam=1)):
        assert trace.cross_attention.shape == (layers, heads, len(trace.target_ids), len(trace.source_ids))
        np.testing.assert_allclose(trace.cross_attention.sum(-1), 1.0, atol=1e-5)
        ids, _, att = joey_decode(imported.model.joey, trace.source_ids, 1, testing)
        if ids == trace.target_ids:  # Joey returns the last layer averaged over heads
            np.testing.assert_allclose(trace.cross_attention[-1].mean(0), np.asarray(att[0])[:len(ids)], atol=1e-4)
            np.testing.assert_allclose(trace.attention, trace.cross_attention[-1].mean(0), atol=1e-6)


def test_forced_reading_equals_the_decodes_steps(imported):
    trace = imported.translate([SENTENCES[3]], SearchConfig(beam=1))[0]
    shifted = shifted_cross_attention(imported.model, trace.source_ids, trace.target_ids)
    np.testing.assert_allclose(shifted[:, :, :-1], trace.cross_attention[:, :, 1:], atol=1e-5)


def test_moving_the_attention_edits_the_last_layer_at_that_step_only(imported):
    src = SENTENCES[5]
    plain = imported.translate([src], SearchConfig(beam=1))[0]
    moved = imported.translate([src], SearchConfig(beam=1), attend={1: 0})[0]
    assert moved.cross_attention[-1, :, 1, 0].tolist() == [1.0] * moved.cross_attention.shape[1]
    np.testing.assert_allclose(moved.cross_attention[:, :, 0], plain.cross_attention[:, :, 0], atol=1e-6)


def test_concurrent_decodes_read_their_own_attention(imported):
    """The hooks act on the thread that set them: decodes in parallel equal decodes alone."""
    alone = [imported.translate([s], SearchConfig(beam=2))[0] for s in SENTENCES[:6]]
    found = [None] * 6

    def run(i):
        found[i] = imported.translate([SENTENCES[i]], SearchConfig(beam=2))[0]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(alone, found):
        assert a.target_ids == b.target_ids
        np.testing.assert_allclose(a.cross_attention, b.cross_attention, atol=1e-6)


@pytest.mark.parametrize("change, named", [
    (lambda c: c["model"]["decoder"].update(num_heads=5), "num_heads=5 does not divide hidden_size=12"),
    (lambda c: c["model"]["encoder"].update(layer_norm="middle"), "model.encoder.layer_norm='middle'"),
    (lambda c: c["model"]["decoder"].update(ff_size=10**9), "ff_size 1000000000"),
    (lambda c: c["model"]["decoder"].pop("num_heads"), "model.decoder.num_heads is missing"),
])
def test_hostile_transformer_settings_are_refused_by_name(joey_dir, tmp_path, change, named):
    assert_refused_by_name(joey_dir, tmp_path, change, named)


def test_a_pre_norm_model_is_taken_apart_and_a_post_norm_one_says_why(imported, request):
    """The layer-wise explanations read a pre-norm Joey Transformer as they read this project's
    (its anatomy adds up to Joey's own distribution, contributions sum to 1, heads switch off on a
    copy); a post-norm one is refused in one line."""
    from model.core.anatomy import CROSS, HeadMask
    from model.corpus.vocab import BOS
    from model.explaining import registry
    from model.explaining.contributions import ALTI_PLUS, MATRICES, contributions

    model = imported.model
    trace = imported.translate([SENTENCES[3]], SearchConfig(beam=3))[0]
    src, out = trace.source_ids, trace.target_ids
    if TRANSFORMERS[request.node.callspec.params["joey_dir"]]["layer_norm"] == "post":
        assert not model.supports_anatomy
        assert not set(MATRICES) & set(registry.explain(model, src, out, list(MATRICES)))
        with pytest.raises(NotImplementedError, match="post-norm"):
            model.anatomy(torch.tensor(src), torch.tensor([BOS, *out[:-1]]))
        return
    assert model.supports_anatomy
    tgt_in = torch.tensor([BOS, *out[:-1]])
    anatomy = model.anatomy(torch.tensor(src), tgt_in)
    memory = model.encode(torch.tensor([src]), torch.tensor([len(src)]))
    own, _ = model.teacher_forced(memory, tgt_in.unsqueeze(0))
    read = anatomy.read_out(anatomy.decoder_states[-1])
    finite = torch.isfinite(own[0])
    assert torch.equal(finite, torch.isfinite(read))
    torch.testing.assert_close(read[finite], own[0][finite], atol=1e-5, rtol=0)
    for method in MATRICES:
        found = contributions(model, src, out, method)
        np.testing.assert_allclose(found.source.sum(1) + found.inputs.sum(1), 1.0, atol=1e-5)
    assert ALTI_PLUS in registry.explain(model, src, out, [ALTI_PLUS])
    layers, heads = model.attention_heads[CROSS]
    deaf = model.with_heads_masked(HeadMask(frozenset((CROSS, l, h) for l in range(layers) for h in range(heads))))
    a = deaf.teacher_forced(deaf.encode(torch.tensor([src]), torch.tensor([len(src)])), tgt_in.unsqueeze(0))[0]
    other = [src[0]] * (len(src) - 1) + [src[-1]]
    b = deaf.teacher_forced(deaf.encode(torch.tensor([other]), torch.tensor([len(other)])), tgt_in.unsqueeze(0))[0]
    torch.testing.assert_close(a, b, atol=1e-5, rtol=0)  # no cross-attention head on: the source is not read
    torch.testing.assert_close(model.teacher_forced(memory, tgt_in.unsqueeze(0))[0], own, atol=0, rtol=0)
