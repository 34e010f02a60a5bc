"""The Lab page and the server's Lab queue: AppTest runs with a training that counts instead of
timing, and the queue driven by a training that waits on events."""
import threading
import urllib.parse

import pytest
from streamlit.testing.v1 import AppTest

from model.experiments.lab_run import LabResult, LabSettings, run_lab
from viz.serving.lab_trainings import LabBusy, LabQueue

from ..conftest import start_app
from .test_translate_page import canvas


def _script(settings):
    from viz.pages import lab as lab_page
    from viz.pages import menu

    menu.all_pages(settings)  # registers the pages it links to, as app.py does
    lab_page.render(settings)


class CountingClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


def counted_run(settings, **kwargs):
    """``run_lab`` on a clock that moves a second a reading: a budget of N seconds is some N updates."""
    return run_lab(settings, clock=CountingClock(), **kwargs)


@pytest.fixture
def queue(monkeypatch):
    from viz.pages import lab as lab_page

    found = LabQueue(2, runner=counted_run, lowest_priority=False)
    monkeypatch.setattr(lab_page, "lab_queue", lambda slots, everyday, lab_dir: found)
    return found


@pytest.fixture
def settings(checkpoint_dir, monkeypatch):
    return start_app(monkeypatch, "--checkpoints", checkpoint_dir)


def test_train_shows_the_loss_the_attention_and_exact_match_by_length(settings, queue):
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120)
    at.query_params.update(task="reverse", arch="rnnsearch,rnnencdec", seconds="12", train="1-4", test="1-6",
                           seed="3", hidden="16")
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="lab_task").value == "reverse" and at.text_input(key="lab_test").value == "1-6"
    at.button(key="lab_run").click().run()
    assert not at.exception, at.exception
    (job,) = queue.jobs.values()
    assert queue.wait_for(lambda: not job.active, timeout=60) and job.state == "done"
    at.run()
    assert not at.exception, at.exception
    by_length = [c for c in canvas(at, "lines") if c["title"] == "Share of test inputs output exactly right"]
    assert len(by_length) == 1 and [line["name"] for line in by_length[0]["lines"]] == ["rnnsearch", "rnnencdec"]
    assert [len(line["x"]) for line in by_length[0]["lines"]] == [6, 6]
    assert any(c["title"] == "Training loss" for c in canvas(at, "lines"))
    assert not [m for m in canvas(at, "matrix") if m["title"].startswith("rnnencdec")]  # it has no attention
    table = at.dataframe[0].value
    assert list(table["model"]) == ["rnnsearch", "rnnencdec"]
    examples = [m for m in canvas(at, "matrix") if m["title"] == "rnnsearch: attention"]
    # the held-out input decoded while training (of the middle training length, 2), the shortest and longest test
    assert sorted(len(m["x_labels"]) for m in examples) == [1, 2, 6]
    assert at.query_params["arch"] == "rnnsearch,rnnencdec" and at.query_params["train"] == "1-4"


def test_the_same_settings_share_one_training_and_a_second_one_waits_for_the_first(queue):
    settings = LabSettings(archs=("rnnencdec",), seconds=3, train_lengths="1-3", test_lengths="1-3", hidden=8, emb=8)
    a = queue.submit(settings, "student a")
    assert queue.submit(settings, "student b") is a  # thirty students, one training
    assert queue.wait_for(lambda: not a.active, timeout=60) and a.state == "done"
    assert queue.submit(settings, "student c") is a  # kept: the result at once


class GatedRunner:
    """A training that starts, then waits for its gate: tests see the queue while trainings run."""

    def __init__(self):
        self.gates, self.started, self.lock = {}, [], threading.Lock()

    def __call__(self, settings, stop, progress, threads, everyday_path):
        gate = self.gates.setdefault(settings.seed, threading.Event())
        with self.lock:
            self.started.append(settings.seed)
        while not gate.wait(0.01):
            if stop():
                break
        return LabResult(settings, {})


def test_the_queue_admits_in_order_and_never_more_than_its_slots():
    runner = GatedRunner()
    queue = LabQueue(2, runner=runner, lowest_priority=False)
    jobs = [queue.submit(LabSettings(seed=seed), f"session {seed}") for seed in range(5)]
    assert queue.wait_for(lambda: len(runner.started) == 2, timeout=10)
    assert [j.state for j in jobs] == ["running", "running", "queued", "queued", "queued"]
    assert [queue.position(j) for j in jobs] == [0, 0, 1, 2, 3]
    runner.gates.setdefault(1, threading.Event()).set()  # the second one ends: the third starts, not the fifth
    assert queue.wait_for(lambda: len(runner.started) == 3, timeout=10)
    # the first two start together (in either order); the third only after one of them ended
    assert sorted(runner.started[:2]) == [0, 1] and runner.started[2] == 2
    assert queue.running == 2 and [queue.position(j) for j in jobs[3:]] == [1, 2]
    queue.stop(jobs[3])  # leaving the queue: the one behind moves up
    assert jobs[3].state == "stopped" and queue.position(jobs[4]) == 1
    for seed in (0, 2, 4):
        runner.gates.setdefault(seed, threading.Event()).set()
    assert queue.wait_for(lambda: all(not j.active for j in jobs), timeout=10)
    assert runner.started[2:] == [2, 4] and queue.running == 0


def test_a_session_has_one_training_at_a_time_and_stop_ends_it():
    runner = GatedRunner()
    queue = LabQueue(1, runner=runner, lowest_priority=False)
    first = queue.submit(LabSettings(seed=1), "me")
    with pytest.raises(LabBusy, match="still"):
        queue.submit(LabSettings(seed=2), "me")
    assert queue.wait_for(lambda: runner.started == [1], timeout=10)
    queue.stop(first)
    assert queue.wait_for(lambda: first.state == "stopped", timeout=10)
    assert queue.submit(LabSettings(seed=2), "me").state in ("queued", "running")


def test_a_training_that_fails_says_why_and_frees_its_place():
    def broken(settings, **kwargs):
        raise RuntimeError("out of memory")

    queue = LabQueue(1, runner=broken, lowest_priority=False)
    job = queue.submit(LabSettings(seed=9), "me")
    assert queue.wait_for(lambda: job.state == "failed", timeout=10)
    assert "out of memory" in job.error and queue.running == 0


def test_the_everyday_task_reads_the_tatoeba_file_an_offered_model_trained_on(tmp_path):
    from model.core.config import CorpusSpec, TrainConfig
    from viz.serving.lab_trainings import everyday_file
    from viz.serving.offered_models import ModelInfo

    pairs = tmp_path / "data" / "tatoeba" / "eng-fra.tsv"
    pairs.parent.mkdir(parents=True)
    pairs.write_text("Hello.\tBonjour.\n")
    trained = TrainConfig(corpora=[CorpusSpec("multi30k", "data/multi30k"), CorpusSpec("tatoeba", "data/tatoeba/eng-fra.tsv")])
    model = ModelInfo("m", "rnnsearch", "additive", "en", "fr", trained, None)
    assert everyday_file([model], tmp_path) == pairs
    assert everyday_file([ModelInfo("n", "rnnsearch", "additive", "en", "fr", None, None)], tmp_path) is None


def test_a_training_runs_on_one_torch_thread_and_leaves_the_servers_alone():
    """The queue asks for one thread; on PyTorch's OpenMP backend that setting stays with the
    training's thread, so the thread that started it keeps its own."""
    import torch

    seen = {}

    def runner(settings, stop, progress, threads, everyday_path):
        previous = torch.get_num_threads()
        torch.set_num_threads(threads)
        seen["asked"], seen["inside"] = threads, torch.get_num_threads()
        torch.set_num_threads(previous)
        return LabResult(settings, {})

    before = torch.get_num_threads()
    queue = LabQueue(1, runner=runner, lowest_priority=False)
    job = queue.submit(LabSettings(seed=3), "me")
    assert queue.wait_for(lambda: not job.active, timeout=10)
    assert seen == {"asked": 1, "inside": 1} and torch.get_num_threads() == before


def test_a_finished_experiment_opens_in_the_translate_pages_views(checkpoint_dir, tmp_path, monkeypatch):
    """The experiment's models are kept as checkpoint folders; the Lab page's link opens them in
    the Translate page, whose views decode them as the Translator does."""
    from model.decoding.search import SearchConfig
    from model.decoding.translator import Translator
    from viz.pages import lab as lab_page
    from viz.serving import hosting

    from ..conftest import open_tab
    from .test_translate_page import APP

    settings = start_app(monkeypatch, "--checkpoints", checkpoint_dir, "--cache-dir", tmp_path)
    queue = LabQueue(1, runner=counted_run, lowest_priority=False, lab_dir=hosting.lab_root(settings))
    experiment = LabSettings(seconds=12, train_lengths="1-4", test_lengths="1-6", hidden=16, emb=8, seed=3)  # the page's
    job = queue.submit(experiment, "me")
    assert queue.wait_for(lambda: not job.active, timeout=60) and job.state == "done"
    assert job.saved == {arch: f"lab/{job.key}/{arch}" for arch in ("rnnsearch", "rnnencdec")}
    monkeypatch.setattr(lab_page, "lab_queue", lambda slots, everyday, lab_dir: queue)
    lab = AppTest.from_function(_script, args=(settings,), default_timeout=120)
    lab.query_params.update(task="reverse", arch="rnnsearch,rnnencdec", seconds="12", train="1-4", test="1-6",
                            seed="3", hidden="16")
    lab.run()
    lab.button(key="lab_run").click().run()  # the same settings: the finished experiment, at once
    lab.run()
    assert not lab.exception, lab.exception
    (link,) = [e for e in lab.get("page_link") if "Translate page" in e.proto.label]
    params = dict(urllib.parse.parse_qsl(link.proto.query_string))
    assert params["lab"] == job.key and params["left"] == job.saved["rnnsearch"]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model_left").value == job.saved["rnnsearch"]
    folder = hosting.lab_root(settings) / job.key / "rnnsearch"
    expected = Translator.from_checkpoint(folder).translate([job.probe_text], SearchConfig(
        beam=at.session_state["beam"], length_norm=at.session_state["lp"]))[0]
    assert at.text[0].value == expected.translation
    for tab in ("Step by step", "Beam tree", "Explanations"):
        open_tab(at, tab)
        assert not at.exception, (tab, at.exception)


def test_run_5_seeds_draws_each_models_band_and_a_row_per_seed(settings, queue):
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120)
    at.query_params.update(task="copy", arch="rnnsearch,rnnencdec", seconds="5", updates="250", train="1-3",
                           test="2-4", seed="7", hidden="16")
    at.run()
    assert at.select_slider(key="lab_updates").value == 250
    at.button(key="lab_seeds").click().run()
    assert not at.exception, at.exception
    (job,) = queue.jobs.values()
    assert job.settings.seeds == 5 and job.settings.seed == 7 and job.settings.updates == 250
    assert queue.wait_for(lambda: not job.active, timeout=90) and job.state == "done"
    at.run()
    assert not at.exception, at.exception
    assert list(job.result.by_seed) == [7, 8, 9, 10, 11]
    (chart,) = [c for c in canvas(at, "lines") if c["title"].startswith("Share of test inputs output exactly right:")]
    assert [line["name"] for line in chart["lines"]] == ["rnnsearch", "rnnencdec"]
    for line, arch in zip(chart["lines"], ("rnnsearch", "rnnencdec")):
        tables = job.result.exact_by_seed(arch)
        assert line["x"] == [2.0, 3.0, 4.0] and len(line["band"]) == 2
        for i, n in enumerate((2, 3, 4)):  # the mean inside its band, each from the seeds' own tables
            values = [100 * t[n] for t in tables]
            assert line["y"][i] == pytest.approx(sum(values) / 5)
            assert (line["band"][0][i], line["band"][1][i]) == pytest.approx((min(values), max(values)))
    (table,) = [d.value for d in at.dataframe]  # the sweep draws one table: a row per seed
    assert list(table["seed"]) == [7, 8, 9, 10, 11]
    assert any("Why runs differ" in m.value for m in at.markdown)


def test_a_model_whose_seconds_ran_out_long_before_its_updates_is_said_to_be_too_slow(settings, queue):
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120)
    at.query_params.update(task="copy", arch="rnnencdec", seconds="6", updates="1000", train="1-3", test="1-3",
                           seed="2", hidden="16")
    at.run()
    at.button(key="lab_run").click().run()
    (job,) = queue.jobs.values()
    assert queue.wait_for(lambda: not job.active, timeout=60)
    at.run()
    assert not at.exception, at.exception
    model = job.result.models["rnnencdec"]
    assert model.ended_by == "seconds" and model.updates < 1000  # the counting clock: about six updates
    (warning,) = [w.value for w in at.warning if "too slow" in w.value]
    assert f"made {model.updates} of its 1000 updates" in warning
    table = at.dataframe[0].value
    assert list(table["ended by"]) == ["its seconds"]
