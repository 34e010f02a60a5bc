"""Search invariants on a tiny trained model (fixture ``tiny_checkpoints``)."""
import numpy as np
import pytest
import torch

from model.corpus.vocab import EOS, UNK
from model.decoding.search import SearchConfig, beam_search, greedy_search
from model.decoding.translator import Translator
from model.core.errors import ConfigError

SENTENCES = ["a dog runs in the park", "the small cat", "a man eats a red ball on the street",
             "child plays", "the big blue dog sits in a small park"]


@pytest.fixture(scope="module", params=["rnnsearch", "rnnencdec"])
def translator(request, tiny_checkpoints):
    return Translator.from_checkpoint(tiny_checkpoints[request.param])


def test_model_learned_the_tiny_task(tiny_checkpoints):
    t = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    out = t.translate(["a dog runs in the park"], SearchConfig(beam=5))[0]
    assert out.translation == "un chien court dans le parc"


def vocabs(translator):
    return translator.src_vocab, translator.tgt_vocab


@pytest.mark.parametrize("trace", [False, True])
def test_beam_one_equals_greedy(translator, trace):
    src = [translator.source_ids(s)[0] for s in SENTENCES]
    greedy = greedy_search(translator.model, src, SearchConfig(beam=1, trace=False))
    beam = beam_search(translator.model, vocabs(translator), src, SearchConfig(beam=1, trace=trace))
    for g, b in zip(greedy, beam):
        assert g.ids == b.target_ids
        assert g.logprob == pytest.approx(b.logprob, abs=1e-4)


@pytest.mark.parametrize("beam", [1, 3, 5])
def test_results_do_not_depend_on_batch_size(translator, beam):
    cfg = SearchConfig(beam=beam)
    together = translator.translate(SENTENCES, cfg, batch_size=5)
    for sentence, joint in zip(SENTENCES, together):
        alone = translator.translate([sentence], cfg)[0]
        assert alone.target_ids == joint.target_ids
        assert alone.score == pytest.approx(joint.score, abs=1e-4)


@pytest.mark.parametrize("beam", [1, 3, 5])
def test_an_untraced_decode_equals_a_traced_one(translator, beam):
    """Without a trace the attention's tanh takes its faster form (model/speed/activations.py):
    the same outputs, scores within 1e-5."""
    traced = translator.translate(SENTENCES, SearchConfig(beam=beam))
    plain = translator.translate(SENTENCES, SearchConfig(beam=beam, trace=False))
    for a, b in zip(traced, plain):
        assert a.target_ids == b.target_ids
        assert a.score == pytest.approx(b.score, abs=1e-5) and a.logprob == pytest.approx(b.logprob, abs=1e-5)


def test_trace_evidence_is_consistent(translator):
    for trace in translator.translate(SENTENCES, SearchConfig(beam=4, topk=3)):
        steps = len(trace.target_ids)
        assert trace.target_ids[-1] == EOS
        assert len(trace.topk) == len(trace.step_logprobs) == steps
        assert all(len(c) == 3 and c[0].prob >= c[-1].prob for c in trace.topk)
        assert sum(trace.step_logprobs) == pytest.approx(trace.logprob, abs=1e-3)
        if translator.arch == "rnnencdec":
            assert trace.attention is None and trace.energies is None
            continue
        assert trace.attention.shape == trace.energies.shape == (steps, len(trace.source_tokens))
        np.testing.assert_allclose(trace.attention.sum(1), 1.0, atol=1e-5)
        softmax = np.exp(trace.energies) / np.exp(trace.energies).sum(1, keepdims=True)
        np.testing.assert_allclose(softmax, trace.attention, atol=1e-5)


def test_padding_gets_exactly_zero_attention(tiny_checkpoints):
    """Sentences of different lengths decoded as one padded batch: every step's alpha is 0
    exactly at each row's padding."""
    import torch

    from model.corpus.parallel import pad

    t = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    src = [t.source_ids(s)[0] for s in SENTENCES]
    lengths = torch.tensor([len(s) for s in src])
    with torch.no_grad():
        enc = t.model.encode(pad(src), lengths)
        state = t.model.decoder.init_state(enc.summary)
        y = torch.full((len(src),), 2)
        for _ in range(4):
            out = t.model.decoder.step(y, state, enc)
            padding = torch.arange(out.alpha.size(1)).unsqueeze(0) >= lengths.unsqueeze(1)
            assert padding.any() and (out.alpha[padding] == 0).all()
            state, y = out.state, out.logprobs.argmax(-1)


SCHEMA_KEYS = {"schema", "model", "alignment_model", "origin", "source", "source_tokens", "source_ids",
               "target_tokens", "target_ids", "translation", "score", "logprob", "step_logprobs", "attention",
               "energies", "topk", "beam", "truncated"}


def test_a_trace_from_beam_search_alone_is_complete(translator):
    """Everything the JSON schema (model/decoding/trace.py) promises, straight from search."""
    src = [translator.source_ids(s)[0] for s in SENTENCES[:3]]
    for ids, trace in zip(src, beam_search(translator.model, vocabs(translator), src, SearchConfig(beam=3, topk=4))):
        data = trace.to_json()
        assert set(data) == SCHEMA_KEYS and data["model"] == translator.arch
        steps = len(trace.target_ids)
        assert data["source_tokens"] == translator.src_vocab.pieces(ids) and data["source"]
        assert data["target_tokens"][-1] == "</s>" and data["translation"] == translator.tgt_vocab.decode(trace.target_ids)
        assert len(data["step_logprobs"]) == len(data["topk"]) == steps and all(len(c) == 4 for c in data["topk"])
        assert {"id", "parent", "step", "token", "token_id", "score", "norm_score", "status", "attention"} \
            == set(data["beam"][0])
        assert sum(n["status"] == "best" for n in data["beam"]) == steps + 1  # the root and one node per token
        if translator.arch == "rnnsearch":
            assert len(data["attention"]) == len(data["energies"]) == steps
            assert all(len(row) == len(ids) for row in data["attention"])
        else:
            assert data["attention"] is None and data["energies"] is None


def test_beam_tree_marks_the_returned_hypothesis(translator):
    for trace in translator.translate(SENTENCES, SearchConfig(beam=3)):
        nodes = trace.beam
        assert [n.id for n in nodes] == list(range(len(nodes)))
        assert all(nodes[n.parent].step == n.step - 1 for n in nodes[1:])
        best = [n for n in nodes if n.status == "best"]
        assert [n.token_id for n in best[1:]] == trace.target_ids
        assert best[-1].norm_score == pytest.approx(trace.score, abs=1e-5)
        finished = [n for n in nodes if n.status in ("finished", "best") and n.token_id == EOS]
        assert max(n.norm_score for n in finished) == pytest.approx(trace.score, abs=1e-5)
        assert {n.status for n in nodes} <= {"kept", "pruned", "finished", "best"}


def test_forced_prefix_and_attention_override(tiny_checkpoints):
    t = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    forced = t.tgt_vocab.encode("le chat")
    out = t.translate(["a dog runs"], SearchConfig(beam=3), prefixes=[forced])[0]
    assert out.target_ids[: len(forced)] == forced
    attended = t.translate(["a dog runs"], SearchConfig(beam=1), attend={1: 2})[0]
    np.testing.assert_allclose(attended.attention[1], [0, 0, 1])


def test_length_cap_and_forbid_unk(translator):
    cfg = SearchConfig(beam=3, max_len_ratio=0.0, max_len_extra=2)
    for trace in translator.translate(SENTENCES, cfg):
        assert len(trace.target_ids) <= 2 and trace.target_ids[-1] == EOS
    for trace in translator.translate(["zzz qqq ### the dog"], SearchConfig(beam=3, forbid_unk=True)):
        assert UNK not in trace.target_ids


def test_blank_and_overlong_inputs(translator):
    traces = translator.translate(["", "   ", "dog " * 400], SearchConfig(beam=2))
    assert traces[0].translation == traces[1].translation == ""
    assert traces[2].truncated and len(traces[2].source_tokens) == 200


def test_work_per_request_is_capped(translator):
    with pytest.raises(ConfigError, match="beam size must be 1..16"):
        translator.translate(["a dog"], SearchConfig(beam=17))
    with pytest.raises(ConfigError, match="output length cap"):
        translator.translate(["a dog"], SearchConfig(max_len_ratio=100.0))


def test_concurrent_sessions_do_not_interfere(tiny_checkpoints):
    """One shared Translator (as st.cache_resource shares it) used from 8 threads at once."""
    from concurrent.futures import ThreadPoolExecutor

    from model.explaining.saliency import saliency

    t = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    cfg = SearchConfig(beam=3)
    expected = {s: t.translate([s], cfg)[0] for s in SENTENCES}

    def job(k):
        sentence = SENTENCES[k % len(SENTENCES)]
        trace = t.translate([sentence], cfg)[0]
        saliency(t.model, trace.source_ids, trace.target_ids)
        return sentence, trace

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(job, range(40)))
    for sentence, trace in results:
        assert trace.target_ids == expected[sentence].target_ids
        np.testing.assert_allclose(trace.attention, expected[sentence].attention, atol=1e-5)
    assert all(p.grad is None for p in t.model.parameters())


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("length_norm", [0.0, 1.0])
def test_a_beam_wide_enough_finds_what_exhaustive_search_finds(tiny_checkpoints, arch, length_norm):
    """Outputs capped at 3 tokens (the last one </s>), so every output can be scored: with a beam
    wider than the candidates of any step, beam search returns the best of all of them."""
    from model.checkpoints.folder import load_checkpoint
    from model.corpus.vocab import EOS

    model, src_vocab, tgt_vocab, _ = load_checkpoint(tiny_checkpoints[arch])
    src = src_vocab.encode("a small cat")
    cfg = SearchConfig(beam=2000, length_norm=length_norm, max_len_ratio=0.0, max_len_extra=3, trace=False)
    (trace,) = beam_search(model, (src_vocab, tgt_vocab), [src], cfg)
    V = len(tgt_vocab)
    with torch.inference_mode():
        enc = model.encode(torch.tensor([src]), torch.tensor([len(src)]))
        best = (float("-inf"), None)
        frontier = [((), 0.0, model.decoder.init_state(enc.summary), torch.tensor([2]))]  # <s>
        for t in range(3):
            step_frontier = []
            for prefix, score, state, y in frontier:
                out = model.decoder.step(y, state, enc)
                logprobs = out.logprobs[0]
                final = score + float(logprobs[EOS])
                norm = final / (len(prefix) + 1) ** length_norm if length_norm else final
                if norm > best[0]:
                    best = (norm, prefix + (EOS,))
                if t < 2:  # the third token must be </s>
                    step_frontier += [(prefix + (tok,), score + float(logprobs[tok]), out.state, torch.tensor([tok]))
                                      for tok in range(V) if tok != EOS]
            frontier = step_frontier
    assert trace.target_ids == list(best[1])
    assert trace.score == pytest.approx(best[0], abs=1e-4)
