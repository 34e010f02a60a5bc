"""Odd command-line input: one clear ``error:`` line, a non-zero exit and never a traceback.

Each case runs the command's ``main`` as ``python -m`` would (argument list, stdin bytes, exit
status, stdout and stderr), in this process: an exception escaping ``main`` is written out as the
traceback Python would print, so it fails the case. One case runs a real subprocess, the path a
user's shell takes.
"""
import importlib
import io
import os
import re
import subprocess
import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from model.decoding.translator import MAX_STDIN_BYTES

REPO = Path(__file__).resolve().parents[2]
# "error: ..." from our mains, "python -m model.x: error: ..." from argparse
ERROR_LINE = re.compile(r"^(python -m [\w.]+: )?error: ")


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: bytes
    stderr: bytes


def run_cli(module: str, *args, stdin: bytes = b"") -> Ran:
    """``python -m module args < stdin``, in this process (a command's start-up costs seconds)."""
    out, err = io.BytesIO(), io.BytesIO()
    out_text = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    err_text = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    real_stdin, threads = sys.stdin, torch.get_num_threads()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with redirect_stdout(out_text), redirect_stderr(err_text):
            try:
                code = importlib.import_module(module).main([str(a) for a in args])
            except SystemExit as exc:  # argparse, or a main that exits
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception:  # what Python would print for an exception escaping main
                traceback.print_exc()
                code = 1
    finally:
        sys.stdin = real_stdin
        torch.set_num_threads(threads)
    return Ran(code, out.getvalue(), err.getvalue())


def assert_clear_error(result: Ran | subprocess.CompletedProcess, expected: str) -> None:
    err = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert result.returncode != 0, err
    errors = [line for line in err.splitlines() if ERROR_LINE.match(line)]
    assert len(errors) == 1 and expected in errors[0], err


def test_a_real_subprocess_ends_with_one_error_line(tiny_checkpoints):
    result = subprocess.run([sys.executable, "-m", "model.translate", "--checkpoint", str(tiny_checkpoints["rnnsearch"])],
                            input=b"a dog\x00 runs\n", capture_output=True, cwd=REPO,
                            env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=180)  # a hang fails the test
    assert_clear_error(result, "stdin: contains NUL bytes")
    assert result.returncode == 2 and result.stdout == b""


TRANSLATE_STDIN = {
    "NUL byte": (b"a dog\x00 runs\n", "stdin: contains NUL bytes"),
    "Latin-1 text": ("caf\u00e9 au lait\n".encode("latin-1"), "stdin: not valid UTF-8 (line 1"),
    "encoded lone surrogate": (b"a dog\n\xed\xa0\x80 runs\n", "stdin: not valid UTF-8 (line 2"),
    "over the size cap": (b"a dog runs\n" * (MAX_STDIN_BYTES // 11 + 1), "stdin: more than 64 MiB"),
}


@pytest.mark.parametrize("case", list(TRANSLATE_STDIN))
def test_translate_refuses_binary_stdin(tiny_checkpoints, case):
    stdin, expected = TRANSLATE_STDIN[case]
    result = run_cli("model.translate", "--checkpoint", tiny_checkpoints["rnnsearch"], stdin=stdin)
    assert_clear_error(result, expected)
    assert result.stdout == b""  # nothing half-translated


TRAIN_CONFIGS = {  # config file content (None: no file) -> what the error line says
    "unknown section": ('{"modle": {"arch": "rnnencdec"}}', "unknown section(s) 'modle'; use model and train"),
    "not JSON": ("model.arch = rnnencdec", "not valid JSON"),
    "a JSON list": ('[{"model": {}}]', "expected a JSON object"),
    "section not an object": ('{"train": 3}', "section 'train' must be a JSON object, got int"),
    "unknown field": ('{"model": {"archh": "rnnencdec"}}', "unknown ModelConfig field(s): archh"),
    "missing file": (None, "config.json: missing"),
}


@pytest.mark.parametrize("case", list(TRAIN_CONFIGS))
def test_train_refuses_bad_config_files(tmp_path, case):
    content, expected = TRAIN_CONFIGS[case]
    path = tmp_path / "config.json"
    if content is not None:
        path.write_text(content)
    # a data folder that does not exist: should the config be accepted by mistake, no training starts
    result = run_cli("model.train", "--preset", "tiny", "--config", path, "--set", f"train.data_dir={tmp_path / 'none'}")
    assert_clear_error(result, expected)


def test_train_refuses_an_unknown_preset_at_once():
    result = run_cli("model.train", "--preset", "paperr")
    assert_clear_error(result, "argument --preset: invalid choice: 'paperr'")


@pytest.mark.parametrize("argv,expected", [
    (["--set", "a=1", "--set", "b=2"], ["a=1", "b=2"]),
    (["--set", "a=1", "b=2", "--set", "c=3"], ["a=1", "b=2", "c=3"]),
    ([], []),
])
def test_train_repeated_set_accumulates(argv, expected):
    from model.train import build_parser

    assert build_parser().parse_args(argv).set == expected


def test_every_repeated_set_reaches_the_config():
    from model.train import build_parser, config_from_args

    args = build_parser().parse_args(["--preset", "tiny", "--set", "train.epochs=3", "--set", "model.hidden=5",
                                      "train.seed=7", "--set", "train.epochs=9"])
    cfg = config_from_args(args)
    assert (cfg.train.epochs, cfg.model.hidden, cfg.train.seed) == (9, 5, 7)  # the later --set wins


EVALUATE_ARGS = {  # extra arguments -> what the error line says
    "bucket width 0": (["--bucket-width", "0"], "argument --bucket-width: must be at least 1, got 0"),
    "negative bucket width": (["--bucket-width", "-3"], "argument --bucket-width: must be at least 1, got -3"),
    "beam above the maximum": (["--beam", "17"], "argument --beam: must be 1..16, got 17"),
    "max lines 0": (["--max-lines", "0"], "argument --max-lines: must be at least 1, got 0"),
    "join 0": (["--join", "0"], "argument --join: must be at least 1, got 0"),
    "join more lines than there are": (["--join", "5"], "test.en: 4 line(s), fewer than the 5 to join"),
}


@pytest.mark.parametrize("case", list(EVALUATE_ARGS))
def test_evaluate_refuses_bad_numbers(tiny_checkpoints, tmp_path, case):
    args, expected = EVALUATE_ARGS[case]
    (tmp_path / "test.en").write_text("a dog runs\nthe cat sits\na red ball\nthe man eats\n")
    (tmp_path / "test.fr").write_text("un chien court\nle chat assis\nune balle rouge\nl'homme mange\n")
    result = run_cli("model.evaluate", "--src", tmp_path / "test.en", "--ref", tmp_path / "test.fr",
                     "--checkpoint", tiny_checkpoints["rnnencdec"], "--out", tmp_path / "report", *args)
    assert_clear_error(result, expected)
    assert not (tmp_path / "report").exists()  # refused before anything was written


TRANSLATE_ARGS = {
    "batch size 0": (["--batch-size", "0"], "argument --batch-size: must be at least 1, got 0"),  # gave blank output
    "negative threads": (["--threads", "-1"], "argument --threads: must be at least 0, got -1"),
    "beam 0": (["--beam", "0"], "argument --beam: must be 1..16, got 0"),
}


@pytest.mark.parametrize("case", list(TRANSLATE_ARGS))
def test_translate_refuses_bad_numbers(tiny_checkpoints, case):
    args, expected = TRANSLATE_ARGS[case]
    result = run_cli("model.translate", "--checkpoint", tiny_checkpoints["rnnsearch"], *args, stdin=b"a dog runs\n")
    assert_clear_error(result, expected)


@pytest.mark.parametrize("lo,hi,text,expected", [
    (1, None, "1", 1),
    (1, None, "100000", 100000),
    (0, None, "0", 0),
    (1, 16, "16", 16),
    (1, 16, "17", "must be 1..16, got 17"),
    (1, None, "0", "must be at least 1, got 0"),
    (1, None, "2.5", "expected a whole number at least 1, got '2.5'"),
    (1, None, "", "expected a whole number at least 1, got ''"),
])
def test_int_range(lo, hi, text, expected):
    import argparse

    from model.argtypes import int_range

    if isinstance(expected, int):
        assert int_range(lo, hi)(text) == expected
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(expected)):
            int_range(lo, hi)(text)


CARD_FOLDERS = {  # files to create under tmp_path, the folder argument, what the error line says
    "missing folder": ({}, "nope", "nope: not a folder"),
    "a file, not a folder": ({"nope": "x"}, "nope", "nope: not a folder"),
    "no cards": ({"m/config.json": "{}"}, "", "no */card.json with test scores"),
    "malformed card": ({"m/card.json": '{"test_scores": '}, "", "card.json: not valid JSON"),
}


@pytest.mark.parametrize("case", list(CARD_FOLDERS))
def test_model_cards_refuses_folders_without_cards(tmp_path, case):
    files, folder, expected = CARD_FOLDERS[case]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = run_cli("viz.commands.cards", tmp_path / folder)
    assert_clear_error(result, expected)
    assert not (tmp_path / "README.md").exists()


def test_model_cards_help_is_help_not_a_folder():
    result = run_cli("viz.commands.cards", "--help")
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    assert result.stdout.startswith(b"usage: python -m viz.commands.cards [-h] [--results FILE] [folder]")
    assert not (REPO / "--help").exists()
