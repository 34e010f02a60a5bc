"""How long Python's full garbage collections stop a server that holds the pages and models, with
and without ``gc.freeze()`` after the start-up work (``viz/pages/start.py``).

    python bench/gc_pause.py [--captions 150] [--rounds 2]

Loads what a server holds once warm (every page's module, torch, the default everyday pair), then
decodes ``--captions`` test_2016_flickr captions one at a time with both models, beam 5, traced,
keeping every trace as the shared store does, with Python's own hook on each collection. A full
collection (generation 2) holds the interpreter's lock: every session of the server waits for it.
Each round runs the captions twice, once with everything loaded so far frozen (``gc.freeze()``,
what the start-up thread does) and once without (``gc.unfreeze()``), in alternating order, and
prints for each way the number of full collections, their median, largest and total
milliseconds, and the decodes' wall time. Prints JSON lines.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import CHECKPOINTS, corpus  # noqa: E402
from bench.decode_speed import NAMES  # noqa: E402


class FullCollections:
    """Durations (seconds) of the generation-2 collections while inside."""

    def __init__(self) -> None:
        self.found: list[float] = []
        self._began = 0.0

    def _hook(self, phase: str, info: dict) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.found.append(time.perf_counter() - self._began)

    def __enter__(self) -> "FullCollections":
        gc.callbacks.append(self._hook)
        return self

    def __exit__(self, *_exc) -> None:
        gc.callbacks.remove(self._hook)


def run(translators, captions: list[str], frozen: bool) -> dict:
    from model.decoding.search import SearchConfig

    gc.collect()
    if frozen:
        gc.freeze()
    tracked = len(gc.get_objects())  # what a full collection scans (frozen objects are not tracked)
    kept = {}  # as the shared store keeps each result
    start = time.perf_counter()
    with FullCollections() as pauses:
        for caption in captions:
            kept[caption] = [t.translate([caption], SearchConfig(beam=5, trace=True)) for t in translators]
    wall = time.perf_counter() - start
    gc.unfreeze()
    ms = [p * 1000 for p in pauses.found]
    return {"bench": "full_collections", "frozen": frozen, "captions": len(captions), "collections": len(ms),
            "median_ms": round(statistics.median(ms), 1) if ms else None, "largest_ms": round(max(ms), 1) if ms else None,
            "total_ms": round(sum(ms), 1), "decodes_s": round(wall, 2), "tracked_objects_at_start": tracked}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--captions", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import viz.pages.menu  # noqa: F401  every page's module, and torch, as a server holds them
    from model.decoding.translator import Translator

    translators = [Translator.from_checkpoint(CHECKPOINTS / name) for name in NAMES.split(",")]
    captions = corpus("test_2016_flickr")[0]
    for r in range(args.rounds):
        for frozen in ((True, False) if r % 2 == 0 else (False, True)):
            part = captions[(2 * r + frozen) * args.captions:(2 * r + frozen + 1) * args.captions]  # fresh captions each run
            print(json.dumps(run(translators, part, frozen)), flush=True)


if __name__ == "__main__":
    main()
