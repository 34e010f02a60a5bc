"""Beam-5 throughput on the command line: Joey NMT 2.3 against this project, on a model of the
shipped RNNsearch's size.

    python bench/joey_speed.py [--multi30k DIR] [--sentences 1000] [--updates 300] [--threads 2] [--rounds 1]
                               [--work DIR]

1. A GRU + Bahdanau model of the shipped everyday RNNsearch's sizes (256-dim embeddings, 512 GRU
   units each way in the encoder, 512 in the decoder, 6,000-piece SentencePiece vocabularies) is
   trained by Joey's own training function on Multi30k's English-French training pairs for
   ``--updates`` updates (enough to end its sentences; ``bench/joey_parity.py`` · ``train_multi30k``).
   ``--work DIR`` keeps it there and reuses it on the next run.
2. The first ``--sentences`` test_2016_flickr captions are translated with beam 5, 64 sentences a
   batch, ``--threads`` torch threads, three ways, each timed from its call to its last output
   line (models loaded inside the time, as a command line would):
   - ``joey``: Joey's translate path (``joeynmt.prediction.translate``, what ``python -m joeynmt
     translate CONFIG`` runs; ``bench/joey_parity.py`` · ``joey_translate``);
   - ``ours_on_joey_model``: the same weights imported (``model.checkpoints.imports.import_joey``)
     and decoded by ``python -m model.translate --beam 5 --length-norm 0`` (Joey's beam search
     ranks by log p alone); ``identical`` counts outputs equal to Joey's;
   - ``ours_shipped_rnnsearch``: ``python -m model.translate --beam 5`` with the shipped everyday
     RNNsearch (its own outputs; tokens counted too).
With ``--rounds N`` the three runs alternate N times and each is reported at its median time
(every round's seconds are printed too): this machine's speed drifts by up to 1.5 times within
an hour, and a lone run of each can land the drift on one side.
Prints one JSON object: sentences/s and output tokens/s of each, and their ratios.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import CHECKPOINTS, SHARED  # noqa: E402
from bench.joey_parity import MULTI30K, first_lines, joey_translate, train_multi30k  # noqa: E402
from model import translate as translate_command  # noqa: E402
from model.checkpoints.imports import import_joey  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from model.foreign.joey.joey import quiet_joey_logs  # noqa: E402

SHIPPED = CHECKPOINTS / "everyday-rnnsearch-en-fr"
BATCH = 64
# The shipped RNNsearch's sizes (its config.json), in Joey's terms.
SIZES = {**MULTI30K, "pairs": 29_000, "pieces": 6_000, "embedding": 256, "hidden": 512, "max_output_length": 60}


def our_command(checkpoint: Path, sentences: list[str], extra: list[str]) -> tuple[list[str], float]:
    """``python -m model.translate --checkpoint CHECKPOINT --beam 5 EXTRA`` on ``sentences`` (stdin):
    its output lines and seconds."""
    stdin, printed = sys.stdin, io.StringIO()
    start = time.perf_counter()
    try:
        sys.stdin = io.TextIOWrapper(io.BytesIO("".join(s + "\n" for s in sentences).encode()), encoding="utf-8")
        with contextlib.redirect_stdout(printed):
            status = translate_command.main(["--checkpoint", str(checkpoint), "--beam", "5",
                                             "--batch-size", str(BATCH), *extra])
    finally:
        sys.stdin = stdin
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"model.translate exited with {status}")
    return printed.getvalue().splitlines(), seconds


def rates(lines: list[str], seconds: float) -> dict:
    tokens = sum(len(line.split()) for line in lines)  # words written (both sides detokenise)
    return {"seconds": round(seconds, 2), "sentences_per_s": round(len(lines) / seconds, 1),
            "words_written": tokens, "words_per_s": round(tokens / seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--multi30k", type=Path, default=SHARED, help="Multi30k folder (train/val/test_2016_flickr .gz)")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--updates", type=int, default=300, help="Joey training updates for the compared model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="times the three runs alternate (medians are reported)")
    parser.add_argument("--work", type=Path, help="where the Joey model is trained and kept (default: a temporary folder)")
    args = parser.parse_args()
    if not (args.multi30k / "train.en.gz").is_file():
        raise SystemExit(f"no Multi30k at {args.multi30k}: pass --multi30k DIR")
    torch.set_num_threads(args.threads)
    import joeynmt.prediction  # noqa: F401 (its loggers exist now, and are quietened)
    import joeynmt.training  # noqa: F401

    quiet_joey_logs()
    work = args.work or Path(tempfile.mkdtemp(prefix="joey-speed-"))
    joey_dir = work / "multi30k" / "model"
    if not (joey_dir / "best.ckpt").is_file() and not (joey_dir / "latest.ckpt").is_file():
        train_multi30k(args.multi30k, work / "multi30k", {**SIZES, "updates": args.updates})
    sentences = first_lines(args.multi30k / "test_2016_flickr.en.gz", args.sentences)
    imported = import_joey(joey_dir, Path(tempfile.mkdtemp(prefix="joey-imported-")) / "model")

    seconds: dict[str, list[float]] = {"joey": [], "ours": [], "shipped": []}
    for _ in range(args.rounds):  # the three alternate: a slow spell of the machine hits each of them
        start = time.perf_counter()
        joey = joey_translate(joey_dir, sentences, beam=5, batch_size=BATCH)
        seconds["joey"].append(time.perf_counter() - start)
        ours, ours_s = our_command(imported, sentences, ["--length-norm", "0", "--threads", str(args.threads)])
        shipped, shipped_s = our_command(SHIPPED, sentences, ["--threads", str(args.threads)])
        seconds["ours"].append(ours_s)
        seconds["shipped"].append(shipped_s)
    joey_s, ours_s, shipped_s = (statistics.median(seconds[k]) for k in ("joey", "ours", "shipped"))
    params = lambda model: sum(p.numel() for p in model.parameters())  # noqa: E731
    result = {
        "sentences": len(sentences), "beam": 5, "batch": BATCH, "threads": args.threads,
        "joey_model": {"dir": str(joey_dir), "updates": args.updates,
                       "parameters": params(Translator.from_checkpoint(imported).model)},
        "shipped_rnnsearch_parameters": params(Translator.from_checkpoint(SHIPPED).model),
        "joey": rates(joey, joey_s),
        "ours_on_joey_model": {**rates(ours, ours_s), "identical": sum(a == b for a, b in zip(ours, joey))},
        "ours_shipped_rnnsearch": rates(shipped, shipped_s),
    }
    result["speedup_same_model"] = round(joey_s / ours_s, 2)
    result["speedup_shipped_rnnsearch_words_per_s"] = round(
        result["ours_shipped_rnnsearch"]["words_per_s"] / result["joey"]["words_per_s"], 2)
    result["seconds_each_round"] = {k: [round(x, 2) for x in v] for k, v in seconds.items()}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
