"""``python -m model.align``: the command line of ``model.scoring.attention_alignment``."""

from model.scoring.attention_alignment import main

if __name__ == "__main__":
    raise SystemExit(main())
