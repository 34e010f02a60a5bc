"""The allocator setting the decoding entry points make (model/speed/allocator.py)."""
import ctypes.util
import resource
import sys

import pytest
import torch

from model.speed.allocator import keep_freed_memory

GLIBC = sys.platform.startswith("linux") and ctypes.util.find_library("c") is not None


def test_it_is_set_once_and_says_so():
    assert keep_freed_memory() == keep_freed_memory()  # a second call changes nothing


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
@pytest.mark.parametrize("megabytes", [3, 5, 7])
def test_a_freed_block_serves_the_next_one_that_fits(megabytes):
    """What the setting is for: memory freed serves the next block that fits in it (as a decode's
    next step's tensors), instead of new pages each faulted in afresh."""
    assert keep_freed_memory()
    pages = megabytes * 2 ** 20 // resource.getpagesize()
    torch.empty(2 * megabytes * 2 ** 18).fill_(1.0)  # twice the size, allocated, touched and freed
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.empty(megabytes * 2 ** 18).fill_(2.0)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < pages // 4, f"{faults} page faults for a {pages}-page block that was just freed"
