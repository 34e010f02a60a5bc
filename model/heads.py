"""``python -m model.heads``: which heads of a Transformer matter, and whether the heads that align are
the heads that matter (model/explaining/head_importance.py).

    python -m model.heads --checkpoint checkpoints/everyday-transformer-en-fr \\
        --src test.en --ref test.fr --limit 200 \\
        --align-src gold.en --align-tgt gold.fr --align-gold gold.wa --json heads.json

Prints, for each attention, the layer x head grid of the change in log-probability per token when
the head is switched off, and of BLEU; the pruning curve; and, with a gold alignment set, the
cross-attention's AER grid beside it with their rank correlation.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from model.cards.head_importance_record import record_in_card
from model.checkpoints.families import describe_folder
from model.core.errors import UserError
from model.corpus.test_sets import read_lines_of
from model.decoding.translator import Translator
from model.explaining.head_importance import HeadImportance, correlation, head_importance
from model.scoring.attention_alignment import head_grid, score_model
from model.scoring.word_alignment import DEFAULT_EXTRACTION, read_gold


def grid_text(title: str, grid: np.ndarray, digits: int) -> list[str]:
    lines = [title, "layer " + "".join(f"{'head ' + str(h + 1):>9}" for h in range(grid.shape[1]))]
    return lines + [f"{k + 1:>5} " + "".join(f"{v:9.{digits}f}" for v in row) for k, row in enumerate(grid)]


def report_text(found: HeadImportance, aer: dict) -> str:
    """The report as text; ``aer``: {shifted: the cross-attention's (layers, heads) AER grid}, maybe empty."""
    lines = [f"{found.sentences} sentences; every head on: mean log p per token {found.base_logprob:.4f}, "
             f"BLEU {found.base_bleu:.2f} (against {found.bleu_against})"]
    for kind in found.shape:
        lines += grid_text(f"{kind}: change in mean log p per token with the head off (more negative: matters more)",
                           found.grid(kind), 4)
        lines += grid_text(f"{kind}: BLEU with the head off", found.grid(kind, "bleu"), 2)
    lines.append("pruning, least important first: " + ", ".join(f"{n} off: {b:.2f}" for n, b in found.pruning))
    for shifted, grid in aer.items():
        reading = "where the word is the decoder's input" if shifted else "at the step that outputs the word"
        lines += grid_text(f"cross: AER of each head against the gold links, read {reading} (lower aligns better)",
                           grid, 3)
        lines.append(f"rank correlation of that AER with the change in log p: {correlation(found, grid):.3f} "
                     "(positive: the heads that align well, low AER, lose more log p when off, so matter more)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.heads", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="a folder of this project's Transformer")
    parser.add_argument("--src", required=True, help="source sentences, one per line")
    parser.add_argument("--ref", help="their references, line-aligned (default: BLEU against the model's own output)")
    parser.add_argument("--limit", type=int, default=200, help="read the first N lines (default 200)")
    parser.add_argument("--prune-steps", type=int, default=8, help="points of the pruning curve after 0 (default 8)")
    parser.add_argument("--align-src", help="gold alignment source sentences (tokenised)")
    parser.add_argument("--align-tgt", help="gold alignment target sentences")
    parser.add_argument("--align-gold", help="gold links (NAACL .wa or Pharaoh)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--json", help="write the report here")
    parser.add_argument("--card", action="store_true", help="also record the report in the checkpoint's card.json")
    args = parser.parse_args(argv)
    gold_files = [args.align_src, args.align_tgt, args.align_gold]
    if any(gold_files) and not all(gold_files):
        parser.error("--align-src, --align-tgt and --align-gold go together")
    if not 1 <= args.limit <= 100_000 or not 1 <= args.prune_steps <= 100:
        parser.error("--limit must be 1..100000 and --prune-steps 1..100")
    torch.set_num_threads(max(args.threads, 1))
    if args.card and not (Path(args.checkpoint) / "card.json").is_file():
        print(f"error: {args.checkpoint}: no card.json to record in (write the model's card first)", file=sys.stderr)
        return 2
    try:
        translator = Translator.from_checkpoint(args.checkpoint)
        read = lambda path: read_lines_of(path, Path(path).name, max_lines=args.limit, take_first=True)[:args.limit]  # noqa: E731
        sources = read(args.src)
        refs = read(args.ref) if args.ref else None
        aer = {}
        if all(gold_files):  # first: a bad gold file is refused before the long measurement
            summary = describe_folder(Path(args.checkpoint))
            rows, _, _ = score_model(translator.name, translator, (summary.src_lang, summary.tgt_lang),
                                     read_gold(*gold_files), ("heads",))
            for shifted in (False, True):
                grid = head_grid(rows, translator.name, DEFAULT_EXTRACTION, shifted)
                if grid is not None:
                    aer[shifted] = grid[:, :-1]  # the heads, not the layer's mean
        found = head_importance(translator, sources, refs, args.prune_steps,
                                progress=lambda m: print(m, file=sys.stderr))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report_text(found, aer))
    out = found.to_json()
    for shifted, grid in aer.items():
        name = "shifted" if shifted else "output"
        out[f"cross_aer_{name}"] = np.round(grid, 4).tolist()
        out[f"aer_correlation_{name}"] = round(correlation(found, grid), 4)
    if aer:
        out["aer_gold"] = Path(args.align_gold).stem
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    if args.card:
        record_in_card(Path(args.checkpoint), out, "python -m model.heads " + " ".join(
            f"--{flag} {_shown(getattr(args, flag.replace('-', '_')))}" for flag in
            ("checkpoint", "src", "ref", "limit", "prune-steps", "align-src", "align-tgt", "align-gold")
            if getattr(args, flag.replace('-', '_')) is not None))
        print(f"recorded in {Path(args.checkpoint) / 'card.json'}")
    return 0


def _shown(value) -> str:
    """A path as the command to record shows it: data under ../shared/data as data/..., others as given."""
    text = str(value)
    return "data/" + text.split("/data/", 1)[1] if "/shared/data/" in text else text


if __name__ == "__main__":
    raise SystemExit(main())
