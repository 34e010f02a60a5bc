"""Decoding speed of the shipped checkpoints.

    python bench/decode_speed.py [--repeats 15] [--names everyday-rnnsearch-en-fr,everyday-rnnencdec-en-fr]
    python bench/decode_speed.py --models everyday-rnnsearch-en-fr,everyday-transformer-en-fr [--rounds 4]

Prints JSON lines:
- batch: beam-5 translation of test_2016_flickr (1,000 sentences) through
  ``python -m model.translate``, whole process included (start-up, loading, I/O), sentences/s;
- interactive: one 25-word (and one 55-word) sentence through both models, beam 5, full traces
  (attention, energies, top-k, beam history), warm, median and p90 milliseconds;
- evaluate: both models, beam 5, all of test_2016_flickr as the Evaluate page runs it (traces on);
- products: a 27-word interactive decode (both models) beside its matrix products alone: every linear layer,
  batched product and GRU call the decode makes is recorded (``bench/products.py``) and the same
  calls, on tensors of the same shapes and in the same order, are replayed and timed: what the
  arithmetic costs on this machine. Decodes and replays alternate, and the ratio is the median
  of each pair's, so the machine's drift reaches both alike. Their GFLOP count is printed too.

``--models`` compares models (names under checkpoints/ or folders) in one process, taking turns
round by round: the 27-word sentence decoded as the page does (beam 5, full traces; median of 5)
and 1,000 test_2016_flickr captions decoded as the command line does (beam 5, no traces, 64 a
batch, in-process), each model's median and its ratio to the first model's; and the same batches
encoded only: the encoder's share of the batch time; the batch decode's minor page faults
(memory the C library returned to the system and touches again); and the batch decode's matrix
products alone (``bench/products.py``: recorded once, then replayed on random tensors of the same
shapes, the median of three), their GFLOP and what is left of the batch time beside them: what a
model's arithmetic costs, apart from everything else its decoding does; and, in one more batch
decode, the seconds spent in the model's own calls of the decoding interface (``encode``, ``step``,
``reorder``), the rest being beam search's bookkeeping. With ``--profile``, each
model's batch decode once more under PyTorch's profiler: which operators take its time.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import statistics  # noqa: E402

import torch  # noqa: E402
from bench.common import CHECKPOINTS, corpus, percentiles, seconds  # noqa: E402
from bench.products import record  # noqa: E402
from model.corpus.parallel import pad  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402

NAMES = "everyday-rnnsearch-en-fr,everyday-rnnencdec-en-fr"  # the app's default pair
SENTENCE = ("A young man in a red shirt and a black hat is riding a bicycle down a busy street "
            "while two women watch him from the corner.")  # 25 words
LONG = (SENTENCE + " A little girl in a pink dress is climbing the stairs of a wooden playhouse while her "
        "father sits on a bench and a brown dog sleeps in the grass.")  # 55 words


def batch_cli(name: str, sentences: list[str]) -> dict:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "model.translate", "--checkpoint", str(CHECKPOINTS / name),
                           "--beam", "5"], input="\n".join(sentences) + "\n", capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[1])
    elapsed = time.perf_counter() - start
    assert len(done.stdout.splitlines()) == len(sentences)
    return {"bench": "batch_cli_beam5", "model": name, "sentences": len(sentences), "seconds": round(elapsed, 2),
            "sentences_per_s": round(len(sentences) / elapsed, 1)}


def interactive(translators: list[Translator], repeats: int, sentence: str) -> dict:
    cfg = SearchConfig(beam=5, trace=True)
    for t in translators:
        t.translate([sentence], cfg)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for t in translators:
            t.translate([sentence], cfg)
        times.append((time.perf_counter() - start) * 1000)
    return {"bench": "interactive_both_models_beam5_traced", "words": len(sentence.split()), **percentiles(times)}


def evaluate_page(translators: list[Translator], sentences: list[str]) -> dict:
    elapsed = seconds(lambda: [t.translate(sentences, SearchConfig(beam=5, trace=True)) for t in translators])
    return {"bench": "evaluate_both_models_beam5_traced", "sentences": len(sentences), "seconds": round(elapsed, 1)}


PRODUCT_SENTENCE = ("A man in an orange hat starring at something while a young boy and a woman in a red dress walk "
                    "down the busy street near buses.")  # 27 words


def decode_works(tr: Translator, captions: list[str], outputs: dict) -> dict:
    """Two timed works for ``bench.common.alternate``, each taking the way and returning seconds:
    ``PRODUCT_SENTENCE`` decoded as the page does (beam 5, traced; the median of 5), and
    ``captions`` as the command line does (beam 5, no traces, 64 a batch), whose translations go
    to ``outputs[way]``."""
    traced, plain = SearchConfig(beam=5, trace=True), SearchConfig(beam=5, trace=False)

    def batch(way: str) -> None:
        outputs[way] = [t.translation for t in tr.translate(captions, plain, batch_size=64)]

    return {"interactive_decode": lambda way: statistics.median(
                seconds(lambda: tr.translate([PRODUCT_SENTENCE], traced)) for _ in range(5)),
            "batch_decode": lambda way: seconds(lambda: batch(way))}


def products(translators: list[Translator], repeats: int) -> dict:
    cfg = SearchConfig(beam=5, trace=True)
    for t in translators:
        t.translate([PRODUCT_SENTENCE], cfg)
    found = record(lambda: [t.translate([PRODUCT_SENTENCE], cfg) for t in translators])
    decode, replay = [], []
    for _ in range(repeats):  # a decode, then its products, in turn: the machine's drift reaches both alike
        start = time.perf_counter()
        for t in translators:
            t.translate([PRODUCT_SENTENCE], cfg)
        decode.append(time.perf_counter() - start)
        replay.append(found.replay())
    decode_ms, replay_ms = statistics.median(decode) * 1000, statistics.median(replay) * 1000
    return {"bench": "interactive_decode_vs_its_products", "words": len(PRODUCT_SENTENCE.split()),
            "decode_ms": round(decode_ms, 1), "products_ms": round(replay_ms, 1),
            "ratio": round(statistics.median(d / r for d, r in zip(decode, replay)), 2),  # of each pair
            "product_calls": len(found.calls), "gflop": round(found.gflop, 3), "threads": torch.get_num_threads()}


@torch.inference_mode()
def encode_only(translator: Translator, captions: list[str]) -> None:
    """The encoder's part of a batch decode: the same length-sorted batches of 64, encoded only."""
    ids = sorted((translator.source_ids(c)[0] for c in captions if c.strip()), key=len)
    for start in range(0, len(ids), 64):
        chunk = ids[start:start + 64]
        translator.model.encode(pad(chunk), torch.tensor([len(s) for s in chunk]))


def operator_shares(translator: Translator, captions: list[str], top: int = 8) -> dict:
    """One batch decode (beam 5, no traces, 64 a batch) under ``torch.profiler``: the operators
    taking the most time, each with its share of the whole (self time, so no time counts twice)."""
    from torch.profiler import ProfilerActivity, profile

    plain = SearchConfig(beam=5, trace=False)
    translator.translate(captions[:64], plain)  # warm
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        translator.translate(captions, plain, batch_size=64)
    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in events)
    return {"bench": "batch_operator_shares", "model": translator.name, "sentences": len(captions),
            "seconds": round(total / 1e6, 2),
            "operators": {e.key: round(e.self_cpu_time_total / total, 3) for e in events[:top]}}


def interface_seconds(translator: Translator, captions: list[str]) -> dict[str, float]:
    """One batch decode (beam 5, no traces, 64 a batch) with the model's ``encode``, ``step`` and
    ``reorder`` timed (each wrapped on the instance, unwrapped after): seconds in each, and the
    rest of the batch time (beam search's pruning and bookkeeping)."""
    model, spent = translator.model, {"encode": 0.0, "step": 0.0, "reorder": 0.0}

    def timed(name: str, method):
        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - start
        return call

    for name in spent:
        setattr(model, name, timed(name, getattr(model, name)))
    try:
        total = seconds(lambda: translator.translate(captions, SearchConfig(beam=5, trace=False), batch_size=64))
    finally:
        for name in spent:
            delattr(model, name)
    return {**{f"{name}_s": round(value, 2) for name, value in spent.items()},
            "search_rest_s": round(total - sum(spent.values()), 2)}


def model_comparison(folders: list[Path], captions: list[str], rounds: int) -> dict:
    """``--models``: each model's interactive and batch decoding, taking turns (``alternate``)."""
    from bench.common import alternate

    translators = {folder.name: Translator.from_checkpoint(folder) for folder in folders}
    traced, plain = SearchConfig(beam=5, trace=True), SearchConfig(beam=5, trace=False)
    for tr in translators.values():
        tr.translate(captions[:64], plain, batch_size=64)  # warm
    faults: dict[str, list[int]] = {name: [] for name in translators}

    def batch(name: str) -> float:
        """The batch decode's seconds; its minor page faults go into ``faults``."""
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        elapsed = seconds(lambda: translators[name].translate(captions, plain, batch_size=64))
        faults[name].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        return elapsed

    works = {"interactive_traced_27_words_s": lambda name: statistics.median(
                 seconds(lambda: translators[name].translate([PRODUCT_SENTENCE], traced)) for _ in range(5)),
             "batch_beam5_s": batch,
             "batch_encoder_s": lambda name: seconds(lambda: encode_only(translators[name], captions))}
    found = alternate({name: lambda: None for name in translators}, works, rounds)
    first = next(iter(translators))
    products = {name: record(lambda: tr.translate(captions, plain, batch_size=64)) for name, tr in translators.items()}
    replayed = {name: statistics.median(p.replay() for _ in range(3)) for name, p in products.items()}
    parts = {name: interface_seconds(tr, captions) for name, tr in translators.items()}
    return {"bench": "model_comparison", "sentences": len(captions), "rounds": rounds,
            "threads": torch.get_num_threads(),
            "models": {name: {"interactive_ms": round(found["interactive_traced_27_words_s"][name] * 1000, 1),
                              "batch_sentences_per_s": round(len(captions) / found["batch_beam5_s"][name], 1),
                              "interactive_vs_first": round(found["interactive_traced_27_words_s"][name]
                                                            / found["interactive_traced_27_words_s"][first], 2),
                              "batch_speed_vs_first": round(found["batch_beam5_s"][first]
                                                            / found["batch_beam5_s"][name], 2),
                              "batch_encoder_share": round(found["batch_encoder_s"][name]
                                                           / found["batch_beam5_s"][name], 3),
                              "batch_minor_page_faults": int(statistics.median(faults[name])),
                              "batch_products_s": round(replayed[name], 2),
                              "batch_products_gflop": round(products[name].gflop, 1),
                              "batch_besides_products_s": round(found["batch_beam5_s"][name] - replayed[name], 2),
                              "batch_interface_s": parts[name]}
                       for name in translators}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--names", default=NAMES, help="comma-separated checkpoint folders under checkpoints/")
    parser.add_argument("--only-products", action="store_true", help="only the decode beside its products")
    parser.add_argument("--models", help="comma-separated names under checkpoints/ or folders: compare them in turns")
    parser.add_argument("--rounds", type=int, default=4, help="--models: rounds of turns")
    parser.add_argument("--sentences", type=int, default=1000, help="--models: captions decoded per batch work")
    parser.add_argument("--profile", action="store_true",
                        help="--models: then each model's batch decode once under PyTorch's profiler: its operators' shares")
    args = parser.parse_args()
    names = args.names.split(",")
    if args.models:
        folders = [Path(m) if Path(m).is_dir() else CHECKPOINTS / m for m in args.models.split(",")]
        sentences, _, origin = corpus("test_2016_flickr")
        print(json.dumps({**model_comparison(folders, sentences[:args.sentences], args.rounds), "data": origin}))
        if args.profile:
            for folder in folders:
                print(json.dumps(operator_shares(Translator.from_checkpoint(folder), sentences[:args.sentences])))
        return
    if args.only_products:
        print(json.dumps(products([Translator.from_checkpoint(CHECKPOINTS / n) for n in names], args.repeats)))
        return
    sentences, _, origin = corpus("test_2016_flickr")
    for name in names:
        print(json.dumps({**batch_cli(name, sentences), "data": origin}), flush=True)
    translators = [Translator.from_checkpoint(CHECKPOINTS / n) for n in names]
    for sentence in (SENTENCE, LONG):
        print(json.dumps(interactive(translators, args.repeats, sentence)), flush=True)
    print(json.dumps({**evaluate_page(translators, sentences), "data": origin}), flush=True)
    print(json.dumps(products(translators, args.repeats)), flush=True)


if __name__ == "__main__":
    main()
