"""Odd command-line input: one clear ``error:`` line, a non-zero exit and never a traceback.

Each case runs the real command in a subprocess (as a user would), so an exception escaping
``main`` shows up as the traceback it would print.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from model.translate import MAX_STDIN_BYTES

REPO = Path(__file__).resolve().parents[2]
# "error: ..." from our mains, "python -m model.x: error: ..." from argparse
ERROR_LINE = re.compile(r"^(python -m [\w.]+: )?error: ")


def run_cli(module: str, *args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], input=stdin, capture_output=True,
                          cwd=REPO, env=env, timeout=180)  # a hang fails the test


def assert_clear_error(result: subprocess.CompletedProcess, expected: str) -> None:
    err = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert result.returncode != 0, err
    errors = [line for line in err.splitlines() if ERROR_LINE.match(line)]
    assert len(errors) == 1 and expected in errors[0], err


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
