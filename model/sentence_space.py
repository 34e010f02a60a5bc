"""``python -m model.sentence_space`` (``nmt-sentence-space``): place a sentence in a model's sentence space
and list the training sentences nearest to it (model/decoding/sentence_space.py).

A space built from the checkpoint's own training corpora is kept on disk, in the same cache the
app uses (model/decoding/sentence_space_cache.py), so the second run reads it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Sequence

import torch

from model.argtypes import int_range, run_command
from model.corpus.textfile import read_text
from model.decoding import sentence_space
from model.decoding.sentence_space import MAX_K, SAMPLE, WORD_SAMPLE, build_space, training_sentences
from model.decoding.sentence_space_cache import SpaceCache, default_cache_dir
from model.decoding.translator import Translator


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.sentence_space", description=sentence_space.__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="checkpoint folder")
    parser.add_argument("--text", help="the sentence to place")
    parser.add_argument("--k", type=int_range(1, MAX_K), default=10, help=f"neighbours to list (1..{MAX_K}, default 10)")
    parser.add_argument("--sample", type=int_range(1), default=SAMPLE, help=f"training sentences to encode (default {SAMPLE:,})")
    parser.add_argument("--sentences", help="a file of sentences to sample from, one per line (default: the "
                                            "checkpoint's training corpora)")
    parser.add_argument("--words", action="store_true", help="also each word's nearest words in context (attention models)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--threads", type=int_range(1), default=1, help="torch threads")
    parser.add_argument("--cache-dir", help="where spaces are kept (default: the app's, "
                                            "~/.cache/inside-attention-nmt/sentence-spaces)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor keep a space on disk")
    parser.add_argument("--keep-only", action="store_true",
                        help="build the space into the cache (or find it there) and place nothing: what the app "
                             "runs in the background at start, at the lowest priority")
    parser.add_argument("--stop-with", type=int_range(1), metavar="PID",
                        help="stop when the process PID has exited (the app passes its own, so that a stopped "
                             "server leaves no build behind; POSIX only)")
    args = parser.parse_args(argv)
    if args.stop_with:
        stop_with(args.stop_with)
    if args.keep_only and (args.no_cache or args.sentences):
        parser.error("--keep-only keeps the space of the checkpoint's own corpora in the cache: "
                     "not with --no-cache or --sentences")
    if args.text is None and not args.keep_only:
        parser.error("--text is required (or --keep-only)")
    torch.set_num_threads(args.threads)

    def work() -> str:
        translator = Translator.from_checkpoint(args.checkpoint)
        if args.sentences or args.no_cache:
            pool = read_text(args.sentences).splitlines() if args.sentences else training_sentences(Path(args.checkpoint))
            space = build_space(translator, pool, args.sample, WORD_SAMPLE if args.words else 0)
        else:  # the checkpoint's own corpora: the space the app keeps too (words included)
            cache = SpaceCache(Path(args.cache_dir) if args.cache_dir else default_cache_dir(),
                               notes=lambda text: print(f"note: {text}", file=sys.stderr))
            space = cache.get_or_build(SpaceCache.key(Path(args.checkpoint), args.sample, WORD_SAMPLE), lambda: build_space(
                translator, training_sentences(Path(args.checkpoint)), args.sample, WORD_SAMPLE))
            if args.keep_only:
                return f"kept the space of {len(space.sentences):,} sentences in {cache.folder}"
        vector = space.embed(translator, args.text)
        found = space.nearest(vector, args.k)
        words = space.nearest_words(translator, args.text, min(args.k, 5)) if args.words else []
        x, y = (float(v) for v in space.project(vector))
        if args.json:
            return json.dumps({"checkpoint": Path(args.checkpoint).name, "vector": space.kind, "text": args.text,
                               "sample": len(space.sentences), "map": [round(x, 4), round(y, 4)],
                               "neighbours": [{"sentence": n.text, "similarity": round(n.similarity, 4)} for n in found],
                               "words": [{"piece": p, "neighbours": [{"piece": n.word, "sentence": n.text,
                                                                      "similarity": round(n.similarity, 4)} for n in ns]}
                                         for p, ns in words]}, ensure_ascii=False)
        lines = [f"{Path(args.checkpoint).name}: {space.kind} of {len(space.sentences):,} training sentences; "
                 f"yours at ({x:.3f}, {y:.3f}) on the map", *[f"{n.similarity:7.4f}  {n.text}" for n in found]]
        for piece, ns in words:
            lines.append(f"{piece}: " + ", ".join(f"{n.word} ({n.similarity:.3f}, in \"{n.text}\")" for n in ns))
        return "\n".join(lines)

    return run_command(work)


def stop_with(pid: int, every_s: float = 1.0) -> None:
    """A daemon thread that ends this process (exit status 3) once process ``pid`` no longer exists,
    checking every ``every_s`` seconds. A space half built is lost (one cut off while being written
    leaves a ``.part`` file in the cache folder, never read). Nothing is checked where signal 0 does
    not mean "does it exist" (Windows)."""
    if os.name != "posix":
        return

    def watch() -> None:
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(3)
            except PermissionError:  # it exists, under another user
                pass
            time.sleep(every_s)

    threading.Thread(target=watch, name=f"stop with {pid}", daemon=True).start()


if __name__ == "__main__":
    raise SystemExit(main())
