"""The Lab (model/experiments/): task generators, the time budget on a fake clock, Stop, the
settings' key, and the command line. No test asserts what a model learnt."""
import datetime
import json
import random

import pytest
import torch

from dataclasses import replace

from model.experiments.lab_run import FINAL_LR, LabSettings, bucketed, learning_rate, run_lab, train_one
from model.experiments.seed_spread import Band, spread
from model.experiments.tasks import (DATE_CHARS, ISO_CHARS, NUMBERS, SPACE, LabError, Lengths, make_task,
                                     held_out_pairs)
from model.experiments.token_vocab import TokenVocab
from model.lab import main

INTEGER_TASKS = ("reverse", "copy", "sort", "shift")


class CountingClock:
    """A clock that moves one second each time it is read: a budget of N seconds is about N updates."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("name", INTEGER_TASKS + ("dates",))
def test_a_task_is_the_same_for_the_same_seed_and_keeps_its_lengths_and_symbols(name):
    task = make_task(name)
    lengths = Lengths(10, 17) if name == "dates" else Lengths(3, 7)
    a = task.pairs(random.Random(5), lengths, 40)
    assert a == task.pairs(random.Random(5), lengths, 40) and a != task.pairs(random.Random(6), lengths, 40)
    for src, tgt in a:
        assert len(src) in lengths
        assert set(src) <= set(task.source_symbols) and set(tgt) <= set(task.target_symbols)


@pytest.mark.parametrize("name, rule", [
    ("reverse", lambda s: s[::-1]),
    ("copy", lambda s: s),
    ("sort", lambda s: tuple(sorted(s, key=int))),
    ("shift", lambda s: tuple(str((int(x) + 1) % 50) for x in s)),
])
def test_the_integer_tasks_follow_their_rule(name, rule):
    for src, tgt in make_task(name).pairs(random.Random(3), Lengths(1, 9), 50):
        assert tgt == rule(src) and set(src) <= set(NUMBERS)


def test_a_date_task_pair_is_one_real_date_in_two_forms():
    months = {datetime.date(2000, m, 1).strftime("%B").lower(): m for m in range(1, 13)}
    for src, tgt in make_task("dates").pairs(random.Random(11), Lengths(10, 26), 200):
        text, iso = "".join(" " if c == SPACE else c for c in src), "".join(tgt)
        day = datetime.date.fromisoformat(iso)  # a valid date, or this raises
        assert str(day.year) in text and set(src) <= set(DATE_CHARS) and set(tgt) <= set(ISO_CHARS)
        named = [m for name, m in months.items() if name[:3] in text.lower()]
        assert named == [day.month] or f"{day.month:02d}/" in text or f"/{day.month:02d}/" in text


def test_test_pairs_cover_every_length_and_differ_from_training():
    task = make_task("reverse")
    tests = held_out_pairs(task, Lengths(1, 6), 5, seed=2)
    assert sorted(tests) == [1, 2, 3, 4, 5, 6] and all(len(p) == 5 for p in tests.values())
    assert tests == held_out_pairs(task, Lengths(1, 6), 5, seed=2)
    training = next(task.stream(2, Lengths(6, 6), 5))
    assert training != tests[6]


@pytest.mark.parametrize("text, message", [("0-5", "1 <= low"), ("7-3", "1 <= low"), ("1-99", "<= 60"),
                                           ("a-b", "look like"), ("", "look like")])
def test_bad_lengths_are_refused_by_name(text, message):
    with pytest.raises(LabError, match=message):
        Lengths.parse(text)


@pytest.mark.parametrize("changes, message", [
    (dict(task="poems"), "unknown task"), (dict(archs=("rnnsearch", "rnnsearch")), "distinct"),
    (dict(archs=("lstm",)), "distinct ones of"), (dict(seconds=0), "seconds"), (dict(seconds=10_000), "seconds"),
    (dict(hidden=10_000), "hidden"), (dict(train_lengths="5-1"), "1 <= low"), (dict(lr=1.0), "lr"),
])
def test_settings_out_of_range_are_refused_before_training(changes, message):
    with pytest.raises(LabError, match=message):
        LabSettings(**changes).check()


def test_the_same_settings_have_the_same_key():
    assert LabSettings(seed=3).key() == LabSettings(seed=3).key()
    assert LabSettings(seed=3).key() != LabSettings(seed=4).key() != LabSettings(seed=4, hidden=48).key()


SMALL = dict(task="reverse", train_lengths="1-5", test_lengths="1-7", emb=5, hidden=7)


def test_the_budget_is_honoured_on_a_clock_and_each_model_gets_the_same():
    clock = CountingClock()
    result = run_lab(LabSettings(archs=("rnnsearch", "rnnencdec"), seconds=25, **SMALL), clock=clock)
    for model in result.models.values():
        assert model.seconds >= 25 and model.updates >= 10 and not model.stopped
        assert model.updates <= 25  # the clock is read at least once an update
        assert sorted(model.by_length) == list(range(1, 8))
        assert all(s.n == 30 and 0 <= s.exact <= 1 for s in model.by_length.values())
        assert [p[0] for p in model.curve] == sorted(p[0] for p in model.curve)


def test_stop_keeps_what_was_learnt_and_training_is_reproducible():
    settings = LabSettings(archs=("rnnsearch",), seconds=10_000 / 100, **SMALL)
    task, lengths = make_task("reverse"), Lengths(1, 5)
    vocabs = (TokenVocab(task.source_symbols), TokenVocab(task.target_symbols))

    def stopped_after(k):
        calls = iter(range(10**6))
        return train_one("rnnsearch", settings, task, vocabs, lengths, clock=lambda: 0.0,
                         stop=lambda: next(calls) >= k)

    a, b, c = stopped_after(7), stopped_after(7), stopped_after(6)
    assert a.updates == 7 and a.stopped and c.updates == 6
    for (name, x), y, z in zip(a.translator.model.state_dict().items(), b.translator.model.state_dict().values(),
                               c.translator.model.state_dict().values()):
        assert torch.equal(x, y), name  # the same seed, the same updates: the same weights
    assert any(not torch.equal(x, z) for x, z in zip(a.translator.model.state_dict().values(),
                                                      c.translator.model.state_dict().values()))


def test_a_trained_model_translates_through_the_decoding_interface():
    result = run_lab(LabSettings(archs=("rnnsearch", "transformer"), seconds=8, **SMALL), clock=CountingClock())
    for arch, model in result.models.items():
        trace = model.translator.translate(["3 14 7"])[0]
        assert trace.source_tokens == ["3", "14", "7"] and trace.model == arch
        assert trace.attention is not None and trace.attention.shape[1] == 3


def test_the_command_prints_one_json_object(capsys):
    code = main(["--task", "copy", "--seconds", "0.5", "--train-lengths", "1-3", "--test-lengths", "2-4",
                 "--arch", "rnnencdec", "--hidden", "8", "--emb", "6", "--json", "--seed", "4"])
    out = capsys.readouterr().out
    assert code == 0
    found = json.loads(out)
    assert (found["task"], found["seed"], found["train_lengths"], found["test_lengths"]) == ("copy", 4, "1-3", "2-4")
    model = found["models"]["rnnencdec"]
    assert set(model) >= {"parameters", "seconds", "updates", "curve", "by_length"}
    assert sorted(model["by_length"]) == ["2", "3", "4"] and set(model["by_length"]["2"]) == {"n", "exact"}


@pytest.mark.parametrize("args, message", [(["--seconds", "-1"], "seconds"), (["--arch", "rnnsearch,gru"], "distinct"),
                                           (["--train-lengths", "9-2"], "1 <= low")])
def test_the_command_refuses_bad_settings_in_one_line(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err and "Traceback" not in err


def test_the_everyday_task_says_where_its_data_should_be(tmp_path, capsys):
    assert main(["--task", "everyday", "--everyday", str(tmp_path / "nowhere.tsv"), "--seconds", "1"]) == 2
    assert "nowhere.tsv is not on this machine" in capsys.readouterr().err


# ---- the budget, the schedule, bucketing and the spread over seeds

@pytest.mark.parametrize("budget, clock, ended_by, updates", [
    (dict(updates=5, seconds=500), lambda: 0.0, "updates", 5),  # the updates come first
    (dict(updates=10_000, seconds=7), CountingClock(), "seconds", None),  # the seconds come first
    (dict(updates=3, seconds=3), CountingClock(), "seconds", None),  # the clock moves a second a read: both near
])
def test_the_budget_ends_at_whichever_limit_comes_first_and_says_which(budget, clock, ended_by, updates):
    result = run_lab(LabSettings(archs=("rnnencdec",), **budget, **SMALL), clock=clock)
    model = result.models["rnnencdec"]
    assert model.ended_by == ended_by and not model.stopped
    assert model.updates <= budget["updates"]
    if updates is not None:
        assert model.updates == updates
    assert result.to_json()["models"]["rnnencdec"]["ended_by"] == ended_by


def test_stop_is_said_as_what_ended_the_training():
    calls = iter(range(10**6))
    result = run_lab(LabSettings(archs=("rnnsearch",), updates=100, **SMALL), stop=lambda: next(calls) >= 3)
    assert result.models["rnnsearch"].ended_by == "stop" and result.models["rnnsearch"].stopped


def test_the_same_seed_and_updates_give_the_same_weights_on_the_real_clock():
    def weights(seed):
        model = run_lab(LabSettings(archs=("rnnsearch",), updates=6, seconds=600, seed=seed, **SMALL)).models["rnnsearch"]
        assert model.ended_by == "updates" and model.updates == 6
        return model.translator.model.state_dict()

    a, b, c = weights(3), weights(3), weights(5)
    assert all(torch.equal(x, y) for x, y in zip(a.values(), b.values()))
    assert any(not torch.equal(x, z) for x, z in zip(a.values(), c.values()))


def test_the_learning_rate_warms_up_then_decays_to_its_floor():
    settings = LabSettings(updates=1000, lr=0.004)
    warm = [learning_rate(settings, u, u / 1000) for u in range(100)]
    assert warm == sorted(warm) and warm[0] == pytest.approx(0.004 / 100) and warm[-1] == pytest.approx(0.004)
    after = [learning_rate(settings, u, p) for u, p in ((100, 0.1), (400, 0.4), (700, 0.7), (999, 1.0), (999, 3.0))]
    assert after == sorted(after, reverse=True)
    assert after[-1] == after[-2] == pytest.approx(0.004 * FINAL_LR)
    short = LabSettings(updates=30, lr=0.004)  # a warm-up of at most a tenth of the budget
    assert learning_rate(short, 2, 0.07) == pytest.approx(0.004) and learning_rate(short, 1, 0.03) < 0.004


def test_bucketing_cuts_each_pool_into_batches_of_like_lengths_and_keeps_every_pair():
    task = make_task("reverse")
    pools = task.stream(7, Lengths(1, 9), 5 * 3)
    first_pool = next(task.stream(7, Lengths(1, 9), 5 * 3))
    batches = bucketed(pools, 5, random.Random(7))
    got = [next(batches) for _ in range(3)]
    assert sorted(p for b in got for p in b) == sorted(first_pool)
    by_length = sorted(first_pool, key=lambda p: len(p[0]))
    assert sorted(got) == sorted([by_length[0:5], by_length[5:10], by_length[10:15]])


def test_rnnsearch_starts_with_an_alignment_model_that_is_not_zero():
    """The Lab's one change to the paper's start (lab_run.start_attention): v_a is not zero."""
    model = run_lab(LabSettings(archs=("rnnsearch",), updates=1, **SMALL)).models["rnnsearch"].translator.model
    assert model.decoder.attention.v_a.weight.abs().sum() > 0


@pytest.mark.parametrize("tables, length, want", [
    ([{1: 1.0, 2: 0.5}], 2, Band(0.5, 0.5, 0.5, 1)),
    ([{1: 1.0, 2: 0.5}, {1: 0.5, 2: 0.25}, {1: 0.75, 2: 0.0}], 1, Band(0.75, 0.5, 1.0, 3)),
    ([{1: 1.0, 2: 0.5}, {1: 0.5, 2: 0.25}, {1: 0.75, 2: 0.0}], 2, Band(0.25, 0.0, 0.5, 3)),
    ([{3: 0.2}, {3: 0.4, 5: 0.9}], 5, Band(0.9, 0.9, 0.9, 1)),  # a length one seed lacks
])
def test_the_spread_is_the_mean_lowest_and_highest_seed(tables, length, want):
    got = spread(tables)[length]
    assert (got.mean, got.low, got.high, got.seeds) == pytest.approx((want.mean, want.low, want.high, want.seeds))


def test_a_spread_of_nothing_is_refused():
    with pytest.raises(LabError, match="at least one seed"):
        spread([])


def test_several_seeds_are_each_a_single_run_and_their_spread_is_reported():
    settings = LabSettings(archs=("rnnsearch", "rnnencdec"), updates=4, seconds=600, seed=2, seeds=3, **SMALL)
    result = run_lab(settings)
    assert list(result.by_seed) == [2, 3, 4] and result.models is result.by_seed[2]
    alone = run_lab(replace(settings, seed=3, seeds=1))
    for arch in settings.archs:
        a, b = result.by_seed[3][arch], alone.models[arch]
        assert a.seed == 3 and all(torch.equal(x, y) for x, y in zip(a.translator.model.state_dict().values(),
                                                                       b.translator.model.state_dict().values()))
        assert {n: s.exact for n, s in a.by_length.items()} == {n: s.exact for n, s in b.by_length.items()}
    found = result.to_json()
    assert sorted(found["seeds"]) == ["2", "3", "4"]
    bands = spread(result.exact_by_seed("rnnencdec"))
    assert found["spread"]["rnnencdec"]["5"] == {"mean": round(bands[5].mean, 4), "low": round(bands[5].low, 4),
                                                 "high": round(bands[5].high, 4)}


@pytest.mark.parametrize("changes, message", [
    (dict(updates=0), "updates must be"), (dict(updates=2.5), "updates must be"), (dict(updates=10**6), "updates must be"),
    (dict(seeds=0), "seeds must be"), (dict(seeds=11), "seeds must be"),
])
def test_budgets_and_seeds_out_of_range_are_refused_in_one_line(changes, message):
    with pytest.raises(LabError, match=message):
        LabSettings(**changes).check()


def test_a_stopped_sweep_leaves_the_seed_it_cut_short_out_of_the_spread():
    calls = iter(range(10**6))
    settings = LabSettings(archs=("rnnsearch", "rnnencdec"), updates=4, seconds=600, seeds=3, **SMALL)
    # each training reads stop() before each update and once at its end: seed 1 takes 2 x 5 reads
    result = run_lab(settings, stop=lambda: next(calls) >= 13)
    assert list(result.by_seed) == [1] and result.models is result.by_seed[1]
    assert not any(m.stopped for m in result.models.values())
    assert set(result.to_json()["spread"]) == {"rnnsearch", "rnnencdec"}
