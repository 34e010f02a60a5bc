"""``python -m model.data``: the command line of ``model.corpus.parallel``."""

from model.corpus.parallel import main

if __name__ == "__main__":
    raise SystemExit(main())
