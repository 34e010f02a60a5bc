"""The per-process decode limit: order, waiting reports, and giving a place up.

Threads hold their places until an event releases them; the tests wait on events and on the
gate's own counts (``polls``, ``queued``), never on the clock."""
import threading
from contextlib import contextmanager

import pytest

from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from viz.serving import decodes
from viz.serving.admission import DecodeGate
from viz.serving.decodes import QueueNotice, QueuedSlot, Request, load_translator, side_by_side, shared_decodes
from viz.serving.settings import AppSettings
from viz.serving.shared_results import TRANSLATIONS, result_store

from ..conftest import start_app

WAIT_S = 10  # the most any event may take before the test fails (not a timing assumption: a hang guard)


def until(predicate, gate: DecodeGate) -> None:
    """Block until ``predicate()`` holds, re-checked whenever the gate's state changes."""
    assert gate.wait_until(predicate, WAIT_S), "the gate never reached the expected state"


@contextmanager
def recorded(gate: DecodeGate, name: str, events: list, told: dict, release: threading.Event):
    """The gate's slot, logging when ``name`` starts and ends and what it was told while queued;
    it holds its place until ``release`` is set."""
    with gate.slot(on_wait=lambda n: told.setdefault(name, n)):
        events.append(f"{name} start")
        assert release.wait(WAIT_S)
        yield
        events.append(f"{name} end")


def test_with_limit_one_two_decodes_run_one_after_the_other(tiny_checkpoints):
    """Two simultaneous translations through the gate: the second starts only after the first
    ends, and it is told it waited behind one request."""
    gate = DecodeGate(1, poll_s=0.01)
    translator = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    events, told = [], {}
    releases = {"first": threading.Event(), "second": threading.Event()}
    releases["second"].set()

    def decode(name):
        translator.translate(["a dog runs in the park"], SearchConfig(beam=3),
                             slot=lambda: recorded(gate, name, events, told, releases[name]))

    first = threading.Thread(target=decode, args=("first",))
    first.start()
    until(lambda: gate.running == 1, gate)
    second = threading.Thread(target=decode, args=("second",))
    second.start()
    until(lambda: gate.queued == 1, gate)
    releases["first"].set()
    first.join(WAIT_S)
    second.join(WAIT_S)
    assert events == ["first start", "first end", "second start", "second end"]
    assert told == {"second": 1}


def test_a_limit_of_two_lets_two_in_and_queues_the_third():
    gate = DecodeGate(2, poll_s=0.01)
    inside, told, release, heard = [], [], threading.Event(), threading.Event()

    def hold(name):
        with gate.slot(on_wait=lambda n: (told.append(n), heard.set())):
            inside.append(name)
            release.wait(WAIT_S)

    threads = [threading.Thread(target=hold, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    until(lambda: gate.running == 2, gate)
    third = threading.Thread(target=hold, args=("c",))
    third.start()
    assert heard.wait(WAIT_S)
    assert sorted(inside) == ["a", "b"] and told == [1] and gate.queued == 1
    release.set()
    for t in threads + [third]:
        t.join(WAIT_S)
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
    told = []
    with gate.slot(on_wait=told.append):  # the place is free again: admitted without waiting
        assert told == [] and gate.running == 1


def test_the_limit_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        DecodeGate(0)


def test_a_request_for_two_places_waits_for_both_and_keeps_its_turn():
    """With one of two places taken, a two-place request queues; a one-place request that comes
    after it waits behind it (first come, first served) although a place is free: it is told it
    must wait, and still has not started when the first place is given back."""
    gate = DecodeGate(2, poll_s=0.01)
    order, release = [], threading.Event()
    told = {"two places": threading.Event(), "one more": threading.Event()}

    def hold(name, places):
        with gate.slot(places=places, on_wait=lambda n: told[name].set()):
            order.append(name)
            release.wait(WAIT_S)

    first = threading.Thread(target=hold, args=("one place", 1))
    first.start()
    until(lambda: gate.running == 1, gate)
    later = [threading.Thread(target=hold, args=args) for args in (("two places", 2), ("one more", 1))]
    for thread in later:
        thread.start()
        until(lambda: gate.queued == later.index(thread) + 1, gate)
    assert all(event.wait(WAIT_S) for event in told.values())  # both refused at least once
    assert order == ["one place"] and gate.queued == 2 and gate.running == 1  # the free place stays free
    release.set()
    for thread in [first] + later:
        thread.join(WAIT_S)
    assert order == ["one place", "two places", "one more"]


@pytest.mark.parametrize("places", [0, 3])
def test_a_request_takes_one_to_limit_places(places):
    with pytest.raises(ValueError, match="1 to 2 places"):
        with DecodeGate(2).slot(places=places):
            pass


def test_side_by_side_runs_the_calls_at_once_and_keeps_their_order():
    """Each call waits at a barrier for the other: run one after the other, the first would
    time out there."""
    barrier = threading.Barrier(2, timeout=WAIT_S)

    def call(value):
        barrier.wait()
        return value

    assert side_by_side([lambda: call("a"), lambda: call("b")]) == ["a", "b"]


def test_side_by_side_runs_each_call_as_carry_wrapped_it_in_the_calling_thread():
    """``carry`` wraps every call before any thread starts (where a page captures its script
    context), and the worker threads run what it returned."""
    caller, wrapped_in, ran_in = threading.get_ident(), [], {}

    def carry(call):
        wrapped_in.append(threading.get_ident())
        return lambda: ("carried", call())

    def call(value):
        ran_in[value] = threading.get_ident()
        return value

    assert side_by_side([lambda: call("a"), lambda: call("b"), lambda: call("c")], carry=carry) == \
        [("carried", "a"), ("carried", "b"), ("carried", "c")]
    assert wrapped_in == [caller] * 3 and sorted(ran_in) == ["a", "b", "c"]


def test_side_by_side_raises_the_first_failure():
    def fail(message):
        raise ValueError(message)

    with pytest.raises(ValueError, match="first"):
        side_by_side([lambda: fail("first"), lambda: fail("second"), lambda: 3])


def test_translate_all_gives_each_model_its_own_decode(app_env):
    """Two models decoded side by side give the traces each gives alone, in request order."""
    search = SearchConfig(beam=3)
    requests = [Request(name, "a dog runs in the park", search) for name in ("rnnencdec-tiny", "rnnsearch-tiny")]
    both = shared_decodes(requests, app_env)
    assert [r.name for r in both] == [r.name for r in requests]
    for request, result in zip(requests, both):  # alone on one torch thread too: float sums depend on the count
        alone = side_by_side([lambda: load_translator(request.name, app_env).translate([request.text], search)[0]])[0]
        assert result.trace.to_json() == alone.to_json()


@pytest.mark.parametrize("slots", [2, 3])
def test_a_session_asking_for_a_request_being_decoded_gets_its_result(checkpoint_dir, monkeypatch, slots):
    """Two sessions ask for the same sentence at once: the second waits for the first's batch
    (and is told so), then takes the stored result instead of decoding again."""
    settings = start_app(monkeypatch, "--checkpoints", checkpoint_dir, "--decode-slots", slots)
    result_store(TRANSLATIONS)._items.clear()
    decoded, release, changed = [], threading.Event(), threading.Condition()
    real = decodes.decode_batch

    def slow_decode(path, requests):
        with changed:
            decoded.append(path.name)
            changed.notify_all()
        release.wait(WAIT_S)
        return real(path, requests)

    monkeypatch.setattr(decodes, "decode_batch", slow_decode)
    requests = [Request(name, f"two dogs play {slots}", SearchConfig(beam=2))
                for name in ("rnnencdec-tiny", "rnnsearch-tiny")]
    results, told = {}, {"first": [], "second": []}

    def ask(who):
        notice = lambda: QueueNotice(told[who].append, lambda: told[who].append("admitted"))  # noqa: E731
        results[who] = shared_decodes(requests, settings, on_queued=notice)

    first = threading.Thread(target=ask, args=("first",))
    first.start()
    with changed:
        assert changed.wait_for(lambda: len(decoded) == 2, WAIT_S)  # both of its batches are decoding
    second = threading.Thread(target=ask, args=("second",))
    second.start()
    for request in requests:  # the second session's requests wait beside the batches being decoded
        batcher = decodes._batcher(decodes.resolve_checkpoint(request.name, settings), request.search, None, False)
        assert batcher.wait_until(lambda b: b.waiting == 1, WAIT_S)
    release.set()
    first.join(WAIT_S)
    second.join(WAIT_S)
    assert sorted(decoded) == ["rnnencdec-tiny", "rnnsearch-tiny"]  # nothing decoded twice
    assert [r.trace.to_json() for r in results["second"]] == [r.trace.to_json() for r in results["first"]]
    assert told["first"].count("admitted") >= 1 and decodes.TOGETHER not in told["first"]
    assert told["second"][:2] == [decodes.TOGETHER] * 2 and told["second"][-1] == "admitted"


@pytest.mark.parametrize("slots", [1, 4, 7])
def test_each_decode_slots_setting_has_its_own_gate(slots):
    gate = QueuedSlot(AppSettings(decode_slots=slots)).gate
    assert gate.limit == slots and gate is QueuedSlot(AppSettings(decode_slots=slots)).gate


def test_a_waiting_request_is_told_each_new_count_once():
    """Over many polls, the third request in line hears "2 ahead", then "1 ahead", nothing more."""
    gate = DecodeGate(1, poll_s=0.005)
    told = {"a": [], "b": []}
    releases = {name: threading.Event() for name in ("holder", "a", "b")}

    def hold(name):
        with gate.slot(on_wait=told[name].append if name in told else None):
            releases[name].wait(WAIT_S)

    threads = {name: threading.Thread(target=hold, args=(name,)) for name in releases}
    for name in ("holder", "a", "b"):
        threads[name].start()
        until(lambda: gate.queued == ("holder", "a", "b").index(name), gate)
    polls = gate.polls
    until(lambda: gate.polls >= polls + 20, gate)  # twenty polls while nothing moves
    releases["holder"].set()
    until(lambda: gate.queued == 1, gate)
    polls = gate.polls
    until(lambda: gate.polls >= polls + 20, gate)
    releases["a"].set()
    releases["b"].set()
    for thread in threads.values():
        thread.join(WAIT_S)
    assert told == {"a": [1], "b": [2, 1]}
