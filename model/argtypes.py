"""What the command lines share: argparse types that refuse a bad number at once, with a usage
line, instead of letting it fail deep inside a run (a ZeroDivisionError after decoding), and
how a command ends (``run_command``)."""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Callable, Optional

from model.core.errors import UserError


def stop_on_sigterm() -> None:
    """End the command on SIGTERM (a server shutting down, ``kill``) as on an error: Python unwinds,
    so files being written are finished or removed (their ``finally`` blocks run), and the process
    exits with status 143 after one ``stopped:`` line on stderr. Main thread only."""
    def stop(signum, frame):
        print("stopped: SIGTERM", file=sys.stderr, flush=True)
        raise SystemExit(128 + signal.SIGTERM)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


def run_command(work: Callable[[], str]) -> int:
    """A command's exit status: 0 with the closing line ``work`` returns printed, or 2 with a
    user's error (a ``UserError`` or an unreadable or unwritable file) as one ``error:`` line on
    stderr instead of a traceback."""
    try:
        closing = work()
    except (UserError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(closing)
    return 0


def int_range(lo: int, hi: Optional[int] = None) -> Callable[[str], int]:
    """An argparse ``type`` for whole numbers in [lo, hi]; no upper bound when ``hi`` is None."""
    bounds = f"{lo}..{hi}" if hi is not None else f"at least {lo}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number {bounds}, got {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    return parse
