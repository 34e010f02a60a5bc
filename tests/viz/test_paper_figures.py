"""Static paper-style figures: PDF, SVG and PNG files of the right type, text kept as text,
hostile tokens escaped, the command line on a checkpoint, a report and cards, and drawing that
leaves matplotlib's global settings alone, from any number of threads."""
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib  # noqa: E402

from viz.commands.figures import main  # noqa: E402
from viz.figures.print_figures import FORMATS, alignment_figure, figure_bytes, length_figure, save  # noqa: E402

MAGIC = {"pdf": b"%PDF", "png": b"\x89PNG", "svg": b"<?xml"}
SRC = ["▁The", "▁black", "▁cat", "▁<script>alert(1)</script>", "."]
TGT = ["▁Le", "▁chat", "▁noir", "▁$x$", "</s>"]


@pytest.mark.parametrize("kind", ["pdf", "svg", "png"])
def test_the_alignment_matrix_is_written_in_each_format(tmp_path, kind):
    matrix = np.random.default_rng(3).dirichlet(np.ones(len(SRC)), size=len(TGT))
    path = save(alignment_figure(matrix, SRC, TGT), tmp_path / f"fig3.{kind}")
    data = path.read_bytes()
    assert data.startswith(MAGIC[kind]) and len(data) > 1000
    if kind == "svg":
        text = data.decode()
        for word in ("black", "cat", "chat", "noir"):
            assert f">{word}<" in text  # the tokens are text, not paths
        assert "<script>" not in text and "&lt;script&gt;" in text  # a hostile token stays text
        assert "$x$" in text  # not rendered as mathtext
    if kind == "pdf":
        assert b"/Font" in data and b"/Subtype /Image" not in data  # text as text, not a bitmap


def test_the_length_curves_from_a_report_and_from_cards(tmp_path, tiny_checkpoints):
    rows = [{"model": m, "lo": lo, "hi": lo + 9, "bleu": b, "count": 3}
            for m, offset in (("RNNsearch", 0), ("RNNencdec", -8)) for lo, b in ((1, 30 + offset), (11, 28 + offset * 2))]
    (tmp_path / "scores.json").write_text(json.dumps({"bleu_by_length": rows}))
    assert main(["length", str(tmp_path), str(tmp_path / "fig2.svg")]) == 0
    svg = (tmp_path / "fig2.svg").read_text()
    assert ">RNNsearch<" in svg and ">RNNencdec<" in svg and ">BLEU score<" in svg
    folders = []
    for arch, path in tiny_checkpoints.items():
        folder = tmp_path / arch
        shutil.copytree(path, folder)
        card = json.loads((folder / "card.json").read_text())
        card["length_stress"] = {"toy/test": [{"k": k, "items": 9, "source_words": 5.0 * k, "bleu": 50.0 - k,
                                               "length_ratio": 1.0} for k in (1, 2, 3)]}
        (folder / "card.json").write_text(json.dumps(card))
        folders.append(str(folder))
    assert main(["length", "--card", folders[0], "--card", folders[1], str(tmp_path / "stress.png")]) == 0
    assert (tmp_path / "stress.png").read_bytes().startswith(MAGIC["png"])


def svg_text(svg: str) -> str:
    """The words of an SVG's text elements, a note's wrapped lines joined by spaces."""
    import re

    return " ".join(" ".join(re.findall(r">([^<>]+)</text>", svg)).split())


def test_a_note_is_printed_under_the_matrix_as_text_and_makes_room_for_itself():
    matrix = np.eye(len(TGT), len(SRC))
    note = "How faithful: removing the most-attended source words costs $1 " + "and more words " * 20
    plain, noted = alignment_figure(matrix, SRC, TGT), alignment_figure(matrix, SRC, TGT, note=note)
    assert noted.get_figheight() > plain.get_figheight() and noted.get_figwidth() == plain.get_figwidth()
    text = svg_text(figure_bytes(noted, "svg").decode())
    assert "How faithful: removing the most-attended" in text and "$1" in text  # text, never mathtext


def test_the_command_draws_a_checkpoints_attention_and_refuses_what_it_cannot(tmp_path, tiny_checkpoints, capsys):
    out = tmp_path / "fig3.svg"
    assert main(["alignment", "--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--text", "a dog runs",
                 "--words", str(out)]) == 0
    assert out.read_bytes().startswith(MAGIC["svg"])
    printed = capsys.readouterr().out
    assert printed.startswith("How faithful: removing the most-attended source words")  # said, and drawn
    assert "How faithful: removing the most-attended source words" in svg_text(out.read_text())
    assert main(["alignment", "--checkpoint", str(tiny_checkpoints["rnnencdec"]), "--text", "a dog",
                 str(tmp_path / "x.pdf")]) == 2
    assert "no attention to draw" in capsys.readouterr().err
    assert main(["length", str(tmp_path), str(tmp_path / "fig2.jpg")]) == 2  # no scores.json, and a bad suffix
    with pytest.raises(ValueError, match="write .pdf, .svg or .png"):
        save(length_figure({"a": [(1.0, 2.0)]}), tmp_path / "fig.jpg")


# Run in a fresh interpreter whose backend is "svg", a backend a module that picked one for
# itself on import (matplotlib.use) would replace; prints what changed, nothing when nothing did.
UNTOUCHED = """
import sys
import matplotlib
raw = lambda params: dict(dict.items(params))  # noqa: E731 (as stored: reading 'backend' may resolve it)
backend, params = matplotlib.get_backend(), raw(matplotlib.rcParams)
from viz.figures import print_figures as figures
drawn = [figures.alignment_figure([[0.25, 0.75, 0.0], [1.0, 0.0, 0.0]], ["a", "b", "c"], ["x", "</s>"]),
         figures.length_figure({"m": [(1.0, 20.0), (11.0, 18.0)]})]
for fig in drawn:
    for kind in figures.FORMATS:
        figures.figure_bytes(fig, kind)
if matplotlib.get_backend() != backend:
    print("backend", backend, "->", matplotlib.get_backend())
after = raw(matplotlib.rcParams)
print(*sorted(key for key in params.keys() | after.keys() if params.get(key) != after.get(key)))
if "matplotlib.pyplot" in sys.modules:
    print("pyplot imported")
"""


def test_importing_and_drawing_leave_the_backend_and_rcparams_alone():
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "MPLBACKEND": "svg", "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", UNTOUCHED], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", done.stdout


def test_figures_drawn_by_two_threads_at_once_are_each_complete():
    """Two threads start together (a barrier, no sleeps), each draws its own matrix (3 x 5 and
    5 x 7) and writes it in every format: every file is whole, holds its own thread's words
    only, and rcParams are as before."""
    before = _raw(matplotlib.rcParams)
    words = {0: (["src%d" % j for j in range(5)], ["tgtA%d" % i for i in range(3)]),
             1: (["src%d" % j for j in range(7)], ["tgtB%d" % i for i in range(5)])}
    start, out, errors = threading.Barrier(2), {}, []

    def draw(worker: int) -> None:
        try:
            src, tgt = words[worker]
            matrix = np.random.default_rng(worker).dirichlet(np.ones(len(src)), size=len(tgt))  # (tgt, src)
            start.wait()
            fig = alignment_figure(matrix, src, tgt)
            curves = length_figure({f"model{worker}": [(5.0, 30.0 - worker), (15.0, 25.0 - worker)]})
            out[worker] = {kind: (figure_bytes(fig, kind), figure_bytes(curves, kind)) for kind in FORMATS}
        except Exception as exc:  # noqa: BLE001 (reported by the main thread's assert)
            errors.append(exc)

    threads = [threading.Thread(target=draw, args=(w,)) for w in words]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for worker, files in out.items():
        for kind, (alignment, curves) in files.items():
            assert alignment.startswith(MAGIC[kind]) and curves.startswith(MAGIC[kind]), (worker, kind)
        svg = files["svg"][0].decode()
        assert all(f">{t}<" in svg for t in words[worker][1])  # its own rows, as text
        assert f"tgt{'BA'[worker]}0" not in svg  # none of the other thread's
    assert _raw(matplotlib.rcParams) == before


def _raw(params) -> dict:
    """rcParams as stored: reading ``params["backend"]`` would resolve an automatic backend."""
    return dict(dict.items(params))


@pytest.mark.parametrize("flags, title", [
    (["--layer", "1"], "layer 1 (mean of heads)"),
    (["--layer", "2", "--head", "3", "--shifted"], "layer 2, head 3, shifted"),
    (["--heads"], "every layer and head"),
])
def test_the_command_draws_a_transformers_head_layer_or_every_head(tmp_path, tiny_checkpoints, capsys, flags, title):
    from tests.model.transformer_fixtures import save_tiny_transformer

    folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t")
    out = tmp_path / "heads.svg"
    assert main(["alignment", "--checkpoint", str(folder), "--text", "a dog runs", *flags, str(out)]) == 0
    assert title in out.read_text()


@pytest.mark.parametrize("flags, message", [
    (["--layer", "3"], "--layer must be 1..2"),
    (["--layer", "1", "--head", "4"], "--head must be 1..3"),
    (["--heads", "--words"], "leave out --words"),
])
def test_the_command_refuses_a_head_the_transformer_lacks(tmp_path, tiny_checkpoints, capsys, flags, message):
    from tests.model.transformer_fixtures import save_tiny_transformer

    folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t")
    assert main(["alignment", "--checkpoint", str(folder), "--text", "a dog runs", *flags,
                 str(tmp_path / "x.pdf")]) == 2
    assert message in capsys.readouterr().err


def test_the_command_says_an_rnn_has_no_heads(tmp_path, tiny_checkpoints, capsys):
    assert main(["alignment", "--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--text", "a dog runs", "--heads",
                 str(tmp_path / "x.pdf")]) == 2
    assert "has one attention, not layers and heads" in capsys.readouterr().err
