"""The layer-wise readings of a Transformer (model/explaining/contributions.py, logit_lens.py,
model/network/transformer_anatomy.py) on tiny random Transformers of all-different sizes."""
import numpy as np
import pytest
import torch

from model.core.anatomy import CROSS, DECODER_SELF, ENCODER, Anatomy, Block, HeadMask
from model.corpus.vocab import BOS
from model.explaining import registry
from model.explaining.contributions import (ALTI_PLUS, MATRICES, ROLLOUT, VALUE_ZEROING, alti_matrix, compose,
                                            contributions, rollout_matrix, value_zeroing_matrix)
from model.explaining.logit_lens import logit_lens
from tests.model.transformer_fixtures import tiny_transformer

SRC = [5, 6, 7, 8, 9, 3]  # S = 6
OUT = [4, 9, 6, 5, 3]  # T = 5
SHAPES = [dict(), dict(heads=5, emb_dim=10, enc_layers=2, dec_layers=3), dict(heads=1, enc_layers=1, dec_layers=1)]


def tensors(src=SRC, out=OUT):
    return torch.tensor(src), torch.tensor([BOS, *out[:-1]])


@pytest.fixture(params=range(len(SHAPES)), ids=["3 heads x 3+2 layers", "5 heads x 2+3 layers", "1 head x 1+1"])
def model(request):
    return tiny_transformer(seed=request.param, **SHAPES[request.param])


def test_the_anatomy_adds_up_to_the_model(model):
    """Every block's terms sum to what the layer computes: the last state read out is the model's
    own distribution, and the cross blocks' weights are its cross-attention."""
    src, tgt_in = tensors()
    anatomy = model.anatomy(src, tgt_in)
    memory = model.encode(src.unsqueeze(0), torch.tensor([len(SRC)]))
    logprobs, _ = model.teacher_forced(memory, tgt_in.unsqueeze(0))
    torch.testing.assert_close(anatomy.read_out(anatomy.decoder_states[-1]), logprobs[0], atol=1e-5, rtol=0)
    cross = model.forced_cross_attention(memory, tgt_in.unsqueeze(0))[0]  # (layers, heads, T, S)
    torch.testing.assert_close(torch.stack([b.weights for b in anatomy.cross]), cross, atol=1e-5, rtol=0)
    layers, heads = model.attention_heads[ENCODER]
    assert len(anatomy.encoder) == layers and anatomy.encoder[0].weights.shape == (heads, len(SRC), len(SRC))


@pytest.mark.parametrize("method", [ALTI_PLUS, VALUE_ZEROING, ROLLOUT])
def test_contributions_are_non_negative_causal_and_sum_to_one(model, method):
    found = contributions(model, SRC, OUT, method)
    T = len(OUT)
    assert found.source.shape == (T, len(SRC)) and found.inputs.shape == (T, T)
    assert (found.source >= 0).all() and (found.inputs >= 0).all()
    np.testing.assert_allclose(found.source.sum(1) + found.inputs.sum(1), np.ones(T), atol=1e-5)
    assert (np.triu(found.inputs, 1) == 0).all()  # output i reads the decoder inputs up to position i only
    explanation = registry.explain(model, SRC, OUT, [method])[method]
    np.testing.assert_array_equal(explanation.source, found.source)
    for i in range(T):  # the prefix is the inputs without <s>
        np.testing.assert_array_equal(explanation.prefix[i, :i], found.inputs[i, 1:i + 1])


def _block(kind, weights, d=4, rest=lambda y: y, seed=0):
    g = torch.Generator().manual_seed(seed)
    heads, q, k = weights.shape
    return Block(kind, 0, weights, torch.randn(heads, k, d, generator=g), torch.randn(q, d, generator=g),
                 torch.randn(d, generator=g), rest)


def test_rollout_of_identity_attention_is_the_identity():
    eye = torch.eye(5).expand(3, 5, 5)
    torch.testing.assert_close(rollout_matrix(_block(ENCODER, eye)), torch.eye(5))
    anatomy = Anatomy(tuple(_block(ENCODER, eye, seed=s) for s in range(3)), (), (), torch.zeros(1, 7, 4), None)
    found = compose(anatomy, rollout_matrix)
    assert found.source.shape == (7, 5) and (found.source == 0).all()  # no decoder layers: each input is itself
    np.testing.assert_array_equal(found.inputs, np.eye(7))


def test_a_key_no_head_attends_to_gets_nothing():
    """Value zeroing's defining case: zeroing a value no head reads changes nothing. ALTI+ gives
    it nothing either (its term is zero), and rollout only the residual on the diagonal."""
    weights = torch.softmax(torch.randn(3, 5, 7, generator=torch.Generator().manual_seed(1)), -1)
    weights[:, :, 2] = 0.0
    weights = weights / weights.sum(-1, keepdim=True)
    rest = lambda y: y + torch.tanh(y)  # noqa: E731  a layer's remainder, non-linear
    cross = _block(CROSS, weights, rest=rest)
    assert (value_zeroing_matrix(cross)[:, 1 + 2] == 0).all()
    assert (alti_matrix(cross)[:, 1 + 2] == 0).all()
    assert (rollout_matrix(cross)[:, 1 + 2] == 0).all()
    square = weights[:, :, :5].clone()
    square[:, :, 3] = 0.0
    square[:, 3, 3] = 1.0  # query 3 reads only itself: nobody else reads key 3
    square = square / square.sum(-1, keepdim=True)
    for matrix in (value_zeroing_matrix, alti_matrix):
        out = matrix(_block(ENCODER, square, rest=rest))
        assert (out[[0, 1, 2, 4], 3] == 0).all()


@torch.no_grad()
def test_alti_plus_of_one_layer_and_one_head_is_the_papers_formula():
    """With one encoder layer, one decoder layer and one head, ALTI+ is written out in full here,
    token by token, from the weights (Ferrando et al. 2022a eq. 7-8 per block, 2022b's combination)."""
    model = tiny_transformer(seed=4, heads=1, enc_layers=1, dec_layers=1)
    src, tgt_in = tensors()
    anatomy = model.anatomy(src, tgt_in)

    def proximity(y, vectors):  # c_j = max(0, |y|_1 - |y - v_j|_1), normalised
        c = np.array([max(0.0, np.abs(y).sum() - np.abs(y - v).sum()) for v in vectors])
        return c / c.sum()

    def block_rows(block, residual_apart):
        layer = {ENCODER: model.encoder.layers[0], DECODER_SELF: model.decoder.layers[0]}.get(block.kind)
        attention = layer.self_attention if layer is not None else model.decoder.layers[0].cross_attention
        W_V, b_V = attention.W_V.weight.detach().double().numpy(), attention.W_V.bias.detach().double().numpy()
        W_O = attention.W_O.weight.detach().double().numpy()
        x = block.residual.double().numpy()
        if block.kind == CROSS:
            keys = model.encode(src.unsqueeze(0), torch.tensor([len(SRC)])).states[0].detach().double().numpy()
        else:
            keys = layer.ln_self(block.residual).detach().double().numpy()
        w = block.weights[0].double().numpy()  # (q, k): one head
        rows = []
        for i in range(len(x)):
            terms = [w[i, j] * (W_O @ (W_V @ keys[j] + b_V)) for j in range(len(keys))]
            y = x[i] + sum(terms) + attention.W_O.bias.detach().double().numpy()
            if residual_apart:
                rows.append(proximity(y, [x[i]] + terms))
            else:
                terms[i] = terms[i] + x[i]
                rows.append(proximity(y, terms))
        return np.array(rows)

    c_enc = block_rows(anatomy.encoder[0], False)  # (S, S)
    c_self = block_rows(anatomy.decoder_self[0], False)  # (T, T)
    c_cross = block_rows(anatomy.cross[0], True)  # (T, 1 + S)
    source = c_cross[:, 1:] @ c_enc  # what reaches output i from the source, through the encoder
    inputs = c_cross[:, :1] * c_self  # and from the decoder inputs, through the residual
    found = contributions(model, SRC, OUT, ALTI_PLUS)
    np.testing.assert_allclose(found.source, source, atol=1e-5)
    np.testing.assert_allclose(found.inputs, inputs, atol=1e-5)


def test_the_logit_lens_at_the_last_layer_is_the_models_own_distribution(model):
    lens = logit_lens(model, SRC, OUT)
    memory = model.encode(torch.tensor([SRC]), torch.tensor([len(SRC)]))
    logprobs, _ = model.teacher_forced(memory, torch.tensor([[BOS, *OUT[:-1]]]))
    own = logprobs[0].detach().exp()
    T = len(OUT)
    np.testing.assert_allclose(lens.probs[-1], own[torch.arange(T), torch.tensor(OUT)].numpy(), atol=1e-5)
    np.testing.assert_array_equal(lens.ranks[-1], (own > own[torch.arange(T), torch.tensor(OUT)].unsqueeze(1)).sum(1) + 1)
    assert lens.layers == model.config.dec_layers and lens.top_ids.shape == (lens.layers, T, 5)
    assert (np.diff(lens.top_probs, axis=-1) <= 0).all()  # first choices in order
    assert ((lens.ranks == 1) == (lens.top_ids[..., 0] == np.array(OUT))).all()


def test_first_layer_is_where_the_word_stays_first():
    from model.explaining.logit_lens import LogitLens
    ranks = np.array([[1, 2, 1, 3], [1, 1, 2, 3], [1, 1, 1, 3]])  # (L=3, T=4)
    lens = LogitLens((0,) * 4, ranks, np.zeros((3, 4)), np.zeros((3, 4, 1)), np.zeros((3, 4, 1)))
    np.testing.assert_array_equal(lens.first_layer(), [1, 2, 3, 0])


def test_switching_heads_off_works_on_a_copy_and_silences_what_it_names(model):
    src, tgt_in = tensors()
    memory = lambda m, s=SRC: m.encode(torch.tensor([s]), torch.tensor([len(s)]))  # noqa: E731
    before, _ = model.teacher_forced(memory(model), tgt_in.unsqueeze(0))
    same = model.with_heads_masked(HeadMask())
    torch.testing.assert_close(same.teacher_forced(memory(same), tgt_in.unsqueeze(0))[0], before, atol=0, rtol=0)
    layers, heads = model.attention_heads[CROSS]
    deaf = model.with_heads_masked(HeadMask(frozenset((CROSS, l, h) for l in range(layers) for h in range(heads))))
    other = [11, 12, 13, 3]
    a = deaf.teacher_forced(memory(deaf), tgt_in.unsqueeze(0))[0]
    b = deaf.teacher_forced(memory(deaf, other), tgt_in.unsqueeze(0))[0]
    torch.testing.assert_close(a, b, atol=1e-6, rtol=0)  # every cross-attention head off: the source is not read
    assert not torch.allclose(a, before)
    torch.testing.assert_close(model.teacher_forced(memory(model), tgt_in.unsqueeze(0))[0], before, atol=0, rtol=0)
    anatomy = deaf.anatomy(src, tgt_in)  # the copy's anatomy agrees with its own computation
    torch.testing.assert_close(anatomy.read_out(anatomy.decoder_states[-1]), a[0], atol=1e-5, rtol=0)


def test_models_that_cannot_be_taken_apart_get_none_and_the_table_says_why(tiny_checkpoints):
    from model.decoding.translator import Translator
    rnn = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"]).model
    assert not rnn.supports_anatomy
    assert registry.explain(rnn, [5, 6, 3], [4, 3], [ALTI_PLUS, VALUE_ZEROING, ROLLOUT, "attention"]).keys() == {"attention"}
    assert set(MATRICES) <= set(registry.applicable(True, anatomy=True))
    assert not set(MATRICES) & set(registry.applicable(True, anatomy=False))
    assert "Joey NMT" in registry.UNSUPPORTED
    with pytest.raises(NotImplementedError):
        logit_lens(rnn, [5, 6, 3], [4, 3])


def test_batched_equals_one_by_one(model):
    pairs = [(SRC, OUT), ([7, 8, 3], [4, 4, 9, 3]), ([10, 11, 12, 13, 14, 15, 16, 3], [5, 3])]
    methods = [ALTI_PLUS, VALUE_ZEROING, ROLLOUT, "attention"]
    together = registry.explain_many(model, pairs, methods)
    for (src, out), found in zip(pairs, together):
        alone = registry.explain(model, src, out, methods)
        assert list(found) == methods
        for name in methods:
            np.testing.assert_allclose(found[name].source, alone[name].source, atol=1e-6)
