"""bench.common.alternate: both ways run every work in every round, the order of the ways flips
each round, and each figure is the median of its way's rounds."""
from bench.common import alternate, alternate_settings


def test_each_round_runs_every_work_under_each_way_in_turn_and_reports_medians():
    log, current = [], {}
    ways = {"a": lambda: current.update(way="a"), "b": lambda: current.update(way="b")}
    clocks = {"a": iter([3.0, 1.0, 2.0]), "b": iter([10.0, 30.0, 20.0])}

    def work(name):
        def run(way):
            assert current["way"] == way  # the switch ran before the way's works
            log.append((way, name))
            return next(clocks[way]) if name == "timed" else 0.5
        return run

    found = alternate(ways, {"timed": work("timed"), "other": work("other")}, rounds=3)
    assert found == {"timed": {"a": 2.0, "b": 20.0}, "other": {"a": 0.5, "b": 0.5}}
    order = [way for way, name in log if name == "timed"]
    assert order == ["a", "b", "b", "a", "a", "b"]


def test_settings_are_switched_restored_and_compared():
    class Owner:
        speed = "fast"

    outputs: dict = {}

    def work(way):
        assert Owner.speed == way  # the way's setting is in place while its works run
        outputs[way] = ["a", "b", "c" if way == "fast" else "x"]
        return 1.0 if way == "fast" else 4.0

    found = alternate_settings(Owner, "speed", {"fast": "fast", "slow": "slow"}, {"decode": work}, 3, outputs)
    assert Owner.speed == "fast"  # the first way's setting, set again after
    assert found == {"seconds": {"decode": {"fast": 1.0, "slow": 4.0, "saved": "75%"}},
                     "batch_outputs_identical": "2 of 3"}
