"""The Alignment page in a real browser: measure the toy gold set and see its answer key drawn
over the heatmap."""
import json
import re

import pytest
expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (the test extra)").expect

from tests.e2e.conftest import wait_idle  # noqa: E402

pytestmark = pytest.mark.e2e


def test_gold_links_are_drawn_over_the_heatmap(page, app_url, tmp_path):
    page.goto(f"{app_url}/alignment", wait_until="domcontentloaded")
    button = page.get_by_role("button", name="Measure")
    button.wait_for(timeout=60_000)
    wait_idle(page)  # the page's run is over: the click starts a run of its own
    button.click()
    chart = page.locator(".canvas-chart[data-drawn]").first  # drawn on a canvas (viz/pages/parts/canvas_charts.py)
    expect(chart).to_have_attribute("data-links", re.compile('^\\[\\["gold: sure",'), timeout=120_000)
    box = page.get_by_label("Sentence to draw")
    wait_idle(page)  # the page's run is over: what is typed now is kept
    box.fill("2")
    box.press("Enter")  # sentence 2: "the small cat", two sure links and one possible
    links = json.dumps([["gold: sure", 2], ["gold: possible", 1], ["picked", 3]], separators=(",", ":"))
    expect(chart).to_have_attribute("data-links", links, timeout=60_000)  # one pick per French word
    page.screenshot(path=str(tmp_path / "alignment.png"), full_page=True)
