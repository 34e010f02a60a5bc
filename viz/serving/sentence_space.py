"""Each offered model's sentence space (model/decoding/sentence_space.py), built on first use and
kept for every session of the server: about 80 MB a model, at most ``MAX_SPACES`` at once. A
space belongs to the checkpoint's files as they were when it was built: a checkpoint replaced
in its folder gets a new space."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Callable, ContextManager, Optional

from model.decoding.sentence_space import SentenceSpace, SharedParts, build_space, shared_parts, training_sentences
from model.decoding.translator import Translator
from viz.serving.decodes import load_translator
from viz.serving.hosting import resolve_checkpoint
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
    """Built from ``translator`` when given, else from the server's Translator for ``name``,
    holding ``admitted()`` (not part of the key)."""
    with admitted():
        translator = translator if translator is not None else load_translator(name, settings)
        return build_space(translator, training_sentences(path, REPO))


MEASURED_SENTENCES = 1_000  # test sentences the page measures what the vector keeps on


def what_it_keeps(name: str, test: tuple[str, ...], settings: AppSettings) -> list[SharedParts]:
    """``shared_parts`` of the model's space for the first ``MEASURED_SENTENCES`` of ``test``,
    once per server for the same checkpoint files and sentences."""
    path = resolve_checkpoint(name, settings)
    return _kept(path, checkpoint_stamp(path), test[:MEASURED_SENTENCES], name, settings)


@shared(max_entries=16, key=lambda path, stamp, test, name, settings: (path, stamp, test))
def _kept(path: Path, stamp: tuple, test: tuple, name: str, settings: AppSettings) -> list[SharedParts]:
    return shared_parts(sentence_space(name, settings), load_translator(name, settings), list(test))
