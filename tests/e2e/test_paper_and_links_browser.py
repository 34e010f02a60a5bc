"""The Paper page and a shared link, opened in a real browser: they render, with no exception."""
import pytest

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e


def no_exception(page):
    wait_idle(page)
    assert page.locator("[data-testid=stException]").count() == 0


def test_paper_page_renders_its_equations(page, app_url):
    page.goto(f"{app_url}/paper", wait_until="domcontentloaded")
    page.get_by_text("The paper, live").first.wait_for(timeout=60_000)
    page.locator(".katex").first.wait_for(timeout=60_000)  # the equations, typeset
    page.get_by_text("Computed by").first.wait_for(timeout=60_000)
    no_exception(page)
    page.get_by_role("tab", name="Figure 3: alignments").click()
    page.locator(".canvas-chart[data-drawn]").first.wait_for(timeout=60_000)  # its heatmaps, on a canvas
    no_exception(page)


def test_a_shared_link_opens_that_view(page, app_url):
    page.goto(f"{app_url}/?src=the+small+cat+sits&beam=3&tab=steps&step=2", wait_until="domcontentloaded")  # Translate is the landing page
    page.get_by_text("Partial translation:").first.wait_for(timeout=60_000)
    no_exception(page)
    # the text area may be drawn a moment before the browser applies its value: poll, then check
    page.wait_for_function("() => document.querySelector('textarea')?.value === 'the small cat sits'",
                           timeout=30_000)
    assert page.locator("textarea").first.input_value() == "the small cat sits"
    assert page.get_by_text("Step 2 of").count() >= 1
    assert page.get_by_text("Page not found").count() == 0
