"""``python -m model.translate``: the command line of ``model.decoding.translator``."""

from model.decoding.translator import main

if __name__ == "__main__":
    raise SystemExit(main())
