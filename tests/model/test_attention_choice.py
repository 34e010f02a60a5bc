"""Which attention a view shows, as the decoding interface states it (model/core/decodable.py:
``attention_layers``, ``alignment_layer``, ``default_attention``, ``supports_attention_edit``,
``forced_cross_attention``), recorded in the trace, and turned into a matrix by one function
(model/decoding/cross_attention.py · ``view_matrix``)."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from model.decoding.cross_attention import (ChoiceWords, HeadChoice, default_choice, every_head, has_heads, reading,
                                            shifted_cross_attention, view_matrix)
from model.decoding.search import SearchConfig
from model.decoding.trace import Trace, TraceError
from model.decoding.translator import Translator

from .transformer_fixtures import save_tiny_transformer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def layered(tiny_checkpoints, tmp_path):
    """A tiny Transformer (2 decoder layers of 3 heads) whose views show layer 1, not the last."""
    folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t", alignment_layer=1)
    return Translator.from_checkpoint(folder)


@pytest.mark.parametrize("arch, edits", [("rnnsearch", True), ("rnnencdec", False)])
def test_a_model_with_one_attention_states_so(tiny_checkpoints, arch, edits):
    model = Translator.from_checkpoint(tiny_checkpoints[arch]).model
    assert (model.attention_layers, model.alignment_layer, has_heads(model)) == (0, 0, False)
    assert model.supports_attention_edit is edits  # what the what-if view asks
    with pytest.raises(NotImplementedError, match="one attention"):
        model.forced_cross_attention(None, torch.zeros(1, 2, dtype=torch.long))
    trace = Translator.from_checkpoint(tiny_checkpoints[arch]).translate(["a dog runs"])[0]
    assert trace.alignment_layer is None and view_matrix(trace) is trace.attention


def test_the_trace_records_the_layer_its_attention_is_and_views_read_it(layered):
    model = layered.model
    assert (model.attention_layers, model.alignment_layer, has_heads(model)) == (2, 0, True)
    trace = layered.translate(["a man eats a red ball"], SearchConfig(beam=3))[0]
    assert trace.alignment_layer == 0 and default_choice(trace) == HeadChoice(0)
    np.testing.assert_allclose(view_matrix(trace, default_choice(trace)), trace.attention, atol=1e-6)
    np.testing.assert_allclose(trace.attention, trace.cross_attention[0].mean(0), atol=1e-6)
    head = HeadChoice(1, 2)
    np.testing.assert_array_equal(view_matrix(trace, head), trace.cross_attention[1, 2])
    shifted = HeadChoice(1, None, shifted=True)
    again = shifted_cross_attention(model, trace.source_ids, trace.target_ids)
    np.testing.assert_allclose(view_matrix(trace, shifted, model), again[1].mean(0), atol=1e-6)
    np.testing.assert_array_equal(view_matrix(trace, shifted, shifted=again), reading(again, shifted))


def test_default_attention_is_the_alignment_layers_mean_over_heads():
    from model.core.decodable import Decodable

    cross = torch.rand(3, 4, 5, 7, 11)  # (batch, layers, heads, tgt, src)

    class Layers(Decodable):  # a model of four layers whose views show the third
        description = embed_source = encode = init_state = step = reorder = None
        attention_layers = 4
        alignment_layer = 2

    found = Decodable.default_attention(Layers.__new__(Layers), cross)
    torch.testing.assert_close(found, cross[:, 2].mean(1))
    assert found.shape == (3, 7, 11)


def test_the_layer_reads_back_from_json_and_an_older_trace_takes_the_last(layered):
    trace = layered.translate(["the small cat"], SearchConfig(beam=2))[0]
    data = json.loads(trace.dumps())
    assert data["alignment_layer"] == 0 and Trace.from_json(data).alignment_layer == 0
    del data["alignment_layer"]
    assert Trace.from_json(data).alignment_layer == 1  # the last of two layers
    with pytest.raises(TraceError, match="alignment_layer"):
        Trace.from_json({**data, "alignment_layer": 2})


@pytest.mark.parametrize("layer, want", [(None, [(k, h) for k in range(2) for h in range(3)]), (1, [(1, 0), (1, 1), (1, 2)])])
def test_every_head_is_each_heads_choice_and_matrix_in_order(layer, want):
    cross = np.random.default_rng(3).dirichlet(np.ones(5), size=(2, 3, 7))  # (layers, heads, tgt, src)
    found = every_head(cross, layer, shifted=True)
    assert [(c.layer, c.head) for c, _ in found] == want and all(c.shifted for c, _ in found)
    for choice, matrix in found:
        np.testing.assert_array_equal(matrix, reading(cross, choice))


def test_a_choice_is_labelled_in_the_words_given():
    assert HeadChoice(1, 2, True).label() == "layer 2, head 3, shifted"
    assert HeadChoice(0).label() == "layer 1 (mean of heads)"
    assert HeadChoice(0).label(ChoiceWords("L{layer} H{head}", "L{layer} mean", " (s)")) == "L1 mean"


def test_no_module_probes_a_model_for_the_attention_it_shows():
    """The interface states these names for every model: nothing asks a model whether it has them."""
    names = r"(alignment_layer|attention_layers|forced_cross_attention|supports_attention_edit)"
    probe = re.compile(rf"(getattr|hasattr)\([^)]*['\"]{names}['\"]")
    found = [str(p.relative_to(REPO)) for package in ("model", "viz", "bench") for p in (REPO / package).rglob("*.py")
             if "node_modules" not in p.parts and probe.search(p.read_text(encoding="utf-8"))]
    assert found == []
