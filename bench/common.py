"""Shared helpers for the benchmark scripts: data (Multi30k or a synthetic stand-in), timing, and
a local ``streamlit run app.py`` to time.

The benchmarks read Multi30k from ``$NMT_SHARED_DATA/multi30k``; ``NMT_SHARED_DATA`` defaults to
``../shared/data`` beside the repository. Point it at the folder holding your ``multi30k``
download (``python -m model.data download-multi30k data/multi30k``: ``NMT_SHARED_DATA=data``).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from functools import partial
from pathlib import Path
from typing import Callable, Optional, Sequence

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


def seconds(work: Callable[[], object]) -> float:
    """Wall-clock seconds of one call of ``work``."""
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def alternate(ways: dict[str, Callable[[], object]], works: dict[str, Callable[[str], float]],
              rounds: int) -> dict[str, dict[str, float]]:
    """Two or more ways of doing the same works, timed in one process: each round switches to each
    way in turn (``ways[way]()``, in reverse order every other round) and runs every work
    (``works[name](way)`` returns its seconds). This machine's speed drifts by up to 1.5 times
    within an hour, so two processes run apart would measure the drift. Returns
    {work: {way: median seconds}}."""
    times: dict = {way: {name: [] for name in works} for way in ways}
    for r in range(rounds):
        for way in (list(ways) if r % 2 == 0 else list(ways)[::-1]):
            ways[way]()
            for name, work in works.items():
                times[way][name].append(work(way))
    return {name: {way: round(statistics.median(times[way][name]), 3) for way in ways} for name in works}


def alternate_settings(owner: object, attr: str, ways: dict[str, object], works: dict[str, Callable[[str], float]],
                       rounds: int, outputs: dict[str, list]) -> dict:
    """``alternate`` over two ways that each set ``owner.attr`` (a method of a class, say) to a value
    of their own; the first way's is set again after. Each work's row gains "saved", the first
    way's median time against the second's; "batch_outputs_identical" counts how many of the
    outputs the works wrote into ``outputs[way]`` agree between the two ways."""
    first, second = ways
    try:
        found = alternate({way: partial(setattr, owner, attr, value) for way, value in ways.items()}, works, rounds)
    finally:
        setattr(owner, attr, ways[first])
    for row in found.values():
        row["saved"] = f"{1 - row[first] / row[second]:.0%}"
    same = sum(a == b for a, b in zip(outputs[first], outputs[second]))
    return {"seconds": found, "batch_outputs_identical": f"{same} of {len(outputs[first])}"}


def compare_on_models(doc: str, models: Sequence[str], sentences: int, compare: Callable) -> None:
    """The command line of an in-process comparison: ``compare(translator, captions, rounds)`` for
    each shipped checkpoint in ``models`` (or ``--models``, comma-separated, some of them), on the
    first ``--sentences`` test_2016_flickr captions (default ``sentences``), after one warm batch;
    prints one JSON object per model."""
    import torch

    from model.decoding.search import SearchConfig
    from model.decoding.translator import Translator

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--sentences", type=int, default=sentences)
    parser.add_argument("--models", default=",".join(models), help="comma-separated, of: " + ", ".join(models))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    captions, _, origin = corpus("test_2016_flickr")
    for name in args.models.split(","):
        tr = Translator.from_checkpoint(CHECKPOINTS / name)
        tr.translate(captions[:64], SearchConfig(beam=5, trace=False), batch_size=64)  # warm
        print(json.dumps({"model": name, "threads": args.threads, "rounds": args.rounds, "data": origin,
                          **compare(tr, captions[:args.sentences], args.rounds)}), flush=True)


def percentiles(ms: list[float]) -> dict:
    """Median, 90th and 95th percentile (nearest rank) of millisecond timings."""
    if not ms:
        return {}
    ordered = sorted(ms)
    rank = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50_ms": round(statistics.median(ordered), 1), "p90_ms": round(rank(0.9), 1),
            "p95_ms": round(rank(0.95), 1)}


def free_port() -> int:
    """A localhost port that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def streamlit_server(repo: Path, checkpoints: Path, port: int, streamlit_flags: Sequence[str] = (),
                     app_flags: Sequence[str] = (), env: Optional[dict] = None) -> subprocess.Popen:
    """``streamlit run app.py`` of the checkout ``repo`` on 127.0.0.1:``port``, headless, its
    output discarded: ``streamlit_flags`` go to Streamlit, ``app_flags`` to the app after
    ``--checkpoints``; ``env`` is the process's environment (default: this one's)."""
    return subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false", *streamlit_flags,
                             "--", "--checkpoints", str(checkpoints), *app_flags],
                            cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_healthy(url: str, process: subprocess.Popen, timeout: float, pause: float, kill: bool = False) -> None:
    """Until ``url``/_stcore/health answers "ok" (Streamlit's own check, or HAProxy's passing it
    on), asking again ``pause`` seconds after each refusal. RuntimeError when ``process`` exits
    first, TimeoutError after ``timeout`` seconds; with ``kill``, ``process`` is killed first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            if process.poll() is not None:
                failure: Exception = RuntimeError(f"{url}: the process exited before it answered healthy")
                break
            time.sleep(pause)
    else:
        failure = TimeoutError(f"nothing healthy at {url} after {timeout:g} s")
    if kill:
        process.kill()
    raise failure
