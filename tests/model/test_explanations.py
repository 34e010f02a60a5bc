"""Explanation methods (model/explaining/methods.py) on hand-checkable models and on the tiny
checkpoints: what each must give where the answer is known, and invariants everywhere."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch
from torch import nn

from model.core.decodable import Decodable, ModelDescription, Step
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from model.explaining import forced_scoring, methods, registry
from model.explaining.explanation import Explanation
from tests.model.explanation_checks import assert_shared_forward_equals_one_variant_each

V, M = 7, 5  # vocabulary and embedding sizes of the toy models


@dataclass
class Memory:
    values: torch.Tensor  # (batch, src_len, M) the source embeddings themselves
    mask: torch.Tensor

    def select(self, index):
        return Memory(self.values.index_select(0, index), self.mask.index_select(0, index))


class Linear(nn.Module, Decodable):
    """logits_i = A Σ_j E x_j + B E' y_{i-1}: linear in every embedding, so a contrast
    log p(X) - log p(Y) (the normaliser cancels) is linear, and integrated gradients equal
    gradient x input exactly. ``only_first``: the logits read source position 0 alone."""

    def __init__(self, only_first: bool = False, prefix: bool = True):
        super().__init__()
        torch.manual_seed(3)
        self.src_embed, self.tgt_embed = nn.Embedding(V, M), nn.Embedding(V, M)
        self.A, self.B = nn.Linear(M, V, bias=False), nn.Linear(M, V, bias=False)
        self.only_first, self.prefix = only_first, prefix

    @property
    def description(self):
        return ModelDescription("linear-toy", False)

    @property
    def target_embedding(self):
        return self.tgt_embed

    def embed_source(self, src):
        return self.src_embed(src)

    def encode(self, src, src_len, embedded=None):
        return Memory(self.embed_source(src) if embedded is None else embedded, src != 0)

    def init_state(self, memory):
        return memory.values.new_zeros(memory.values.size(0), 1)

    def step(self, y_prev, state, memory, alpha_override=None, alpha_fn=None):
        values = memory.values[:, :1] if self.only_first else memory.values * memory.mask[..., None]
        logits = self.A(values.sum(1)) + (self.B(self.tgt_embed(y_prev)) if self.prefix else 0)
        return Step(torch.log_softmax(logits, dim=-1), state, None, None)

    def reorder(self, state, index):
        return state.index_select(0, index)


SRC, OUT = [4, 5, 6, 4], [5, 6, 4, 3]  # ids; 3 is </s>


def test_integrated_gradients_equal_gradient_x_input_on_a_linear_contrast():
    model, contrast = Linear(), [6, 4, 5, 5]
    ig = methods.integrated_gradients(model, SRC, OUT, contrast, steps=5)
    gxi = methods.gradient_x_input(model, SRC, OUT, contrast)
    assert np.allclose(ig.source, gxi.source, atol=1e-5) and np.allclose(ig.prefix, gxi.prefix, atol=1e-5)
    assert ig.completeness_gap < 1e-4  # exact for a linear function, whatever the number of steps


def test_a_model_reading_one_source_word_is_explained_by_that_word_alone():
    model = Linear(only_first=True, prefix=False)
    for name in ("integrated_gradients", "occlusion", "gradient_x_input"):
        source, prefix = registry.explain(model, SRC, OUT, [name])[name].normalised()
        assert np.allclose(source[:, 0], 1.0) and np.allclose(source[:, 1:], 0.0), name
        assert np.allclose(prefix, 0.0), name


def test_contrasting_a_word_with_itself_explains_nothing():
    model = Linear()
    for name, found in registry.explain(model, SRC, OUT, ["gradient_x_input", "integrated_gradients", "occlusion"],
                                       contrast=OUT).items():
        assert np.allclose(found.source, 0.0) and np.allclose(found.prefix, 0.0), name


def test_occlusion_of_a_linear_model_is_each_words_own_term():
    """Zeroing one embedding removes exactly its term: occlusion of a contrast equals gradient x input."""
    model, contrast = Linear(), [6, 4, 5, 5]
    occ = methods.occlusion(model, SRC, OUT, contrast)
    gxi = methods.gradient_x_input(model, SRC, OUT, contrast)
    assert np.allclose(occ.source, gxi.source, atol=1e-5) and np.allclose(occ.prefix, gxi.prefix, atol=1e-5)


def test_prefix_scores_only_reach_back():
    found = methods.gradient_x_input(Linear(), SRC, OUT)
    assert np.allclose(np.triu(found.prefix), 0.0)
    assert np.abs(found.prefix[1:]).sum() > 0  # the words already written do count
    with pytest.raises(ValueError, match="on or after its own output token"):
        Explanation("occlusion", np.zeros((2, 3)), np.ones((2, 2)))


@pytest.fixture(scope="module")
def decoded(tiny_checkpoints) -> dict:
    found = {}
    for arch in ("rnnsearch", "rnnencdec"):
        translator = Translator.from_checkpoint(tiny_checkpoints[arch])
        trace = translator.translate(["a small dog runs in the park"], SearchConfig(beam=3))[0]
        found[arch] = (translator.model, trace.source_ids, trace.target_ids)
    return found


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_source_and_prefix_shares_sum_to_one_for_every_method(arch, decoded):
    model, src, out = decoded[arch]
    found = registry.explain(model, src, out, registry.names())
    assert ("attention" in found) == (arch == "rnnsearch")
    for name, explanation in found.items():
        assert explanation.source.shape == (len(out), len(src)) and explanation.prefix.shape == (len(out), len(out))
        assert np.allclose(explanation.shares().sum(1), 1.0), name
    if "attention" in found:
        assert np.allclose(found["attention"].shares()[:, 0], 1.0)  # attention reads the source only


def test_batched_equals_one_variant_at_a_time(decoded, monkeypatch):
    model, src, out = decoded["rnnsearch"]
    together = registry.explain(model, src, out, ["gradient_x_input", "occlusion"])
    monkeypatch.setattr(forced_scoring, "MAX_ROWS", 1)
    alone = registry.explain(model, src, out, ["gradient_x_input", "occlusion"])
    for name in together:
        assert np.allclose(together[name].source, alone[name].source, atol=1e-5), name
        assert np.allclose(together[name].prefix, alone[name].prefix, atol=1e-5), name


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("contrasted", [False, True])
def test_sentences_of_different_lengths_explained_together_equal_one_at_a_time(arch, contrasted, decoded,
                                                                                 monkeypatch):
    """Gradient x input of several pairs shares batches (padded sources, different output
    lengths); each pair's rows equal its own, whatever mix of sentences a batch holds."""
    model, src, out = decoded[arch]
    pairs = [(src, out), (src[:3], out[:5]), (src[2:] + src[:1], out[:7]), (src[:5], out[:3])]
    contrasts = [[(t + 1) % 20 + 4 for t in o] for _, o in pairs] if contrasted else None
    alone = [methods.gradient_x_input(model, s, o, None if contrasts is None else c)
             for (s, o), c in zip(pairs, contrasts or [None] * len(pairs))]
    monkeypatch.setattr(forced_scoring, "MAX_ROWS", 7)  # batches that cut across sentences
    together = methods.gradient_x_input_many(model, pairs, contrasts)
    for (s, o), one, many in zip(pairs, alone, together):
        assert many.source.shape == (len(o), len(s)) and many.prefix.shape == (len(o), len(o))
        assert np.allclose(many.source, one.source, atol=1e-5) and np.allclose(many.prefix, one.prefix, atol=1e-5)


def test_explain_many_gives_each_pair_what_explain_gives_it(decoded):
    model, src, out = decoded["rnnsearch"]
    pairs = [(src, out), (src[:4], out[:3])]
    asked = ["occlusion", "gradient_x_input", "attention", "attention_norm"]
    for (s, o), found in zip(pairs, registry.explain_many(model, pairs, asked)):
        alone = registry.explain(model, s, o, asked)
        assert list(found) == asked  # in the order asked for
        for name in asked:
            assert np.allclose(found[name].source, alone[name].source, atol=1e-5), name
            assert np.allclose(found[name].prefix, alone[name].prefix, atol=1e-5), name


def test_integrated_gradients_are_complete_on_a_trained_model(decoded):
    """Σ attributions ≈ log p(y_i | x) - log p(y_i | baseline), per output token (the committed tiny model)."""
    model, src, out = decoded["rnnsearch"]
    assert methods.integrated_gradients(model, src, out, steps=64).completeness_gap < 0.05


# ---------------------------------------------------------------- faithfulness


class Monotone(Linear):
    """Every source word adds the same positive amount to the output token's logit and nothing
    to the others: removing any word lowers log p(y_i), adding one raises it."""

    def __init__(self):
        super().__init__(prefix=False)
        with torch.no_grad():
            self.src_embed.weight.fill_(1.0)
            self.A.weight.zero_()
            self.A.weight[OUT[0]] = 1.0


def test_deletion_falls_and_insertion_rises_for_a_model_every_word_helps():
    from model.explaining.faithfulness import curves

    found = curves(Monotone(), SRC, OUT[:1], [2, 0, 3, 1])
    deletion, insertion = found.deletion, found.insertion
    assert list(found.counts) == [0, 1, 2, 3, 4]  # a short sentence: every count
    assert np.all(np.diff(deletion) < 0) and np.all(np.diff(insertion) > 0)
    assert deletion[0] == pytest.approx(insertion[-1]) and deletion[-1] == pytest.approx(insertion[0])


def test_the_random_order_is_the_mean_over_its_seeds():
    from model.explaining import faithfulness as f

    model = Linear()
    each = [f._summary(f.curves(model, SRC, OUT, list(np.random.default_rng(s).permutation(len(SRC))))) for s in range(3)]
    mean = f.random_order(model, SRC, OUT, seeds=3)
    assert mean.deletion_area == pytest.approx(np.mean([e.deletion_area for e in each]))
    assert mean.sufficiency == pytest.approx(np.mean([e.sufficiency for e in each]))


def test_measure_keeps_each_methods_curves_and_the_random_orders_mean_curve():
    from model.explaining import faithfulness as f

    model = Linear()
    found = registry.explain(model, SRC, OUT, ["gradient_x_input", "occlusion"])
    measured = f.measure(model, SRC, OUT, found, seeds=3)
    for name, explanation in found.items():
        alone = f.curves(model, SRC, OUT, f._order(explanation.source_importance()))
        assert np.allclose(measured.curves[name].deletion, alone.deletion, atol=1e-5)
        assert np.allclose(measured.curves[name].insertion, alone.insertion, atol=1e-5)
    each = [f.curves(model, SRC, OUT, order) for order in f._random_orders(len(SRC), 3)]
    assert np.allclose(measured.random_curves.deletion, np.mean([c.deletion for c in each], axis=0), atol=1e-5)
    assert np.allclose(measured.random_curves.insertion, np.mean([c.insertion for c in each], axis=0), atol=1e-5)


def test_the_order_an_explanation_gives_is_the_order_words_are_removed(monkeypatch):
    from model.explaining import faithfulness as f

    seen = []
    flat = f.Curves(np.arange(5), np.zeros(5), np.zeros(5))
    monkeypatch.setattr(f, "curves", lambda m, s, o, order: seen.append(list(order)) or flat)
    f.faithfulness(Linear(), SRC, OUT, [0.1, 0.4, 0.4, 0.2])
    assert seen == [[1, 2, 3, 0]]  # most important first, ties by position


@pytest.mark.parametrize("importance", [[0.1, 0.4, 0.4, 0.2], [0.9, 0.0, 0.3, 0.5], [1.0, 1.0, 1.0, 1.0]])
def test_the_comprehensiveness_check_is_the_curves_comprehensiveness(importance):
    from model.explaining import faithfulness as f

    model = Linear()
    check = f.comprehensiveness_check(model, SRC, OUT, importance, seeds=3)
    assert check.method == pytest.approx(f.faithfulness(model, SRC, OUT, importance).comprehensiveness, abs=1e-5)
    assert check.random == pytest.approx(f.random_order(model, SRC, OUT, seeds=3).comprehensiveness, abs=1e-5)
    assert check.removed == (1, 1, 2)  # ceil(10%, 20%, 50% of 4)


def test_the_comprehensiveness_check_of_the_word_a_model_reads_beats_random():
    from model.explaining import faithfulness as f

    model = Linear(only_first=True, prefix=False)  # only source position 0 matters, and it raises every y_i
    with torch.no_grad():
        model.src_embed.weight.fill_(1.0)
        model.A.weight.zero_()
        model.A.weight[OUT] = 1.0
    first = f.comprehensiveness_check(model, SRC, OUT, [1.0, 0.0, 0.0, 0.0], seeds=5)
    last = f.comprehensiveness_check(model, SRC, OUT, [0.0, 0.5, 0.7, 1.0], seeds=5)
    assert last.method == pytest.approx(0.0, abs=1e-6)  # its top 50% (positions 3, 2) never holds position 0
    assert first.method > first.random > last.method
    assert first.beats_random and not last.beats_random
    assert not f.Comprehensiveness(0.504, 0.5, (1, 1, 2)).beats_random  # a rounding apart is no verdict


# ---------------------------------------------------------------- the command line


def test_the_command_explains_each_models_own_output_and_measures_it(tiny_checkpoints, tmp_path):
    from tests.model.test_cli_errors import run_cli

    out = tmp_path / "explained.jsonl"
    result = run_cli("model.explain", "--checkpoint", tiny_checkpoints["rnnsearch"], "--checkpoint",
                     tiny_checkpoints["rnnencdec"], "--text", "a dog runs", "--seeds", "2", "--json", out)
    assert result.returncode == 0, result.stderr
    search, encdec = [__import__("json").loads(line) for line in out.read_text().splitlines()]
    assert set(search["methods"]) == set(registry.applicable(True))  # not the methods that take a Transformer apart
    assert set(encdec["methods"]) == set(registry.applicable(False))
    for found in (search, encdec):
        for name, row in found["methods"].items():
            together = np.asarray(row["source"]).sum(1) + np.asarray(row["prefix"]).sum(1)
            assert np.allclose(together, 1.0, atol=1e-3), name
            assert len(row["source"]) == len(found["output_tokens"])
        assert set(found["random"]) == {"deletion_area", "insertion_area", "comprehensiveness", "sufficiency"}
        assert 0 <= found["integrated_gradients_completeness_gap"]
    assert b"random order" in result.stdout


@pytest.mark.parametrize("args, expected", [
    (["--methods", "lime"], b"unknown method 'lime'"),
    (["--contrast", "chien chat"], b"give one token"),
    (["--contrast", "le", "--step", "99"], b"--step must be 1.."),
    (["--text", " "], b"--text must be"),
])
def test_hostile_method_and_contrast_arguments_get_clear_errors(tiny_checkpoints, args, expected):
    from tests.model.test_cli_errors import run_cli

    base = ["--checkpoint", tiny_checkpoints["rnnsearch"], "--text", "a dog runs"]
    result = run_cli("model.explain", *base, *args)
    assert result.returncode == 2 and expected in result.stderr and b"Traceback" not in result.stderr


def test_the_test_set_mode_reports_means_with_intervals(tiny_checkpoints, tmp_path):
    from tests.model.test_cli_errors import run_cli

    src, out = tmp_path / "test.en", tmp_path / "means.jsonl"
    src.write_text("a dog runs\n\nthe small cat sits\na man eats\n")
    result = run_cli("model.explain", "--checkpoint", tiny_checkpoints["rnnencdec"], "--src", src, "--methods",
                     "gradient_x_input,occlusion", "--seeds", "2", "--json", out)
    assert result.returncode == 0, result.stderr
    found = __import__("json").loads(out.read_text())
    assert found["sentences"] == 3 and set(found["methods"]) == {"gradient_x_input", "occlusion"}  # the blank line skipped
    for row in [*found["methods"].values(), found["random"]]:
        assert all(v["ci95"] >= 0 for v in row.values())
    assert b"3/3 sentences" in result.stderr and b"95% interval" in result.stdout


@pytest.mark.parametrize("S, expected", [(3, [0, 1, 2, 3]), (10, list(range(11))),
                                         (28, [0, 3, 6, 8, 11, 14, 17, 20, 22, 25, 28]),
                                         (57, [0, 6, 11, 12, 17, 23, 28, 29, 34, 40, 46, 51, 57])])
def test_long_curves_are_read_at_every_tenth_and_where_the_bins_need(S, expected):
    from model.explaining.faithfulness import read_at

    assert list(read_at(S)) == expected


def test_a_curves_area_is_its_mean_over_the_share_removed():
    from model.explaining.faithfulness import Curves, _summary

    # a straight line from 0 to -1 over the share removed has area -0.5, however it is sampled
    for counts in ([0, 1, 2, 3, 4], [0, 3, 6, 8, 11, 14, 17, 20, 22, 25, 28]):
        x = np.array(counts) / counts[-1]
        found = _summary(Curves(np.array(counts), -x, x - 1))
        assert found.deletion_area == pytest.approx(-0.5) and found.insertion_area == pytest.approx(-0.5)


class Unsqueezed(Linear):
    """``Linear`` whose target embedding is called with (batch, 1) ids (a step that keeps a time axis)."""

    def step(self, y_prev, state, memory, alpha_override=None, alpha_fn=None):
        values = memory.values * memory.mask[..., None]
        logits = self.A(values.sum(1)) + self.B(self.tgt_embed(y_prev[:, None])[:, 0])
        return Step(torch.log_softmax(logits, dim=-1), state, None, None)


@pytest.mark.parametrize("method", ["gradient_x_input", "occlusion", "integrated_gradients"])
def test_the_words_written_are_weighed_whatever_shape_the_embedding_returns(method):
    flat = registry.explain(Linear(), SRC, OUT, [method])[method]
    shaped = registry.explain(Unsqueezed(), SRC, OUT, [method])[method]
    assert np.abs(flat.prefix).sum() > 0
    assert np.allclose(flat.prefix, shaped.prefix, atol=1e-5) and np.allclose(flat.source, shaped.source, atol=1e-5)


class StepOnly:
    """A model seen through the decoding interface's defaults only: ``advance`` runs the whole
    step and ``read_out`` picks rows of its log-probabilities."""

    def __init__(self, model):
        self._model = model

    def __getattr__(self, name):
        return getattr(self._model, name)

    def advance(self, y_prev, state, memory):
        return Decodable.advance(self, y_prev, state, memory)

    def read_out(self, readout, rows):
        return Decodable.read_out(self, readout, rows)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_the_deferred_output_layer_gives_what_the_whole_step_gives(arch, decoded):
    model, src, out = decoded[arch]
    src_t, src_len, tgt_in = forced_scoring.batch_inputs(model, src, out, 3)
    with torch.inference_mode():
        memory = model.encode(src_t, src_len)
        state = model.init_state(memory)
        whole = model.step(tgt_in[:, 0], state, memory)
        new_state, readout = model.advance(tgt_in[:, 0], state, memory)
        rows = torch.tensor([2, 0])
        assert torch.allclose(model.read_out(readout, rows), whole.logprobs[rows], atol=1e-5)
        assert torch.allclose(new_state, whole.state)
    fast = methods.gradient_x_input(model, src, out)
    slow = methods.gradient_x_input(StepOnly(model), src, out)
    assert np.allclose(fast.source, slow.source, atol=1e-5) and np.allclose(fast.prefix, slow.prefix, atol=1e-5)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("chunk", [5, 256])
def test_a_few_log_probabilities_read_alone_equal_those_of_the_whole_distribution(arch, chunk, decoded, monkeypatch):
    """``NMTModel.forced_logprobs`` (logit - logsumexp, a few positions at a time) equals the
    interface's default, which gathers from ``teacher_forced``: rows of different lengths,
    scaled words written, two ids per position; zeros after a row's end."""
    from model.network import nmt_model

    monkeypatch.setattr(nmt_model, "OUTPUT_ROWS", chunk)  # 5: the positions cut across rows
    model, src, out = decoded[arch]
    src_t, src_len, tgt_in = forced_scoring.batch_inputs(model, src, out, 3)
    tgt_in[1, 4:] = 0  # <pad>: row 1 ends after 4 inputs
    scale = torch.ones(3, len(out))
    scale[0, 2], scale[2, 1:] = 0.0, 0.5
    picks = torch.stack([torch.tensor(out), torch.tensor(out).roll(1)], 1).expand(3, -1, -1)  # (3, T, 2)
    with torch.inference_mode():
        memory = model.encode(src_t, src_len)
        fast = model.forced_logprobs(memory, tgt_in, picks, scale)
        whole = Decodable.forced_logprobs(model, memory, tgt_in, picks, scale)
    real = tgt_in != 0
    assert fast.shape == picks.shape
    assert torch.allclose(fast[real], whole[real], atol=1e-5)
    assert (fast[~real] == 0).all() and bool((fast[real] < 0).all())


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_scaled_words_written_read_whole_equal_one_step_at_a_time(arch, decoded):
    """The model's whole-sentence teacher forcing with ``input_scale`` gives what the decoding
    interface's step-by-step default gives (the path Joey NMT and tutorial models take)."""
    model, src, out = decoded[arch]
    src_t, src_len, tgt_in = forced_scoring.batch_inputs(model, src, out, 3)
    scale = torch.ones(3, len(out))
    scale[0, 1], scale[1, 2:] = 0.0, 0.5  # row 2 keeps every word
    with torch.inference_mode():
        memory = model.encode(src_t, src_len)
        whole, _ = model.teacher_forced(memory, tgt_in, scale)
        steps, _ = Decodable.teacher_forced(model, memory, tgt_in, scale)
        plain, _ = model.teacher_forced(memory, tgt_in)
    assert torch.allclose(whole, steps, atol=1e-5)
    assert torch.allclose(whole[2], plain[2], atol=1e-6)
    assert not torch.allclose(whole[0, 1:], plain[0, 1:], atol=1e-3)  # the scale reaches the model at input 1 ...
    assert torch.allclose(whole[0, :1], plain[0, :1], atol=1e-6)  # ... and nothing before it


def test_a_variants_hook_leaves_another_sessions_decode_alone(decoded):
    """While one thread re-scores variants of a shared model, another thread's step is the plain one."""
    import threading

    model, src, out = decoded["rnnsearch"]
    src_t, src_len, tgt_in = forced_scoring.batch_inputs(model, src, out, 3)
    with torch.inference_mode():
        memory = model.encode(src_t, src_len)
        step = lambda: model.step(tgt_in[:, 1], model.init_state(memory), memory).logprobs  # noqa: E731
        plain, seen = step(), []
        with forced_scoring._target_hook(model, forced_scoring._TargetControl(scale=torch.zeros(3))):
            def other():
                with torch.inference_mode():  # a thread of its own starts outside it
                    seen.append(step())

            thread = threading.Thread(target=other)
            thread.start()
            thread.join()
            mine = step()
    assert torch.allclose(seen[0], plain, atol=1e-6)
    assert not torch.allclose(mine, plain, atol=1e-3)  # the hook does act, in its own thread


def test_integrated_gradients_add_points_until_every_token_is_complete(decoded):
    model, src, out = decoded["rnnencdec"]
    found = methods.integrated_gradients(model, src, out, steps=2)
    assert found.completeness_gap <= methods.IG_TOLERANCE or found.steps == methods.IG_MAX_STEPS
    assert found.steps > 2  # two midpoints are not enough for a trained GRU: some token asked for more
    capped = methods.integrated_gradients(model, src, out, steps=2, max_steps=2)
    assert capped.steps == 2 and capped.completeness_gap > methods.IG_TOLERANCE  # and the gap left is reported


# ---------------------------------------------------------------- test-set tables


def test_a_test_sets_intervals_are_normal_approximations():
    from model.explaining.test_set import Interval

    found = Interval.of([1.0, 2.0, 3.0, 4.0, 5.0])
    assert found.mean == pytest.approx(3.0) and found.ci95 == pytest.approx(1.96 * np.std([1, 2, 3, 4, 5], ddof=1) / 5 ** 0.5)
    assert Interval(0.0, 0.5).overlaps(Interval(0.9, 0.5)) and not Interval(0.0, 0.3).overlaps(Interval(0.9, 0.5))


@pytest.mark.parametrize("best, random, beats", [((-2.5, 0.1), (-2.0, 0.1), True), ((-2.5, 0.3), (-2.0, 0.3), False),
                                                 ((-1.5, 0.1), (-2.0, 0.1), False)])
def test_the_best_method_beats_chance_only_when_its_interval_lies_below(best, random, beats):
    from model.explaining.test_set import FaithfulnessTable, Interval

    table = FaithfulnessTable("m", 7, {"occlusion": {"deletion_area": Interval(*best)},
                                       "gradient_x_input": {"deletion_area": Interval(best[0] + 1, 0.1)}},
                              {"deletion_area": Interval(*random)})
    assert table.ranked()[0][0] == "occlusion"
    assert table.best_beats_random() is beats


def test_each_sentence_of_a_test_set_gets_its_own_random_order(monkeypatch):
    from model.explaining import faithfulness as f
    from model.explaining.test_set import faithfulness_table

    seen = []
    real = f._random_orders
    monkeypatch.setattr(f, "_random_orders", lambda S, seeds, first=0: seen.append(first) or real(S, seeds, first))
    table = faithfulness_table(Linear(), "linear", [(SRC, OUT), ([], OUT), (SRC[:3], OUT[:2]), (SRC, OUT)],
                               ["gradient_x_input", "occlusion"], seeds=2)
    assert table.sentences == 3  # the blank source is left out
    assert seen == [0, 2, 4]
    assert set(table.methods) == {"gradient_x_input", "occlusion"} and "source_share" not in table.random


def test_a_test_set_table_reports_integrated_gradients_completeness():
    from model.explaining.test_set import faithfulness_table

    table = faithfulness_table(Linear(), "linear", [(SRC, OUT), (SRC[:3], OUT[:2])], ["integrated_gradients"])
    assert len(table.completeness_gaps) == 2 and max(table.completeness_gaps) <= methods.IG_TOLERANCE
    assert table.to_json()["integrated_gradients_completeness_gap"]["largest"] == round(max(table.completeness_gaps), 5)
    assert "integrated_gradients_completeness_gap" not in faithfulness_table(
        Linear(), "linear", [(SRC, OUT)], ["occlusion"]).to_json()


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("contrasted", [False, True])
@pytest.mark.parametrize("backward_rows, max_rows", [(1, 128), (128, 128), (7, 3)])
def test_integrated_gradients_shared_forward_equals_one_variant_per_position_and_scale(
        arch, contrasted, backward_rows, max_rows, decoded, monkeypatch):
    """One position per backward pass, several batched, and the scales split over forward passes."""
    model, src, out = decoded[arch]
    monkeypatch.setattr(forced_scoring, "BACKWARD_ROWS", backward_rows)
    monkeypatch.setattr(forced_scoring, "MAX_ROWS", max_rows)
    assert_shared_forward_equals_one_variant_each(model, src, out, [(t + 1) % 20 + 4 for t in out] if contrasted else None)


def test_integrated_gradients_of_a_model_without_a_target_embedding_weigh_the_source_alone(decoded, monkeypatch):
    model, src, out = decoded["rnnsearch"]
    monkeypatch.setattr(type(model), "target_embedding", property(lambda self: None))
    found = forced_scoring.averaged_gradients(model, src, out, [0, 2], [0.25, 0.75])
    assert np.abs(found.source).sum() > 0 and not found.decoder_inputs.any()
