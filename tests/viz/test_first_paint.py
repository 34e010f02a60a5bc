"""A session's first run holds a page's heavier parts back until the browser has drawn the page
(viz/pages/parts/first_paint.py)."""
import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.first_paint


def _page_with_charts(n):
    import streamlit as st

    from viz.pages.parts import first_paint

    first_paint.start_run()
    st.text_input("Your sentence", key="text")
    for i in range(n):  # as the Translate page holds its tabs and the Sentence space page its tables
        if first_paint.ready():
            st.dataframe({"x": [i, i + 1]}, key=f"table_{i}")
        else:
            first_paint.hold_ui()
    first_paint.probe_ui()


@pytest.mark.parametrize("n", [1, 3])
def test_held_parts_wait_for_the_second_run_and_text_does_not(n):
    at = AppTest.from_function(_page_with_charts, args=(n,), default_timeout=60).run()
    assert not at.exception, at.exception
    assert at.text_input(key="text") is not None and len(at.dataframe) == 0
    assert [c.value for c in at.caption] == ["Drawing the charts..."] * n
    at.run()
    assert not at.exception, at.exception
    assert len(at.dataframe) == n and not at.caption


def test_a_run_without_charts_draws_no_probe():
    from viz.pages.parts import first_paint

    at = AppTest.from_function(_page_with_charts, args=(0,), default_timeout=60).run()
    assert not at.exception, at.exception
    assert first_paint.HELD not in at.session_state and at.session_state[first_paint.FIRST_RUN_SEEN]


def test_holding_off_draws_everything_at_once(monkeypatch):
    from viz.pages.parts import first_paint

    monkeypatch.setattr(first_paint, "ENABLED", False)
    at = AppTest.from_function(_page_with_charts, args=(3,), default_timeout=60).run()
    assert len(at.dataframe) == 3 and not at.caption


def _page_with_extras(keys, fragment=False):
    """A text box, then extras put off to the run's end (``fragment``: inside a fragment, as the
    Translate page's tabs are), then a text after them; what drew each extra is recorded in
    session state with what the run had drawn by then."""
    import streamlit as st

    from viz.pages.parts import first_paint

    first_paint.start_run()
    st.text_input("Your sentence", key="text")

    def extras():
        for key in keys:
            def draw(key=key):
                st.session_state.setdefault("drawn", []).append((key, st.session_state.get("after_drawn", False)))
                st.markdown(f"extra {key}")
            first_paint.after_paint(draw, f"waiting {key}")

    if fragment:
        st.fragment(extras)()
    else:
        extras()
    st.markdown("after the extras")
    st.session_state["after_drawn"] = True
    first_paint.probe_ui()
    st.session_state["after_drawn"] = False


def probes(at) -> list:
    return [el for el in at.get("bidi_component")]


@pytest.mark.parametrize("keys", [("a",), ("a", "b", "c")])
@pytest.mark.parametrize("fragment", [False, True], ids=["in the page", "in a fragment"])
def test_extras_are_drawn_in_their_places_once_the_rest_of_the_run_is(keys, fragment):
    at = AppTest.from_function(_page_with_extras, args=(keys, fragment), default_timeout=60).run()
    assert not at.exception, at.exception
    assert [m.value for m in at.markdown] == [f"extra {k}" for k in keys] + ["after the extras"]  # in their places
    assert at.session_state["drawn"] == [(k, True) for k in keys]  # ... drawn after everything else
    assert not at.caption and not probes(at)  # the waiting lines replaced; no rerun asked for


def test_holding_off_computes_extras_at_once(monkeypatch):
    from viz.pages.parts import first_paint

    monkeypatch.setattr(first_paint, "ENABLED", False)
    at = AppTest.from_function(_page_with_extras, args=(("a", "b"),), default_timeout=60).run()
    assert at.session_state["drawn"] == [("a", False), ("b", False)] and not probes(at)


def _page_with_a_fragment_run_after_it(key):
    """A whole run, then what a fragment's own rerun does after it: draw with the run over."""
    import streamlit as st

    from viz.pages.parts import first_paint

    first_paint.start_run()
    st.text_input("Your sentence", key="text")
    first_paint.probe_ui()  # the whole run ends here
    first_paint.after_paint(lambda: st.markdown(f"extra {key}"), f"waiting {key}")  # as a fragment's own rerun


def test_a_fragments_own_rerun_computes_extras_at_once():
    """No run's end follows a fragment's own rerun's drawing, so the extra is drawn at once."""
    at = AppTest.from_function(_page_with_a_fragment_run_after_it, args=("a",), default_timeout=60).run()
    assert not at.exception, at.exception
    assert [m.value for m in at.markdown] == ["extra a"] and not at.caption and not probes(at)
