"""A chart's camera button in a real browser: plotly.js draws the file, in the format the URL's
(or the sidebar's) chart download setting names."""
import re
from urllib.parse import urlencode

import pytest
expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (the test extra)").expect

pytestmark = pytest.mark.e2e

SENTENCE = "a dog runs in the park"


@pytest.mark.parametrize("query, suffix, starts", [
    ({"chart_format": "svg"}, ".svg", (b"<svg", b"<?xml")),
    ({}, ".png", (b"\x89PNG\r\n\x1a\n",)),  # PNG is the default
])
def test_the_camera_button_downloads_the_chosen_format(page, app_url, query, suffix, starts):
    page.goto(f"{app_url}/?{urlencode({'src': SENTENCE, **query})}", wait_until="domcontentloaded")
    heatmap = page.locator(".js-plotly-plot").filter(has=page.locator(".heatmaplayer")).first
    ticks = heatmap.locator("g.xtick text")
    expect(ticks.first).to_be_visible(timeout=60_000)
    tokens = ticks.all_text_contents()  # the source pieces along the top
    heatmap.hover()
    with page.expect_download(timeout=30_000) as caught:
        heatmap.locator(".modebar-btn[data-title^='Download plot']").click()
    download = caught.value
    assert re.fullmatch(r"heatmap_[A-Za-z0-9_-]+" + re.escape(suffix), download.suggested_filename)
    data = open(download.path(), "rb").read()
    assert data.startswith(starts), data[:40]
    if suffix == ".svg":  # a drawing with the chart's own text in it, not a picture of it
        assert "dog" in tokens and all(f">{token}<".encode() in data for token in tokens), tokens
