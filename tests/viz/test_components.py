"""The app's own components are registered once per process (viz/pages/parts/components.py)."""


def test_a_component_is_registered_once_and_then_reused():
    from viz.pages.parts.components import registered

    first = registered("inside_attention_nmt.test_once", js="export default function () {}")
    assert registered("inside_attention_nmt.test_once", js="export default function () { throw 1; }") is first
    assert registered("inside_attention_nmt.test_other", js="export default function () {}") is not first
