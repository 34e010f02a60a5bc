"""A Transformer's layer and head picker in a real browser: each pick redraws the heatmap and
lands in the URL."""
import shutil

import pytest
expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (the test extra)").expect

from tests.e2e.conftest import served, wait_idle  # noqa: E402
from tests.model.transformer_fixtures import save_tiny_transformer  # noqa: E402

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def transformer_url(checkpoint_dir, tiny_checkpoints, tmp_path_factory):
    root = tmp_path_factory.mktemp("transformer_root")
    shutil.copytree(checkpoint_dir / "rnnsearch-tiny", root / "rnnsearch-tiny")
    save_tiny_transformer(tiny_checkpoints["rnnsearch"], root / "transformer-tiny", seed=5)
    with served(root, tmp_path_factory.mktemp("server") / "streamlit.log") as url:
        yield url


def heatmap(page, title: str):
    """The Transformer's heatmap, once drawn with ``title`` (its canvas says it to screen readers)."""
    return page.locator(f'.canvas-chart[data-drawn] canvas[aria-label="transformer-tiny: cross-attention, {title}"]')


def test_the_layer_and_head_picker_redraws_the_heatmap(browser, transformer_url, tmp_path):
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(f"{transformer_url}/?src=a+dog+runs&right=transformer-tiny", wait_until="domcontentloaded")
    heatmap(page, "layer 2, mean of its heads").wait_for(timeout=60_000)
    wait_idle(page)
    page.get_by_text("one head", exact=True).click()
    heatmap(page, "layer 2, head 1").wait_for(timeout=60_000)
    wait_idle(page)
    page.locator("[data-testid=stCheckbox]", has_text="Shifted reading").locator("label").click()
    heatmap(page, "layer 2, head 1, shifted").wait_for(timeout=60_000)
    wait_idle(page)
    # layer 0: each model's own default layer (here its last, 2); head 1; shifted
    page.wait_for_function("() => location.search.includes('heads=0.1s')", timeout=30_000)
    page.get_by_text("every head", exact=True).click()
    heads = [page.locator(f'.canvas-chart[data-drawn] canvas[aria-label="layer 2, head {head}, shifted"]')
             for head in (1, 2, 3)]
    for head in heads:
        head.wait_for(timeout=60_000)
    # the grid spans the page, two heads a row: each about half of it, not a quarter
    page_width = page.locator("[data-testid=stMainBlockContainer]").bounding_box()["width"]
    widths = [head.bounding_box()["width"] for head in heads]
    assert all(0.4 * page_width < w <= 0.5 * page_width for w in widths), (widths, page_width)
    page.screenshot(path=str(tmp_path / "heads.png"), full_page=True)
