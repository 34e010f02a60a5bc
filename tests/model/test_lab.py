"""The Lab (model/experiments/): task generators, the time budget on a fake clock, Stop, the
settings' key, and the command line. No test asserts what a model learnt."""
import datetime
import json
import random

import pytest
import torch

from model.experiments.lab_run import LabSettings, run_lab, train_one
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
