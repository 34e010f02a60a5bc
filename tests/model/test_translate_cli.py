import io
import json

import pytest

from model.decoding.trace import TRACE_SCHEMA_VERSION
from model.translate import main

KEYS = {"schema", "model", "alignment_model", "origin", "source", "source_tokens", "source_ids", "target_tokens",
        "target_ids", "translation", "score", "logprob",
        "step_logprobs", "attention", "energies", "topk", "beam", "truncated"}


def run(monkeypatch, capsys, text, *args):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))  # main reads its bytes
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_one_line_per_input_in_order_blank_lines_kept(tiny_checkpoints, monkeypatch, capsys, arch):
    code, out, _ = run(monkeypatch, capsys, "a dog runs\n\nthe cat sits\n", "--checkpoint",
                       str(tiny_checkpoints[arch]), "--beam", "3")
    lines = out.split("\n")[:-1]
    assert code == 0 and len(lines) == 3 and lines[1] == ""
    assert "chien" in lines[0] and "court" in lines[0]


def test_json_traces_follow_the_schema(tiny_checkpoints, monkeypatch, capsys):
    code, out, _ = run(monkeypatch, capsys, "a dog runs\n\n", "--checkpoint",
                       str(tiny_checkpoints["rnnsearch"]), "--json")
    first, blank = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and set(first) == KEYS and first["schema"] == TRACE_SCHEMA_VERSION
    assert len(first["attention"]) == len(first["target_tokens"]) == len(first["topk"])
    assert all(abs(sum(row) - 1) < 1e-4 for row in first["attention"])
    assert {n["status"] for n in first["beam"]} <= {"kept", "pruned", "finished", "best"}
    assert first["beam"][0]["parent"] is None
    assert blank["translation"] == "" and blank["target_tokens"] == []


def test_rnnencdec_json_has_null_attention(tiny_checkpoints, monkeypatch, capsys):
    _, out, _ = run(monkeypatch, capsys, "a dog\n", "--checkpoint", str(tiny_checkpoints["rnnencdec"]), "--json")
    trace = json.loads(out)
    assert trace["attention"] is None and trace["energies"] is None and trace["topk"]


def test_errors_are_clear(tmp_path, tiny_checkpoints, monkeypatch, capsys):
    code, _, err = run(monkeypatch, capsys, "x\n", "--checkpoint", str(tmp_path))
    assert code == 2 and "config.json: missing" in err
    with pytest.raises(SystemExit, match="2"):  # argparse refuses it before the model loads
        run(monkeypatch, capsys, "x\n", "--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--beam", "99")
    assert "argument --beam: must be 1..16, got 99" in capsys.readouterr().err


def test_device_cpu_or_auto_without_cuda_decode_as_before_and_cuda_without_one_is_refused(tiny_checkpoints,
                                                                                          monkeypatch, capsys):
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    checkpoint = str(tiny_checkpoints["rnnsearch"])
    outputs = {device: run(monkeypatch, capsys, "a dog runs\nthe small cat\n", "--checkpoint", checkpoint,
                           *(["--device", device] if device else []))
               for device in ("", "cpu", "auto")}
    assert {code for code, _, _ in outputs.values()} == {0}
    assert outputs["cpu"][1] == outputs["auto"][1] == outputs[""][1]
    code, out, err = run(monkeypatch, capsys, "a dog runs\n", "--checkpoint", checkpoint, "--device", "cuda")
    assert code == 2 and out == "" and "no CUDA device" in err
    with pytest.raises(SystemExit, match="2"):
        run(monkeypatch, capsys, "x\n", "--checkpoint", checkpoint, "--device", "tpu")
    assert "argument --device: invalid choice: 'tpu'" in capsys.readouterr().err


def test_a_transformers_json_trace_carries_every_layer_and_head(tiny_checkpoints, monkeypatch, capsys, tmp_path):
    from tests.model.transformer_fixtures import save_tiny_transformer

    folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t")
    code, out, _ = run(monkeypatch, capsys, "a dog runs\n", "--checkpoint", str(folder), "--json")
    trace = json.loads(out)
    assert code == 0 and set(trace) == KEYS | {"cross_attention", "alignment_layer"} and trace["model"] == "transformer"
    assert trace["alignment_layer"] == 1  # the layer its attention is the heads' mean of: the last of two
    cross = trace["cross_attention"]  # [layer][head][i][j]
    assert len(cross) == 2 and {len(layer) for layer in cross} == {3}
    assert all(len(head) == len(trace["target_tokens"]) and len(head[0]) == len(trace["source_tokens"])
               for layer in cross for head in layer)
    assert all(abs(sum(row) - 1) < 1e-4 for layer in cross for head in layer for row in head)
