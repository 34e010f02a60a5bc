"""Each offered model's sentence space (model/decoding/sentence_space.py), kept for every session
of the server: about 80 MB a model, at most ``MAX_SPACES`` at once. A space belongs to the
checkpoint's files as they were when it was built: a checkpoint replaced in its folder gets a
new space.

Spaces are also kept on disk (model/decoding/sentence_space_cache.py, ``--cache-dir``), so a
restarted server reads them instead of encoding again; and ``warm_in_background`` makes the
default pair's spaces ready from the server's start on (``viz/pages/start.py`` calls it once the
landing page is warm; ``viz/pages/main.py`` too, for a server started without ``app.py``),
building them in a process of the lowest priority that takes no decode slot, so that no
translation waits for it."""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, ContextManager, Optional

from model.decoding.sentence_space import (SAMPLE, WORD_SAMPLE, SentenceSpace, SharedParts, SpaceError, build_space,
                                           shared_parts, training_sentences)
from model.decoding.sentence_space_cache import SpaceCache, default_cache_dir
from model.decoding.translator import Translator
from viz.serving.decodes import load_translator
from viz.serving.hosting import resolve_checkpoint
from viz.serving import offered_models
from model.core.errors import UserError
from viz.serving.settings import REPO, AppSettings
from viz.serving.shared_cache import shared

MAX_SPACES = 4  # models whose spaces a server keeps (least recently used goes)


def checkpoint_stamp(folder: Path) -> tuple:
    """What changes when a checkpoint's files change: each file's name, size and modification time."""
    stats = ((p.name, p.stat()) for p in Path(folder).iterdir() if p.is_file())
    return tuple(sorted((name, stat.st_size, stat.st_mtime_ns) for name, stat in stats))


def sentence_space(name: str, settings: AppSettings,
                   admitted: Callable[[], ContextManager] = contextlib.nullcontext) -> SentenceSpace:
    """The space of checkpoint ``name``, from its training corpora (relative paths from the
    repository); SpaceError when they are not on this server. ``admitted()`` is held while the
    space is built (a page's decode slot), not when it is kept already."""
    path = resolve_checkpoint(name, settings)
    return _space(path, checkpoint_stamp(path), name, settings, admitted=admitted)


def space_of_folder(folder: Path, translator: Translator) -> SentenceSpace:
    """The space of the checkpoint in ``folder`` as ``translator`` (loaded from it) reads it, kept
    like the server's (the notebook's ``show("neighbours")``)."""
    path = Path(folder).resolve()
    return _space(path, checkpoint_stamp(path), translator.name, None, translator)


@shared(max_entries=MAX_SPACES, key=lambda path, stamp, *_, **__: (path, stamp))
def _space(path: Path, stamp: tuple, name: str, settings: Optional[AppSettings],
           translator: Optional[Translator] = None,
           admitted: Callable[[], ContextManager] = contextlib.nullcontext) -> SentenceSpace:
    """Read from the disk cache, else built from ``translator`` when given (else the server's
    Translator for ``name``) holding ``admitted()`` (not part of the key), and kept there."""
    folder = default_cache_dir() if settings is None else settings.cache_dir

    def build() -> SentenceSpace:
        with admitted():
            model = translator if translator is not None else load_translator(name, settings)
            return build_space(model, training_sentences(path, REPO))

    if folder is None:
        return build()
    cache = SpaceCache(folder, notes=_log.warning)
    return cache.get_or_build(SpaceCache.key(path, SAMPLE, WORD_SAMPLE), build)


_log = logging.getLogger(__name__)
_warming: dict = {}
_warming_lock = threading.Lock()


def warm_in_background(settings: AppSettings) -> Optional[threading.Thread]:
    """Once per process and settings: a daemon thread that makes the default pair's spaces ready
    (the models the Sentence space page opens with). Each space missing from the disk cache is
    built by ``python -m model.sentence_space --keep-only`` in a process of the lowest priority
    (a thread of this one would hold the interpreter's lock and slow every page), then read into
    memory. None when ``settings.warm`` is off or there is no disk cache."""
    if not settings.warm or settings.cache_dir is None:
        return None
    with _warming_lock:
        if settings not in _warming:
            thread = threading.Thread(target=_warm, args=(settings,), name="warm sentence spaces", daemon=True)
            _warming[settings] = thread
            thread.start()
        return _warming[settings]


def _warm(settings: AppSettings) -> None:
    models = offered_models.offered(settings)
    for name in list(dict.fromkeys(offered_models.default_pair(models))) if models else []:
        try:
            path = resolve_checkpoint(name, settings)
            if not SpaceCache(settings.cache_dir).path(SpaceCache.key(path, SAMPLE, WORD_SAMPLE)).is_file():
                keep_elsewhere(path, settings.cache_dir)
            sentence_space(name, settings)  # read once from the disk cache (built here if that file is unusable)
        except (SpaceError, UserError, OSError) as exc:  # no corpora here, a checkpoint that does not load
            _log.info("no sentence space for %s at start: %s", name, exc)


def keep_elsewhere(checkpoint: Path, cache_dir: Path) -> None:
    """Build the checkpoint's space into ``cache_dir`` in another process, at the lowest priority,
    which stops when this one does; returns when it is done (its failure is logged: the space is
    then built on first use)."""
    lowest = ["nice", "-n", "19"] if shutil.which("nice") else []  # every other process comes first
    done = subprocess.run([*lowest, sys.executable, "-m", "model.sentence_space", "--checkpoint", str(checkpoint),
                           "--cache-dir", str(cache_dir), "--keep-only",
                           "--stop-with", str(os.getpid())], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        _log.warning("building the sentence space of %s failed: %s", checkpoint.name, done.stderr[-500:])


MEASURED_SENTENCES = 1_000  # test sentences the page measures what the vector keeps on


def what_it_keeps(name: str, test: tuple[str, ...], settings: AppSettings) -> list[SharedParts]:
    """``shared_parts`` of the model's space for the first ``MEASURED_SENTENCES`` of ``test``,
    once per server for the same checkpoint files and sentences."""
    path = resolve_checkpoint(name, settings)
    return _kept(path, checkpoint_stamp(path), test[:MEASURED_SENTENCES], name, settings)


@shared(max_entries=16, key=lambda path, stamp, test, name, settings: (path, stamp, test))
def _kept(path: Path, stamp: tuple, test: tuple, name: str, settings: AppSettings) -> list[SharedParts]:
    return shared_parts(sentence_space(name, settings), load_translator(name, settings), list(test))
