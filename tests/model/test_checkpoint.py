"""Every bad checkpoint gives one clear CheckpointError; nothing is ever unpickled."""
import json
import pickle
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from model.checkpoints.folder import CheckpointError, load_checkpoint
from model.checkpoints.derived import export
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator


@pytest.fixture
def ckpt(tiny_checkpoints, tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoints["rnnsearch"], folder)
    return folder


def edit_config(folder, **changes):
    config = json.loads((folder / "config.json").read_text())
    for key, value in changes.items():
        section, _, name = key.partition("__")
        if name:
            config[section][name] = value
        else:
            config[section] = value
    (folder / "config.json").write_text(json.dumps(config))


def test_round_trip_rebuilds_the_model(ckpt):
    model, src_vocab, tgt_vocab, raw = load_checkpoint(ckpt)
    assert raw["format_version"] == 1 and model.config.arch == "rnnsearch"
    assert len(src_vocab) == model.config.src_vocab_size and not model.training


def test_fp16_export_translates_the_same(ckpt, tmp_path):
    small = export(ckpt, tmp_path / "fp16")
    assert (small / "model.safetensors").stat().st_size < 0.6 * (ckpt / "model.safetensors").stat().st_size
    assert all(t.dtype == torch.float16 for t in load_file(small / "model.safetensors").values())
    sentences = ["a dog runs in the park", "the small cat eats"]
    cfg = SearchConfig(beam=3, trace=False)
    full = [t.translation for t in Translator.from_checkpoint(ckpt).translate(sentences, cfg)]
    half = [t.translation for t in Translator.from_checkpoint(small).translate(sentences, cfg)]
    assert full == half


@pytest.mark.parametrize("missing", ["config.json", "model.safetensors", "src.spm.model", "tgt.spm.model"])
def test_missing_files(ckpt, missing):
    (ckpt / missing).unlink()
    with pytest.raises(CheckpointError, match=f"{missing}: missing"):
        load_checkpoint(ckpt)


def test_not_a_folder(tmp_path):
    with pytest.raises(CheckpointError, match="not a checkpoint folder"):
        load_checkpoint(tmp_path / "nowhere")


@pytest.mark.parametrize("changes,message", [
    ({"format_version": 99}, "unknown format_version 99"),
    ({"format": "something-else"}, "not a bahdanau-nmt-checkpoint"),
    ({"model__hidden": 10**9}, "hidden=1000000000 is outside"),
    ({"model__src_vocab_size": 150000, "model__hidden": 8000}, "parameters, more than"),
    ({"model__arch": "lstm"}, "arch must be one of"),
    ({"model__arch": "transformer"}, "tensor names do not match the config"),
    ({"model__surprise": 1}, "unknown ModelConfig field"),
    ({"model__hidden": "big"}, "hidden must be a int"),
])
def test_bad_configs_are_refused_before_allocating(ckpt, changes, message):
    edit_config(ckpt, **changes)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(ckpt)


def test_config_not_json(ckpt):
    (ckpt / "config.json").write_bytes(b"\x80\x04 not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_checkpoint(ckpt)


def test_wrong_tensor_shape_and_names(ckpt):
    tensors = load_file(ckpt / "model.safetensors")
    tensors["decoder.W_s.weight"] = torch.zeros(3, 5)
    save_file(tensors, ckpt / "model.safetensors")
    with pytest.raises(CheckpointError, match=r"decoder\.W_s\.weight has shape \(3, 5\)"):
        load_checkpoint(ckpt)
    tensors.pop("decoder.W_s.weight")
    save_file(tensors, ckpt / "model.safetensors")
    with pytest.raises(CheckpointError, match="tensor names do not match"):
        load_checkpoint(ckpt)


def test_nan_weights(ckpt):
    tensors = load_file(ckpt / "model.safetensors")
    tensors["decoder.W_o.bias"][3] = float("nan")
    save_file(tensors, ckpt / "model.safetensors")
    with pytest.raises(CheckpointError, match=r"decoder\.W_o\.bias contains NaN"):
        load_checkpoint(ckpt)


def test_truncated_weights(ckpt):
    data = (ckpt / "model.safetensors").read_bytes()
    (ckpt / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="not a readable safetensors file"):
        load_checkpoint(ckpt)


class Boom:
    def __reduce__(self):
        return (exec, ("raise SystemExit('unpickled!')",))


def test_pickle_renamed_to_safetensors_is_never_unpickled(ckpt):
    (ckpt / "model.safetensors").write_bytes(pickle.dumps({"weights": Boom()}))
    with pytest.raises(CheckpointError, match="not a readable safetensors file"):
        load_checkpoint(ckpt)
    torch.save({"w": torch.zeros(2)}, ckpt / "model.safetensors")  # a torch zip-pickle
    with pytest.raises(CheckpointError, match="not a readable safetensors file"):
        load_checkpoint(ckpt)


def test_tokenizer_that_does_not_match_vocab_size(ckpt):
    edit_config(ckpt, model__tgt_vocab_size=load_checkpoint(ckpt)[0].config.tgt_vocab_size + 1)
    with pytest.raises(CheckpointError, match=r"tgt\.spm\.model: has \d+ pieces but config.json says"):
        load_checkpoint(ckpt)
    (ckpt / "src.spm.model").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match=r"src\.spm\.model: not a SentencePiece model"):
        load_checkpoint(ckpt)


def _shifted_copy(src, dst, shift: float):
    """``src`` with every weight plus ``shift`` (same config and vocabularies)."""
    from model.checkpoints.folder import load_checkpoint, save_checkpoint

    model, src_vocab, tgt_vocab, _ = load_checkpoint(src)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(shift)
    return save_checkpoint(dst, model, src_vocab, tgt_vocab)


def test_averaging_a_checkpoint_with_itself_is_the_identity(tiny_checkpoints, tmp_path):
    from model.checkpoints.derived import average

    src = tiny_checkpoints["rnnsearch"]
    out = average([src, src, src], tmp_path / "avg")
    original, averaged = load_file(src / "model.safetensors"), load_file(out / "model.safetensors")
    assert original.keys() == averaged.keys()
    for name in original:
        torch.testing.assert_close(averaged[name], original[name], atol=0, rtol=0)


def test_the_average_of_two_is_their_mean_tensor_by_tensor(tiny_checkpoints, tmp_path):
    from model.checkpoint import main

    a = _shifted_copy(tiny_checkpoints["rnnsearch"], tmp_path / "a", 0.25)
    b = _shifted_copy(tiny_checkpoints["rnnsearch"], tmp_path / "b", -0.75)
    assert main(["average", str(tmp_path / "mean"), str(a), str(b)]) == 0
    wa, wb = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    mean = load_file(tmp_path / "mean" / "model.safetensors")
    for name in wa:
        torch.testing.assert_close(mean[name], (wa[name] + wb[name]) / 2, atol=1e-6, rtol=1e-6)
    assert not torch.equal(mean[name], wa[name])


def test_averaging_refuses_mismatched_configs(tiny_checkpoints, tmp_path, capsys):
    from model.checkpoint import main

    args = ["average", str(tmp_path / "out"), str(tiny_checkpoints["rnnsearch"]), str(tiny_checkpoints["rnnencdec"])]
    assert main(args) == 2
    assert "model config differs" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_every_kind_of_folder_is_written_the_one_way(tmp_path):
    """model/checkpoints/folder.py · write_folder: the format's name and version first, the
    weights apart from each other (a tied pair too), the card when given."""
    import json

    import torch
    from safetensors.torch import load_file

    from model.checkpoints.folder import CARD, CONFIG, FORMAT, FORMAT_VERSION, WEIGHTS, write_folder

    shared = torch.arange(6.0).view(2, 3)
    out = write_folder(tmp_path / "f", {"family": "x", "train": None}, {"name": "f"},
                       {"a": shared, "b": shared}, torch.float16)  # one tensor under two names
    config = json.loads((out / CONFIG).read_text(encoding="utf-8"))
    assert list(config)[:2] == ["format", "format_version"] and (config["format"], config["format_version"]) == (
        FORMAT, FORMAT_VERSION) and config["family"] == "x"
    weights = load_file(str(out / WEIGHTS))
    assert weights["a"].dtype == torch.float16 and torch.equal(weights["a"].float(), shared)
    assert json.loads((out / CARD).read_text(encoding="utf-8")) == {"name": "f"}
    assert not (out / (WEIGHTS + ".tmp")).exists()
    bare = write_folder(tmp_path / "g", {"family": "y"})
    assert not (bare / WEIGHTS).exists() and not (bare / CARD).exists()
