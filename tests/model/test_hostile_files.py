"""Huge files and gzip bombs: one clear error, and memory stays bounded (peak RSS measured)."""
import subprocess
import sys
import zlib

PROBE = """
import resource, sys

from model.core.errors import DataError
from model.corpus.test_sets import eval_set_from_files
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    eval_set_from_files(sys.argv[1], sys.argv[2], sys.argv[1], sys.argv[2])
    print("loaded")
except DataError as exc:
    print("error:", exc)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""


def probe(src, ref) -> tuple[str, int]:
    """(message, extra peak RSS in MiB while loading) from a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", PROBE, str(src), str(ref)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return out[0], int(out[1])


def test_300_mb_file_is_refused_without_reading_it_all(tmp_path):
    big = tmp_path / "big.en"
    with open(big, "wb") as handle:
        handle.write(b"a dog runs\n" * 1000)
        handle.truncate(300 * 2**20)  # sparse: 300 MB on paper, cheap on disk
    (tmp_path / "ref.fr").write_text("un chien\n")
    message, extra_mib = probe(big, tmp_path / "ref.fr")
    assert message.startswith("error:") and "more than 64 MiB" in message
    assert extra_mib < 150


def test_gzip_bomb_stops_at_the_cap(tmp_path):
    bomb = tmp_path / "bomb.en.gz"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
    with open(bomb, "wb") as handle:
        chunk = b"a" * 2**20
        for _ in range(1024):  # 1 GiB of text in about 1 MB of gzip
            handle.write(compressor.compress(chunk))
        handle.write(compressor.flush())
    assert bomb.stat().st_size < 3 * 2**20
    (tmp_path / "ref.fr").write_text("x\n")
    message, extra_mib = probe(bomb, tmp_path / "ref.fr")
    assert message.startswith("error:") and "more than 64 MiB" in message
    assert extra_mib < 300
