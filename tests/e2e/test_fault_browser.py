"""A class behind the balancer loses a server: two app processes behind HAProxy (deploy/haproxy.cfg),
one killed (SIGKILL) after a student typed a sentence; the sentence comes back translated by the
other process without a second Ctrl+Enter (viz/pages/parts/typed_text.py, docs/hosting.md)."""
import contextlib
import shutil
import signal

import pytest

expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (the test extra)").expect

from tests.e2e.conftest import served_process, wait_idle  # noqa: E402

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("haproxy") is None, reason="HAProxy is not installed")]

OUTPUT_JS = "() => { const e = document.querySelector('[data-testid=stText]'); return e ? e.innerText : ''; }"


def changed(page, before: str) -> None:
    """Until the page shows a translation other than ``before``."""
    page.wait_for_function("old => { const e = document.querySelector('[data-testid=stText]'); "
                           "return e && e.innerText !== old; }", arg=before, timeout=60_000)


def test_a_killed_servers_student_gets_the_typed_sentence_translated_by_the_other(
        browser, checkpoint_dir, align_dir, tmp_path):
    from bench.load_test import start_balancer

    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(served_process(checkpoint_dir, tmp_path / f"app{k}.log",
                                                      "--align-dir", str(align_dir))) for k in (1, 2)]
        balancer, front = start_balancer([int(url.rsplit(":", 1)[1]) for url, _ in servers], tmp_path)
        stack.callback(balancer.terminate)
        context = browser.new_context()
        stack.callback(context.close)
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{front}/", wait_until="domcontentloaded")
        page.locator("textarea").first.wait_for(timeout=60_000)
        wait_idle(page)
        box, shown = page.locator("textarea").first, page.evaluate(OUTPUT_JS)
        box.fill("the small cat")
        box.press("Control+Enter")
        changed(page, shown)
        wait_idle(page)
        holder = next(c["value"] for c in context.cookies() if c["name"] == "NMT_SERVER")  # app1 or app2
        before = page.evaluate(OUTPUT_JS)

        box.fill("a dog runs in the park")  # typed, not sent: only the browser has it
        victim = servers[int(holder[-1]) - 1][1]
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=20)

        changed(page, before)
        page.get_by_text("un chien court dans le parc").first.wait_for(timeout=60_000)
        wait_idle(page)
        expect(page.locator("textarea").first).to_have_value("a dog runs in the park", timeout=30_000)
        assert next(c["value"] for c in context.cookies() if c["name"] == "NMT_SERVER") != holder
        assert page.locator("[data-testid=stException], [data-testid=stAlertContentError]").count() == 0
