"""The per-process decode limit: order, waiting reports, and giving a place up."""
import threading
import time
from contextlib import contextmanager

import pytest

from model.search import SearchConfig
from model.translate import Translator
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
