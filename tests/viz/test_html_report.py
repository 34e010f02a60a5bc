"""The standalone HTML report of one translation: both models, plotly.js once, user text escaped."""
import re

import pytest

from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from viz.commands.report import main
from viz.html_report import report_html

HOSTILE = '<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> a dog'


@pytest.fixture(scope="module")
def traces(tiny_checkpoints):
    out = []
    for arch in ("rnnsearch", "rnnencdec"):
        translator = Translator.from_checkpoint(tiny_checkpoints[arch])
        out.append((f"{arch}-tiny", translator.translate([HOSTILE], SearchConfig(beam=3))[0]))
    return out


def test_one_file_with_both_models_plotly_once_and_user_text_escaped(traces):
    page = report_html(HOSTILE, traces)
    assert page.count("<h2>") == 2 and "rnnsearch-tiny" in page and "rnnencdec-tiny" in page
    assert page.count("Plotly.newPlot") == 3  # RNNsearch's heatmap and both beam trees
    assert page.count('* plotly.js v') == 1  # the plotly.js library, embedded once
    assert "<script src=" not in page  # nothing fetched from a CDN
    assert "window.__pwned = 1</script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page  # the source, shown as text
    assert page.count("<tr>") == sum(len(t.target_tokens) + 1 for _, t in traces)  # a row per output piece


def test_each_chart_downloads_a_png_named_after_its_model_and_view(traces):
    page = report_html(HOSTILE, traces)
    names = re.findall(r'"toImageButtonOptions": \{"format": "png", "filename": "([^"]+)"', page)
    assert names == ["rnnsearch-tiny_attention", "rnnsearch-tiny_beam_search", "rnnencdec-tiny_beam_search"]
    assert page.count('"displaylogo": false') == 3


@pytest.mark.parametrize("method, random, verdict", [(1.25, 0.5, "more than chance"), (0.25, 0.75, "no better than random")])
def test_a_heatmap_with_a_check_says_how_faithful_it_is(traces, method, random, verdict):
    from model.explaining.faithfulness import Comprehensiveness

    page = report_html(HOSTILE, traces, {"rnnsearch-tiny": Comprehensiveness(method, random, (1, 2, 4)),
                                         "rnnencdec-tiny": Comprehensiveness(9.0, 0.0, (1, 2, 4))})
    assert page.count("How faithful") == 1  # under RNNsearch's heatmap; RNNencdec has none to check
    assert f"by {method:.2f} per token; as many random words, by {random:.2f}: {verdict}" in page
    assert "How faithful" not in report_html(HOSTILE, traces)


def test_the_command_writes_the_report(tiny_checkpoints, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--text", "a dog runs", str(out)]) == 0
    assert out.read_text().startswith("<!doctype html>") and "How faithful: removing" in out.read_text()
    assert main(["--checkpoint", str(tmp_path / "missing"), "--text", "a", str(out)]) == 2
    assert "error:" in capsys.readouterr().err
