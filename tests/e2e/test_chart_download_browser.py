"""A chart's download button in a real browser: the page's script (a canvas heatmap) or plotly.js
(every other chart) draws the file, in the format the URL's (or the sidebar's) chart download
setting names."""
import json
import re
from urllib.parse import urlencode

import pytest
expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (the test extra)").expect

from tests.e2e.conftest import wait_idle  # noqa: E402

pytestmark = pytest.mark.e2e

SENTENCE = "a dog runs in the park"
FORMATS = [({"chart_format": "svg"}, ".svg", (b"<svg", b"<?xml")), ({}, ".png", (b"\x89PNG\r\n\x1a\n",))]  # PNG: default


@pytest.mark.parametrize("query, suffix, starts", FORMATS)
def test_the_heatmaps_button_downloads_the_chosen_format(page, app_url, query, suffix, starts):
    page.goto(f"{app_url}/?{urlencode({'src': SENTENCE, **query})}", wait_until="domcontentloaded")
    heatmap = page.locator(".canvas-chart[data-drawn]").first
    heatmap.wait_for(timeout=60_000)
    tokens = json.loads(heatmap.get_attribute("data-columns"))  # the source pieces along the top
    heatmap.hover()
    with page.expect_download(timeout=30_000) as caught:
        heatmap.get_by_role("button", name=f"Download {suffix[1:].upper()}").click()
    download = caught.value
    assert re.fullmatch(r"heatmap_[A-Za-z0-9_-]+" + re.escape(suffix), download.suggested_filename)
    data = open(download.path(), "rb").read()
    assert data.startswith(starts), data[:40]
    if suffix == ".svg":  # a drawing with the chart's own text in it, not a picture of it
        assert "dog" in tokens and all(f">{token}<".encode() in data for token in tokens), tokens


def test_a_plotly_charts_camera_button_downloads_the_chosen_format(page, app_url):
    """Plotly's button follows the same setting (its PNG default is checked by the unit tests' config)."""
    query, suffix, starts = FORMATS[0]  # SVG
    page.goto(f"{app_url}/models?{urlencode(query)}", wait_until="domcontentloaded")
    chart = page.locator(".js-plotly-plot").first  # the Models page's training curves are plotly's
    chart.wait_for(timeout=120_000)
    wait_idle(page)
    chart.hover()
    with page.expect_download(timeout=30_000) as caught:
        chart.locator(".modebar-btn[data-title^='Download plot']").click()
    download = caught.value
    assert download.suggested_filename.endswith(suffix)
    assert open(download.path(), "rb").read().startswith(starts)
