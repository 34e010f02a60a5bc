"""Pure figure builders: arrays and tokens in, plotly or matplotlib figures out; no streamlit."""
