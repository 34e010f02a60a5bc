"""``python -m model.evaluate``: the command line of ``model.scoring.evaluation``."""

from model.scoring.evaluation import main

if __name__ == "__main__":
    raise SystemExit(main())
