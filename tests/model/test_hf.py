"""Hugging Face encoder-decoders opened through the decoding interface (model/foreign/hf/seq2seq.py):
token-for-token parity with ``generate`` on tiny models built from configs, and hostile folders."""
from __future__ import annotations

import json
import pickle
import re
import shutil
import socket
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers", reason="the Hugging Face tests need the hf extra")

from model.checkpoint import main as checkpoint_main  # noqa: E402
from model.checkpoints.families import load_model  # noqa: E402
from model.foreign.hf.family import import_hf  # noqa: E402
from model.core.errors import CheckpointError, ConfigError  # noqa: E402
from model.decoding.cross_attention import shifted_cross_attention  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from tests.model import hf_fixtures as fx  # noqa: E402

SENTENCES = fx.TEXT + ["the cat", "music", "the the the", "a long book and a red car and bread", "zebra unknown words"]
KINDS = ("marian", "bart", "mbart", "t5", "m2m_100")
# generation settings that change which hypothesis wins (length penalty, when a beam stops)
RULES = [dict(length_penalty=1.0, early_stopping=False), dict(length_penalty=2.0, early_stopping="never"),
         dict(length_penalty=0.5, early_stopping=True), dict(length_penalty=-1.0, early_stopping=False)]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Each architecture's tiny folder as save_pretrained writes it, and its import."""
    torch.set_num_threads(1)
    out = {}
    for kind in KINDS:
        base = tmp_path_factory.mktemp(kind)
        hf_dir = fx.marian(base / "hf") if kind == "marian" else fx.other(kind, base / "hf")
        out[kind] = (hf_dir, import_hf(hf_dir, base / "imported"))
    return out


def generate_ids(hf_dir: Path, text: str, beam: int, **settings) -> tuple[list[int], object]:
    """The model's own generate(): its output ids (the decoder start and trailing pads dropped)."""
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(str(hf_dir), attn_implementation="eager").eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(hf_dir))
    out = model.generate(**tokenizer([text], return_tensors="pt"), num_beams=beam, output_attentions=True,
                         return_dict_in_generate=True, **settings)
    ids = out.sequences[0].tolist()[1:]
    pad, eos = model.generation_config.pad_token_id, model.generation_config.eos_token_id
    while ids and ids[-1] == pad and pad != eos:
        ids.pop()
    return ids, out


def with_generation(hf_dir: Path, target: Path, **settings) -> Path:
    """A copy of ``hf_dir`` whose generation_config.json has ``settings``."""
    shutil.copytree(hf_dir, target)
    fx._generation(target, **settings)
    return target


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("beam", [1, 5])
def test_translations_equal_generate_token_for_token(folders, kind, beam):
    hf_dir, imported = folders[kind]
    translator = Translator.from_checkpoint(imported)
    traces = translator.translate(SENTENCES, SearchConfig(beam=beam, length_norm=translator.model.beam_rule.length_norm))
    ours = [translator.tgt_vocab.hf_of(t.target_ids) for t in traces]
    theirs = [generate_ids(hf_dir, s, beam)[0] for s in SENTENCES]
    assert ours == theirs
    assert len({len(ids) for ids in theirs}) > 1, "outputs of one length test no stopping rule"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"lp{r['length_penalty']}-{r['early_stopping']}")
def test_each_beam_stopping_rule_and_length_penalty_equals_generate(folders, rule, tmp_path):
    hf_dir = with_generation(folders["marian"][0], tmp_path / "hf", **rule)
    imported = import_hf(hf_dir, tmp_path / "imported")
    translator = Translator.from_checkpoint(imported)
    cfg = SearchConfig(beam=5, length_norm=translator.model.beam_rule.length_norm)
    ours = [translator.tgt_vocab.hf_of(t.target_ids) for t in translator.translate(SENTENCES, cfg)]
    assert ours == [generate_ids(hf_dir, s, 5)[0] for s in SENTENCES]


def test_the_stopping_rule_is_what_makes_beam_outputs_equal(folders, monkeypatch):
    """Without the model's rule (this project's: stop once the beam is full) some outputs differ:
    the parity test above could fail for the reason it names."""
    hf_dir, imported = folders["marian"]
    translator = Translator.from_checkpoint(imported)
    cfg = SearchConfig(beam=5, length_norm=translator.model.beam_rule.length_norm)
    own = [t.target_ids for t in translator.translate(SENTENCES, cfg)]
    monkeypatch.setattr(type(translator.model), "beam_rule", property(lambda self: None))
    assert own != [t.target_ids for t in translator.translate(SENTENCES, cfg)]


@pytest.mark.parametrize("kind", KINDS)
def test_cross_attention_equals_generates_every_layer_and_head(folders, kind):
    hf_dir, imported = folders[kind]
    translator = Translator.from_checkpoint(imported)
    for text in SENTENCES[:4]:
        trace = translator.translate([text], SearchConfig(beam=1))[0]
        ids, out = generate_ids(hf_dir, text, 1)
        assert translator.tgt_vocab.hf_of(trace.target_ids) == ids
        theirs = np.stack([np.stack([layer[0, :, 0].numpy() for layer in step]) for step in out.cross_attentions], 2)
        assert trace.cross_attention.shape == theirs.shape  # (layers, heads, tgt_len, src_len)
        np.testing.assert_allclose(trace.cross_attention, theirs, atol=1e-4)
        np.testing.assert_allclose(trace.attention, theirs[-1].mean(0), atol=1e-4)  # the stated default: last layer's mean


@pytest.mark.parametrize("kind", ["marian", "t5"])
def test_typed_text_gives_the_tokenizers_own_ids(folders, kind):
    hf_dir, imported = folders[kind]
    _, src_vocab, _, _ = load_model(imported)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(hf_dir))
    for text in SENTENCES:
        assert src_vocab.hf_of(src_vocab.encode(text)) == tokenizer(text)["input_ids"]


def test_batched_equals_one_by_one_and_rows_sum_to_one(folders):
    translator = Translator.from_checkpoint(folders["bart"][1])
    cfg = SearchConfig(beam=3)
    together = translator.translate(SENTENCES, cfg)
    alone = [translator.translate([s], cfg)[0] for s in SENTENCES]
    assert [t.target_ids for t in together] == [t.target_ids for t in alone]
    for trace in together:
        np.testing.assert_allclose(trace.cross_attention.sum(-1), 1.0, atol=1e-5)


def test_forced_and_shifted_readings_match_the_decode(folders):
    translator = Translator.from_checkpoint(folders["marian"][1])
    trace = translator.translate([SENTENCES[1]], SearchConfig(beam=1))[0]
    shifted = shifted_cross_attention(translator.model, trace.source_ids, trace.target_ids)
    n = len(trace.target_ids)
    assert shifted.shape == trace.cross_attention.shape
    np.testing.assert_allclose(shifted[:, :, : n - 1], trace.cross_attention[:, :, 1:], atol=1e-5)  # row i = step i+1


def test_translate_command_defaults_to_the_models_own_decoding(folders, capsys, monkeypatch):
    hf_dir, imported = folders["marian"]
    from model.translate import main as translate_main

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(hf_dir))
    for beam in (1, 5):
        monkeypatch.setattr(sys, "stdin", _stdin("\n".join(SENTENCES[:5]) + "\n"))
        assert translate_main(["--checkpoint", str(imported), "--beam", str(beam)]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines == [tokenizer.decode(generate_ids(hf_dir, s, beam)[0], skip_special_tokens=True) for s in SENTENCES[:5]]


def _stdin(text: str):
    import io

    return io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8")


def test_nothing_reaches_a_network(folders, tmp_path, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    out = import_hf(folders["marian"][0], tmp_path / "again")
    translator = Translator.from_checkpoint(out)
    assert translator.translate(["the cat"], SearchConfig(beam=2))[0].target_ids


def test_an_import_keeps_its_card_and_decoding(folders):
    import_dir = folders["marian"][1]
    card = json.loads((import_dir / "card.json").read_text())
    assert card["arch"] == "hf-marian" and "transformers" in card["origin"]
    assert card["decoding"]["beam"] == 4  # the folder's num_beams
    raw = json.loads((import_dir / "config.json").read_text())
    assert raw["family"] == "hf-seq2seq" and not list(import_dir.rglob("*.bin"))
    assert [p.name for p in import_dir.iterdir() if p.suffix == ".safetensors"] == []  # the weights live in hf/


def test_the_attention_cannot_be_replaced_and_says_so(folders):
    translator = Translator.from_checkpoint(folders["marian"][1])
    with pytest.raises(ConfigError, match="cannot be replaced"):
        translator.model.step(torch.tensor([2]), None, None, alpha_override=torch.ones(1, 3))


# ---------------------------------------------------------------- hostile folders


def _copy(folders, tmp_path, kind: str = "marian") -> Path:
    target = tmp_path / "hostile"
    shutil.copytree(folders[kind][0], target)
    return target


def _edit_config(folder: Path, **changes) -> None:
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


def test_a_pickled_state_dict_alone_is_read_with_the_restricted_loader(folders, tmp_path):
    from safetensors.torch import load_file

    folder = _copy(folders, tmp_path)
    torch.save(load_file(str(folder / "model.safetensors")), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    out = import_hf(folder, tmp_path / "from-bin")
    want = Translator.from_checkpoint(folders["marian"][1]).translate(SENTENCES[:3], SearchConfig(beam=2))
    got = Translator.from_checkpoint(out).translate(SENTENCES[:3], SearchConfig(beam=2))
    assert [t.target_ids for t in got] == [t.target_ids for t in want]


class _RunsCode:
    def __reduce__(self):
        return (print, ("this ran",))


CASES = [
    ("pickle that runs code", lambda f: (f.joinpath("model.safetensors").unlink(),
                                         f.joinpath("pytorch_model.bin").write_bytes(pickle.dumps({"x": _RunsCode()}))),
     "weights_only|restricted|not a state_dict|Unsupported"),
    ("sizes that do not match the weights", lambda f: _edit_config(f, d_model=24), "shape"),
    ("an unsupported architecture", lambda f: _edit_config(f, model_type="gpt2"), "model_type='gpt2' is not supported"),
    ("code named by the folder", lambda f: _edit_config(f, auto_map={"AutoModel": "x.Model"}), "auto_map"),
    ("absurd sizes", lambda f: _edit_config(f, d_model=10**9), "d_model='1000000000' must be"),
    ("heads that do not divide the width", lambda f: _edit_config(f, decoder_attention_heads=3), "does not divide"),
    ("missing tokenizer files", lambda f: f.joinpath("source.spm").unlink(), "missing tokenizer file.*source.spm"),
    ("no weights", lambda f: f.joinpath("model.safetensors").unlink(), "no model.safetensors or pytorch_model.bin"),
    ("a config that is not JSON", lambda f: f.joinpath("config.json").write_bytes(b"\xff\xfe{"), "not UTF-8"),
    ("a sampling default", lambda f: fx._generation(f, do_sample=True), "do_sample=True is not supported"),
    ("n-gram blocking", lambda f: fx._generation(f, no_repeat_ngram_size=3), "no_repeat_ngram_size=3"),
    ("a damaged weights file", lambda f: f.joinpath("model.safetensors").write_bytes(b"\x08" + b"\0" * 15),
     "not a readable safetensors"),
]


@pytest.mark.parametrize("change,message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_folders_are_refused_in_one_line_before_anything_is_written(folders, tmp_path, capsys, change, message):
    folder = _copy(folders, tmp_path)
    change(folder)
    out = tmp_path / "out"
    assert checkpoint_main(["import-hf", str(folder), str(out)]) == 2
    err = capsys.readouterr()
    assert len(err.err.strip().splitlines()) == 1 and err.err.startswith("error: ")
    assert re.search(message, err.err), err.err
    assert "this ran" not in err.out
    assert not out.exists()


def test_without_the_extra_the_import_names_the_install_line(folders, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers now raises ImportError
    assert checkpoint_main(["import-hf", str(folders["marian"][0]), str(tmp_path / "out")]) == 2
    assert 'pip install -e ".[hf]"' in capsys.readouterr().err
    with pytest.raises(CheckpointError, match=r"\[hf\]"):
        load_model(folders["marian"][1])


def test_an_imported_folder_edited_afterwards_is_refused_at_load(folders, tmp_path):
    target = tmp_path / "edited"
    shutil.copytree(folders["marian"][1], target)
    fx._generation(target / "hf", num_beams=7)
    with pytest.raises(CheckpointError, match="import the model again"):
        load_model(target)


def test_the_sentence_space_stands_for_a_sentence_with_its_mean_encoder_output(folders):
    from model.decoding.sentence_space import sentence_vector_kind

    translator = Translator.from_checkpoint(folders["t5"][1])
    assert sentence_vector_kind(translator.model) == "mean"
    src = translator.source_ids(SENTENCES[0])[0]
    memory = translator.model.encode(torch.tensor([src]), torch.tensor([len(src)]))
    assert memory.summary.shape == (1, 20)  # d_model
