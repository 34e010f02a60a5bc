"""A Lab task over many seeds: does its lesson hold for every student, or only on a lucky seed?

    python bench/lab_seeds.py --task reverse --train-lengths 1-30 --test-lengths 1-30 \\
        --seeds 1-10 --parallel 2 [--seconds 60] [--updates 3000] [--out runs.jsonl]

Runs ``python -m model.lab --json`` once per seed, ``--parallel`` at a time (each on one torch
thread at nice 19, as the Lab page's trainings run), and prints, per model, exact match by test
length over the seeds (mean, lowest and highest seed), the means over length groups for every
seed, the updates each run made and what ended it (its updates or its seconds). ``--out`` keeps
every run's JSON object, one a line; ``--from FILE`` prints the tables of such a file again
without training.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.experiments.seed_spread import mean_over, spread  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def seeds_of(text: str) -> list[int]:
    """"1-10" or "3,5,8"."""
    if "-" in text:
        low, high = (int(part) for part in text.split("-"))
        return list(range(low, high + 1))
    return [int(part) for part in text.split(",") if part]


def run_one(seed: int, args: argparse.Namespace) -> dict:
    command = ["nice", "-n", "19", sys.executable, "-m", "model.lab", "--json", "--task", args.task,
               "--arch", args.arch, "--seconds", str(args.seconds), "--updates", str(args.updates),
               "--train-lengths", args.train_lengths, "--test-lengths", args.test_lengths, "--seed", str(seed),
               *args.extra]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"seed {seed} failed: {done.stderr.strip().splitlines()[-1:]}")
    print(f"seed {seed} done", file=sys.stderr, flush=True)
    return json.loads(done.stdout)


def groups_of(lengths: list[int], size: int = 10) -> list[tuple[int, int]]:
    """Length groups of ``size`` (1-10, 11-20, ...) that some test length falls in."""
    found = sorted({(n - 1) // size for n in lengths})
    return [(g * size + 1, (g + 1) * size) for g in found]


def report(runs: list[dict]) -> str:
    lines = []
    first = runs[0]
    lines.append(f"task {first['task']}, trained on {first['train_lengths']}, tested on {first['test_lengths']}, "
                 f"{len(runs)} seeds, budget {first.get('updates', '-')} updates or {first['seconds']} s per model")
    archs = list(first["models"])
    for arch in archs:
        tables = [{int(n): s["exact"] for n, s in run["models"][arch]["by_length"].items()} for run in runs]
        bands = spread(tables)
        lines += ["", f"{arch}: exact match by length over seeds (%)", "length    mean     min     max"]
        lines += [f"{n:>6} {b.mean * 100:7.1f} {b.low * 100:7.1f} {b.high * 100:7.1f}" for n, b in bands.items()]
        groups = groups_of(list(bands))
        lines += ["", "seed  " + "".join(f"{f'{a}-{b}':>9}" for a, b in groups) + "  updates  ended by  seconds"]
        for run, table in zip(runs, tables):
            model = run["models"][arch]
            cells = "".join(f"{mean_over(table, range(a, b + 1)) * 100:8.1f}%" for a, b in groups)
            lines.append(f"{run['seed']:>4}  {cells}  {model['updates']:>7}  {model.get('ended_by', '-'):>8}  "
                         f"{model['seconds']:>7.1f}")
        for a, b in groups:
            means = [mean_over(t, range(a, b + 1)) for t in tables]
            lines.append(f"lengths {a}-{b}: mean {sum(means) / len(means) * 100:.1f}%, "
                         f"min {min(means) * 100:.1f}%, max {max(means) * 100:.1f}%")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="reverse")
    parser.add_argument("--arch", default="rnnsearch,rnnencdec")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--updates", type=int, default=None, help="default: the Lab's own")
    parser.add_argument("--train-lengths", default="1-20")
    parser.add_argument("--test-lengths", default="1-30")
    parser.add_argument("--seeds", default="1-10")
    parser.add_argument("--parallel", type=int, default=2, help="runs at once, one core each")
    parser.add_argument("--out", type=Path, help="write every run's JSON object here, one a line")
    parser.add_argument("--from", dest="source", type=Path, help="print the tables of an --out file")
    parser.add_argument("extra", nargs="*", help="more model.lab flags, after --")
    args = parser.parse_args()
    if args.source:
        runs = [json.loads(line) for line in args.source.read_text().splitlines() if line.strip()]
    else:
        if args.updates is None:
            from model.experiments.lab_run import LabSettings
            args.updates = LabSettings().updates
        with ThreadPoolExecutor(args.parallel) as pool:
            runs = list(pool.map(lambda seed: run_one(seed, args), seeds_of(args.seeds)))
        if args.out:
            args.out.write_text("".join(json.dumps(run) + "\n" for run in runs))
    print(report(runs))


if __name__ == "__main__":
    main()
