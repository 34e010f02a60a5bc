"""Checkpoint folders, model cards, and Joey NMT imports."""
