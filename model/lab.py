"""``python -m model.lab`` (``nmt-lab``): train RNNencdec and RNNsearch on a toy task for a time
budget and test them by input length (model/experiments/lab_run.py).

    python -m model.lab --task reverse --arch rnnsearch,rnnencdec --updates 1000 --seconds 60 \\
        --train-lengths 1-20 --test-lengths 1-30 --seed 1 [--seeds 5] --json

Each model trains until ``--updates`` updates or ``--seconds`` seconds, whichever comes first.
Prints a table of exact-match accuracy by input length, one column per model, and what ended each
training (``--json``: one JSON object with the task, seed, lengths and, per model, its parameters,
seconds, updates, ``ended_by``, loss curve and ``by_length`` {"LENGTH": {"n", "exact"}}; with
``--seeds N``, also ``seeds`` {"SEED": the same per model} and ``spread`` {model: {"LENGTH":
{"mean", "low", "high"}}}).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from model.argtypes import run_command
from model.experiments.lab_run import ARCHS, LabResult, LabSettings, run_lab
from model.experiments.tasks import TASKS


def table(result: LabResult) -> str:
    """Exact match (%) by test length, a column per model, with each model's updates, time and what
    ended its training; with several seeds, each model's mean, lowest and highest seed by length."""
    if result.settings.seeds > 1:
        return spread_table(result)
    archs = list(result.models)
    lines = [f"task {result.settings.task}, trained on lengths {result.settings.train_lengths}, "
             f"seed {result.settings.seed}",
             "length " + "".join(f"{a:>12}" for a in archs)]
    lengths = sorted({n for m in result.models.values() for n in m.by_length})
    for n in lengths:
        cells = [result.models[a].by_length.get(n) for a in archs]
        lines.append(f"{n:>6} " + "".join(f"{c.exact * 100:11.1f}%" if c else f"{'-':>12}" for c in cells))
    lines.append("updates " + "".join(f"{result.models[a].updates:>11}" for a in archs))
    lines.append("seconds " + "".join(f"{result.models[a].seconds:>11.1f}" for a in archs))
    lines.append("ended by" + "".join(f"{result.models[a].ended_by:>11}" for a in archs))
    return "\n".join(lines)


def spread_table(result: LabResult) -> str:
    """Exact match (%) by test length over the seeds trained: mean [lowest, highest], a column per model."""
    bands = {a: result.spread(a) for a in result.settings.archs}
    bands = {a: found for a, found in bands.items() if found}  # the models a seed trained
    archs = list(bands)
    seeds = list(result.by_seed)
    lines = [f"task {result.settings.task}, trained on lengths {result.settings.train_lengths}, "
             f"seeds {seeds[0]}-{seeds[-1]} ({len(seeds)})",
             "length " + "".join(f"{a + ' mean [min, max]':>28}" for a in archs)]
    for n in sorted({n for b in bands.values() for n in b}):
        cells = [bands[a].get(n) for a in archs]
        lines.append(f"{n:>6} " + "".join(f"{f'{c.mean * 100:.1f}% [{c.low * 100:.0f}, {c.high * 100:.0f}]':>28}"
                                          if c else f"{'-':>28}" for c in cells))
    for a in archs:
        runs = [models[a] for models in result.by_seed.values() if a in models]
        lines.append(f"{a}: updates {', '.join(str(m.updates) for m in runs)}; "
                     f"ended by {', '.join(m.ended_by for m in runs)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.lab", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = LabSettings()
    parser.add_argument("--task", default=defaults.task, choices=list(TASKS))
    parser.add_argument("--arch", default=",".join(defaults.archs),
                        help=f"comma-separated, of {', '.join(ARCHS)} (default {','.join(defaults.archs)})")
    parser.add_argument("--seconds", type=float, default=defaults.seconds,
                        help="training time per model, at most (default %(default)s)")
    parser.add_argument("--updates", type=int, default=defaults.updates,
                        help="updates per model, at most: whichever of --seconds and --updates comes first "
                             "ends the training (default %(default)s)")
    parser.add_argument("--train-lengths", default=defaults.train_lengths, help="source lengths to train on, e.g. 1-20")
    parser.add_argument("--test-lengths", default=defaults.test_lengths, help="source lengths to test on, e.g. 1-30")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--seeds", type=int, default=defaults.seeds,
                        help="train on this many seeds from --seed on and print the spread (default %(default)s)")
    parser.add_argument("--emb", type=int, default=defaults.emb, help="embedding size")
    parser.add_argument("--hidden", type=int, default=defaults.hidden, help="GRU units (a Transformer's d_model)")
    parser.add_argument("--lr", type=float, default=defaults.lr, help="Adam's learning rate")
    parser.add_argument("--everyday", type=Path, help="the everyday task's Tatoeba pair file "
                        "(default data/tatoeba/eng-fra.tsv.gz)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)
    settings = LabSettings(task=args.task, archs=tuple(a for a in args.arch.split(",") if a), seconds=args.seconds,
                           updates=args.updates, train_lengths=args.train_lengths, test_lengths=args.test_lengths,
                           seed=args.seed, seeds=args.seeds, emb=args.emb, hidden=args.hidden, lr=args.lr)

    def work() -> str:
        progress = lambda arch, m: print(f"{arch}: {m.updates} updates, loss {m.curve[-1][1]:.3f}",  # noqa: E731
                                         file=sys.stderr, flush=True) if m.updates % 200 == 0 else None
        result = run_lab(settings, progress=progress, everyday_path=args.everyday)
        return json.dumps(result.to_json()) if args.json else table(result)  # printed by run_command

    return run_command(work)


if __name__ == "__main__":
    raise SystemExit(main())
