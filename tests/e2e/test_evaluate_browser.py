"""Upload a small test set in a real browser, evaluate, wait for the length chart."""
import json
import re

import pytest

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e
PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError

SRC = "a dog runs in the park\nthe small cat sits\na man eats a red ball\n"
REF = "un chien court dans le parc\nle petit chat assis\nun homme mange une balle rouge\n"


def upload(page, index: int, path) -> None:
    """Put ``path`` into the page's ``index``-th file input and wait until the app has it.

    An upload that lands during a rerun can still be dropped on a loaded machine; the chip with the
    file's name then never shows, and the upload is made again (three tries in all)."""
    for _ in range(3):
        wait_idle(page)
        page.locator("input[type=file]").nth(index).set_input_files(str(path))
        try:
            page.get_by_text(path.name, exact=True).first.wait_for(timeout=20_000)
        except PlaywrightTimeout:  # the upload was dropped
            continue
        wait_idle(page)
        return
    raise AssertionError(f"{path.name} was not taken by the uploader in three tries")


def test_evaluate_in_browser(page, app_url, tmp_path):
    (tmp_path / "test.en").write_text(SRC)
    (tmp_path / "test.fr").write_text(REF)
    page.goto(f"{app_url}/evaluate", wait_until="domcontentloaded")
    # Upload only while no run is in flight: Streamlit drops a file whose upload lands while the
    # script that drew the uploader is still running, so wait for the page to settle before each one.
    page.get_by_text("Upload both files").first.wait_for(timeout=60_000)
    for index, name in enumerate(["test.en", "test.fr"]):
        upload(page, index, tmp_path / name)
    button = page.get_by_role("button", name="Evaluate")
    button.wait_for(timeout=60_000)
    wait_idle(page)  # the page's run is over: the click starts a run of its own
    button.click()
    page.get_by_role("img", name=re.compile("BLEU by source sentence length")).wait_for(timeout=120_000)  # a canvas
    page.get_by_text("Paired bootstrap").first.wait_for(timeout=60_000)
    chart = page.locator(".canvas-chart[data-lines]").first  # drawn by the page's script (canvas_charts.py)
    lines = json.loads(chart.get_attribute("data-lines"))
    assert sorted(name for name, _points in lines) == ["rnnencdec-tiny", "rnnsearch-tiny"]  # one line (and band) each
    assert page.get_by_text("rnnsearch-tiny").count() >= 1 and page.get_by_text("rnnencdec-tiny").count() >= 1
    page.screenshot(path=str(tmp_path / "evaluate.png"), full_page=True)  # kept for a look when it fails
    wait_idle(page)
    with page.expect_download(timeout=60_000) as caught:  # made when clicked (widgets.deferred)
        page.get_by_role("button", name="Per-sentence table (CSV)").click()
    csv = open(caught.value.path(), encoding="utf-8").read().splitlines()
    assert csv[0].startswith("id,source,reference") and len(csv) == 1 + 3
