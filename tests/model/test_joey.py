"""The Joey NMT adapter: imported models decode exactly as Joey does, and bad imports are refused.

Tiny Joey models are trained here by Joey's own training function (a few seconds each). The
tests compare the adapter with Joey's own code on the same weights, never with what a model
learned (that differs from one CPU to another). The whole module skips when PyYAML or joeynmt
is not installed (the ``joey`` extra and ``pip install --no-deps joeynmt==2.3.0``).
"""
from __future__ import annotations

import pytest

yaml = pytest.importorskip("yaml", reason="the Joey NMT tests need PyYAML (the joey extra)")
pytest.importorskip("joeynmt", reason="the Joey NMT tests need joeynmt 2.3.0 (pip install --no-deps joeynmt==2.3.0)")

import json  # noqa: E402
import pickle  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sacrebleu.metrics import BLEU  # noqa: E402

from model.checkpoints.families import load_model  # noqa: E402
from model.foreign.joey.family import import_joey  # noqa: E402
from model.speed.activations import fast_tanh  # noqa: E402
from model.corpus.vocab import BOS, EOS, PAD, UNK  # noqa: E402
from model.explaining.attention_ablation import ABLATIONS, Ablation  # noqa: E402
from model.explaining.saliency import saliency  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from model.core.errors import CheckpointError  # noqa: E402
from tests.conftest import make_pairs  # noqa: E402
from tests.model.joey_fixtures import SETTINGS, joey_decode, joey_testing, train_joey  # noqa: E402
from tests.model.explanation_checks import assert_shared_forward_equals_one_variant_each  # noqa: E402
from tests.model.test_decodable import assert_teacher_forcing_is_the_step_loop  # noqa: E402

SENTENCES = [p[0] for p in make_pairs(50, seed=9)]


@pytest.fixture(scope="module", params=sorted(SETTINGS))
def joey_dir(request, tmp_path_factory) -> Path:
    """A trained Joey model folder (config.yaml, token lists, best.ckpt), one per setting."""
    torch.set_num_threads(1)
    return train_joey(tmp_path_factory.mktemp(request.param), request.param)


@pytest.fixture(scope="module")
def imported_folder(joey_dir, tmp_path_factory) -> Path:
    return import_joey(joey_dir, tmp_path_factory.mktemp("imported") / "joey")


@pytest.fixture(scope="module")
def imported(imported_folder) -> Translator:
    return Translator.from_checkpoint(imported_folder)


def same_as_joeys_search(translator: Translator, trace, testing, beam: int) -> bool:
    """Compare one sentence's output with Joey's own search on the same weights, checking
    what holds whatever the weights learned; True when the outputs are equal.

    Both searches see the same numbers only up to float rounding (~1e-5: a batch against one
    sentence), so two candidates within 1e-4 of each other may be ordered differently.
    Greedy: the outputs are equal with per-token log-probabilities within 1e-4 and the same
    attention rows, or they part at such a near-tie, everything before it agreeing.
    Beam: an imported model is decoded by Joey's own beam search (model/decoding/search.py ·
    ``joey_beam``), so the outputs are equal save a near-tie, which the callers allow; equal
    outputs have equal sentence log-probabilities."""
    ids, scores, att = joey_decode(translator.model.joey, trace.source_ids, beam, testing)
    if beam == 1:  # the steps up to the first different token (all of them when equal) agree
        n = next((i + 1 for i, (a, b) in enumerate(zip(trace.target_ids, ids)) if a != b), len(ids))
        np.testing.assert_allclose(trace.step_logprobs[:n], scores[0][:n], atol=1e-4)
        np.testing.assert_allclose(trace.attention[:n], att[0][:n], atol=1e-5)
    elif trace.target_ids == ids:
        assert trace.logprob == pytest.approx(float(scores[0][0]), abs=1e-4)
    return trace.target_ids == ids


def ended_at_one_step(trace, beam: int) -> bool:
    """Whether beam search ended all ``beam`` hypotheses at the same step (read off the trace's
    beam tree: ended nodes have no children)."""
    extended = {n.parent for n in trace.beam}
    ends = [n for n in trace.beam if n.status in ("finished", "best") and n.id not in extended]
    return len(ends) == beam and len({n.step for n in ends}) == 1


@pytest.mark.parametrize("beam", [1, 5])
def test_translations_equal_joeys_own_search(imported, joey_dir, beam):
    """Joey's own search (its cap and minimum length from the model's config) on the same
    weights, 50 sentences, without length normalisation (Joey's beam_alpha -1), compared as
    ``same_as_joeys_search`` says: greedy outputs equal Joey's but for near-ties; beam outputs
    equal Joey's wherever the two searches provably hold the same hypotheses."""
    testing = joey_testing(joey_dir)
    traces = imported.translate(SENTENCES, SearchConfig(beam=beam, length_norm=0.0))
    parted = [t.source for t in traces if not same_as_joeys_search(imported, t, testing, beam)
              and beam > 1 and ended_at_one_step(t, beam)]
    assert len(parted) <= 1, parted


# Joey's output length settings (testing.max_output_length, testing.min_output_length; None:
# absent, Joey's default): a cap every output reaches (</s> banned until it), a short cap with
# Joey's default minimum, Joey's defaults (1.5 x the source length; no </s> first), and Joey's
# default cap reached by every output (a minimum beyond it).
LENGTH_SETTINGS = [(3, 3), (4, None), (None, None), (None, 50)]


@pytest.fixture(scope="module", params=LENGTH_SETTINGS, ids=lambda p: f"max{p[0]}-min{p[1]}")
def length_case(request, gru_dir, tmp_path_factory) -> tuple[Path, Translator]:
    """The GRU model with its config's testing section set to one row of LENGTH_SETTINGS, imported."""
    cap, floor = request.param
    joey = copy_of(gru_dir, tmp_path_factory.mktemp("lengths"))
    edit_config(joey, lambda c: c.update(testing={k: v for k, v in (("max_output_length", cap),
                                                                     ("min_output_length", floor)) if v is not None}))
    return joey, Translator.from_checkpoint(import_joey(joey, joey.parent / "imported"))


@pytest.mark.parametrize("beam", [1, 5])
def test_outputs_stop_where_joeys_do(length_case, beam):
    """The import keeps Joey's length settings, and the adapter's outputs equal Joey's own search
    token for token (as ``same_as_joeys_search`` says), those that reach the cap included: Joey
    stops them there without </s>. Where </s> is banned up to the cap, every output reaches it
    and every beam ends all its hypotheses there, so every beam output must equal Joey's."""
    joey_dir, translator = length_case
    testing = joey_testing(joey_dir)
    kept = json.loads((joey_dir.parent / "imported" / "config.json").read_text())["joey"]["testing"]
    assert kept == {"max_output_length": testing.max_output_length, "min_output_length": testing.min_output_length,
                    "beam_alpha": float(testing.beam_alpha)}
    sentences = SENTENCES[:25]
    traces = translator.translate(sentences, SearchConfig(beam=beam, length_norm=0.0))
    if beam == 1:  # the untraced greedy path stops at the same place as the traced search
        fast = translator.translate(sentences, SearchConfig(beam=1, length_norm=0.0, trace=False))
        assert [t.target_ids for t in fast] == [t.target_ids for t in traces]
    parted = []
    for trace in traces:
        cap = testing.max_output_length if testing.max_output_length > 0 else int(1.5 * len(trace.source_ids))  # Joey's
        ids, _, _ = joey_decode(translator.model.joey, trace.source_ids, beam, testing)
        for out in (trace.target_ids, ids):  # what the settings imply, whatever the weights
            assert len(out) <= cap and (out[-1] == EOS or len(out) == cap), out
            assert EOS not in out[:testing.min_output_length]
        if testing.min_output_length >= cap:  # </s> banned up to the cap: the output reaches it
            assert len(trace.target_ids) == cap and EOS not in trace.target_ids
            assert beam == 1 or ended_at_one_step(trace, beam)
        assert len(trace.attention) == len(trace.target_ids)
        if not same_as_joeys_search(translator, trace, testing, beam) and beam > 1 and ended_at_one_step(trace, beam):
            parted.append((trace.source, trace.target_ids, ids))
    assert len(parted) <= 1, parted


def test_the_adapters_distributions_are_joeys_decoder_run(imported):
    """Whatever the weights learned: for any target (here ids drawn at random), the adapter's
    teacher-forced log-probabilities and attention equal those of Joey's own decoder
    (``Model(return_type="decode")``) run over the whole target at once."""
    joey, tgt_map = imported.model.joey, imported.model.tgt_map
    src = imported.source_ids(SENTENCES[4])[0]
    tgt_in = torch.cat([torch.tensor([BOS]), torch.randint(4, len(imported.tgt_vocab), (6,),
                                                           generator=torch.Generator().manual_seed(2))])
    memory = imported.model.encode(torch.tensor([src]), torch.tensor([len(src)]))
    ours, alpha = imported.model.teacher_forced(memory, tgt_in[None])
    joey_src = imported.model.src_map[torch.tensor([src])]
    mask = (joey_src != joey.pad_index).unsqueeze(1)
    with torch.no_grad():
        enc_out, enc_hidden, _, _ = joey(return_type="encode", src=joey_src, src_length=torch.tensor([len(src)]),
                                         src_mask=mask)
        logits, _, att, _ = joey(return_type="decode", trg_input=tgt_map[tgt_in][None], encoder_output=enc_out,
                                 encoder_hidden=enc_hidden, src_mask=mask, unroll_steps=len(tgt_in),
                                 decoder_hidden=None, att_vector=None, trg_mask=None)
    theirs = torch.log_softmax(logits.float(), dim=-1).index_select(2, tgt_map)  # in this project's ids
    emitted = ~imported.model.never_emitted  # <s> and <pad>: probability 0 in both searches
    # log-probabilities near -10 differ in their last float32 bits between the two runs' orders of
    # operations: 1e-5 absolute plus a millionth of the value
    torch.testing.assert_close(ours[..., emitted], theirs[..., emitted], atol=1e-5, rtol=1e-6)
    torch.testing.assert_close(alpha, att.float(), atol=1e-6, rtol=0)
    with torch.inference_mode(), fast_tanh():  # the path untraced decoding takes: two ids swapped in place
        fast, _ = imported.model.teacher_forced(memory, tgt_in[None])
    torch.testing.assert_close(fast, ours.detach(), atol=1e-5, rtol=0)  # -inf where Joey never emits, in both
    assert torch.isinf(fast[..., ~emitted]).all()


def test_ids_follow_the_projects_convention(imported):
    src, tgt = imported.src_vocab, imported.tgt_vocab
    assert src.pieces([PAD, UNK, BOS, EOS]) == ["<pad>", "<unk>", "<s>", "</s>"]
    ids = src.encode("the dog zebra")
    assert ids[-1] == EOS and ids[2] == UNK  # Joey's sources end with </s>; unknown words are <unk>
    assert tgt.decode(tgt.encode("le chien") + [EOS]) == "le chien"


def test_every_view_works_on_an_imported_model(imported):
    """Batch size does not change results, beam 1 equals greedy, attention rows sum to 1,
    the what-if override and a forced prefix are obeyed, and saliency has one row per token."""
    cfg = SearchConfig(beam=3)
    one_by_one = [imported.translate([s], cfg)[0] for s in SENTENCES[:7]]
    batched = imported.translate(SENTENCES[:7], cfg, batch_size=5)
    assert [t.target_ids for t in one_by_one] == [t.target_ids for t in batched]
    greedy = imported.translate(SENTENCES[:5], SearchConfig(beam=1, trace=False))
    beam1 = imported.translate(SENTENCES[:5], SearchConfig(beam=1))
    assert [t.target_ids for t in greedy] == [t.target_ids for t in beam1]
    trace = batched[0]
    np.testing.assert_allclose(trace.attention.sum(1), 1.0, atol=1e-5)
    weights = np.exp(trace.energies - trace.energies.max(1, keepdims=True))
    np.testing.assert_allclose(weights / weights.sum(1, keepdims=True), trace.attention, atol=1e-5)  # α = softmax(e)
    pinned = imported.translate([SENTENCES[0]], cfg, attend={0: 1})[0]
    assert pinned.attention[0, 1] == pytest.approx(1.0)
    forced = imported.translate([SENTENCES[0]], cfg, prefixes=[[7, 8]])[0]
    assert forced.target_ids[:2] == [7, 8]
    sal = saliency(imported.model, trace.source_ids, trace.target_ids)
    assert sal.shape == (len(trace.target_ids), len(trace.source_ids))
    np.testing.assert_allclose(sal.sum(1), 1.0, atol=1e-5)


def test_teacher_forcing_equals_step_by_step(imported):
    assert_teacher_forcing_is_the_step_loop(imported, SENTENCES[3], [BOS] + imported.tgt_vocab.encode("le chien court"))


def test_an_import_holds_no_pickle_and_says_where_it_came_from(imported_folder):
    files = sorted(p.name for p in imported_folder.iterdir())
    assert files == ["card.json", "config.json", "model.safetensors", "src_vocab.txt", "trg_vocab.txt"]
    model, _, _, raw = load_model(imported_folder)
    assert raw["family"] == "joey-rnn"
    card = json.loads((imported_folder / "card.json").read_text())
    assert card["origin"].startswith("Joey NMT") and card["parameters"] == model.num_parameters()
    assert card["deviations"] == list(model.description.differences)


# ---------------------------------------------------------------- refused imports


class RunsCode:
    """A pickle payload that would run code when unpickled by an unrestricted loader."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "ran"))


@pytest.fixture(scope="module")
def gru_dir(tmp_path_factory) -> Path:
    torch.set_num_threads(1)
    return train_joey(tmp_path_factory.mktemp("gru"), "gru-bahdanau")


def copy_of(joey_dir: Path, tmp_path: Path) -> Path:
    out = tmp_path / "joey"
    shutil.copytree(joey_dir, out, ignore=shutil.ignore_patterns("tensorboard"))
    return out


def edit_config(folder: Path, change) -> None:
    cfg = yaml.safe_load((folder / "config.yaml").read_text())
    change(cfg)
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))


def test_a_pickle_that_runs_code_is_refused_unrun(gru_dir, tmp_path):
    joey = copy_of(gru_dir, tmp_path)
    pickle.loads(pickle.dumps(RunsCode(tmp_path / "proof.txt")))  # an unrestricted loader runs it
    assert (tmp_path / "proof.txt").read_text() == "ran"
    marker = tmp_path / "marker.txt"
    (joey / "best.ckpt").write_bytes(pickle.dumps({"model_state": RunsCode(marker)}))
    with pytest.raises(CheckpointError, match=r"restricted loader \(weights_only=True\)") as err:
        import_joey(joey, tmp_path / "out")
    assert not marker.exists()
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("change, named", [
    (lambda c: c["model"]["encoder"].update(type="transformer"), "a transformer encoder with a recurrent decoder"),
    (lambda c: c["model"]["decoder"].update(type="transformer"), "a recurrent encoder with a transformer decoder"),
    (lambda c: c["model"]["decoder"].update(type="conformer"), "model.decoder.type='conformer'"),
    (lambda c: c["model"]["decoder"].update(attention="multihead"), "model.decoder.attention='multihead'"),
    (lambda c: c["model"]["encoder"].update(bidirectional=False), "model.encoder.bidirectional"),
    (lambda c: c["data"].update(special_symbols={"sep_token": "<sep>"}), "data.special_symbols.sep_token"),
    (lambda c: c["data"]["src"].update(level="bpe", tokenizer_type="bytes"), "data.src.tokenizer_type='bytes'"),
])
def test_unsupported_settings_are_refused_by_name(gru_dir, tmp_path, change, named):
    assert_refused_by_name(gru_dir, tmp_path, change, named)


def assert_refused_by_name(joey_dir: Path, tmp_path: Path, change, named: str) -> None:
    """A copy of ``joey_dir`` whose config.yaml ``change`` edits is refused in one line naming
    ``named``, and nothing is written."""
    joey = copy_of(joey_dir, tmp_path)
    edit_config(joey, change)
    with pytest.raises(CheckpointError) as err:
        import_joey(joey, tmp_path / "out")
    assert named in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "out").exists()  # nothing written


def test_tensor_shapes_that_disagree_with_the_config_are_refused(gru_dir, tmp_path):
    joey = copy_of(gru_dir, tmp_path)
    edit_config(joey, lambda c: c["model"]["decoder"].update(hidden_size=SETTINGS["gru-bahdanau"]["hidden"][1] + 3))
    with pytest.raises(CheckpointError, match="has shape"):
        import_joey(joey, tmp_path / "out")


def test_an_imported_folder_whose_config_was_edited_is_refused_at_load(gru_dir, tmp_path):
    out = import_joey(gru_dir, tmp_path / "out")
    raw = json.loads((out / "config.json").read_text())
    raw["joey"]["model"]["encoder"]["hidden_size"] += 2
    (out / "config.json").write_text(json.dumps(raw))
    with pytest.raises(CheckpointError, match="has shape"):
        load_model(out)


@pytest.mark.parametrize("name", ["../elsewhere.txt", "sub/elsewhere.txt", "ABSOLUTE"])
def test_file_names_in_an_imported_config_stay_inside_the_folder(gru_dir, tmp_path, name):
    out = import_joey(gru_dir, tmp_path / "box" / "out")
    target = {"ABSOLUTE": tmp_path / "elsewhere.txt"}.get(name, out / name)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(out / "src_vocab.txt", target)  # a real token list waits there: only the name check stops it
    raw = json.loads((out / "config.json").read_text())
    raw["joey"]["data"]["src"]["voc_file"] = str(target) if name == "ABSOLUTE" else name
    (out / "config.json").write_text(json.dumps(raw))
    with pytest.raises(CheckpointError, match="must be a plain name"):
        load_model(out)


def test_a_tokenizer_file_outside_the_joey_folder_is_not_read(gru_dir, tmp_path):
    joey = copy_of(gru_dir, tmp_path)
    secret = tmp_path / "secret.model"
    secret.write_text("not for copying")
    edit_config(joey, lambda c: c["data"]["src"].update(level="bpe", tokenizer_type="sentencepiece",
                                                        tokenizer_cfg={"model_file": str(secret)}))
    with pytest.raises(CheckpointError, match="copy that file into"):
        import_joey(joey, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("change, message", [
    (lambda c: c["data"].update(special_symbols="x"), "special_symbols is not a mapping"),
    (lambda c: c["data"].update(special_symbols={"pad_token": "<unk>"}), "must differ"),
    (lambda c: c["data"]["src"].update(level="bpe", tokenizer_type="subword-nmt",
                                       tokenizer_cfg={"codes": "codes", "separator": "-h"}), "separator"),
    (lambda c: c["model"]["decoder"].update(hidden_size=10**6), "hidden_size=1000000 is outside"),
    (lambda c: c["model"]["encoder"].update(num_layers=True), "num_layers='True' must be int"),
    (lambda c: c["model"]["decoder"].update(hidden_size=4000, num_layers=8), "more than the"),
    (lambda c: c["data"]["trg"].update(lang="en"), "are the same"),
    (lambda c: c.update(testing="x"), "testing is not a mapping"),
    (lambda c: c["testing"].update(max_output_length=0), r"max_output_length=0 must be 1\.\.1000"),
    (lambda c: c["testing"].update(max_output_length=10**6), "max_output_length=1000000 must be"),
    (lambda c: c["testing"].update(max_output_length="30"), "max_output_length='30' must be int"),
    (lambda c: c["testing"].update(min_output_length=2.5), "min_output_length='2.5' must be int"),
    (lambda c: c["testing"].update(min_output_length=5000), "min_output_length=5000 is more than"),
])
def test_malformed_settings_are_refused_by_name_before_anything_is_built(gru_dir, tmp_path, change, message):
    joey = copy_of(gru_dir, tmp_path)
    edit_config(joey, change)
    with pytest.raises(CheckpointError, match=message):
        import_joey(joey, tmp_path / "out")


def test_settings_outside_the_whitelist_are_dropped(gru_dir, tmp_path):
    """A pretrained-embedding path (which Joey's build_model would open) is not kept, so the
    import neither reads it nor fails without it."""
    joey = copy_of(gru_dir, tmp_path)
    edit_config(joey, lambda c: c["model"]["encoder"]["embeddings"].update(load_pretrained="/dev/zero"))
    out = import_joey(joey, tmp_path / "out")
    assert "load_pretrained" not in (out / "config.json").read_text()


def test_an_import_never_writes_into_a_folder_in_use(gru_dir, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "model.safetensors").write_text("a shipped model")
    with pytest.raises(CheckpointError, match="not an empty folder"):
        import_joey(gru_dir, tmp_path / "taken")
    assert (tmp_path / "taken" / "model.safetensors").read_text() == "a shipped model"


def test_text_joeys_normalisation_empties_translates_to_nothing(gru_dir, tmp_path):
    joey = copy_of(gru_dir, tmp_path)
    edit_config(joey, lambda c: c["data"]["src"].update(normalize=True))
    translator = Translator.from_checkpoint(import_joey(joey, tmp_path / "out"))
    assert translator.src_vocab.encode("\u200b") == []
    assert translator.translate(["\u200b"], SearchConfig())[0].translation == ""


def test_a_cut_source_keeps_its_end_marker(imported):
    ids, truncated = imported.source_ids(" ".join(["dog"] * 300))
    assert truncated and len(ids) == 200 and ids[-1] == EOS


def test_concurrent_decodes_share_one_model_safely(imported):
    """Joey's attention keeps its keys on the module; sessions decoding at once must not mix them."""
    from concurrent.futures import ThreadPoolExecutor

    cfg = SearchConfig(beam=3)
    alone = [imported.translate([s], cfg)[0].target_ids for s in SENTENCES[:12]]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda s: imported.translate([s], cfg)[0].target_ids, SENTENCES[:12] * 3))
    assert together == alone * 3


def test_an_unknown_family_is_refused(gru_dir, tmp_path):
    out = import_joey(gru_dir, tmp_path / "out")
    raw = json.loads((out / "config.json").read_text())
    raw["family"] = "os.system"
    (out / "config.json").write_text(json.dumps(raw))
    with pytest.raises(CheckpointError, match="unknown model family"):
        load_model(out)


def test_loading_without_joeynmt_says_how_to_install_it(gru_dir, tmp_path, monkeypatch):
    out = import_joey(gru_dir, tmp_path / "out")
    monkeypatch.setitem(__import__("sys").modules, "joeynmt", None)  # import joeynmt now raises ImportError
    with pytest.raises(CheckpointError, match=r'pip install -e "\.\[joey\]"'):
        load_model(out)


def test_evaluate_and_align_take_an_imported_folder(imported_folder, tmp_path):
    """The command lines open imported folders. Evaluation writes what the Translator outputs with
    its settings (beam 5, λ 1), the ablated run too, and scores those outputs; alignment scores
    every sentence with each method (whatever the weights learned, an error rate is in 0..1)."""
    from model import align
    from model import evaluate

    pairs = make_pairs(12, seed=4)
    (tmp_path / "t.en").write_text("\n".join(p[0] for p in pairs) + "\n")
    (tmp_path / "t.fr").write_text("\n".join(p[1] for p in pairs) + "\n")
    (tmp_path / "g.wa").write_text("".join(f"{k + 1} {i + 1} {i + 1} S\n" for k, (en, _) in enumerate(pairs)
                                           for i in range(len(en.split()))))
    assert evaluate.main(["--src", str(tmp_path / "t.en"), "--ref", str(tmp_path / "t.fr"), "--checkpoint",
                          str(imported_folder), "--out", str(tmp_path / "report"), "--ablate", "uniform"]) == 0
    assert "uniform" in ABLATIONS
    translator, refs = Translator.from_checkpoint(imported_folder), [p[1] for p in pairs]
    scores = json.loads((tmp_path / "report" / "scores.json").read_text())
    for name, cfg in (("joey", SearchConfig(beam=5, length_norm=1.0)),
                      ("joey+uniform", SearchConfig(beam=5, length_norm=1.0, ablation=Ablation("uniform")))):
        hyps = [t.translation for t in translator.translate([p[0] for p in pairs], cfg)]
        assert (tmp_path / "report" / f"hyps.{name}.txt").read_text().splitlines() == hyps
        assert scores["models"][name]["bleu"] == round(BLEU().corpus_score(hyps, [refs]).score, 2)
    assert align.main(["--src", str(tmp_path / "t.en"), "--tgt", str(tmp_path / "t.fr"), "--gold",
                       str(tmp_path / "g.wa"), "--checkpoint", str(imported_folder), "--methods",
                       "attention,saliency,diagonal", "--json", str(tmp_path / "align.json")]) == 0
    rows = {row["method"]: row for row in json.loads((tmp_path / "align.json").read_text())["rows"]}
    assert set(rows) == {"attention", "saliency", "diagonal"}
    assert all(row["sentences"] == 12 and 0.0 <= row["aer"] <= 1.0 for row in rows.values())


def subword_files(folder: Path, kind: str) -> dict:
    """Train the tokenizer Joey's config will name (one per language) on the fixture corpus."""
    from tests.model.joey_fixtures import write_corpus

    write_corpus(folder)
    if kind == "sentencepiece":
        import sentencepiece as spm

        for lang in ("en", "fr"):
            spm.SentencePieceTrainer.train(input=str(folder / f"train.{lang}"), model_prefix=str(folder / f"spm.{lang}"),
                                           vocab_size=40, model_type="bpe", hard_vocab_limit=False, minloglevel=2)
        return {"level": "bpe", "tokenizer_type": "sentencepiece",
                "tokenizer_cfg": {"model_file": str(folder / "spm.{lang}.model")}}
    from subword_nmt.learn_bpe import learn_bpe

    for lang in ("en", "fr"):
        with open(folder / f"train.{lang}") as text, open(folder / f"codes.{lang}", "w") as codes:
            learn_bpe(text, codes, 15)
    return {"level": "bpe", "tokenizer_type": "subword-nmt", "tokenizer_cfg": {"codes": str(folder / "codes.{lang}")}}


@pytest.mark.parametrize("kind, file", [("sentencepiece", "src.spm.model"), ("subword-nmt", "src.bpe.codes")])
def test_subword_models_bring_their_tokenizer_and_decode_as_joey_does(tmp_path, monkeypatch, kind, file):
    """An import carries its tokenizer files, so the Joey folder can go; subword pieces merge back
    into words, and greedy output equals Joey's.

    Joey 2.3 trains SentencePiece models only with a sentencepiece that has
    ``SetVocabulary`` (removed in 0.2.1): while Joey trains, the test gives the processor a
    no-op one. The import itself runs on the installed sentencepiece as it is."""
    import sentencepiece

    with monkeypatch.context() as patch:
        if not hasattr(sentencepiece.SentencePieceProcessor, "SetVocabulary"):
            patch.setattr(sentencepiece.SentencePieceProcessor, "SetVocabulary", lambda self, pieces: None,
                          raising=False)
        joey_dir = train_joey(tmp_path / "joey", "gru-bahdanau", subword_files(tmp_path / "joey", kind), epochs=4)
    out = import_joey(joey_dir, tmp_path / "imported")
    assert (out / file).is_file()
    testing = joey_testing(joey_dir)
    shutil.rmtree(tmp_path / "joey")
    translator = Translator.from_checkpoint(out)
    traces = translator.translate(SENTENCES[:20], SearchConfig(beam=1, length_norm=0.0))
    assert any(len(t.source_tokens) > len(s.split()) + 1 for s, t in zip(SENTENCES, traces))  # words were split
    for trace in traces:
        same_as_joeys_search(translator, trace, testing, 1)
        assert "@@" not in trace.translation and "\u2581" not in trace.translation


def test_the_import_command(gru_dir, tmp_path, capsys):
    from model import checkpoint

    assert checkpoint.main(["import-joey", str(gru_dir), str(tmp_path / "ok")]) == 0
    assert "wrote" in capsys.readouterr().out and (tmp_path / "ok" / "model.safetensors").is_file()
    assert checkpoint.main(["check", str(tmp_path / "ok")]) == 0
    assert "joey-rnn" in capsys.readouterr().out
    joey = copy_of(gru_dir, tmp_path)
    edit_config(joey, lambda c: c["model"]["encoder"].update(type="transformer"))
    assert checkpoint.main(["import-joey", str(joey), str(tmp_path / "refused")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "a transformer encoder with a recurrent decoder" in err and "\n" not in err
    assert checkpoint.main(["export", str(tmp_path / "ok"), str(tmp_path / "fp16")]) == 2  # this project's only
    assert "not one trained by this project" in capsys.readouterr().err


def test_integrated_gradients_share_their_forward_pass_on_an_imported_model(imported):
    trace = imported.translate([SENTENCES[2]], SearchConfig(beam=3))[0]
    assert_shared_forward_equals_one_variant_each(imported.model, trace.source_ids, trace.target_ids)
