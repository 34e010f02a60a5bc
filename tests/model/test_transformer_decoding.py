"""The Transformer's decoding at its arithmetic: the self-attention cache written in place
(model/network/kv_cache.py), a sentence's cross-attention keys and values shared by its beam
hypotheses (``TransformerModel.beam_memory``), the first step taken once per sentence and finished
sentences leaving the batch (model/decoding/search.py). Each is checked against a reference kept
here: concatenated tensors, memories copied per hypothesis (``Decodable.beam_memory``), and a beam
search written out that scores each hypothesis by re-reading its whole prefix (``teacher_forced``).
Tiny random Transformers of sizes that all differ (3 heads of width 5, 7 of width 2, ...)."""
import math

import numpy as np
import pytest
import torch

from model.core.decodable import Decodable
from model.corpus.parallel import pad
from model.corpus.vocab import BOS, EOS
from model.decoding.search import SearchConfig, beam_search, greedy_search, output_length
from model.decoding.translator import Translator
from model.explaining.attention_ablation import Ablation
from model.network.kv_cache import ROOM, KeyValueCache
from tests.model.transformer_fixtures import assert_steps_equal_the_whole_sentence, save_tiny_transformer, tiny_transformer

SHAPES = {  # name: ModelConfig fields of a tiny Transformer
    "3 heads of width 5": dict(emb_dim=15, heads=3, enc_layers=3, dec_layers=2, ff_dim=7),
    "7 heads of width 2": dict(emb_dim=14, heads=7, enc_layers=1, dec_layers=3, ff_dim=5),
    "1 head of width 9": dict(emb_dim=9, heads=1, enc_layers=2, dec_layers=1, ff_dim=11),
    "4 heads of width 3, first layer's alpha": dict(emb_dim=12, heads=4, enc_layers=1, dec_layers=2, ff_dim=13,
                                                     alignment_layer=1),
}
SENTENCES = ["a dog runs in the park", "the small cat", "a man eats a red ball on the street", "child plays",
             "the big blue dog sits in a small park"]
SRC = [[5, 6, 7, 8, 9, 3], [10, 11, 3], [13, 3], [4, 14, 15, 16, 12, 17, 3]]


@pytest.fixture(scope="module")
def translators(tiny_checkpoints, tmp_path_factory) -> dict[str, Translator]:
    """One tiny Transformer per shape, with the tiny RNN checkpoint's vocabularies."""
    root = tmp_path_factory.mktemp("transformers")
    return {name: Translator.from_checkpoint(save_tiny_transformer(tiny_checkpoints["rnnsearch"], root / str(i),
                                                                   seed=i, **shape))
            for i, (name, shape) in enumerate(SHAPES.items())}


def encode(model, seqs=SRC):
    return model.encode(pad(seqs), torch.tensor([len(s) for s in seqs]))


# ---- the cache (model/network/kv_cache.py)

def _kv(generator, rows=3, length=1):
    """Random keys and values (rows, 2 heads, length, 5)."""
    return torch.randn(rows, 2, length, 5, generator=generator), torch.randn(rows, 2, length, 5, generator=generator)


@torch.inference_mode()
def test_appending_writes_in_place_and_equals_concatenation():
    """Past ``ROOM`` positions the buffers grow; between growths every append writes into the same
    buffers (a ``torch.cat`` each step would give new ones)."""
    g = torch.Generator().manual_seed(0)
    cache, keys, values = KeyValueCache.empty(3, 2, 5, torch.zeros(1)), torch.zeros(3, 2, 0, 5), torch.zeros(3, 2, 0, 5)
    moves = 0
    for step in range(3 * ROOM + 2):
        k, v = _kv(g, length=1 + step % 2)  # one position, or two at once
        before = cache.key_buffer.data_ptr()
        cache = cache.append(k, v)
        keys, values = torch.cat([keys, k], 2), torch.cat([values, v], 2)
        moves += cache.key_buffer.data_ptr() != before
        assert torch.equal(cache.keys, keys) and torch.equal(cache.values, values)
    assert cache.length == keys.size(2) and moves <= keys.size(2) // ROOM + 1


@torch.inference_mode()
def test_two_continuations_of_one_cache_do_not_overwrite_each_other():
    g = torch.Generator().manual_seed(1)
    start = KeyValueCache.empty(3, 2, 5, torch.zeros(1)).append(*_kv(g, length=2))
    first_kv, second_kv = _kv(g), _kv(g)
    first = start.append(*first_kv)
    second = start.append(*second_kv)  # the same position: written elsewhere, not over the first's
    assert torch.equal(first.keys[:, :, 2:], first_kv[0]) and torch.equal(first.values[:, :, 2:], first_kv[1])
    assert torch.equal(second.keys[:, :, 2:], second_kv[0]) and torch.equal(second.keys[:, :, :2], start.keys)
    third = first.append(*_kv(g))  # the first goes on in place
    assert third.key_buffer.data_ptr() == first.key_buffer.data_ptr()
    assert torch.equal(first.keys[:, :, 2:], first_kv[0])


@torch.inference_mode()
@pytest.mark.parametrize("index", [[2, 0, 0], [1], [0, 1, 2, 2, 1, 0]])
def test_selected_rows_carry_their_keys_and_grow_on(index):
    g = torch.Generator().manual_seed(2)
    cache = KeyValueCache.empty(3, 2, 5, torch.zeros(1)).append(*_kv(g, length=ROOM - 1))
    rows = torch.tensor(index)
    picked = cache.select(rows)
    assert torch.equal(picked.keys, cache.keys[rows]) and torch.equal(picked.values, cache.values[rows])
    k, v = _kv(g, rows=len(index), length=3)  # past the room: the selected buffers grow
    grown = picked.append(k, v)
    assert torch.equal(grown.keys, torch.cat([cache.keys[rows], k], 2))
    assert torch.equal(grown.values, torch.cat([cache.values[rows], v], 2))


def test_gradients_flow_through_the_cache_as_through_concatenation():
    """Explanations differentiate through decoding: nothing is written in place there."""
    g = torch.Generator().manual_seed(3)
    parts = [tuple(t.requires_grad_(True) for t in _kv(g)) for _ in range(4)]
    cache, losses = KeyValueCache.empty(3, 2, 5, torch.zeros(1)), []
    for k, v in parts:
        cache = cache.append(k, v)
        losses.append((cache.keys.sin() * cache.values).sum())  # each step reads every earlier position
    found = torch.autograd.grad(sum(losses), [t for kv in parts for t in kv])
    losses = [(torch.cat([p[0] for p in parts[:i + 1]], 2).sin() * torch.cat([p[1] for p in parts[:i + 1]], 2)).sum()
              for i in range(4)]
    expected = torch.autograd.grad(sum(losses), [t for kv in parts for t in kv])
    for a, b in zip(found, expected):
        torch.testing.assert_close(a, b)


@torch.inference_mode()
def test_a_decode_writes_its_steps_in_place():
    """Fewer steps than the room: every layer's buffers stay the ones ``init_state`` made."""
    model = tiny_transformer()
    memory = encode(model)
    state = model.init_state(memory)
    buffers = [c.key_buffer.data_ptr() for c in state.self_kv]
    for t in range(ROOM):
        state = model.step(torch.full((len(SRC),), BOS if t == 0 else 4 + t), state, memory).state
    assert [c.key_buffer.data_ptr() for c in state.self_kv] == buffers
    assert all(c.length == ROOM for c in state.self_kv)


@torch.inference_mode()
@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
def test_cached_steps_past_the_room_equal_the_whole_sentence(shape):
    """Steps past several growths of the buffers, under inference (where writes are in place),
    against the whole-sentence pass, every layer and head of the cross-attention included."""
    model = tiny_transformer(**SHAPES[shape])
    memory = encode(model)
    tgt_in = torch.randint(4, 29, (len(SRC), 2 * ROOM + 3), generator=torch.Generator().manual_seed(4))
    tgt_in[:, 0] = BOS
    assert_steps_equal_the_whole_sentence(model, memory, tgt_in)


# ---- a sentence's memory shared by its beam hypotheses

def test_a_shared_memory_holds_one_row_per_sentence_and_selects_whole_beams():
    with torch.inference_mode():
        memory = encode(tiny_transformer())
        shared = tiny_transformer().beam_memory(memory, 3)
        assert shared.beam == 3 and shared.rows == 3 * len(SRC)
        assert all(k.size(0) == len(SRC) and v.size(0) == len(SRC) for k, v in shared.cross_kv)
        kept = shared.select(torch.tensor([3, 4, 5, 9, 10, 11]))  # sentences 1 and 3
    assert kept.beam == 3
    for name in ("states", "mask", "values"):
        assert torch.equal(getattr(kept, name), getattr(memory, name)[[1, 3]]), name
    for (k, v), (k0, v0) in zip(kept.cross_kv, memory.cross_kv):
        assert torch.equal(k, k0[[1, 3]]) and torch.equal(v, v0[[1, 3]])
    with pytest.raises(ValueError, match="whole beams"):
        shared.select(torch.tensor([0, 1, 3]))
    with pytest.raises(ValueError, match="already"):
        shared.for_beams(2)


def _row_edits(rows: int, src_len: int):
    """(name, alpha_override, alpha_fn) cases for ``rows`` decoder rows: each row's own."""
    override = torch.zeros(rows, src_len)
    override[torch.arange(rows), torch.arange(rows) % 2] = 1.0  # row r: all weight on word r % 2
    scale = torch.linspace(0.5, 2.0, rows).unsqueeze(1)  # a different edit in every row
    return [("none", None, None), ("override", override, None),
            ("alpha_fn", None, lambda a: torch.softmax(a * scale * 3, -1))]


@torch.inference_mode()
@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
@pytest.mark.parametrize("k", [3, 5])
def test_steps_read_a_shared_memory_as_its_copies(shape, k):
    """Five steps of (sentences x k) rows, a different token in every row, with and without the
    what-if's edits of each row's weights: the same log-probabilities, alpha and every layer's and
    head's cross-attention as from memories copied per hypothesis."""
    model = tiny_transformer(**SHAPES[shape])
    memory = encode(model)
    for name, override, fn in _row_edits(len(SRC) * k, memory.mask.size(1)):
        shared, copies = model.beam_memory(memory, k), Decodable.beam_memory(model, memory, k)
        state, copy_state = model.init_state(shared), model.init_state(copies)
        y = torch.arange(len(SRC) * k) % 20 + 4
        for _ in range(5):
            out, ref = model.step(y, state, shared, override, fn), model.step(y, copy_state, copies, override, fn)
            for field in ("logprobs", "alpha", "cross_attention"):
                torch.testing.assert_close(getattr(out, field), getattr(ref, field), atol=1e-5, rtol=0, msg=name)
            state, copy_state, y = out.state, ref.state, out.logprobs.argmax(-1)


# ---- search: against a beam search written out, and against copied memories

def reference_search(model, src_ids: list[int], k: int, cap: int) -> tuple[list[int], float]:
    """This project's beam search (model/decoding/search.py: "full" stopping, λ = 1, the last
    allowed token </s>) for one sentence, each hypothesis's next-token log-probabilities read by
    re-reading its whole prefix (``teacher_forced``): no cache, no shared memory, all k rows stepped
    from the first step on. Returns the best finished output's ids and log-probability."""
    memory = encode(model, [src_ids]).select(torch.zeros(k, dtype=torch.long))  # k copies
    beams, finished = [([], 0.0)] + [([], -math.inf)] * (k - 1), []
    for t in range(cap):
        prefixes = torch.tensor([[BOS] + ids for ids, _ in beams])  # (k, t + 1)
        logprobs = model.teacher_forced(memory, prefixes)[0][:, -1].clone()  # (k, V)
        if t + 1 >= cap:
            logprobs[:, [i for i in range(logprobs.size(1)) if i != EOS]] = -math.inf
        vocab = logprobs.size(1)
        total = (torch.tensor([score for _, score in beams]).unsqueeze(1) + logprobs).flatten()
        top, index = total.topk(2 * k)
        kept = []
        for rank, (score, i) in enumerate(zip(top.tolist(), index.tolist())):
            ids = beams[i // vocab][0] + [i % vocab]
            if i % vocab == EOS:
                if rank < k and math.isfinite(score):
                    finished.append((ids, score))
            elif len(kept) < k:
                kept.append((ids, score))
        beams = kept
        if len(finished) >= k or t + 1 >= cap:
            break
    return max(finished, key=lambda f: f[1] / len(f[0]))


SEARCHES = [("greedy", 1, False), ("beam 1 traced", 1, True), ("beam 3", 3, False), ("beam 5", 5, False),
            ("beam 5 traced", 5, True)]  # (name, beam, traced)


@torch.inference_mode()
@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
@pytest.mark.parametrize("name, beam, traced", SEARCHES, ids=[s[0] for s in SEARCHES])
def test_search_equals_the_search_written_out(translators, shape, name, beam, traced):
    """Batched and one sentence at a time, sentences of different lengths: the same tokens and
    log-probabilities as the reference; traced, each step's log-probability, alpha and every
    layer's and head's cross-attention are the whole-sentence pass's over the output chosen."""
    t = translators[shape]
    model, vocabs = t.model, (t.src_vocab, t.tgt_vocab)
    src = [t.source_ids(s)[0] for s in SENTENCES]
    cfg = SearchConfig(beam=beam, trace=traced)
    caps = output_length(model, cfg).caps(torch.tensor([len(s) for s in src])).tolist()
    expected = [reference_search(model, ids, beam, cap) for ids, cap in zip(src, caps)]
    if name == "greedy":
        together = [(h.ids, h.logprob) for h in greedy_search(model, src, cfg)]
        alone = [(h.ids, h.logprob) for ids in src for h in greedy_search(model, [ids], cfg)]
    else:
        together = [(tr.target_ids, tr.logprob) for tr in beam_search(model, vocabs, src, cfg)]
        alone = [(tr.target_ids, tr.logprob) for ids in src for tr in beam_search(model, vocabs, [ids], cfg)]
    for (ids, logprob), (a_ids, a_logprob), (b_ids, b_logprob) in zip(expected, together, alone):
        assert a_ids == b_ids == ids
        assert a_logprob == pytest.approx(logprob, abs=1e-4) and b_logprob == pytest.approx(logprob, abs=1e-4)
    if traced:
        _traces_equal_the_whole_sentence(model, src, beam_search(model, vocabs, src, cfg))


def _traces_equal_the_whole_sentence(model, src, traces) -> None:
    for ids, trace in zip(src, traces):
        memory = encode(model, [ids])
        tgt_in = torch.tensor([[BOS] + trace.target_ids[:-1]])
        logprobs, alpha = model.teacher_forced(memory, tgt_in)
        chosen = logprobs[0].gather(1, torch.tensor(trace.target_ids).unsqueeze(1))[:, 0]
        np.testing.assert_allclose(trace.step_logprobs, chosen.numpy(), atol=1e-4)
        np.testing.assert_allclose(trace.attention, alpha[0].numpy(), atol=1e-5)
        np.testing.assert_allclose(trace.cross_attention, model.forced_cross_attention(memory, tgt_in)[0].numpy(),
                                   atol=1e-5)


EDITS = [("beam 3", SearchConfig(beam=3), {}),
         ("beam 5 untraced", SearchConfig(beam=5, trace=False), {}),
         ("beam 5 no <unk>, short cap", SearchConfig(beam=5, forbid_unk=True, max_len_ratio=0.5, max_len_extra=2), {}),
         ("beam 3 forced prefix", SearchConfig(beam=3), {"prefixes": [[5, 6]] * len(SENTENCES)}),
         ("beam 3 moved attention", SearchConfig(beam=3), {"attend": {0: 0, 2: 1}}),
         ("beam 5 ablation", SearchConfig(beam=5, ablation=Ablation("diagonal")), {})]


@pytest.mark.parametrize("shape", list(SHAPES)[:2], ids=list(SHAPES)[:2])
@pytest.mark.parametrize("name, cfg, extra", EDITS, ids=[e[0] for e in EDITS])
@pytest.mark.parametrize("batch_size", [2, 5])
def test_search_with_a_shared_memory_equals_search_with_copies(translators, shape, name, cfg, extra, batch_size):
    """The whole trace, beam tree included, as with memories copied per hypothesis."""
    t = translators[shape]
    shared = t.translate(SENTENCES, cfg, batch_size=batch_size, **extra)
    t.model.beam_memory = lambda memory, beam: Decodable.beam_memory(t.model, memory, beam)  # this instance only
    try:
        copies = t.translate(SENTENCES, cfg, batch_size=batch_size, **extra)
    finally:
        del t.model.beam_memory
    for a, b in zip(shared, copies):
        assert a.target_ids == b.target_ids
        assert a.score == pytest.approx(b.score, abs=1e-5) and a.logprob == pytest.approx(b.logprob, abs=1e-5)
        if cfg.trace:
            np.testing.assert_allclose(a.attention, b.attention, atol=1e-5)
            np.testing.assert_allclose(a.cross_attention, b.cross_attention, atol=1e-5)
            assert [(n.token_id, n.parent, n.status) for n in a.beam] == [(n.token_id, n.parent, n.status) for n in b.beam]
            for x, y in zip(a.beam, b.beam):
                assert x.score == pytest.approx(y.score, abs=1e-5)


# ---- search: the first step once per sentence, finished sentences out of the batch

def _counting(model, method: str, calls: list):
    """Wraps ``model.method`` on the instance; each call's first argument's rows go to ``calls``."""
    original = getattr(model, method)

    def counted(first, *args, **kwargs):
        calls.append(first.numel() if torch.is_tensor(first) else None)
        return original(first, *args, **kwargs)

    setattr(model, method, counted)


@pytest.mark.parametrize("beam", [3, 5])
def test_the_first_step_reads_one_row_per_sentence(translators, beam):
    """A sentence's k hypotheses are the same <s> until the first step: the model reads it once."""
    t = translators["3 heads of width 5"]
    src = [t.source_ids(s)[0] for s in SENTENCES]
    rows: list = []
    _counting(t.model, "step", rows)
    try:
        beam_search(t.model, (t.src_vocab, t.tgt_vocab), src, SearchConfig(beam=beam, trace=False))
    finally:
        del t.model.step
    assert rows[0] == len(SENTENCES)
    assert rows[1] == len(SENTENCES) * beam and all(r % beam == 0 for r in rows[1:])


def test_greedy_copies_rows_only_when_a_sentence_ends(translators):
    """Greedy decoding keeps its rows as they are while no sentence has ended: a reorder only
    where one did (at most one fewer than the sentences), each to fewer rows."""
    t = translators["1 head of width 9"]
    src = [t.source_ids(s)[0] for s in SENTENCES]
    steps, reorders = [], []
    _counting(t.model, "step", steps)
    _counting(t.model, "reorder", reorders)
    try:
        with torch.inference_mode():
            found = greedy_search(t.model, src, SearchConfig(beam=1, trace=False, max_len_ratio=1.0, max_len_extra=1))
    finally:
        del t.model.step, t.model.reorder
    ends = len({len(h.ids) for h in found}) - 1  # steps after which some sentences ended and others went on
    assert len(reorders) == ends < len(steps)
    assert steps == sorted(steps, reverse=True) and steps[0] == len(SENTENCES)


def test_a_selection_under_gradients_is_differentiable():
    """Explanations differentiate through a reordered cache: ``select`` then forms new tensors."""
    g = torch.Generator().manual_seed(4)
    k, v = (t.requires_grad_(True) for t in _kv(g, length=3))
    cache = KeyValueCache.empty(3, 2, 5, torch.zeros(1)).append(k, v)
    rows = torch.tensor([2, 0, 0, 1])
    picked = cache.select(rows).append(*_kv(g, rows=4))
    (picked.keys.sum() + 2 * picked.values.sum()).backward()
    assert torch.equal(k.grad, torch.tensor([2.0, 1.0, 1.0]).view(3, 1, 1, 1).expand(3, 2, 3, 5))
    assert torch.equal(v.grad, 2 * k.grad)
