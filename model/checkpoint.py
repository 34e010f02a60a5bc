"""``python -m model.checkpoint``: the command line of ``model.checkpoints.folder``."""

from model.checkpoints.folder import main

if __name__ == "__main__":
    raise SystemExit(main())
