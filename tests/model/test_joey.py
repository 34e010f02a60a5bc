"""The Joey NMT adapter: imported models decode exactly as Joey does, and bad imports are refused.

Tiny Joey models are trained here by Joey's own training function (a few seconds each); the
whole module skips when joeynmt is not installed (the README's test command installs it).
"""
from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

pytest.importorskip("joeynmt")

from model.checkpoints.folder import import_joey, load_model  # noqa: E402
from model.corpus.vocab import BOS, EOS, PAD, UNK  # noqa: E402
from model.decoding.saliency import saliency  # noqa: E402
from model.decoding.search import SearchConfig, _max_lengths  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from model.errors import CheckpointError  # noqa: E402
from tests.conftest import make_pairs  # noqa: E402
from tests.model.joey_fixtures import SETTINGS, joey_decode, train_joey  # noqa: E402
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


@pytest.mark.parametrize("beam", [1, 5])
def test_translations_equal_joeys_own_search(imported, beam):
    """Greedy: same tokens, per-token log-probabilities within 1e-4 and the same attention rows
    as Joey's greedy search on 50 sentences. Beam 5 without length normalisation (Joey's alpha 0):
    the same outputs and sentence log-probabilities. Both searches see the same numbers only up
    to float rounding (~1e-5: a batch against one sentence), so two candidates within 1e-4 of
    each other may be ordered differently; at most one sentence may part there, and only there."""
    cfg = SearchConfig(beam=beam, length_norm=0.0)
    traces = imported.translate(SENTENCES, cfg)
    parted = []
    for sentence, trace in zip(SENTENCES, traces):
        cap = int(_max_lengths(torch.tensor([len(trace.source_ids)]), cfg)[0])
        ids, scores, att = joey_decode(imported.model.joey, trace.source_ids, beam, cap)
        if not same_output(trace.target_ids, ids, cap):
            parted.append(sentence)
            if beam == 1:  # the first different token was a near-tie, and everything before it agrees
                t = next(i for i, (a, b) in enumerate(zip(trace.target_ids, ids)) if a != b)
                np.testing.assert_allclose(trace.step_logprobs[:t + 1], scores[0][:t + 1].numpy(), atol=1e-4)
            continue
        n = len(ids) if trace.target_ids == ids else len(ids) - 1  # at the cap, the tokens before it
        if beam == 1:
            np.testing.assert_allclose(trace.step_logprobs[:n], scores[0][:n].numpy(), atol=1e-4)
            np.testing.assert_allclose(trace.attention[:n], att[0][:n].numpy(), atol=1e-5)
        elif n == len(ids):
            assert trace.logprob == pytest.approx(float(scores[0][0]), abs=1e-4)
    assert len(parted) <= 1, parted


def same_output(ours: list[int], joeys: list[int], cap: int) -> bool:
    """Equal outputs. At the length cap (``cap`` tokens) this project's search ends with </s>
    (model/decoding/search.py) where Joey's stops without one: there the tokens before it must agree."""
    if len(ours) == cap and ours[-1] == EOS and len(joeys) == cap:
        return ours[:-1] == joeys[:-1]
    return ours == joeys


def test_the_model_learned_its_toy_task(imported):
    """Guards the parity test against comparing two broken decoders: the tiny model translates
    most words of its word-for-word task."""
    pairs = make_pairs(30, seed=9)
    traces = imported.translate([p[0] for p in pairs], SearchConfig(beam=5))
    right = sum(a == b for (_, ref), tr in zip(pairs, traces) for a, b in zip(ref.split(), tr.translation.split()))
    assert right / sum(len(ref.split()) for _, ref in pairs) > 0.5


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
    (lambda c: c["model"]["encoder"].update(type="transformer"), "model.encoder.type='transformer'"),
    (lambda c: c["model"]["decoder"].update(type="transformer"), "model.decoder.type='transformer'"),
    (lambda c: c["model"]["decoder"].update(attention="multihead"), "model.decoder.attention='multihead'"),
    (lambda c: c["model"]["encoder"].update(bidirectional=False), "model.encoder.bidirectional"),
    (lambda c: c["data"].update(special_symbols={"sep_token": "<sep>"}), "data.special_symbols.sep_token"),
    (lambda c: c["data"]["src"].update(level="bpe", tokenizer_type="bytes"), "data.src.tokenizer_type='bytes'"),
])
def test_unsupported_settings_are_refused_by_name(gru_dir, tmp_path, change, named):
    joey = copy_of(gru_dir, tmp_path)
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
    """The command lines open imported folders: BLEU with an attention ablation, and alignment
    error rate against word-for-word gold links, which the learned attention finds."""
    from model.scoring import attention_alignment as align
    from model.scoring import evaluation as evaluate

    pairs = make_pairs(12, seed=4)
    (tmp_path / "t.en").write_text("\n".join(p[0] for p in pairs) + "\n")
    (tmp_path / "t.fr").write_text("\n".join(p[1] for p in pairs) + "\n")
    (tmp_path / "g.wa").write_text("".join(f"{k + 1} {i + 1} {i + 1} S\n" for k, (en, _) in enumerate(pairs)
                                           for i in range(len(en.split()))))
    assert evaluate.main(["--src", str(tmp_path / "t.en"), "--ref", str(tmp_path / "t.fr"), "--checkpoint",
                          str(imported_folder), "--out", str(tmp_path / "report"), "--ablate", "uniform"]) == 0
    scores = json.loads((tmp_path / "report" / "scores.json").read_text())
    bleu = {name: model["bleu"] for name, model in scores["models"].items()}
    assert bleu["joey"] > bleu["joey+uniform"] + 20
    assert align.main(["--src", str(tmp_path / "t.en"), "--tgt", str(tmp_path / "t.fr"), "--gold",
                       str(tmp_path / "g.wa"), "--checkpoint", str(imported_folder), "--methods",
                       "attention,saliency,diagonal", "--json", str(tmp_path / "align.json")]) == 0
    rows = {row["method"]: row for row in json.loads((tmp_path / "align.json").read_text())["rows"]}
    assert rows["attention"]["sentences"] == 12 and rows["attention"]["aer"] < 0.25


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
        joey_dir = train_joey(tmp_path / "joey", "gru-bahdanau", subword_files(tmp_path / "joey", kind))
    out = import_joey(joey_dir, tmp_path / "imported")
    assert (out / file).is_file()
    shutil.rmtree(tmp_path / "joey")
    translator = Translator.from_checkpoint(out)
    cfg = SearchConfig(beam=1, length_norm=0.0)
    traces = translator.translate(SENTENCES[:20], cfg)
    assert any(len(t.source_tokens) > len(s.split()) + 1 for s, t in zip(SENTENCES, traces))  # words were split
    for trace in traces:
        cap = int(_max_lengths(torch.tensor([len(trace.source_ids)]), cfg)[0])
        ids, scores, _ = joey_decode(translator.model.joey, trace.source_ids, 1, cap)
        assert same_output(trace.target_ids, ids, cap)
        assert "@@" not in trace.translation and "\u2581" not in trace.translation


def test_the_import_command(gru_dir, tmp_path, capsys):
    from model.checkpoints import folder as checkpoint

    assert checkpoint.main(["import-joey", str(gru_dir), str(tmp_path / "ok")]) == 0
    assert "wrote" in capsys.readouterr().out and (tmp_path / "ok" / "model.safetensors").is_file()
    assert checkpoint.main(["check", str(tmp_path / "ok")]) == 0
    assert "joey-rnn" in capsys.readouterr().out
    joey = copy_of(gru_dir, tmp_path)
    edit_config(joey, lambda c: c["model"]["encoder"].update(type="transformer"))
    assert checkpoint.main(["import-joey", str(joey), str(tmp_path / "refused")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "model.encoder.type='transformer'" in err and "\n" not in err
    assert checkpoint.main(["export", str(tmp_path / "ok"), str(tmp_path / "fp16")]) == 2  # this project's only
    assert "not one trained by this project" in capsys.readouterr().err
