"""What the command lines share: argparse types that refuse a bad number at once, with a usage
line, instead of letting it fail deep inside a run (a ZeroDivisionError after decoding)."""
from __future__ import annotations

import argparse
from typing import Callable, Optional


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
