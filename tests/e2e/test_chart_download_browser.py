"""A chart's download button in a real browser: the page's script draws the file (a heatmap, a line
chart), in the format the URL's (or the sidebar's) chart download setting names."""
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
    wait_idle(page)  # the run after it (the check under the heatmap) draws the heatmap again: click after it
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


def test_a_line_charts_button_downloads_the_chosen_format(page, app_url):
    """The Models page's training curves: lines drawn by the same script, in the URL's format."""
    query, suffix, starts = FORMATS[0]  # SVG
    page.goto(f"{app_url}/models?{urlencode(query)}", wait_until="domcontentloaded")
    chart = page.locator(".canvas-chart[data-lines]").first  # train and validation loss
    chart.wait_for(timeout=120_000)
    wait_idle(page)
    names = [name for name, _points in json.loads(chart.get_attribute("data-lines"))]
    chart.hover()
    with page.expect_download(timeout=30_000) as caught:
        chart.get_by_role("button", name="Download SVG").click()
    download = caught.value
    assert download.suggested_filename.endswith(suffix)
    data = open(download.path(), "rb").read()
    assert data.startswith(starts) and b"<polyline" in data
    assert names == ["train loss", "val loss"] and all(f">{name}<".encode() in data for name in names)
