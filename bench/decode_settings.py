"""Two decoding settings the model does not take, each measured against its absence in the same hour.

    python bench/decode_settings.py [--sentences 1000] [--rounds 3] [--processes 3]

Beam 5, 64 captions a batch, no traces, ``--sentences`` test_2016_flickr captions (synthetic
stand-ins without Multi30k, ``bench/common.py``), 2 threads. Prints JSON lines:

- ``attention_kernel``: the shipped everyday Transformer in one process, decoding the captions in
  turns with PyTorch's fused attention kernel (what ``model/network/multi_head_attention.py``
  calls where no weights are wanted: the decoder's self-attention, the encoder) and with eq. 1's
  two products in its place (swapped in by this script), RNNsearch's decode beside them,
  ``--rounds`` rounds: each way's median seconds, and whether the two ways wrote the same
  translations;
- ``allocator``: ``--processes`` fresh processes that keep the memory they free and as many with
  the C library's defaults, alternating, each decoding the captions with both models three times:
  the median seconds and minor page faults per model. glibc serves a block over its mmap
  threshold by mapping fresh pages and hands them back when it is freed; a decode allocates and
  frees blocks of several MB at every step (the (rows, V) log-probabilities, each layer's cache),
  so each is faulted in afresh. ``keep_freed_memory`` fixes the threshold at its maximum (32 MiB)
  and stops trimming the heap, so freed blocks serve the next ones (glibc only).
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from bench.common import CHECKPOINTS, corpus  # noqa: E402
from model.decoding.search import SearchConfig  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from model.network import multi_head_attention  # noqa: E402

RNNSEARCH, TRANSFORMER = "everyday-rnnsearch-en-fr", "everyday-transformer-en-fr"
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>
PLAIN = SearchConfig(beam=5, trace=False)


def decode(translator: Translator, captions: list[str]) -> tuple[float, int, list[str]]:
    """Seconds, minor page faults and translations of one batch decode."""
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    out = [t.translation for t in translator.translate(captions, PLAIN, batch_size=64)]
    return time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults, out


def explicit_products(q, k, v, attn_mask=None):
    """softmax(q k^T / sqrt(d_k)) v (eq. 1) as two products, in the fused kernel's place."""
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def attention_kernel(captions: list[str], rounds: int) -> dict:
    """The Transformer with the fused kernel and with the explicit products, in turns."""
    models = {name: Translator.from_checkpoint(CHECKPOINTS / name) for name in (TRANSFORMER, RNNSEARCH)}
    fused = multi_head_attention.F
    ways = {"fused_kernel": fused, "explicit_products": SimpleNamespace(scaled_dot_product_attention=explicit_products)}
    seconds: dict[str, list[float]] = {**{way: [] for way in ways}, "rnnsearch": []}
    outputs: dict[str, list[str]] = {}
    for name in models:
        models[name].translate(captions[:64], PLAIN, batch_size=64)  # warm
    try:
        for _ in range(rounds):
            for way, functions in ways.items():
                multi_head_attention.F = functions
                took, _, outputs[way] = decode(models[TRANSFORMER], captions)
                seconds[way].append(took)
            seconds["rnnsearch"].append(decode(models[RNNSEARCH], captions)[0])
    finally:
        multi_head_attention.F = fused
    return {"bench": "attention_kernel", "sentences": len(captions), "rounds": rounds,
            "median_s": {way: round(statistics.median(s), 2) for way, s in seconds.items()},
            "runs_s": {way: [round(x, 2) for x in s] for way, s in seconds.items()},
            "same_translations": outputs["fused_kernel"] == outputs["explicit_products"]}


def keep_freed_memory() -> None:
    """glibc's mmap threshold fixed at its maximum and its heap never trimmed (module docstring)."""
    import ctypes

    mallopt = ctypes.CDLL("libc.so.6").mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    if not (mallopt(M_MMAP_THRESHOLD, 32 * 2 ** 20) and mallopt(M_TRIM_THRESHOLD, 512 * 2 ** 20)):
        raise OSError("mallopt refused the setting")


def child(captions: list[str], keep: bool) -> dict:
    """One fresh process's decodes (``allocator``'s part)."""
    if keep:
        keep_freed_memory()
    models = {name: Translator.from_checkpoint(CHECKPOINTS / name) for name in (TRANSFORMER, RNNSEARCH)}
    found: dict[str, list[tuple[float, int]]] = {name: [] for name in models}
    for name in models:
        models[name].translate(captions[:64], PLAIN, batch_size=64)  # warm
    for _ in range(3):
        for name, translator in models.items():
            took, faults, _ = decode(translator, captions)
            found[name].append((took, faults))
    return {name: {"s": statistics.median(t for t, _ in runs), "faults": statistics.median(f for _, f in runs)}
            for name, runs in found.items()}


def allocator(sentences: int, processes: int) -> dict:
    """Fresh processes with and without the allocator setting, alternating."""
    found: dict[str, list[dict]] = {"kept": [], "system_default": []}
    for _ in range(processes):
        for way in found:
            command = [sys.executable, __file__, "--child", way, "--sentences", str(sentences)]
            found[way].append(json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout))
    return {"bench": "allocator", "sentences": sentences, "processes": processes,
            **{way: {name: {"median_s": round(statistics.median(r[name]["s"] for r in runs), 2),
                            "median_minor_page_faults": int(statistics.median(r[name]["faults"] for r in runs))}
                     for name in (TRANSFORMER, RNNSEARCH)}
               for way, runs in found.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3, help="attention kernel: rounds of turns")
    parser.add_argument("--processes", type=int, default=3, help="allocator: fresh processes each way")
    parser.add_argument("--child", choices=("kept", "system_default"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(2)
    captions = corpus("test_2016_flickr")[0][:args.sentences]
    if args.child:
        print(json.dumps(child(captions, args.child == "kept")))
        return
    print(json.dumps(attention_kernel(captions, args.rounds)), flush=True)
    print(json.dumps(allocator(args.sentences, args.processes)))


if __name__ == "__main__":
    main()
