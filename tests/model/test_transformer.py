"""The Transformer (model/network/transformer.py) on tiny random models: masks, the decoder
cache, the decoding interface, traces, checkpoints and hostile configs."""
import json

import numpy as np
import pytest
import torch

from model.checkpoints.folder import load_checkpoint
from model.core.config import ModelConfig
from model.core.errors import CheckpointError, ConfigError
from model.corpus.parallel import pad
from model.corpus.vocab import BOS, PAD
from model.decoding.search import SearchConfig, beam_search, greedy_search
from model.decoding.trace import Trace
from model.decoding.translator import Translator
from model.network.architectures import build_model
from model.network.transformer import TransformerModel, sinusoids
from tests.model.transformer_fixtures import (SIZES, assert_steps_equal_the_whole_sentence, save_tiny_transformer,
                                              tiny_transformer)

SRC = [[5, 6, 7, 8, 9, 3], [10, 11, 3], [13, 3], [4, 14, 15, 16, 3]]
TGT_IN = torch.tensor([[BOS, 4, 9, 6, 5], [BOS, 7, 8, 0, 0], [BOS, 9, 0, 0, 0], [BOS, 5, 5, 5, 0]])


def memory(model, seqs=SRC):
    return model.encode(pad(seqs), torch.tensor([len(s) for s in seqs]))


def test_sinusoids_follow_section_3_5():
    pe = sinusoids(7, 6, torch.device("cpu"), start=3)  # positions 3..9
    for pos in (0, 4, 6):
        for i in range(3):
            rate = 10000 ** (-2 * i / 6)
            assert pe[pos, 2 * i].item() == pytest.approx(np.sin((pos + 3) * rate), abs=1e-6)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(np.cos((pos + 3) * rate), abs=1e-6)


def test_a_later_target_token_changes_no_earlier_output():
    """The causal mask: position i reads tgt_in[:, :i+1] only."""
    model = tiny_transformer()
    mem = memory(model)
    logprobs, alpha = model.teacher_forced(mem, TGT_IN)
    for t in (1, 3):
        changed = TGT_IN.clone()
        changed[0, t] = 17
        other, other_alpha = model.teacher_forced(mem, changed)
        torch.testing.assert_close(other[0, :t], logprobs[0, :t], atol=1e-6, rtol=0)
        torch.testing.assert_close(other_alpha[0, :t], alpha[0, :t], atol=1e-6, rtol=0)
        assert not torch.allclose(other[0, t:], logprobs[0, t:])


def test_padded_source_positions_get_no_weight_and_every_head_sums_to_one():
    model = tiny_transformer()
    mem = memory(model)
    weights = model.forced_cross_attention(mem, TGT_IN)  # (batch, layers, heads, T, src_len)
    assert weights.shape == (4, 2, 3, 5, 6)
    for row, seq in enumerate(SRC):
        assert (weights[row, ..., len(seq):] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(4, 2, 3, 5), atol=1e-6, rtol=0)


def test_padding_in_the_batch_changes_no_sentence():
    model = tiny_transformer()
    together = model.teacher_forced(memory(model), TGT_IN)[0]
    for row, seq in enumerate(SRC):
        length = int((TGT_IN[row] != PAD).sum())
        alone = model.teacher_forced(memory(model, [seq]), TGT_IN[row:row + 1, :length])[0]
        torch.testing.assert_close(alone[0], together[row, :length], atol=1e-5, rtol=0)


@pytest.mark.parametrize("alignment_layer", [0, 1])
def test_the_cached_step_equals_recomputing_the_whole_prefix(alignment_layer):
    """Incremental decoding with the key/value cache against the whole-sentence pass, every
    layer and head of the cross-attention included."""
    model = tiny_transformer(alignment_layer=alignment_layer)
    alpha, cross = assert_steps_equal_the_whole_sentence(model, memory(model), TGT_IN, padding=PAD)
    layer = (alignment_layer or 2) - 1
    torch.testing.assert_close(alpha, cross[:, layer].mean(1), atol=1e-6, rtol=0)


@pytest.mark.parametrize("batch,q_len,k_len", [(3, 1, 5), (5, 7, 3), (7, 5, 5)])
def test_the_fused_kernel_and_the_explicit_products_give_one_output(batch, q_len, k_len):
    """Without weights attention reads PyTorch's fused kernel, with them eq. 1's products: the
    same output, and the keys the mask hides are never read."""
    from model.network.multi_head_attention import MultiHeadAttention

    g = torch.Generator().manual_seed(batch)
    attention = MultiHeadAttention(12, 3)
    query = torch.randn(batch, q_len, 12, generator=g)
    memory_ = torch.randn(batch, k_len, 12, generator=g)
    mask = torch.rand(batch, 1, k_len, generator=g) > 0.4
    mask[:, :, 0] = True  # every row reads a key
    unread = memory_.masked_fill(~mask.transpose(1, 2), 1e3)  # what the mask hides changes nothing
    with torch.inference_mode():
        fused, none = attention.attend(query, *attention.keys_values(memory_), mask, need_weights=False)
        explicit, weights = attention.attend(query, *attention.keys_values(memory_), mask, need_weights=True)
        hidden, _ = attention.attend(query, *attention.keys_values(unread), mask, need_weights=False)
    assert none is None and weights.shape == (batch, 3, q_len, k_len)
    torch.testing.assert_close(explicit, fused, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(hidden, fused, atol=1e-6, rtol=1e-5)


def test_the_packed_training_path_equals_teacher_forcing():
    model = tiny_transformer()
    src, src_len = pad(SRC), torch.tensor([len(s) for s in SRC])
    features, positions = model(src, src_len, TGT_IN, packed=True)
    logprobs, _ = model.teacher_forced(memory(model), TGT_IN)
    packed = torch.log_softmax(model.decoder.W_o(features), -1)
    torch.testing.assert_close(packed, logprobs.flatten(0, 1)[positions], atol=1e-5, rtol=0)
    assert positions.tolist() == (TGT_IN != PAD).flatten().nonzero().squeeze(1).tolist()


def test_the_output_layer_is_the_target_embedding():
    model = tiny_transformer()
    assert model.decoder.W_o.weight is model.decoder.embed.weight
    assert "decoder.W_o.weight" not in model.state_dict() and "decoder.W_o.bias" in model.state_dict()


def test_moving_the_attention_acts_on_the_chosen_layer_only():
    model = tiny_transformer(alignment_layer=1)
    mem = memory(model)
    y = torch.full((4,), BOS)
    plain = model.step(y, model.init_state(mem), mem)
    override = torch.zeros(4, 6)
    override[:, 1] = 1.0
    moved = model.step(y, model.init_state(mem), mem, alpha_override=override)
    torch.testing.assert_close(moved.alpha, override)
    assert (moved.cross_attention[:, 0, :, 1] == 1).all()  # every head of layer 1
    assert (moved.cross_attention[:, 1, :, 1] < 1).all()  # layer 2 computes its own weights
    assert not torch.allclose(moved.logprobs, plain.logprobs)


@pytest.mark.parametrize("beam", [1, 3])
def test_search_in_a_batch_equals_one_sentence_at_a_time(tiny_checkpoints, tmp_path, beam):
    folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "transformer")
    translator = Translator.from_checkpoint(folder)
    sentences = ["a dog runs in the park", "the small cat", "a man eats a red ball on the street"]
    cfg = SearchConfig(beam=beam)
    together = translator.translate(sentences, cfg, batch_size=3)
    for sentence, joint in zip(sentences, together):
        alone = translator.translate([sentence], cfg)[0]
        assert alone.target_ids == joint.target_ids
        assert alone.score == pytest.approx(joint.score, abs=1e-5)
        np.testing.assert_allclose(alone.cross_attention, joint.cross_attention, atol=1e-5)


def test_beam_one_equals_greedy(tiny_checkpoints, tmp_path):
    translator = Translator.from_checkpoint(save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t"))
    src = [translator.source_ids(s)[0] for s in ("a dog runs", "the big blue dog sits in a small park")]
    greedy = greedy_search(translator.model, src, SearchConfig(beam=1, trace=False))
    traced = beam_search(translator.model, (translator.src_vocab, translator.tgt_vocab), src, SearchConfig(beam=1))
    assert [g.ids for g in greedy] == [t.target_ids for t in traced]


def test_a_trace_keeps_every_layer_and_head_and_reads_back(tiny_checkpoints, tmp_path):
    translator = Translator.from_checkpoint(save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t"))
    trace = translator.translate(["a man eats a red ball"], SearchConfig(beam=3))[0]
    n_tgt, n_src = len(trace.target_ids), len(trace.source_ids)
    assert trace.model == "transformer"
    assert trace.cross_attention.shape == (2, 3, n_tgt, n_src)
    np.testing.assert_allclose(trace.cross_attention.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(trace.attention, trace.cross_attention[-1].mean(0), atol=1e-6)
    data = json.loads(trace.dumps())
    assert len(data["cross_attention"]) == 2 and len(data["cross_attention"][0]) == 3
    assert len(data["cross_attention"][1][2]) == n_tgt and len(data["cross_attention"][1][2][0]) == n_src
    back = Trace.from_json(data)
    np.testing.assert_allclose(back.cross_attention, trace.cross_attention, atol=1e-6)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(cross_attention=[]), "at least one layer"),
    (lambda d: d.update(cross_attention=[[]]), "at least one layer"),
    (lambda d: d["cross_attention"][0].pop(), "same number of heads"),
    (lambda d: d["cross_attention"][1][0].pop(), "expected"),
    (lambda d: d["cross_attention"][0][0][0].append(0.5), "ragged"),
    (lambda d: d.update(cross_attention="heads"), "must be a list"),
])
def test_a_malformed_cross_attention_is_refused_by_name(tiny_checkpoints, tmp_path, change, message):
    translator = Translator.from_checkpoint(save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t"))
    data = json.loads(translator.translate(["the small cat"], SearchConfig(beam=2))[0].dumps())
    change(data)
    with pytest.raises(Exception, match=message) as caught:
        Trace.from_json(data)
    assert "cross_attention" in str(caught.value)


def test_a_checkpoint_round_trip_decodes_the_same(tiny_checkpoints, tmp_path):
    folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t", seed=3)
    loaded, src_vocab, _, raw = load_checkpoint(folder)
    assert isinstance(loaded, TransformerModel) and raw["model"]["arch"] == "transformer"
    original = tiny_transformer(3, src_vocab_size=len(src_vocab), tgt_vocab_size=loaded.config.tgt_vocab_size)
    for name, tensor in original.state_dict().items():
        torch.testing.assert_close(loaded.state_dict()[name], tensor, atol=0, rtol=0)
    assert loaded.decoder.W_o.weight is loaded.decoder.embed.weight  # still tied after loading


@pytest.mark.parametrize("changes, message", [
    (dict(heads=4), "must divide emb_dim"),
    (dict(heads=0), "heads=0 is outside"),
    (dict(enc_layers=0), "enc_layers=0 is outside"),
    (dict(dec_layers=10_000), "dec_layers=10000 is outside"),
    (dict(ff_dim=10**9), "ff_dim=1000000000 is outside"),
    (dict(alignment_layer=3), "alignment_layer=3 is outside"),
    (dict(heads=True), "heads=True"),
])
def test_hostile_configs_are_refused_before_allocating(changes, message):
    with pytest.raises(ConfigError, match=message):
        build_model(ModelConfig(**{**SIZES, **changes}))


def test_a_config_asking_for_too_many_parameters_is_refused_on_load(tiny_checkpoints, tmp_path):
    folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t")
    config = json.loads((folder / "config.json").read_text())
    config["model"].update(emb_dim=8192, heads=8, enc_layers=24, dec_layers=24, ff_dim=32768)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="parameters, more than"):
        load_checkpoint(folder)


def test_each_layers_attention_is_an_explanation_method_with_its_faithfulness(tiny_checkpoints, tmp_path):
    from model.explaining.explanation import LAYERS
    from model.explaining.faithfulness import measure
    from model.explaining.methods import expand_methods
    from model.explaining.registry import explain

    translator = Translator.from_checkpoint(save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t"))
    model = translator.model
    assert expand_methods(model, ["attention", LAYERS, "occlusion"]) == ["attention", "attention_layer_1",
                                                                         "attention_layer_2", "occlusion"]
    rnn = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"]).model
    assert expand_methods(rnn, ["attention", LAYERS, "attention_layer_1"]) == ["attention"]
    trace = translator.translate(["a dog runs in the park"], SearchConfig(beam=2))[0]
    src, out = trace.source_ids, trace.target_ids
    found = explain(model, src, out, expand_methods(model, ["attention", LAYERS]))
    assert set(found) == {"attention", "attention_layer_1", "attention_layer_2"}
    for layer in (1, 2):
        np.testing.assert_allclose(found[f"attention_layer_{layer}"].source, trace.cross_attention[layer - 1].mean(0),
                                   atol=1e-5)
    np.testing.assert_allclose(found["attention"].source, found["attention_layer_2"].source, atol=1e-6)
    measured = measure(model, src, out, found)
    assert set(measured.methods) == set(found)
