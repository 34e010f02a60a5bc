"""The Alignment page in a real browser: measure the toy gold set and see its answer key drawn
over the heatmap."""
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
    chart = page.locator(".js-plotly-plot").filter(has=page.locator(".heatmaplayer")).first
    expect(chart.locator(".legendtext").first).to_have_text("gold: sure", timeout=120_000)
    box = page.get_by_label("Sentence to draw")
    wait_idle(page)  # the page's run is over: what is typed now is kept
    box.fill("2")
    box.press("Enter")  # sentence 2: "the small cat", two sure links and one possible
    expect(chart.locator(".legendtext")).to_have_text(["gold: sure", "gold: possible", "picked"], timeout=60_000)
    traces = chart.locator(".scatterlayer .trace")
    assert [traces.nth(k).locator("path.point").count() for k in range(3)] == [2, 1, 3]  # one pick per French word
    page.screenshot(path=str(tmp_path / "alignment.png"), full_page=True)
