"""The Sentence space page in a real browser: both models' maps and neighbour tables render."""
import pytest
expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (the test extra)").expect

from tests.e2e.conftest import wait_idle  # noqa: E402

pytestmark = pytest.mark.e2e


def test_the_maps_and_neighbour_tables_render(page, app_url, tmp_path):
    page.goto(f"{app_url}/space", wait_until="domcontentloaded")
    box = page.get_by_label("Your sentence")
    box.wait_for(timeout=60_000)
    wait_idle(page)  # the page's run is over: what is typed now is kept
    box.fill("a red dog runs in the park")
    box.press("Enter")
    maps = page.locator(".js-plotly-plot")
    expect(maps).to_have_count(2, timeout=120_000)
    expect(maps.first.locator(".legendtext")).to_have_text(["training sentences", "nearest", "yours"], timeout=60_000)
    expect(page.locator("[data-testid=stDataFrame]")).to_have_count(3, timeout=60_000)  # two tables, RNNsearch's words
    page.screenshot(path=str(tmp_path / "space.png"), full_page=True)
