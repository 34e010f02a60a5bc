"""Static paper-style figures: PDF, SVG and PNG files of the right type, text kept as text,
hostile tokens escaped, and the command line on a checkpoint, a report and cards."""
import json
import shutil

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from viz.figures.print_figures import alignment_figure, length_figure, main, save  # noqa: E402

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


def test_the_command_draws_a_checkpoints_attention_and_refuses_what_it_cannot(tmp_path, tiny_checkpoints, capsys):
    out = tmp_path / "fig3.pdf"
    assert main(["alignment", "--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--text", "a dog runs",
                 "--words", str(out)]) == 0
    assert out.read_bytes().startswith(MAGIC["pdf"])
    assert main(["alignment", "--checkpoint", str(tiny_checkpoints["rnnencdec"]), "--text", "a dog",
                 str(tmp_path / "x.pdf")]) == 2
    assert "no attention to draw" in capsys.readouterr().err
    assert main(["length", str(tmp_path), str(tmp_path / "fig2.jpg")]) == 2  # no scores.json, and a bad suffix
    with pytest.raises(ValueError, match="write .pdf, .svg or .png"):
        save(length_figure({"a": [(1.0, 2.0)]}), tmp_path / "fig.jpg")
