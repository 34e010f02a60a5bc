"""The Sentence space page in a real browser: both models' maps and neighbour tables render; a
map shows a dot's sentence on hover (as text, markup and all) and downloads as the chosen chart
format."""
import json

import pytest
expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (the test extra)").expect

from tests.e2e.conftest import wait_idle  # noqa: E402

pytestmark = pytest.mark.e2e

SENTENCE = "a red dog <b>runs</b> in the park"  # markup stays text


def test_the_maps_and_neighbour_tables_render(page, app_url, tmp_path):
    page.goto(f"{app_url}/space", wait_until="domcontentloaded")
    box = page.get_by_label("Your sentence")
    box.wait_for(timeout=60_000)
    wait_idle(page)  # the page's run is over: what is typed now is kept
    box.fill(SENTENCE)
    box.press("Enter")
    tables = page.locator("[data-testid=stDataFrame]")
    expect(tables).to_have_count(3, timeout=120_000)  # two tables, RNNsearch's words
    wait_idle(page)
    maps = page.locator(".canvas-chart[data-drawn]")
    expect(maps).to_have_count(2, timeout=60_000)
    page.screenshot(path=str(tmp_path / "space.png"), full_page=True)

    wait_idle(page)  # a later run may draw the maps again: measure the ones that stay
    first = maps.first
    canvas, tip = first.get_by_role("img"), first.locator(".tip")  # the canvas, named by its title
    expect(canvas).to_be_visible(timeout=60_000)
    box = canvas.bounding_box()
    assert box["width"] > 200 and box["height"] == 440
    assert canvas.get_attribute("aria-label").endswith(": s_0")  # "rnnsearch-tiny: s_0", the map's title
    training, nearest, yours = json.loads(first.get_attribute("data-first"))  # each layer's first point, in pixels
    canvas.hover(position={"x": yours[0], "y": yours[1]})
    expect(tip).to_have_text(SENTENCE)
    assert tip.locator("b").count() == 0
    canvas.hover(position={"x": 2, "y": 2})  # the map's corner: no dot there
    expect(tip).to_be_hidden()

    with page.expect_download() as download:
        first.get_by_role("button", name="Download PNG").click()
    assert download.value.suggested_filename.startswith("space_map_") and download.value.suggested_filename.endswith(".png")
    assert download.value.path().read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    page.get_by_text("SVG", exact=True).click()  # the sidebar's chart format: the maps download SVG now
    wait_idle(page)
    with page.expect_download() as download:
        page.locator(".canvas-chart").first.get_by_role("button", name="Download SVG").click()
    svg = download.value.path().read_text()
    assert download.value.suggested_filename.endswith(".svg") and svg.startswith("<svg") and svg.endswith("</svg>")
    assert "first principal axis" in svg and "<b>" not in svg
