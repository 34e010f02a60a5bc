"""Shared helpers for the benchmark scripts: data (Multi30k or a synthetic stand-in) and timing.

The benchmarks read Multi30k from ``$NMT_SHARED_DATA/multi30k``; ``NMT_SHARED_DATA`` defaults to
``../shared/data`` beside the repository. Point it at the folder holding your ``multi30k``
download (``python -m model.data download-multi30k data/multi30k``: ``NMT_SHARED_DATA=data``).
"""
from __future__ import annotations

import os
import random
import statistics
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("NMT_SHARED_DATA") or REPO.parent / "shared" / "data")
SHARED = SHARED_DATA / "multi30k"
CHECKPOINTS = Path(__file__).resolve().parents[1] / "checkpoints"


def corpus(split: str) -> tuple[list[str], list[str], str]:
    """(english, french, where from): Multi30k when present, else synthetic sentences with
    Multi30k's length distribution (about 13 +- 4 words), so figures stay comparable."""
    from model.corpus.parallel import find_split
    from model.corpus.textfile import read_text

    if SHARED.is_dir():
        return (read_text(find_split(SHARED, split, "en")).splitlines(),
                read_text(find_split(SHARED, split, "fr")).splitlines(), str(SHARED))
    rng = random.Random(0)
    words = "a man woman dog child street red blue small big runs sits plays in on the with".split()
    n = 29000 if split == "train" else 1000
    make = lambda: " ".join(rng.choice(words) for _ in range(max(3, int(rng.gauss(13, 4)))))  # noqa: E731
    src = [make() for _ in range(n)]
    return src, [s.upper() for s in src], "synthetic"


def percentiles(ms: list[float]) -> dict:
    """Median, 90th and 95th percentile (nearest rank) of millisecond timings."""
    if not ms:
        return {}
    ordered = sorted(ms)
    rank = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50_ms": round(statistics.median(ordered), 1), "p90_ms": round(rank(0.9), 1),
            "p95_ms": round(rank(0.95), 1)}
