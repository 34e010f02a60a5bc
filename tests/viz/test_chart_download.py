"""Chart downloads: the plotly config behind each chart's camera button, the sidebar's PNG/SVG
choice and its URL parameter, and the rule that every chart in the app goes through it."""
import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from viz.figures.download_config import DEFAULT_FORMAT, MAX_STEM_CHARS, PARAM, file_stem, parse_format, plotly_config
from .test_translate_page import canvas

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "viz" / "pages" / "main.py")


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_the_config_sets_the_camera_buttons_format_and_hides_the_logo(fmt):
    config = plotly_config(fmt, "heatmap_rnnsearch-tiny")
    assert config["displaylogo"] is False
    assert config["toImageButtonOptions"]["format"] == fmt
    assert config["toImageButtonOptions"]["filename"] == "heatmap_rnnsearch-tiny"


@pytest.mark.parametrize("fmt", ["pdf", "SVG", "", "../x"])
def test_the_config_refuses_a_format_plotly_would_not_draw(fmt):
    with pytest.raises(ValueError, match="chart format"):
        plotly_config(fmt)


@pytest.mark.parametrize("name, stem", [
    ("heatmap_rnnsearch-tiny", "heatmap_rnnsearch-tiny"),  # a key as the pages write them stays as it is
    ("../x<script>", "x_script"),  # no path, no markup
    ("paper_grid_0_The agreement on the", "paper_grid_0_The_agreement_on_the"),  # spaces from a sentence
    ("C:\\Users\\a/b.svg", "C_Users_a_b_svg"),
    ("α_ij attention", "ij_attention"),  # letters outside ASCII become '_', then trimmed
    ("../", "chart"), ("", "chart"),  # nothing usable left
    ("-rf x", "rf_x"),  # no leading dash
    ("k" * 200, "k" * MAX_STEM_CHARS),
])
def test_file_names_keep_safe_characters_only(name, stem):
    assert file_stem(name) == stem
    assert plotly_config("png", name)["toImageButtonOptions"]["filename"] == stem


@pytest.mark.parametrize("raw, fmt", [
    ("svg", "svg"), ("SVG", "svg"), (" svg ", "svg"), ("png", "png"),
    (None, "png"), ("", "png"), ("pdf", "png"), ("../x<script>", "png"), ("svg\x00", "png"), ("s" * 5000, "png"),
])
def test_a_url_value_parses_to_a_format_or_the_default(raw, fmt):
    assert parse_format(raw) == fmt


def test_no_page_draws_a_plotly_chart():
    """Every chart of the app is drawn on a canvas (canvas_charts.py · chart_ui, which follows the chosen
    format): no page makes the browser load plotly's code. (The notebook and the HTML report are plotly's.)"""
    callers = sorted(p.relative_to(REPO / "viz").as_posix() for p in (REPO / "viz").rglob("*.py")
                     if "node_modules" not in p.parts and "st.plotly_chart(" in p.read_text())
    assert callers == []


def download_formats(at) -> list[str]:
    """The format each chart's download button downloads (from the element protos: plotly's config,
    or a canvas chart's data)."""
    return ([json.loads(el.proto.config)["toImageButtonOptions"]["format"] for el in at.get("plotly_chart")]
            + [data["download"]["format"] for data in canvas(at)])


def app(query: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("value, fmt", [
    (None, "png"), ("svg", "svg"), ("SVG", "svg"), ("png", "png"),
    ("../x<script>", "png"), ("pdf", "png"), ("", "png"), ("x" * 5000, "png"),
])
def test_the_url_sets_the_download_format_and_a_bad_value_falls_back_to_png(app_env, value, fmt):
    at = app({} if value is None else {PARAM: value})
    assert at.radio(key=PARAM).value == fmt
    formats = download_formats(at)
    assert formats and set(formats) == {fmt}  # the landing page's heatmap, at least
    assert not at.warning  # neither a notice nor the Translate page's "unknown link parameter"
    assert at.query_params.get(PARAM) == (None if fmt == DEFAULT_FORMAT else fmt)  # the URL shows what is used


def test_the_sidebar_choice_sets_every_chart_and_the_url_and_survives_the_page_rewriting_it(app_env):
    at = app({})
    radio = at.radio(key=PARAM)
    assert radio.options == ["PNG", "SVG"] and "top right" in radio.help
    radio.set_value("svg").run()
    assert set(download_formats(at)) == {"svg"} and at.query_params[PARAM] == "svg"
    at.text_area(key="source").input("a dog runs in the park").run()  # the Translate page writes its view
    assert not at.exception and not at.warning
    assert at.query_params["src"] == "a dog runs in the park" and at.query_params[PARAM] == "svg"
    assert set(download_formats(at)) == {"svg"}
    at.radio(key=PARAM).set_value("png").run()
    assert set(download_formats(at)) == {"png"} and PARAM not in at.query_params


def test_each_chart_file_is_named_after_its_key(app_env):
    at = app({PARAM: "svg"})
    names = ([json.loads(el.proto.config)["toImageButtonOptions"]["filename"] for el in at.get("plotly_chart")]
             + [data["download"]["filename"] for data in canvas(at)])
    assert names and all(re.fullmatch(r"heatmap_[A-Za-z0-9_-]+", name) for name in names)
