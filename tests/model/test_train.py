"""Training smoke runs, resuming, overrides and the JSON log."""
import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from model.checkpoints.folder import CheckpointError
from model.core.config import preset
from model.core.errors import ConfigError
from tests.conftest import tiny_config
from model.train import main
from model.training.settings import parse_overrides
from model.training.trainer import Progress, train, warm_lr


def test_training_writes_best_last_and_log(tiny_runs):
    run = tiny_runs["rnnsearch"]
    assert {p.name for p in (run / "best").iterdir()} >= {"model.safetensors", "config.json", "card.json",
                                                          "src.spm.model", "tgt.spm.model"}
    assert (run / "last" / "train_state.safetensors").is_file()
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == list(range(1, len(log) + 1))
    assert {"train_loss", "val_loss", "val_bleu", "tokens_per_s", "elapsed_s"} <= set(log[0])
    card = json.loads((run / "best" / "card.json").read_text())
    assert card["training"]["val_bleu"] == max(r["val_bleu"] for r in log)


def test_resume_mid_run_gives_identical_weights(tiny_corpus, tmp_path):
    """2 epochs straight == 1 epoch, stop, resume for the 2nd (optimizer, RNG, data order restored)."""
    torch.set_num_threads(1)
    straight = train(tiny_config(tiny_corpus, tmp_path / "a", epochs=2, join_prob=0.3), log=lambda *_: None, show_bar=False)
    train(tiny_config(tiny_corpus, tmp_path / "b", epochs=1, join_prob=0.3), log=lambda *_: None, show_bar=False)
    messages = []
    train(tiny_config(tiny_corpus, tmp_path / "b", epochs=2, join_prob=0.3), resume=True, log=messages.append, show_bar=False)
    assert any("resuming" in m for m in messages)
    a = load_file(tmp_path / "a" / "last" / "model.safetensors")
    b = load_file(tmp_path / "b" / "last" / "model.safetensors")
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=1e-6, rtol=1e-5)
    assert straight.is_dir()


def test_resume_from_a_mid_epoch_save(tiny_corpus, tmp_path):
    """Stopped by max_steps between epoch ends: resuming continues at the saved batch."""
    cfg = tiny_config(tiny_corpus, tmp_path / "c", epochs=1, save_every=5, max_steps=12)
    train(cfg, log=lambda *_: None, show_bar=False)
    state = json.loads((tmp_path / "c" / "last" / "train_state.json").read_text())["progress"]
    assert state["step"] == 12


def test_init_from_continues_a_finished_model_its_count_and_its_log(tiny_checkpoints, tiny_corpus, tmp_path):
    """Weights, update count, wall time and log carry on from the checkpoint; the next epoch
    starts; lr 0 shows the weights are the checkpoint's, untouched."""
    torch.set_num_threads(1)
    best = tiny_checkpoints["rnnsearch"]
    before = json.loads((best / "card.json").read_text())["log"]  # up to the best validation
    first = before[-1]["step"]
    cfg = tiny_config(tiny_corpus, tmp_path / "w", init_from=str(best), max_steps=first + 3, lr=0.0, epochs=100)
    messages = []
    train(cfg, log=messages.append, show_bar=False)
    log = [json.loads(line) for line in (tmp_path / "w" / "log.jsonl").read_text().splitlines()]
    assert log[:-1] == before
    assert log[-1]["step"] == first + 3 and log[-1]["epoch"] > before[-1]["epoch"]
    assert log[-1]["elapsed_s"] > before[-1]["elapsed_s"]
    assert any(f"from update {first}" in m for m in messages)
    replay = [json.loads(line)["step"] for line in (tmp_path / "w" / "probes.jsonl").read_text().splitlines()]
    assert replay == [0] + [r["step"] for r in before] + [first + 3]  # the replay carries on too
    start, end = load_file(best / "model.safetensors"), load_file(tmp_path / "w" / "last" / "model.safetensors")
    for name in start:
        torch.testing.assert_close(end[name], start[name])


def test_a_continued_run_has_a_best_checkpoint_of_its_own(tiny_checkpoints, tiny_corpus, tmp_path):
    """The log it carries on scores 100 BLEU everywhere, which no validation can beat: the
    run's first validation still writes best/, and training returns that folder."""
    start = Path(shutil.copytree(tiny_checkpoints["rnnsearch"], tmp_path / "start"))
    card = json.loads((start / "card.json").read_text())
    for record in card["log"]:
        record["val_bleu"] = 100.0
    (start / "card.json").write_text(json.dumps(card))
    first = card["log"][-1]["step"]
    cfg = tiny_config(tiny_corpus, tmp_path / "v", init_from=str(start), max_steps=first + 2, epochs=100)
    returned = train(cfg, log=lambda *_: None, show_bar=False)
    assert returned == tmp_path / "v" / "best" and (returned / "model.safetensors").is_file()


def test_init_from_refuses_another_architecture(tiny_checkpoints, tiny_corpus, tmp_path):
    cfg = tiny_config(tiny_corpus, tmp_path / "x", init_from=str(tiny_checkpoints["rnnsearch"]))
    cfg.model.arch = "rnnencdec"
    with pytest.raises(CheckpointError, match="differs from this run"):
        train(cfg, log=lambda *_: None, show_bar=False)


def test_warm_up_rises_linearly_from_the_first_update_of_the_run_then_leaves_the_rate_alone():
    t = preset("tiny").train
    t.lr, t.warmup = 0.8, 4
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(3))], lr=123.0)
    seen = []
    for step in range(7, 13):
        warm_lr(optimizer, t, Progress(step=step, first_step=7))
        seen.append(optimizer.param_groups[0]["lr"])
        optimizer.param_groups[0]["lr"] *= 0.5 if step == 11 else 1.0  # a decay after warm-up is kept
    assert seen == pytest.approx([0.2, 0.4, 0.6, 0.8, 0.8, 0.4])


def test_overrides_and_cli_errors(tiny_corpus, tmp_path, capsys):
    cfg = parse_overrides(preset("tiny"), ["model.arch=rnnencdec", "train.epochs=3", "train.bf16=true"])
    assert (cfg.model.arch, cfg.train.epochs, cfg.train.bf16) == ("rnnencdec", 3, True)
    with pytest.raises(ConfigError, match="bad override"):
        parse_overrides(cfg, ["epochs=3"])
    assert main(["--preset", "tiny", "--set", "train.data_dir=" + str(tmp_path / "none")]) == 2
    assert "none: no such folder" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):  # argparse refuses a preset not in PRESETS
        main(["--preset", "nope"])
    assert "invalid choice: 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_bf16_loss_and_gradients_track_fp32(arch):
    """Same batch, same weights: bf16 matmuls (the fast option) give the fp32 loss to
    bf16 precision and gradients pointing the same way."""
    from model.core.config import ModelConfig
    from model.corpus.parallel import make_batch
    from model.network.nmt_model import NMTModel
    from model.training.trainer import loss_fn

    torch.manual_seed(0)
    model = NMTModel(ModelConfig(arch=arch, src_vocab_size=23, tgt_vocab_size=29, emb_dim=5, hidden=7,
                                 align_dim=9, maxout=3, dropout=0.0))
    batch = make_batch([[5, 6, 7, 8, 9], [10, 11, 12], [13]], [[4, 5], [6, 7, 8, 9], [10, 11, 12]], [0, 1, 2])
    results = {}
    for bf16 in (False, True):
        model.zero_grad()
        loss = loss_fn(model, batch, 0.1, bf16)
        loss.backward()
        results[bf16] = loss.item(), torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    assert results[True][0] == pytest.approx(results[False][0], rel=2e-2)
    assert torch.nn.functional.cosine_similarity(results[True][1], results[False][1], dim=0) > 0.99


def test_progress_in_a_log_file_is_a_line_every_few_seconds(monkeypatch, capsys):
    """Under nohup (stderr not a terminal) a run prints plain lines at most every ``interval``
    seconds instead of a progress bar redrawn for every batch."""
    from model.training import trainer as train_module

    clock = iter(float(t) for t in range(0, 1000))
    monkeypatch.setattr(train_module.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(train_module.sys.stderr, "isatty", lambda: False, raising=False)
    progress = train_module.Progress()
    report = train_module.ProgressReport(progress, total=500, enabled=True, interval=10.0)
    for _ in range(95):  # one "second" per batch
        progress.batch += 1
        progress.step += 1
        report.update(progress, loss=2.5, tokens_per_s=1000.0)
    report.close()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 9 and lines[0].startswith("epoch 1 batch 10/500 step 10: loss 2.500, 1000 tok/s")


@pytest.fixture
def two_corpora(tiny_corpus, tmp_path):
    """The tiny folder corpus and a Tatoeba-style pair file of other toy sentences."""
    from ..conftest import make_pairs

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{en}\t{fr}\tCC-BY\n" for en, fr in make_pairs(400, seed=7)))
    return [{"name": "folder", "path": str(tiny_corpus)}, {"name": "pairs", "path": str(pairs), "weight": 0.5}]


def rounds_config(two_corpora, out, **fields):
    from model.core.config import Config

    cfg = tiny_config(two_corpora[0]["path"], out, epochs=2, val_every=7, keep_last=2, batch_size=30, **fields)
    return Config.from_dict({**cfg.to_dict(), "train": {**cfg.to_dict()["train"], "corpora": two_corpora}})


def test_validation_rounds_kept_checkpoints_and_mixed_corpora(two_corpora, tmp_path):
    torch.set_num_threads(1)
    train(rounds_config(two_corpora, tmp_path / "r", patience=100), log=lambda *_: None, show_bar=False)
    log = [json.loads(line) for line in (tmp_path / "r" / "log.jsonl").read_text().splitlines()]
    ends = [r["step"] for r in log if r["epoch"] in (1, 2)]
    assert len(ends) == 2 and [r["step"] for r in log] == sorted({*range(7, ends[1], 7), *ends})
    # an epoch: the folder's 600 pairs and half of the pair file's 320 training pairs, 30 a batch
    assert 760 / 30 <= ends[0] <= 760 / 30 + 2 and ends[1] - ends[0] in range(ends[0] - 2, ends[0] + 3)
    assert all(set(r["val_bleu_by_corpus"]) == {"folder", "pairs"} for r in log)
    kept = sorted(p.name for p in (tmp_path / "r").glob("step-*"))
    assert kept == [f"step-{r['step']:07d}" for r in log[-2:]]


def test_resuming_between_validation_rounds_gives_the_same_run(two_corpora, tmp_path):
    """Straight through == stopped at update 10 (between the rounds at 7 and 14) and resumed:
    same weights, same validation log. (Stopping by max_steps validates at 10 too; with no
    learning-rate decay that extra validation changes nothing.)"""
    torch.set_num_threads(1)
    fields = {"save_every": 5, "patience": 100, "lr_decay": 1.0}
    train(rounds_config(two_corpora, tmp_path / "a", max_steps=20, **fields), log=lambda *_: None, show_bar=False)
    train(rounds_config(two_corpora, tmp_path / "b", max_steps=10, **fields), log=lambda *_: None, show_bar=False)
    train(rounds_config(two_corpora, tmp_path / "b", max_steps=20, **fields), resume=True,
          log=lambda *_: None, show_bar=False)
    a, b = (load_file(tmp_path / run / "last" / "model.safetensors") for run in ("a", "b"))
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=1e-6, rtol=1e-5)
    keys = ("step", "epoch", "val_bleu", "val_loss")
    logs = [[{k: r[k] for k in keys} for r in map(json.loads, (tmp_path / run / "log.jsonl").read_text().splitlines())]
            for run in ("a", "b")]
    assert [r["step"] for r in logs[0]] == [7, 14, 20]
    assert logs[1][-2:] == logs[0][-2:]  # the rounds after the restart match the straight run's


def test_progress_reads_what_older_runs_saved():
    old = {"epoch": 3, "batch": 17, "step": 900, "best_bleu": 40.5, "bad_epochs": 2, "elapsed_s": 12.5}
    assert Progress.from_json(old) == Progress(epoch=3, batch=17, step=900, best_bleu=40.5, bad_rounds=2,
                                               elapsed_s=12.5, first_step=0)
