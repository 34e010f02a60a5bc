"""The serving layer's memo: one computation per key however many callers ask at once, bounded,
with a time to live read from a clock the tests turn by hand (no sleeps)."""
import threading

import pytest

from viz.serving.shared_cache import SharedCache, shared

WAIT_S = 10  # a hang guard for events, not a timing assumption


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def counted(calls: list):
    def compute(*args, **kwargs):
        calls.append((args, tuple(sorted(kwargs.items()))))
        return [args, kwargs]  # a new object per computation: identity tells a stored result from a new one

    return compute


def test_a_result_is_computed_once_per_key_and_shared():
    calls = []
    cache = SharedCache(counted(calls), max_entries=4)
    first = cache("a", n=3)
    assert cache("a", n=3) is first  # the same object, not a copy
    assert cache("a", n=5) is not first and cache("b", n=3) is not first
    assert calls == [(("a",), (("n", 3),)), (("a",), (("n", 5),)), (("b",), (("n", 3),))]


@pytest.mark.parametrize("max_entries, asked, computed", [
    (2, "abac", "abc"),  # a was used after b, so b goes when c comes
    (2, "abcb", "abc"),
    (2, "abca", "abca"),  # a was the least recently used when c came
    (3, "abcdab", "abcdab"),  # d pushed a out, a pushed b out
    (1, "aab", "ab"),
])
def test_the_least_recently_used_entry_goes_past_max_entries(max_entries, asked, computed):
    calls = []
    cache = SharedCache(counted(calls), max_entries=max_entries)
    for key in asked:
        cache(key)
    assert "".join(args[0] for args, _ in calls) == computed
    assert cache.size == min(max_entries, len(set(asked)))


@pytest.mark.parametrize("ttl_s, waited, recomputed", [
    (300, 299.5, False),
    (300, 300, True),
    (7, 6.9, False),
    (7, 11, True),
])
def test_an_entry_older_than_its_ttl_is_computed_again(ttl_s, waited, recomputed):
    calls, clock = [], Clock()
    cache = SharedCache(counted(calls), max_entries=5, ttl_s=ttl_s, clock=clock)
    first = cache("x")
    clock.now += waited
    assert (cache("x") is not first) is recomputed and len(calls) == 1 + recomputed


def test_a_failed_computation_stores_nothing():
    attempts = []

    @shared(max_entries=3)
    def flaky(key):
        attempts.append(key)
        if len(attempts) == 1:
            raise OSError("the disk hiccupped")
        return key.upper()

    with pytest.raises(OSError):
        flaky("k")
    assert flaky("k") == "K" and flaky("k") == "K" and attempts == ["k", "k"]


def test_callers_asking_at_once_wait_for_one_computation():
    """Five threads ask for the same key while its computation is held open: all of them are
    seen waiting before it finishes, it runs once, and every caller gets its one result."""
    calls, entered, release = [], threading.Event(), threading.Event()

    def compute(key):
        calls.append(key)
        entered.set()
        assert release.wait(WAIT_S)
        return object()

    cache = SharedCache(compute, max_entries=2)
    results = []
    threads = [threading.Thread(target=lambda: results.append(cache("model"))) for _ in range(5)]
    threads[0].start()
    assert entered.wait(WAIT_S)
    for thread in threads[1:]:
        thread.start()
    assert cache.wait_until(lambda: cache.computing == 5, WAIT_S)  # one computing, four waiting for it
    release.set()
    for thread in threads:
        thread.join(WAIT_S)
    assert calls == ["model"] and len(results) == 5 and len({id(r) for r in results}) == 1
    assert cache.computing == 0


def test_different_keys_compute_at_the_same_time():
    """Two keys' computations each wait for the other to start: one lock for all keys would
    leave the second waiting behind the first, and the barrier would time out."""
    barrier = threading.Barrier(2, timeout=WAIT_S)
    cache = SharedCache(lambda key: (barrier.wait(), key)[1], max_entries=4)
    results = {}
    threads = [threading.Thread(target=lambda k=k: results.setdefault(k, cache(k))) for k in ("left", "right")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
    assert results == {"left": "left", "right": "right"}


def test_a_key_function_stands_in_for_unhashable_arguments():
    calls = []
    cache = SharedCache(lambda spec: calls.append(spec) or len(calls), max_entries=2,
                        key=lambda spec: tuple(sorted(spec.items())))
    assert cache({"path": "a", "n": 1}) == cache({"n": 1, "path": "a"}) == 1 and len(calls) == 1


def test_clear_forgets_every_result():
    calls = []
    cache = SharedCache(counted(calls), max_entries=3)
    cache("a")
    cache.clear()
    cache("a")
    assert len(calls) == 2


@pytest.mark.parametrize("kwargs", [{"max_entries": 0}, {"ttl_s": 0}, {"ttl_s": -5}])
def test_bounds_must_be_positive(kwargs):
    with pytest.raises(ValueError, match="must be"):
        SharedCache(lambda: None, **kwargs)
