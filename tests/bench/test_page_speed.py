"""bench/page_speed.py's floor figures: ``import torch`` timed in fresh interpreters."""
import sys

from bench import page_speed


def test_import_torch_is_timed_in_fresh_interpreters_and_the_median_kept(monkeypatch):
    commands, clock = [], iter([0.0, 3.0, 10.0, 11.0, 20.0, 22.0])  # three imports: 3 s, 1 s and 2 s
    monkeypatch.setattr(page_speed.subprocess, "run", lambda command, check: commands.append(command))
    monkeypatch.setattr(page_speed.time, "perf_counter", lambda: next(clock))
    assert page_speed.import_torch_s(3) == 2.0
    assert commands == [[sys.executable, "-c", "import torch"]] * 3
