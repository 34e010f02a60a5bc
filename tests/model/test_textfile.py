"""The one capped UTF-8 reader: paths, bytes and streams, plain or gzip by content."""
import gzip
import io

import pytest

from model.corpus.textfile import read_text
from model.core.errors import DataError

TEXT = "héllo\nwörld\n"


@pytest.mark.parametrize("make", [
    lambda tmp: tmp / "plain.txt",
    lambda tmp: tmp / "zipped.txt.gz",
    lambda tmp: tmp / "zipped-without-suffix.txt",
], ids=["plain file", "gzip file", "gzip file named .txt"])
def test_files_are_read_by_content_not_by_name(tmp_path, make):
    path = make(tmp_path)
    data = TEXT.encode()
    path.write_bytes(gzip.compress(data) if "zipped" in path.name else data)
    assert read_text(path) == TEXT


@pytest.mark.parametrize("source", [TEXT.encode(), gzip.compress(TEXT.encode(), mtime=0), io.BytesIO(TEXT.encode()),
                                    io.BytesIO(gzip.compress(TEXT.encode()))],
                         ids=["bytes", "gzip bytes", "stream", "gzip stream"])
def test_bytes_and_streams(source):
    assert read_text(source, "upload") == TEXT


def test_a_bom_is_dropped_and_an_empty_source_is_empty_text():
    assert read_text("\ufeffa".encode()) == "a" and read_text(b"") == ""


@pytest.mark.parametrize("raw, limit, message", [
    (b"x" * 11, 10, "more than 10 bytes of text"),
    (gzip.compress(b"x" * 5000, mtime=0), 1000, "more than 1,000 bytes"),
    (b"\x1f\x8b\x08\x00broken", 100, "broken gzip"),
    (b"ok\n\xff", 100, "not valid UTF-8 \\(line 2"),
])
def test_what_cannot_be_read_is_named(raw, limit, message):
    with pytest.raises(DataError, match=f"upload.txt: {message}"):
        read_text(raw, "upload.txt", max_bytes=limit)
