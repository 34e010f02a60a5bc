"""Type a sentence in a real browser, wait for both translations and the heatmap."""
import pytest

pytestmark = pytest.mark.e2e


def test_translate_in_browser(page, app_url, tmp_path):
    page.goto(app_url, wait_until="domcontentloaded")
    box = page.locator("textarea").first
    box.wait_for(timeout=60_000)
    box.fill("a dog runs in the park")
    box.press("Control+Enter")
    page.get_by_text("un chien court dans le parc").first.wait_for(timeout=60_000)
    page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=60_000)
    assert page.get_by_text("rnnencdec-tiny").count() >= 1
    shot = tmp_path / "translate.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


HOSTILE = '<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> a dog'


def test_user_text_is_never_rendered_as_html(page, app_url):
    page.goto(app_url, wait_until="domcontentloaded")
    box = page.locator("textarea").first
    box.wait_for(timeout=60_000)
    box.fill(HOSTILE)
    box.press("Control+Enter")
    page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src='x']").count() == 0
    scripts = page.locator("script").all_inner_texts()
    assert not any("__pwned" in s for s in scripts)
