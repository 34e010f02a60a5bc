"""Training replay: probe snapshots recorded during training, their log and its reader."""
import json

import numpy as np
import pytest
import torch

from model.core.config import preset
from model.core.errors import ConfigError
from model.training.replay import (
    DEFAULT_PROBES,
    MAX_PROBES,
    ProbeRecord,
    ReplayError,
    Snapshot,
    append_snapshot,
    parse_snapshots,
    probe_sentences,
    read_probe_log,
    snapshot_to_json,
    truncate_probe_log,
)
from model.train import build_parser, config_from_args
from model.training.trainer import train


def snapshots_of(run):
    return read_probe_log(run)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_a_tiny_run_records_every_probe_at_update_0_and_at_each_validation(tiny_runs, arch):
    run = tiny_runs[arch]
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    snapshots = snapshots_of(run)
    assert [s.step for s in snapshots] == [0] + [r["step"] for r in log]
    assert [s.val_bleu for s in snapshots] == [None] + [round(r["val_bleu"], 2) for r in log]
    probes = DEFAULT_PROBES[("en", "fr")]  # the tiny corpus is en -> fr
    for snapshot in snapshots:
        assert [p.source for p in snapshot.probes] == list(probes)
        for probe in snapshot.probes:
            assert probe.target_tokens and probe.source_tokens
            if arch == "rnnencdec":
                assert probe.attention is None
            else:  # one row per output token, one column per source piece, rows summing to 1 up to rounding
                assert probe.attention.shape == (len(probe.target_tokens), len(probe.source_tokens))
                np.testing.assert_allclose(probe.attention.sum(1), 1.0, atol=0.005 * len(probe.source_tokens))
    assert snapshots[-1].probes[0].output != snapshots[0].probes[0].output  # training changed the output


def test_the_best_checkpoint_card_carries_the_replay_up_to_its_validation(tiny_checkpoints):
    best = tiny_checkpoints["rnnsearch"]
    card = json.loads((best / "card.json").read_text())
    replay = parse_snapshots(card["replay"]["snapshots"], "card")
    assert replay[-1].step == card["log"][-1]["step"] and replay[0].step == 0


def test_resuming_neither_duplicates_nor_loses_snapshots(tiny_corpus, tmp_path):
    """One epoch, stop, resume for the second == two epochs straight: the same snapshots."""
    torch.set_num_threads(1)

    def config(out, epochs):
        cfg = preset("tiny")
        cfg.train.data_dir, cfg.train.out_dir, cfg.train.val_max_sentences = str(tiny_corpus), str(out), 10
        cfg.train.epochs = epochs
        return cfg

    train(config(tmp_path / "a", 2), log=lambda *_: None, show_bar=False)
    train(config(tmp_path / "b", 1), log=lambda *_: None, show_bar=False)
    train(config(tmp_path / "b", 2), resume=True, log=lambda *_: None, show_bar=False)
    a, b = snapshots_of(tmp_path / "a"), snapshots_of(tmp_path / "b")
    assert [s.step for s in b] == [s.step for s in a] and len(a) == 3
    assert [[p.output for p in s.probes] for s in b] == [[p.output for p in s.probes] for s in a]


def snapshot(step: int, output: str = "x") -> Snapshot:
    probe = ProbeRecord("a b", ("▁a", "▁b"), output, ("▁x", "</s>"), np.array([[0.25, 0.75], [0.5, 0.5]]))
    return Snapshot(step, step / 10, None if step == 0 else 1.5, (probe,))


def test_a_repeated_round_replaces_its_snapshot_and_resuming_drops_later_ones(tmp_path):
    for step in (0, 10, 20):
        append_snapshot(tmp_path, snapshot(step))
    append_snapshot(tmp_path, snapshot(20, "again"))  # the round at 20 ran again after a crash
    assert [(s.step, s.probes[0].output) for s in read_probe_log(tmp_path)] == [(0, "x"), (10, "x"), (20, "again")]
    truncate_probe_log(tmp_path, 15)  # resumed from a state saved at update 15
    assert [s.step for s in read_probe_log(tmp_path)] == [0, 10]


def test_snapshots_round_trip_through_json():
    original = snapshot(10)
    (back,) = parse_snapshots([json.loads(json.dumps(snapshot_to_json(original)))], "here")
    assert (back.step, back.epoch, back.val_bleu) == (10, 1.0, 1.5)
    assert back.probes[0].target_tokens == ("▁x", "</s>")
    np.testing.assert_array_equal(back.probes[0].attention, original.probes[0].attention)


@pytest.mark.parametrize("change, message", [
    (lambda s: s["probes"][0].update(attention=[[1.0, 0.0]]), "shape"),
    (lambda s: s.pop("step"), "malformed"),
    (lambda s: s.update(probes="none"), "malformed"),
    (lambda s: s["probes"][0].pop("source_tokens"), "malformed"),
])
def test_the_reader_names_what_is_wrong(change, message):
    data = snapshot_to_json(snapshot(10))
    change(data)
    with pytest.raises(ReplayError, match=message):
        parse_snapshots([data], "card.json replay")


def test_snapshots_must_come_in_order():
    with pytest.raises(ReplayError, match="increase"):
        parse_snapshots([snapshot_to_json(snapshot(10)), snapshot_to_json(snapshot(0))], "log")


def test_a_broken_probe_log_line_is_named(tmp_path):
    (tmp_path / "probes.jsonl").write_text('{"step": 0\n')
    with pytest.raises(ReplayError, match="line 1"):
        read_probe_log(tmp_path)


@pytest.mark.parametrize("src, tgt, configured, expected", [
    ("en", "fr", [], list(DEFAULT_PROBES[("en", "fr")])),
    ("de", "en", [], list(DEFAULT_PROBES[("de", "en")])),
    ("cs", "en", [], []),  # a pair without defaults records nothing
    ("cs", "en", ["Ahoj."], ["Ahoj."]),
])
def test_probes_default_per_language_pair(src, tgt, configured, expected):
    assert probe_sentences(src, tgt, configured) == expected


def test_every_default_pair_has_a_long_probe_and_a_short_one():
    for probes in DEFAULT_PROBES.values():
        lengths = sorted(len(p.split()) for p in probes)
        assert lengths[0] <= 10 and lengths[-1] >= 25


@pytest.mark.parametrize("probes, message", [
    (["ok"] * (MAX_PROBES + 1), "at most"),
    (["  "], "non-empty"),
    (["x" * 401], "at most 400"),
])
def test_bad_probe_lists_are_refused(probes, message):
    with pytest.raises(ConfigError, match=message):
        probe_sentences("en", "fr", probes)


def test_probes_can_be_set_on_the_command_line():
    args = build_parser().parse_args(["--preset", "tiny", "--set", 'train.probes=["Hello there.", "Bye."]'])
    assert config_from_args(args).train.probes == ["Hello there.", "Bye."]
    with pytest.raises(ConfigError, match="list of strings"):
        config_from_args(build_parser().parse_args(["--preset", "tiny", "--set", "train.probes=[1, 2]"]))
