"""The faithfulness check under a heatmap computed alone, outside the app: the work the page's
"settled" wait is for (bench/page_speed.py runs it in a fresh interpreter with the server's threads).

    python bench/check_work.py CHECKPOINT THREADS < sentences.json   # prints the median seconds
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from model.explaining.faithfulness import attention_check  # noqa: E402


def check_seconds(translator: Translator, sentences: list[str]) -> list[float]:
    """Each sentence decoded as the page decodes it (beam 5), then its check timed alone."""
    found = []
    for sentence in sentences:
        trace = translator.translate([sentence], SearchConfig(beam=5))[0]
        start = time.perf_counter()
        attention_check(translator.model, trace)
        found.append(time.perf_counter() - start)
    return found


def main() -> None:
    checkpoint, threads = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(threads)
    print(statistics.median(check_seconds(Translator.from_checkpoint(checkpoint), json.loads(sys.stdin.read()))))


if __name__ == "__main__":
    main()
