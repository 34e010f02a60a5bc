"""Requests decoded together: arrival order, the token bound, equal requests, errors and stopped
sessions (threads wait on the batcher's own state, never on the clock), and traces decoded in a
batch equal to those decoded alone."""
import threading

import numpy as np
import pytest

from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from viz.serving import decodes
from viz.serving.batching import Batcher
from viz.serving.decodes import Request
from viz.serving.shared_results import TRANSLATIONS, result_store

WAIT_S = 10  # a hang guard, not a timing assumption


class Held:
    """A ``run`` that records each batch and holds the first until released."""

    def __init__(self, fail_on=()):
        self.release, self.started, self.fail_on = threading.Event(), threading.Event(), set(fail_on)
        self.calls = []

    def __call__(self, items):
        self.calls.append(tuple(items))
        if len(self.calls) == 1:
            self.started.set()
            assert self.release.wait(WAIT_S)
        if self.fail_on & set(items):
            raise ValueError(f"cannot decode {sorted(self.fail_on & set(items))}")
        return [f"<{item}>" for item in items]


def ask(batcher, item, tokens, results, **kwargs):
    """``batcher.decode`` in a thread; its result or error lands in ``results[item]``."""
    def run():
        try:
            results[item] = batcher.decode(item, tokens, **kwargs)
        except BaseException as exc:  # noqa: BLE001  the test looks at it
            results[item] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def queue_behind_a_held_batch(batcher, run, items, tokens=None):
    """The first item decodes alone and is held; the others arrive one by one behind it."""
    results = {}
    threads = [ask(batcher, items[0], 1, results)]
    assert run.started.wait(WAIT_S)
    for k, item in enumerate(items[1:], 1):
        threads.append(ask(batcher, item, tokens[k] if tokens else 1, results))
        assert batcher.wait_until(lambda b: b.waiting == k, WAIT_S)
    return results, threads


def finish(run, threads):
    run.release.set()
    for thread in threads:
        thread.join(WAIT_S)
        assert not thread.is_alive()


def test_requests_that_wait_together_are_decoded_together_in_arrival_order():
    run = Held()
    batcher = Batcher(run)
    results, threads = queue_behind_a_held_batch(batcher, run, ["a", "c", "b", "d"])
    finish(run, threads)
    assert run.calls == [("a",), ("c", "b", "d")]
    assert results == {x: f"<{x}>" for x in "abcd"}


@pytest.mark.parametrize("tokens, max_tokens, batches", [
    ([1, 6, 6, 3], 10, [("a",), ("b",), ("c", "d")]),  # b and c together would pass 10
    ([1, 4, 3, 3], 10, [("a",), ("b", "c", "d")]),
    ([1, 15, 2, 2], 10, [("a",), ("b",), ("c", "d")]),  # one request above the bound still decodes, alone
    ([1, 2, 2, 2], 1, [("a",), ("b",), ("c",), ("d",)]),
])
def test_a_batch_holds_at_most_max_tokens(tokens, max_tokens, batches):
    run = Held()
    batcher = Batcher(run, max_tokens=max_tokens)
    results, threads = queue_behind_a_held_batch(batcher, run, ["a", "b", "c", "d"], tokens)
    finish(run, threads)
    assert run.calls == batches and set(results.values()) == {"<a>", "<b>", "<c>", "<d>"}


def test_equal_requests_in_a_batch_are_decoded_once():
    run = Held()
    batcher = Batcher(run)
    threads = [ask(batcher, "a", 1, {})]
    assert run.started.wait(WAIT_S)
    both = [{}, {}]
    threads += [ask(batcher, "b", 1, both[0])]
    assert batcher.wait_until(lambda b: b.waiting == 1, WAIT_S)
    threads += [ask(batcher, "b", 1, both[1])]
    assert batcher.wait_until(lambda b: b.waiting == 2, WAIT_S)
    finish(run, threads)
    assert run.calls == [("a",), ("b",)] and both == [{"b": "<b>"}, {"b": "<b>"}]


def test_an_error_reaches_only_its_own_request():
    run = Held(fail_on={"bad"})
    batcher = Batcher(run)
    results, threads = queue_behind_a_held_batch(batcher, run, ["a", "b", "bad", "c"])
    finish(run, threads)
    assert run.calls == [("a",), ("b", "bad", "c"), ("b",), ("bad",), ("c",)]  # the batch failed: each alone
    assert isinstance(results.pop("bad"), ValueError)
    assert results == {"a": "<a>", "b": "<b>", "c": "<c>"}


def test_a_run_that_returns_the_wrong_number_of_results_is_an_error():
    batcher = Batcher(lambda items: ["only one"] * (len(items) - 1))
    with pytest.raises(RuntimeError, match="a batch of 1 gave 0 results"):
        batcher.decode("a", 1)


class Stopped(BaseException):
    """What Streamlit raises in a session that was rerun or closed."""


def test_a_session_stopped_while_leading_leaves_the_others_decoding():
    """The leader's session stops while it waits for a decode slot: its request leaves the line,
    and the request waiting beside it leads its own batch."""
    run = Held()
    run.release.set()
    batcher = Batcher(run)
    follower_waiting = threading.Event()

    def stopped_while_queued():
        assert follower_waiting.wait(WAIT_S)
        raise Stopped

    class Admission:
        def __enter__(self):
            stopped_while_queued()

        def __exit__(self, *exc):
            return False

    results = {}
    leader = ask(batcher, "a", 1, results, admitted=Admission)
    assert batcher.wait_until(lambda b: b._leading, WAIT_S)
    follower = ask(batcher, "b", 1, results, on_wait=follower_waiting.set)
    for thread in (leader, follower):
        thread.join(WAIT_S)
    assert isinstance(results["a"], Stopped) and results["b"] == "<b>"
    assert run.calls == [("b",)] and batcher.waiting == 0


# ---------------------------------------------------------------- the same traces in a batch as alone


def assert_same(a, b, path="trace"):
    """Two traces' JSON equal, floats within 1e-5 (relative for a beam node's score, a sum of
    log-probabilities: float32 sums over differently shaped batches part in the 7th digit)."""
    if isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-5, abs=1e-5), path
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{k}]")
    else:
        assert a == b, path


TEXTS = ["a dog runs", "the small red cat sits on the big blue ball in the street",
         "ж ж ж",  # nothing the vocabulary knows
         "a man eats", "the woman plays in the park with a child and a dog"]
GROUPS = {  # settings shared by a batch -> (prefixes or None, attend)
    "beam 1": (SearchConfig(beam=1), None, None),
    "beam 3, traced": (SearchConfig(beam=3, trace=True), None, None),
    "beam 5, no length norm": (SearchConfig(beam=5, length_norm=0.0), None, None),
    "what-if prefix": (SearchConfig(beam=3), [[5], [6, 7], [5], [8], []], None),
    "moved attention": (SearchConfig(beam=2), None, (1, 0)),
}


@pytest.mark.parametrize("group", list(GROUPS))
@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_a_batch_gives_each_request_the_trace_it_gets_alone(tiny_checkpoints, group, arch):
    search, prefixes, attend = GROUPS[group]
    if attend and arch == "rnnencdec":
        pytest.skip("moving attention needs attention")
    path = tiny_checkpoints[arch]
    requests = [Request(path.name, text, search, None if prefixes is None else tuple(prefixes[k]), attend)
                for k, text in enumerate(TEXTS)]
    together = decodes.decode_batch(path, requests)
    translator = Translator.from_checkpoint(path)
    for request, decoded in zip(requests, together):
        alone = translator.translate([request.text], search, prefixes=None if prefixes is None else [list(request.prefix)],
                                     attend=None if attend is None else dict([attend]))[0]
        assert_same(decoded.trace.to_json(), alone.to_json())
    # another composition and order of the same requests changes nothing
    for request, decoded in zip(requests[::-2], decodes.decode_batch(path, requests[::-2])):
        assert_same(decoded.trace.to_json(), together[requests.index(request)].trace.to_json())


def test_a_decode_through_the_server_path_equals_the_batch(app_env):
    """shared_decodes hands each request its own result from the batcher, as decode_batch gives it."""
    search = SearchConfig(beam=4)
    requests = [Request("rnnsearch-tiny", text, search) for text in TEXTS[:2]]
    path = decodes.resolve_checkpoint("rnnsearch-tiny", app_env)
    for request, decoded in zip(requests, decodes.shared_decodes(requests, app_env)):
        assert_same(decoded.trace.to_json(), decodes.decode_batch(path, [request])[0].trace.to_json())
    assert np.isfinite([d.seconds for d in decodes.shared_decodes(requests, app_env)]).all()


# ---------------------------------------------------------------- a test set's sentences in the same line


def test_many_items_join_the_line_together_and_fill_batches_with_others():
    run = Held()
    batcher = Batcher(run, max_tokens=4)
    results = {}
    threads = [ask(batcher, "a", 1, results)]
    assert run.started.wait(WAIT_S)
    many = {}

    def evaluate():
        many["out"] = batcher.decode_many(["s1", "s2", "s3"], [1, 1, 1])

    threads.append(threading.Thread(target=evaluate))
    threads[-1].start()
    assert batcher.wait_until(lambda b: b.waiting == 3, WAIT_S)
    threads.append(ask(batcher, "b", 2, results))
    assert batcher.wait_until(lambda b: b.waiting == 4, WAIT_S)
    finish(run, threads)
    assert run.calls == [("a",), ("s1", "s2", "s3"), ("b",)]  # 3 + 2 tokens pass the bound of 4
    assert many["out"] == ["<s1>", "<s2>", "<s3>"] and results == {"a": "<a>", "b": "<b>"}


def test_many_items_raise_the_first_error_and_the_others_still_decode():
    batcher = Batcher(Held(fail_on={"bad"}))
    batcher._run.release.set()
    with pytest.raises(ValueError, match="bad"):
        batcher.decode_many(["ok", "bad", "fine"], [1, 1, 1])
    assert batcher._run.calls == [("ok", "bad", "fine"), ("ok",), ("bad",), ("fine",)] and batcher.waiting == 0


def test_a_test_set_through_the_batchers_equals_its_decode_alone(app_env, monkeypatch):
    """The Evaluate page's path: the traces Translator.translate gives the whole set, in order,
    blank lines included, with progress after each chunk and nothing left in the translations'
    shared store."""
    monkeypatch.setattr(decodes, "EVALUATION_CHUNK", 2)
    lines = TEXTS[:3] + ["", TEXTS[4]]
    search = SearchConfig(beam=3)
    store = result_store(TRANSLATIONS)
    stored = len(store._items)
    done = []
    traces, seconds = decodes.translate_lines("rnnsearch-tiny", lines, search, app_env, done.append)
    alone = decodes.load_translator("rnnsearch-tiny", app_env).translate(lines, search)
    assert len(traces) == len(lines) and done == [2, 4, 5] and seconds > 0
    for ours, theirs in zip(traces, alone):
        assert_same(ours.to_json(), theirs.to_json())
    assert traces[3].translation == "" and len(store._items) == stored


def test_a_session_stopped_in_the_middle_of_its_batch_leaves_the_others_to_finish():
    """The session leading a batch of two stops while the batch decodes (its user left): the other
    request goes back to the line and is decoded, not failed."""
    class StopsOnce(Held):
        def __call__(self, items):
            if len(self.calls) == 1:  # the second batch: its leader's session stops in the middle
                self.calls.append(tuple(items))
                raise Stopped
            return super().__call__(items)

    run = StopsOnce()
    batcher = Batcher(run)
    results, threads = queue_behind_a_held_batch(batcher, run, ["x", "a", "b"])
    finish(run, threads)
    stopped = [item for item in "ab" if isinstance(results[item], Stopped)]
    assert len(stopped) == 1 and results["x"] == "<x>"
    (other,) = set("ab") - set(stopped)
    assert results[other] == f"<{other}>"
    assert run.calls == [("x",), ("a", "b"), (other,)] and batcher.waiting == 0
