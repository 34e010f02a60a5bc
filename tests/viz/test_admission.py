"""The per-process decode limit: order, waiting reports, and giving a place up."""
import threading
import time
from contextlib import contextmanager

import pytest

from model.search import SearchConfig
from model.translate import Translator
from viz import common
from viz.admission import DecodeGate


@contextmanager
def recorded(gate: DecodeGate, name: str, events: list, told: dict, hold_s: float):
    """The gate's slot, logging when ``name`` starts and ends and what it was told while queued."""
    with gate.slot(on_wait=lambda n: told.setdefault(name, n)):
        events.append(f"{name} start")
        time.sleep(hold_s)  # hold the place while the other request arrives
        yield
        events.append(f"{name} end")


def test_with_limit_one_two_decodes_run_one_after_the_other(tiny_checkpoints):
    """Two simultaneous translations through the gate: the second starts only after the first
    ends, and it is told it waited behind one request."""
    gate = DecodeGate(1, poll_s=0.01)
    translator = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    events, told = [], {}

    def decode(name, hold_s):
        translator.translate(["a dog runs in the park"], SearchConfig(beam=3),
                             slot=lambda: recorded(gate, name, events, told, hold_s))

    first = threading.Thread(target=decode, args=("first", 0.3))
    first.start()
    while not events:
        time.sleep(0.01)
    second = threading.Thread(target=decode, args=("second", 0.0))
    second.start()
    first.join(10)
    second.join(10)
    assert events == ["first start", "first end", "second start", "second end"]
    assert told == {"second": 1}


def test_a_limit_of_two_lets_two_in_and_queues_the_third():
    gate = DecodeGate(2, poll_s=0.01)
    inside, told, release = [], [], threading.Event()

    def hold(name):
        with gate.slot(on_wait=told.append):
            inside.append(name)
            release.wait(5)

    threads = [threading.Thread(target=hold, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    while len(inside) < 2:
        time.sleep(0.01)
    third = threading.Thread(target=hold, args=("c",))
    third.start()
    while not told:
        time.sleep(0.01)
    assert inside == ["a", "b"] and set(told) == {1} and gate.queued == 1
    release.set()
    for t in threads + [third]:
        t.join(5)
    assert sorted(inside) == ["a", "b", "c"] and gate.queued == 0


def test_a_request_stopped_while_queued_gives_its_place_up():
    gate = DecodeGate(1, poll_s=0.01)
    with gate.slot():
        def stopped(n):
            raise KeyboardInterrupt  # what a Streamlit rerun does to a waiting script thread

        with pytest.raises(KeyboardInterrupt):
            with gate.slot(on_wait=stopped):
                pass
        assert gate.queued == 0
    with gate.slot() as waited:  # the place is free again
        assert waited < 1.0


def test_the_limit_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        DecodeGate(0)


def test_a_request_for_two_places_waits_for_both_and_keeps_its_turn():
    """With one of two places taken, a two-place request queues; a one-place request that comes
    after it waits behind it (first come, first served) although a place is free."""
    gate = DecodeGate(2, poll_s=0.01)
    order, release = [], threading.Event()

    def hold(name, places):
        with gate.slot(places=places):
            order.append(name)
            release.wait(5)

    first = threading.Thread(target=hold, args=("one place", 1))
    first.start()
    while not order:
        time.sleep(0.01)
    later = [threading.Thread(target=hold, args=args) for args in (("two places", 2), ("one more", 1))]
    for thread in later:
        thread.start()
        while gate.queued < later.index(thread) + 1:
            time.sleep(0.01)
    time.sleep(0.05)  # the free place stays free: the two-place request is first in line
    assert order == ["one place"] and gate.queued == 2
    release.set()
    for thread in [first] + later:
        thread.join(5)
    assert order == ["one place", "two places", "one more"]


@pytest.mark.parametrize("places", [0, 3])
def test_a_request_takes_one_to_limit_places(places):
    with pytest.raises(ValueError, match="1 to 2 places"):
        with DecodeGate(2).slot(places=places):
            pass


def test_side_by_side_runs_the_calls_at_once_and_keeps_their_order():
    """Each call waits at a barrier for the other: run one after the other, the first would
    time out there."""
    barrier = threading.Barrier(2, timeout=5)

    def call(value):
        barrier.wait()
        return value

    assert common.side_by_side([lambda: call("a"), lambda: call("b")]) == ["a", "b"]


def test_side_by_side_raises_the_first_failure():
    def fail(message):
        raise ValueError(message)

    with pytest.raises(ValueError, match="first"):
        common.side_by_side([lambda: fail("first"), lambda: fail("second"), lambda: 3])


def test_translate_all_gives_each_model_its_own_decode(app_env):
    """Two models decoded side by side give the traces each gives alone, keyed by name."""
    names = ["rnnencdec-tiny", "rnnsearch-tiny"]
    settings = {"beam": 3, "length_norm": 1.0}
    both = common.translate_all(names, "a dog runs in the park", settings)
    assert list(both) == names
    for name in names:
        alone = common.load_translator(name).translate(["a dog runs in the park"], SearchConfig(**settings))[0]
        assert both[name][0].to_json() == alone.to_json()


def test_a_session_queued_behind_the_same_request_gets_its_result(app_env, monkeypatch):
    """Two sessions ask for the same sentence at once: the second waits at the gate while the
    first decodes, then takes the stored result instead of decoding again."""
    common.translations()._items.clear()
    decodes, entered, release = [], threading.Event(), threading.Event()
    real = common._decode

    def slow_decode(translator, *args):
        decodes.append(translator.arch)
        entered.set()
        release.wait(5)
        return real(translator, *args)

    monkeypatch.setattr(common, "_decode", slow_decode)
    monkeypatch.setenv("NMT_DECODE_SLOTS", "2")
    common.decode_gate.clear()
    names, results = ["rnnencdec-tiny", "rnnsearch-tiny"], []
    ask = lambda: results.append(common.translate_all(names, "two dogs play", {"beam": 2}))  # noqa: E731
    first = threading.Thread(target=ask)
    first.start()
    entered.wait(5)
    second = threading.Thread(target=ask)
    second.start()
    while common.decode_gate().queued == 0:
        time.sleep(0.01)
    release.set()
    first.join(10)
    second.join(10)
    common.decode_gate.clear()
    assert sorted(decodes) == ["rnnencdec", "rnnsearch"] and len(results) == 2
    assert all(results[1][n][0].to_json() == results[0][n][0].to_json() for n in names)


def test_a_waiting_request_is_told_each_new_count_once():
    """Over many polls, the third request in line hears "2 ahead", then "1 ahead", nothing more."""
    gate = DecodeGate(1, poll_s=0.005)
    told = {"a": [], "b": []}
    releases = {name: threading.Event() for name in ("holder", "a", "b")}

    def hold(name):
        with gate.slot(on_wait=told[name].append if name in told else None):
            releases[name].wait(5)

    threads = {name: threading.Thread(target=hold, args=(name,)) for name in releases}
    for name in ("holder", "a", "b"):
        threads[name].start()
        while gate.queued < ("holder", "a", "b").index(name):
            time.sleep(0.005)
    time.sleep(0.1)  # twenty polls while nothing moves
    releases["holder"].set()
    while gate.queued > 1:
        time.sleep(0.005)
    time.sleep(0.1)
    releases["a"].set()
    releases["b"].set()
    for thread in threads.values():
        thread.join(5)
    assert told == {"a": [1], "b": [2, 1]}
