"""bench/lab_seeds.py's tables, from given runs (no training): the band over seeds by length, each
seed's means over length groups, and the updates and what ended each run."""
import pytest

from bench.lab_seeds import groups_of, report, seeds_of


def run(seed, search, encdec):
    """A ``python -m model.lab --json`` object with the exact match by length given."""
    model = lambda table, updates, ended: {"updates": updates, "ended_by": ended, "seconds": 30.0,  # noqa: E731
                                           "by_length": {str(n): {"n": 30, "exact": e} for n, e in table.items()}}
    return {"task": "reverse", "seed": seed, "train_lengths": "1-12", "test_lengths": "1-12", "seconds": 60.0,
            "updates": 1000, "models": {"rnnsearch": model(search, 1000, "updates"),
                                        "rnnencdec": model(encdec, 777, "seconds")}}


@pytest.mark.parametrize("text, seeds", [("1-3", [1, 2, 3]), ("5", [5]), ("3,7,11", [3, 7, 11])])
def test_seeds_are_a_range_or_a_list(text, seeds):
    assert seeds_of(text) == seeds


def test_length_groups_of_ten_hold_every_length():
    assert groups_of([3, 9, 10, 11, 25]) == [(1, 10), (11, 20), (21, 30)]
    assert groups_of([12]) == [(11, 20)]


def test_the_report_gives_the_band_the_group_means_and_each_runs_budget():
    runs = [run(1, {1: 1.0, 11: 0.5}, {1: 0.5, 11: 0.0}), run(2, {1: 0.75, 11: 0.25}, {1: 0.25, 11: 0.0})]
    text = report(runs)
    lines = text.splitlines()
    assert "2 seeds, budget 1000 updates or 60.0 s per model" in lines[0]
    search = lines.index("rnnsearch: exact match by length over seeds (%)")
    assert lines[search + 2].split() == ["1", "87.5", "75.0", "100.0"]  # mean, worst, best
    assert lines[search + 3].split() == ["11", "37.5", "25.0", "50.0"]
    assert "lengths 1-10: mean 87.5%, min 75.0%, max 100.0%" in lines
    encdec_rows = [line.split() for line in lines if line.split()[:1] in (["1"], ["2"]) and "seconds" in line]
    assert encdec_rows == [["1", "50.0%", "0.0%", "777", "seconds", "30.0"],
                           ["2", "25.0%", "0.0%", "777", "seconds", "30.0"]]
