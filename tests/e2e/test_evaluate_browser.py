"""Upload a small test set in a real browser, evaluate, wait for the length chart."""
import pytest

pytestmark = pytest.mark.e2e

SRC = "a dog runs in the park\nthe small cat sits\na man eats a red ball\n"
REF = "un chien court dans le parc\nle petit chat assis\nun homme mange une balle rouge\n"


def test_evaluate_in_browser(page, app_url, tmp_path):
    (tmp_path / "test.en").write_text(SRC)
    (tmp_path / "test.fr").write_text(REF)
    page.goto(f"{app_url}/evaluate", wait_until="domcontentloaded")
    inputs = page.locator("input[type=file]")
    # Upload only once the page's first run has finished: Streamlit drops a file whose upload lands
    # while the script that drew the uploader is still running.
    page.get_by_text("Upload both files").first.wait_for(timeout=60_000)
    inputs.nth(0).set_input_files(str(tmp_path / "test.en"))
    inputs.nth(1).set_input_files(str(tmp_path / "test.fr"))
    page.get_by_text("test.fr").first.wait_for(timeout=60_000)  # both uploads registered
    button = page.get_by_role("button", name="Evaluate")
    button.wait_for(timeout=60_000)
    button.click()
    page.get_by_text("BLEU by source sentence length").first.wait_for(timeout=120_000)
    page.get_by_text("Paired bootstrap").first.wait_for(timeout=60_000)
    lines = page.locator(".js-plotly-plot .scatterlayer .trace")
    assert lines.count() >= 2  # one line (and its band) per model in the length chart
    assert page.get_by_text("rnnsearch-tiny").count() >= 1 and page.get_by_text("rnnencdec-tiny").count() >= 1
    page.screenshot(path=str(tmp_path / "evaluate.png"), full_page=True)  # kept for a look when it fails
