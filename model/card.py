"""Make a shippable checkpoint with its model card from a training run.

    python -m model.card --run runs/rnnsearch-en-fr --out checkpoints/rnnsearch-en-fr \\
        --data-dir ../shared/data/multi30k --command "python -m model.train ..."

Exports ``RUN/best`` as fp16, scores it on the Multi30k test sets (beam 5, length-normalised,
plus greedy on test_2016_flickr), runs the length stress test (k = 1..4 joined lines), and
writes ``card.json`` with the training log, timings and every score with its signature.

    python -m model.card --ablation runs/rnnsearch-noaug --label "no length augmentation" \
        --out checkpoints/rnnsearch-en-fr --data-dir ../shared/data/multi30k --command "..."

scores another run the same way (exported to fp16 like the shipped model) and adds it to the
card at ``--out`` under ``ablations``, so the card shows what a training choice bought.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from .checkpoint import CARD, export
from .data import find_split, read_lines
from .evaluate import join_consecutive, load_test_files, run_model
from .metrics import corpus_scores
from .search import SearchConfig
from .translate import Translator

TEST_SETS = ("test_2016_flickr", "test_2017_flickr", "test_2017_mscoco")
LIMITATIONS = (
    "Trained only on Multi30k: short English image captions (about 13 words on average) and their "
    "French translations. Expect good output on descriptions of people, animals and scenes, and poor "
    "output on news, dialogue, technical or any other domain. Training examples were single captions "
    "or 2-4 captions joined (length augmentation), so inputs up to about 60 words were seen; longer "
    "inputs are outside what the model learned. Vocabulary: 6k SentencePiece pieces per language.")


def score_test_sets(translator: Translator, data_dir: Path, src_lang: str, tgt_lang: str) -> dict:
    """Beam-5 scores per test set, plus greedy on the first, with throughput."""
    scores = {}
    for name in TEST_SETS:
        test = load_test_files(find_split(data_dir, name, src_lang), find_split(data_dir, name, tgt_lang))
        run = run_model(translator, test, SearchConfig(beam=5, alpha=1.0, trace=False))
        scores[name] = {**corpus_scores(run.hyps, test.ref), "decoding": "beam 5, alpha 1.0"}
        print(f"{translator.name} {name}: BLEU {scores[name]['bleu']} (lc {scores[name]['bleu_lc']}), "
              f"chrF {scores[name]['chrf']}", flush=True)
    test = load_test_files(find_split(data_dir, TEST_SETS[0], src_lang), find_split(data_dir, TEST_SETS[0], tgt_lang))
    greedy = run_model(translator, test, SearchConfig(beam=1, trace=False))
    scores[f"{TEST_SETS[0]} (greedy)"] = {**corpus_scores(greedy.hyps, test.ref), "decoding": "greedy"}
    return scores


def stress_scores(translator: Translator, data_dir: Path, src_lang: str, tgt_lang: str) -> list[dict]:
    """BLEU and output/reference length ratio on test_2016_flickr with k = 1..4 joined lines."""
    base = load_test_files(find_split(data_dir, TEST_SETS[0], src_lang), find_split(data_dir, TEST_SETS[0], tgt_lang))
    rows = []
    for k in (1, 2, 3, 4):
        test = join_consecutive(base, k) if k > 1 else base
        run = run_model(translator, test, SearchConfig(beam=5, alpha=1.0, trace=False))
        ratio = sum(len(h.split()) for h in run.hyps) / sum(len(r.split()) for r in test.ref)
        rows.append({"k": k, "items": len(test.src), "source_words": round(sum(len(s.split()) for s in test.src) /
                                                                            len(test.src), 1),
                     "bleu": corpus_scores(run.hyps, test.ref)["bleu"], "length_ratio": round(ratio, 3)})
        print(f"{translator.name} stress k={k}: {rows[-1]}", flush=True)
    return rows


def training_summary(run_dir: Path) -> tuple[dict, list[dict]]:
    log = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    best = max(log, key=lambda r: r["val_bleu"])
    total_tokens = sum(r["tokens_per_s"] * r["epoch_seconds"] for r in log)
    return {"epochs": len(log), "best_epoch": best["epoch"], "best_val_bleu": round(best["val_bleu"], 2),
            "wall_minutes": round(log[-1]["elapsed_s"] / 60, 1),
            "tokens_per_s": round(total_tokens / sum(r["epoch_seconds"] for r in log))}, log


def _lines(data_dir: Path, prefix: str, lang: str) -> int:
    return len(read_lines(find_split(data_dir, prefix, lang)))


def build(run_dir: Path, out: Path, data_dir: Path, command: str) -> dict:
    export(run_dir / "best", out)
    translator = Translator.from_checkpoint(out)
    config = json.loads((out / "config.json").read_text())
    train_cfg = config["train"]
    summary, log = training_summary(run_dir)
    card = {
        "name": out.name, "arch": config["model"]["arch"], "parameters": translator.model.num_parameters(),
        "data": f"Multi30k task 1, {train_cfg['src_lang']}->{train_cfg['tgt_lang']}: {train_cfg['train_prefix']} "
                f"({_lines(data_dir, train_cfg['train_prefix'], train_cfg['src_lang']):,} pairs) for training, "
                f"{train_cfg['val_prefix']} ({_lines(data_dir, train_cfg['val_prefix'], train_cfg['src_lang']):,}) "
                f"for model selection; tests: {', '.join(TEST_SETS)}",
        "preprocessing": f"raw text; SentencePiece unigram, {config['model']['src_vocab_size']}/"
                         f"{config['model']['tgt_vocab_size']} pieces, character coverage 1.0; length augmentation: "
                         f"with probability {train_cfg['join_prob']} an example joins 2-{train_cfg['join_max']} "
                         "random training pairs",
        "command": command, "training": summary, "log": log,
        "test_scores": score_test_sets(translator, data_dir, train_cfg["src_lang"], train_cfg["tgt_lang"]),
        "length_stress": stress_scores(translator, data_dir, train_cfg["src_lang"], train_cfg["tgt_lang"]),
        "limitations": LIMITATIONS,
    }
    (out / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    return card


def add_ablation(run_dir: Path, card_dir: Path, data_dir: Path, label: str, command: str) -> dict:
    """Score ``run_dir``'s best checkpoint like a shipped one and record it in ``card_dir``'s card."""
    card = json.loads((card_dir / CARD).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        translator = Translator.from_checkpoint(export(run_dir / "best", Path(tmp) / run_dir.name))
    train_cfg = json.loads((run_dir / "config.json").read_text())["train"]
    langs = train_cfg["src_lang"], train_cfg["tgt_lang"]
    summary, _ = training_summary(run_dir)
    entry = {"label": label, "command": command, "join_prob": train_cfg["join_prob"], "training": summary,
             "test_scores": score_test_sets(translator, data_dir, *langs),
             "length_stress": stress_scores(translator, data_dir, *langs)}
    card["ablations"] = [a for a in card.get("ablations", []) if a["label"] != label] + [entry]
    (card_dir / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    return entry


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.card", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", help="training output folder (with best/ and log.jsonl) to ship")
    source.add_argument("--ablation", help="training output folder to score and add to the card at --out")
    parser.add_argument("--label", default="ablation", help="what the --ablation run changed")
    parser.add_argument("--out", required=True, help="checkpoint folder to write (or whose card to extend)")
    parser.add_argument("--data-dir", default="../shared/data/multi30k", help="Multi30k folder")
    parser.add_argument("--command", default="", help="the exact training command, recorded in the card")
    args = parser.parse_args(argv)
    if args.ablation:
        entry = add_ablation(Path(args.ablation), Path(args.out), Path(args.data_dir), args.label, args.command)
        print(f"added {args.label!r} to {args.out}/{CARD}: {entry['test_scores'][TEST_SETS[0]]['bleu']} BLEU")
        return 0
    card = build(Path(args.run), Path(args.out), Path(args.data_dir), args.command)
    print(f"wrote {args.out}/{CARD}: {card['test_scores'][TEST_SETS[0]]['bleu']} BLEU on {TEST_SETS[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
