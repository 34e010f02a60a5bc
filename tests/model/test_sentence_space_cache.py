"""Sentence spaces on disk (model/decoding/sentence_space_cache.py), the command line reading
them, and the server building them in the background without holding up a translation."""
from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from model.decoding import sentence_space_cache as cache_module
from model.decoding.sentence_space import build_space
from model.decoding.sentence_space_cache import SpaceCache
from model.decoding.translator import Translator

REPO = Path(__file__).resolve().parents[2]
SENTENCES = ["a dog runs in the park", "the small cat sits", "a man eats a red ball", "child plays on the street",
             "a woman sits in the park", "the big dog eats"]


@pytest.fixture(scope="module")
def spaces(tiny_checkpoints):
    return {arch: build_space(Translator.from_checkpoint(path), SENTENCES, size=5, word_size=3)
            for arch, path in tiny_checkpoints.items()}


def same(a, b) -> bool:
    words_same = (a.words is None) == (b.words is None) and (a.words is None or (
        np.array_equal(a.words.vectors, b.words.vectors) and np.array_equal(a.words.sentence, b.words.sentence)
        and a.words.pieces == b.words.pieces))
    return (a.kind == b.kind and a.sentences == b.sentences and words_same
            and all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("vectors", "mean", "axes", "points")))


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_a_kept_space_reads_back_as_it_was(arch, spaces, tmp_path):
    cache, key = SpaceCache(tmp_path), "a" * 64
    assert cache.load(key) is None
    cache.save(key, spaces[arch])
    assert same(cache.load(key), spaces[arch])
    assert (spaces[arch].words is not None) == (arch == "rnnsearch")
    assert [p.name for p in tmp_path.iterdir()] == [f"{key}.npz"]  # no temporary file left behind


def test_the_key_follows_the_checkpoints_content_and_the_sample(tiny_checkpoints, tmp_path):
    folder = shutil.copytree(tiny_checkpoints["rnnsearch"], tmp_path / "model")
    key = SpaceCache.key(folder, 5, 3)
    assert SpaceCache.key(folder, 5, 3) == key and SpaceCache.key(folder, 7, 3) != key
    assert SpaceCache.key(folder, 5, 0) != key and SpaceCache.key(folder, 5, 3, seed=1) != key
    config = folder / "config.json"
    config.write_text(config.read_text() + " ")  # same size or not, the content changed
    assert SpaceCache.key(folder, 5, 3) != key


@pytest.mark.parametrize("damage", ["torn", "empty", "other format", "other key", "not npz"])
def test_an_unusable_file_is_noted_and_rebuilt(damage, spaces, tmp_path, monkeypatch):
    notes = []
    cache, key = SpaceCache(tmp_path, notes=notes.append), "b" * 64
    path = cache.save(key, spaces["rnnsearch"])
    if damage == "torn":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "other format":
        monkeypatch.setattr(cache_module, "FORMAT", cache_module.FORMAT + 1)
    elif damage == "other key":
        shutil.copy(path, tmp_path / f"{'c' * 64}.npz")
        key = "c" * 64
    else:
        path.write_bytes(b"\x80\x04 a pickle, or anything else")
    assert cache.load(key) is None and len(notes) == 1
    built = []
    found = cache.get_or_build(key, lambda: built.append(1) or spaces["rnnsearch"])
    assert built == [1] and same(found, spaces["rnnsearch"])
    assert same(cache.load(key), spaces["rnnsearch"])  # replaced by a good one


@pytest.mark.parametrize("key", ["../" + "a" * 61, "a" * 63, "A" * 64, "/etc/passwd", "a" * 64 + "/x", ""])
def test_nothing_but_a_key_names_a_file(key, tmp_path):
    with pytest.raises(ValueError, match="not a cache key"):
        SpaceCache(tmp_path).load(key)


def test_a_file_leading_outside_the_folder_is_never_read(spaces, tmp_path):
    outside = tmp_path / "outside"
    SpaceCache(outside).save("d" * 64, spaces["rnnencdec"])
    inside = tmp_path / "cache"
    inside.mkdir()
    (inside / f"{'d' * 64}.npz").symlink_to(outside / f"{'d' * 64}.npz")
    notes = []
    assert SpaceCache(inside, notes=notes.append).load("d" * 64) is None and "not a file of the cache folder" in notes[0]


def test_the_command_keeps_the_space_and_reads_it_the_next_time(tiny_checkpoints, tmp_path, monkeypatch, capsys):
    from model import sentence_space as command

    builds = []
    real = command.build_space
    monkeypatch.setattr(command, "build_space", lambda *a, **k: builds.append(1) or real(*a, **k))
    args = ["--checkpoint", str(tiny_checkpoints["rnnencdec"]), "--text", "a dog runs", "--k", "3", "--json",
            "--cache-dir", str(tmp_path)]
    assert command.main(args) == 0
    first = capsys.readouterr().out
    assert command.main(args) == 0
    assert capsys.readouterr().out == first and builds == [1]
    assert len(list(tmp_path.glob("*.npz"))) == 1
    assert command.main(args + ["--no-cache"]) == 0 and builds == [1, 1]


@pytest.mark.warm_up
def test_warming_at_start_never_holds_up_a_translation(checkpoint_dir, tmp_path, monkeypatch):
    """The background build (another process) is held mid-way by an event; a translation asked
    for meanwhile finishes; then the build is let go and both spaces land on disk."""
    from model.decoding.search import SearchConfig
    from viz.serving import sentence_space as serving
    from viz.serving.decodes import Request, shared_decode
    from viz.serving.settings import parse_settings

    # checkpoints of their own (no space of theirs is kept in this process yet), and one decode
    # slot: were the build holding it, the translation could not run until it ended
    models = shutil.copytree(checkpoint_dir, tmp_path / "models")
    settings = parse_settings(["--checkpoints", str(models), "--cache-dir", str(tmp_path / "cache"),
                               "--decode-slots", "1"])
    started, release = threading.Event(), threading.Event()
    real = serving.keep_elsewhere

    def held(*args, **kwargs):
        started.set()
        assert release.wait(timeout=120)
        return real(*args, **kwargs)

    monkeypatch.setattr(serving, "keep_elsewhere", held)
    thread = serving.warm_in_background(settings)
    assert serving.warm_in_background(settings) is thread  # once per process and settings
    assert started.wait(timeout=120)
    decoded = []
    translation = threading.Thread(target=lambda: decoded.append(
        shared_decode(Request("rnnsearch-tiny", "a dog runs in the park", SearchConfig(beam=3)), settings)))
    translation.start()
    translation.join(timeout=120)
    finished_first = bool(decoded) and not release.is_set()
    release.set()  # let the build go either way
    translation.join()
    assert finished_first and decoded[0].trace.target_ids  # translated while the space was still being built
    thread.join(timeout=300)
    assert not thread.is_alive() and len(list((tmp_path / "cache").glob("*.npz"))) == 2  # both models' spaces kept


@pytest.mark.warm_up
@pytest.mark.parametrize("flags", [["--no-warm"], ["--no-cache"]])
def test_no_warming_when_asked_not_to(flags, checkpoint_dir):
    from viz.serving import sentence_space as serving
    from viz.serving.settings import parse_settings

    assert serving.warm_in_background(parse_settings(["--checkpoints", str(checkpoint_dir), *flags])) is None


def test_the_command_keeps_a_space_without_placing_a_sentence(tiny_checkpoints, tmp_path, capsys):
    from model import sentence_space as command

    assert command.main(["--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--cache-dir", str(tmp_path),
                         "--keep-only"]) == 0
    assert "kept the space" in capsys.readouterr().out and len(list(tmp_path.glob("*.npz"))) == 1
    with pytest.raises(SystemExit):
        command.main(["--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--keep-only", "--no-cache"])
    with pytest.raises(SystemExit):
        command.main(["--checkpoint", str(tiny_checkpoints["rnnsearch"])])  # neither --text nor --keep-only


@pytest.mark.skipif(os.name != "posix", reason="signal 0 asks whether a process exists on POSIX only")
def test_a_background_build_stops_once_the_server_that_started_it_has(tmp_path):
    """``--stop-with PID``: the watcher ends its process (status 3) when PID exits, and not before."""
    import subprocess
    import sys

    server = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    build = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                              "from model.sentence_space import stop_with\n"
                              f"stop_with({server.pid}, every_s=0.05)\n"
                              "print('watching', flush=True)\n"
                              "sys.stdin.read()"],  # would wait for ever: only the watcher ends it
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert build.stdout.readline().strip() == "watching"
    assert build.poll() is None  # the "server" is alive, so the build goes on
    server.stdin.close()
    server.wait(timeout=60)
    assert build.wait(timeout=60) == 3
    build.stdin.close()


def test_the_app_passes_its_own_process_to_the_build(monkeypatch, tmp_path):
    from viz.serving import sentence_space as serving

    calls = []
    monkeypatch.setattr(serving.subprocess, "run", lambda command, **kw: calls.append(command) or
                        subprocess_done())
    serving.keep_elsewhere(tmp_path / "model", tmp_path / "cache")
    (command,) = calls
    assert command[command.index("--stop-with") + 1] == str(os.getpid()) and "--keep-only" in command


def subprocess_done():
    import subprocess

    return subprocess.CompletedProcess(args=[], returncode=0, stdout="", stderr="")


@pytest.mark.parametrize("failure", [PermissionError(13, "Permission denied"), OSError(28, "No space left on device")])
def test_a_cache_folder_that_cannot_be_written_still_gives_the_space_and_says_why(failure, spaces, tmp_path,
                                                                                  monkeypatch):
    """An unwritable or full cache folder: the space is built and served from memory, the note
    says why, and no half-written file is left in the folder."""
    notes = []
    cache = SpaceCache(tmp_path, notes=notes.append)

    def failing_savez(handle, **arrays):
        handle.write(b"PK\x03\x04 half a file")  # the write fails part way
        raise failure

    monkeypatch.setattr(cache_module.np, "savez", failing_savez)
    found = cache.get_or_build("b" * 64, lambda: spaces["rnnsearch"])
    assert same(found, spaces["rnnsearch"])
    assert len(notes) == 1 and notes[0].startswith(f"could not keep the space in {tmp_path}") and failure.strerror in notes[0]
    assert list(tmp_path.iterdir()) == []  # the temporary file is gone
