"""``python -m model.train``: the command line of ``model.training.trainer``."""

from model.training.trainer import main

if __name__ == "__main__":
    raise SystemExit(main())
