"""``python -m model.card``: the command line of ``model.checkpoints.card_builder``."""

from model.checkpoints.card_builder import main

if __name__ == "__main__":
    raise SystemExit(main())
