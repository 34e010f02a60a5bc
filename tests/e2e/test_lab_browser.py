"""The Lab in a real browser: while a short training runs, its loss curve and the held-out
input's heatmap redraw, then exact match by length appears."""
import pytest
expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (the test extra)").expect

from tests.e2e.conftest import served, wait_idle  # noqa: E402

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def lab_url(checkpoint_dir, tmp_path_factory):
    with served(checkpoint_dir, tmp_path_factory.mktemp("server") / "streamlit.log", "--lab-slots", "1") as url:
        yield url


def test_the_charts_redraw_while_a_training_runs(browser, lab_url, tmp_path):
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(f"{lab_url}/lab?task=reverse&arch=rnnsearch&seconds=8&train=3-6&test=2-8&seed=5&hidden=16",
              wait_until="domcontentloaded")
    page.get_by_role("button", name="Train", exact=True).wait_for(timeout=60_000)
    wait_idle(page)
    page.get_by_role("button", name="Train", exact=True).click()
    curve = page.locator('.canvas-chart[data-drawn] canvas[aria-label="Training loss"]')
    curve.wait_for(timeout=60_000)
    heatmap = page.locator('.canvas-chart[data-drawn] canvas[aria-label="rnnsearch: attention"]').first
    heatmap.wait_for(timeout=60_000)
    first = curve.locator("xpath=..").get_attribute("data-lines")  # each line's name and number of points
    assert first and '"rnnsearch"' in first
    # the fragment redraws the chart every 2 s with the training's newer points
    page.wait_for_function("old => { const c = document.querySelector('.canvas-chart canvas[aria-label=\"Training "
                           "loss\"]'); return c && c.parentElement.dataset.lines !== old; }", arg=first, timeout=30_000)
    page.locator('.canvas-chart[data-drawn] canvas[aria-label="Share of test inputs output exactly right"]').wait_for(
        timeout=90_000)
    page.screenshot(path=str(tmp_path / "lab.png"), full_page=True)
