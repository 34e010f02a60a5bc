"""Typed text of every awkward kind: the page stays up, says where input was cut, escapes markup."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ..conftest import start_app

APP = str(Path(__file__).resolve().parents[2] / "viz" / "pages" / "main.py")

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
    with pytest.MonkeyPatch.context() as patch:  # module-scoped monkeypatch: undone after this file
        start_app(patch, "--checkpoints", checkpoint_dir)
        yield AppTest.from_file(APP, default_timeout=120).run()


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


@pytest.mark.parametrize("raw,cleaned,dropped", [
    ("a dog\x00 runs\x00", "a dog runs", 2),  # NUL dropped
    ("a \ud800dog\udfff", "a dog", 2),  # lone surrogates dropped
    ("\ud83d\udc36 dog", " dog", 2),  # a surrogate pair written as two code units is two lone surrogates
    ("line\nbreaks\r\nand\u2028separators", "line breaks  and separators", 0),
    ("zero\u200bwidth\u00adsoft hyphen", "zerowidthsoft hyphen", 2),  # format characters dropped
    ("bell\x07 escape\x1b[31m", "bell escape[31m", 2),
    ("tab\tkept, caf\u00e9, \U0001f436, \u05e9\u05dc\u05d5\u05dd", "tab\tkept, caf\u00e9, \U0001f436, \u05e9\u05dc\u05d5\u05dd", 0),
])
def test_cut_input_lets_only_encodable_text_through_and_says_what_it_removed(raw, cleaned, dropped):
    """A browser cannot send a lone surrogate (widget values travel as UTF-8 protobuf, and AppTest
    refuses one the same way), so this checks the guard itself, for text from any other source."""
    from viz.pages.parts.safe_text import cut_input

    text, message = cut_input(raw)
    assert text == cleaned
    text.encode("utf-8")  # a lone surrogate would raise here, as it does in SentencePiece
    if dropped:
        assert message.startswith(f"{dropped} control or invisible characters")
    else:
        assert message is None


def test_typed_nul_bytes_are_reported_next_to_the_translation(at):
    at.text_area(key="source").input("a dog\x00 runs\x00 in the park").run()
    assert not at.exception, at.exception
    assert any("2 control or invisible characters (such as NUL) were removed" in w.value for w in at.warning)
