"""Typed text of every awkward kind: the page stays up, says where input was cut, escapes markup."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")

CASES = {
    "empty": "",
    "whitespace": " \t  \n ",
    "huge": "a dog runs in the park. " * 4200,  # ~100,000 characters
    "long word": "x" * 5000,
    "control characters": "a dog\x07\x1b[31m runs\x0c in the park",
    "nul bytes": "a dog\x00 runs\x00",
    "emoji": "a dog 🐶 runs in the 🌳 park 👍🏽",
    "right to left": "a dog runs שלום עולם مرحبا",
    "script": "<script>alert(1)</script> a dog",
    "img": '<img src=x onerror="alert(1)"> the cat',
}


@pytest.fixture(scope="module")
def at(checkpoint_dir):
    import os

    os.environ["NMT_CHECKPOINTS"] = str(checkpoint_dir)
    return AppTest.from_file(APP, default_timeout=120).run()


@pytest.mark.parametrize("name", list(CASES))
def test_page_survives(at, name):
    at.text_area(key="source").input(CASES[name]).run()
    assert not at.exception, at.exception
    if not CASES[name].strip():
        assert "Type an English sentence" in at.info[0].value
        return
    assert len(at.text) >= 2  # both models produced output
    if len(CASES[name]) > 2000:
        assert any("only the first 2,000" in w.value for w in at.warning)
    for block in at.markdown:
        assert "<script" not in block.value and "<img" not in block.value
