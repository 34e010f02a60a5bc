"""bench/page_speed.py's floor app in a real browser: each new visitor timed to the text box, the
first also from the server's launch."""
from bench.page_speed import floor


def test_the_floor_app_is_timed_from_opening_and_the_first_visitor_from_launch(browser):
    found = floor(browser, threads=1, visitors=2, sentences=[], run_s=0.0)
    assert len(found.text_box_s) == 2 and all(s > 0 for s in found.text_box_s)
    assert found.launch_to_text_box_s > found.text_box_s[0]  # the server was launched before the visitor opened it
    assert found.ctrl_enter_s == []  # no sentences: the sleeping app is not started
