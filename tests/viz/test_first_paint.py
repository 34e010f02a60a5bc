"""A session's first run holds its charts back until the browser has drawn the page
(viz/pages/parts/first_paint.py), through the one function every page draws charts with."""
import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.first_paint


def _page_with_charts(n):
    import streamlit as st

    from viz.pages.parts import first_paint, widgets

    first_paint.start_run()
    st.text_input("Your sentence", key="text")
    for i in range(n):
        widgets.show_chart({"data": [{"type": "bar", "x": [1, 2], "y": [i, i + 1]}]}, key=f"chart_{i}")
    first_paint.probe_ui()


@pytest.mark.parametrize("n", [1, 3])
def test_charts_wait_for_the_second_run_and_text_does_not(n):
    at = AppTest.from_function(_page_with_charts, args=(n,), default_timeout=60).run()
    assert not at.exception, at.exception
    assert at.text_input(key="text") is not None and at.get("plotly_chart") == []
    assert [c.value for c in at.caption] == ["Drawing the charts..."] * n
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == n and not at.caption


def test_a_run_without_charts_draws_no_probe():
    from viz.pages.parts import first_paint

    at = AppTest.from_function(_page_with_charts, args=(0,), default_timeout=60).run()
    assert not at.exception, at.exception
    assert first_paint.HELD not in at.session_state and at.session_state[first_paint.FIRST_RUN_SEEN]


def test_holding_off_draws_everything_at_once(monkeypatch):
    from viz.pages.parts import first_paint

    monkeypatch.setattr(first_paint, "ENABLED", False)
    at = AppTest.from_function(_page_with_charts, args=(3,), default_timeout=60).run()
    assert len(at.get("plotly_chart")) == 3 and not at.caption
