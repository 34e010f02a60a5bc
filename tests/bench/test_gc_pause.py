"""bench/gc_pause.py's hook counts the full collections, and only those."""
import gc

import pytest

from bench.gc_pause import FullCollections


@pytest.fixture
def no_automatic_collections():
    """Only the test's own collections run (an automatic one could fall inside)."""
    gc.disable()
    yield
    gc.enable()


@pytest.mark.parametrize("generations, full", [((0,), 0), ((1,), 0), ((2,), 1), ((0, 2, 1, 2), 2)])
def test_only_generation_2_collections_are_counted(generations, full, no_automatic_collections):
    with FullCollections() as pauses:
        for generation in generations:
            gc.collect(generation)
    assert len(pauses.found) == full and all(p >= 0 for p in pauses.found)
    assert pauses._hook not in gc.callbacks  # removed on leaving


def test_no_full_collection_is_counted_outside(no_automatic_collections):
    with FullCollections() as pauses:
        pass
    gc.collect()
    assert pauses.found == []
