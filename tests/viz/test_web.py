"""The browser code in viz/web/: its Node tests (node --test tests/viz/web/), ESLint over it, and
every chart kind painted by the real script from what Python sends (skipped without Node; ESLint
skipped until ``npm ci`` has run in viz/web, as .ci/run does)."""
import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from viz.figures.beam_tree import beam_tree
from viz.figures.decoding_step import energies_bar, norms_bar
from viz.figures.explanation_shares import shares_bar
from viz.figures.heatmap import alignment_matrix, with_links
from viz.figures.lines import Line, LinesFigure
from viz.figures.sentence_space import sentence_map_layers
from viz.pages.parts.canvas_charts import KINDS, chart_data

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "viz" / "web"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (.ci/run installs it)")

SRC, TGT = ["▁the", "▁<b>dog</b>", "▁runs"], ["▁le", "▁chien", "▁court", "▁&", "</s>"]


def figures() -> list:
    """One figure of every kind the canvas draws, made by the builders the pages use."""
    rng = np.random.default_rng(7)
    matrix = rng.dirichlet(np.ones(3), size=5)  # (5 outputs, 3 sources)
    nodes = [dict(id=0, parent=None, step=0, token="<s>", score=0.0, norm_score=0.0, status="kept"),
             dict(id=1, parent=0, step=1, token="▁le", score=-0.1, norm_score=-0.1, status="best"),
             dict(id=2, parent=0, step=1, token="▁un", score=-2.3, norm_score=-2.3, status="pruned")]
    return [
        sentence_map_layers(rng.normal(size=(7, 2)), [f"sentence {i}" for i in range(7)], np.zeros(2), "mine", [2, 5], "map"),
        with_links(alignment_matrix(matrix, SRC, TGT, title="heatmap"), [(0, 0), (1, 1)], "human links"),
        energies_bar(rng.normal(size=3), SRC, title="energies"),
        norms_bar([1.5, 0.25, 3.0], SRC, "norms"),
        shares_bar(np.array([[0.7, 0.3], [0.4, 0.6], [0.5, 0.5]]), TGT[:3], "shares"),
        LinesFigure("BLEU by length", "length", "BLEU", (
            Line("RNNsearch", "#1f77b4", (10.0, 20.0, 30.0), (25.0, 24.5, 22.0), band=((20.0, 21.0, 19.0), (27.0, 26.0, 25.0))),
            Line("RNNencdec", "#d62728", (10.0, 20.0, 30.0), (22.0, 17.5, 11.0), dashed=True)),
            x_ticks=((10.0, "0-10\n(5)"), (20.0, "10-20"), (30.0, "20-30"))),
        beam_tree(nodes, "beam"),
    ]


def test_there_is_one_figure_of_every_kind():
    assert sorted({KINDS[type(f)] for f in figures()}) == sorted(set(KINDS.values()))


def test_the_node_tests_pass():
    done = subprocess.run([NODE, "--test", "tests/viz/web/"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"^# pass [1-9]\d*$", done.stdout, re.M) and re.search(r"^# fail 0$", done.stdout, re.M)


def test_every_kind_paints_what_python_sends_with_its_labels(tmp_path):
    """The script reads the fields of each figure class by name: a field renamed on one side
    paints a number that is not finite or loses a label, and this fails."""
    charts = [chart_data(f, f"chart {k}", "png") for k, f in enumerate(figures())]
    (tmp_path / "charts.json").write_text(json.dumps(charts), encoding="utf-8")
    done = subprocess.run([NODE, "tests/viz/web/paint_figures.mjs", str(tmp_path / "charts.json")], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    painted = json.loads(done.stdout)
    assert [p["kind"] for p in painted] == [c["kind"] for c in charts]
    for figure, chart in zip(figures(), painted):
        texts = set(chart["texts"])
        assert figure.title in texts and chart["numbers"] > 10
        wanted = {f.name: getattr(figure, f.name) for f in dataclasses.fields(figure)}
        for field in ("x_labels", "y_labels", "labels"):
            if field in wanted and chart["kind"] != "tree":
                assert set(wanted[field]) <= texts, (chart["kind"], field)
        for field in ("layers", "lines"):
            for item in wanted.get(field, ()):
                assert item.name in texts, (chart["kind"], item.name)


@pytest.mark.skipif(not (WEB / "node_modules" / ".bin" / "eslint").exists(),
                    reason="ESLint is not installed: cd viz/web && npm ci (.ci/run does)")
def test_eslint_finds_nothing():
    done = subprocess.run([str(WEB / "node_modules" / ".bin" / "eslint"), "--max-warnings", "0", "."], cwd=WEB,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_no_python_module_of_the_app_carries_browser_code():
    """The app's scripts live in viz/web/; a Python string holding a module's export is a script
    that no linter or test reads."""
    for path in (p for p in (REPO / "viz").rglob("*.py") if "node_modules" not in p.parts):
        text = path.read_text(encoding="utf-8")
        assert "export default" not in text and "addEventListener(" not in text, path
