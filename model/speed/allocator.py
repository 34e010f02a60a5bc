"""Keep the memory a process frees for its next tensors, instead of handing it back to the system.

The C library on Linux (glibc) serves a large block (over 128 KiB at first) by mapping fresh
pages and hands them back when the block is freed; it then raises that threshold to the block's
size, and gives back the free top of its heap past twice the threshold. A decode allocates and
frees blocks of several MB at every step (the (rows, V) log-probabilities, each layer's
self-attention cache, which grows a position a step), so sizes keep passing the threshold, and
every page of a new block is faulted in and zeroed by the kernel before the first write: about
120,000 page faults (0.5 GB) in a beam-5 decode of 500 captions with the Transformer, and up to
90,000 with RNNsearch. ``keep_freed_memory`` fixes the threshold at its maximum (32 MiB) and
stops the trimming, so freed blocks serve the next allocations: then a few hundred faults, and
both decodes 5-15% faster (``python bench/decode_speed.py --models ...`` prints the faults;
docs/performance.md). The process keeps its peak memory instead of shrinking after it; the
largest blocks (a model's weights, a tensor of 32 MiB or more) are still mapped and given back
as before.

Process-wide, so called by the command-line tools that decode, never on import: a notebook that
imports ``model`` keeps its own settings. Not by the app's server either: there it made a new
visitor's text box later in paired browser runs (medians 1.64-2.21 s against 1.61-1.74 s without
it, ``bench/page_speed.py``), and the page decodes one sentence at a time, where few blocks pass
the threshold. Elsewhere than glibc (macOS, musl) it does nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
TRIM_THRESHOLD = 512 * 1024 * 1024  # free memory past this at the heap's top still goes back

_kept = False


def keep_freed_memory() -> bool:
    """Set the C library's allocator to reuse freed memory (module docstring), once per process;
    whether it is set (False where the C library is not glibc)."""
    global _kept
    if _kept:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _kept = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _kept
