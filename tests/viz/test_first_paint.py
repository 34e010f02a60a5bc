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


def _page_with_extras(keys):
    import streamlit as st

    from viz.pages.parts import first_paint

    first_paint.start_run()
    st.text_input("Your sentence", key="text")
    for key in st.session_state.get("keys", keys):
        if first_paint.after_paint(key):
            st.markdown(f"extra {key}")
        else:
            st.caption(f"held {key}")
    first_paint.probe_ui()


def probes(at) -> list:
    return [el for el in at.get("bidi_component")]


@pytest.mark.parametrize("keys", [("a",), ("a", "b", "c")])
def test_extras_wait_for_the_next_run_and_the_rest_does_not(keys):
    at = AppTest.from_function(_page_with_extras, args=(keys,), default_timeout=60).run()
    assert not at.exception, at.exception
    assert at.text_input(key="text") is not None and not at.markdown
    assert [c.value for c in at.caption] == [f"held {k}" for k in keys] and len(probes(at)) == 1
    at.run()  # the rerun the probe sends, or any other
    assert not at.exception, at.exception
    assert [m.value for m in at.markdown] == [f"extra {k}" for k in keys] and not at.caption and not probes(at)


def test_only_what_the_run_before_held_is_computed():
    at = AppTest.from_function(_page_with_extras, args=(("a",),), default_timeout=60).run()
    at.session_state["keys"] = ("b",)  # a new sentence before the probe's rerun: its extra is held in turn
    at.run()
    assert [c.value for c in at.caption] == ["held b"] and len(probes(at)) == 1
    at.run()
    assert [m.value for m in at.markdown] == ["extra b"]


def test_probes_of_two_runs_in_a_row_have_their_own_keys():
    at = AppTest.from_function(_page_with_extras, args=(("a",),), default_timeout=60).run()
    first = probes(at)[0].proto.id
    at.session_state["keys"] = ("b",)
    at.run()
    assert probes(at)[0].proto.id != first  # a new element: the browser mounts it and runs its script again


def test_holding_off_computes_extras_at_once(monkeypatch):
    from viz.pages.parts import first_paint

    monkeypatch.setattr(first_paint, "ENABLED", False)
    at = AppTest.from_function(_page_with_extras, args=(("a", "b"),), default_timeout=60).run()
    assert [m.value for m in at.markdown] == ["extra a", "extra b"] and not probes(at)


def _page_with_a_fragment_run_after_it(key):
    """A whole run, then what a fragment's own rerun does after it: draw with the run over."""
    import streamlit as st

    from viz.pages.parts import first_paint

    first_paint.start_run()
    st.text_input("Your sentence", key="text")
    first_paint.probe_ui()  # the whole run ends here
    if first_paint.after_paint(key):  # as a fragment rerunning alone would ask
        st.markdown(f"extra {key}")
    else:
        st.caption(f"held {key}")


def test_a_fragments_own_rerun_computes_extras_at_once():
    """No probe follows a fragment's own rerun, so holding there would hold until the next click."""
    at = AppTest.from_function(_page_with_a_fragment_run_after_it, args=("a",), default_timeout=60).run()
    assert not at.exception, at.exception
    assert [m.value for m in at.markdown] == ["extra a"] and not at.caption and not probes(at)
