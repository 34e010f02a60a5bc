"""Make a shippable checkpoint with its model card from a training run.

    python -m model.card --run runs/everyday-rnnsearch --out checkpoints/everyday-rnnsearch-en-fr \\
        --pair everyday --trained-on "everyday English (Tatoeba + Multi30k)" --average 5 --tune \\
        --command "python -m model.train ..." --how-trained "..."

1. picks the weights to ship on the validation set (greedy BLEU, as in training): the run's best
   checkpoint, or with ``--average K`` the mean of its last K kept checkpoints if that scores higher;
2. with ``--tune``, picks the beam size and length normalisation on the validation set: they become
   the model's default decoding, recorded in the card;
3. exports fp16, scores every test set of every training corpus (Multi30k's test files, a pair
   file's carved test split) with that decoding, runs the length stress test on each corpus
   (k consecutive test sentences joined), and writes ``card.json`` with the data and its
   attribution, the training log, timings, where it trained, and every score with its signature.

    python -m model.card --compare checkpoints/A checkpoints/B

decodes both models on A's test sets and records the paired bootstrap test in both cards.

    python -m model.card --ablation runs/rnnsearch-noaug --label "no length augmentation" --out checkpoints/A

scores another run the same way and adds it to A's card under ``ablations``.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from model.checkpoints.folder import CARD, read_json
from model.checkpoints.derived import average, export
from model.core.config import TrainConfig, dataclass_from_dict
from model.corpus.corpora import corpus_specs, held_out_split_names, is_pair_file, load_split
from model.corpus.licences import corpus_facts
from model.corpus.parallel import Corpus
from model.corpus.test_sets import EvalSet, build_eval_set, join_consecutive
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from model.core.errors import DataError
from model.scoring.evaluation import STRESS_K, paired_significance, run_model
from model.scoring.metrics import bleu, corpus_scores, moses_bleu_lc
from model.training.replay import read_probe_log, snapshot_to_json

# Pair files (Tatoeba) hold short sentences: their stress test joins up to one more.
STRESS_K_FOR = {False: STRESS_K, True: STRESS_K + (STRESS_K[-1] + 1,)}  # by is_pair_file
CHECK_SENTENCES = 500  # the shipped-checkpoint test decodes this many sentences of each corpus' first test set
TUNE_LENGTH_NORMS = (0.6, 0.8, 1.0, 1.2)  # tried at beam 5, then the best one with each beam size
TUNE_BEAMS = (3, 5, 8, 12)
# A larger beam must beat the smaller one by more than this to be chosen: each beam step slows every
# translation in the app, and differences this small are far inside validation BLEU's own noise.
TUNE_BEAM_TOLERANCE = 0.1
DEVIATIONS = [
    "The encoder GRU applies its reset gate after the recurrent product, r ∘ (U h + b), as PyTorch's fused "
    "kernel does; the paper's GRU (and our decoder) applies it before, U [r ∘ h] (see model/network/encoder.py).",
    "The deep output reads s_i (the paper's Section 3.1) rather than s_{i-1} (its Appendix A).",
    "Adam with label smoothing 0.1 and dropout instead of the paper's Adadelta without regularisation; "
    "SentencePiece subwords instead of 30k-word shortlists with [UNK].",
]
ENCDEC_SUMMARY = ("The paper's RNNencdec (Cho et al. 2014) has a unidirectional encoder; ours summarises a "
                  "bidirectional one ([forward h_Tx; backward h_1]), a choice that helps RNNencdec.")
DEVIATIONS.append(ENCDEC_SUMMARY)


# The Transformer's, against Vaswani et al. 2017 (model/network/transformer.py says where each happens).
TRANSFORMER_DEVIATIONS = [
    "Pre-norm layers: each sub-layer reads LayerNorm(x) and adds its output to x, with a LayerNorm after each "
    "stack; the paper's post-norm LayerNorm(x + Sublayer(x)) needs a long learning-rate warm-up.",
    "Source and target embeddings are separate (one SentencePiece vocabulary per language); the target embedding "
    "is tied to the output layer, as in the paper.",
    "Trained with the RNNs' recipe (Adam at learning rate 0.001, halved after each validation that is not a new "
    "best, label smoothing 0.1, batches of 80 pairs, length augmentation) plus a linear warm-up over the first "
    "1,000 updates, not the paper's inverse square-root schedule over 25,000-token batches; dropout 0.1 on the "
    "embeddings and each sub-layer's output, none on the attention weights.",
    "SentencePiece subwords of the everyday pairs (6,000 per language) instead of the paper's shared 37,000 BPE "
    "vocabulary.",
]


def deviations(arch: str) -> list[str]:
    """The deviations a card of an ``arch`` model lists: the encoder summary only for RNNencdec,
    the Transformer's own for the Transformer."""
    if arch == "transformer":
        return list(TRANSFORMER_DEVIATIONS)
    return [d for d in DEVIATIONS if arch == "rnnencdec" or d != ENCDEC_SUMMARY]


def held_out_sets(train: TrainConfig) -> dict[str, EvalSet]:
    """Every test set of the training corpora: a folder's ``test*`` files, a pair file's carved
    test split; named ``corpus/split``."""
    out = {}
    for spec in corpus_specs(train):
        for split in held_out_split_names(spec, train.src_lang):
            corpus = load_split(spec, split, train.src_lang, train.tgt_lang)
            out[f"{spec.name}/{split}"] = build_eval_set(corpus.src, corpus.tgt, f"{spec.name}/{split}")
    return out


def validation_set(train: TrainConfig) -> EvalSet:
    """The validation pairs training used, every corpus together."""
    prefixes = {"val": train.val_prefix}
    parts = [load_split(spec, "val", train.src_lang, train.tgt_lang, prefixes) for spec in corpus_specs(train)]
    capped = [Corpus(p.src[:train.val_max_sentences], p.tgt[:train.val_max_sentences]) for p in parts]
    return build_eval_set([s for p in capped for s in p.src], [t for p in capped for t in p.tgt], "validation")


def val_bleu(translator: Translator, val: EvalSet, cfg: SearchConfig) -> float:
    return round(bleu(run_model(translator, val, cfg).hyps, val.ref)[0], 2)


def select_weights(run_dir: Path, val: EvalSet, k_average: int) -> tuple[Path, dict]:
    """The run's best checkpoint, or the mean of its last ``k_average`` kept ones when that
    scores higher on validation (greedy)."""
    greedy = SearchConfig(beam=1, trace=False)
    scores = {"best": val_bleu(Translator.from_checkpoint(run_dir / "best"), val, greedy)}
    kept = sorted(run_dir.glob("step-*"))[-k_average:] if k_average else []
    if len(kept) >= 2:
        averaged = average(kept, run_dir / "average")
        scores[f"average of {', '.join(p.name for p in kept)}"] = val_bleu(Translator.from_checkpoint(averaged), val,
                                                                            greedy)
    chosen = max(scores, key=scores.get)
    print(f"weights on validation (greedy BLEU): {scores}; shipping {chosen}", flush=True)
    return (run_dir / "best" if chosen == "best" else run_dir / "average"), {"val_bleu_greedy": scores,
                                                                             "chosen": chosen}


def tune_decoding(translator: Translator, val: EvalSet) -> dict:
    """Length normalisation at beam 5, then the beam size with the best one, by validation BLEU
    (the smallest beam within TUNE_BEAM_TOLERANCE of the best, see pick_decoding)."""
    grid = []
    for length_norm in TUNE_LENGTH_NORMS:
        grid.append({"beam": 5, "length_norm": length_norm,
                     "val_bleu": val_bleu(translator, val, SearchConfig(beam=5, length_norm=length_norm, trace=False))})
    best_norm = max(grid, key=lambda r: r["val_bleu"])["length_norm"]
    for beam in (b for b in TUNE_BEAMS if b != 5):
        grid.append({"beam": beam, "length_norm": best_norm,
                     "val_bleu": val_bleu(translator, val, SearchConfig(beam=beam, length_norm=best_norm, trace=False))})
    best = pick_decoding(grid)
    print(f"decoding on validation: {grid}; chosen beam {best['beam']}, length norm {best['length_norm']}", flush=True)
    return {"beam": best["beam"], "length_norm": best["length_norm"],
            "chosen_on": f"validation BLEU (the smallest beam within {TUNE_BEAM_TOLERANCE} BLEU of the best)",
            "grid": grid}


def pick_decoding(grid: list[dict], tolerance: float = TUNE_BEAM_TOLERANCE) -> dict:
    """The row of the smallest beam whose validation BLEU is within `tolerance` of the best row's;
    among rows of that beam, the best one (length normalisation costs no speed, so it takes the max)."""
    top = max(r["val_bleu"] for r in grid)
    beam = min(r["beam"] for r in grid if top - r["val_bleu"] <= tolerance + 1e-9)  # 1e-9: 50.57 - 0.1 < 50.47
    return max((r for r in grid if r["beam"] == beam), key=lambda r: r["val_bleu"])


def decoding_config(card: dict) -> SearchConfig:
    decoding = card.get("decoding") or {}
    return SearchConfig(beam=decoding.get("beam", 5), length_norm=decoding.get("length_norm", 1.0), trace=False)


def describe(decoding: SearchConfig) -> str:
    return "greedy" if decoding.beam == 1 else f"beam {decoding.beam}, length norm {decoding.length_norm}"


SCORES_NOTE = ("bleu and bleu_lc are sacreBLEU on detokenised output (13a tokenisation; bleu_lc lowercased). "
               "bleu_lc_moses is lowercased BLEU on Moses-tokenised text (sacremoses, sacreBLEU with tokenize=none), "
               "what multi-bleu.perl -lc reports: the convention of published Multi30k results, so compare those "
               "with bleu_lc_moses, not with bleu.")


def score_test_sets(translator: Translator, tests: dict[str, EvalSet], decoding: SearchConfig,
                    tgt_lang: str = "fr") -> dict:
    scores = {}
    for name, test in tests.items():
        run = run_model(translator, test, decoding)
        moses, moses_signature = moses_bleu_lc(run.hyps, test.ref, tgt_lang)
        scores[name] = {**corpus_scores(run.hyps, test.ref), "bleu_lc_moses": round(moses, 2),
                        "bleu_lc_moses_signature": moses_signature, "decoding": describe(decoding)}
        print(f"{translator.name} {name}: BLEU {scores[name]['bleu']} (lc {scores[name]['bleu_lc']}), "
              f"chrF {scores[name]['chrf']}", flush=True)
    return scores


def stress_scores(translator: Translator, train: TrainConfig, tests: dict[str, EvalSet],
                  decoding: SearchConfig) -> dict[str, list[dict]]:
    """Per corpus, BLEU and output/reference length ratio with k consecutive test sentences
    joined (its first test set)."""
    out = {}
    for spec in corpus_specs(train):
        name = next((n for n in tests if n.startswith(f"{spec.name}/")), None)
        if name is None:
            continue
        rows = []
        for k in STRESS_K_FOR[is_pair_file(spec.path)]:
            test = join_consecutive(tests[name], k) if k > 1 else tests[name]
            run = run_model(translator, test, decoding)
            ratio = sum(len(h.split()) for h in run.hyps) / sum(len(r.split()) for r in test.ref)
            rows.append({"k": k, "items": len(test.src),
                         "source_words": round(sum(len(s.split()) for s in test.src) / len(test.src), 1),
                         "bleu": corpus_scores(run.hyps, test.ref)["bleu"], "length_ratio": round(ratio, 3)})
            print(f"{translator.name} stress {name} k={k}: {rows[-1]}", flush=True)
        out[name] = rows
    return out


def checks(translator: Translator, tests: dict[str, EvalSet], train: TrainConfig) -> list[dict]:
    """Greedy BLEU on the first CHECK_SENTENCES of each corpus' first test set: what
    tests/model/test_shipped.py decodes again to check the shipped weights."""
    out = []
    for spec in corpus_specs(train):
        name = next((n for n in tests if n.startswith(f"{spec.name}/")), None)
        if name is not None:
            test = tests[name]
            run = run_model(translator, EvalSet(test.src[:CHECK_SENTENCES], test.ref[:CHECK_SENTENCES]),
                            SearchConfig(beam=1, trace=False))
            out.append({"test_set": name, "first": CHECK_SENTENCES, "decoding": "greedy",
                        "bleu": round(bleu(run.hyps, test.ref[:CHECK_SENTENCES])[0], 2)})
    return out


def data_section(train: TrainConfig) -> list[dict]:
    """Each training corpus: what it is, its licence and attribution, how it was used."""
    out, prefixes = [], {"train": train.train_prefix, "val": train.val_prefix}
    for spec in corpus_specs(train):
        facts = corpus_facts(spec.name, train.src_lang, train.tgt_lang)
        info = {"description": facts.description, "licence": facts.licence, "attribution": facts.attribution}
        parts = {split: load_split(spec, split, train.src_lang, train.tgt_lang, prefixes)
                 for split in ("train", "val", *held_out_split_names(spec, train.src_lang))}
        entry = {"name": spec.name, **info, "training_pairs": len(parts["train"].src), "weight": spec.weight,
                 "pairs_per_split": {split: len(part.src) for split, part in parts.items()}}
        if is_pair_file(spec.path):
            seen = set(parts["train"].tgt)
            shared = sum(ref in seen for ref in parts["test"].tgt)
            entry["splits"] = ("validation and test carved from the file by model/corpus/corpora.py (carve_splits): whole "
                               "groups of pairs sharing an English sentence (case and spacing ignored), ordered by a "
                               "seeded hash, so no English sentence is in two splits and line order does not matter")
            entry["test_references_seen_in_training"] = (
                f"{shared} of {len(parts['test'].tgt)} test references ({100 * shared / len(parts['test'].tgt):.1f}%) "
                "also occur as training targets (Tatoeba translates different English sentences alike); "
                "test_scores also give BLEU on the other test pairs")
        else:
            entry["splits"] = f"files {train.train_prefix} (training), {train.val_prefix} (validation), test* (tests)"
        out.append(entry)
    return out


def unseen_reference_scores(translator: Translator, train: TrainConfig, decoding: SearchConfig) -> dict:
    """For pair-file corpora: scores on the test pairs whose reference never occurs as a training
    target (pairs split by English sentence can still share their French one)."""
    scores = {}
    for spec in corpus_specs(train):
        if not is_pair_file(spec.path):
            continue
        seen = set(load_split(spec, "train", train.src_lang, train.tgt_lang).tgt)
        test = load_split(spec, "test", train.src_lang, train.tgt_lang)
        kept = [(s, t) for s, t in zip(test.src, test.tgt) if t not in seen]
        if not kept:
            continue
        subset = build_eval_set([s for s, _ in kept], [t for _, t in kept], f"{spec.name}/test, unseen references")
        scores.update(score_test_sets(translator, {subset.name: subset}, decoding, train.tgt_lang))
    return scores


def training_summary(run_dir: Path) -> tuple[dict, list[dict]]:
    log = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    best = max(log, key=lambda r: r["val_bleu"])
    total_tokens = sum(r["tokens_per_s"] * r["epoch_seconds"] for r in log)
    host = read_json(run_dir / "host.json") if (run_dir / "host.json").is_file() else {}
    return {"updates": log[-1]["step"], "epochs": log[-1]["epoch"], "validations": len(log),
            "best_step": best["step"], "best_val_bleu": round(best["val_bleu"], 2),
            "wall_minutes": round(log[-1]["elapsed_s"] / 60, 1),
            "tokens_per_s": round(total_tokens / max(sum(r["epoch_seconds"] for r in log), 1e-9)), "where": host}, log


def build(run_dir: Path, out: Path, command: str, pair: str = "", trained_on: str = "", k_average: int = 0,
          tune: bool = False, limitations: str = "", how_trained: str = "") -> dict:
    config = read_json(run_dir / "config.json")
    train = dataclass_from_dict(TrainConfig, config["train"])
    val = validation_set(train)
    weights, selection = select_weights(run_dir, val, k_average)
    export(weights, out)
    translator = Translator.from_checkpoint(out)
    decoding = tune_decoding(translator, val) if tune else {"beam": 5, "length_norm": 1.0, "chosen_on": "default"}
    card = {"name": out.name, "arch": config["model"]["arch"], "pair": pair, "trained_on": trained_on,
            "parameters": translator.model.num_parameters(), "data": data_section(train),
            "preprocessing": f"raw text; SentencePiece unigram, {config['model']['src_vocab_size']}/"
                             f"{config['model']['tgt_vocab_size']} pieces, character coverage 1.0; length "
                             f"augmentation: with probability {train.join_prob} an example joins 2-{train.join_max} "
                             "random training pairs",
            "command": command, "how_trained": how_trained, "selection": selection, "decoding": decoding}
    card["training"], card["log"] = training_summary(run_dir)
    tests = held_out_sets(train)
    search = decoding_config(card)
    card.update(scores_note=SCORES_NOTE, test_scores={**score_test_sets(translator, tests, search, train.tgt_lang),
                                                      **unseen_reference_scores(translator, train, search)},
                length_stress=stress_scores(translator, train, tests, search),
                checks=checks(translator, tests, train), deviations=deviations(card["arch"]), limitations=limitations)
    snapshots = read_probe_log(run_dir)
    if snapshots:  # the training replay: what the probe sentences became over training
        card["replay"] = {"snapshots": [snapshot_to_json(snap) for snap in snapshots]}
    (out / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    return card


def compare(a_dir: Path, b_dir: Path) -> list[dict]:
    """Both models on A's test sets, each with its own default decoding; the paired bootstrap
    test (sacrebleu) goes into both cards."""
    cards = {d: read_json(d / CARD) for d in (a_dir, b_dir)}
    names = {d: cards[d]["name"] for d in cards}  # the README reads rows by card name
    translators = {d: Translator.from_checkpoint(d) for d in (a_dir, b_dir)}
    train = dataclass_from_dict(TrainConfig, read_json(a_dir / "config.json")["train"])
    tests = held_out_sets(train)
    if not tests:  # the config's corpus paths lead nowhere from here: an empty comparison would pass for one
        raise DataError(f"{a_dir.name}: none of its test sets is found from {Path.cwd()} "
                        f"({', '.join(s.path for s in corpus_specs(train))}); run where its config's paths lead")
    rows = []
    for name, test in tests.items():
        runs = [run_model(translators[d], test, decoding_config(cards[d])) for d in (a_dir, b_dir)]
        result = paired_significance(runs, test.ref)
        a_bleu, b_bleu = (s["bleu"] for s in result["systems"])
        rows.append({"test_set": name, names[a_dir]: a_bleu, names[b_dir]: b_bleu, "difference": round(a_bleu - b_bleu, 2),
                     "p_value": result["systems"][1]["p_value"], "signature": result["signature"]})
        print(f"{name}: {names[a_dir]} {a_bleu} vs {names[b_dir]} {b_bleu}, p = {rows[-1]['p_value']}", flush=True)
    for d, other in ((a_dir, b_dir), (b_dir, a_dir)):
        cards[d]["comparison"] = {"with": names[other], "test": "paired bootstrap resampling (sacrebleu, 1000 samples)",
                                  "rows": rows}
        (d / CARD).write_text(json.dumps(cards[d], indent=2, ensure_ascii=False) + "\n")
    return rows


def add_ablation(run_dir: Path, card_dir: Path, label: str, command: str) -> dict:
    """Score ``run_dir``'s best checkpoint like a shipped one and record it in ``card_dir``'s card."""
    card = read_json(card_dir / CARD)
    train = dataclass_from_dict(TrainConfig, read_json(run_dir / "config.json")["train"])
    tests, search = held_out_sets(train), decoding_config(card)
    with tempfile.TemporaryDirectory() as tmp:
        translator = Translator.from_checkpoint(export(run_dir / "best", Path(tmp) / run_dir.name))
        entry = {"label": label, "command": command, "join_prob": train.join_prob,
                 "training": training_summary(run_dir)[0],
                 "test_scores": {**score_test_sets(translator, tests, search, train.tgt_lang),
                                 **unseen_reference_scores(translator, train, search)},
                 "length_stress": stress_scores(translator, train, tests, search)}
    card["ablations"] = [a for a in card.get("ablations", []) if a["label"] != label] + [entry]
    (card_dir / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    return entry
