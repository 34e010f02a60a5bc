"""Lab trainings beside a class's translations, on one server.

    python bench/lab_load.py [--trainings 10] [--seconds 5] [--translations 30]

Starts the app on the shipped checkpoints, times ``--translations`` Translate-page runs of one
session (a new sentence each time: every run decodes) with no training, then again while
``--trainings`` sessions each press Train on the Lab page at once (different seeds, so each is
its own training: RNNsearch and RNNencdec, ``--seconds`` each, on reverse 1-10). The sessions
speak the browser's websocket protocol (``bench/st_client.py``) and send every widget's value, as
a browser does. Prints one JSON object: each training's outcome (its results shown, errors
drawn) and the seconds from Train to its results (the queue's wait included), and the
translations' p50 / p95 milliseconds without and with the trainings.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import CHECKPOINTS, free_port, percentiles, streamlit_server, wait_healthy  # noqa: E402
from bench.st_client import StreamlitSession  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
WORDS = "a dog runs in the park while two women watch a small child play with a red ball near the river".split()
REVERSE = "reverse: integers 0-49 written backwards: the last input first"  # the task picker's label


def sentence(i: int) -> str:
    """A different everyday sentence for each ``i`` (nothing served from the shared store)."""
    return " ".join(WORDS[(i + k) % len(WORDS)] for k in range(8 + i % 5)).capitalize() + "."


async def translations(url: str, n: int, start: int) -> list[float]:
    """``n`` timed Translate-page runs of one session, each with a new sentence."""
    client = StreamlitSession(url)
    await client.open()
    times = []
    try:
        for i in range(n):
            began = time.perf_counter()
            await client.rerun(source=sentence(start + i))
            times.append((time.perf_counter() - began) * 1000)
    finally:
        await client.close()
    return times


async def training(url: str, seed: int, seconds: float, timeout: float) -> dict:
    """One session pressing Train on the Lab page, then looking every second until its results show."""
    client = StreamlitSession(url)
    began = time.perf_counter()
    try:
        await client.open("lab")
        await client.rerun(trigger="lab_run", lab_task=REVERSE, lab_archs=["rnnsearch", "rnnencdec"],
                           lab_seconds=[float(seconds)], lab_train="1-10", lab_test="1-12", lab_seed=float(seed),
                           lab_hidden=["32"])
        while "dataframe" not in client.kinds and time.perf_counter() - began < timeout:
            await asyncio.sleep(1.0)
            await client.rerun()
        return {"seed": seed, "finished": "dataframe" in client.kinds, "errors": client.exceptions,
                "seconds": round(time.perf_counter() - began, 1)}
    finally:
        await client.close()


async def drive(url: str, trainings: int, seconds: float, n: int) -> dict:
    alone = await translations(url, n, 0)
    started = asyncio.gather(*(training(url, seed, seconds, timeout=60 + 6 * trainings * seconds)
                               for seed in range(1, trainings + 1)))
    await asyncio.sleep(2.0)  # the trainings are queued and the first ones running
    during = await translations(url, n, 1000)
    results = await started
    return {"trainings": results, "finished": sum(r["finished"] for r in results),
            "errors": sum(r["errors"] for r in results),
            "translation_ms_alone": percentiles(alone), "translation_ms_during_trainings": percentiles(during),
            "translation_mean_ms": {"alone": round(statistics.mean(alone), 1),
                                    "during": round(statistics.mean(during), 1)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trainings", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=5.0, help="training seconds per model (5 to 120)")
    parser.add_argument("--translations", type=int, default=30)
    parser.add_argument("--lab-slots", type=int, default=0, help="the server's --lab-slots (0: its default)")
    args = parser.parse_args()
    port = free_port()
    flags = ["--no-warm"] + (["--lab-slots", str(args.lab_slots)] if args.lab_slots else [])
    server = streamlit_server(REPO, CHECKPOINTS, port, app_flags=flags)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, server, timeout=120, pause=0.5)
        found = asyncio.run(drive(url, args.trainings, args.seconds, args.translations))
        print(json.dumps({"trainings_asked": args.trainings, "seconds_per_model": args.seconds,
                          "lab_slots": args.lab_slots or "default (one per core)", **found}))
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
