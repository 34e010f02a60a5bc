"""Sentence spaces kept on disk, so that a restarted server (or the next command) has them at once.

Building a model's space encodes 20,000 training sentences (about a minute on two cores); a
built space is a few arrays. ``SpaceCache`` keeps each one as a ``.npz`` file (numpy's own
format, read without pickle) named by a key: the SHA-256 of the checkpoint's files (every file
of its folder, names and contents), the sample sizes and seed, and ``FORMAT``. A checkpoint whose
files change gets a new key, so its old file is simply never read again; a file that is corrupt,
of another format or not what its name says is ignored (the caller rebuilds) and replaced.

Where: ``--cache-dir`` (the app and ``python -m model.sentence_space``), by default
``$XDG_CACHE_HOME/inside-attention-nmt/sentence-spaces`` or ``~/.cache/inside-attention-nmt/sentence-spaces``.
A file is 40-100 MB (RNNsearch keeps its words' annotations too), one per checkpoint and sample
size. To clear it, delete the folder.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

if TYPE_CHECKING:  # imported where a space is made: reading the settings (default_cache_dir) needs no torch
    from model.decoding.sentence_space import SentenceSpace

FORMAT = 1  # bump when what a file holds changes: older files are then rebuilt
_KEY = re.compile(r"^[0-9a-f]{64}$")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "inside-attention-nmt" / "sentence-spaces"


def checkpoint_digest(folder: Path) -> str:
    """SHA-256 over the names and contents of the files in a checkpoint folder."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class SpaceCache:
    """A folder of sentence spaces. ``notes`` receives a sentence whenever a file is ignored."""

    folder: Path
    notes: Callable[[str], None] = lambda text: None

    @staticmethod
    def key(checkpoint: Path, size: int, word_size: int, seed: int = 0) -> str:
        settings = json.dumps({"checkpoint": checkpoint_digest(checkpoint), "size": size, "word_size": word_size,
                               "seed": seed, "format": FORMAT}, sort_keys=True)
        return hashlib.sha256(settings.encode()).hexdigest()

    def path(self, key: str) -> Path:
        """The file for ``key``, always directly inside the folder (ValueError for anything but a key)."""
        if not _KEY.match(key):
            raise ValueError(f"not a cache key: {key[:80]!r}")
        return Path(self.folder) / f"{key}.npz"

    def load(self, key: str) -> Optional[SentenceSpace]:
        """The space stored under ``key``, or None when there is none or it cannot be used."""
        path = self.path(key)
        if not path.is_file():
            return None
        if path.is_symlink() or path.resolve().parent != Path(self.folder).resolve():
            self.notes(f"ignored {path.name}: not a file of the cache folder")
            return None
        try:
            with np.load(path, allow_pickle=False) as found:
                return _space_of(found, key)
        except Exception as exc:  # a torn or foreign file: rebuilt, never trusted
            self.notes(f"ignored {path.name} ({type(exc).__name__}: {str(exc)[:120]}); building the space again")
            return None

    def save(self, key: str, space: SentenceSpace) -> Path:
        """Write ``space`` under ``key`` (a temporary file, then renamed: readers never see half a file)."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {"format": np.array(FORMAT), "key": np.array(key), "kind": np.array(space.kind),
                  "sentences": _text_array(space.sentences), "vectors": space.vectors, "mean": space.mean,
                  "axes": space.axes, "points": space.points}
        if space.words is not None:
            arrays.update(word_vectors=space.words.vectors, word_sentence=space.words.sentence,
                          word_pieces=_text_array(space.words.pieces))
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
        try:
            with os.fdopen(handle, "wb") as f:
                np.savez(f, **arrays)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return path

    def get_or_build(self, key: str, build: Callable[[], SentenceSpace]) -> SentenceSpace:
        """The stored space, else ``build()``'s, stored (a folder that cannot be written is noted,
        and the space still returned)."""
        found = self.load(key)
        if found is not None:
            return found
        space = build()
        try:
            self.save(key, space)
        except OSError as exc:
            self.notes(f"could not keep the space in {self.folder}: {exc.strerror or exc}")
        return space


def _text_array(texts) -> np.ndarray:
    """Strings as UTF-8 JSON bytes (numpy's fixed-width strings would pad every one to the longest)."""
    return np.frombuffer(json.dumps(list(texts), ensure_ascii=False).encode(), dtype=np.uint8)


def _texts(array: np.ndarray) -> tuple[str, ...]:
    texts = json.loads(array.tobytes().decode())
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ValueError("text field is not a list of strings")
    return tuple(texts)


def _space_of(found, key: str) -> SentenceSpace:
    from model.decoding.sentence_space import SentenceSpace, WordSpace

    if int(found["format"]) != FORMAT:
        raise ValueError(f"format {int(found['format'])}, this version reads {FORMAT}")
    if str(found["key"]) != key:
        raise ValueError("it holds another key")
    sentences, vectors = _texts(found["sentences"]), found["vectors"]
    words = None
    if "word_vectors" in found.files:
        words = WordSpace(found["word_vectors"], found["word_sentence"], _texts(found["word_pieces"]))
        if len(words.pieces) != words.vectors.shape[0] or words.sentence.max(initial=0) >= len(sentences):
            raise ValueError("word arrays do not match")
    if vectors.ndim != 2 or vectors.shape[0] != len(sentences) or found["points"].shape != (len(sentences), 2):
        raise ValueError("arrays do not match the sentences")
    return SentenceSpace(str(found["kind"]), sentences, vectors, found["mean"], found["axes"], found["points"], words)
