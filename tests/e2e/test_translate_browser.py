"""Type a sentence in a real browser, wait for both translations and the heatmap."""
import json
import re

import pytest
expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (the test extra)").expect

from model.corpus.vocab import Vocab  # noqa: E402

from tests.e2e.conftest import wait_idle  # noqa: E402

pytestmark = pytest.mark.e2e


ROWS = json.dumps(["un", "chien", "court", "dans", "le", "parc", "</s>"], separators=(",", ":"))  # as the script writes it


def test_translate_in_browser(page, app_url, tmp_path):
    page.goto(app_url, wait_until="domcontentloaded")
    box = page.locator("textarea").first
    box.wait_for(timeout=60_000)
    wait_idle(page)  # the page's run is over: what is typed now is kept
    box.fill("a dog runs in the park")
    box.press("Control+Enter")
    page.get_by_text("un chien court dans le parc").first.wait_for(timeout=60_000)
    heatmap = page.locator(".canvas-chart[data-drawn]").first  # drawn by the page's script (canvas_charts.py)
    expect(heatmap).to_have_attribute("data-rows", ROWS, timeout=60_000)  # "un chien court dans le parc" and </s>
    assert page.get_by_text("rnnencdec-tiny").count() >= 1
    wait_idle(page)  # the run after it (the check under the heatmap) draws the heatmap again: hover after it
    x, y = json.loads(heatmap.get_attribute("data-first"))  # the first cell: output "un", source "a"
    heatmap.locator("canvas").hover(position={"x": x, "y": y})
    expect(heatmap.locator(".tip")).to_have_text(re.compile(r"source: a\s+target: un\s+weight: \d\.\d{3}"))
    page.screenshot(path=str(tmp_path / "translate.png"), full_page=True)  # kept for a look when it fails
    wait_idle(page)
    before = page.locator("[data-testid=stText]").first.inner_text()
    box.fill("the small dog runs in the big park")  # a sentence no other test checks on this server
    box.press("Control+Enter")
    page.wait_for_function("old => { const e = document.querySelector('[data-testid=stText]'); "
                           "return e && e.innerText !== old; }", arg=before, timeout=60_000)
    wait_idle(page)  # the translation's run is over; the run after it, asked for by its probe, computes the
    page.wait_for_function("() => !document.body.innerText.includes('Measuring how faithful') && "  # check:
                           "document.body.innerText.includes('How faithful is this picture?')",  # nothing is
                           timeout=60_000)  # clicked or typed meanwhile
    wait_idle(page)
    page.get_by_role("tab", name="Explanations").click()
    page.locator(".canvas-chart[data-bars]").first.wait_for(timeout=60_000)  # the source/prefix bars
    page.locator(".canvas-chart[data-lines]").first.wait_for(timeout=60_000)  # the faithfulness curves
    expect(page.get_by_text("random order").first).to_be_visible(timeout=60_000)  # the faithfulness table
    page.screenshot(path=str(tmp_path / "explanations.png"), full_page=True)


def test_a_tab_rerunning_alone_shows_its_check_without_another_click(page, app_url):
    """The Beam tree tab reruns alone (a fragment) when a node is picked: no probe follows such a
    rerun, so the hypothesis heatmap's check comes in that rerun."""
    page.goto(f"{app_url}/?tab=beam&src=a+dog+runs+in+the+park", wait_until="domcontentloaded")
    box = page.get_by_label("Node id").first
    box.wait_for(timeout=60_000)
    wait_idle(page)
    box.fill("3")
    box.press("Enter")
    page.get_by_role("img", name="attention α along this hypothesis").wait_for(timeout=60_000)  # its canvas
    page.wait_for_function("() => document.body.innerText.includes('How faithful: removing the most-attended')",
                           timeout=60_000)
    wait_idle(page)
    assert page.get_by_text("Measuring how faithful").count() == 0


def test_a_click_on_a_beam_tree_node_shows_that_hypothesis(page, app_url):
    page.goto(f"{app_url}/?tab=beam&src=a+dog+runs+in+the+park", wait_until="domcontentloaded")
    tree = page.locator(".canvas-chart[data-nodes]").first  # drawn by the page's script (canvas_charts.py)
    tree.wait_for(timeout=60_000)
    wait_idle(page)
    node, x, y = json.loads(tree.get_attribute("data-nodes"))[-1]  # (id, x, y) of each node on the canvas
    tree.locator("canvas").hover(position={"x": x, "y": y})
    expect(tree.locator(".tip")).to_contain_text(re.compile(r"token: .+\s+step: \d+\s+log p: "))
    tree.locator("canvas").click(position={"x": x, "y": y})
    expect(page.get_by_label("Node id").first).to_have_value(str(node), timeout=60_000)
    expect(page.get_by_text(f"Hypothesis {node}").first).to_be_visible(timeout=60_000)
    wait_idle(page)
    tree = page.locator(".canvas-chart[data-nodes]").first
    whole = tree.get_attribute("data-nodes")
    (x0, y0), (x1, y1) = (json.loads(whole)[k][1:] for k in (0, -1))
    box = tree.locator("canvas").bounding_box()  # drag a box around the first and the last node: a zoom
    page.mouse.move(box["x"] + min(x0, x1) - 5, box["y"] + min(y0, y1) - 5)
    page.mouse.down()
    page.mouse.move(box["x"] + max(x0, x1) + 5, box["y"] + max(y0, y1) + 5, steps=5)
    page.mouse.up()
    expect(tree).not_to_have_attribute("data-nodes", whole)  # the nodes spread out
    assert page.get_by_label("Node id").first.input_value() == str(node)  # the drag picked nothing
    tree.locator("canvas").dblclick(position={"x": 3, "y": 3})
    expect(tree).to_have_attribute("data-nodes", whole)  # back to the whole tree


def test_a_new_visitor_gets_the_text_box_then_the_heatmap_without_touching_anything(page, app_url):
    page.goto(app_url, wait_until="domcontentloaded")
    page.locator("textarea").first.wait_for(timeout=60_000)
    # the first run's probe asks for the rerun that draws the charts: nothing is clicked or typed here
    page.locator(".canvas-chart[data-drawn]").first.wait_for(timeout=60_000)
    wait_idle(page)
    assert page.get_by_text("Drawing the charts...").count() == 0
    assert page.get_by_role("tab", name="Alignment").count() == 1


def test_the_downloads_tab_makes_each_file_when_its_button_is_clicked(page, app_url):
    page.goto(f"{app_url}/?tab=downloads&src=a+dog+runs+in+the+park", wait_until="domcontentloaded")
    report = page.get_by_role("button", name=re.compile("Report of this translation"))
    report.wait_for(timeout=60_000)
    wait_idle(page)
    with page.expect_download(timeout=60_000) as caught:
        report.click()
    html = open(caught.value.path(), encoding="utf-8").read()
    assert html.lstrip().lower().startswith("<!doctype html") and "a dog runs in the park" in html
    with page.expect_download(timeout=60_000) as caught:
        page.get_by_role("button", name="rnnsearch-tiny: heatmap (PNG)").click()
    assert open(caught.value.path(), "rb").read(8) == b"\x89PNG\r\n\x1a\n"


HOSTILE = '<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> a dog'


def test_user_text_is_never_rendered_as_html(page, app_url, checkpoint_dir):
    vocab = Vocab.load(checkpoint_dir / "rnnsearch-tiny" / "src.spm.model")
    pieces = [p.replace("\u2581", "") or "\u2581" for p in vocab.pieces(vocab.encode(HOSTILE))]
    page.goto(app_url, wait_until="domcontentloaded")
    box = page.locator("textarea").first
    box.wait_for(timeout=60_000)
    wait_idle(page)  # the page's run is over: what is typed now is kept
    box.fill(HOSTILE)
    box.press("Control+Enter")
    # the hostile sentence's own heatmap: its source pieces, as text, along the top
    heatmap = page.locator(".canvas-chart[data-drawn]").first
    expect(heatmap).to_have_attribute("data-columns", json.dumps(pieces, ensure_ascii=False, separators=(",", ":")),
                                      timeout=60_000)
    wait_idle(page)  # the run after it (the check under the heatmap) draws the heatmap again: hover after it
    x, y = json.loads(heatmap.get_attribute("data-first"))
    heatmap.locator("canvas").hover(position={"x": x, "y": y})  # the hover shows the first piece as text
    expect(heatmap.locator(".tip")).to_contain_text(f"source: {pieces[0]}")
    assert heatmap.locator(".tip *").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src='x']").count() == 0
    scripts = page.locator("script").all_inner_texts()
    assert not any("__pwned" in s for s in scripts)


def test_the_html_report_draws_offline_and_runs_no_user_text(browser, tiny_checkpoints, tmp_path):
    """The report file in a browser with every network request refused: all charts draw, and
    the hostile sentence stays text."""
    from model.decoding.search import SearchConfig
    from model.decoding.translator import Translator
    from viz.html_report import report_html

    traces = [(f"{arch}-tiny", Translator.from_checkpoint(tiny_checkpoints[arch]).translate([HOSTILE],
                                                                                          SearchConfig(beam=3))[0])
              for arch in ("rnnsearch", "rnnencdec")]
    path = tmp_path / "report.html"
    path.write_text(report_html(HOSTILE, traces), encoding="utf-8")
    context = browser.new_context()
    requests = []
    context.route("**/*", lambda route: (requests.append(route.request.url), route.abort())
                  if not route.request.url.startswith("file:") else route.continue_())
    page = context.new_page()
    page.goto(path.as_uri())
    expect(page.locator(".js-plotly-plot .main-svg").first).to_be_visible(timeout=60_000)
    assert page.locator(".js-plotly-plot").count() == 3 and page.locator(".heatmaplayer").count() == 1
    assert page.evaluate("window.__pwned") is None and page.locator("img[src='x']").count() == 0
    assert requests == []  # it asked the network for nothing
    context.close()
