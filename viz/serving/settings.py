"""The app's settings, typed once: what ``streamlit run app.py -- FLAGS`` asks of this server.

``app.py`` parses its flags with ``parse_settings`` and hands the one ``AppSettings`` value to
the pages, which hand it to the serving functions that need it. Every setting is a flag
(docs/hosting.md lists them); nothing else is read from the environment (the default cache
folder follows $XDG_CACHE_HOME, as every program's does).
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from model.core.errors import UserError
from model.decoding.sentence_space_cache import default_cache_dir

REPO = Path(__file__).resolve().parents[2]
PROG = "streamlit run app.py --"


def default_checkpoint_root() -> Path:
    """The shipped checkpoints: ``checkpoints/`` in the repository (the app's and the notebook
    API's checkpoint root unless told otherwise)."""
    return REPO / "checkpoints"


def default_align_dir() -> Path:
    """``data/alignments`` in the repository, where ``python -m model.align`` commands read gold
    sets from; the Alignment page offers none when it holds none."""
    return REPO / "data" / "alignments"


def default_decode_slots() -> int:
    """One decode per core (each decode runs on one torch thread)."""
    return os.cpu_count() or 1


class SettingsError(UserError):
    """The app's flags could not be read; the message is argparse's usage line and error."""


@dataclass(frozen=True)
class AppSettings:
    """Everything about this server that its flags decide."""

    checkpoints: Path = field(default_factory=default_checkpoint_root)  # the folder of checkpoint folders offered
    production: bool = False  # --production: serving people other than whoever started it
    decode_slots: int = field(default_factory=default_decode_slots)  # decodes run at once; the rest queue
    data_dir: Optional[Path] = None  # test*.en / test*.fr files the Evaluate page offers beside uploads
    align_dir: Path = field(default_factory=default_align_dir)  # gold word alignments (NAME.en, NAME.fr, NAME.wa)
    server_address: str = ""  # Streamlit's server.address ("" when unset): the hosting rules read it
    cache_dir: Optional[Path] = field(default_factory=default_cache_dir)  # sentence spaces on disk; None: none kept
    warm: bool = True  # build the offered models' sentence spaces in the background when the server starts
    lab_slots: int = field(default_factory=default_decode_slots)  # Lab trainings run at once (one core each); the rest queue

    def __post_init__(self):
        if self.decode_slots < 1:
            raise SettingsError(f"decode slots must be at least 1, got {self.decode_slots}")


class _Parser(argparse.ArgumentParser):
    """argparse that raises SettingsError instead of exiting: a Streamlit script thread that
    exits would leave the page hanging instead of showing the error."""

    def error(self, message: str):
        raise SettingsError(f"{self.format_usage()}{self.prog}: error: {message}")


def _slots(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return Path(text).expanduser()


def parser() -> argparse.ArgumentParser:
    """The app's flags (what follows the lone ``--`` of ``streamlit run app.py --``)."""
    p = _Parser(prog=PROG, add_help=False, allow_abbrev=False,
                description="Inside attention NMT: the app's own flags, after streamlit's and a lone --.")
    p.add_argument("--checkpoints", type=_folder, default=None, metavar="DIR",
                   help="the folder of checkpoint folders to offer (default: checkpoints/ in the repository)")
    p.add_argument("--production", action="store_true",
                   help="for a server others can reach: no stack traces, no server paths, no checkpoints "
                        "from outside --checkpoints")
    p.add_argument("--decode-slots", type=_slots, default=None, metavar="N",
                   help="decodes run at once, one core each; the rest queue (default: one per core)")
    p.add_argument("--data-dir", type=_folder, default=None, metavar="DIR",
                   help="a folder of test*.en / test*.fr files the Evaluate page offers beside uploads")
    p.add_argument("--align-dir", type=_folder, default=None, metavar="DIR",
                   help="a folder of gold word alignments (NAME.en, NAME.fr, NAME.wa) the Alignment page offers "
                        "beside uploads (default: data/alignments in the repository)")
    p.add_argument("--cache-dir", type=_folder, default=None, metavar="DIR",
                   help="where sentence spaces are kept between runs (default: ~/.cache/inside-attention-nmt/"
                        "sentence-spaces, or under $XDG_CACHE_HOME)")
    p.add_argument("--no-cache", action="store_true", help="keep no sentence space on disk")
    p.add_argument("--lab-slots", type=_slots, default=None, metavar="N",
                   help="Lab trainings run at once, one core each; the rest queue (default: one per core)")
    p.add_argument("--no-warm", action="store_true",
                   help="do not build the sentence spaces in the background at start (only on first use)")
    return p


def parse_settings(argv: Sequence[str], server_address: str = "") -> AppSettings:
    """The settings ``argv`` (the app's arguments, without the script name) asks for. Arguments
    that are not the app's (ones Streamlit passes through) are ignored; a bad value raises
    SettingsError with argparse's message."""
    args, _ = parser().parse_known_args(list(argv))
    chosen = {name: value for name, value in (("checkpoints", args.checkpoints), ("decode_slots", args.decode_slots),
                                              ("align_dir", args.align_dir), ("cache_dir", args.cache_dir),
                                              ("lab_slots", args.lab_slots))
              if value is not None}
    if args.no_cache:
        chosen["cache_dir"] = None
    return AppSettings(production=args.production, data_dir=args.data_dir, server_address=server_address or "",
                       warm=not args.no_warm, **chosen)


@functools.lru_cache(maxsize=8)
def settings_once(argv: tuple[str, ...], server_address: str = "") -> AppSettings:
    """``parse_settings``, once per process for the same arguments: ``viz/pages/main.py`` runs on
    every rerun of every session, and its flags do not change while the server runs. A bad value
    is not kept: it raises SettingsError on each call."""
    return parse_settings(argv, server_address)


def app_flags() -> tuple[str, ...]:
    """The app's flags as the server was started with them (``streamlit run app.py -- FLAGS``:
    Streamlit leaves them in ``sys.argv`` after the script's name). The only place that reads them."""
    return tuple(sys.argv[1:])
