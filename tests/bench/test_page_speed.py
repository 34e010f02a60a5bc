"""bench/page_speed.py's floor figures: ``import torch`` timed in fresh interpreters."""
import sys

from bench import page_speed


def test_import_torch_is_timed_in_fresh_interpreters_and_the_median_kept(monkeypatch):
    commands, clock = [], iter([0.0, 3.0, 10.0, 11.0, 20.0, 22.0])  # three imports: 3 s, 1 s and 2 s
    monkeypatch.setattr(page_speed.subprocess, "run", lambda command, check: commands.append(command))
    monkeypatch.setattr(page_speed.time, "perf_counter", lambda: next(clock))
    assert page_speed.import_torch_s(3) == 2.0
    assert commands == [[sys.executable, "-c", "import torch"]] * 3


def test_the_checks_work_is_timed_alone_for_every_sentence(tiny_checkpoints):
    from bench.check_work import check_seconds
    from model.decoding.translator import Translator

    found = check_seconds(Translator.from_checkpoint(tiny_checkpoints["rnnsearch"]), ["a dog runs", "two cats", "a man"])
    assert len(found) == 3 and all(s > 0 for s in found)


def test_a_ratio_needs_both_figures():
    assert page_speed.ratio(3.0, 2.0) == 1.5
    assert page_speed.ratio(None, 2.0) is None and page_speed.ratio(3.0, None) is None and page_speed.ratio(3.0, 0.0) is None
