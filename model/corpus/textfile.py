"""Reading user text safely: the project's one capped UTF-8 reader.

Corpora, test sets, uploads and stdin all come through ``read_text``: plain or gzip (told by
its magic bytes, not the file name), never more than ``max_bytes`` of decompressed text (so a
gzip bomb or a huge upload stops early), and valid UTF-8 or a DataError naming the line.
"""
from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import BinaryIO, Union

from model.core.errors import DataError

# Stop reading any single file past this many decompressed bytes (gzip bombs, huge uploads).
MAX_FILE_BYTES = 512 * 2**20
GZIP_MAGIC = b"\x1f\x8b"

Source = Union[str, Path, bytes, BinaryIO]


def read_text(source: Source, name: str = "", max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of a file path, of bytes (an upload) or of a binary stream (stdin).

    Raises DataError for a missing file, a broken gzip stream, NUL bytes or invalid UTF-8
    (a binary or UTF-16 file), or more than ``max_bytes`` of text; ``name`` (default: the
    path) is what the message calls the source.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise DataError("{path}: no such file", path=str(path))
        try:
            with open(path, "rb") as handle:
                return _read(handle, name or str(path), max_bytes)
        except OSError as exc:
            raise DataError("{name}: cannot read ({error})", name=name or str(path), error=str(exc)) from None
    handle = io.BytesIO(source) if isinstance(source, bytes) else source
    return _read(handle, name or "input", max_bytes)


def _read(handle: BinaryIO, name: str, max_bytes: int) -> str:
    head = handle.read(2)
    stream = io.BufferedReader(_Prefixed(head, handle))
    try:
        if head == GZIP_MAGIC:
            with gzip.GzipFile(fileobj=stream) as unzipped:
                raw = unzipped.read(max_bytes + 1)  # stop past the cap: gzip bombs stay bounded
        else:
            raw = stream.read(max_bytes + 1)
    except (OSError, EOFError) as exc:
        raise DataError("{name}: broken gzip file ({error})", name=name, error=str(exc)) from None
    if len(raw) > max_bytes:
        limit = f"{max_bytes // 2**20} MiB" if max_bytes >= 2**20 else f"{max_bytes:,} bytes"
        raise DataError("{name}: more than {limit} of text; refusing to read further", name=name, limit=limit)
    return decode_text(raw, name)


class _Prefixed(io.RawIOBase):
    """A stream that yields ``head`` and then the rest of ``handle`` (so the magic bytes
    can be read first from stdin, which cannot seek)."""

    def __init__(self, head: bytes, handle: BinaryIO):
        self.head, self.handle = head, handle

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n], self.head = self.head[:n], self.head[n:]
            return n
        data = self.handle.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def decode_text(raw: bytes, name: str) -> str:
    """Decode UTF-8 (a BOM is allowed) or raise DataError saying where it failed."""
    if b"\x00" in raw:
        raise DataError("{name}: contains NUL bytes; this looks like a binary or UTF-16 file, not UTF-8 text",
                        name=name)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError("{name}: not valid UTF-8 (line {line}, byte {byte}); save the file as UTF-8",
                        name=name, line=line, byte=exc.start) from None
